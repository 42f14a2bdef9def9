//! The conformance run on this machine (`pmu check`): the processor, who else holds
//! counters, every discovery table the part publishes joined with its spec, the PCI bus of
//! each IIO stack where the part holds it ([`super::buses`]), and the kernel's
//! counts through the runtime's perf backend against the real `perf stat`
//! ([`super::against_perf`]). Nothing is written.

use std::path::Path;

use super::against_perf;
use super::holders::holders;
use super::outcome::{CheckReport, CheckRow};
use crate::boxes::Boxes;
use crate::machine::Machine;

/// The run on the machine under `root` (`/` for this one), comparing with the `perf`
/// program at `perf` (`"perf"`: the one on the `PATH`).
pub fn on_this_machine(root: &Path, perf: &str) -> CheckReport {
    let mut rows = Vec::new();
    let cpu = crate::detect::read(Some(root));
    let described = cpu
        .as_ref()
        .map_or_else(|| "cannot read /proc/cpuinfo".to_string(), |c| c.describe());
    rows.push(CheckRow::note("processor", described));
    rows.push(CheckRow::note(
        "other counter holders",
        holders(root).summary(),
    ));
    let uncore = cpu
        .as_ref()
        .and_then(|c| c.uncore_spec())
        .and_then(|s| pmu_regs::PROCESSORS.iter().copied().find(|p| p.id == s));
    if let Some(p) = uncore {
        let machine = Machine::hardware(root);
        rows.extend(super::simulated::discovery(&machine, Boxes::of(p)));
        rows.extend(super::buses::rows(&machine, Boxes::of(p), Some(root)));
    }
    rows.extend(against_perf::rows(perf));
    CheckReport {
        target: "this machine".into(),
        rows,
    }
}
