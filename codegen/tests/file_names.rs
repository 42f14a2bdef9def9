//! No file of the two published crates has a name Windows reserves for a device (`CON`, `PRN`,
//! `AUX`, `NUL`, `COM1`-`COM9`, `LPT1`-`LPT9`, with any extension and in any case): a crate
//! holding one does not unpack there, and `cargo publish` warns of it (issue 42: the runtime's
//! `counters/aux.rs`). Checked on every path codegen writes for the spec (so a unit or
//! processor module named `aux` fails here, not at publication) and on every file now under
//! `generated/` and `runtime/`.

use std::path::Path;

/// Whether Windows reserves `name` (one path component): its part before the first dot,
/// trailing spaces ignored, is a device name.
fn reserved(name: &str) -> bool {
    let stem = name
        .split('.')
        .next()
        .unwrap_or("")
        .trim_end()
        .to_ascii_uppercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix)
            .is_some_and(|n| n.len() == 1 && matches!(n.as_bytes()[0], b'1'..=b'9'))
    };
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL") || numbered("COM") || numbered("LPT")
}

#[test]
fn the_rule_knows_the_device_names() {
    for name in [
        "aux.rs",
        "AUX",
        "con.txt",
        "Nul.tar.gz",
        "com1.rs",
        "LPT9.md",
        "prn ",
    ] {
        assert!(reserved(name), "{name} is reserved");
    }
    for name in [
        "aux_msr.rs",
        "auxiliary.rs",
        "com10.rs",
        "lpt0",
        "console.rs",
        "cha.rs",
    ] {
        assert!(!reserved(name), "{name} is not reserved");
    }
}

#[test]
fn codegen_writes_no_reserved_file_name() {
    let spec_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let tree = codegen::render(&spec_dir).expect("the spec renders");
    assert!(tree.len() > 200, "only {} files rendered", tree.len());
    let bad: Vec<&String> = tree
        .keys()
        .filter(|path| path.split('/').any(reserved))
        .collect();
    assert!(bad.is_empty(), "reserved Windows names: {bad:?}");
}

/// The paths under `dir` (relative to `root`) with a reserved component, `target/` left out.
fn reserved_under(root: &Path, dir: &Path, bad: &mut Vec<String>, seen: &mut usize) {
    for entry in std::fs::read_dir(dir)
        .expect("a readable directory")
        .flatten()
    {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "target" {
            continue;
        }
        *seen += 1;
        if reserved(&name) {
            bad.push(
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
        }
        if path.is_dir() {
            reserved_under(root, &path, bad, seen);
        }
    }
}

#[test]
fn the_published_crates_hold_no_reserved_file_name() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let (mut bad, mut seen) = (Vec::new(), 0);
    for krate in ["generated", "runtime"] {
        reserved_under(&root, &root.join(krate), &mut bad, &mut seen);
    }
    assert!(seen > 300, "only {seen} files seen");
    assert!(bad.is_empty(), "reserved Windows names: {bad:?}");
}
