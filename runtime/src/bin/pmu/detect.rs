//! Which processor this is (from `/proc/cpuinfo`: vendor, family, model) and which specs
//! describe it, so that a command refuses plainly on a machine no spec matches instead of
//! failing later with advice meant for a missing driver. The library's [`pmu_runtime::detect`]
//! finds it and checks it, [`pmu_runtime::report::machine`] words it (`pmu detect`); this
//! module prints it.

use std::path::Path;

use pmu_runtime::detect::check_describes;
pub use pmu_runtime::detect::{detected, read};
pub use pmu_runtime::lookup::processor_named;
use pmu_runtime::report::machine;

use crate::failure::Failure;

/// Refuses a register of `processor` on a machine whose processor it does not describe.
/// Nothing is checked when cpuinfo cannot be read (a file-tree machine without one).
pub fn check(root: Option<&Path>, register: &str, processor: &str) -> Result<(), Failure> {
    check_describes(root, register, "register", processor)
        .map_err(|e| Failure::operation(e.to_string()))
}

/// Refuses to program a box (`--unit`) of `processor` on a machine whose processor it does
/// not describe, as [`check`] refuses a register.
pub fn check_box(root: Option<&Path>, unit: &str, processor: &str) -> Result<(), Failure> {
    check_describes(root, unit, "box", processor).map_err(|e| Failure::operation(e.to_string()))
}

/// `pmu detect`.
pub fn run(root: Option<&Path>, json_out: bool) -> Result<String, Failure> {
    machine::describe(root, json_out).map_err(Failure::operation)
}
