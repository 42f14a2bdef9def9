//! Where the simulated part puts the boxes its discovery table places (the spec's
//! `<from-table>`: the Granite Rapids PCU). No public source gives their addresses, so these
//! are the simulator's own, as a real part's would be its own: MSR boxes from
//! [`PLACED_BASE`] on, one [`PLACED_STRIDE`] apart, each laid out as Linux's generic discovery
//! driver reaches a box (controls from [`CTL_OFFSET`], counters from [`CTR_OFFSET`], one MSR
//! apart), with the spec's general counters and width.

use pmu_regs::CounterKind;

use crate::boxes::Boxes;
use crate::table_format::{AccessKind, TableBox};

/// The first table-placed box's control: an MSR no unit of the Xeon parts the simulator runs
/// uses.
pub const PLACED_BASE: u64 = 0x3F00;
/// The distance between two table-placed boxes' controls.
pub const PLACED_STRIDE: u64 = 0x10;
/// Counter control 0, past the box control.
pub const CTL_OFFSET: u8 = 2;
/// Counter 0, past the box control.
pub const CTR_OFFSET: u8 = 8;

/// The table entries of `spec`'s table-placed boxes, in spec order.
pub fn entries(spec: &Boxes) -> Vec<TableBox> {
    let placed = spec.boxes.iter().filter(|b| b.table_placed());
    placed
        .filter_map(|b| {
            let general: Vec<_> = b
                .pmu
                .counters
                .iter()
                .filter(|c| c.kind == CounterKind::General)
                .collect();
            Some((b, general.len(), general.first()?.width))
        })
        .enumerate()
        .filter_map(|(k, (b, counters, width))| {
            Some(TableBox {
                box_type: b.pmu.discovery_type?,
                box_id: b.position as u16,
                access: AccessKind::Msr,
                box_control: PLACED_BASE + k as u64 * PLACED_STRIDE,
                ctl_offset: CTL_OFFSET,
                ctr_offset: CTR_OFFSET,
                counters: counters as u8,
                width: width as u8,
            })
        })
        .collect()
}
