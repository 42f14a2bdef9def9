//! Replays every input the fuzzers found a bug with (`fuzz/regressions/<target>/`) through the
//! same checks the fuzz targets run, on stable and in CI, so each fixed crash stays fixed.
//! Hand-written hostile inputs sit beside them.

#[path = "../fuzz/checks.rs"]
mod checks;

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no inputs", dir.display());
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// Runs `check` on each input, naming the input that panics.
fn replay(target: &str, check: impl Fn(&[u8]) + std::panic::RefUnwindSafe) {
    for (path, bytes) in inputs(target) {
        if std::panic::catch_unwind(|| check(&bytes)).is_err() {
            panic!(
                "{} panicked; reproduce with `cargo +nightly fuzz run {target} {}`",
                path.display(),
                path.display()
            );
        }
    }
}

#[test]
fn spec_unit_inputs() {
    replay("spec_unit", checks::spec_unit);
}

#[test]
fn spec_processors_inputs() {
    replay("spec_processors", checks::spec_processors);
}

#[test]
fn cli_codec_inputs() {
    replay("cli_codec", checks::cli_codec);
}

#[test]
fn perfmon_import_inputs() {
    let spec = codegen::load_spec(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec")).unwrap();
    replay("perfmon_import", |data| checks::perfmon_import(&spec, data));
}

#[test]
fn a_second_byte_order_mark_is_a_clear_error_not_a_panic() {
    let text = format!(
        "\u{feff}\u{feff}{}",
        include_str!("../spec/xeon-7500/wbox.xml")
    );
    let file = codegen::diagnostics::SourceFile::new("xeon-7500/wbox.xml".into(), text);
    let Err(err) = codegen::parse::parse_document::<codegen::parse::RawUnit>(&file, "unit") else {
        panic!("a second byte-order mark must be refused");
    };
    let shown = codegen::diagnostics::render(&[err]);
    assert!(shown.contains("two byte-order marks"), "{shown}");
    // One mark is allowed and changes nothing.
    let text = format!("\u{feff}{}", include_str!("../spec/xeon-7500/wbox.xml"));
    let file = codegen::diagnostics::SourceFile::new("xeon-7500/wbox.xml".into(), text);
    assert!(codegen::parse::parse_document::<codegen::parse::RawUnit>(&file, "unit").is_ok());
}
