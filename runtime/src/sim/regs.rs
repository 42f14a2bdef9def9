//! What every simulated register has in common, driven by the generated metadata: which bits a
//! write stores, which it only acts on, which it must refuse, and named-field access.

use std::collections::HashMap;

use pmu_regs::{Access, Location, RegisterInfo};

pub(crate) use crate::boxes::Reg;

/// Which model keeps a register's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Home {
    /// The structure-driven model, one state per socket (a `<pmu scope="socket">` unit).
    Socket,
    /// The structure-driven model, one state per logical CPU (a `<pmu scope="cpu">` unit of
    /// the simulated processor itself, such as a core PMU with no architectural layout).
    Cpu,
    /// The structure-driven model, one state per L3 cache (a `<pmu scope="l3">` unit: AMD's
    /// L3 counters of one core complex), reached through any CPU sharing it.
    L3,
    /// The hand-written architectural model of every CPU ([`super::arch`]).
    Arch,
}

/// Every register of some processors by location, each with the model that keeps it.
#[derive(Debug, Default)]
pub(crate) struct Index {
    by_location: HashMap<Location, (Reg, Home)>,
}

impl Index {
    /// Adds the registers of `processor`: `Some(home)` puts every one there; `None` puts
    /// each where its unit's scope says (per CPU for `scope="cpu"`, else per socket).
    pub fn add_processor(
        &mut self,
        processor: &'static pmu_regs::ProcessorInfo,
        home: Option<Home>,
    ) {
        for unit in processor.units {
            let home = home.unwrap_or(match unit.pmu.map(|p| p.scope) {
                Some(pmu_regs::Scope::Cpu) => Home::Cpu,
                Some(pmu_regs::Scope::L3) => Home::L3,
                _ => Home::Socket,
            });
            for info in unit.registers.iter().copied() {
                for addr in info.known_addresses() {
                    self.by_location
                        .insert(addr.location, (Reg { info, addr }, home));
                }
            }
        }
    }

    /// Adds the registers of the boxes of `boxes` the discovery table places (per socket),
    /// where they were placed ([`crate::table_placed`]).
    pub fn add_placed(&mut self, boxes: &crate::boxes::Boxes) {
        for b in boxes.boxes.iter().filter(|b| b.table_placed()) {
            let regs = b
                .counters
                .iter()
                .flat_map(|c| c.control.into_iter().chain([c.counter]));
            for r in regs.chain(b.controls.iter().copied()) {
                self.by_location.insert(r.addr.location, (r, Home::Socket));
            }
        }
    }

    /// The register at `location`, and the model that keeps it.
    pub fn get(&self, location: &Location) -> Option<(Reg, Home)> {
        self.by_location.get(location).copied()
    }
}

fn mask_of(info: &RegisterInfo, keep: impl Fn(Access) -> bool) -> u64 {
    info.fields
        .iter()
        .filter(|f| keep(f.access))
        .fold(0, |m, f| m | f.mask())
}

/// The outcome of a write that the hardware accepts.
pub(crate) struct Written {
    /// The new stored value (what reads return).
    pub stored: u64,
    /// Write-only and write-1-to-clear bits (w1c, rw1c) that were written as 1: commands,
    /// not state.
    pub actions: u64,
}

/// Applies the access kinds of `info` to a write of `raw` over `old`, or `None` where the
/// hardware would fault (#GP: a read-only register, a reserved bit set, or bits above the
/// register width).
pub(crate) fn write(info: &RegisterInfo, old: u64, raw: u64) -> Option<Written> {
    if info.writable_mask == 0
        || raw & info.reserved_mask != 0
        || (info.width < 64 && raw >> info.width != 0)
    {
        return None;
    }
    let stored_bits = mask_of(info, |a| matches!(a, Access::Rw | Access::RwV));
    let kept_bits = mask_of(info, |a| matches!(a, Access::Ro | Access::RoV));
    let action_bits = mask_of(info, |a| matches!(a, Access::Wo | Access::W1c));
    // Status bits that hardware sets and a written 1 clears: a 0 leaves them as they are.
    let rw1c_bits = mask_of(info, |a| a == Access::Rw1c);
    Some(Written {
        stored: (old & kept_bits) | (raw & stored_bits) | (old & rw1c_bits & !raw),
        actions: raw & (action_bits | rw1c_bits),
    })
}

/// `raw` with field `name` set to `value` (unchanged if there is no such field).
pub(crate) fn set(info: &RegisterInfo, raw: u64, name: &str, value: u64) -> u64 {
    match info.field(name) {
        // Masked to the field first, so the insert (over every range) cannot fail.
        Some(f) => f.insert(info.name, raw, value & f.max()).unwrap_or(raw),
        None => raw,
    }
}

/// Register values by location; absent means the reset value.
#[derive(Debug, Default, Clone)]
pub(crate) struct RegFile {
    values: HashMap<Location, u64>,
}

impl RegFile {
    pub fn get(&self, reg: &Reg) -> u64 {
        self.values
            .get(&reg.addr.location)
            .copied()
            .unwrap_or(reg.info.reset)
    }

    pub fn put(&mut self, reg: &Reg, value: u64) {
        self.values.insert(reg.addr.location, value);
    }
}
