//! What every simulated register has in common, driven by the generated metadata: which bits a
//! write stores, which it only acts on, which it must refuse, and named-field access.

use std::collections::HashMap;

use pmu_regs::{Access, Location, RegisterInfo};

pub(crate) use crate::catalog::{Index, Reg};

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
    /// Write-only and write-1-to-clear bits that were written as 1: commands, not state.
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
    Some(Written {
        stored: (old & kept_bits) | (raw & stored_bits),
        actions: raw & action_bits,
    })
}

/// The value of field `name` in `raw` (0 if the layout has no such field).
pub(crate) fn get(info: &RegisterInfo, raw: u64, name: &str) -> u64 {
    info.field(name).map_or(0, |f| f.extract(raw))
}

/// `raw` with field `name` set to `value` (unchanged if there is no such field).
pub(crate) fn set(info: &RegisterInfo, raw: u64, name: &str, value: u64) -> u64 {
    match info.field(name) {
        Some(f) => (raw & !f.mask()) | ((value & f.max()) << f.lsb),
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
