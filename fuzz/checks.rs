//! What each fuzz target checks, in one place: the libFuzzer targets in `fuzz_targets/` call
//! these, and so does the corpus-replay test in the normal suite (`tests/fuzz_corpus.rs`
//! includes this file), so every input that once crashed stays fixed without nightly.
//!
//! The property is the same everywhere: any input gets a result or a rendered error, never a
//! panic; and what is accepted obeys the rules the rest of the tool relies on.

#![allow(dead_code)] // each target uses one check

use std::path::PathBuf;

use codegen::diagnostics::{render, SourceFile};
use codegen::parse::{
    parse_document, ParsedProcessors, ParsedUnit, RawProcessors, RawSpec, RawUnit,
};

const PROCESSORS: &str = include_str!("../spec/processors.xml");
const UNIT: &str = include_str!("../spec/xeon-7500/wbox.xml");

fn parse_processors(text: &str) -> Result<ParsedProcessors, String> {
    let file = SourceFile::new(PathBuf::from("processors.xml"), text.to_string());
    match parse_document::<RawProcessors>(&file, "processors") {
        Ok(raw) => Ok(ParsedProcessors { file, raw }),
        Err(d) => Err(render(&[d])),
    }
}

fn parse_unit(path: &str, text: &str) -> Result<ParsedUnit, String> {
    let file = SourceFile::new(PathBuf::from(path), text.to_string());
    match parse_document::<RawUnit>(&file, "unit") {
        Ok(raw) => Ok(ParsedUnit { file, raw }),
        Err(d) => Err(render(&[d])),
    }
}

/// Validates `raw`; a spec that passes must also generate (the emitters trust the validator,
/// so a panic there is a rule the validator is missing).
fn validate_and_emit(raw: &RawSpec) {
    match codegen::validate::validate(raw) {
        Ok(spec) => {
            // Emitting touches no file; its only errors are template ones, which are ours,
            // and a C name clash, which the input can cause and is reported as it should be.
            match codegen::emit::generate(&spec) {
                Ok(_) => {}
                Err(codegen::emit::EmitError::CName(clash)) => {
                    assert!(!clash.to_string().is_empty())
                }
                Err(e) => panic!("a validated spec must render: {e:?}"),
            }
        }
        Err(diagnostics) => assert!(!render(&diagnostics).is_empty()),
    }
}

/// `data` as a unit file beside the real `processors.xml`.
pub fn spec_unit(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return; // SourceFile::read refuses non-UTF-8 before parsing
    };
    let processors = parse_processors(PROCESSORS).expect("the real processors.xml parses");
    match parse_unit("xeon-7500/fuzzed.xml", text) {
        Ok(unit) => validate_and_emit(&RawSpec {
            processors,
            units: vec![unit],
        }),
        Err(message) => assert!(!message.is_empty()),
    }
}

/// `data` as `processors.xml`, with one real unit file.
pub fn spec_processors(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let unit = parse_unit("xeon-7500/wbox.xml", UNIT).expect("the real W-box file parses");
    match parse_processors(text) {
        Ok(processors) => validate_and_emit(&RawSpec {
            processors,
            units: vec![unit],
        }),
        Err(message) => assert!(!message.is_empty()),
    }
}

/// `data` as the words of `pmu decode REGISTER VALUE` and `pmu encode REGISTER FIELD=VALUE...`
/// (split on newlines): lookup, number parsing, assignment parsing and encoding. An accepted
/// encoding may only change writable bits of the reset value.
pub fn cli_codec(data: &[u8]) {
    use pmu_runtime::{codec, lookup};
    let Ok(text) = std::str::from_utf8(data) else {
        return; // clap refuses non-UTF-8 arguments
    };
    let mut words = text.split('\n');
    let register = words.next().unwrap_or_default();
    let value = words.next().unwrap_or_default();
    let rest: Vec<String> = words.map(str::to_string).collect();
    let found = match lookup::find(register) {
        Ok(found) => found,
        Err(e) => return assert!(!e.to_string().is_empty()),
    };
    let info = found.info;
    if let Ok(raw) = codec::parse_number(value) {
        let d = codec::decode(info, raw);
        assert_eq!(d.reserved_set, raw & info.reserved_mask);
    }
    match codec::parse_assignments(&rest).and_then(|a| codec::encode(info, info.reset, &a)) {
        Ok(raw) => {
            let changed = raw ^ info.reset;
            assert_eq!(
                changed & !info.writable_mask,
                0,
                "{}: encode changed bits that are not writable",
                info.name
            );
            assert_eq!(raw & info.reserved_mask, info.reset & info.reserved_mask);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// `data` as an Intel perfmon JSON event list imported into the real spec: every file the
/// importer would write must parse as an events file.
pub fn perfmon_import(spec: &codegen::model::Spec, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match codegen::import::plan(text, "fuzzed.json", spec, "xeon-e5-2600") {
        Ok(plan) => {
            for (path, content) in plan.files {
                let file = SourceFile::new(path.clone(), content);
                if let Err(d) = parse_document::<codegen::parse::RawEvents>(&file, "events") {
                    panic!(
                        "the importer wrote an unparsable {}:\n{}",
                        path.display(),
                        render(&[d])
                    );
                }
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
