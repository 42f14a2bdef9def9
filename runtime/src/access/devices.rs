//! Where a processor's uncore PCI devices are, socket by socket: what discovery finds (the
//! sysfs backend, `pci::PciSysfs::discover`) or the simulator makes, and what sampling and
//! counting look registers up in. Beside [`Bdf`] in the access layer, so nothing above the
//! backends needs one to know where a device is.

use std::collections::BTreeSet;

use pmu_regs::{Location, PciRegister, ProcessorInfo, Space};

use super::{BackendError, Bdf, Result};

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
    /// The socket's uncore bus.
    pub bus: u8,
    /// (device id, address), sorted.
    pub devices: Vec<(u16, Bdf)>,
    /// The physical package that owns the bus, when the node-id registers say.
    pub package: Option<u32>,
}

impl UncoreDevices {
    /// Every device of `processor` on each of the given (segment, bus) pairs: what discovery
    /// finds on a complete machine. For the simulator and tests.
    pub fn complete(processor: &'static ProcessorInfo, buses: &[(u16, u8)]) -> Self {
        let wanted = wanted_devices(processor);
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
                                    bus,
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

    /// The device that holds `reg` on `socket`.
    pub fn bdf<R>(&self, socket: usize, reg: PciRegister<R>) -> Result<Bdf> {
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
    ) -> Result<Bdf> {
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
