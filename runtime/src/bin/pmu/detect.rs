//! Which processor this is (from `/proc/cpuinfo`: vendor, family, model) and which specs
//! describe it, so that a command refuses plainly on a machine no spec matches instead of
//! failing later with advice meant for a missing driver. The library's [`pmu_runtime::detect`]
//! finds it and checks it, [`pmu_runtime::report::machine`] words it; this module prints it.

use std::path::Path;

use pmu_runtime::detect::{check_describes, cpuinfo_path, discovery_tables};
pub use pmu_runtime::detect::{detected, read};
pub use pmu_runtime::lookup::processor_named;
use pmu_runtime::report::machine;
use serde_json::json;

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
    let path = cpuinfo_path(root);
    let Some(cpu) = read(root) else {
        return Err(Failure::operation(format!(
            "cannot read the processor from {}; is /proc mounted, or does --root point at the \
             right tree?",
            path.display()
        )));
    };
    let specs = cpu.specs();
    let uncore = cpu
        .uncore_spec()
        .and_then(|s| pmu_runtime::lookup::processor(s).ok());
    let discovery = uncore.and_then(|p| discovery_tables(root, p));
    let access = machine::CountingAccess::of(root);
    if json_out {
        let tables: Vec<_> = discovery
            .iter()
            .flatten()
            .map(|t| json!({"device": t.device, "read": t.read, "matching": t.counts[0], "missing": t.counts[1], "unknown": t.counts[2], "disagreeing": t.counts[3], "ignored": t.counts[4], "counted_by_part": t.counts[5], "error": t.error}))
            .collect();
        let counting = match cpu.midr {
            Some(_) => {
                json!({"perf_only": true, "text": pmu_runtime::detect::arm_counting(root, uncore).trim_end()})
            }
            None => {
                json!({"msr": access.msr, "core_pmu": access.core_pmu, "uncore_pmus": access.uncore_pmus, "missing": access.missing(), "instead": access.instead()})
            }
        };
        return Ok(format!(
            "{}\n",
            json!({"vendor": cpu.vendor, "family": cpu.family, "model": cpu.model, "model_hex": format!("{:#x}", cpu.model), "name": cpu.name, "midr": cpu.midr.map(|m| json!({"value": format!("{:#010x}", m.0), "implementer": m.implementer(), "part": m.part(), "variant": m.variant(), "revision": m.revision()})), "specs": specs, "discovery_tables": discovery.as_ref().map(|_| tables), "counting": counting})
        ));
    }
    let mut out = format!(
        "processor: {}\n{}\n",
        cpu.describe(),
        machine::verdict(&cpu)
    );
    if let Some(p) = uncore {
        out.push_str(&machine::box_counts(root, p));
    }
    if let Some(tables) = &discovery {
        out.push_str(&machine::discovery_lines(root, tables));
    }
    if cpu.midr.is_some() {
        out.push_str(&pmu_runtime::detect::arm_counting(root, uncore));
    } else {
        out.push_str(&access.text());
    }
    Ok(out)
}
