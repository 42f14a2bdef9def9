//! Boxes the part's uncore discovery table places (the spec's `<from-table>`: the Granite
//! Rapids PCU (MSR), B2UPI (PCI) and B2CXL (memory-mapped) boxes): the spec describes their registers' layouts and where each sits relative to
//! the box's table entry, and this module resolves them at the place an entry gives, as
//! Linux's generic discovery driver does (`uncore_discovery.c`: the box control, then
//! counter control n at the box control plus the entry's control offset plus n strides, and
//! counter n likewise: MSRs for an MSR box, bytes in the named PCI function's configuration
//! space or in physical memory for the others). A PCI or memory-mapped register's site is
//! the one its socket's table gives ([`site`]). A placed box is an ordinary [`PmuBox`], counted like any other
//! (a `Counting` session); [`placed_boxes`] gives a processor's boxes with its
//! table-placed ones resolved.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use pmu_regs::{
    AddressInfo, Addresses, Location, RegRef, RegisterInfo, Space, TablePlace, TablePlacement,
};

use crate::access::Site;
use crate::boxes::{Boxes, Counter, PmuBox, Reg};
use crate::Bdf;

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

/// Where a table entry puts a box, by the entry's access type: an MSR box is at the same MSRs
/// on every socket; a PCI or memory-mapped box is where the table of its own socket says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryPlace {
    /// An MSR box.
    Msr(MsrPlace),
    /// A PCI box in `device`'s configuration space: the box control's offset there, and counter
    /// control 0 and counter 0 as byte offsets past it.
    Pci {
        /// The socket whose table lists it.
        socket: u32,
        /// The function the entry names.
        device: Bdf,
        /// The box control's offset in configuration space.
        box_control: u16,
        /// Counter control 0, past the box control.
        ctl_offset: u16,
        /// Counter 0, past the box control.
        ctr_offset: u16,
    },
    /// A memory-mapped box: the box control's physical address, and counter control 0 and
    /// counter 0 as byte offsets past it.
    Mmio {
        /// The socket whose table lists it.
        socket: u32,
        /// The box control's physical address.
        box_control: u64,
        /// Counter control 0, past the box control.
        ctl_offset: u64,
        /// Counter 0, past the box control.
        ctr_offset: u64,
    },
}

impl EntryPlace {
    /// The space of the registers this place reaches.
    fn space(self) -> Space {
        match self {
            EntryPlace::Msr(_) => Space::Msr,
            EntryPlace::Pci { .. } => Space::Pci,
            EntryPlace::Mmio { .. } => Space::Mmio,
        }
    }

    /// Element `index` of a register placed at `p` (in MSRs for an MSR box, bytes otherwise),
    /// with the site it is reached at on the entry's socket (`None` for an MSR, reached
    /// through any CPU of the socket).
    fn element(self, p: TablePlacement, index: u32) -> Option<(u64, Option<(u32, Site)>)> {
        let step = u64::from(index.checked_mul(p.stride)?);
        let (base, off) = match self {
            EntryPlace::Msr(m) => (
                u64::from(m.box_control),
                [0, m.ctl_offset, m.ctr_offset].map(u64::from),
            ),
            EntryPlace::Pci {
                box_control,
                ctl_offset,
                ctr_offset,
                ..
            } => (
                u64::from(box_control),
                [0, ctl_offset, ctr_offset].map(u64::from),
            ),
            EntryPlace::Mmio {
                box_control,
                ctl_offset,
                ctr_offset,
                ..
            } => (box_control, [0, ctl_offset, ctr_offset]),
        };
        let k = match p.place {
            TablePlace::BoxControl => 0,
            TablePlace::CounterControl => 1,
            TablePlace::Counter => 2,
        };
        let at = base.checked_add(off[k])?.checked_add(step)?;
        let site = match self {
            EntryPlace::Msr(_) => None,
            EntryPlace::Pci { socket, device, .. } => Some((socket, Site::Device(device))),
            EntryPlace::Mmio { socket, .. } => Some((socket, Site::Mmio(at))),
        };
        Some((at, site))
    }
}

/// Where a memory-mapped register the table places is named: no window holds it, so its
/// location names none (controller [`NO_WINDOW`]) and carries its physical address's low 40
/// bits (channel: bits 39:32, offset: 31:0), which tell a part's boxes apart; it is reached at
/// the site its socket's table gives ([`site`]).
pub const NO_WINDOW: u8 = u8::MAX;

/// Sites of the PCI and memory-mapped registers placed so far, by the address of their
/// (leaked, never freed) metadata row, per socket.
type Sites = HashMap<usize, Vec<(u32, Site)>>;

fn sites() -> &'static Mutex<Sites> {
    static SITES: OnceLock<Mutex<Sites>> = OnceLock::new();
    SITES.get_or_init(Default::default)
}

/// Where a PCI or memory-mapped register a table placed is reached on `socket`: `None` when
/// `addr` is not such a register (an MSR, or a register with a fixed address), `Some(Err)`
/// naming the sockets it is placed on when `socket`'s table did not place it.
pub fn site(addr: &'static AddressInfo, socket: usize) -> Option<Result<Site, String>> {
    let map = sites().lock().unwrap_or_else(|p| p.into_inner());
    let on = map.get(&(addr as *const AddressInfo as usize))?;
    let found = on
        .iter()
        .find(|(s, _)| *s as usize == socket)
        .map(|(_, site)| *site);
    Some(found.ok_or_else(|| {
        let placed: Vec<String> = on.iter().map(|(s, _)| s.to_string()).collect();
        format!(
            "{} on socket {socket}: only the discovery table of socket {} places it, and a PCI or memory-mapped box is where its own socket's table says",
            addr.name,
            placed.join(", ")
        )
    }))
}

/// Register `r`, element `index`, of box `instance` at `at` (one place per socket whose table
/// lists the box; the first names the register), when the table places it and the places
/// are of the register's space.
fn reg_at(
    r: &'static RegisterInfo,
    instance: &'static str,
    index: u32,
    at: &[EntryPlace],
) -> Option<Reg> {
    let Addresses::FromTable(p) = r.addresses else {
        return None;
    };
    let first = *at.first()?;
    if at.iter().any(|e| e.space() != r.space) {
        return None;
    }
    let (address, _) = first.element(p, index)?;
    let location = match first {
        EntryPlace::Msr(_) => Location::Msr(u32::try_from(address).ok()?),
        EntryPlace::Pci { device, .. } => Location::Pci {
            device_id: 0,
            device: device.device,
            function: device.function,
            offset: u16::try_from(address).ok()?,
        },
        EntryPlace::Mmio { .. } => Location::Mmio {
            controller: NO_WINDOW,
            channel: (address >> 32) as u8,
            offset: address as u32,
        },
    };
    // `{i}` is the instance's key: its number where the instance is the name's prefix and a
    // number (`B2UPI{i}` and B2UPI3), else its name.
    let prefix = r.name.split("{i}").next().unwrap_or("");
    let key = instance
        .strip_prefix(prefix)
        .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or(instance);
    let name = r
        .name
        .replace("{n}", &index.to_string())
        .replace("{i}", key);
    // One leak per register of a placed box: `placed` caches the boxes it builds.
    let addr: &'static AddressInfo = Box::leak(Box::new(AddressInfo::new(
        Box::leak(name.into_boxed_str()),
        instance,
        index,
        location,
        p.source,
    )));
    let mut on = Vec::new();
    for e in at {
        let (a, site) = e.element(p, index)?;
        // A PCI box at another offset on another socket cannot share the register's location.
        if let (Some(site), true) = (site, a == address) {
            on.push(site);
        }
    }
    if !on.is_empty() {
        let mut map = sites().lock().unwrap_or_else(|p| p.into_inner());
        map.insert(addr as *const AddressInfo as usize, on);
    }
    Some(Reg { info: r, addr })
}

/// Box `b` of a table-placed unit ([`PmuBox::table_placed`]) resolved at `at` (see
/// `reg_at`); `None` for a box the table does not place, a place of another access type
/// than the box's registers, or an address past the space.
pub fn place(b: &PmuBox, at: &[EntryPlace]) -> Option<PmuBox> {
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

/// [`placed_on`] for MSR boxes, each at the same MSRs on every socket.
pub fn placed_boxes(spec: &'static Boxes, at: &[(&'static str, MsrPlace)]) -> &'static Boxes {
    let at: Vec<_> = at
        .iter()
        .map(|&(i, m)| (i, vec![EntryPlace::Msr(m)]))
        .collect();
    placed_on(spec, &at)
}

/// `spec`'s boxes with each table-placed box resolved where `at` (by box instance: its place
/// on each socket whose table lists it) says; a table-placed box `at` does not name is left
/// unresolved. Built once per processor and placement for the life of the program, as
/// [`Boxes::of`] is.
pub fn placed_on(spec: &'static Boxes, at: &[(&'static str, Vec<EntryPlace>)]) -> &'static Boxes {
    type Key = (usize, Vec<(&'static str, Vec<EntryPlace>)>);
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
                    .and_then(|(_, p)| place(b, p))
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
