//! A simulated CMN-700 mesh: a [`MeshImage`] built from a [`MeshLayout`], whose DTCs' cycle
//! counters count the mesh clock as the CMN-700 TRM and Linux's `arm-cmn.c` describe.
//!
//! DT_PMCCNTR (40 bits) advances by the cycles [`SimCmn::advance`] is given while both its
//! DTC's DT_DTC_CTL.dt_en and DT_PMCR.pmu_en are set, and wraps at 2^40, setting
//! DT_PMOVSR.cycle_counter (bit 8; Linux's `CMN_DT_NUM_COUNTERS`); writing 1s to
//! DT_PMOVSR_CLR clears those bits of DT_PMOVSR, and reads as zero. The node and child info
//! are read-only: writes to a node's first 0x100 bytes are refused. A device node's events
//! ([`SimCmn::inject`]) count on its crosspoint's DTM local counters that select them, whose
//! carries feed the DTC global counters they are paired with. Not modelled: XP and watchpoint
//! inputs, several DTMs per crosspoint, DT_PMCR.cntr_rst and cntcfg, snapshots, interrupts.

use pmu_regs::arm_cmn_700::dtc::{DtDtcCtl, DtPmcr, DT_PMEVCNT_AB};
use pmu_regs::arm_cmn_700::dtc::{
    DtPmovsr, DT_DTC_CTL, DT_PMCCNTR, DT_PMCR, DT_PMOVSR, DT_PMOVSR_CLR,
};
use pmu_regs::arm_cmn_700::dtm::{
    DtmControl, DtmPmuConfig, DTM_CONTROL, DTM_PMEVCNT, DTM_PMU_CONFIG,
};
use pmu_regs::arm_cmn_700::hnf::HNF_PMU_EVENT_SEL;

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

impl SimCmn {
    /// `count` occurrences of event `eventid` in device node `device` (an index into the
    /// layout's devices): each of its crosspoint's DTM local counters whose input is this node's
    /// slot n (0x10 + (port << 4) + (device << 2) + n) while the node's PMU_EVENT_SEL slot n is
    /// `eventid` counts them, with DTM_CONTROL.dtm_enable and DTM_PMU_CONFIG.pmu_en set. A
    /// local counter is 16 bits; when it is paired with a global counter (pmevcnt_paired bit
    /// n) its carries add to the DTC global counter its global_num names, when that DTC is
    /// enabled, a global counter's own wrap setting its DT_PMOVSR bit.
    pub fn inject(&self, device: usize, eventid: u8, count: u64) -> BackendResult<()> {
        let Some(d) = self.layout.devices.get(device).copied() else {
            return Ok(());
        };
        let base = self.base();
        let xp = base + self.layout.xp_offset(d.xp);
        let control = DtmControl::from_bits(
            self.image
                .read_mmio(xp + u64::from(DTM_CONTROL.offset()), 64)?,
        );
        let config = DtmPmuConfig::from_bits(
            self.image
                .read_mmio(xp + u64::from(DTM_PMU_CONFIG.offset()), 64)?,
        );
        if !(control.dtm_enable() && config.pmu_en()) {
            return Ok(());
        }
        let node = base + self.layout.device_offset(device);
        let select = self
            .image
            .read_mmio(node + u64::from(HNF_PMU_EVENT_SEL.offset()), 64)?;
        let counters_at = xp + u64::from(DTM_PMEVCNT.offset());
        for n in 0..4u32 {
            let input = (config.bits() >> (32 + 8 * n)) & 0x3F;
            let wanted = 0x10 + (u64::from(d.port) << 4) + (u64::from(d.dev) << 2) + u64::from(n);
            if input != wanted || (select >> (8 * n)) & 0xFF != u64::from(eventid) {
                continue;
            }
            let counters = self.image.read_mmio(counters_at, 64)?;
            let sum = ((counters >> (16 * n)) & 0xFFFF) + count;
            let cleared = counters & !(0xFFFF << (16 * n));
            self.image
                .write_mmio(counters_at, 64, cleared | ((sum & 0xFFFF) << (16 * n)))?;
            if config.pmevcnt_paired() & (1 << n) != 0 {
                let global = (config.bits() >> (16 + 4 * n)) & 0x7;
                self.carry(global as u32, sum >> 16)?;
            }
        }
        Ok(())
    }

    /// `carries` into global counter `n` of every enabled DTC (32 bits, registers paired on a
    /// 16-byte stride: Linux's _CMN_DT_CNT_REG).
    fn carry(&self, n: u32, carries: u64) -> BackendResult<()> {
        let base = self.base();
        for dtc in self.dtcs().collect::<Vec<_>>() {
            let reg = |r: u32| base + dtc + u64::from(r);
            let ctl = DtDtcCtl::from_bits(self.image.read_mmio(reg(DT_DTC_CTL.offset()), 64)?);
            let pmcr = DtPmcr::from_bits(self.image.read_mmio(reg(DT_PMCR.offset()), 64)?);
            if !(ctl.dt_en() && pmcr.pmu_en()) {
                continue;
            }
            let at = reg(DT_PMEVCNT_AB.offset()) + u64::from(((n / 2) * 4 + n % 2) * 4);
            let sum = self.image.read_mmio(at, 32)? + carries;
            self.image.write_mmio(at, 32, sum & 0xFFFF_FFFF)?;
            if sum > 0xFFFF_FFFF {
                let status = self.image.read_mmio(reg(DT_PMOVSR.offset()), 64)?;
                self.image
                    .write_mmio(reg(DT_PMOVSR.offset()), 64, status | (1 << n))?;
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
