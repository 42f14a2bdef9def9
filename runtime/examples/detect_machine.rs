//! Describes the machine under a root directory (`/` without one) as this `pmu detect` does:
//! its processor from cpuinfo, the specs that describe it, the box counts its part reports,
//! how its uncore discovery tables agree with the spec, and what it can count through (MSR
//! files, perf's core and uncore PMUs):
//!
//! ```text
//! pmu detect [--root DIR]
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example detect_machine [-- DIR]`; CI and
//! `runtime/tests/examples.rs` compare its output with that command's (the test on a file
//! tree that names a Sapphire Rapids).

use std::path::Path;

use pmu_runtime::report::machine;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args_os().nth(1);
    print!("{}", report(root.as_deref().map(Path::new))?);
    Ok(())
}

/// The description as text (`machine::describe(root, true)` gives JSON). A program that
/// needs the processor's numbers reads them with `pmu_runtime::detect::read(root)`.
pub fn report(root: Option<&Path>) -> Result<String, Box<dyn std::error::Error>> {
    Ok(machine::describe(root, false)?)
}
