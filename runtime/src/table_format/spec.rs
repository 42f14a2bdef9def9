//! The table a part would publish for a spec: its boxes as table entries, from the spec's
//! structure and addresses.

use pmu_regs::{CounterKind, Location};

use super::{AccessKind, MemoryTable, TableBox};
use crate::boxes::{Boxes, PmuBox, Reg};

/// What the spec says of box `b` that the table would say: its box control, first counter
/// control and counter, and its general counters' number and width.
pub struct SpecView {
    /// The box control.
    pub box_control: Option<Reg>,
    /// The first general counter's control.
    pub first_control: Option<Reg>,
    /// The first general counter.
    pub first_counter: Option<Reg>,
    /// How many general counters.
    pub counters: usize,
    /// Their width.
    pub width: Option<u32>,
}

/// [`SpecView`] of `b`.
pub fn spec_view(b: &PmuBox) -> SpecView {
    let general: Vec<_> = b
        .counters
        .iter()
        .filter(|c| c.info.kind == CounterKind::General)
        .collect();
    let first = general.iter().min_by_key(|c| c.number());
    SpecView {
        box_control: b.controls.first().copied(),
        first_control: first.and_then(|c| c.control),
        first_counter: first.map(|c| c.counter),
        counters: general.len(),
        width: first.map(|c| c.info.width),
    }
}

/// Where a memory-mapped register is on the part (its physical address), or `None`.
pub type MmioPlace<'a> = &'a dyn Fn(Reg) -> Option<u64>;

/// The table the simulated part publishes for `spec` at `base`, located by `device`: the boxes
/// of [`table_boxes`], and as the global control the spec's global control MSR, or where the
/// spec has none the first box's control (a table's global control must be non-zero to be
/// read at all). `None` when no unit takes part.
pub fn simulated_table(spec: &'static Boxes, base: u64, device: crate::Bdf) -> Option<MemoryTable> {
    simulated_table_placed(spec, base, device, &|_| None)
}

/// [`simulated_table`] with the memory-mapped boxes too, each at the physical address `mmio`
/// gives its registers (what the simulator, which places the windows, publishes).
pub fn simulated_table_placed(
    spec: &'static Boxes,
    base: u64,
    device: crate::Bdf,
    mmio: MmioPlace<'_>,
) -> Option<MemoryTable> {
    let boxes = table_boxes_placed(spec, device.bus, mmio)?;
    let global = spec
        .global
        .as_ref()
        .and_then(|g| g.control.msr())
        .map_or(boxes[0].box_control, u64::from);
    Some(MemoryTable::build(base, device, global, &boxes))
}

/// The table a part would publish for `spec`: every MSR and PCI box of every unit with a
/// `discovery-type`, from the spec's addresses (PCI boxes on bus `bus`); `None` when no unit
/// takes part. Memory-mapped boxes need their window's base: [`table_boxes_placed`].
pub fn table_boxes(spec: &'static Boxes, bus: u8) -> Option<Vec<TableBox>> {
    table_boxes_placed(spec, bus, &|_| None)
}

/// [`table_boxes`], with each memory-mapped box at the physical addresses `mmio` gives (a box
/// it places nowhere is left out). A box whose counter control 0 or counter 0 is more than
/// 255 bytes (or MSRs) past its box control cannot be written in the table's one-byte offsets
/// and is left out too.
pub fn table_boxes_placed(
    spec: &'static Boxes,
    bus: u8,
    mmio: MmioPlace<'_>,
) -> Option<Vec<TableBox>> {
    let mut out = Vec::new();
    for b in &spec.boxes {
        let Some(box_type) = b.pmu.discovery_type else {
            continue;
        };
        let v = spec_view(b);
        let (Some(ctl), Some(c0), Some(r0)) = (v.box_control, v.first_control, v.first_counter)
        else {
            continue;
        };
        let raw = |r: Reg| -> Option<(AccessKind, u64)> {
            match r.addr.location {
                Location::Msr(a) => Some((AccessKind::Msr, u64::from(a))),
                Location::Pci {
                    device,
                    function,
                    offset,
                    ..
                } => Some((
                    AccessKind::Pci,
                    u64::from(placed_bus(r).unwrap_or(bus)) << 20
                        | u64::from(device << 3 | function) << 12
                        | u64::from(offset),
                )),
                Location::Mmio { .. } => mmio(r).map(|a| (AccessKind::Mmio, a)),
                Location::Table(_) | Location::SysReg(_) => None,
            }
        };
        let (Some((access, base)), Some((_, c0)), Some((_, r0))) = (raw(ctl), raw(c0), raw(r0))
        else {
            continue;
        };
        let off = |a: u64| u8::try_from(a.checked_sub(base)?).ok().filter(|o| *o > 0);
        let (Some(ctl_offset), Some(ctr_offset)) = (off(c0), off(r0)) else {
            continue;
        };
        out.push(TableBox {
            box_type,
            box_id: b.position as u16,
            access,
            box_control: base,
            ctl_offset,
            ctr_offset,
            counters: v.counters as u8,
            width: v.width.unwrap_or(0) as u8,
        });
    }
    (!out.is_empty()).then_some(out)
}

/// The bus a table-placed PCI register sits on, on socket 0 (the one its place names).
fn placed_bus(r: Reg) -> Option<u8> {
    match crate::table_placed::site(r.addr, 0)? {
        Ok(crate::Site::Device(bdf)) => Some(bdf.bus),
        _ => None,
    }
}
