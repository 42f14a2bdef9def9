//! Which SoC an Arm machine is: the SMCCC SOC_ID Linux shows in `/sys/devices/soc0/soc_id`
//! (`jep106:036b:0241`: the JEP106 bank and identity code of the maker, then the SoC's id;
//! `family` reads `jep106:036b`), matched with the spec's `<soc>`s (`pmu_regs::SOCS`), and
//! checked against the cores' MIDR_EL1. A SoC is the processors whose PMUs it has: its
//! cores' and its uncore's.

use std::path::Path;

use pmu_regs::support::SocInfo;

use crate::apmt::{self, ApmtError, ApmtTable};
use crate::bounded;
use crate::midr::Midr;

/// Where Linux shows the SMCCC SOC_ID, under the root.
pub const SOC_ID_PATH: &str = "sys/devices/soc0/soc_id";

/// Where Linux shows the SOC_ID's maker (`jep106:036b`), under the root.
pub const SOC_FAMILY_PATH: &str = "sys/devices/soc0/family";

/// What the machine under a root says of its SoC.
#[derive(Debug)]
pub struct SocReport {
    /// The SOC_ID, as Linux shows it, when the firmware implements SMCCC's SOC_ID call.
    pub soc_id: Option<String>,
    /// The SOC_ID's maker (`family`).
    pub family: Option<String>,
    /// The spec's SoC with that SOC_ID.
    pub soc: Option<&'static SocInfo>,
    /// The processor the cores' MIDR_EL1 names.
    pub cores: Option<&'static str>,
    /// The APMT table (`/sys/firmware/acpi/tables/APMT`), read and checked, where there is one.
    pub apmt: Option<Result<ApmtTable, ApmtError>>,
}

impl SocReport {
    /// Reads `ROOT/sys/devices/soc0/{soc_id,family}` (`/` without a root) and matches them.
    pub fn of(root: Option<&Path>, midr: Option<Midr>) -> Self {
        let root = root.unwrap_or(Path::new("/"));
        let read = |rel: &str| {
            bounded::read_text(&root.join(rel), 4096)
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| t.starts_with("jep106:"))
        };
        let soc_id = read(SOC_ID_PATH);
        let soc = soc_id.as_deref().and_then(pmu_regs::soc_for_soc_id);
        SocReport {
            soc_id,
            family: read(SOC_FAMILY_PATH),
            soc,
            cores: midr.and_then(Midr::processor).map(|p| p.id),
            apmt: {
                let path = root.join(apmt::SYSFS_PATH);
                path.exists().then(|| apmt::read_file(&path))
            },
        }
    }

    /// The spec's SoCs whose cores are the machine's (by MIDR).
    pub fn candidates(&self) -> Vec<&'static SocInfo> {
        pmu_regs::SOCS
            .iter()
            .filter(|s| Some(s.cores) == self.cores)
            .collect()
    }

    /// `pmu detect`'s `soc:` line, and an `apmt:` line where the machine has the table.
    pub fn text(&self) -> String {
        let apmt = match &self.apmt {
            None => String::new(),
            Some(Ok(t)) => format!(
                "apmt: {} CoreSight PMU{} ({}); the kernel's arm_cspmu driver owns them: \
                 count through its perf PMUs\n",
                t.nodes.len(),
                if t.nodes.len() == 1 { "" } else { "s" },
                node_list(t)
            ),
            Some(Err(e)) => format!("apmt: refused: {e}\n"),
        };
        self.soc_line() + &apmt
    }

    /// The `soc:` line.
    fn soc_line(&self) -> String {
        match (self.soc, &self.soc_id) {
            (Some(s), Some(id)) => {
                let mut line = format!(
                    "soc: {} ({}): cores {}, uncore {}; SMCCC SOC_ID {id}",
                    s.id,
                    s.name,
                    s.cores,
                    if s.uncore.is_empty() {
                        "none in the spec yet".to_string()
                    } else {
                        s.uncore.join(", ")
                    },
                );
                if let Some(c) = self.cores.filter(|c| *c != s.cores) {
                    line.push_str(&format!(
                        "; but the cores are {c}, not the SoC's {}: a virtual machine or a \
                         firmware that reports another SOC_ID",
                        s.cores
                    ));
                }
                line + "\n"
            }
            (None, Some(id)) => format!(
                "soc: SMCCC SOC_ID {id}{} is no SoC the spec composes ({})\n",
                self.family
                    .as_deref()
                    .map(|f| format!(" (family {f})"))
                    .unwrap_or_default(),
                known_ids()
            ),
            (_, None) => {
                let ids: Vec<&str> = self.candidates().iter().map(|s| s.id).collect();
                let of = if ids.is_empty() {
                    String::new()
                } else {
                    format!("; SoCs of the spec with these cores: {}", ids.join(", "))
                };
                format!(
                    "soc: not identified (no SMCCC SOC_ID in /{SOC_ID_PATH}: the firmware does \
                     not implement SMCCC_ARCH_SOC_ID, or the kernel predates 5.11){of}\n"
                )
            }
        }
    }
}

/// `node 0 acpi_device, affinity 0; ...`.
fn node_list(t: &ApmtTable) -> String {
    let nodes: Vec<String> = t
        .nodes
        .iter()
        .map(|n| {
            let kind = n
                .type_name()
                .map_or_else(|| format!("type {}", n.node_type), str::to_string);
            let affinity = match n.affinity {
                apmt::Affinity::Processor(u) => format!("processor {u}"),
                apmt::Affinity::Container(u) => format!("container {u}"),
            };
            format!("node {} {kind} at {:#x}, {affinity}", n.id, n.base0)
        })
        .collect();
    nodes.join("; ")
}

/// The SOC_IDs the spec knows: `nvidia-grace jep106:036b:0241, aws-graviton4 (none known)`.
fn known_ids() -> String {
    let ids: Vec<String> = pmu_regs::SOCS
        .iter()
        .map(|s| match s.soc_id {
            Some((v, _)) => format!("{} {v}", s.id),
            None => format!("{} (no public SOC_ID)", s.id),
        })
        .collect();
    format!("it knows {}", ids.join(", "))
}
