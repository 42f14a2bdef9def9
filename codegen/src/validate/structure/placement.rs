//! Where a `<pmu>`'s role fields sit: each in a register that plays its part, naming
//! counters the box has; a shared control says which counter each field serves; box-level
//! bitmaps cover every counter they can.

use super::super::Validator;
use super::{diag, UnitScope};
use crate::model::pmu::*;

/// The registers a `<pmu>` gives a part, by index into the unit's registers.
pub(super) struct Parts<'p> {
    pub(super) controls: &'p [usize],
    pub(super) statuses: &'p [usize],
    pub(super) overflow_clears: &'p [usize],
    pub(super) counter_controls: &'p [usize],
    pub(super) counter_regs: &'p [usize],
    pub(super) global: Option<&'p Global>,
}

impl Parts<'_> {
    /// Whether register `ri` plays the part a role of `class` needs, and that part's name.
    fn plays(&self, ri: usize, class: RoleClass) -> (bool, &'static str) {
        let global = |f: &dyn Fn(&Global) -> bool| self.global.is_some_and(f);
        match class {
            RoleClass::CounterControl => {
                (self.counter_controls.contains(&ri), "a counter's control")
            }
            RoleClass::Counter => (self.counter_regs.contains(&ri), "a counter"),
            RoleClass::BoxControl => (self.controls.contains(&ri), "a <control> of the <pmu>"),
            RoleClass::BoxStatus => (
                self.statuses.contains(&ri) || global(&|g| g.status == ri),
                "a <status> of the <pmu>",
            ),
            RoleClass::BoxOverflowClear => (
                self.overflow_clears.contains(&ri) || global(&|g| g.overflow_clear == Some(ri)),
                "an <overflow-clear> of the <pmu>",
            ),
            RoleClass::GlobalControl => (global(&|g| g.control == ri), "the <global> control"),
        }
    }
}

impl Validator {
    /// Every role field sits in a register that plays its part, and names counters the box
    /// has.
    pub(super) fn role_placement(&mut self, unit: &UnitScope<'_>, parts: &Parts, numbers: &[u32]) {
        self.table_places(unit, parts);
        for (ri, r) in unit.registers.iter().enumerate() {
            for f in &r.fields {
                if f.count_default.is_some() && !parts.plays(ri, RoleClass::CounterControl).0 {
                    self.push(diag(
                        &r.at,
                        format!(
                            "register {}: field `{}` has a count-default, but the register is not a counter's control",
                            r.name, f.name
                        ),
                        "count-default is what counting programs into a counter's control; name the register in <counters control=\"...\">, or drop it",
                    ));
                }
                let Some(fr) = &f.role else { continue };
                let (ok, part) = parts.plays(ri, fr.role.class());
                if !ok {
                    self.push(diag(
                        &r.at,
                        format!(
                            "register {}: field `{}` has role {}, but the register is not {part}",
                            r.name,
                            f.name,
                            fr.role.as_str()
                        ),
                        "list the register in the unit's <pmu>, or move the role to the right register",
                    ));
                }
                if let Some(n) = fr.counters.iter().find(|n| !numbers.contains(n)) {
                    self.push(diag(
                        &r.at,
                        format!(
                            "register {}: field `{}` names counter {n}, which the box does not have (its counters: {})",
                            r.name,
                            f.name,
                            numbers.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                        ),
                        "correct counters=\"...\", or declare the counter in the <pmu>",
                    ));
                }
            }
        }
    }

    /// A shared control (one register for several counters) must say which counter each of
    /// its role fields serves. Reported once, at the first such control.
    pub(super) fn shared_controls(&mut self, unit: &UnitScope<'_>, counters: &[Counter]) {
        for c in counters {
            let Some(k) = c.control else { continue };
            let kreg = &unit.registers[k.register];
            let users = counters
                .iter()
                .filter(|o| o.control.is_some_and(|ok| ok.register == k.register))
                .count();
            if kreg.count != 1 || users <= 1 {
                continue;
            }
            if let Some(f) = kreg
                .fields
                .iter()
                .find(|f| f.role.as_ref().is_some_and(|r| r.counters.is_empty()))
            {
                self.push(diag(
                    &kreg.at,
                    format!(
                        "register {}: it controls {users} counters, but its field `{}` does not say which",
                        kreg.name, f.name
                    ),
                    "add counters=\"...\" to each role field of a shared control",
                ));
                break;
            }
        }
    }

    /// Box-level bitmaps (counter-enable, overflow, overflow-clear) cover every counter
    /// they can, each once.
    pub(super) fn bitmap_coverage(
        &mut self,
        unit: &UnitScope<'_>,
        pmu_at: usize,
        parts: &Parts,
        counters: &[Counter],
    ) {
        let bitmap_regs = [
            (Role::CounterEnable, parts.controls, "counter-enable"),
            (Role::Overflow, parts.statuses, "overflow"),
            (Role::OverflowClear, parts.overflow_clears, "overflow-clear"),
        ];
        for (role, regs, name) in bitmap_regs {
            let covered: Vec<u32> = regs
                .iter()
                .flat_map(|&ri| unit.registers[ri].fields.iter())
                .filter_map(|f| f.role.as_ref().filter(|r| r.role == role))
                .flat_map(|r| r.counters.iter().copied())
                .collect();
            if covered.is_empty() {
                continue;
            }
            let mut seen = covered.clone();
            seen.sort_unstable();
            if let Some(d) = seen.windows(2).find(|w| w[0] == w[1]) {
                self.push(unit.ctx.error(
                    pmu_at,
                    format!("counter {} has two {name} bits in the box", d[0]),
                    "each counter has one bit per box-level bitmap",
                ));
            }
            if let Some(c) = counters
                .iter()
                .find(|c| c.kind != CounterKind::FreeRunning && !covered.contains(&c.number))
            {
                self.push(unit.ctx.error(
                    pmu_at,
                    format!(
                        "counter {} has no {name} bit, though the box has {name} bits for others",
                        c.number
                    ),
                    &format!("add the counter to counters=\"...\" of the box's {name} field"),
                ));
            }
        }
    }

    /// A counter whose overflow is seen by its top bit (`overflow="msb-clear"`) has no
    /// overflow bit in the box's status: the two ways would disagree about where to look.
    pub(super) fn overflow_seen_once(
        &mut self,
        unit: &UnitScope<'_>,
        pmu_at: usize,
        parts: &Parts,
        counters: &[Counter],
    ) {
        let in_status: Vec<u32> = parts
            .statuses
            .iter()
            .flat_map(|&ri| unit.registers[ri].fields.iter())
            .filter_map(|f| f.role.as_ref().filter(|r| r.role == Role::Overflow))
            .flat_map(|r| r.counters.iter().copied())
            .collect();
        if let Some(c) = counters
            .iter()
            .find(|c| c.overflow == OverflowSeen::MsbClear && in_status.contains(&c.number))
        {
            self.push(unit.ctx.error(
                pmu_at,
                format!(
                    "counter {} is declared overflow=\"msb-clear\" but has an overflow bit in the box's status",
                    c.number
                ),
                "declare one way software sees the overflow: drop overflow=\"msb-clear\", or the status bit",
            ));
        }
    }
}
