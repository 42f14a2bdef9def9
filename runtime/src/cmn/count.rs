//! Counting the mesh's cycles on a DTC: enable, run, read, and put back what was changed.

use pmu_regs::arm_cmn_700::dtc::{DtDtcCtl, DtPmccntr, DtPmcr, DT_DTC_CTL, DT_PMCCNTR, DT_PMCR};
use pmu_regs::TableOffset;

use super::{CmnError, CmnNode, NodeType};
use crate::access::MmioAccess;

/// What [`count_cycles`] measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleCount {
    /// Cycles of the mesh clock the DTC's cycle counter counted (40 bits, wrapped).
    pub cycles: u64,
}

/// Counts the mesh clock's cycles on the DTC `dtc` (a node of the walked mesh, in the window
/// at physical address `base`) while `work` runs: sets DT_DTC_CTL.dt_en and DT_PMCR.pmu_en,
/// zeroes DT_PMCCNTR, runs `work`, reads DT_PMCCNTR, then writes back the three registers'
/// former values, whether or not reading succeeded. For the simulator and for a mesh the
/// caller owns: on a real machine the kernel's `arm_cmn` driver owns the DTC.
pub fn count_cycles<M: MmioAccess + ?Sized>(
    mmio: &M,
    base: u64,
    dtc: &CmnNode,
    work: impl FnOnce(),
) -> Result<CycleCount, CmnError> {
    if dtc.node_type != NodeType::DTC {
        return Err(CmnError::WrongLevel {
            offset: dtc.offset,
            found: dtc.node_type,
            expected: "the DTC (0x0003)",
        });
    }
    let at = |r: u32| base + dtc.offset + u64::from(r);
    let read = |r: u32| {
        mmio.read_mmio(at(r), 64).map_err(|source| CmnError::Read {
            offset: dtc.offset + u64::from(r),
            source,
        })
    };
    let write = |r: u32, v: u64| {
        mmio.write_mmio(at(r), 64, v)
            .map_err(|source| CmnError::Write {
                offset: dtc.offset + u64::from(r),
                source,
            })
    };
    let regs: [u32; 3] = [off(DT_DTC_CTL), off(DT_PMCR), off(DT_PMCCNTR)];
    let saved = [read(regs[0])?, read(regs[1])?, read(regs[2])?];
    let programmed = (|| {
        write(regs[2], DtPmccntr::from_bits(0).bits())?;
        write(
            regs[1],
            DtPmcr::from_bits(saved[1]).with_pmu_en(true).bits(),
        )?;
        write(
            regs[0],
            DtDtcCtl::from_bits(saved[0]).with_dt_en(true).bits(),
        )?;
        work();
        // Stop first, so the count read is the count of the work.
        write(
            regs[1],
            DtPmcr::from_bits(saved[1]).with_pmu_en(false).bits(),
        )?;
        read(regs[2]).map(|raw| DtPmccntr::from_bits(raw).count())
    })();
    let restored = regs
        .iter()
        .zip(saved)
        .rev()
        .try_for_each(|(r, v)| write(*r, v));
    let cycles = programmed?;
    restored?;
    Ok(CycleCount { cycles })
}

/// A table register's offset in its node's region.
fn off<R>(reg: TableOffset<R>) -> u32 {
    reg.offset()
}
