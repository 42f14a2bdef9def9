//! Boxes the part's discovery tables place (the spec's `<from-table>`: the Granite Rapids
//! PCU, B2UPI and B2CXL, Diamond Rapids' CBO) in a session: before the check, each is placed
//! where the part's tables list it ([`crate::table_placed`]: an MSR box from the first readable
//! table, a PCI or memory-mapped box from each socket's own), or, on a part with discovery
//! domains, where a table of a domain lists its type and id; every box of the selection is
//! then taken from the placed boxes, so the join, the programming and the put-back all see
//! one set. A box no table lists stays unplaced: the check refuses it as one the table does
//! not list, and nothing is written.
//!
//! A domain table that places a box and whose domain has a `global_init` (Diamond Rapids'
//! CBB tables power up frozen) is returned as a [`DomainInit`]: the session writes the value
//! to the table's global control before counting and puts back what it found.

use crate::boxes::Boxes;
use crate::discovery::{entry_place, msr_place, Joined};
use crate::machine::Machine;
use crate::part::{domain_tables, joined_tables};
use crate::table_placed::{placed_on, EntryPlace};

use super::selection::{BoxEvents, Counted, Selection};

/// The global control of a discovery domain table a session writes before counting (the
/// domain's `global_init`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DomainInit {
    /// The global control's physical address (memory-mapped), from the table's global state.
    pub address: u64,
    /// The 32-bit value written there.
    pub value: u32,
}

/// `selection` with its table-placed boxes placed from `machine`'s tables (`None` when it
/// has none, or no table lists them, and the selection stands as it is), and the domain
/// tables' global controls to write first.
pub(super) fn place(
    machine: &Machine,
    selection: &Selection,
) -> (Option<Selection>, Vec<DomainInit>) {
    let Counted::Boxes(boxes) = &selection.counted else {
        return (None, Vec::new());
    };
    let unplaced: Vec<&BoxEvents> = boxes
        .iter()
        .filter(|b| b.pmu_box.table_placed() && b.pmu_box.counters.is_empty())
        .collect();
    let Some(spec) = unplaced.first().map(|b| b.boxes) else {
        return (None, Vec::new());
    };
    let (at, inits) = if spec.processor.discovery_domains.is_empty() {
        (from_first_table(machine, spec, &unplaced), Vec::new())
    } else {
        from_domains(machine, spec, &unplaced)
    };
    if at.is_empty() {
        return (None, Vec::new());
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
    let selection = Selection {
        counted: Counted::Boxes(swapped),
        ..selection.clone()
    };
    (Some(selection), inits)
}

/// Where the part's tables (the generic device's, one per socket) put `unplaced`.
fn from_first_table(
    machine: &Machine,
    spec: &'static Boxes,
    unplaced: &[&BoxEvents],
) -> Vec<(&'static str, Vec<EntryPlace>)> {
    let tables: Vec<(u32, Joined)> = joined_tables(machine, spec)
        .into_iter()
        .filter_map(|t| Some((t.socket, t.joined.ok()?)))
        .collect();
    unplaced
        .iter()
        .filter_map(|b| Some((b.pmu_box.instance, places(&tables, b)?)))
        .collect()
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

/// Where the tables of the part's discovery domains put `unplaced` (an entry of the box's
/// discovery type and id, in a domain that does not ignore the type; the first table that
/// lists it), and the global controls of the tables that place one, where their domain has a
/// `global_init`.
fn from_domains(
    machine: &Machine,
    spec: &'static Boxes,
    unplaced: &[&BoxEvents],
) -> (Vec<(&'static str, Vec<EntryPlace>)>, Vec<DomainInit>) {
    let (mut at, mut inits) = (Vec::new(), Vec::new());
    for t in domain_tables(spec.processor, machine) {
        let Ok(table) = &t.table else {
            continue;
        };
        let mut placed_here = false;
        for b in unplaced {
            let Some(ty) = b.pmu_box.pmu.discovery_type else {
                continue;
            };
            let ignored = t.domain.ignored.iter().any(|(i, _)| *i == ty);
            if ignored || at.iter().any(|(i, _)| *i == b.pmu_box.instance) {
                continue;
            }
            let entry = table
                .boxes
                .iter()
                .find(|e| e.box_type == ty && usize::from(e.box_id) == b.pmu_box.position);
            if let Some(p) = entry.and_then(msr_place) {
                at.push((b.pmu_box.instance, vec![EntryPlace::Msr(p)]));
                placed_here = true;
            }
        }
        if let (true, Some(value)) = (placed_here, t.domain.global_init) {
            inits.push(DomainInit {
                address: table.global.control,
                value,
            });
        }
    }
    (at, inits)
}
