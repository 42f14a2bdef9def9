//! A box that does not count, found by its clock event (the spec's `<clock-event>`: Intel's
//! `UNC_CHA_CLOCKTICKS`). The event counts the box's own clock, so over any interval the box
//! is enabled it counts; a box where it counted nothing is broken (Linux's 2026 "broken" PMU
//! state, docs/quirks-sources.md), and a session reports it by name instead of showing its
//! zeros.

use crate::boxes::EventSelect;
use crate::error::BrokenBox;

use super::{Count, Session};

/// Whether `sel` selects `pmu_box`'s clock event, and the event's name then.
fn clock_event(pmu_box: &crate::boxes::PmuBox, sel: &EventSelect) -> Option<String> {
    let clock = pmu_box.pmu.clock_event?;
    if sel.ev_sel != clock.code || sel.umask.unwrap_or(0) != clock.umask {
        return None;
    }
    let listed =
        pmu_box.unit.events.iter().find(|e| {
            e.code == clock.code && e.umask == clock.umask && e.name.ends_with("CLOCKTICKS")
        });
    Some(match listed {
        Some(e) => e.name.to_string(),
        None => format!("event={:#04x},umask={:#04x}", clock.code, clock.umask),
    })
}

impl Session<'_> {
    /// The first register box whose clock event counted nothing in `counts` over `seconds`
    /// while it was on a counter; `None` when every counted clock event moved (or the
    /// session's quirks say not to look).
    pub(super) fn broken_box(&self, counts: &[Count], seconds: f64) -> Option<BrokenBox> {
        if !self.options.quirks.clock_event || seconds <= 0.0 {
            return None;
        }
        let (mut box_no, mut member) = (0, 0);
        for (index, count) in self.perf_index.iter().zip(counts) {
            if index.is_some() {
                continue;
            }
            let g = &self.groups[box_no];
            let pmu_box = g.counting.pmu_box();
            let on_counter = count.running_ratio.is_none_or(|r| r > 0.0);
            let event = g.sels.get(member).and_then(|s| clock_event(pmu_box, s));
            if let Some(event) = event.filter(|_| on_counter && count.delta == 0) {
                return Some(BrokenBox {
                    processor: pmu_box.pmu.processor,
                    socket: g.socket,
                    instance: pmu_box.instance,
                    event,
                    source: pmu_box.pmu.clock_event.map_or("", |c| c.source),
                    seconds,
                });
            }
            member += 1;
            if member == g.series_count() {
                (box_no, member) = (box_no + 1, 0);
            }
        }
        None
    }
}
