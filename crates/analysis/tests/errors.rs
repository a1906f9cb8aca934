//! Bad input gives errors that name the file, never a panic.

mod common;

use std::path::Path;

use analysis::plot::{plot, Format};
use common::{fixture, run};

#[test]
fn unreadable_malformed_and_unknown_files_are_named() {
    let e = analysis::load_file(Path::new("/nonexistent/r.json"), None).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/r.json: cannot read it"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    for (name, text, wanted) in [
        ("empty.json", "", "not a JSON document"),
        (
            "ior.json",
            "{\"benchmark\": \"ior\"}",
            "not a sqmr or b_eff_io result",
        ),
        ("nokind.json", "{\"sizes\": []}", "no \"benchmark\" field"),
        (
            "bad.json",
            "{\"benchmark\": \"sqmr\", \"sizes\": [{\"msgsize\": \"x\"}]}",
            "a sqmr result, but malformed",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let e = analysis::load_file(&path, None).unwrap_err().to_string();
        assert!(e.starts_with(&path.display().to_string()), "{e}");
        assert!(e.contains(wanted), "{e}");
    }
}

#[test]
fn truncated_and_retyped_fixtures_never_panic() {
    for name in ["sqmr-a.json", "beffio-a.json"] {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let step = (text.len() / 60).max(1);
        for cut in (0..text.len()).step_by(step) {
            let r = analysis::parse(&text[..cut], Path::new(name));
            assert!(r.is_err(), "{name} cut at {cut}");
        }
        // Numbers as strings: still an error, naming the file.
        let retyped = text.replace("\"msgsize\": 1,", "\"msgsize\": \"1\",");
        let retyped = retyped.replace("\"u\": 4,", "\"u\": \"4\",");
        let e = analysis::parse(&retyped, Path::new(name))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(name) && e.contains("malformed"), "{e}");
    }
}

#[test]
fn mixed_or_empty_results_are_refused() {
    let e = plot(&[run("sqmr-a.json"), run("beffio-a.json")], Format::Svg).unwrap_err();
    assert!(
        e.to_string().contains("sqmr-a.json is a sqmr result but "),
        "{e}"
    );
    assert!(
        e.to_string().contains("beffio-a.json is a b_eff_io result"),
        "{e}"
    );
    let e = plot(&[], Format::Svg).unwrap_err();
    assert!(e.to_string().contains("no result"), "{e}");
    let mut empty = run("sqmr-a.json");
    if let analysis::load::Document::Sqmr(d) = &mut empty.document {
        d.sizes.retain(|s| s.msgsize == 0);
    }
    let e = plot(&[empty], Format::Png).unwrap_err();
    assert!(
        e.to_string()
            .contains("sqmr-a.json: no message size above 0 with rates above 0"),
        "{e}"
    );
    let e = Format::from_path(Path::new("x.pdf")).unwrap_err();
    assert!(e.to_string().contains("must end in .svg or .png"), "{e}");
    assert_eq!(Format::from_path(Path::new("X.PNG")).unwrap(), Format::Png);
}
