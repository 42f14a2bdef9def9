//! Boxes the part's uncore discovery table places (the spec's `<from-table>`: the Granite
//! Rapids PCU): the spec describes their registers' layouts and where each sits relative to
//! the box's table entry, and this module resolves them at the place an entry gives, as
//! Linux's generic discovery driver does (`uncore_discovery.c`: the box control, then
//! counter control n at the box control plus the entry's control offset plus n strides, and
//! counter n likewise). A placed box is an ordinary [`PmuBox`], counted like any other
//! (a `Counting` session); [`placed_boxes`] gives a processor's boxes with its
//! table-placed ones resolved.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use pmu_regs::{AddressInfo, Addresses, RegRef, RegisterInfo, TablePlace};

use crate::boxes::{Boxes, Counter, PmuBox, Reg};

/// Where a table entry puts an MSR box: its box control MSR, and its first counter control and
/// first counter as offsets past it (the entry's `ctl_offset` and `ctr_offset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MsrPlace {
    /// The box control MSR.
    pub box_control: u32,
    /// Counter control 0, past the box control.
    pub ctl_offset: u32,
    /// Counter 0, past the box control.
    pub ctr_offset: u32,
}

/// What `{i}` in register name `template` stands for in box `instance`: the instance's number
/// where the name spells its prefix (`CBO{i}_PMON_CTL{n}` in `CBO3`: `3`), as the spec's
/// instance numbers give it, else the whole instance.
fn instance_number<'a>(template: &str, instance: &'a str) -> &'a str {
    let prefix = template.split("{i}").next().unwrap_or_default();
    match instance.strip_prefix(prefix) {
        Some(rest) if !prefix.is_empty() && !rest.is_empty() => rest,
        _ => instance,
    }
}

/// Register `r`, element `index`, of box `instance` at `at`, when the table places it.
fn reg_at(
    r: &'static RegisterInfo,
    instance: &'static str,
    index: u32,
    at: MsrPlace,
) -> Option<Reg> {
    let Addresses::FromTable(p) = r.addresses else {
        return None;
    };
    let first = match p.place {
        TablePlace::BoxControl => at.box_control,
        TablePlace::CounterControl => at.box_control.checked_add(at.ctl_offset)?,
        TablePlace::Counter => at.box_control.checked_add(at.ctr_offset)?,
    };
    let address = first.checked_add(index.checked_mul(p.stride)?)?;
    let name = r
        .name
        .replace("{n}", &index.to_string())
        .replace("{i}", instance_number(r.name, instance));
    // One leak per register of a placed box: `placed` caches the boxes it builds.
    let addr: &'static AddressInfo = Box::leak(Box::new(AddressInfo::msr(
        Box::leak(name.into_boxed_str()),
        instance,
        index,
        address,
        p.source,
    )));
    Some(Reg { info: r, addr })
}

/// Box `b` of a table-placed unit ([`PmuBox::table_placed`]) resolved at `at`; `None` for a
/// box the table does not place, or an address past the MSR space.
pub fn place(b: &PmuBox, at: MsrPlace) -> Option<PmuBox> {
    if !b.table_placed() {
        return None;
    }
    let on = |r: RegRef| reg_at(r.register, b.instance, r.index, at);
    let mut counters = Vec::new();
    for c in b.pmu.counters {
        counters.push(Counter {
            info: c,
            control: match c.control {
                Some(r) => Some(on(r)?),
                None => None,
            },
            counter: on(c.counter)?,
            route: b.pmu.route(b.instance, c.number),
        });
    }
    let controls = b.pmu.controls.iter().map(|r| reg_at(r, b.instance, 0, at));
    Some(PmuBox {
        counters,
        controls: controls.collect::<Option<Vec<_>>>()?,
        statuses: Vec::new(),
        clears: Vec::new(),
        ..b.clone()
    })
}

/// `spec`'s boxes with each table-placed box resolved where `at` (by box instance) says; a
/// table-placed box `at` does not name is left unresolved. Built once per processor and
/// placement for the life of the program, as [`Boxes::of`] is.
pub fn placed_boxes(spec: &'static Boxes, at: &[(&'static str, MsrPlace)]) -> &'static Boxes {
    type Key = (usize, Vec<(&'static str, MsrPlace)>);
    static CACHE: OnceLock<Mutex<HashMap<Key, &'static Boxes>>> = OnceLock::new();
    let key = (spec as *const Boxes as usize, at.to_vec());
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(key).or_insert_with(|| {
        let boxes = spec
            .boxes
            .iter()
            .map(|b| {
                let place_of = at.iter().find(|(i, _)| *i == b.instance);
                place_of
                    .and_then(|&(_, p)| place(b, p))
                    .unwrap_or_else(|| b.clone())
            })
            .collect();
        Box::leak(Box::new(Boxes {
            processor: spec.processor,
            boxes,
            global: spec.global,
        }))
    })
}
