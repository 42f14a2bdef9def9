//! `<clock-event>` (spec/README.md, "`<clock-event>`"): the event that counts a unit's own
//! clock. As written, a select and unit mask that fit 16 bits and a declared source; once every
//! events file is read, each processor that lists events for the unit must list one with that
//! encoding under a clock-tick name (Intel's `UNC_CHA_CLOCKTICKS`), so the role is never given
//! to an event the vendor's list calls something else.

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
    /// events file is read): where a processor lists the unit's events, one of them has the
    /// clock event's encoding and a clock-tick name.
    pub(crate) fn clock_events(&mut self, processors: &[Processor]) {
        for p in processors {
            for u in &p.units {
                let Some(clock) = u.pmu.as_ref().and_then(|pmu| pmu.clock_event.as_ref()) else {
                    continue;
                };
                if u.events.is_empty()
                    || u.events.iter().any(|e| {
                        e.code == clock.code
                            && e.umask == clock.umask
                            && e.name.ends_with(CLOCK_NAME_END)
                    })
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
