//! What part each register plays, derived once from the generated metadata and shared by the
//! simulator and the sampling code, so both read the same facts.
//!
//! The Xeon 7500 guide names every box's registers the same way (`*_GLOBAL_CTL`,
//! `*_GLOBAL_STATUS`, `*_GLOBAL_OVF_CTL`; controls with `en` and `pmi_en`; counters with
//! `event_count`), and that naming is what the roles are read from. The W-box fixed counter
//! is recognised by `FIXED` in its name.

use std::collections::HashMap;
use std::sync::OnceLock;

use pmu_regs::{AddressInfo, FieldInfo, Location, ProcessorInfo, RegisterInfo, Space, PROCESSORS};

use crate::hierarchy::{self, Route};

/// One instance (and index) of a register: its layout and its address.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reg {
    pub info: &'static RegisterInfo,
    pub addr: &'static AddressInfo,
}

impl Reg {
    /// The field called `name`, if the layout has one.
    pub fn field(&self, name: &str) -> Option<&'static FieldInfo> {
        self.info.field(name)
    }

    /// The MSR number (0 for a PCI register).
    pub fn msr(&self) -> u32 {
        match self.addr.location {
            Location::Msr(a) => a,
            Location::Pci { .. } => 0,
        }
    }
}

/// Every register of some processors by location and by concrete name.
#[derive(Debug, Default)]
pub(crate) struct Index {
    by_location: HashMap<Location, Reg>,
    by_name: HashMap<&'static str, Reg>,
}

impl Index {
    /// Adds the registers of `processor`, or only those in `space`.
    pub fn add_processor(&mut self, processor: &'static ProcessorInfo, space: Option<Space>) {
        for unit in processor.units {
            for info in unit
                .registers
                .iter()
                .copied()
                .filter(|r| space.is_none_or(|s| r.space == s))
            {
                for addr in info.known_addresses() {
                    self.by_location.insert(addr.location, Reg { info, addr });
                    self.by_name.insert(addr.name, Reg { info, addr });
                }
            }
        }
    }

    pub fn get(&self, location: &Location) -> Option<Reg> {
        self.by_location.get(location).copied()
    }

    /// The register with concrete name `name`.
    pub fn named(&self, name: &str) -> Option<Reg> {
        self.by_name.get(name).copied()
    }
}

/// The processor with id `id` in the generated metadata.
pub(crate) fn processor(id: &str) -> &'static ProcessorInfo {
    PROCESSORS
        .iter()
        .copied()
        .find(|p| p.id == id)
        .unwrap_or_else(|| panic!("processor {id} is in the generated metadata"))
}

/// One Xeon 7500 counter with its control register.
#[derive(Debug, Clone)]
pub(crate) struct NhmCounter {
    /// Index within the box: the bit in the box's `ctr_en`/`ov` fields.
    pub index: u32,
    pub ctl: Reg,
    pub ctr: Reg,
    /// The W-box fixed counter: enabled by `fixed_en`, reported in `ov_fixed`, counts
    /// uncore clocks (event select 0xFF).
    pub fixed: bool,
    pub route: Route,
}

/// One Xeon 7500 box instance.
#[derive(Debug, Clone)]
pub(crate) struct NhmBox {
    pub unit: &'static str,
    pub instance: &'static str,
    /// GLOBAL_CTL, GLOBAL_STATUS, GLOBAL_OVF_CTL; the R-box has two of each (counters 0-7,
    /// then 8-15).
    pub ctl: Vec<Reg>,
    pub status: Vec<Reg>,
    pub ovf: Vec<Reg>,
    pub counters: Vec<NhmCounter>,
}

impl NhmBox {
    /// The register among `regs` (a box's ctl, status or ovf list) that holds counter `c`'s
    /// box-level bit, and the bit.
    pub fn half(&self, regs: &[Reg], c: &NhmCounter) -> Option<(Reg, u32)> {
        let half = (c.index / 8) as usize;
        regs.get(half)
            .or_else(|| regs.first())
            .map(|r| (*r, c.index % 8))
    }
}

/// The Xeon 7500 uncore: its boxes, and the U-box registers that govern them all.
#[derive(Debug)]
pub(crate) struct Nhm {
    /// The processor id.
    pub processor: &'static str,
    pub boxes: Vec<NhmBox>,
    pub u_ctl: Reg,
    pub u_status: Reg,
    pub u_ovf: Reg,
}

impl Nhm {
    /// The box instance called `instance`.
    pub fn boxed(&self, instance: &str) -> Option<&NhmBox> {
        self.boxes.iter().find(|b| b.instance == instance)
    }
}

fn is_named(reg: &Reg, part: &str) -> bool {
    reg.info.name.contains(part)
}

/// The Xeon 7500 catalog, built on first use.
pub(crate) fn nhm() -> &'static Nhm {
    static NHM: OnceLock<Nhm> = OnceLock::new();
    NHM.get_or_init(|| build_nhm(processor("xeon-7500")))
}

fn build_nhm(processor: &'static ProcessorInfo) -> Nhm {
    let mut index = Index::default();
    index.add_processor(processor, None);
    let find = |name: &str| {
        index
            .named(name)
            .unwrap_or_else(|| panic!("{name} is in the Xeon 7500 spec"))
    };
    let mut boxes = Vec::new();
    for unit in processor.units {
        for &instance in unit.instances {
            let regs: Vec<Reg> = unit
                .registers
                .iter()
                .filter(|r| r.space == Space::Msr)
                .flat_map(|info| {
                    info.known_addresses()
                        .iter()
                        .filter(move |a| a.instance == instance)
                        .map(move |addr| Reg { info, addr })
                })
                .collect();
            let pick = |part: &str| -> Vec<Reg> {
                let mut v: Vec<Reg> = regs.iter().filter(|r| is_named(r, part)).copied().collect();
                v.sort_by_key(|r| r.addr.location);
                v
            };
            let counter_regs = regs.iter().filter(|r| r.field("event_count").is_some());
            let control_regs = regs.iter().filter(|r| {
                !is_named(r, "GLOBAL") && r.field("en").is_some() && r.field("pmi_en").is_some()
            });
            let counters = control_regs
                .zip(counter_regs)
                .map(|(ctl, ctr)| {
                    let fixed = is_named(ctr, "FIXED");
                    let index = if fixed { 0 } else { ctr.addr.index };
                    NhmCounter {
                        index,
                        ctl: *ctl,
                        ctr: *ctr,
                        fixed,
                        route: hierarchy::route(instance, index).unwrap_or_else(|| {
                            panic!("box {instance} has a place in the hierarchy")
                        }),
                    }
                })
                .collect();
            boxes.push(NhmBox {
                unit: unit.name,
                instance,
                ctl: pick("GLOBAL_CTL"),
                status: pick("GLOBAL_STATUS"),
                ovf: pick("GLOBAL_OVF_CTL"),
                counters,
            });
        }
    }
    Nhm {
        processor: processor.id,
        boxes,
        u_ctl: find("U_MSR_PMON_GLOBAL_CTL"),
        u_status: find("U_MSR_PMON_GLOBAL_STATUS"),
        u_ovf: find("U_MSR_PMON_GLOBAL_OVF_CTL"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_xeon_7500_box_has_its_registers_and_counters() {
        let nhm = nhm();
        let expect = [
            ("U", 1),
            ("W", 5),
            ("S0", 4),
            ("B1", 4),
            ("C7", 6),
            ("M0", 6),
            ("R", 16),
        ];
        for (instance, counters) in expect {
            let b = nhm.boxed(instance).unwrap();
            assert_eq!(b.counters.len(), counters, "{instance}");
            if instance != "U" {
                assert!(
                    !b.ctl.is_empty() && !b.status.is_empty() && !b.ovf.is_empty(),
                    "{instance}"
                );
            }
        }
        let r = nhm.boxed("R").unwrap();
        assert_eq!(r.ctl.len(), 2);
        let w = nhm.boxed("W").unwrap();
        assert!(w.counters[4].fixed && w.counters[4].ctr.addr.name == "W_MSR_PMON_FIXED_CTR");
        // Controls and counters pair by index.
        for b in &nhm.boxes {
            for c in &b.counters {
                assert_eq!(c.ctl.addr.index, c.ctr.addr.index, "{}", c.ctr.addr.name);
            }
        }
    }
}
