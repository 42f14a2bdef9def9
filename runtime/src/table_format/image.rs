//! The discovery table's bytes as the spec's layouts (`spec/discovery/`) lay them out: a
//! global state and one entry per box, at a physical address, with a device whose capability
//! locates it. What the simulator publishes, and what tests build and corrupt.

use pmu_regs::discovery::dvsec::{DvsecCapHeader, DvsecHeader1, DvsecHeader2};
use pmu_regs::discovery::global::GlobalDiscoveryTable1;
use pmu_regs::discovery::unit::{UnitDiscoveryTable1, UnitDiscoveryTable3};
use pmu_regs::discovery::{dvsec, global, unit};
use pmu_regs::{FieldInfo, TableOffset};

use super::AccessKind;
use crate::access::Bdf;

/// The offset of a table register.
pub fn offset<R>(r: TableOffset<R>) -> u64 {
    u64::from(r.offset())
}

/// One box to put into a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableBox {
    /// Box type.
    pub box_type: u16,
    /// Box id.
    pub box_id: u16,
    /// How its registers are reached.
    pub access: AccessKind,
    /// The raw box control address (an MSR number, a physical address, or the PCI encoding).
    pub box_control: u64,
    /// Counter control 0, past the box control.
    pub ctl_offset: u8,
    /// Counter 0, past the box control.
    pub ctr_offset: u8,
    /// Number of counters.
    pub counters: u8,
    /// Counter width in bits.
    pub width: u8,
}

/// Where the capability sits in the device's configuration space.
const CAPABILITY: u16 = 0x100;
/// The BAR the capability names (BAR 0, a 64-bit memory BAR).
const BAR: usize = 0x10;

/// A table at a physical address, and a discovery device whose capability points at it.
/// Served as registers ([`super::serve`]), reads outside the table or the device fail as a
/// real backend's would, and nothing can be written.
#[derive(Debug, Clone)]
pub struct MemoryTable {
    /// The table's physical address.
    pub base: u64,
    /// The table's bytes (corrupt them freely).
    pub bytes: Vec<u8>,
    /// The discovery device.
    pub device: Bdf,
    /// Its configuration space, 4 KiB as dwords (corrupt it freely).
    pub config: Vec<u32>,
}

/// `value` placed into field `name` of a layout with `fields`.
fn put(fields: &[FieldInfo], name: &str, value: u64) -> u64 {
    let f = fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("the discovery layouts have a field {name}"));
    let width = f.msb - f.lsb + 1;
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    };
    (value & mask) << f.lsb
}

impl MemoryTable {
    /// A table at `base` listing `boxes` entry after entry (4 qwords apart, as Sapphire
    /// Rapids' are), with the global control at MSR `global_control`, located by a capability
    /// of `device`.
    pub fn build(base: u64, device: Bdf, global_control: u64, boxes: &[TableBox]) -> Self {
        let stride_qwords: u64 = 4;
        let stride = stride_qwords * 8;
        let mut t = MemoryTable {
            base,
            bytes: vec![0; ((boxes.len() as u64 + 1) * stride) as usize],
            device,
            config: vec![0; 1024],
        };
        let g = GlobalDiscoveryTable1::FIELDS;
        let t1 = put(g, "type", 1)
            | put(g, "stride", stride_qwords)
            | put(g, "max_units", boxes.len() as u64)
            | put(g, "access_type", 0);
        t.set_qword(offset(global::GLOBAL_DISCOVERY_TABLE1), t1);
        t.set_qword(offset(global::GLOBAL_CTL_ADDR), global_control);
        for (k, b) in boxes.iter().enumerate() {
            let at = (k as u64 + 1) * stride;
            let u1 = UnitDiscoveryTable1::FIELDS;
            let access = match b.access {
                AccessKind::Msr => 0,
                AccessKind::Mmio => 1,
                AccessKind::Pci => 2,
            };
            let q1 = put(u1, "num_regs", b.counters.into())
                | put(u1, "ctl_offset", b.ctl_offset.into())
                | put(u1, "bit_width", b.width.into())
                | put(u1, "ctr_offset", b.ctr_offset.into())
                | put(u1, "access_type", access);
            let u3 = UnitDiscoveryTable3::FIELDS;
            let q3 = put(u3, "box_type", b.box_type.into()) | put(u3, "box_id", b.box_id.into());
            t.set_qword(at + offset(unit::UNIT_DISCOVERY_TABLE1), q1);
            t.set_qword(at + offset(unit::UNIT_CTL_ADDR), b.box_control);
            t.set_qword(at + offset(unit::UNIT_DISCOVERY_TABLE3), q3);
        }
        t.publish_capability();
        t
    }

    /// Raw `bytes` at `base`, located by a well-formed capability of `device` (for tables
    /// that are corrupt from the start).
    pub fn from_bytes(base: u64, device: Bdf, bytes: Vec<u8>) -> Self {
        let mut t = MemoryTable {
            base,
            bytes,
            device,
            config: vec![0; 1024],
        };
        t.publish_capability();
        t
    }

    /// The capability at 0x100 (the only one, last in the list) and BAR 0 holding `base`.
    fn publish_capability(&mut self) {
        let cap =
            u64::from(DvsecCapHeader::RESET.bits()) | put(DvsecCapHeader::FIELDS, "cap_version", 1);
        let h1 = u64::from(DvsecHeader1::RESET.bits()) | put(DvsecHeader1::FIELDS, "length", 0x10);
        let at = usize::from(CAPABILITY);
        self.set_dword(at + dvsec::DVSEC_CAP_HEADER.offset() as usize, cap as u32);
        self.set_dword(at + dvsec::DVSEC_HEADER1.offset() as usize, h1 as u32);
        self.set_dword(
            at + dvsec::DVSEC_HEADER2.offset() as usize,
            DvsecHeader2::RESET.bits(),
        );
        self.set_dword(at + dvsec::DVSEC_TABLE.offset() as usize, 0); // BIR 0, offset 0
                                                                      // A 64-bit memory BAR: type bits 2:1 = 0b10.
        self.set_dword(BAR, (self.base as u32 & !0xF) | 0b100);
        self.set_dword(BAR + 4, (self.base >> 32) as u32);
    }

    /// Sets the dword at configuration offset `at`.
    pub fn set_dword(&mut self, at: usize, value: u32) {
        self.config[at / 4] = value;
    }

    /// Sets the qword `at` bytes into the table.
    pub fn set_qword(&mut self, at: u64, value: u64) {
        let at = at as usize;
        self.bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    /// The qword `at` bytes into the table.
    pub fn qword(&self, at: u64) -> u64 {
        let at = at as usize;
        u64::from_le_bytes(self.bytes[at..at + 8].try_into().expect("8 bytes"))
    }
}
