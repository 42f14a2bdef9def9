//! What this part has: how many boxes of a unit, read from the part itself as the unit's
//! spec says (`<box-count>`: the set bits of a capability register, a register holding the
//! count, or the socket's cores),
//! so that a box the part lacks is refused by name before anything is programmed; and the
//! part's discovery tables joined with the spec, knowing what the part says of itself
//! ([`joined_tables`]).

use pmu_regs::{BitRef, BoxCountRule, PmuInfo, UnitInfo};

use crate::boxes::{Boxes, Reg};
use crate::discovery::{join_on, DiscoveryError, Joined, PartCount, PartFacts};
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
/// gives no rule (every part has every box listed), or the rule reads a value and the part
/// gives 0 (it does not say: the discovery table's count stands).
pub fn box_count(machine: &Machine, pmu: &PmuInfo, socket: u32) -> Result<Option<BoxCount>> {
    let Some(rule) = pmu.box_count else {
        return Ok(None);
    };
    let (count, read) = match rule.rule {
        BoxCountRule::SetBits(_) | BoxCountRule::Value(_) => {
            let bits: &[BitRef] = match &rule.rule {
                BoxCountRule::SetBits(bits) => bits,
                BoxCountRule::Value(b) => std::slice::from_ref(b),
                BoxCountRule::CoresPerSocket => &[],
            };
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
            if let BoxCountRule::Value(_) = rule.rule {
                // Zero: the part does not say; the discovery table's count stands.
                if n == 0 {
                    return Ok(None);
                }
                (n, format!("{} on socket {socket}", values.join(", ")))
            } else {
                (
                    n,
                    format!("{} on socket {socket}: {n} bits set", values.join(", ")),
                )
            }
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

/// One discovery table of the part, joined with the spec.
#[derive(Debug)]
pub struct JoinedTable {
    /// The socket the table is taken to describe: the tables in device order are the
    /// sockets in order (one discovery device per socket).
    pub socket: u32,
    /// The discovery device that locates it.
    pub device: crate::Bdf,
    /// The join, or why the table could not be read.
    pub joined: std::result::Result<Joined, DiscoveryError>,
}

/// Every discovery table `machine` publishes, each joined with `spec` knowing what the part
/// says of itself on that table's socket ([`part_facts`]).
pub fn joined_tables(machine: &Machine, spec: &'static Boxes) -> Vec<JoinedTable> {
    machine
        .discovery_tables()
        .into_iter()
        .enumerate()
        .map(|(i, (device, table))| {
            let socket = i as u32;
            let joined = table.map(|t| {
                let facts = part_facts(machine, spec, socket);
                join_on(spec, &t, &facts)
            });
            JoinedTable {
                socket,
                device,
                joined,
            }
        })
        .collect()
}

/// What the part says of itself on `socket`, for the join: the box count of every unit with
/// a discovery type and a `<box-count>` the part answers (a count that cannot be read is left
/// to the table), and the physical address of each memory-mapped register.
pub fn part_facts<'a>(machine: &'a Machine, spec: &'static Boxes, socket: u32) -> PartFacts<'a> {
    let mut counts = Vec::new();
    for u in spec.processor.units {
        let Some(pmu) = u
            .pmu
            .filter(|m| m.discovery_type.is_some() && m.box_count.is_some())
        else {
            continue;
        };
        if let Ok(Some(c)) = box_count(machine, pmu, socket) {
            counts.push(PartCount {
                unit: u.name,
                count: c.count,
                read: c.read,
                source: c.source,
            });
        }
    }
    let at = Where {
        socket: Some(socket),
        ..Where::default()
    };
    let mmio = move |r: Reg| match machine.place(r.info, r.addr, &at) {
        Ok(crate::Place::Mmio(a)) => Some(a),
        _ => None,
    };
    PartFacts {
        counts,
        mmio: Some(Box::new(mmio)),
    }
}
