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

use pmu_regs::ProcessorInfo;

pub use crate::access::{
    wanted_devices, BadBdf, Bdf, SocketDevices, UncoreDevices, INTEL_VENDOR_ID,
};
use crate::access::{AccessError, BackendError, BackendResult, Op, PciAccess, Target};

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

    fn file(&self, op: Op, bdf: Bdf, offset: u16) -> BackendResult<Arc<File>> {
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
    /// Devices are found bus by bus and grouped into sockets by the node-id registers the
    /// processor's `<socket-bus>` names ([`UncoreDevices::by_socket`]): no bus order is
    /// assumed where the spec says how to read the owner.
    pub fn discover(&self, processor: &'static ProcessorInfo) -> BackendResult<UncoreDevices> {
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
        UncoreDevices::by_socket(processor, by_bus, self)
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
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
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

    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
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
