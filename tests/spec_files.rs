//! Every XML file under `spec/` and `tests/fixtures/ok/` conforms to `spec/schema.xsd`, checked
//! with xmllint (Debian/Ubuntu: `apt-get install libxml2-utils`; `.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn xml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            xml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "xml") {
            out.push(path);
        }
    }
}

fn check_dir(dir: &Path) {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/schema.xsd");
    let mut files = Vec::new();
    xml_files(dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no XML files under {}", dir.display());
    let output = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .args(&files)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run xmllint ({e}): install it with `apt-get install libxml2-utils`")
        });
    assert!(
        output.status.success(),
        "schema validation failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = String::from_utf8_lossy(&output.stderr);
    for f in &files {
        assert!(
            report.contains(&format!("{} validates", f.display())),
            "xmllint did not report {}",
            f.display()
        );
    }
}

#[test]
fn spec_files_match_the_schema() {
    check_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec"));
}

#[test]
fn fixture_spec_matches_the_schema() {
    check_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ok"));
}

#[test]
fn schema_rejects_an_unknown_access_kind() {
    // The schema is a real check, not a formality: a fixture the validator rejects for an
    // unknown access kind is rejected by the schema too.
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/schema.xsd");
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/errors/unknown_access.xml");
    let output = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(&bad)
        .output()
        .expect("xmllint runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("rw1s"));
}
