//! What can be wrong with a discovery table, each with what to do next.

use std::fmt;

use crate::access::{BackendError, Bdf};

/// Why a discovery table could not be located or read. Nothing is ever written while reading,
/// so no error leaves anything to undo.
#[derive(Debug)]
pub enum DiscoveryError {
    /// Reading the capability, the BAR or the global state failed.
    Read {
        /// What was being read ("the capability header at 0x100").
        what: String,
        /// The backend's error.
        source: BackendError,
    },
    /// The device has no discovery capability (id 0x23 with DVSEC id 1).
    NoCapability {
        /// The device searched.
        device: Bdf,
    },
    /// The extended capability list points back at a capability already seen, or is longer
    /// than the configuration space can hold.
    CapabilityLoop {
        /// The device.
        device: Bdf,
        /// The offset visited twice.
        at: u16,
    },
    /// A capability's next pointer is not a dword-aligned offset in 0x100..0x1000.
    BadCapabilityPointer {
        /// The device.
        device: Bdf,
        /// The capability holding the pointer.
        at: u16,
        /// The pointer.
        next: u16,
    },
    /// DVSEC_TABLE sets bits besides the BAR indicator, or names a BAR that does not exist.
    BadTableLocation {
        /// The device.
        device: Bdf,
        /// The capability.
        at: u16,
        /// The register's value.
        value: u32,
    },
    /// The BAR the capability names holds no memory address (zero, or an I/O BAR).
    BadBar {
        /// The device.
        device: Bdf,
        /// The BAR's configuration offset.
        offset: u16,
        /// The BAR's value (both dwords for a 64-bit BAR).
        value: u64,
    },
    /// The global state is empty (a first or second qword of 0 or all ones, or a third of all
    /// ones): there is no table at this address.
    EmptyGlobal {
        /// The table's address.
        address: u64,
        /// The three qwords.
        qwords: [u64; 3],
    },
    /// The entries' stride is smaller than one entry (24 bytes): entries would overlap.
    BadStride {
        /// The stride in bytes.
        stride: u64,
    },
    /// The global state declares no unit entries.
    NoUnits {
        /// The table's address.
        address: u64,
    },
    /// The global state declares a table larger than any part has.
    TooLarge {
        /// The declared size in bytes.
        bytes: u64,
        /// The most the reader accepts.
        limit: u64,
    },
    /// The global state declares more unit entries than any part has.
    TooManyEntries {
        /// The entries declared.
        entries: u16,
        /// The most the reader accepts.
        limit: u16,
    },
    /// A device carries more discovery capabilities than any part has.
    TooManyTables {
        /// The device.
        device: Bdf,
        /// The most accepted.
        limit: usize,
    },
    /// A table dumped to a file could not be read within its bounds.
    Dump {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: crate::bounded::BoundedError,
    },
    /// An entry the global state declares could not be read: the table is shorter than it says.
    Truncated {
        /// The entry's index.
        entry: usize,
        /// How many the global state declares.
        of: u16,
        /// The backend's error.
        source: BackendError,
    },
    /// An entry's address does not fit its access kind (an MSR number past 32 bits, a PCI
    /// address with bits beyond the encoding, counter offsets of zero).
    BadAddress {
        /// The entry's index.
        entry: usize,
        /// The raw box control address.
        value: u64,
        /// What is wrong.
        why: &'static str,
    },
    /// Two entries describe the same box (type and id).
    DuplicateBox {
        /// Box type.
        box_type: u16,
        /// Box id.
        box_id: u16,
        /// The entries.
        entries: (usize, usize),
    },
    /// Two entries put their box control at one address: one of them is off (by a box's
    /// stride, typically), and neither can be trusted.
    SharedAddress {
        /// The address.
        address: super::TableAddress,
        /// The entries.
        entries: (usize, usize),
    },
    /// A discovery domain's MSR (`<discovery-domain msr>`) holds no table address (0, or
    /// all ones) on the CPU it was read on.
    NoTableAddress {
        /// The MSR.
        msr: u32,
        /// The CPU it was read on.
        cpu: u32,
        /// Its value.
        value: u64,
    },
    /// What went wrong with one discovery domain's table (`<discovery-domain>`): the other
    /// domains' tables are read and joined all the same.
    InDomain {
        /// The domain's id (`cbb`).
        domain: &'static str,
        /// Its socket or die (the `per` of the domain), in order.
        index: u32,
        /// What went wrong.
        source: Box<DiscoveryError>,
    },
    /// Discovery tables that were found and could not be read: each with the socket it was
    /// taken to describe, the device that locates it, and why.
    Unread {
        /// (socket, discovery device, why), in device order.
        tables: Vec<(u32, Bdf, DiscoveryError)>,
    },
    /// Two entries' registers overlap (the range from one's box control to its last counter
    /// or control reaches into the other's): one of them is off, and programming one would
    /// write the other.
    OverlappingBoxes {
        /// The entries, in table order.
        entries: (usize, usize),
        /// Their box controls.
        addresses: (super::TableAddress, super::TableAddress),
    },
}

impl fmt::Display for DiscoveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DiscoveryError::*;
        match self {
            Read { what, source } => write!(f, "reading {what} failed: {source}"),
            NoCapability { device } => write!(f, "PCI {device} has no uncore discovery capability (extended capability 0x23 with DVSEC id 1); the part has no discovery table there (the spec gives one to {} only)", super::processors_with_a_table()),
            CapabilityLoop { device, at } => write!(f, "the extended capability list of PCI {device} loops back to offset {at:#x}; the configuration space is corrupt, do not trust it"),
            BadCapabilityPointer { device, at, next } => write!(f, "the capability at {at:#x} of PCI {device} points to {next:#x}, which is not a dword-aligned offset from 0x100 to 0xffc"),
            BadTableLocation { device, at, value } => write!(f, "the discovery capability at {at:#x} of PCI {device} locates its table as {value:#x}: only a BAR indicator 0-5 is defined (Linux refuses the same)"),
            BadBar { device, offset, value } => write!(f, "the BAR at {offset:#x} of PCI {device} holds {value:#x}, not a memory address"),
            EmptyGlobal { address, qwords } => write!(f, "the discovery table at {address:#x} has an empty global state ({:#x} {:#x} {:#x}): no table there", qwords[0], qwords[1], qwords[2]),
            BadStride { stride } => write!(f, "the discovery table's entries are {stride} bytes apart, less than the 24 bytes of one entry"),
            NoUnits { address } => write!(f, "the discovery table at {address:#x} declares no unit entries"),
            TooLarge { bytes, limit } => write!(f, "the discovery table declares {bytes} bytes, more than the {limit} any part needs; its global state is corrupt"),
            TooManyEntries { entries, limit } => write!(f, "the discovery table declares {entries} unit entries, more than the {limit} any part needs; its global state is corrupt"),
            TooManyTables { device, limit } => write!(f, "PCI {device} carries more than {limit} discovery capabilities, more than any part has; its configuration space is corrupt, do not trust it"),
            Dump { source, .. } => write!(f, "cannot read the table dump {source}"),
            Truncated { entry, of, source } => write!(f, "the discovery table ends before entry {entry} of the {of} it declares: {source}"),
            BadAddress { entry, value, why } => write!(f, "entry {entry} of the discovery table gives box control {value:#x}: {why}"),
            DuplicateBox { box_type, box_id, entries } => write!(f, "entries {} and {} of the discovery table both describe box type {box_type} id {box_id}", entries.0, entries.1),
            OverlappingBoxes { entries, addresses } => write!(f, "entries {} and {} of the discovery table overlap: the registers of the box at {} reach into those of the box at {}; one is off, so neither is used", entries.0, entries.1, addresses.0, addresses.1),
            NoTableAddress { msr, cpu, value } => write!(f, "MSR {msr:#x} on CPU {cpu} holds {value:#x}, not the address of a discovery table; the part publishes no table there"),
            InDomain { domain, index, source } => write!(f, "discovery domain {domain} (table {index}): {source}; its boxes are not used, the other domains' are"),
            Unread { tables } => {
                let each: Vec<String> = tables.iter().map(|(socket, device, e)| format!("socket {socket} (device {device}): {e}")).collect();
                write!(f, "{}", each.join("; "))
            }
            SharedAddress { address, entries } => write!(f, "entries {} and {} of the discovery table both put their box control at {address}; one is off, so neither is used", entries.0, entries.1),
        }
    }
}

impl std::error::Error for DiscoveryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DiscoveryError::Read { source, .. } | DiscoveryError::Truncated { source, .. } => {
                Some(source)
            }
            DiscoveryError::Dump { source, .. } => Some(source),
            DiscoveryError::InDomain { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
