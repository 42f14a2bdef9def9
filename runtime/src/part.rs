//! What this part has: how many boxes of a unit, read from the part itself as the unit's
//! spec says (`<box-count>`: the set bits of a capability register, or the socket's cores),
//! so that a box the part lacks is refused by name before anything is programmed.

use pmu_regs::{BoxCountRule, PmuInfo, UnitInfo};

use crate::error::Result;
use crate::machine::{Machine, Resolved, Where};

/// How many boxes of a unit one socket of this part has, and where that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxCount {
    /// Boxes 0 to `count - 1` of the unit's instances are present.
    pub count: u32,
    /// What was read (`CAPID6.cha_en: 18 bits set`, `socket 0's 12 cores`).
    pub read: String,
    /// The rule and its source, from the spec.
    pub rule: &'static str,
    /// The public source id of the rule.
    pub source: &'static str,
}

impl BoxCount {
    /// The instances present, as a range for messages (`CHA0 to CHA17`, `none`).
    pub fn present(&self, unit: &UnitInfo) -> String {
        let n = (self.count as usize).min(unit.instances.len());
        match n {
            0 => "none".to_string(),
            1 => unit.instances[0].to_string(),
            _ => format!("{} to {}", unit.instances[0], unit.instances[n - 1]),
        }
    }
}

/// How many boxes of `pmu`'s unit `socket` has, read from the machine; `None` when the spec
/// gives no rule (every part has every box listed).
pub fn box_count(machine: &Machine, pmu: &PmuInfo, socket: u32) -> Result<Option<BoxCount>> {
    let Some(rule) = pmu.box_count else {
        return Ok(None);
    };
    let (count, read) = match rule.rule {
        BoxCountRule::SetBits(bits) => {
            let at = Where {
                socket: Some(socket),
                ..Where::default()
            };
            let mut raws = Vec::with_capacity(bits.len());
            let mut values = Vec::with_capacity(bits.len());
            for b in bits {
                let Some(address) = b.address() else {
                    return Ok(None);
                };
                let place = machine.place(b.register, address, &at)?;
                let raw = machine.read(&Resolved {
                    info: b.register,
                    address,
                    place,
                })?;
                values.push(format!("{} = {:#x}", b.qualified, b.field.extract(raw)));
                raws.push(raw);
            }
            let n = rule.rule.count_from(&raws).unwrap_or(0);
            (
                n,
                format!("{} on socket {socket}: {n} bits set", values.join(", ")),
            )
        }
        BoxCountRule::CoresPerSocket => {
            let n = machine.topology()?.cores(socket).unwrap_or(0);
            (n, format!("socket {socket} has {n} cores"))
        }
    };
    Ok(Some(BoxCount {
        count,
        read,
        rule: rule.description,
        source: rule.source,
    }))
}
