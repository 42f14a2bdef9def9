//! `<stack-bus>`: which root PCI bus each box of a unit serves, read from a register on each
//! socket (Skylake-SP's IIO stacks and MSR_CPU_BUS_NUMBER). Checked as written with the unit;
//! its register is resolved by concrete name once every unit of the processor is known (it
//! may be another unit's, like `<socket-bus>`'s).

use super::super::Validator;
use super::routes::concrete_names;
use super::{diag, packed_fields, Found, PendingRoutes, UnitScope};
use crate::model::pmu::{BitRef, StackBus};
use crate::model::{Addresses, Location, Position, Processor, Register};
use crate::naming::normalize_text;
use crate::parse::pmu::RawStackBus;

/// The bits of one bus number.
const BUS_BITS: u32 = 8;

/// A `<stack-bus>` as written, kept until every unit of the processor is validated.
#[derive(Debug, Clone)]
pub(crate) struct PendingStackBus {
    at: Position,
    register: String,
    valid: String,
    /// How many boxes the unit lists: one bus field each.
    boxes: usize,
    source: String,
    description: String,
}

impl Validator {
    /// A `<stack-bus>` as written: a declared source and a description.
    pub(super) fn stack_bus_as_written(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawStackBus,
    ) -> Option<PendingStackBus> {
        if !self.public_source(unit.ctx, unit.cat, raw.at, &raw.source) {
            return None;
        }
        let description = normalize_text(&raw.text);
        if description.is_empty() {
            self.push(unit.ctx.error(
                raw.at,
                "stack-bus has no description",
                "say in the element's text which register is read and how it gives each box's bus",
            ));
            return None;
        }
        Some(PendingStackBus {
            at: Position::of(unit.ctx.file, unit.path, raw.at),
            register: raw.register.clone(),
            valid: raw.valid.clone(),
            boxes: unit.instances.len(),
            source: raw.source.clone(),
            description,
        })
    }

    /// Resolves each unit's `<stack-bus>`: the register exists (by concrete name) as an MSR
    /// with an address, its `valid` field is one readable bit, and its other readable fields
    /// are 8-bit bus numbers from bit 0 up, one per box of the unit.
    pub(in crate::validate) fn resolve_stack_buses(
        &mut self,
        p: &mut Processor,
        pending: &[(usize, PendingRoutes)],
    ) {
        let names = concrete_names(p);
        for (ui, pr) in pending {
            let Some(ps) = &pr.stack_bus else { continue };
            let Some(&found) = names.get(ps.register.as_str()) else {
                self.push(diag(
                    &ps.at,
                    format!("stack-bus names unknown register `{}`", ps.register),
                    &format!(
                        "name a register of processor {} by its concrete name, e.g. MSR_CPU_BUS_NUMBER",
                        p.id
                    ),
                ));
                continue;
            };
            if let Some(stack_bus) = self.stack_bus(p, ps, found) {
                if let Some(pmu) = p.units[*ui].pmu.as_mut() {
                    pmu.stack_bus = Some(stack_bus);
                }
            }
        }
    }

    /// The rule, once its register is found.
    fn stack_bus(&mut self, p: &Processor, ps: &PendingStackBus, found: Found) -> Option<StackBus> {
        let (unit, register, instance, index) = found;
        let reg = &p.units[unit].registers[register];
        let fail = |message: String, help: &str| diag(&ps.at, message, help);
        if !is_msr(reg, instance, index) {
            self.push(fail(
                format!(
                    "stack-bus register {} must be an MSR with an address",
                    ps.register
                ),
                "name the package-scope MSR that holds the buses (read on a CPU of each socket)",
            ));
            return None;
        }
        let readable =
            |f: &crate::model::Field| !f.access.is_placeholder() && f.access.is_readable();
        let Some(valid) = reg
            .fields
            .iter()
            .position(|f| readable(f) && f.name.as_ref() == ps.valid && f.width() == 1)
        else {
            self.push(fail(
                format!(
                    "stack-bus valid `{}` is not a readable one-bit field of {}",
                    ps.valid, ps.register
                ),
                "name the bit that says firmware has set the bus numbers",
            ));
            return None;
        };
        let Some(buses) = packed_fields(reg, BUS_BITS, Some(valid)).filter(|b| b.len() == ps.boxes)
        else {
            self.push(fail(
                format!(
                    "stack-bus register {} does not hold one 8-bit bus per box from bit 0 (the unit has {} {})",
                    ps.register,
                    ps.boxes,
                    if ps.boxes == 1 { "box" } else { "boxes" }
                ),
                "give the register one readable 8-bit field per box, box k's at bits 8k+7:8k, besides the valid bit; the rest reserved",
            ));
            return None;
        };
        let bit = |field| BitRef {
            unit,
            register,
            instance,
            index,
            field,
        };
        Some(StackBus {
            valid: bit(valid),
            buses: buses.into_iter().map(bit).collect(),
            source: ps.source.clone(),
            description: ps.description.clone(),
        })
    }
}

/// Whether the register has a known MSR address for this instance and index.
fn is_msr(r: &Register, instance: usize, index: u32) -> bool {
    let Addresses::Known(list) = &r.addresses else {
        return false;
    };
    list.iter().any(|a| {
        a.instance == instance && a.index == index && matches!(a.location, Location::Msr(_))
    })
}
