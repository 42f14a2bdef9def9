//! PCI configuration space through sysfs: `/sys/bus/pci/devices/<BDF>/config`, read and written
//! a dword at a time, and discovery of each socket's uncore devices by vendor and device id.
//!
//! The ids looked for come from the generated metadata (every PCI register's device id, device
//! and function), never from a second list here.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pmu_regs::{Location, ProcessorInfo};

pub use crate::access::{
    wanted_devices, BadBdf, Bdf, SocketDevices, UncoreDevices, INTEL_VENDOR_ID,
};
use crate::access::{AccessError, BackendError, Op, PciAccess, Result, Target};

/// The sysfs PCI backend.
#[derive(Debug)]
pub struct PciSysfs {
    root: PathBuf,
    files: Mutex<HashMap<(Bdf, bool), Arc<File>>>,
}

impl Default for PciSysfs {
    fn default() -> Self {
        Self::new()
    }
}

impl PciSysfs {
    /// The real devices under `/sys/bus/pci/devices`.
    pub fn new() -> Self {
        Self::with_root("/sys/bus/pci/devices")
    }

    /// Devices under `root` (`root/<BDF>/config`).
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            files: Mutex::new(HashMap::new()),
        }
    }

    /// The directory of device directories.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The config file of `bdf`.
    pub fn config_path(&self, bdf: Bdf) -> PathBuf {
        self.root.join(bdf.to_string()).join("config")
    }

    fn file(&self, op: Op, bdf: Bdf, offset: u16) -> Result<Arc<File>> {
        let write = op == Op::Write;
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = files.get(&(bdf, write)) {
            return Ok(Arc::clone(f));
        }
        let path = self.config_path(bdf);
        let file = OpenOptions::new()
            .read(!write)
            .write(write)
            .open(&path)
            .map_err(|e| BackendError::from_io(op, Target::Pci { bdf, offset }, path, e))?;
        let file = Arc::new(file);
        files.insert((bdf, write), Arc::clone(&file));
        Ok(file)
    }

    /// Finds the uncore devices of `processor` under the root, one group per socket.
    ///
    /// Devices are grouped by bus. Each bus's owner is read from the node-id registers where
    /// the spec has them (E5-2600: U-box CPUNODEID and GIDNIDMAP) and sockets are ordered by
    /// package; failing that, by (segment, bus), which is how these platforms' firmware
    /// usually assigns uncore buses (socket 0 lowest).
    pub fn discover(&self, processor: &'static ProcessorInfo) -> Result<UncoreDevices> {
        let wanted = wanted_devices(processor);
        let looked_for = || {
            wanted
                .iter()
                .map(|(id, dev, func, unit)| {
                    format!("{INTEL_VENDOR_ID:04x}:{id:04x} ({unit}, dev {dev} fn {func})")
                })
                .collect::<Vec<_>>()
        };
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(_) => {
                return Err(BackendError::NoUncoreDevices {
                    root: self.root.clone(),
                    looked_for: looked_for(),
                })
            }
        };
        let mut by_bus: BTreeMap<(u16, u8), Vec<(u16, Bdf)>> = BTreeMap::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(bdf) = name.parse::<Bdf>() else {
                continue;
            };
            let Some((vendor, device_id)) = read_ids(&entry.path()) else {
                continue;
            };
            if vendor != INTEL_VENDOR_ID {
                continue;
            }
            if wanted.iter().any(|(id, dev, func, _)| {
                *id == device_id && *dev == bdf.device && *func == bdf.function
            }) {
                by_bus
                    .entry((bdf.segment, bdf.bus))
                    .or_default()
                    .push((device_id, bdf));
            }
        }
        if by_bus.is_empty() {
            return Err(BackendError::NoUncoreDevices {
                root: self.root.clone(),
                looked_for: looked_for(),
            });
        }
        let mut sockets: Vec<SocketDevices> = by_bus
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
        // Where the spec has the node-id registers (E5-2600 U-box CPUNODEID and GIDNIDMAP),
        // each bus says which package owns it: its local node id is found in the node map at
        // the package's position. Sockets are then ordered by package; otherwise by bus.
        if let Some((node_id, node_map)) = node_id_registers(processor) {
            for s in &mut sockets {
                s.package = self.package_of(s, node_id, node_map);
            }
            if sockets.iter().all(|s| s.package.is_some()) {
                sockets.sort_by_key(|s| s.package);
            }
        }
        Ok(UncoreDevices { processor, sockets })
    }
}

/// Where a PCI register is: device id, device, function, offset.
type PciPlace = (u16, u8, u8, u16);

/// The CPUNODEID and GIDNIDMAP registers of `processor`, when its spec has them with an
/// address.
fn node_id_registers(processor: &ProcessorInfo) -> Option<(PciPlace, PciPlace)> {
    let find = |suffix: &str| {
        processor
            .units
            .iter()
            .flat_map(|u| u.registers.iter())
            .filter(|r| r.name.ends_with(suffix))
            .flat_map(|r| r.known_addresses())
            .find_map(|a| match a.location {
                Location::Pci {
                    device_id,
                    device,
                    function,
                    offset,
                } => Some((device_id, device, function, offset)),
                Location::Msr(_) | Location::Mmio { .. } | Location::Table(_) => None,
            })
    };
    Some((find("CPUNODEID")?, find("GIDNIDMAP")?))
}

impl PciSysfs {
    /// The package that owns `socket`'s bus, from its node-id registers (Linux's method:
    /// the position of the local node id in the node map), or `None` if they cannot be read.
    fn package_of(
        &self,
        socket: &SocketDevices,
        node_id: PciPlace,
        node_map: PciPlace,
    ) -> Option<u32> {
        let read = |(_, device, function, offset): PciPlace| {
            let bdf = Bdf {
                segment: socket.segment,
                bus: socket.bus,
                device,
                function,
            };
            self.read_dword(bdf, offset).ok()
        };
        let local = read(node_id)? & 0b111;
        let map = read(node_map)?;
        (0..8).find(|i| (map >> (3 * i)) & 0b111 == local)
    }
}

/// Vendor and device id of a sysfs device directory: from its `vendor`/`device` files, or the
/// first four bytes of `config` when those are absent.
fn read_ids(dir: &Path) -> Option<(u16, u16)> {
    let attr = |name: &str| {
        let text = std::fs::read_to_string(dir.join(name)).ok()?;
        u16::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok()
    };
    if let (Some(v), Some(d)) = (attr("vendor"), attr("device")) {
        return Some((v, d));
    }
    let file = File::open(dir.join("config")).ok()?;
    let mut buf = [0u8; 4];
    file.read_exact_at(&mut buf, 0).ok()?;
    Some((
        u16::from_le_bytes([buf[0], buf[1]]),
        u16::from_le_bytes([buf[2], buf[3]]),
    ))
}

impl PciAccess for PciSysfs {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> Result<u32> {
        let target = Target::Pci { bdf, offset };
        let file = self.file(Op::Read, bdf, offset)?;
        let mut buf = [0u8; 4];
        match file.read_at(&mut buf, u64::from(offset)) {
            Ok(4) => Ok(u32::from_le_bytes(buf)),
            Ok(n) => Err(BackendError::access(
                Op::Read,
                target,
                AccessError::Short { done: n, wanted: 4 },
            )),
            Err(e) => Err(BackendError::from_io(
                Op::Read,
                target,
                self.config_path(bdf),
                e,
            )),
        }
    }

    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> Result<()> {
        let target = Target::Pci { bdf, offset };
        let file = self.file(Op::Write, bdf, offset)?;
        match file.write_at(&value.to_le_bytes(), u64::from(offset)) {
            Ok(4) => Ok(()),
            Ok(n) => Err(BackendError::access(
                Op::Write,
                target,
                AccessError::Short { done: n, wanted: 4 },
            )),
            Err(e) => Err(BackendError::from_io(
                Op::Write,
                target,
                self.config_path(bdf),
                e,
            )),
        }
    }
}
