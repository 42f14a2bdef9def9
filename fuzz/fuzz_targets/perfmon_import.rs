#![no_main]

use std::sync::OnceLock;

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // Loading the spec takes milliseconds; do it once, not per input.
    static SPEC: OnceLock<codegen::model::Spec> = OnceLock::new();
    let spec = SPEC.get_or_init(|| {
        codegen::load_spec(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../spec"
        )))
        .expect("the checked-in spec validates")
    });
    checks::perfmon_import(spec, data);
});
