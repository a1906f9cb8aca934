//! Renders result files: `cargo run -p analysis --example render OUT.svg|png FILE.json...`.

fn main() -> Result<(), analysis::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = std::path::PathBuf::from(&args[0]);
    let runs = args[1..]
        .iter()
        .map(|p| analysis::load_file(std::path::Path::new(p), None))
        .collect::<Result<Vec<_>, _>>()?;
    let bytes = analysis::plot::plot(&runs, analysis::plot::Format::from_path(&out)?)?;
    std::fs::write(&out, bytes).map_err(|e| analysis::Error::Usage(e.to_string()))
}
