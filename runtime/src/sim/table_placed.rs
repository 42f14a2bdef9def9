//! Where the simulated part puts the boxes its discovery table places (the spec's
//! `<from-table>`: the Granite Rapids PCU). No public source gives their addresses, so these
//! are the simulator's own, as a real part's would be its own: MSR boxes from
//! [`PLACED_BASE`] on, one [`PLACED_STRIDE`] apart, controls from [`CTL_OFFSET`] and counters
//! from [`CTR_OFFSET`] past the box control, each register where the spec's `<from-table>`
//! strides put it. The simulator models them there and its table lists them there.

use crate::boxes::Boxes;
use crate::table_placed::MsrPlace;

/// The first table-placed box's control: an MSR no unit of the Xeon parts the simulator runs
/// uses.
pub const PLACED_BASE: u64 = 0x3F00;
/// The distance between two table-placed boxes' controls.
pub const PLACED_STRIDE: u64 = 0x10;
/// Counter control 0, past the box control.
pub const CTL_OFFSET: u8 = 2;
/// Counter 0, past the box control.
pub const CTR_OFFSET: u8 = 8;

/// Where the simulated part puts `spec`'s table-placed boxes, by instance: what its table
/// lists them at, for [`crate::table_placed::placed_boxes`].
pub fn places(spec: &Boxes) -> Vec<(&'static str, MsrPlace)> {
    let placed = spec.boxes.iter().filter(|b| b.table_placed());
    placed
        .enumerate()
        .map(|(k, b)| {
            let at = MsrPlace {
                box_control: (PLACED_BASE + k as u64 * PLACED_STRIDE) as u32,
                ctl_offset: u32::from(CTL_OFFSET),
                ctr_offset: u32::from(CTR_OFFSET),
            };
            (b.instance, at)
        })
        .collect()
}
