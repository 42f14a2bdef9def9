//! The uncore discovery table's format, which the discovery reader (the `discovery` module)
//! and the simulator both use, neither through the other: how a box is reached
//! ([`AccessKind`]), a table's bytes ([`MemoryTable`], [`image`]), those bytes served as
//! registers ([`serve`]), and the table a part would publish for a spec ([`spec`]).

pub mod image;
pub mod serve;
pub mod spec;

pub use image::{offset, MemoryTable, TableBox};
pub use spec::{
    simulated_table, simulated_table_placed, spec_view, table_boxes, table_boxes_placed, MmioPlace,
    SpecView,
};

/// How a box's registers are reached, as the table's `access_type` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AccessKind {
    /// MSR numbers.
    Msr,
    /// Physical memory addresses.
    Mmio,
    /// PCI configuration addresses.
    Pci,
}

impl AccessKind {
    /// `msr`, `mmio`, `pci`.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::Msr => "msr",
            AccessKind::Mmio => "mmio",
            AccessKind::Pci => "pci",
        }
    }
}
