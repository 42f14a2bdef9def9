//! Boxes the part's discovery table places (the spec's `<from-table>`: the Granite Rapids
//! PCU, B2UPI and B2CXL) in a session: before the check, each is placed where the part's
//! tables list it ([`crate::table_placed`]: an MSR box from the first readable table, a PCI or
//! memory-mapped box from each socket's own), and every box of the selection is taken from the
//! placed boxes, so the join, the programming and the put-back all see one set. A box no
//! table lists stays unplaced: the check refuses it as one the table does not list, and
//! nothing is written.

use crate::boxes::Boxes;
use crate::discovery::{entry_place, Joined};
use crate::machine::Machine;
use crate::part::joined_tables;
use crate::table_placed::{placed_on, EntryPlace};

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
    let tables: Vec<(u32, Joined)> = joined_tables(machine, spec)
        .into_iter()
        .filter_map(|t| Some((t.socket, t.joined.ok()?)))
        .collect();
    let at: Vec<(&'static str, Vec<EntryPlace>)> = unplaced
        .iter()
        .filter_map(|b| Some((b.pmu_box.instance, places(&tables, b)?)))
        .collect();
    if at.is_empty() {
        return None;
    }
    let placed = placed_on(spec, &at);
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

/// Where the tables place box `b`: an MSR box where the first readable table lists it (the
/// MSR boxes of one type sit at one place on every socket); a PCI or memory-mapped box where
/// each socket's own table lists it.
fn places(tables: &[(u32, Joined)], b: &BoxEvents) -> Option<Vec<EntryPlace>> {
    let mut out = Vec::new();
    for (socket, joined) in tables {
        let Some(entry) = joined.of(b.pmu_box).and_then(|j| j.table) else {
            continue;
        };
        match entry_place(&entry, *socket)? {
            p @ EntryPlace::Msr(_) => return Some(vec![p]),
            p => out.push(p),
        }
    }
    (!out.is_empty()).then_some(out)
}
