//! The structure of a table-placed unit (`<from-table>` registers): the discovery table places
//! its boxes, so the unit needs a `discovery-type`, and each register the structure uses takes
//! the place the table gives for its part (the box control at the entry's box control, the
//! counter controls and counters at its offsets). A unit is table-placed or fixed, not both.

use super::super::addresses::space_name;
use super::super::Validator;
use super::placement::Parts;
use super::{diag, UnitScope};
use crate::model::{Addresses, Register, TablePlace};
use crate::parse::pmu::RawPmu;

impl Validator {
    /// A unit with table-placed registers needs the discovery type the table lists it under.
    pub(super) fn table_placed_needs_type(&mut self, unit: &UnitScope<'_>, raw: &RawPmu) {
        let Some(first) = unit.registers.iter().find(|r| placement(r).is_some()) else {
            return;
        };
        if raw.discovery_type.is_none() {
            self.push(diag(
                &first.at,
                format!("register {} is placed by the discovery table (<from-table>), but the unit's <pmu> has no discovery-type", first.name),
                "give the <pmu> the discovery-type the table lists these boxes under, or give the registers their addresses",
            ));
        }
    }

    /// In a unit with table-placed registers, each register of the structure at its part's
    /// place.
    pub(super) fn table_places(&mut self, unit: &UnitScope<'_>, parts: &Parts<'_>) {
        let regs = unit.registers;
        if !regs.iter().any(|r| placement(r).is_some()) {
            return;
        }
        let wanted = [
            (
                parts.controls,
                Some(TablePlace::BoxControl),
                "the box control",
            ),
            (
                parts.counter_controls,
                Some(TablePlace::CounterControl),
                "a counter's control",
            ),
            (parts.counter_regs, Some(TablePlace::Counter), "a counter"),
            (parts.statuses, None, "a box status"),
            (parts.overflow_clears, None, "an overflow clear"),
        ];
        for (list, want, part) in wanted {
            for r in list.iter().map(|&i| &regs[i]) {
                self.placed_as(r, want, part);
            }
        }
        self.one_access_kind(regs);
    }

    /// A table entry reaches all of a box's registers one way (its access type: MSR, PCI or
    /// memory-mapped), so the table-placed registers of a unit share one space.
    fn one_access_kind(&mut self, regs: &[Register]) {
        let mut placed = regs.iter().filter(|r| placement(r).is_some());
        let Some(first) = placed.next() else {
            return;
        };
        for r in placed.filter(|r| r.space != first.space) {
            self.push(diag(
                &r.at,
                format!(
                    "register {} is placed by the discovery table in {} space, but {} in {} space",
                    r.name,
                    space_name(r.space),
                    first.name,
                    space_name(first.space)
                ),
                "a table entry gives a box one access type: put every table-placed register of the unit in the same space",
            ));
        }
    }

    /// One register of the structure of a table-placed unit, playing `part`.
    fn placed_as(&mut self, r: &Register, want: Option<TablePlace>, part: &str) {
        match (placement(r), want) {
            (Some(got), Some(want)) if got == want => {}
            (Some(got), Some(want)) => self.push(diag(
                &r.at,
                format!("register {} is {part}, but <from-table> places it at the table's {}", r.name, got.name()),
                &format!("place it with place=\"{}\"", want.name()),
            )),
            (Some(_), None) => self.push(diag(
                &r.at,
                format!("register {} is {part}: the discovery table places only box controls, counter controls and counters", r.name),
                "leave it out of the <pmu>, or give it its address",
            )),
            (None, Some(want)) => self.push(diag(
                &r.at,
                format!("register {} is {part} of a table-placed unit, but has a fixed address", r.name),
                &format!("place it with <from-table place=\"{}\"/> as the unit's other registers", want.name()),
            )),
            (None, None) => {}
        }
    }
}

/// Where the table places a register, if it does.
fn placement(r: &Register) -> Option<TablePlace> {
    match &r.addresses {
        Addresses::FromTable(t) => Some(t.place),
        _ => None,
    }
}
