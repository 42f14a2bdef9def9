//! Where a processor's uncore PCI devices are, socket by socket: what discovery finds (the
//! sysfs backend, `pci::PciSysfs::discover`) or the simulator makes, and what sampling and
//! counting look registers up in. Beside [`Bdf`] in the access layer, so nothing above the
//! backends needs one to know where a device is.

use std::collections::{BTreeMap, BTreeSet};

use pmu_regs::{BitRef, Location, OtherBuses, PciRegister, ProcessorInfo, SocketBusInfo, Space};

use super::{BackendError, BackendResult, Bdf, PciAccess};

/// Intel's PCI vendor id.
pub const INTEL_VENDOR_ID: u16 = 0x8086;

/// Every (device id, device, function, unit) the processor's PCI registers live in, and the
/// devices whose config registers hold the base of a unit's memory-mapped window.
pub fn wanted_devices(processor: &ProcessorInfo) -> Vec<(u16, u8, u8, &'static str)> {
    let mut set = BTreeSet::new();
    for unit in processor.units {
        if let Some(w) = unit.mmio_window {
            set.insert((w.device_id, w.device, w.function, unit.name));
        }
        for reg in unit.registers.iter().filter(|r| r.space == Space::Pci) {
            for a in reg.known_addresses() {
                if let Location::Pci {
                    device_id,
                    device,
                    function,
                    ..
                } = a.location
                {
                    set.insert((device_id, device, function, unit.name));
                }
            }
        }
    }
    set.into_iter().collect()
}

/// The uncore devices found, by socket.
#[derive(Debug, Clone)]
pub struct UncoreDevices {
    /// The processor whose devices these are.
    pub processor: &'static ProcessorInfo,
    /// Socket 0 first.
    pub sockets: Vec<SocketDevices>,
}

/// One socket's uncore devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketDevices {
    /// PCI segment.
    pub segment: u16,
    /// The socket's uncore bus: the bus of its node-id device where discovery read one
    /// (`<socket-bus>`); its devices may sit on other buses too (Skylake-SP on).
    pub bus: u8,
    /// (device id, address), sorted.
    pub devices: Vec<(u16, Bdf)>,
    /// The physical package that owns the bus, when the node-id registers say.
    pub package: Option<u32>,
}

impl UncoreDevices {
    /// Every device of `processor` on each of the given (segment, bus) pairs: what discovery
    /// finds on a complete machine. For the simulator and tests. Where the processor's
    /// `<socket-bus>` says a socket's devices span several buses, the node-id device sits on
    /// the bus next to the given one (below it for `next-lower`, above for `next-higher`), as
    /// on the parts, so that it does not share a device and function with another box's.
    pub fn complete(processor: &'static ProcessorInfo, buses: &[(u16, u8)]) -> Self {
        let wanted = wanted_devices(processor);
        let node_device = socket_bus_rule(processor).and_then(|r| {
            let (id, device, function, _) = pci_place(&r.node_id)?;
            let step: i16 = match r.other_buses {
                OtherBuses::None => return None,
                OtherBuses::NextLower => -1,
                OtherBuses::NextHigher => 1,
            };
            Some(((id, device, function), step))
        });
        let bus_of = |bus: u8, id: u16, device: u8, function: u8| match node_device {
            Some((n, step)) if n == (id, device, function) => {
                u8::try_from(i16::from(bus) + step).unwrap_or(bus)
            }
            _ => bus,
        };
        UncoreDevices {
            processor,
            sockets: buses
                .iter()
                .map(|&(segment, bus)| {
                    let mut devices: Vec<(u16, Bdf)> = wanted
                        .iter()
                        .map(|&(id, device, function, _)| {
                            (
                                id,
                                Bdf {
                                    segment,
                                    bus: bus_of(bus, id, device, function),
                                    device,
                                    function,
                                },
                            )
                        })
                        .collect();
                    devices.sort();
                    devices.dedup();
                    SocketDevices {
                        segment,
                        bus,
                        devices,
                        package: None,
                    }
                })
                .collect(),
        }
    }

    /// The devices found, bus by bus (`(segment, bus)` -> (device id, address)), grouped into
    /// sockets as the processor's `<socket-bus>` says: each bus with the node-id device
    /// belongs to the package whose slot of the node map holds the bus's own node id, read
    /// through `pci`; any other bus goes with the nearest such bus below or above it. Sockets
    /// come in package order. Without a `<socket-bus>`, or with no node-id device found on
    /// a machine whose devices are on one bus, each bus is a socket, in bus order.
    ///
    /// A node id in no slot, two buses claiming one package, or a bus with no owner is a
    /// [`BackendError::BusOwner`]: guessing would count one socket's boxes as another's.
    pub fn by_socket(
        processor: &'static ProcessorInfo,
        by_bus: BTreeMap<(u16, u8), Vec<(u16, Bdf)>>,
        pci: &dyn PciAccess,
    ) -> BackendResult<Self> {
        let rule = socket_bus_rule(processor);
        let owners = match rule {
            Some(rule) => bus_owners(rule, &by_bus, pci)?,
            None => None,
        };
        let Some(owners) = owners else {
            let sockets = by_bus
                .into_iter()
                .map(|((segment, bus), mut devices)| {
                    devices.sort();
                    SocketDevices {
                        segment,
                        bus,
                        devices,
                        package: None,
                    }
                })
                .collect();
            return Ok(UncoreDevices { processor, sockets });
        };
        let mut sockets: BTreeMap<u32, SocketDevices> = BTreeMap::new();
        for ((segment, bus), devices) in by_bus {
            let (package, home) = owners[&(segment, bus)];
            let s = sockets.entry(package).or_insert_with(|| SocketDevices {
                segment,
                bus: home,
                devices: Vec::new(),
                package: Some(package),
            });
            s.devices.extend(devices);
        }
        let sockets = sockets
            .into_values()
            .map(|mut s| {
                s.devices.sort();
                s
            })
            .collect();
        Ok(UncoreDevices { processor, sockets })
    }

    /// The device that holds `reg` on `socket`.
    pub fn bdf<R>(&self, socket: usize, reg: PciRegister<R>) -> BackendResult<Bdf> {
        self.bdf_at(
            socket,
            reg.device_id(),
            reg.device(),
            reg.function(),
            reg.name(),
        )
    }

    /// The device with this id, device number and function on `socket`; `name` is the
    /// register asked about, for the error.
    pub fn bdf_at(
        &self,
        socket: usize,
        device_id: u16,
        device: u8,
        function: u8,
        name: &'static str,
    ) -> BackendResult<Bdf> {
        let wanted = || format!("{INTEL_VENDOR_ID:04x}:{device_id:04x} dev {device} fn {function}");
        let s = self
            .sockets
            .get(socket)
            .ok_or_else(|| BackendError::DeviceNotFound {
                register: name,
                socket,
                device: format!("{} (only {} socket(s) found)", wanted(), self.sockets.len()),
            })?;
        s.devices
            .iter()
            .find(|(id, bdf)| *id == device_id && bdf.device == device && bdf.function == function)
            .map(|(_, bdf)| *bdf)
            .ok_or_else(|| BackendError::DeviceNotFound {
                register: name,
                socket,
                device: wanted(),
            })
    }
}

/// The processor's `<socket-bus>`, on whichever unit declares it.
pub fn socket_bus_rule(processor: &ProcessorInfo) -> Option<&'static SocketBusInfo> {
    processor
        .units
        .iter()
        .find_map(|u| u.pmu.and_then(|p| p.socket_bus.as_ref()))
}

/// Where a bit of the rule is read: (device id, device, function, offset).
fn pci_place(bit: &BitRef) -> Option<(u16, u8, u8, u16)> {
    match bit.address()?.location {
        Location::Pci {
            device_id,
            device,
            function,
            offset,
        } => Some((device_id, device, function, offset)),
        Location::Msr(_) | Location::Mmio { .. } | Location::Table(_) | Location::SysReg(_) => None,
    }
}

/// Each (segment, bus) -> (package, bus of the node-id device it goes with).
type Owners = BTreeMap<(u16, u8), (u32, u8)>;

/// Each bus's (package, bus of its node-id device), or `None` when no bus has the node-id
/// device and the devices are all on one bus (nothing to tell apart).
fn bus_owners(
    rule: &SocketBusInfo,
    by_bus: &BTreeMap<(u16, u8), Vec<(u16, Bdf)>>,
    pci: &dyn PciAccess,
) -> BackendResult<Option<Owners>> {
    let (Some(node), Some(map)) = (
        pci_place(&rule.node_id),
        rule.slots.first().and_then(pci_place),
    ) else {
        return Ok(None); // the validator requires both; a hand-made spec may lack them
    };
    let (id, device, function, _) = node;
    let homes = home_packages(rule, by_bus, pci, node, map)?;
    if homes.is_empty() {
        let bus_name = |(segment, bus): (u16, u8)| format!("{segment:04x}:{bus:02x}");
        if by_bus.len() <= 1 {
            return Ok(None);
        }
        let first = *by_bus.keys().next().expect("more than one bus");
        return Err(BackendError::BusOwner {
            bus: bus_name(first),
            problem: format!(
                "uncore devices are on {} buses but none has the node-id device {:04x}:{id:04x} (dev {device} fn {function}) that says which socket owns each",
                by_bus.len(),
                super::INTEL_VENDOR_ID
            ),
        });
    }
    let bus_name = |(segment, bus): (u16, u8)| format!("{segment:04x}:{bus:02x}");
    let mut owners = BTreeMap::new();
    for &(segment, bus) in by_bus.keys() {
        let home = match homes.get(&(segment, bus)) {
            Some(&p) => Some((p, bus)),
            None => {
                let mut same = homes.iter().filter(|((s, _), _)| *s == segment);
                match rule.other_buses {
                    OtherBuses::None => None,
                    OtherBuses::NextLower => same
                        .rev()
                        .find(|((_, b), _)| *b < bus)
                        .map(|((_, b), &p)| (p, *b)),
                    OtherBuses::NextHigher => same
                        .find(|((_, b), _)| *b > bus)
                        .map(|((_, b), &p)| (p, *b)),
                }
            }
        };
        let Some(home) = home else {
            let which = match rule.other_buses {
                OtherBuses::None => {
                    "the spec puts every uncore device of a socket on the bus of its node-id device"
                }
                OtherBuses::NextLower => {
                    "no lower bus of its segment has the node-id device to take the owner from"
                }
                OtherBuses::NextHigher => {
                    "no higher bus of its segment has the node-id device to take the owner from"
                }
            };
            return Err(BackendError::BusOwner {
                bus: bus_name((segment, bus)),
                problem: format!(
                    "it holds uncore devices but not the node-id device {:04x}:{id:04x} (dev {device} fn {function}), and {which}",
                    super::INTEL_VENDOR_ID
                ),
            });
        };
        owners.insert((segment, bus), home);
    }
    Ok(Some(owners))
}

/// The package of every bus that has the node-id device, read there; a node id in no slot
/// or a package claimed twice is an error.
fn home_packages(
    rule: &SocketBusInfo,
    by_bus: &BTreeMap<(u16, u8), Vec<(u16, Bdf)>>,
    pci: &dyn PciAccess,
    node: (u16, u8, u8, u16),
    map: (u16, u8, u8, u16),
) -> BackendResult<BTreeMap<(u16, u8), u32>> {
    let (id, device, function, _) = node;
    let bus_name = |(segment, bus): (u16, u8)| format!("{segment:04x}:{bus:02x}");
    let mut homes: BTreeMap<(u16, u8), u32> = BTreeMap::new();
    let mut claimed: BTreeMap<(u16, u32), u8> = BTreeMap::new();
    for (&(segment, bus), devices) in by_bus {
        let Some(&(_, bdf)) = devices
            .iter()
            .find(|(d, b)| *d == id && b.device == device && b.function == function)
        else {
            continue;
        };
        let node_id = pci.read_dword(bdf, node.3)?;
        let node_map = pci.read_dword(bdf, map.3)?;
        let package = rule
            .package_of(u64::from(node_id), u64::from(node_map))
            .ok_or_else(|| BackendError::BusOwner {
                bus: bus_name((segment, bus)),
                problem: format!(
                    "node id {} ({} at {bdf} offset {:#x}) is in no slot of the node map {node_map:#010x} ({} at offset {:#x})",
                    rule.node_id.field.extract(u64::from(node_id)),
                    rule.node_id.qualified,
                    node.3,
                    rule.slots[0].register_name,
                    map.3
                ),
            })?;
        if let Some(other) = claimed.insert((segment, package), bus) {
            return Err(BackendError::BusOwner {
                bus: bus_name((segment, bus)),
                problem: format!(
                    "its node-id registers name package {package}, and so do those of bus {}: the node map is inconsistent",
                    bus_name((segment, other))
                ),
            });
        }
        homes.insert((segment, bus), package);
    }
    Ok(homes)
}
