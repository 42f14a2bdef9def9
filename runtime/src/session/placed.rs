//! Boxes the part's discovery table places (the spec's `<from-table>`: the Granite Rapids
//! PCU) in a session: before the check, each is placed where the part's first readable table
//! lists it ([`crate::table_placed`]), and every box of the selection is taken from the
//! placed boxes, so the join, the programming and the put-back all see one set. A box no
//! table lists stays unplaced: the check refuses it as one the table does not list, and
//! nothing is written.

use crate::boxes::Boxes;
use crate::discovery::msr_place;
use crate::machine::Machine;
use crate::part::joined_tables;
use crate::table_placed::{placed_boxes, MsrPlace};

use super::selection::{BoxEvents, Counted, Selection};

/// `selection` with its table-placed boxes placed from `machine`'s tables; `None` when it
/// has none (or no table lists them), and the selection stands as it is.
pub(super) fn place(machine: &Machine, selection: &Selection) -> Option<Selection> {
    let Counted::Boxes(boxes) = &selection.counted else {
        return None;
    };
    let unplaced: Vec<&BoxEvents> = boxes
        .iter()
        .filter(|b| b.pmu_box.table_placed() && b.pmu_box.counters.is_empty())
        .collect();
    let spec: &'static Boxes = unplaced.first()?.boxes;
    // The first readable table: the MSR boxes of one type sit at one place on every socket.
    let joined = joined_tables(machine, spec)
        .into_iter()
        .find_map(|t| t.joined.ok())?;
    let at: Vec<(&'static str, MsrPlace)> = unplaced
        .iter()
        .filter_map(|b| {
            let entry = joined.of(b.pmu_box)?.table?;
            Some((b.pmu_box.instance, msr_place(&entry)?))
        })
        .collect();
    if at.is_empty() {
        return None;
    }
    let placed = placed_boxes(spec, &at);
    let swapped = boxes
        .iter()
        .map(|b| BoxEvents {
            boxes: placed,
            pmu_box: placed.find(b.pmu_box.instance).unwrap_or(b.pmu_box),
            events: b.events.clone(),
        })
        .collect();
    Some(Selection {
        counted: Counted::Boxes(swapped),
        ..selection.clone()
    })
}
