//! Where the simulated part puts the boxes its discovery table places (the spec's
//! `<from-table>`: the Granite Rapids PCU, B2UPI and B2CXL). No public source gives their
//! addresses, so these are the simulator's own, as a real part's would be its own, one place
//! per access type the spec gives the unit:
//!
//! - MSR boxes from [`PLACED_BASE`] on, one [`PLACED_STRIDE`] apart, controls from
//!   [`CTL_OFFSET`] and counters from [`CTR_OFFSET`] past the box control, the same MSRs on
//!   every socket;
//! - PCI boxes in device [`PLACED_PCI_DEVICE`] of each socket's uncore bus, one function per
//!   box, the box control at configuration offset [`PLACED_PCI_BOX`];
//! - memory-mapped boxes from [`PLACED_MMIO_BASE`] on, [`PLACED_MMIO_SOCKET`] apart per
//!   socket and [`PLACED_MMIO_STRIDE`] per box;
//!
//! PCI and memory-mapped boxes have their controls [`BYTE_CTL_OFFSET`] and counters
//! [`BYTE_CTR_OFFSET`] bytes past the box control. Each register is where the spec's
//! `<from-table>` strides put it; the simulator models them there and its table lists them
//! there (socket 0's, the one table it publishes).

use pmu_regs::Space;

use crate::boxes::Boxes;
use crate::table_placed::{EntryPlace, MsrPlace};
use crate::Bdf;

/// The first table-placed MSR box's control: an MSR no unit of the Xeon parts the simulator
/// runs uses.
pub const PLACED_BASE: u64 = 0x3F00;
/// The distance between two table-placed MSR boxes' controls.
pub const PLACED_STRIDE: u64 = 0x10;
/// Counter control 0, past an MSR box's control.
pub const CTL_OFFSET: u8 = 2;
/// Counter 0, past an MSR box's control.
pub const CTR_OFFSET: u8 = 8;
/// The PCI device (on each socket's uncore bus) whose functions hold the table-placed PCI
/// boxes: a device no unit of the simulated Xeon parts uses.
pub const PLACED_PCI_DEVICE: u8 = 0x1D;
/// A table-placed PCI box's control, in its function's configuration space.
pub const PLACED_PCI_BOX: u16 = 0x100;
/// The first table-placed memory-mapped box's control on socket 0: above every window the
/// simulator publishes.
pub const PLACED_MMIO_BASE: u64 = 0xF0_0000_0000;
/// The distance between two sockets' table-placed memory-mapped boxes.
pub const PLACED_MMIO_SOCKET: u64 = 0x100_0000;
/// The distance between two table-placed memory-mapped boxes of one socket.
pub const PLACED_MMIO_STRIDE: u64 = 0x1000;
/// Counter control 0, in bytes past a PCI or memory-mapped box's control.
pub const BYTE_CTL_OFFSET: u8 = 0x08;
/// Counter 0, in bytes past a PCI or memory-mapped box's control.
pub const BYTE_CTR_OFFSET: u8 = 0x28;

/// Where the simulated part puts `spec`'s table-placed boxes, by instance, on each socket of
/// `buses` (socket s's uncore bus): what its table lists them at, for
/// [`crate::table_placed::placed_on`].
pub fn places(spec: &Boxes, buses: &[u8]) -> Vec<(&'static str, Vec<EntryPlace>)> {
    let mut next = [0u64; 3];
    let mut out = Vec::new();
    for b in spec.boxes.iter().filter(|b| b.table_placed()) {
        let space = b.pmu.controls.first().map_or(Space::Msr, |r| r.space);
        let (kind, k) = match space {
            Space::Pci => (1, next[1]),
            Space::Mmio => (2, next[2]),
            _ => (0, next[0]),
        };
        next[kind] += 1;
        let on: Vec<EntryPlace> = match kind {
            1 => buses
                .iter()
                .enumerate()
                .map(|(s, &bus)| EntryPlace::Pci {
                    socket: s as u32,
                    device: Bdf {
                        segment: 0,
                        bus,
                        device: PLACED_PCI_DEVICE + (k / 8) as u8,
                        function: (k % 8) as u8,
                    },
                    box_control: PLACED_PCI_BOX,
                    ctl_offset: u16::from(BYTE_CTL_OFFSET),
                    ctr_offset: u16::from(BYTE_CTR_OFFSET),
                })
                .collect(),
            2 => (0..buses.len() as u64)
                .map(|s| EntryPlace::Mmio {
                    socket: s as u32,
                    box_control: PLACED_MMIO_BASE + s * PLACED_MMIO_SOCKET + k * PLACED_MMIO_STRIDE,
                    ctl_offset: u64::from(BYTE_CTL_OFFSET),
                    ctr_offset: u64::from(BYTE_CTR_OFFSET),
                })
                .collect(),
            _ => vec![EntryPlace::Msr(MsrPlace {
                box_control: (PLACED_BASE + k * PLACED_STRIDE) as u32,
                ctl_offset: u32::from(CTL_OFFSET),
                ctr_offset: u32::from(CTR_OFFSET),
            })],
        };
        out.push((b.instance, on));
    }
    out
}
