//! Which kernel PMU counts which of our boxes, and how its driver lays out the format.
//!
//! The names are facts of the Linux drivers recorded in the spec (each unit's `<perf>`
//! elements, checked by the validator against the unit's structure; in the generated
//! metadata as [`pmu_regs::PmuInfo::perf`]). [`PerfNames`] is the interface the backend reads
//! them through; [`SpecNames`] reads them from the metadata. What the spec does not carry is
//! how each driver lays out its format (`format/*`, used when the PMU is not present to read)
//! and the driver's name for messages: the tables below, from `uncore_nhmex.c`,
//! `uncore_snbep.c`, `cstate.c` and `core.c`.

use super::error::PerfError;
use super::format::FormatField;

/// Where some counters of one box are counted through perf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmuName {
    /// Processor id (`xeon-e5-2600`).
    pub processor: &'static str,
    /// Unit name (`HA`).
    pub unit: &'static str,
    /// Box instance (`HA`, `C3`).
    pub instance: &'static str,
    /// The box's counters this PMU counts, in the kernel's order (a Xeon 7500 R-box is two
    /// kernel PMUs of eight counters each; the kernel numbers them from 0 again).
    pub counters: &'static [u32],
    /// The kernel's PMU name (`uncore_ha`, `uncore_cbox_3`, `cpu`).
    pub pmu: &'static str,
    /// The public source of the name (a `processors.xml` source id).
    pub source: &'static str,
    /// The kernel driver that registers it.
    pub driver: &'static str,
    /// The driver's format for this box kind: (field, format) as its `format/` files say.
    pub formats: &'static [(&'static str, &'static str)],
}

impl PmuName {
    /// The driver's format as [`FormatField`]s (for when the PMU is not present to read).
    pub fn driver_formats(&self) -> Vec<FormatField> {
        self.formats
            .iter()
            .map(|(n, f)| FormatField::parse(n, f).expect("the driver formats below parse"))
            .collect()
    }

    /// The kernel's number for our counter `counter` of the box.
    pub fn kernel_counter(&self, counter: u32) -> u32 {
        self.counters
            .iter()
            .position(|&c| c == counter)
            .map_or(counter, |i| i as u32)
    }
}

/// The names the perf backend uses.
pub trait PerfNames {
    /// Every box (part) the kernel has a PMU for.
    fn all(&self) -> Vec<PmuName>;

    /// The PMU counting counter `counter` (or the box's first counter) of box `instance` of
    /// `unit` on `processor` (names compared ignoring case).
    fn lookup(
        &self,
        processor: &str,
        unit: &str,
        instance: &str,
        counter: Option<u32>,
    ) -> Result<PmuName, PerfError> {
        let all = self.all();
        let of_box: Vec<&PmuName> = all
            .iter()
            .filter(|n| {
                n.processor.eq_ignore_ascii_case(processor)
                    && n.unit.eq_ignore_ascii_case(unit)
                    && n.instance.eq_ignore_ascii_case(instance)
            })
            .collect();
        if of_box.is_empty() {
            return Err(PerfError::NoPmuName {
                what: format!("{processor} {unit} box {instance}"),
                reason: "the spec names no Linux perf PMU for it".into(),
            });
        }
        let Some(counter) = counter else {
            return Ok(*of_box[0]);
        };
        of_box
            .iter()
            .find(|n| n.counters.contains(&counter))
            .map(|n| **n)
            .ok_or_else(|| PerfError::NoPmuName {
                what: format!("{processor} {unit} box {instance} counter {counter}"),
                reason: "no kernel PMU covers that counter".into(),
            })
    }
}

/// The names the spec records (`<perf>` in each unit's `<pmu>`), from the generated metadata.
#[derive(Debug, Clone, Copy, Default)]
pub struct SpecNames;

impl PerfNames for SpecNames {
    fn all(&self) -> Vec<PmuName> {
        let mut out = Vec::new();
        for p in pmu_regs::PROCESSORS {
            for u in p.units {
                let Some(pmu) = u.pmu else { continue };
                for pf in pmu.perf {
                    let (driver, formats) = driver(p.id, pf.pmu);
                    out.push(PmuName {
                        processor: p.id,
                        unit: u.name,
                        instance: pf.instance,
                        counters: pf.counters,
                        pmu: pf.pmu,
                        source: pf.source,
                        driver,
                        formats,
                    });
                }
            }
        }
        out
    }
}

/// The driver that registers `pmu` on `processor`, and its format.
pub fn driver(
    processor: &str,
    pmu: &str,
) -> (&'static str, &'static [(&'static str, &'static str)]) {
    // `uncore_cbox_3` is of kind `uncore_cbox`.
    let kind = match pmu.rsplit_once('_') {
        Some((k, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => k,
        _ => pmu,
    };
    match (processor, kind) {
        ("xeon-7500", "uncore_ubox") => (NHMEX, NHMEX_UBOX),
        ("xeon-7500", "uncore_wbox" | "uncore_cbox") => (NHMEX, NHMEX_CBOX),
        ("xeon-7500", "uncore_bbox") => (NHMEX, NHMEX_BBOX),
        ("xeon-7500", "uncore_sbox") => (NHMEX, NHMEX_SBOX),
        ("xeon-7500", "uncore_mbox") => (NHMEX, NHMEX_MBOX),
        ("xeon-7500", "uncore_rbox") => (NHMEX, NHMEX_RBOX),
        ("xeon-e5-2600", "uncore_ubox") => (SNBEP, SNBEP_UBOX),
        ("xeon-e5-2600", "uncore_cbox") => (SNBEP, SNBEP_CBOX),
        ("xeon-e5-2600", "uncore_ha" | "uncore_imc" | "uncore_r2pcie" | "uncore_r3qpi") => {
            (SNBEP, SNBEP_GENERIC)
        }
        ("xeon-e5-2600", "uncore_pcu") => (SNBEP, SNBEP_PCU),
        ("xeon-e5-2600", "uncore_qpi") => (SNBEP, SNBEP_QPI),
        (_, "cstate_core") => (CSTATE, CSTATE_CORE),
        (_, "cpu") => (CORE, CORE_CPU),
        _ => ("the Linux driver that registers it", &[]),
    }
}

const NHMEX: &str = "intel_uncore (Linux arch/x86/events/intel/uncore_nhmex.c)";
const SNBEP: &str = "intel_uncore (Linux arch/x86/events/intel/uncore_snbep.c)";
const CSTATE: &str = "intel_cstate (Linux arch/x86/events/intel/cstate.c)";
const CORE: &str = "the core PMU driver (Linux arch/x86/events/intel/core.c; a virtual machine needs a virtual PMU from its hypervisor)";

// Formats as the drivers define them (DEFINE_UNCORE_FORMAT_ATTR / PMU_FORMAT_ATTR).
const NHMEX_UBOX: &[(&str, &str)] = &[("event", "config:0-7"), ("edge", "config:18")];
const NHMEX_CBOX: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
const NHMEX_BBOX: &[(&str, &str)] = &[
    ("event", "config:1-5"),
    ("counter", "config:6-7"),
    ("match", "config1:0-63"),
    ("mask", "config2:0-63"),
];
const NHMEX_SBOX: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("match", "config1:0-63"),
    ("mask", "config2:0-63"),
];
const NHMEX_MBOX: &[(&str, &str)] = &[
    ("count_mode", "config:2-3"),
    ("storage_mode", "config:4-5"),
    ("wrap_mode", "config:6"),
    ("flag_mode", "config:7"),
    ("inc_sel", "config:9-13"),
    ("set_flag_sel", "config:19-21"),
    ("filter_cfg_en", "config2:63"),
    ("filter_match", "config2:0-33"),
    ("filter_mask", "config2:34-61"),
    ("dsp", "config1:0-31"),
    ("thr", "config1:0-31"),
    ("fvc", "config1:0-31"),
    ("pgt", "config1:0-31"),
    ("map", "config1:0-31"),
    ("iss", "config1:0-31"),
    ("pld", "config1:32-63"),
];
const NHMEX_RBOX: &[(&str, &str)] = &[
    ("event", "config:1-5"),
    ("xbr_mm_cfg", "config:32-63"),
    ("xbr_match", "config1:0-63"),
    ("xbr_mask", "config2:0-63"),
    ("qlx_cfg", "config1:0-15"),
    ("iperf_cfg", "config1:0-31"),
];
const SNBEP_GENERIC: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
const SNBEP_UBOX: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-28"),
];
const SNBEP_CBOX: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("tid_en", "config:19"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("filter_tid", "config1:0-4"),
    ("filter_nid", "config1:10-17"),
    ("filter_state", "config1:18-22"),
    ("filter_opc", "config1:23-31"),
];
const SNBEP_PCU: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("occ_sel", "config:14-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-28"),
    ("occ_invert", "config:30"),
    // Sic: the driver gives occ_edge 38 bits from 14, not bit 31 (occ_edge_det).
    ("occ_edge", "config:14-51"),
    ("filter_band0", "config1:0-7"),
    ("filter_band1", "config1:8-15"),
    ("filter_band2", "config1:16-23"),
    ("filter_band3", "config1:24-31"),
];
const SNBEP_QPI: &[(&str, &str)] = &[
    ("event", "config:0-7,21"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("match_rds", "config1:48-51"),
    ("match_rnid30", "config1:32-35"),
    ("match_rnid4", "config1:31"),
    ("match_dnid", "config1:13-17"),
    ("match_mc", "config1:9-12"),
    ("match_opc", "config1:5-8"),
    ("match_vnw", "config1:3-4"),
    ("match0", "config1:0-31"),
    ("match1", "config1:32-63"),
    ("mask_rds", "config2:48-51"),
    ("mask_rnid30", "config2:32-35"),
    ("mask_rnid4", "config2:31"),
    ("mask_dnid", "config2:13-17"),
    ("mask_mc", "config2:9-12"),
    ("mask_opc", "config2:5-8"),
    ("mask_vnw", "config2:3-4"),
    ("mask0", "config2:0-31"),
    ("mask1", "config2:32-63"),
];
const CORE_CPU: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("pc", "config:19"),
    ("any", "config:21"),
    ("inv", "config:23"),
    ("cmask", "config:24-31"),
];

const CSTATE_CORE: &[(&str, &str)] = &[("event", "config:0-63")];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_box_of_every_processor_has_a_name_and_a_driver_format() {
        let names = SpecNames;
        // Only processors whose spec names their kernel PMUs (the E5-2600 v2/v3/v4 do not yet).
        let named = pmu_regs::PROCESSORS.iter().filter(|p| {
            p.units
                .iter()
                .any(|u| u.pmu.is_some_and(|m| !m.perf.is_empty()))
        });
        for p in named {
            for u in p.units {
                for i in u.instances {
                    names.lookup(p.id, u.name, i, None).unwrap();
                }
            }
        }
        let r = names.lookup("xeon-7500", "r", "r", Some(9)).unwrap();
        assert_eq!((r.pmu, r.kernel_counter(9)), ("uncore_rbox_1", 1));
        let r = names.lookup("xeon-7500", "R", "R", Some(3)).unwrap();
        assert_eq!((r.pmu, r.kernel_counter(3)), ("uncore_rbox_0", 3));
        assert!(names.lookup("xeon-7500", "R", "R", Some(16)).is_err());
        let q = names.lookup("xeon-e5-2600", "QPI", "P1", None).unwrap();
        assert_eq!((q.pmu, q.source), ("uncore_qpi_1", "linux-snbep"));
        assert_eq!(
            names
                .lookup("xeon-e5-2600", "PCU", "PCU", Some(5))
                .unwrap()
                .pmu,
            "cstate_core"
        );
        for n in names.all() {
            assert!(!n.formats.is_empty(), "{}: no driver format", n.pmu);
            assert_eq!(n.driver_formats().len(), n.formats.len());
        }
    }
}
