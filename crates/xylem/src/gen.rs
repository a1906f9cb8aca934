//! `xylem gen man DIR`, `xylem gen completions DIR` and `xylem gen schemas DIR`: man
//! pages and shell completions of `sqmr`, `b_eff_io` and `xylem`, made from the same clap
//! definitions as `--help`, and the JSON Schemas of the result documents.
//!
//! Man pages: `DIR/sqmr.1`, `DIR/b_eff_io.1`, `DIR/xylem.1` and one page per `xylem`
//! subcommand (`DIR/xylem-net-show.1`, ...). Completions: `DIR/bash/NAME.bash`,
//! `DIR/zsh/_NAME`, `DIR/fish/NAME.fish` (`scripts/install.sh` installs the bash file as
//! plain `NAME`, the name bash-completion looks for).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Subcommand};
use clap_complete::{Generator, Shell};
use outfile::SafeDir;

/// `xylem gen ...`.
#[derive(Debug, Subcommand)]
pub enum GenCommand {
    /// Write the man pages (section 1) into DIR.
    Man {
        /// The directory (created if missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Write bash, zsh and fish completions into DIR/bash, DIR/zsh, DIR/fish.
    Completions {
        /// The directory (created if missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Write the JSON Schemas of the result documents into DIR (sqmr-V.schema.json,
    /// sqmr-scan-V.schema.json, b_eff_io-V.schema.json; V the schema version).
    Schemas {
        /// The directory (created if missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

/// The three commands, each with its binary's name.
pub fn commands() -> Vec<clap::Command> {
    vec![
        sqmr::options::Options::command(),
        beffio::options::Options::command(),
        crate::cli::Cli::command(),
    ]
}

/// Runs `xylem gen`.
pub fn main(command: GenCommand) -> ExitCode {
    let done = match &command {
        GenCommand::Man { dir } => man_pages(dir),
        GenCommand::Completions { dir } => completions(dir),
        GenCommand::Schemas { dir } => write_schemas(dir),
    };
    match done {
        Ok(files) => {
            let list: String = files.iter().map(|f| format!("{}\n", f.display())).collect();
            crate::out::print("xylem gen: ", &list)
        }
        Err(e) => {
            outfile::eprintln!("xylem gen: {e}");
            ExitCode::from(1)
        }
    }
}

/// Writes every man page into `dir`; returns the files written.
pub fn man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let held = make_dir(dir)?;
    let mut files = Vec::new();
    for cmd in commands() {
        let name = cmd.get_name().to_string();
        write_pages(&held, cmd, &name, &mut files)?;
    }
    Ok(files)
}

/// Writes `cmd`'s page as `dir/<name>.1`, then its subcommands' as `<name>-<sub>.1`.
fn write_pages(
    dir: &SafeDir,
    cmd: clap::Command,
    name: &str,
    files: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    let mut cmd = cmd.display_name(name.to_string());
    cmd.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    let page = with_extra_sections(name, page);
    files.push(write_file(dir, &format!("{name}.1"), &page)?);
    let shown = |s: &&clap::Command| !s.is_hide_set() && s.get_name() != "help";
    for sub in cmd.get_subcommands().filter(shown) {
        let sub_name = format!("{name}-{}", sub.get_name());
        write_pages(dir, sub.clone(), &sub_name, files)?;
    }
    Ok(())
}

/// `page` (clap's rendering of `name`'s page) with what clap does not make: b_eff_io's
/// 2.1 spellings after its SYNOPSIS; EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES.
fn with_extra_sections(name: &str, page: Vec<u8>) -> Vec<u8> {
    let Some(extra) = crate::manual::extra(name) else {
        return page;
    };
    let mut text = String::from_utf8(page).expect("clap_mangen writes UTF-8");
    if name == "b_eff_io" {
        if let Some(at) = text.find(".SH DESCRIPTION") {
            text.insert_str(at, &crate::manual::beffio_legacy_synopsis());
        }
    }
    text.push_str(&crate::manual::sections(extra));
    text.into_bytes()
}

/// Writes bash, zsh and fish completions of every command into `dir`.
pub fn completions(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let sub = make_dir(&dir.join(shell.to_string()))?;
        for mut cmd in commands() {
            let name = cmd.get_name().to_string();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, &name, &mut script);
            files.push(write_file(&sub, &shell.file_name(&name), &script)?);
        }
    }
    Ok(files)
}

/// The JSON Schema (draft 2020-12) of each result document, by file name, derived from
/// the types the programs serialize (what a document holds, as written).
pub fn schemas() -> Vec<(String, serde_json::Value)> {
    fn of<T: schemars::JsonSchema>() -> serde_json::Value {
        let generator = schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator();
        generator.into_root_schema_for::<T>().to_value()
    }
    vec![
        (
            format!("sqmr-{}.schema.json", sqmr::report::json::SCHEMA_VERSION),
            of::<sqmr::report::json::Document>(),
        ),
        (
            format!(
                "sqmr-scan-{}.schema.json",
                sqmr::scan::report::SCAN_SCHEMA_VERSION
            ),
            of::<sqmr::scan::report::ScanDocument>(),
        ),
        (
            format!(
                "b_eff_io-{}.schema.json",
                beffio::report::json::SCHEMA_VERSION
            ),
            of::<beffio::report::json::Document>(),
        ),
    ]
}

/// Writes every schema into `dir`, pretty, with a final newline.
pub fn write_schemas(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let held = make_dir(dir)?;
    let mut files = Vec::new();
    for (name, schema) in schemas() {
        files.push(write_file(&held, &name, schema_text(&schema).as_bytes())?);
    }
    Ok(files)
}

/// A schema as the repository keeps it.
pub fn schema_text(schema: &serde_json::Value) -> String {
    serde_json::to_string_pretty(schema).expect("a schema serializes") + "\n"
}

/// Opens the folder `dir`, making what is missing of it, as crate outfile walks a path:
/// a link that another user planted on the way is refused, with a message naming it.
fn make_dir(dir: &Path) -> std::io::Result<SafeDir> {
    SafeDir::create_all(dir).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "{}: cannot create it: {}",
                outfile::shown::path(dir),
                outfile::cause(&e)
            ),
        )
    })
}

/// Writes the generated file `name` in `dir` whole (replacing an older one), never
/// leaving it partial; returns its path.
fn write_file(dir: &SafeDir, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    outfile::replace_in(dir, name, bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(dir.shown(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_schemas_are_the_generated_ones() {
        // schemas/ is what users and the tests read: a change of a document's types must
        // come with `xylem gen schemas schemas` (and a new schema version when a field
        // changes meaning or goes away).
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
        let mut published: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".schema.json"))
            .collect();
        published.sort();
        let mut generated: Vec<String> = schemas().into_iter().map(|(n, _)| n).collect();
        generated.sort();
        assert_eq!(published, generated);
        for (name, schema) in schemas() {
            let text = std::fs::read_to_string(dir.join(&name)).unwrap();
            assert!(
                text == schema_text(&schema),
                "{name} differs from the types: run `xylem gen schemas schemas`"
            );
            assert_eq!(
                schema["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
        }
    }

    /// Every option of `cmd` (not hidden) as its page spells it: roff escapes `-` as `\-`.
    fn options(cmd: &clap::Command) -> Vec<String> {
        cmd.get_arguments()
            .filter(|a| !a.is_hide_set() && !a.is_positional())
            .flat_map(|a| {
                let long = a
                    .get_long()
                    .map(|l| format!("\\-\\-{}", l.replace('-', "\\-")));
                let short = a.get_short().map(|s| format!("\\-{s}"));
                long.into_iter().chain(short)
            })
            .collect()
    }

    fn check(dir: &Path, mut cmd: clap::Command, name: &str, checked: &mut usize) {
        cmd.build();
        let page = std::fs::read_to_string(dir.join(format!("{name}.1")))
            .unwrap_or_else(|e| panic!("{name}.1: {e}"));
        assert!(page.contains(".TH"), "{name}.1 is no man page");
        for option in options(&cmd) {
            assert!(page.contains(&option), "{name}.1 does not mention {option}");
            *checked += 1;
        }
        for sub in cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help" && !s.is_hide_set())
        {
            check(
                dir,
                sub.clone(),
                &format!("{name}-{}", sub.get_name()),
                checked,
            );
        }
    }

    #[test]
    fn the_man_pages_mention_every_option() {
        let dir = tempfile::tempdir().unwrap();
        let files = man_pages(dir.path()).unwrap();
        assert!(files.len() >= 10, "{files:?}");
        let mut checked = 0;
        for cmd in commands() {
            let name = cmd.get_name().to_string();
            check(dir.path(), cmd, &name, &mut checked);
        }
        // sqmr's and b_eff_io's own options alone are more than 20.
        assert!(checked > 40, "{checked}");
        let sqmr = std::fs::read_to_string(dir.path().join("sqmr.1")).unwrap();
        assert!(sqmr.contains("\\-\\-csv") && sqmr.contains("node aggregates"));
        let beffio = std::fs::read_to_string(dir.path().join("b_eff_io.1")).unwrap();
        assert!(beffio.contains("\\-\\-csv") && beffio.contains("effective I/O bandwidth"));
        // The sections clap does not make, on each program's page, in man's order.
        for page in ["sqmr", "b_eff_io", "xylem"] {
            let text = std::fs::read_to_string(dir.path().join(format!("{page}.1"))).unwrap();
            let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{page}: no {s}"));
            assert!(
                at(".SH OPTIONS") < at(".SH \"EXIT STATUS\"")
                    && at(".SH \"EXIT STATUS\"") < at(".SH ENVIRONMENT")
                    && at(".SH ENVIRONMENT") < at(".SH FILES")
                    && at(".SH FILES") < at(".SH EXAMPLES"),
                "{page}"
            );
        }
        // Each program's page has every row of its exit-code table, and the manual's
        // table of that program lists the same codes.
        use benchkit::exit::{table, Program};
        for (page, program, doc) in [
            ("sqmr", Program::Sqmr, Some("sqmr.md")),
            ("b_eff_io", Program::BEffIo, Some("b_eff_io.md")),
            ("xylem", Program::Xylem, None),
        ] {
            let text = std::fs::read_to_string(dir.path().join(format!("{page}.1"))).unwrap();
            let rows = table(program);
            for row in &rows {
                let code = row.code;
                assert!(
                    text.contains(&format!(".TP\n\\fB{code}\\fR\n")),
                    "{page}: no exit code {code}"
                );
            }
            let Some(doc) = doc else { continue };
            let manual = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../docs")
                .join(doc);
            let manual = std::fs::read_to_string(manual).unwrap();
            let mut listed: Vec<String> = manual
                .lines()
                .skip_while(|l| !l.starts_with("| exit code |"))
                .skip(2)
                .take_while(|l| l.starts_with('|'))
                .filter_map(|l| l.split('|').nth(1))
                .map(|c| c.trim().replace("128 + signal", "128+N"))
                .collect();
            listed.dedup();
            listed.sort();
            listed.dedup();
            let mut expected: Vec<String> = rows.iter().map(|r| r.code.to_string()).collect();
            expected.sort();
            assert_eq!(
                listed, expected,
                "docs/{doc}'s exit codes against the table"
            );
        }
        // b_eff_io's 2.1 spellings in its SYNOPSIS, before DESCRIPTION.
        let legacy = beffio.find("\\fB\\-MB\\fR").expect("-MB in the synopsis");
        assert!(legacy > beffio.find(".SH SYNOPSIS").unwrap());
        assert!(legacy < beffio.find(".SH DESCRIPTION").unwrap());
        assert!(beffio.contains("\\fB\\-noshared\\fR"));
        // A subcommand's page has none of them.
        let sub = std::fs::read_to_string(dir.path().join("xylem-plot.1")).unwrap();
        assert!(!sub.contains("EXIT STATUS"));
    }

    #[test]
    fn completions_for_three_shells_and_three_commands() {
        let dir = tempfile::tempdir().unwrap();
        let files = completions(dir.path()).unwrap();
        assert_eq!(files.len(), 9);
        let bash = std::fs::read_to_string(dir.path().join("bash/sqmr.bash")).unwrap();
        assert!(bash.contains("--num_cores") && bash.contains("--csv"));
        let zsh = std::fs::read_to_string(dir.path().join("zsh/_xylem")).unwrap();
        assert!(zsh.contains("plot") && zsh.contains("compare"));
        let fish = std::fs::read_to_string(dir.path().join("fish/b_eff_io.fish")).unwrap();
        assert!(fish.contains("memory-per-process"));
    }
}
