//! The uncore discovery table (Sapphire Rapids on): where the part itself lists its boxes.
//!
//! A discovery device (vendor 8086, device id [`DISCOVERY_DEVICE_ID`] where the part has the
//! generic one) carries an extended capability that names one of its BARs; the physical
//! address there is the start of the table: a global state, then one entry per box with its
//! type, id, access kind, box control address, first counter control and counter, and the
//! number and width of its counters. The layouts are the spec's (`spec/discovery/`, the
//! crate's `pmu_regs::discovery`); this module only walks them:
//!
//! - [`locate`]: the capability list of a device, through [`PciAccess`](crate::PciAccess), to
//!   the table's physical address;
//! - [`read_table`]: the table, through [`MmioAccess`](crate::access::MmioAccess), to a
//!   [`DiscoveredTable`] of [`DiscoveredBox`]es;
//! - [`join`], [`join_on`]: the spec's boxes against the table's ([`Joined`]), the latter
//!   knowing what the part says of itself ([`PartFacts`]); [`table_boxes`]: the table
//!   a part would publish for a spec;
//! - [`MemoryTable`]: a table built in memory (from boxes, or from raw bytes), which the
//!   simulator publishes and tests corrupt; its format is [`crate::table_format`]'s, which
//!   the simulator uses without this module;
//! - [`read_domains`], [`join_domains`]: a part with several discovery domains
//!   (`ProcessorInfo::discovery_domains`: Diamond Rapids' IMH, through PCI device 0x09A1, and
//!   CBB, through MSR 0x710 per die), each table read and joined on its own, so a damaged
//!   one is named ([`DiscoveryError::InDomain`]) and the others stay usable.
//!
//! Every way a table can be wrong (a capability list that loops, a BAR that is not memory, a
//! global state that is empty, a size beyond [`MAX_TABLE_BYTES`], an entry past the end, two
//! entries for one box or at one address) is a [`DiscoveryError`]; the reader never reads
//! outside the size the global state declares and never panics on any bytes.

mod domains;
mod error;
mod join;
mod locate;
mod read;

pub use crate::table_format::{
    simulated_table, simulated_table_placed, table_boxes, table_boxes_placed, AccessKind,
    MemoryTable, MmioPlace, TableBox,
};
pub use domains::{
    join_domain, join_domains, read_domains, readable_domains, DomainJoined, DomainTable,
};
pub use error::DiscoveryError;
pub use join::{
    entry_place, join, join_on, msr_place, BoxStatus, Disagreement, Joined, JoinedBox, PartCount,
    PartFacts,
};
pub use locate::{find_in_sysfs, locate, Located, DISCOVERY_DEVICE_ID, MAX_TABLES_PER_DEVICE};
pub use read::{read_dump, read_table, MAX_ENTRIES, MAX_TABLE_BYTES};

use std::fmt;

/// Whether `processor`'s spec gives any unit a discovery type: the parts that publish an
/// uncore discovery table.
pub fn has_table(processor: &pmu_regs::ProcessorInfo) -> bool {
    processor
        .units
        .iter()
        .any(|u| u.pmu.is_some_and(|m| m.discovery_type.is_some()))
}

/// The ids of the processors whose spec gives a unit a discovery type, joined for a message
/// (`a, b and c`; `none` when there is none).
pub fn processors_with_a_table() -> String {
    let ids: Vec<&str> = pmu_regs::PROCESSORS
        .iter()
        .filter(|p| has_table(p))
        .map(|p| p.id)
        .collect();
    match ids.split_last() {
        None => "none".to_string(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// Where one register of a discovered box is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TableAddress {
    /// An MSR number.
    Msr(u32),
    /// A physical memory address.
    Mmio(u64),
    /// A PCI configuration register (the table's encoding: domain, bus, devfn, offset).
    Pci {
        /// PCI segment.
        domain: u8,
        /// Bus number.
        bus: u8,
        /// Device (slot) number.
        device: u8,
        /// Function number.
        function: u8,
        /// Configuration-space offset.
        offset: u16,
    },
}

impl TableAddress {
    /// The same kind of address `delta` further on (MSR numbers, or bytes). `None` when it
    /// leaves the space (an MSR number past 32 bits, a PCI offset past 4 KiB).
    pub fn plus(self, delta: u64) -> Option<TableAddress> {
        match self {
            TableAddress::Msr(a) => u32::try_from(u64::from(a) + delta)
                .ok()
                .map(TableAddress::Msr),
            TableAddress::Mmio(a) => a.checked_add(delta).map(TableAddress::Mmio),
            TableAddress::Pci {
                domain,
                bus,
                device,
                function,
                offset,
            } => {
                let off = u64::from(offset) + delta;
                (off < 0x1000).then_some(TableAddress::Pci {
                    domain,
                    bus,
                    device,
                    function,
                    offset: off as u16,
                })
            }
        }
    }
}

impl fmt::Display for TableAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableAddress::Msr(a) => write!(f, "MSR {a:#x}"),
            TableAddress::Mmio(a) => write!(f, "memory {a:#x}"),
            TableAddress::Pci {
                domain,
                bus,
                device,
                function,
                offset,
            } => write!(
                f,
                "PCI {domain:04x}:{bus:02x}:{device:02x}.{function} offset {offset:#x}"
            ),
        }
    }
}

/// One box as the table describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscoveredBox {
    /// The entry's index in the table (0: the first unit entry after the global state).
    pub entry: usize,
    /// The box type (the number a processor's driver maps to CHA, IIO, iMC ...).
    pub box_type: u16,
    /// The box's id among the boxes of its type.
    pub box_id: u16,
    /// How its registers are reached.
    pub access: AccessKind,
    /// Its box control register.
    pub box_control: TableAddress,
    /// Counter control 0: `ctl_offset` past the box control.
    pub first_control: TableAddress,
    /// Counter 0: `ctr_offset` past the box control.
    pub first_counter: TableAddress,
    /// Number of general counters.
    pub counters: u8,
    /// Width of each counter in bits.
    pub width: u8,
}

/// The global state: how the uncore's global control is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalState {
    /// The table's type.
    pub table_type: u8,
    /// How the global control is reached.
    pub access: AccessKind,
    /// The global control's raw address.
    pub control: u64,
    /// Distance between entries, in bytes.
    pub stride: u64,
    /// Unit entries the global state declares (empty ones included).
    pub max_units: u16,
}

/// An entry the reader skipped, as Linux does: empty, or of an access kind that is not defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedEntry {
    /// The entry's index.
    pub entry: usize,
    /// Why: "empty (all zero)", "access type 3 is not defined", ...
    pub reason: &'static str,
}

/// A whole discovery table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredTable {
    /// Where it was read (its physical address).
    pub address: u64,
    /// Its global state.
    pub global: GlobalState,
    /// Every box it lists, in table order.
    pub boxes: Vec<DiscoveredBox>,
    /// Entries skipped, with the reason.
    pub skipped: Vec<SkippedEntry>,
}

impl DiscoveredTable {
    /// The box of `box_type` with id `box_id`, if the table lists it.
    pub fn find(&self, box_type: u16, box_id: u16) -> Option<&DiscoveredBox> {
        self.boxes
            .iter()
            .find(|b| b.box_type == box_type && b.box_id == box_id)
    }
}
