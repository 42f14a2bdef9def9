//! From a PCI device to the physical address of its discovery table: the extended capability
//! list, the discovery capability (`spec/discovery/dvsec.xml`), and the BAR it names.

use std::collections::BTreeSet;

use pmu_regs::discovery::dvsec::{
    DvsecCapHeader, DvsecHeader2, DvsecTable, DVSEC_CAP_HEADER, DVSEC_HEADER2, DVSEC_TABLE,
};

use super::DiscoveryError;
use crate::access::{Bdf, PciAccess};

/// Every discovery device (8086:09a7) under `devices` (a `/sys/bus/pci/devices` directory),
/// in address order, with the tables its capabilities locate (read through `pci`, the
/// configuration space of those devices) or why none could be located.
pub fn find_in_sysfs(
    devices: &std::path::Path,
    pci: &dyn PciAccess,
) -> Vec<(Bdf, Result<Vec<Located>, DiscoveryError>)> {
    let Ok(dir) = std::fs::read_dir(devices) else {
        return Vec::new();
    };
    // Bounded: under --root these files are whatever the tree holds (a FIFO, /dev/zero).
    let read = |p: std::path::PathBuf| crate::bounded::read_text(&p, 4096).unwrap_or_default();
    let mut found: Vec<Bdf> = dir
        .flatten()
        .filter(|e| {
            read(e.path().join("vendor")).trim() == "0x8086"
                && read(e.path().join("device")).trim() == format!("{DISCOVERY_DEVICE_ID:#06x}")
        })
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|bdf| (bdf, locate(pci, bdf)))
        .collect()
}

/// The device id of Intel's generic discovery device (Linux's
/// `UNCORE_DISCOVERY_TABLE_DEVICE`); parts without it carry the capability on other devices.
pub const DISCOVERY_DEVICE_ID: u16 = 0x09A7;

/// Where the extended capabilities start (PCI Express).
const FIRST_EXTENDED_CAPABILITY: u16 = 0x100;
/// The first BAR, and the distance between BARs (PCI).
const FIRST_BAR: u16 = 0x10;
/// Six BARs in a type-0 header (PCI).
const BARS: u8 = 6;
/// The most discovery capabilities one device may carry (parts carry one); beyond, the
/// configuration space is corrupt, and each would be another table to read.
pub const MAX_TABLES_PER_DEVICE: usize = 4;

/// A discovery capability and the table it locates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    /// The device.
    pub device: Bdf,
    /// The capability's offset in the device's configuration space.
    pub capability: u16,
    /// The configuration offset of the BAR that holds the table's address.
    pub bar: u16,
    /// The table's physical address.
    pub address: u64,
}

/// Every discovery capability of `device` (extended capability id and DVSEC id as the spec's
/// reset values give them: 0x23 and 1) and the table each locates.
///
/// Errors: the list loops or points outside the extended configuration space, a capability
/// locates its table other than by a BAR alone, the BAR holds no memory address, a read fails,
/// or the device has no such capability.
pub fn locate(
    pci: &(impl PciAccess + ?Sized),
    device: Bdf,
) -> Result<Vec<Located>, DiscoveryError> {
    let read = |offset: u16, what: &str| {
        pci.read_dword(device, offset)
            .map_err(|source| DiscoveryError::Read {
                what: format!("{what} at {offset:#x} of PCI {device}"),
                source,
            })
    };
    let want_cap = DvsecCapHeader::RESET.cap_id();
    let want_id = DvsecHeader2::RESET.dvsec_id();
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    let mut at = FIRST_EXTENDED_CAPABILITY;
    loop {
        if !seen.insert(at) {
            return Err(DiscoveryError::CapabilityLoop { device, at });
        }
        let raw = read(
            at + DVSEC_CAP_HEADER.offset() as u16,
            "the capability header",
        )?;
        // An empty or absent extended space reads as 0 or all ones: no capabilities.
        if raw == 0 || raw == u32::MAX {
            break;
        }
        let header = DvsecCapHeader::from_bits(raw);
        if header.cap_id() == want_cap {
            let id =
                DvsecHeader2::from_bits(read(at + DVSEC_HEADER2.offset() as u16, "the DVSEC id")?);
            if id.dvsec_id() == want_id {
                if found.len() == MAX_TABLES_PER_DEVICE {
                    return Err(DiscoveryError::TooManyTables {
                        device,
                        limit: MAX_TABLES_PER_DEVICE,
                    });
                }
                found.push(table_of(device, at, &read)?);
            }
        }
        let next = header.next_offset();
        if next == 0 {
            break;
        }
        if next < FIRST_EXTENDED_CAPABILITY || next % 4 != 0 {
            return Err(DiscoveryError::BadCapabilityPointer { device, at, next });
        }
        at = next;
    }
    if found.is_empty() {
        return Err(DiscoveryError::NoCapability { device });
    }
    Ok(found)
}

/// The table one discovery capability at `at` locates.
fn table_of(
    device: Bdf,
    at: u16,
    read: &impl Fn(u16, &str) -> Result<u32, DiscoveryError>,
) -> Result<Located, DiscoveryError> {
    let value = read(at + DVSEC_TABLE.offset() as u16, "the table locator")?;
    let table = DvsecTable::from_bits(value);
    if table.offset() != 0 || table.bir() >= BARS {
        return Err(DiscoveryError::BadTableLocation { device, at, value });
    }
    let bar = FIRST_BAR + 4 * u16::from(table.bir());
    let low = read(bar, "the BAR")?;
    // A memory BAR (PCI): bit 0 clear; bits 2:1 are 0b10 for a 64-bit one; bits 3:0 are flags.
    let wide = low & 0b110 == 0b100;
    let high = if wide && bar + 4 < FIRST_BAR + 4 * u16::from(BARS) {
        read(bar + 4, "the BAR's upper half")?
    } else {
        0
    };
    let value = u64::from(high) << 32 | u64::from(low);
    let address = value & !0xF;
    if low & 1 != 0 || address == 0 {
        return Err(DiscoveryError::BadBar {
            device,
            offset: bar,
            value,
        });
    }
    Ok(Located {
        device,
        capability: at,
        bar,
        address,
    })
}
