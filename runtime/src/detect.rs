//! What this machine has, as data: its processor as `/proc/cpuinfo` describes the first CPU
//! (and, on an Arm machine, its MIDR_EL1 from sysfs: [`crate::midr`]), the specs that
//! describe it, and how the part's uncore discovery tables agree with the
//! spec. `pmu detect` prints it; nothing here prints.
//!
//! ```
//! use pmu_runtime::detect;
//!
//! let root = std::env::temp_dir().join(format!("detect-doc-{}", std::process::id()));
//! std::fs::create_dir_all(root.join("proc"))?;
//! std::fs::write(root.join("proc/cpuinfo"), "vendor_id\t: GenuineIntel\ncpu family\t: 6\n\
//!     model\t\t: 108\nstepping\t: 1\nmodel name\t: test\nflags\t\t: fpu arch_perfmon\n")?;
//! let cpu = detect::read(Some(&root)).expect("cpuinfo names a vendor");
//! // Linux gives Ice Lake-D (06_6CH) the Ice Lake-SP uncore; leaf 0AH is the architectural PMU.
//! assert_eq!(cpu.specs(), ["ice-lake-sp", "architectural"]);
//! assert_eq!(cpu.uncore_spec(), Some("ice-lake-sp"));
//! assert_eq!(detect::detected(true, Some(&root)), None);
//! # std::fs::remove_dir_all(&root)?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::path::{Path, PathBuf};

use crate::boxes::Boxes;
use crate::discovery::BoxStatus;
use crate::identify::CpuSignature;
use crate::machine::Machine;
use crate::midr::Midr;
use crate::part::joined_tables;

/// The processor as `/proc/cpuinfo` describes its first CPU.
#[derive(Debug)]
pub struct Cpu {
    /// `vendor_id` (`GenuineIntel`, `AuthenticAMD`).
    pub vendor: String,
    /// `cpu family`.
    pub family: u32,
    /// `model`.
    pub model: u32,
    /// The `stepping` line, which tells apart processors of one model (06_55H: Skylake-SP
    /// and Cascade Lake).
    pub stepping: Option<u32>,
    /// `model name`.
    pub name: String,
    /// CPUID leaf 0AH is present (the `arch_perfmon` flag).
    pub arch_perfmon: bool,
    /// An Arm core's MIDR_EL1: from sysfs (`regs/identification/midr_el1` of cpu0) where
    /// Linux shows it, else from cpuinfo's `CPU implementer` and `CPU part` lines. An Arm
    /// machine's cpuinfo has no `vendor_id`, `cpu family` or `model`.
    pub midr: Option<Midr>,
}

/// The vendors of the processors the spec identifies, in spec order, each once: CPUID's
/// vendor strings, then the MIDR implementers of its Arm cores (`MIDR implementer 0x41 (Arm)`).
pub fn described_vendors() -> Vec<String> {
    let mut vendors: Vec<String> = Vec::new();
    let cpuid = pmu_regs::PROCESSORS
        .iter()
        .filter_map(|p| p.identity)
        .map(|id| id.vendor.as_str().to_string());
    let midr = pmu_regs::PROCESSORS
        .iter()
        .filter_map(|p| p.midr)
        .map(|m| format!("MIDR implementer {:#04x} (Arm)", m.implementer));
    for v in cpuid.chain(midr) {
        if !vendors.contains(&v) {
            vendors.push(v);
        }
    }
    vendors
}

/// `ROOT/proc/cpuinfo` (`/` without a root).
pub fn cpuinfo_path(root: Option<&Path>) -> PathBuf {
    root.unwrap_or(Path::new("/")).join("proc/cpuinfo")
}

/// Reads `ROOT/proc/cpuinfo` (and an Arm core's MIDR_EL1 from `ROOT/sys`); `None` when
/// cpuinfo cannot be read or names neither a vendor nor an Arm core.
pub fn read(root: Option<&Path>) -> Option<Cpu> {
    let text = std::fs::read_to_string(cpuinfo_path(root)).ok()?;
    let mut cpu = Cpu {
        vendor: String::new(),
        family: 0,
        model: 0,
        stepping: None,
        name: String::new(),
        arch_perfmon: false,
        midr: Midr::from_sysfs(root.unwrap_or(Path::new("/")))
            .or_else(|| Midr::from_cpuinfo(&text)),
    };
    // The first processor's block is enough: a machine has one kind of processor.
    for line in text.lines().take_while(|l| !l.trim().is_empty()) {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        match k.trim() {
            "vendor_id" => cpu.vendor = v.to_string(),
            "cpu family" => cpu.family = v.parse().unwrap_or(0),
            "model" => cpu.model = v.parse().unwrap_or(0),
            "stepping" => cpu.stepping = v.parse().ok(),
            "model name" => cpu.name = v.to_string(),
            "flags" => cpu.arch_perfmon = v.split_whitespace().any(|f| f == "arch_perfmon"),
            _ => {}
        }
    }
    (!cpu.vendor.is_empty() || cpu.midr.is_some()).then_some(cpu)
}

impl Cpu {
    /// Whether the spec knows this vendor's processors at all.
    pub fn known_vendor(&self) -> bool {
        match self.midr {
            Some(m) => m.known_implementer(),
            None => pmu_regs::Vendor::from_name(&self.vendor).is_some(),
        }
    }

    /// The vendor, family, model and stepping the spec's identities are matched against.
    pub fn signature(&self) -> CpuSignature {
        CpuSignature {
            vendor: self.vendor.clone(),
            family: self.family,
            model: self.model,
            stepping: self.stepping,
        }
    }

    /// The specs that describe this processor: its own, and `architectural` where CPUID
    /// leaf 0AH describes an Intel core PMU.
    pub fn specs(&self) -> Vec<&'static str> {
        if let Some(m) = self.midr {
            return m.processor().map(|p| p.id).into_iter().collect();
        }
        let mut specs: Vec<&'static str> = self
            .signature()
            .processor()
            .map(|p| p.id)
            .into_iter()
            .collect();
        // Leaf 0AH's architectural PMU is Intel's (AMD CPUs do not set `arch_perfmon`).
        if self.arch_perfmon && self.signature().known_vendor() == Some(pmu_regs::Vendor::Intel) {
            specs.push("architectural");
        }
        specs
    }

    /// `name (vendor, family 0x6, model 0x6c)`, `?` for a missing name; for an Arm core
    /// `MIDR_EL1 0x410fd4f1: implementer 0x41, part 0xd4f, r0p1`.
    pub fn describe(&self) -> String {
        if let Some(m) = self.midr {
            return m.describe();
        }
        format!(
            "{} ({}, family {:#x}, model {:#x})",
            if self.name.is_empty() {
                "?"
            } else {
                &self.name
            },
            self.vendor,
            self.family,
            self.model
        )
    }

    /// The uncore spec of this processor, for names two processors share.
    pub fn uncore_spec(&self) -> Option<&'static str> {
        self.specs().into_iter().find(|s| *s != "architectural")
    }
}

/// The uncore spec of this machine's processor, which settles a name several processors
/// share; `None` under `sim` (the simulator is whichever processor the names say) or where
/// cpuinfo names none.
pub fn detected(sim: bool, root: Option<&Path>) -> Option<&'static str> {
    (!sim)
        .then(|| read(root))
        .flatten()
        .and_then(|c| c.uncore_spec())
}

/// `pmu detect`'s `counting:` line on an Arm core, in place of
/// the MSR and uncore lines an x86 machine gets:
/// its PMU registers are system registers, which only code on the core itself reaches and
/// which the kernel programs, so there is no raw path (no MSR device, no mapped window) and
/// everything counts through the kernel's perf PMU; whether perf's sysfs has it (the spec's
/// name for it, `armv8_pmuv3_0`, or the core's device-tree name `armv8_*`).
pub fn arm_counting(root: Option<&Path>, p: Option<&'static pmu_regs::ProcessorInfo>) -> String {
    let devices = root
        .unwrap_or(Path::new("/"))
        .join("sys/bus/event_source/devices");
    let names: Vec<&str> = p
        .iter()
        .flat_map(|p| p.units.iter())
        .filter_map(|u| u.pmu)
        .flat_map(|pmu| pmu.perf.iter().map(|f| f.pmu))
        .collect();
    let present: Vec<String> = std::fs::read_dir(&devices)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| names.contains(&n.as_str()) || n.starts_with("armv8_"))
                .collect()
        })
        .unwrap_or_default();
    let reach = "an Arm core's PMU registers are system registers that only the kernel \
                 programs (no raw path: user space reads a counter itself at most where the \
                 perf_user_access sysctl allows)";
    if present.is_empty() {
        format!(
            "counting: {reach}; perf's sysfs has no core PMU ({} has no {})\n\
             instead: `--sim` runs every command on a simulated PMU, and perf's software \
             events count for real (`pmu stat -e task-clock -- CMD`)\n",
            devices.display(),
            names.first().copied().unwrap_or("armv8_pmuv3_0")
        )
    } else {
        format!(
            "counting: {reach}; perf counts them through {}\n",
            present.join(", ")
        )
    }
}

/// One discovery table of the part, joined with the spec.
#[derive(Debug)]
pub struct TableReport {
    /// The PCI device the table was found through.
    pub device: String,
    /// Whether it was read (else `error` says why).
    pub read: bool,
    /// Why it was not read.
    pub error: Option<String>,
    /// Boxes matching, missing, unknown, disagreeing (or known broken: `<discovery-broken>`),
    /// ignored, counted by the part (or by the spec's `<discovery-count>`).
    pub counts: [usize; 6],
}

/// The part's discovery tables under `root` joined with `p`'s spec, for a processor whose
/// spec has discovery types (`None` for one without: its parts have no table).
pub fn discovery_tables(
    root: Option<&Path>,
    p: &'static pmu_regs::ProcessorInfo,
) -> Option<Vec<TableReport>> {
    crate::discovery::has_table(p).then_some(())?;
    let machine = Machine::hardware(root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf));
    let boxes = Boxes::of(p);
    Some(
        joined_tables(&machine, boxes)
            .into_iter()
            .map(|t| match t.joined {
                Ok(joined) => {
                    let mut counts = [0; 6];
                    for b in &joined.boxes {
                        counts[match b.status {
                            BoxStatus::Matching => 0,
                            BoxStatus::Missing => 1,
                            BoxStatus::Unknown => 2,
                            BoxStatus::Disagreeing(_) | BoxStatus::Broken { .. } => 3,
                            BoxStatus::Ignored { .. } => 4,
                            BoxStatus::CountedByPart { .. } | BoxStatus::CorrectedCount { .. } => 5,
                        }] += 1;
                    }
                    TableReport {
                        device: t.device.to_string(),
                        read: true,
                        error: None,
                        counts,
                    }
                }
                Err(e) => TableReport {
                    device: t.device.to_string(),
                    read: false,
                    error: Some(e.to_string()),
                    counts: [0; 6],
                },
            })
            .collect(),
    )
}

/// Why this machine is not one that a register or box of a processor is on: its vendor's
/// processors are described by no spec, or none of the specs that describe it is that
/// processor's. The message says what to do instead (name another, or `--sim`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotThisMachine(pub String);

impl std::fmt::Display for NotThisMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotThisMachine {}

/// Refuses `name`, a `kind` (`register`, `box`) of `processor`, on the machine under `root`
/// when no spec that describes its processor is `processor`. Nothing is checked when
/// cpuinfo cannot be read (a file-tree machine without one).
pub fn check_describes(
    root: Option<&Path>,
    name: &str,
    kind: &str,
    processor: &str,
) -> Result<(), NotThisMachine> {
    let Some(cpu) = read(root) else {
        return Ok(());
    };
    if !cpu.known_vendor() {
        return Err(NotThisMachine(format!(
            "this machine's processor is {}: no spec describes this vendor's \
             performance-monitoring registers, so {name} is not there; `--sim` runs \
             the commands on a simulated PMU",
            cpu.describe()
        )));
    }
    let specs = cpu.specs();
    if specs.contains(&processor) {
        return Ok(());
    }
    let article = if processor.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    Err(NotThisMachine(format!(
        "{name} is {article} {processor} {kind}, but this machine's processor is {}, which {}",
        cpu.describe(),
        match specs.as_slice() {
            [] => "no spec describes yet; `--sim` runs the commands on a simulated PMU".to_string(),
            [one] => format!("the spec {one} describes; name a {kind} of it, or use --sim"),
            many => format!(
                "the specs {} describe; name a {kind} of those, or use --sim",
                many.join(", ")
            ),
        }
    )))
}
