//! Every XML file under `spec/` and `tests/fixtures/ok/` conforms to `spec/schema.xsd`. The
//! check is `tests/xsd`, a Rust validator for the XSD constructs the schema uses, so it needs
//! no system tool; it refuses to load a schema that uses anything else.

#[path = "xsd/mod.rs"]
mod xsd;

use std::path::{Path, PathBuf};

fn dir(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn schema() -> xsd::Schema {
    xsd::Schema::load(&std::fs::read_to_string(dir("../spec/schema.xsd")).unwrap()).unwrap()
}

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

fn check_dir(dir: &Path) -> usize {
    let schema = schema();
    let mut files = Vec::new();
    xml_files(dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no XML files under {}", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        let errors = schema.validate(&std::fs::read_to_string(f).unwrap());
        failures.extend(errors.iter().map(|e| format!("{}: {e}", f.display())));
    }
    assert!(
        failures.is_empty(),
        "schema validation failed:\n{}",
        failures.join("\n")
    );
    files.len()
}

/// The errors for `text`, a unit file built from the W-box spec with one edit.
fn errors_after(edit: impl Fn(&str) -> String) -> Vec<String> {
    let good = std::fs::read_to_string(dir("../spec/xeon-7500/wbox.xml")).unwrap();
    let bad = edit(&good);
    assert_ne!(bad, good, "the edit must change the file");
    schema().validate(&bad)
}

#[test]
fn spec_files_match_the_schema() {
    // processors.xml, every unit file and every events file.
    assert!(check_dir(&dir("../spec")) > 15);
}

#[test]
fn fixture_spec_matches_the_schema() {
    check_dir(&dir("fixtures/ok"));
}

#[test]
fn schema_rejects_an_unknown_access_kind() {
    // The schema is a real check, not a formality: a fixture the validator rejects for an
    // unknown access kind is rejected by the schema too.
    let bad = std::fs::read_to_string(dir("fixtures/errors/unknown_access.xml")).unwrap();
    let errors = schema().validate(&bad);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("\"rw1s\" is not one of rw")),
        "{errors:?}"
    );
}

/// An edit of a spec file's text.
type Edit = Box<dyn Fn(&str) -> String>;

#[test]
fn schema_rejects_structure_errors_as_xmllint_does() {
    let cases: [(&str, Edit, &str); 8] = [
        (
            "an undeclared attribute",
            Box::new(|s| s.replacen("<field ", "<field colour=\"red\" ", 1)),
            "attribute colour is not declared",
        ),
        (
            "a missing required attribute",
            Box::new(|s| s.replacen(" access=\"rw\"", "", 1)),
            "required attribute access is missing",
        ),
        (
            "an unknown element",
            Box::new(|s| s.replacen("<field ", "<bitfield/><field ", 1)),
            "<bitfield> is not expected here",
        ),
        (
            "elements out of order (description before source)",
            Box::new(|s| {
                let start = s.find("<register ").unwrap();
                let src = start + s[start..].find("<source ").unwrap();
                let src_end = src + s[src..].find("/>").unwrap() + 2;
                let source = s[src..src_end].to_string();
                let desc_end = src_end + s[src_end..].find("</description>").unwrap() + 14;
                let mut out = s.to_string();
                out.insert_str(desc_end, &source);
                out.replace_range(src..src_end, "");
                out
            }),
            "is not expected here",
        ),
        (
            "a pattern mismatch (bits)",
            Box::new(|s| s.replacen("bits=\"", "bits=\"x", 1)),
            "does not match the pattern",
        ),
        (
            "an integer type (count=0)",
            Box::new(|s| s.replacen("type=\"WGlobalCtl\"", "type=\"WGlobalCtl\" count=\"0\"", 1)),
            "is not a valid xs:positiveInteger",
        ),
        (
            "text in element-only content",
            Box::new(|s| s.replacen("<field ", "stray<field ", 1)),
            "text \"stray\" is not allowed",
        ),
        (
            "a register without fields",
            Box::new(|s| {
                let a = s.find("<field ").unwrap();
                let b = s.find("</register>").unwrap();
                format!("{}{}", &s[..a], &s[b..])
            }),
            "content ends too early",
        ),
    ];
    for (what, edit, expected) in cases {
        let errors = errors_after(edit);
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{what}: expected {expected:?} in {errors:?}"
        );
    }
}

#[test]
fn the_checker_refuses_schema_constructs_it_does_not_implement() {
    let text = std::fs::read_to_string(dir("../spec/schema.xsd")).unwrap();
    let with_all = text.replacen(
        "<xs:sequence>",
        "<xs:all><xs:element name=\"x\"/></xs:all><xs:sequence>",
        1,
    );
    let e = xsd::Schema::load(&with_all)
        .err()
        .expect("xs:all is refused");
    assert!(e.contains("xs:all"), "{e}");
    let with_date = text.replacen("type=\"xs:string\"", "type=\"xs:date\"", 1);
    let e = xsd::Schema::load(&with_date)
        .err()
        .expect("xs:date is refused");
    assert!(e.contains("xs:date"), "{e}");
}
