//! Counting on the mesh as Linux's `arm_cmn` programs it: the DTC's cycle counter, or one
//! device node's event through its crosspoint's DTM and a DTC global counter; every register
//! changed is put back.

use pmu_regs::arm_cmn_700::dtc::{
    DtDtcCtl, DtPmccntr, DtPmcr, DtPmevcntAb, DT_DTC_CTL, DT_PMCCNTR, DT_PMCR, DT_PMEVCNT_AB,
};
use pmu_regs::arm_cmn_700::dtm::{
    DtmControl, DtmPmevcnt, DtmPmuConfig, DTM_CONTROL, DTM_PMEVCNT, DTM_PMU_CONFIG,
};
use pmu_regs::{Location, NodeInput, RegisterInfo, TableOffset};

use super::window::Window;
use super::{CmnError, CmnMesh, CmnNode, MeshEvent, NodeType};
use crate::access::MmioAccess;

/// What [`count_cycles`] measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleCount {
    /// Cycles of the mesh clock the DTC's cycle counter counted (40 bits, wrapped).
    pub cycles: u64,
}

/// A register's offset in the node at `node`.
fn at<R>(node: &CmnNode, reg: TableOffset<R>) -> u64 {
    node.offset + u64::from(reg.offset())
}

fn refuse(node: &CmnNode, expected: &'static str) -> CmnError {
    CmnError::WrongLevel {
        offset: node.offset,
        found: node.node_type,
        expected,
    }
}

/// Counts the mesh clock's cycles on the DTC `dtc` (a node of the walked mesh, in the window
/// at physical address `base`) while `work` runs: sets DT_DTC_CTL.dt_en and DT_PMCR.pmu_en,
/// zeroes DT_PMCCNTR, runs `work`, stops and reads DT_PMCCNTR, then writes back the three
/// registers' former values, whether or not reading succeeded. For the simulator and for a
/// mesh the caller owns: on a real machine the kernel's `arm_cmn` driver owns the DTC.
pub fn count_cycles<M: MmioAccess + ?Sized>(
    mmio: &M,
    base: u64,
    dtc: &CmnNode,
    work: impl FnOnce(),
) -> Result<CycleCount, CmnError> {
    if dtc.node_type != NodeType::DTC {
        return Err(refuse(dtc, "the DTC (0x0003)"));
    }
    // The DTC is a node of a walked mesh: its registers are inside the window.
    let w = Window {
        mmio,
        base,
        size: u64::MAX,
    };
    let regs = [at(dtc, DT_DTC_CTL), at(dtc, DT_PMCR), at(dtc, DT_PMCCNTR)];
    w.saved(&regs, |saved| {
        w.write(regs[2], DtPmccntr::from_bits(0).bits())?;
        w.write(
            regs[1],
            DtPmcr::from_bits(saved[1]).with_pmu_en(true).bits(),
        )?;
        w.write(
            regs[0],
            DtDtcCtl::from_bits(saved[0]).with_dt_en(true).bits(),
        )?;
        work();
        // Stop first, so the count read is the count of the work.
        w.write(
            regs[1],
            DtPmcr::from_bits(saved[1]).with_pmu_en(false).bits(),
        )?;
        let cycles = DtPmccntr::from_bits(w.read(regs[2])?).count();
        Ok(CycleCount { cycles })
    })
}

/// The offset of table register `info` in the node at `node`.
fn at_info(node: &CmnNode, info: &RegisterInfo) -> Option<u64> {
    info.known_addresses()
        .iter()
        .find_map(|a| match a.location {
            Location::Table(o) => Some(node.offset + u64::from(o)),
            _ => None,
        })
}

/// The node's event select with `event` in slot 0 and its filter (if it takes one) set.
fn select_value(event: &MeshEvent, saved: u64) -> Option<u64> {
    let info = event.node.select;
    let slot = info.field(event.node.slots.first()?)?;
    let v = slot
        .insert(info.name, saved, u64::from(event.event.id))
        .ok()?;
    match event.event.filter {
        Some(f) => info
            .field(f)?
            .insert(info.name, v, u64::from(event.event.occupid))
            .ok(),
        None => Some(v),
    }
}

/// Counts `event` (a device node's event of the spec, [`MeshEvent::named`]) on `node` while
/// `work` runs, as Linux's `arm_cmn_event_add` programs it for one node: the event id in
/// slot 0 of the node's event select (and its filter's occupid), its crosspoint's DTM local
/// counter 0 taking input 0x10 + (port << 4) + (device << 2) and paired with DTC global
/// counter 0 (A), the DTM and the mesh's first DTC enabled. The count is the local counter
/// plus the global counter's carries above its 16 bits (`arm_cmn_event_read`: local + global
/// << 16). Every register written is put back. The node id is read as on a mesh whose
/// crosspoints have two device ports (port bit 2, device bits 1:0).
pub fn count_event<M: MmioAccess + ?Sized>(
    mmio: &M,
    base: u64,
    mesh: &CmnMesh,
    node: &CmnNode,
    event: &MeshEvent,
    work: impl FnOnce(),
) -> Result<u64, CmnError> {
    let wanted = event.node.node_type;
    if node.node_type != wanted || event.node.input != NodeInput::Device {
        return Err(refuse(node, "a device node of the event's node type"));
    }
    let xp = mesh
        .xps
        .iter()
        .find(|x| Some(x.offset) == node.parent)
        .ok_or_else(|| refuse(node, "a device node under a crosspoint"))?;
    let dtc = mesh
        .of_type(NodeType::DTC)
        .next()
        .ok_or_else(|| refuse(&mesh.root, "a mesh with a DTC"))?;
    let select = at_info(node, event.node.select)
        .ok_or_else(|| refuse(node, "a node whose event select has a table offset"))?;
    let (port, dev) = ((node.node_id >> 2) & 1, node.node_id & 3);
    let input = (0x10 + (port << 4) + (dev << 2)) as u8;
    // Every node is of a walked mesh: its registers are inside the window.
    let w = Window {
        mmio,
        base,
        size: u64::MAX,
    };
    let regs = [
        select,
        at(xp, DTM_CONTROL),
        at(xp, DTM_PMU_CONFIG),
        at(xp, DTM_PMEVCNT),
        at(dtc, DT_DTC_CTL),
        at(dtc, DT_PMCR),
        at(dtc, DT_PMEVCNT_AB),
    ];
    w.saved(&regs, |s| {
        let sel = select_value(event, s[0])
            .ok_or_else(|| refuse(node, "an event whose id and filter fit the select"))?;
        let config = DtmPmuConfig::from_bits(s[2])
            .with_pmevcnt0_input_sel(input)
            .with_pmevcnt0_global_num(0)
            .with_pmevcnt_paired(DtmPmuConfig::from_bits(s[2]).pmevcnt_paired() | 1)
            .with_pmu_en(true);
        w.write(regs[0], sel)?;
        w.write(regs[3], DtmPmevcnt::from_bits(s[3]).with_pmevcnt0(0).bits())?;
        w.write(
            regs[6],
            DtPmevcntAb::from_bits(s[6]).with_counter_a(0).bits(),
        )?;
        w.write(regs[2], config.bits())?;
        w.write(
            regs[1],
            DtmControl::from_bits(s[1]).with_dtm_enable(true).bits(),
        )?;
        w.write(regs[5], DtPmcr::from_bits(s[5]).with_pmu_en(true).bits())?;
        w.write(regs[4], DtDtcCtl::from_bits(s[4]).with_dt_en(true).bits())?;
        work();
        w.write(regs[5], DtPmcr::from_bits(s[5]).with_pmu_en(false).bits())?;
        let local = DtmPmevcnt::from_bits(w.read(regs[3])?).pmevcnt0();
        let global = DtPmevcntAb::from_bits(w.read(regs[6])?).counter_a();
        Ok(u64::from(local) + (u64::from(global) << 16))
    })
}
