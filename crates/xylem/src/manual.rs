//! What the man pages carry beyond `--help`: EXIT STATUS, ENVIRONMENT, FILES and
//! EXAMPLES of `sqmr`, `b_eff_io` and `xylem`, and b_eff_io's 2.1 spellings in its
//! SYNOPSIS. The words are those of docs/sqmr.md and docs/b_eff_io.md, shortened.

use benchkit::exit::{table, Program};
use roff::{bold, italic, roman, Inline, Roff};

/// The sections of one program's page that clap does not make.
pub struct Extra {
    /// The program whose exit-code table ([`benchkit::exit::table`]) is the page's EXIT
    /// STATUS.
    pub program: Program,
    /// Variable and what it does.
    pub environment: &'static [(&'static str, &'static str)],
    /// File and what it is.
    pub files: &'static [(&'static str, &'static str)],
    /// What it does, and the command line.
    pub examples: &'static [(&'static str, &'static str)],
}

const COMMON_ENVIRONMENT: [(&str, &str); 2] = [
    (
        "SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, FLUX_JOB_ID, COBALT_JOBID, JOB_ID",
        "The batch job, recorded in the JSON's provenance (the first one set).",
    ),
    (
        "OMPI_MCA_*, UCX_*, FI_*, MPIR_CVAR_*, I_MPI_*",
        "Settings of the MPI library; --enable and --disable set the ones that select \
         networks and say so.",
    ),
];

const SQMR: Extra = Extra {
    program: Program::Sqmr,
    environment: &COMMON_ENVIRONMENT,
    files: &[
        (
            "PATH (--json, --csv)",
            "Written by rank 0 after every size, each version complete.",
        ),
        (
            ".PATH.xylem-reservation",
            "Beside each output while the run writes it; names the run.",
        ),
    ],
    examples: &[
        (
            "Four core ranks against four neighbours each, JSON kept:",
            "mpirun -n 20 sqmr --num_cores 4 --num_nbors 4 --json rates.json",
        ),
        (
            "Intervals of each size's median, every message checked:",
            "mpirun -n 2 sqmr --repeat 9 --validate --max_msgsize 4096",
        ),
        (
            "Over InfiniBand only:",
            "mpirun -n 16 sqmr --enable ib --json ib.json",
        ),
        (
            "Every node of an allocation, the slow one flagged (exit 4):",
            "srun sqmr --scan --json scan.json",
        ),
    ],
};

const BEFFIO: Extra = Extra {
    program: Program::BEffIo,
    environment: &COMMON_ENVIRONMENT,
    files: &[
        ("PATH/b_eff_io.STAMP.PID/", "The run directory under --path: the benchmark files and b_eff_io.owner; removed at the end unless --keep."),
        ("PREFIX.sum, PREFIX.prot", "2.1's summary and protocol (-f/--prefix), rewritten after every pattern."),
        ("--json, --csv", "The results, rewritten after every pattern, each version complete."),
    ],
    examples: &[
        ("A 15-minute run, the 2.1 files and JSON:", "mpirun -n 16 b_eff_io -T 900 -p /scratch/me --json io.json --prefix io"),
        ("A short look, bounded if a node stalls:", "mpirun -n 4 b_eff_io -T 60 -p /scratch/me --stall-timeout 120"),
        ("2.1 spellings, as job scripts have them:", "mpirun -n 8 b_eff_io -MB 512 -T 600 -p /scratch/me -f run1 -noshared"),
        ("Remove what killed runs left:", "b_eff_io --clean /scratch/me"),
    ],
};

const XYLEM: Extra = Extra {
    program: Program::Xylem,
    environment: &[
        (
            "XYLEM_MPI",
            "The MPI flavour (xylem net), when the tools beside the first launcher on PATH are not to be asked.",
        ),
        ("XYLEM_FONT", "The font file the plots use, when not the DejaVu Sans of the system."),
    ],
    files: &[(
        "share/xylem/schemas/*.schema.json",
        "The JSON Schemas of the result documents (xylem gen schemas).",
    )],
    examples: &[
        ("What a network selection means on this host:", "xylem net resolve --enable ib"),
        ("Any MPI program over the selected networks:", "xylem net exec --enable ib -- mpirun -n 4 ./app"),
        ("Plots, comparison, summary:", "xylem plot a.json b.json -o rates.svg; xylem compare a.json b.json; xylem summary results/latest"),
    ],
};

/// The extra sections of the page of `name` (a program; subcommands get none).
pub fn extra(name: &str) -> Option<&'static Extra> {
    match name {
        "sqmr" => Some(&SQMR),
        "b_eff_io" => Some(&BEFFIO),
        "xylem" => Some(&XYLEM),
        _ => None,
    }
}

/// The sections as roff, to follow the page clap renders.
pub fn sections(extra: &Extra) -> String {
    let mut roff = Roff::new();
    let list = |roff: &mut Roff, title: &str, items: &[(&str, &str)]| {
        roff.control("SH", [title]);
        for (term, text) in items {
            roff.control("TP", []);
            roff.text([bold(*term)]);
            roff.text([roman(*text)]);
        }
    };
    let exits: Vec<(&str, &str)> = table(extra.program)
        .iter()
        .map(|row| (row.code, row.meaning))
        .collect();
    list(&mut roff, "EXIT STATUS", &exits);
    list(&mut roff, "ENVIRONMENT", extra.environment);
    list(&mut roff, "FILES", extra.files);
    roff.control("SH", ["EXAMPLES"]);
    for (what, command) in extra.examples {
        roff.control("PP", []);
        roff.text([roman(*what)]);
        roff.control("RS", []);
        roff.control("nf", []);
        roff.text([bold(*command)]);
        roff.control("fi", []);
        roff.control("RE", []);
    }
    roff.to_roff()
}

/// b_eff_io's 2.1 spellings, as a second SYNOPSIS line: what a 2.1 job script passes.
pub fn beffio_legacy_synopsis() -> String {
    let mut inlines: Vec<Inline> = vec![bold("b_eff_io"), roman(" ")];
    for (flag, value) in [
        ("-MB", Some("N")),
        ("-MT", Some("N")),
        ("-T", Some("SECONDS")),
        ("-N", Some("N")),
        ("-p", Some("PATH")),
        ("-f", Some("PREFIX")),
        ("-i", Some("HINTSFILE")),
        ("-e", Some("N")),
        ("-d", None),
        ("-keep", None),
        ("-rewrite", None),
        ("-noshared", None),
        ("-nounique", None),
    ] {
        inlines.push(roman("["));
        inlines.push(bold(flag));
        if let Some(v) = value {
            inlines.push(roman(" "));
            inlines.push(italic(v));
        }
        inlines.push(roman("] "));
    }
    let mut roff = Roff::new();
    roff.control("PP", []);
    roff.text([roman("With the 2.1 spellings of its job scripts:")]);
    roff.control("br", []);
    roff.text(inlines);
    roff.to_roff()
}
