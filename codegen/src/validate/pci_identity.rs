//! One PCI function, one identity: within a processor, a box's device id is at one (device,
//! function) on the uncore bus, and a (device, function) holds one device id. From Skylake-SP
//! on one device id recurs at several functions, one per box (every UPI link is 0x2058), so
//! the first rule is per box (unit and instance).
//!
//! The second rule holds only where a socket's uncore devices share one bus: where the
//! processor's `<socket-bus>` says other buses hold some of them (Skylake-SP on), one
//! (device, function) recurs on several buses with different ids (Skylake-SP's U-box and
//! M2M 0 are both at 8.0), and discovery tells them apart by id.
//!
//! Public tables disagree here (likwid's Broadwell-EP table pairs the memory-controller device
//! ids with each other's functions); PCI discovery matches id, device and function together, so
//! a spec that mixes the pairings finds no device for some registers.

use std::collections::HashMap;

use crate::diagnostics::Diagnostic;
use crate::model::pmu::OtherBuses;
use crate::model::{Addresses, Location, Processor};

/// Where a register first gave a device id or a (device, function): its concrete name, file
/// and the other half of the pairing.
struct Seen<T> {
    other: T,
    register: String,
    file: String,
}

/// A box's PCI identity: device id, unit name and instance.
type BoxId<'a> = (u16, &'a str, usize);

/// Diagnostics for every register whose PCI identity contradicts an earlier one.
pub(super) fn check(p: &Processor) -> Vec<Diagnostic> {
    let mut by_id: HashMap<BoxId, Seen<(u8, u8)>> = HashMap::new();
    let mut by_slot: HashMap<(u8, u8), Seen<u16>> = HashMap::new();
    let mut out = Vec::new();
    let one_bus = !p
        .units
        .iter()
        .filter_map(|u| u.pmu.as_ref()?.socket_bus.as_ref())
        .any(|b| b.other_buses != OtherBuses::None);
    for u in &p.units {
        for r in &u.registers {
            let Addresses::Known(addrs) = &r.addresses else {
                continue;
            };
            for a in addrs {
                let Location::Pci {
                    device_id,
                    device,
                    function,
                    ..
                } = a.location
                else {
                    continue;
                };
                let name = r.address_name(u, a);
                let box_id = (device_id, u.name.as_str(), a.instance);
                let conflict = match by_id.get(&box_id) {
                    Some(s) if s.other != (device, function) => Some(format!(
                        "device id {device_id:#06X} is at dev {device} fn {function}, but {} ({}) has it at dev {} fn {}",
                        s.register, s.file, s.other.0, s.other.1
                    )),
                    _ => match by_slot.get(&(device, function)) {
                        Some(s) if one_bus && s.other != device_id => Some(format!(
                            "dev {device} fn {function} has device id {device_id:#06X}, but {} ({}) gives it {:#06X}",
                            s.register, s.file, s.other
                        )),
                        _ => None,
                    },
                };
                if let Some(why) = conflict {
                    out.push(
                        Diagnostic {
                            path: r.at.path.to_path_buf(),
                            line: r.at.line,
                            column: r.at.column,
                            message: format!("register {}: {name}: {why}", r.name),
                            help: None,
                        }
                        .help("one PCI function has one device id; check which source pairs them right (a device listing of the processor settles it)"),
                    );
                    continue;
                }
                by_id.entry(box_id).or_insert_with(|| Seen {
                    other: (device, function),
                    register: name.clone(),
                    file: u.file.clone(),
                });
                by_slot.entry((device, function)).or_insert_with(|| Seen {
                    other: device_id,
                    register: name,
                    file: u.file.clone(),
                });
            }
        }
    }
    out
}
