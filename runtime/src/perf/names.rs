//! Which kernel PMU counts which of our boxes, and how its driver lays out the format.
//!
//! Both are facts of the Linux drivers recorded in the spec: each unit's `<perf>` elements
//! name the PMU and its driver, and `processors.xml`'s `<perf-driver>` elements give each
//! driver's format files and what of the unit each one sets, all checked by the validator
//! against the unit's structure and carried in the generated metadata
//! ([`pmu_regs::PmuInfo::perf`], [`pmu_regs::PerfDriverInfo`]). [`PerfNames`] is the
//! interface the backend reads them through; [`SpecNames`] reads them from the metadata.
//! Nothing here is per processor.

use pmu_regs::PerfDriverInfo;

use super::error::PerfError;
use super::format::FormatField;

/// Where some counters of one box are counted through perf.
#[derive(Debug, Clone, Copy)]
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
    /// The kernel driver that registers it, and its format files.
    pub driver: &'static PerfDriverInfo,
}

impl PartialEq for PmuName {
    fn eq(&self, other: &Self) -> bool {
        (
            self.processor,
            self.unit,
            self.instance,
            self.counters,
            self.pmu,
            self.source,
        ) == (
            other.processor,
            other.unit,
            other.instance,
            other.counters,
            other.pmu,
            other.source,
        ) && self.driver.id == other.driver.id
    }
}

impl Eq for PmuName {}

impl PmuName {
    /// The driver's format as [`FormatField`]s (for when the PMU is not present to read).
    pub fn driver_formats(&self) -> Vec<FormatField> {
        self.driver
            .formats
            .iter()
            .map(|f| {
                FormatField::parse(f.name, f.config).expect("the validator checked every format")
            })
            .collect()
    }

    /// The driver, for messages: `intel_uncore (Linux kernel, arch/x86/events/intel/uncore_snbep.c)`.
    pub fn driver_name(&self) -> String {
        format!("{} ({})", self.driver.module, self.driver.source_title)
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
                    out.push(PmuName {
                        processor: p.id,
                        unit: u.name,
                        instance: pf.instance,
                        counters: pf.counters,
                        pmu: pf.pmu,
                        source: pf.source,
                        driver: pf.driver,
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_box_of_every_processor_has_a_name_and_a_driver_format() {
        let names = SpecNames;
        for p in pmu_regs::PROCESSORS {
            // Units without boxes (the discovery table's layouts) have no kernel PMU.
            for u in p.units.iter().filter(|u| u.pmu.is_some()) {
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
        let q = names.lookup("xeon-e5-2600-v3", "HA", "HA1", None).unwrap();
        assert_eq!((q.pmu, q.driver.id), ("uncore_ha_1", "snbep-generic"));
        assert!(q.driver_name().contains("uncore_snbep.c"));
        for n in names.all() {
            assert!(!n.driver.formats.is_empty(), "{}: no driver format", n.pmu);
            assert_eq!(n.driver_formats().len(), n.driver.formats.len());
        }
    }
}
