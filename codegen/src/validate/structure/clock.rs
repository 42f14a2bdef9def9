//! `<clock-event>` (spec/README.md, "`<clock-event>`"): the event that counts a unit's own
//! clock. As written, a select and unit mask that fit 16 bits and a declared source; once every
//! events file is read, each processor whose list for the unit has a clock-tick event (Intel's
//! `UNC_CHA_CLOCKTICKS`) or an event of that encoding must list the encoding under a clock-tick
//! name, so the role is never given to an event the vendor's list calls something else. A list
//! with neither (part of a vendor's list, imported alone) is not checked.

use super::super::{parse_number, Validator};
use super::UnitScope;
use crate::diagnostics::Diagnostic;
use crate::model::pmu::ClockEvent;
use crate::model::{Position, Processor};
use crate::parse::pmu::RawClockEvent;

/// How a vendor's list names the events that count a unit's clock.
const CLOCK_NAME_END: &str = "_CLOCKTICKS";

impl Validator {
    /// A `<clock-event>` as written: numbers that fit and a declared source.
    pub(super) fn pmu_clock_event(
        &mut self,
        unit: &UnitScope<'_>,
        raw: Option<&RawClockEvent>,
    ) -> Option<ClockEvent> {
        let raw = raw?;
        let number = |t: &str| parse_number(t).and_then(|v| u16::try_from(v).ok());
        let (Some(code), Some(umask)) = (number(&raw.code), number(&raw.umask)) else {
            self.push(unit.ctx.error(
                raw.at,
                format!(
                    "clock-event code `{}` and umask `{}` must both be numbers below 0x10000",
                    raw.code, raw.umask
                ),
                "give the event select and unit mask the vendor's event list gives the unit's clock-tick event",
            ));
            return None;
        };
        if !self.public_source(unit.ctx, unit.cat, raw.at, &raw.source) {
            return None;
        }
        Some(ClockEvent {
            code,
            umask,
            source: raw.source.clone(),
            at: Position::of(unit.ctx.file, unit.path, raw.at),
        })
    }

    /// Every unit's clock event against the events each processor lists for it (run once every
    /// events file is read): where a processor's list for the unit has a clock-tick event or an
    /// event of the clock event's encoding, one event has both.
    pub(crate) fn clock_events(&mut self, processors: &[Processor]) {
        for p in processors {
            for u in &p.units {
                let Some(clock) = u.pmu.as_ref().and_then(|pmu| pmu.clock_event.as_ref()) else {
                    continue;
                };
                let encoded =
                    |e: &&crate::model::Event| e.code == clock.code && e.umask == clock.umask;
                let clock_named = |e: &&crate::model::Event| e.name.ends_with(CLOCK_NAME_END);
                let named = u.events.iter().filter(clock_named).count();
                let same = u.events.iter().filter(encoded).count();
                // A list without the clock-tick event (a part of a vendor's list imported
                // alone) says nothing either way; otherwise the encoding must be the list's
                // clock-tick event's.
                if (named == 0 && same == 0)
                    || u.events.iter().filter(encoded).any(|e| clock_named(&e))
                {
                    continue;
                }
                self.push(
                    Diagnostic {
                        path: clock.at.path.to_path_buf(),
                        line: clock.at.line,
                        column: clock.at.column,
                        message: format!(
                            "clock-event code {:#04x} umask {:#04x} of unit {} is no event of {} named *{CLOCK_NAME_END}",
                            clock.code, clock.umask, u.name, p.id
                        ),
                        help: None,
                    }
                    .help("give the encoding of the unit's clock-tick event as each processor's event list has it, or remove <clock-event>"),
                );
            }
        }
    }
}
