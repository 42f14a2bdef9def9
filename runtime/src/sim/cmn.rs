//! A simulated CMN-700 mesh: a [`MeshImage`] built from a [`MeshLayout`], whose DTCs' cycle
//! counters count the mesh clock as the CMN-700 TRM and Linux's `arm-cmn.c` describe.
//!
//! DT_PMCCNTR (40 bits) advances by the cycles [`SimCmn::advance`] is given while both its
//! DTC's DT_DTC_CTL.dt_en and DT_PMCR.pmu_en are set, and wraps at 2^40, setting
//! DT_PMOVSR.cycle_counter (bit 8; Linux's `CMN_DT_NUM_COUNTERS`); writing 1s to
//! DT_PMOVSR_CLR clears those bits of DT_PMOVSR, and reads as zero. The node and child info
//! are read-only: writes to a node's first 0x100 bytes are refused. Not modelled: the DTMs'
//! local counters and the global counters they feed, DT_PMCR.cntr_rst and cntcfg,
//! watchpoints, interrupts.

use pmu_regs::arm_cmn_700::dtc::{DtDtcCtl, DtPmcr};
use pmu_regs::arm_cmn_700::dtc::{
    DtPmovsr, DT_DTC_CTL, DT_PMCCNTR, DT_PMCR, DT_PMOVSR, DT_PMOVSR_CLR,
};

use crate::access::{AccessError, BackendError, BackendResult, MmioAccess, Op, Target};
use crate::cmn::{MeshImage, MeshLayout, NodeType, NODE_REGION};

/// The cycle counter's width (Linux: a 40-bit counter, `CMN_CC_INIT` its top bit).
const CYCLE_BITS: u32 = 40;

/// The read-only head of every node's region (node info, child info, child pointers).
const READ_ONLY_HEAD: u64 = 0x100;

/// A simulated mesh behind [`MmioAccess`].
#[derive(Debug)]
pub struct SimCmn {
    layout: MeshLayout,
    image: MeshImage,
}

impl SimCmn {
    /// The mesh `layout`, its window at physical address `base`.
    pub fn new(layout: MeshLayout, base: u64) -> Self {
        let image = layout.build(base);
        Self { layout, image }
    }

    /// The window's physical address.
    pub fn base(&self) -> u64 {
        self.image.base()
    }

    /// The window's size.
    pub fn size(&self) -> u64 {
        self.image.size()
    }

    /// A copy of the window's bytes (to compare before and after a session).
    pub fn bytes(&self) -> Vec<u8> {
        self.image.bytes()
    }

    /// The region offsets of the mesh's DTCs.
    fn dtcs(&self) -> impl Iterator<Item = u64> + '_ {
        self.layout
            .devices
            .iter()
            .enumerate()
            .filter(|(_, d)| d.node_type == NodeType::DTC)
            .map(|(i, _)| self.layout.device_offset(i))
    }

    /// `cycles` of the mesh clock pass: every enabled DTC's cycle counter counts them.
    pub fn advance(&self, cycles: u64) -> BackendResult<()> {
        let base = self.base();
        for dtc in self.dtcs() {
            let reg = |r: u32| base + dtc + u64::from(r);
            let ctl = DtDtcCtl::from_bits(self.image.read_mmio(reg(DT_DTC_CTL.offset()), 64)?);
            let pmcr = DtPmcr::from_bits(self.image.read_mmio(reg(DT_PMCR.offset()), 64)?);
            if !(ctl.dt_en() && pmcr.pmu_en()) {
                continue;
            }
            let mask = (1u64 << CYCLE_BITS) - 1;
            let before = self.image.read_mmio(reg(DT_PMCCNTR.offset()), 64)? & mask;
            let sum = u128::from(before) + u128::from(cycles);
            self.image
                .write_mmio(reg(DT_PMCCNTR.offset()), 64, (sum as u64) & mask)?;
            if sum > u128::from(mask) {
                let status = self.image.read_mmio(reg(DT_PMOVSR.offset()), 64)?;
                let set = DtPmovsr::CYCLE_COUNTER_BITS.set(status, 1);
                self.image.write_mmio(reg(DT_PMOVSR.offset()), 64, set)?;
            }
        }
        Ok(())
    }
}

impl MmioAccess for SimCmn {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        let offset = address.wrapping_sub(self.base());
        let in_node = offset % NODE_REGION;
        if in_node == u64::from(DT_PMOVSR_CLR.offset())
            && self.dtcs().any(|d| d == offset - in_node)
        {
            return Ok(0);
        }
        self.image.read_mmio(address, width)
    }

    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        let offset = address.wrapping_sub(self.base());
        let in_node = offset % NODE_REGION;
        if in_node < READ_ONLY_HEAD {
            let refused = AccessError::Rejected;
            return Err(BackendError::access(
                Op::Write,
                Target::Mmio { address },
                refused,
            ));
        }
        let node = offset - in_node;
        if in_node == u64::from(DT_PMOVSR_CLR.offset()) && self.dtcs().any(|d| d == node) {
            let status_at = address - in_node + u64::from(DT_PMOVSR.offset());
            let status = self.image.read_mmio(status_at, 64)?;
            return self.image.write_mmio(status_at, 64, status & !value);
        }
        self.image.write_mmio(address, width, value)
    }
}
