//! Which processor this is (from `/proc/cpuinfo`: vendor, family, model) and which specs
//! describe it, so that a command refuses plainly on a machine no spec matches instead of
//! failing later with advice meant for a missing driver. The library's [`pmu_runtime::detect`]
//! finds it; this module prints it and refuses.

use std::path::{Path, PathBuf};

use pmu_runtime::detect::{cpuinfo_path, described_vendors, discovery_tables, TableReport};
pub use pmu_runtime::detect::{detected, read};
use pmu_runtime::discovery::DISCOVERY_DEVICE_ID;
use pmu_runtime::machine::Machine;
use pmu_runtime::part;
use serde_json::json;

use crate::failure::Failure;

/// Refuses a register of `processor` on a machine whose processor it does not describe.
/// Nothing is checked when cpuinfo cannot be read (a file-tree machine without one).
pub fn check(root: Option<&Path>, register: &str, processor: &str) -> Result<(), Failure> {
    check_named(root, register, "register", processor)
}

/// Refuses to program a box (`--unit`) of `processor` on a machine whose processor it does
/// not describe, as [`check`] refuses a register.
pub fn check_box(root: Option<&Path>, unit: &str, processor: &str) -> Result<(), Failure> {
    check_named(root, unit, "box", processor)
}

fn check_named(
    root: Option<&Path>,
    register: &str,
    kind: &str,
    processor: &str,
) -> Result<(), Failure> {
    let Some(cpu) = read(root) else {
        return Ok(());
    };
    if !cpu.known_vendor() {
        return Err(Failure::operation(format!(
            "this machine's processor is {}: no spec describes this vendor's \
             performance-monitoring registers, so {register} is not there; `--sim` runs \
             the commands on a simulated PMU",
            cpu.describe()
        )));
    }
    let specs = cpu.specs();
    if !specs.contains(&processor) {
        let article = if processor.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        return Err(Failure::operation(format!(
            "{register} is {article} {processor} {kind}, but this machine's processor is {}, \
             which {}",
            cpu.describe(),
            match specs.as_slice() {
                [] => "no spec describes yet; `--sim` runs the commands on a simulated PMU"
                    .to_string(),
                [one] => format!("the spec {one} describes; name a {kind} of it, or use --sim"),
                many => format!(
                    "the specs {} describe; name a {kind} of those, or use --sim",
                    many.join(", ")
                ),
            }
        )));
    }
    Ok(())
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
        .and_then(|s| pmu_regs::PROCESSORS.iter().copied().find(|p| p.id == s));
    let discovery = uncore.and_then(|p| discovery_tables(root, p));
    if json_out {
        let tables: Vec<_> = discovery
            .iter()
            .flatten()
            .map(|t| json!({"device": t.device, "read": t.read, "matching": t.counts[0], "missing": t.counts[1], "unknown": t.counts[2], "disagreeing": t.counts[3], "ignored": t.counts[4], "counted_by_part": t.counts[5], "error": t.error}))
            .collect();
        return Ok(format!(
            "{}\n",
            json!({"vendor": cpu.vendor, "family": cpu.family, "model": cpu.model, "model_hex": format!("{:#x}", cpu.model), "name": cpu.name, "specs": specs, "discovery_tables": discovery.as_ref().map(|_| tables)})
        ));
    }
    let verdict = if !cpu.known_vendor() {
        format!(
            "no spec matches: pmu describes {} processors' performance-monitoring registers; \
             `--sim` runs the commands on a simulated PMU",
            described_vendors().join(" and ")
        )
    } else if specs.is_empty() {
        format!(
            "no spec matches this {} processor yet; `--sim` runs the commands on a simulated PMU",
            cpu.vendor
        )
    } else {
        let names: Vec<String> = specs
            .iter()
            .map(|s| {
                pmu_regs::PROCESSORS
                    .iter()
                    .find(|p| p.id == *s && !p.code_names.is_empty())
                    .map_or(s.to_string(), |p| {
                        format!("{s} ({})", p.code_names.join(", "))
                    })
            })
            .collect();
        format!("specs: {}", names.join(", "))
    };
    let mut out = format!("processor: {}\n{verdict}\n", cpu.describe());
    if let Some(p) = uncore {
        out.push_str(&box_counts(root, p));
    }
    if let Some(tables) = &discovery {
        out.push_str(&discovery_lines(root, tables));
    }
    Ok(out)
}

/// `discovery table: ...` lines: none found, or per table the join's counts or why it was
/// not read (reading physical memory needs root).
fn discovery_lines(root: Option<&Path>, tables: &[TableReport]) -> String {
    if tables.is_empty() {
        let devices = root.unwrap_or(Path::new("/")).join("sys/bus/pci/devices");
        return format!(
            "discovery table: not found (no device 8086:{DISCOVERY_DEVICE_ID:04x} under {}; \
             virtual machines show none)\n",
            devices.display()
        );
    }
    let mut out = String::new();
    for t in tables {
        match &t.error {
            None => out.push_str(&format!(
                "discovery table: {}: {} boxes: {} matching, {} missing, {} unknown, {} \
                 disagreeing, {} ignored, {} counted by the part (pmu discover lists them)\n",
                t.device,
                t.counts.iter().sum::<usize>(),
                t.counts[0],
                t.counts[1],
                t.counts[2],
                t.counts[3],
                t.counts[4],
                t.counts[5]
            )),
            Some(e) => out.push_str(&format!(
                "discovery table: {}: found, not read: {e}\n",
                t.device
            )),
        }
    }
    out
}

/// The box counts the part reports, for each unit whose spec says how to read one
/// (`<box-count>`), socket by socket; where one cannot be read (no privilege, no device),
/// why.
fn box_counts(root: Option<&Path>, p: &'static pmu_regs::ProcessorInfo) -> String {
    let machine = Machine::hardware(root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf));
    let sockets: Vec<u32> = match machine.topology() {
        Ok(t) => t.sockets().collect(),
        Err(e) => return format!("box counts: not read ({e})\n"),
    };
    let mut out = String::new();
    for u in p.units {
        let Some(pmu) = u.pmu.filter(|m| m.box_count.is_some()) else {
            continue;
        };
        for &socket in &sockets {
            let line = match part::box_count(&machine, pmu, socket) {
                Ok(Some(n)) => format!(
                    "{} of {} listed ({}; {})",
                    n.present_count(),
                    u.instances.len(),
                    n.present(u),
                    n.read
                ),
                Ok(None) => continue,
                Err(e) => format!("not read: {e}"),
            };
            out.push_str(&format!("{} boxes, socket {socket}: {line}\n", u.name));
        }
    }
    out
}

/// The processor `--processor` names (by id or module), or `None` when none is given.
pub fn processor_named(name: Option<&str>) -> Result<Option<&'static str>, Failure> {
    let Some(name) = name else { return Ok(None) };
    pmu_regs::PROCESSORS
        .iter()
        .find(|p| crate::pattern::matches(Some(name), &[p.id, p.module]))
        .map(|p| Some(p.id))
        .ok_or_else(|| pmu_runtime::lookup::unknown_processor(name).into())
}
