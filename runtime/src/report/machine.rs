//! The machine as `pmu detect` describes it: whether a spec describes its processor, the box
//! counts its part reports, and how its uncore discovery tables agree with the spec (the data
//! is [`crate::detect`]'s).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::detect::{cpuinfo_path, described_vendors, discovery_tables, read, Cpu, TableReport};
use crate::discovery::DISCOVERY_DEVICE_ID;
use crate::machine::Machine;
use crate::part;

/// The machine under `root` (`/` without one) as `pmu detect` describes it: its processor,
/// the specs that describe it, its part's box counts, how its discovery tables agree with
/// the spec, and what it can count through; as text, or JSON when `json_out`. The error
/// says which cpuinfo could not be read.
pub fn describe(root: Option<&Path>, json_out: bool) -> Result<String, String> {
    let Some(cpu) = read(root) else {
        return Err(format!(
            "cannot read the processor from {}; is /proc mounted, or does --root point at the \
             right tree?",
            cpuinfo_path(root).display()
        ));
    };
    let uncore = cpu
        .uncore_spec()
        .and_then(|s| crate::lookup::processor(s).ok());
    let discovery = uncore.and_then(|p| discovery_tables(root, p));
    let access = CountingAccess::of(root);
    if json_out {
        let arm = cpu.midr.map(|_| crate::detect::arm_counting(root, uncore));
        let soc = cpu
            .midr
            .map(|m| soc_json(&crate::soc::SocReport::of(root, Some(m))));
        return Ok(describe_json(&cpu, discovery.as_deref(), &access, arm, soc));
    }
    let mut out = format!("processor: {}\n{}\n", cpu.describe(), verdict(&cpu));
    if let Some(p) = uncore {
        out.push_str(&box_counts(root, p));
    }
    if let Some(tables) = &discovery {
        out.push_str(&discovery_lines(root, tables));
    }
    if let Some(m) = cpu.midr {
        out.push_str(&crate::soc::SocReport::of(root, Some(m)).text());
        out.push_str(&crate::detect::arm_counting(root, uncore));
    } else {
        out.push_str(&access.text());
    }
    Ok(out)
}

/// [`describe`]'s JSON: one object, a line. `arm` is the counting text of an Arm core, which
/// only perf counts.
fn describe_json(
    cpu: &Cpu,
    discovery: Option<&[TableReport]>,
    access: &CountingAccess,
    arm: Option<String>,
    soc: Option<serde_json::Value>,
) -> String {
    let tables: Vec<_> = discovery
        .iter()
        .flat_map(|t| t.iter())
        .map(|t| json!({"device": t.device, "read": t.read, "matching": t.counts[0], "missing": t.counts[1], "unknown": t.counts[2], "disagreeing": t.counts[3], "ignored": t.counts[4], "counted_by_part": t.counts[5], "error": t.error}))
        .collect();
    let counting = match arm {
        Some(text) => json!({"perf_only": true, "text": text.trim_end()}),
        None => {
            json!({"msr": access.msr, "core_pmu": access.core_pmu, "uncore_pmus": access.uncore_pmus, "missing": access.missing(), "instead": access.instead()})
        }
    };
    let midr = cpu.midr.map(|m| json!({"value": format!("{:#010x}", m.0), "implementer": m.implementer(), "part": m.part(), "variant": m.variant(), "revision": m.revision()}));
    format!(
        "{}\n",
        json!({"vendor": cpu.vendor, "family": cpu.family, "model": cpu.model, "model_hex": format!("{:#x}", cpu.model), "name": cpu.name, "midr": midr, "specs": cpu.specs(), "discovery_tables": discovery.map(|_| tables), "soc": soc, "counting": counting})
    )
}

/// The `soc` object of `pmu detect --json` on an Arm machine.
fn soc_json(r: &crate::soc::SocReport) -> serde_json::Value {
    json!({"soc_id": r.soc_id, "family": r.family, "id": r.soc.map(|s| s.id), "cores": r.soc.map(|s| s.cores), "uncore": r.soc.map(|s| s.uncore), "text": r.text().trim_end()})
}

/// What the specs say of `cpu`: `specs: ID (code names), ...`, or why none matches and what
/// to do (`--sim`).
pub fn verdict(cpu: &Cpu) -> String {
    let specs = cpu.specs();
    if !cpu.known_vendor() {
        let vendors = described_vendors();
        let listed = match vendors.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => "no".to_string(),
        };
        format!(
            "no spec matches: pmu describes {listed} processors' performance-monitoring \
             registers; `--sim` runs the commands on a simulated PMU"
        )
    } else if let (Some(midr), true) = (cpu.midr, specs.is_empty()) {
        midr.unknown_core()
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
    }
}

/// `discovery table: ...` lines: none found, or per table the join's counts or why it was
/// not read (reading physical memory needs root).
pub fn discovery_lines(root: Option<&Path>, tables: &[TableReport]) -> String {
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
pub fn box_counts(root: Option<&Path>, p: &'static pmu_regs::ProcessorInfo) -> String {
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

/// What counting needs that a machine has: the MSR devices (`/dev/cpu/*/msr`, the raw
/// backends' and `pmu read`'s), a hardware PMU in perf's sysfs (`cpu`, or a hybrid part's
/// `cpu_core`/`cpu_atom`), and uncore PMUs there (`uncore_*`, AMD's `amd_df`, `amd_l3`,
/// `amd_umc_*`). A virtual machine often has none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountingAccess {
    /// Some `/dev/cpu/N/msr` exists.
    pub msr: bool,
    /// perf's sysfs has a core PMU.
    pub core_pmu: bool,
    /// How many uncore PMUs perf's sysfs has.
    pub uncore_pmus: usize,
}

impl CountingAccess {
    /// What the machine under `root` (default `/`) has.
    pub fn of(root: Option<&Path>) -> Self {
        let root = root.unwrap_or(Path::new("/"));
        let names = |dir: PathBuf| -> Vec<String> {
            std::fs::read_dir(dir)
                .map(|d| {
                    d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .collect()
                })
                .unwrap_or_default()
        };
        let msr = names(root.join("dev/cpu"))
            .iter()
            .any(|cpu| root.join("dev/cpu").join(cpu).join("msr").exists());
        let pmus = names(root.join("sys/bus/event_source/devices"));
        let core_pmu = pmus
            .iter()
            .any(|p| matches!(p.as_str(), "cpu" | "cpu_core" | "cpu_atom"));
        let uncore_pmus = pmus
            .iter()
            .filter(|p| {
                ["uncore_", "amd_df", "amd_l3", "amd_umc"]
                    .iter()
                    .any(|prefix| p.starts_with(prefix))
            })
            .count();
        CountingAccess {
            msr,
            core_pmu,
            uncore_pmus,
        }
    }

    /// What is missing, each with what it means.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if !self.msr {
            missing.push("no /dev/cpu/*/msr (the msr module is not loaded, or the machine has no MSR access: `modprobe msr` as root)");
        }
        if !self.core_pmu {
            missing.push("no hardware PMU in perf's sysfs (/sys/bus/event_source/devices has no cpu: no core events such as cycles)");
        }
        if self.uncore_pmus == 0 {
            missing.push("no uncore PMU in perf's sysfs (no uncore_*, amd_df or amd_l3 device)");
        }
        missing
    }

    /// What counts instead of what is missing, or `None` when nothing is.
    pub fn instead(&self) -> Option<&'static str> {
        if self.msr && self.core_pmu && self.uncore_pmus > 0 {
            None
        } else if !self.msr && !self.core_pmu && self.uncore_pmus == 0 {
            Some("this machine counts no hardware event (a virtual machine often has no PMU): `--sim` runs every command on a simulated PMU (`pmu watch --sim`, `pmu stat --sim`), and perf's software events count for real (`pmu stat -e task-clock -- CMD`, `pmu watch -e task-clock`)")
        } else {
            Some("what is missing above cannot be counted here; `--sim` runs every command on a simulated PMU, and `--backend perf` counts through the PMUs perf has")
        }
    }

    /// `pmu detect`'s lines: `counting: ...` and, where something is missing, `instead: ...`.
    pub fn text(&self) -> String {
        match self.instead() {
            None => format!(
                "counting: MSRs, the core PMU and {} uncore PMUs are reachable\n",
                self.uncore_pmus
            ),
            Some(instead) => format!(
                "counting: {}\ninstead: {instead}\n",
                self.missing().join("; ")
            ),
        }
    }
}
