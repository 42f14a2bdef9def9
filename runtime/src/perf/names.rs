//! Which kernel PMU counts which of our boxes, and how its driver lays out the format.
//!
//! These are facts from the Linux drivers (`arch/x86/events/intel/uncore_nhmex.c`,
//! `uncore_snbep.c`, `core.c`, and `uncore.c`, which names a PMU `uncore_<type>` when its type
//! has one box and `uncore_<type>_<index>` otherwise). [`PerfNames`] is the interface the
//! backend reads them through; [`KernelNames`] is the table below, kept until the spec carries
//! the names itself.

use super::error::PerfError;
use super::format::FormatField;

/// Where one box (or part of one) is counted through perf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmuName {
    /// Processor id (`xeon-e5-2600`).
    pub processor: &'static str,
    /// Unit name (`HA`).
    pub unit: &'static str,
    /// Box instance (`HA`, `C3`).
    pub instance: &'static str,
    /// The box's counters this PMU counts, `first..=last` (a Xeon 7500 R-box is two kernel
    /// PMUs of eight counters each); the kernel numbers them from 0 again.
    pub counters: Option<(u32, u32)>,
    /// The kernel's PMU name (`uncore_ha`, `uncore_cbox_3`, `cpu`).
    pub pmu: &'static str,
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
        counter - self.counters.map_or(0, |(first, _)| first)
    }
}

/// The names the perf backend uses. Implemented by [`KernelNames`]; the spec's generated
/// metadata will implement it once it carries the names.
pub trait PerfNames {
    /// Every box the kernel has a PMU for.
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
                reason: "the Linux driver registers no PMU for it".into(),
            });
        }
        let counter = counter.unwrap_or(0);
        of_box
            .iter()
            .find(|n| n.counters.is_none_or(|(a, b)| (a..=b).contains(&counter)))
            .map(|n| **n)
            .ok_or_else(|| PerfError::NoPmuName {
                what: format!("{processor} {unit} box {instance} counter {counter}"),
                reason: "no kernel PMU covers that counter".into(),
            })
    }
}

/// The table of kernel PMU names below.
#[derive(Debug, Clone, Copy, Default)]
pub struct KernelNames;

impl PerfNames for KernelNames {
    fn all(&self) -> Vec<PmuName> {
        let mut out = Vec::new();
        for b in BOXES {
            for (i, instance) in b.instances.iter().enumerate() {
                let pmu = match b.pmus {
                    Pmus::One(name) => name,
                    Pmus::Indexed(names) => names[i],
                };
                out.push(PmuName {
                    processor: b.processor,
                    unit: b.unit,
                    instance,
                    counters: None,
                    pmu,
                    driver: b.driver,
                    formats: b.formats,
                });
            }
        }
        // The Xeon 7500 R-box: Linux registers its two halves (ports 0-3 and 4-7, eight
        // counters each) as two PMUs.
        for (half, pmu) in [(0, "uncore_rbox_0"), (1, "uncore_rbox_1")] {
            out.push(PmuName {
                processor: "xeon-7500",
                unit: "R",
                instance: "R",
                counters: Some((half * 8, half * 8 + 7)),
                pmu,
                driver: NHMEX,
                formats: NHMEX_RBOX,
            });
        }
        out
    }
}

const NHMEX: &str = "intel_uncore (Linux arch/x86/events/intel/uncore_nhmex.c)";
const SNBEP: &str = "intel_uncore (Linux arch/x86/events/intel/uncore_snbep.c)";
const CORE: &str = "the core PMU driver (Linux arch/x86/events/intel/core.c; a virtual machine needs a virtual PMU from its hypervisor)";

enum Pmus {
    One(&'static str),
    Indexed(&'static [&'static str]),
}

struct Boxes {
    processor: &'static str,
    unit: &'static str,
    instances: &'static [&'static str],
    pmus: Pmus,
    driver: &'static str,
    formats: &'static [(&'static str, &'static str)],
}

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

const C8: &[&str] = &["C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7"];
const CBOX8: &[&str] = &[
    "uncore_cbox_0",
    "uncore_cbox_1",
    "uncore_cbox_2",
    "uncore_cbox_3",
    "uncore_cbox_4",
    "uncore_cbox_5",
    "uncore_cbox_6",
    "uncore_cbox_7",
];

const BOXES: &[Boxes] = &[
    Boxes {
        processor: "xeon-7500",
        unit: "U",
        instances: &["U"],
        pmus: Pmus::One("uncore_ubox"),
        driver: NHMEX,
        formats: NHMEX_UBOX,
    },
    Boxes {
        processor: "xeon-7500",
        unit: "W",
        instances: &["W"],
        pmus: Pmus::One("uncore_wbox"),
        driver: NHMEX,
        formats: NHMEX_CBOX,
    },
    Boxes {
        processor: "xeon-7500",
        unit: "C",
        instances: C8,
        // uncore_nhmex.c's C-box MSR offsets (0x0, 0x80, 0x40, 0xc0, ...) put its box n at
        // the guide's Cn.
        pmus: Pmus::Indexed(CBOX8),
        driver: NHMEX,
        formats: NHMEX_CBOX,
    },
    Boxes {
        processor: "xeon-7500",
        unit: "B",
        instances: &["B0", "B1"],
        pmus: Pmus::Indexed(&["uncore_bbox_0", "uncore_bbox_1"]),
        driver: NHMEX,
        formats: NHMEX_BBOX,
    },
    Boxes {
        processor: "xeon-7500",
        unit: "S",
        instances: &["S0", "S1"],
        pmus: Pmus::Indexed(&["uncore_sbox_0", "uncore_sbox_1"]),
        driver: NHMEX,
        formats: NHMEX_SBOX,
    },
    Boxes {
        processor: "xeon-7500",
        unit: "M",
        instances: &["M0", "M1"],
        pmus: Pmus::Indexed(&["uncore_mbox_0", "uncore_mbox_1"]),
        driver: NHMEX,
        formats: NHMEX_MBOX,
    },
    Boxes {
        processor: "xeon-e5-2600",
        unit: "UBOX",
        instances: &["UBOX"],
        pmus: Pmus::One("uncore_ubox"),
        driver: SNBEP,
        formats: SNBEP_UBOX,
    },
    Boxes {
        processor: "xeon-e5-2600",
        unit: "CBO",
        instances: C8,
        pmus: Pmus::Indexed(CBOX8),
        driver: SNBEP,
        formats: SNBEP_CBOX,
    },
    Boxes {
        processor: "xeon-e5-2600",
        unit: "HA",
        instances: &["HA"],
        pmus: Pmus::One("uncore_ha"),
        driver: SNBEP,
        formats: SNBEP_GENERIC,
    },
    Boxes {
        processor: "xeon-e5-2600",
        unit: "IMC",
        instances: &["CH0", "CH1", "CH2", "CH3"],
        pmus: Pmus::Indexed(&[
            "uncore_imc_0",
            "uncore_imc_1",
            "uncore_imc_2",
            "uncore_imc_3",
        ]),
        driver: SNBEP,
        formats: SNBEP_GENERIC,
    },
    Boxes {
        processor: "xeon-e5-2600",
        unit: "PCU",
        instances: &["PCU"],
        pmus: Pmus::One("uncore_pcu"),
        driver: SNBEP,
        formats: SNBEP_PCU,
    },
    Boxes {
        processor: "xeon-e5-2600",
        unit: "QPI",
        instances: &["P0", "P1"],
        pmus: Pmus::Indexed(&["uncore_qpi_0", "uncore_qpi_1"]),
        driver: SNBEP,
        formats: SNBEP_QPI,
    },
    Boxes {
        processor: "xeon-e5-2600",
        unit: "R2PCIE",
        instances: &["R2PCIE"],
        pmus: Pmus::One("uncore_r2pcie"),
        driver: SNBEP,
        formats: SNBEP_GENERIC,
    },
    Boxes {
        processor: "xeon-e5-2600",
        unit: "R3QPI",
        instances: &["L0", "L1"],
        pmus: Pmus::Indexed(&["uncore_r3qpi_0", "uncore_r3qpi_1"]),
        driver: SNBEP,
        formats: SNBEP_GENERIC,
    },
    Boxes {
        processor: "architectural",
        unit: "CORE",
        instances: &["CPU"],
        pmus: Pmus::One("cpu"),
        driver: CORE,
        formats: CORE_CPU,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_box_of_every_processor_has_a_name_and_the_r_box_splits() {
        let names = KernelNames;
        for p in pmu_regs::PROCESSORS {
            for u in p.units {
                for i in u.instances {
                    names.lookup(p.id, u.name, i, None).unwrap();
                }
            }
        }
        assert_eq!(
            names.lookup("xeon-7500", "R", "R", Some(9)).unwrap().pmu,
            "uncore_rbox_1"
        );
        let r = names.lookup("xeon-7500", "r", "r", Some(3)).unwrap();
        assert_eq!((r.pmu, r.kernel_counter(3)), ("uncore_rbox_0", 3));
        assert!(names.lookup("xeon-7500", "R", "R", Some(16)).is_err());
        assert_eq!(
            names.lookup("xeon-e5-2600", "QPI", "P1", None).unwrap().pmu,
            "uncore_qpi_1"
        );
        for n in names.all() {
            assert_eq!(n.driver_formats().len(), n.formats.len());
        }
    }
}
