//! A simulated APMT and the CoreSight PMUs it lists: one NVIDIA Grace SCF PMU per socket.
//!
//! [`SimCspmu::apmt`] publishes the ACPI table (header and one 56-byte node per socket, laid
//! out by the spec's `apmt` layouts, the checksum making every byte add up to 0), naming each
//! socket's PMU page at [`SimCspmu::base`]; the pages answer through [`MmioAccess`] as the
//! CoreSight PMU architecture (IHI0091) and Linux's `arm_cspmu.c` describe them: PMIIDR reads
//! the spec's `nvidia-grace-scf` identity, PMCFGR the simulator's own configuration
//! ([`SIM_EVENT_COUNTERS`] 64-bit event counters and a cycle counter: NVIDIA publishes no
//! PMCFGR for the SCF); PMCNTENSET0/CLR0, PMINTENSET0/CLR0 and PMOVSSET0/CLR0 are one state
//! each (a 1 sets or clears, a 0 changes nothing, both words read the state, bits of counters
//! not implemented read as 0); PMCR.P and C zero the event and cycle counters and read as 0;
//! PMCFGR and PMIIDR refuse writes, as does a reserved bit of PMCR. While PMCR.E is set an
//! enabled event counter counts the events its PMEVTYPER names ([`SimCspmu::inject`]), and
//! [`SimCspmu::advance`] runs the fabric clock: the cycle counter and `bus_cycles` count every
//! cycle, `scf_cache` one access every [`CYCLES_PER_SCF_CACHE_ACCESS`] cycles (the simulator's
//! rate, not a measured one). A counter wraps at 2^64 and sets its overflow flag. Not
//! modelled: the dual-page layout, interrupts, PMCR.D's divider, filters, the other events.

use std::sync::Mutex;

use pmu_regs::apmt::cspmu::{
    Pmcfgr, Pmcr, PMCCNTR, PMCFGR, PMCNTENCLR0, PMCNTENSET0, PMCR, PMEVCNTR, PMEVTYPER, PMIIDR,
    PMINTENCLR0, PMINTENSET0, PMOVSCLR0, PMOVSSET0,
};
use pmu_regs::apmt::header::{ApmtLength, ApmtRevisionChecksum, LENGTH, REVISION_CHECKSUM};
use pmu_regs::apmt::node::{
    ApmtNodeHeader, ApmtProcessorAffinity, BASE_ADDRESS0_HI, BASE_ADDRESS0_LO, ID, NODE_HEADER,
    PROC_AFFINITY,
};
use pmu_regs::nvidia_grace_scf::scf::{Event, Pmiidr};

use crate::access::{AccessError, BackendError, BackendResult, MmioAccess, Op, Target};
use crate::apmt::{HEADER_BYTES, NODE_BYTES, SIGNATURE};

/// Socket 0's PMU page (the simulator's choice; Grace's addresses are the firmware's).
pub const SIM_BASE: u64 = 0x10_0000_0000;
/// Bytes between sockets' pages.
pub const SIM_STRIDE: u64 = 0x1_0000;
/// One PMU page.
pub const PAGE_BYTES: usize = 0x1000;
/// The simulated SCF's event counters (its PMCFGR.N is this, with the cycle counter).
pub const SIM_EVENT_COUNTERS: u32 = 8;
/// Fabric cycles per `scf_cache` access that [`SimCspmu::advance`] counts.
pub const CYCLES_PER_SCF_CACHE_ACCESS: u64 = 4;
/// The ACPI device node type (DEN0117: type 3), the simulator's choice for its SCF nodes.
const NODE_TYPE_ACPI_DEVICE: u64 = 3;
/// The cycle counter's number and bit.
const CYCLE: u32 = 31;

/// Simulated SCF PMUs, one page per socket, behind [`MmioAccess`].
#[derive(Debug)]
pub struct SimCspmu {
    pages: Mutex<Vec<Vec<u8>>>,
}

impl SimCspmu {
    /// One SCF PMU for each of `sockets` sockets, powered up.
    pub fn new(sockets: usize) -> Self {
        let cfg = Pmcfgr::CC_BITS.set(
            Pmcfgr::SIZE_BITS.set(Pmcfgr::N_BITS.set(0, u64::from(SIM_EVENT_COUNTERS)), 63),
            1,
        );
        let page = |_| {
            let mut p = vec![0u8; PAGE_BYTES];
            put(&mut p, PMCFGR.offset(), 4, cfg);
            put(&mut p, PMIIDR.offset(), 4, u64::from(Pmiidr::RESET.bits()));
            p
        };
        Self {
            pages: Mutex::new((0..sockets).map(page).collect()),
        }
    }

    /// Socket `socket`'s PMU page address.
    pub fn base(socket: usize) -> u64 {
        SIM_BASE + socket as u64 * SIM_STRIDE
    }

    /// The APMT naming each socket's PMU: node id = socket, processor container uid = socket
    /// (Linux names the PMU by the NUMA node of its first CPU: `nvidia_scf_pmu_<socket>`),
    /// single page, 64-bit accesses atomic.
    pub fn apmt(&self) -> Vec<u8> {
        let sockets = self.lock().len();
        let length = HEADER_BYTES + sockets * NODE_BYTES;
        let mut t = vec![0u8; length];
        t[..4].copy_from_slice(&SIGNATURE);
        put(
            &mut t,
            LENGTH.offset(),
            4,
            ApmtLength::LENGTH_BITS.set(0, length as u64),
        );
        t[10..16].copy_from_slice(b"PMUSIM");
        for s in 0..sockets {
            let node = &mut t[HEADER_BYTES + s * NODE_BYTES..][..NODE_BYTES];
            let head = ApmtNodeHeader::LENGTH_BITS.set(0, NODE_BYTES as u64);
            let head = ApmtNodeHeader::TYPE_BITS.set(head, NODE_TYPE_ACPI_DEVICE);
            let head = ApmtNodeHeader::AFFINITY_CONTAINER_BITS.set(head, 1);
            let head = ApmtNodeHeader::ATOMIC_BITS.set(head, 1);
            put(node, NODE_HEADER.offset(), 4, head);
            put(node, ID.offset(), 4, s as u64);
            put(
                node,
                BASE_ADDRESS0_LO.offset(),
                4,
                Self::base(s) & 0xFFFF_FFFF,
            );
            put(node, BASE_ADDRESS0_HI.offset(), 4, Self::base(s) >> 32);
            let uid = ApmtProcessorAffinity::UID_BITS.set(0, s as u64);
            put(node, PROC_AFFINITY.offset(), 4, uid);
        }
        let sum = t.iter().fold(0u8, |s, b| s.wrapping_add(*b));
        let checksum = ApmtRevisionChecksum::CHECKSUM_BITS.set(0, u64::from(sum.wrapping_neg()));
        let word = get(&t, REVISION_CHECKSUM.offset(), 4) | checksum;
        put(&mut t, REVISION_CHECKSUM.offset(), 4, word);
        t
    }

    /// A copy of socket `socket`'s page (to compare before and after a session).
    pub fn bytes(&self, socket: usize) -> Vec<u8> {
        self.lock().get(socket).cloned().unwrap_or_default()
    }

    /// `n` occurrences of event number `event` on socket `socket`'s fabric: every enabled
    /// event counter that selects it counts them, while PMCR.E is set.
    pub fn inject(&self, socket: usize, event: u32, n: u64) {
        if let Some(page) = self.lock().get_mut(socket) {
            count_events(page, |e| if e == event { n } else { 0 });
        }
    }

    /// `cycles` fabric cycles pass on every socket: the cycle counter and `bus_cycles` count
    /// them, `scf_cache` one in [`CYCLES_PER_SCF_CACHE_ACCESS`].
    pub fn advance(&self, cycles: u64) {
        let bus = u32::from(Event::BUS_CYCLES.code());
        let cache = u32::from(Event::SCF_CACHE.code());
        for page in self.lock().iter_mut() {
            count_events(page, |e| match e {
                e if e == bus => cycles,
                e if e == cache => cycles / CYCLES_PER_SCF_CACHE_ACCESS,
                _ => 0,
            });
            if running(page, CYCLE) {
                add(page, CYCLE, cycles);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.pages.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The socket and page offset of `address`, checked: inside a page, aligned, 32 or 64 bits.
    fn locate(&self, op: Op, address: u64, width: u32) -> BackendResult<(usize, u32)> {
        let refuse = || BackendError::access(op, Target::Mmio { address }, AccessError::Rejected);
        let rel = address.checked_sub(SIM_BASE).ok_or_else(refuse)?;
        let (socket, offset) = ((rel / SIM_STRIDE) as usize, rel % SIM_STRIDE);
        let bytes = u64::from(width / 8);
        let fits = matches!(width, 32 | 64) && offset % bytes == 0;
        if !fits || offset + bytes > PAGE_BYTES as u64 || socket >= self.lock().len() {
            return Err(refuse());
        }
        Ok((socket, offset as u32))
    }
}

/// The bits of the counters implemented (event counters and the cycle counter).
fn implemented() -> u64 {
    ((1u64 << SIM_EVENT_COUNTERS) - 1) | (1 << CYCLE)
}

/// Whether counter `n` counts now: PMCR.E and its enable bit.
fn running(page: &[u8], n: u32) -> bool {
    let pmcr = Pmcr::from_bits(get(page, PMCR.offset(), 4) as u32);
    pmcr.e() && get(page, PMCNTENSET0.offset(), 4) & 1 << n != 0
}

/// Adds `n` to counter `n`'s count, wrapping at 2^64 into its overflow flag.
fn add(page: &mut [u8], counter: u32, n: u64) {
    let at = match counter {
        CYCLE => PMCCNTR.offset(),
        c => PMEVCNTR[c as usize].offset(),
    };
    let (sum, wrapped) = get(page, at, 8).overflowing_add(n);
    put(page, at, 8, sum);
    if wrapped {
        let flags = get(page, PMOVSSET0.offset(), 4) | 1 << counter;
        put(page, PMOVSSET0.offset(), 4, flags);
        put(page, PMOVSCLR0.offset(), 4, flags);
    }
}

/// Every running event counter counts `how_many(its event)`.
fn count_events(page: &mut [u8], how_many: impl Fn(u32) -> u64) {
    for c in 0..SIM_EVENT_COUNTERS {
        if running(page, c) {
            let event = get(page, PMEVTYPER[c as usize].offset(), 4) as u32;
            add(page, c, how_many(event));
        }
    }
}

/// `bytes` bytes at `offset`, little-endian.
fn get(page: &[u8], offset: u32, bytes: usize) -> u64 {
    let at = offset as usize;
    page[at..at + bytes]
        .iter()
        .rev()
        .fold(0, |v, b| v << 8 | u64::from(*b))
}

/// Writes `bytes` bytes of `value` at `offset`, little-endian.
fn put(page: &mut [u8], offset: u32, bytes: usize, value: u64) {
    let at = offset as usize;
    page[at..at + bytes].copy_from_slice(&value.to_le_bytes()[..bytes]);
}

impl MmioAccess for SimCspmu {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        let (socket, offset) = self.locate(Op::Read, address, width)?;
        Ok(get(&self.lock()[socket], offset, (width / 8) as usize))
    }

    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        let (socket, offset) = self.locate(Op::Write, address, width)?;
        let mut pages = self.lock();
        let page = &mut pages[socket];
        let refuse = |kind| BackendError::access(Op::Write, Target::Mmio { address }, kind);
        let set_clear = [
            (PMCNTENSET0.offset(), PMCNTENCLR0.offset()),
            (PMINTENSET0.offset(), PMINTENCLR0.offset()),
            (PMOVSSET0.offset(), PMOVSCLR0.offset()),
        ];
        for (set, clear) in set_clear {
            if offset == set || offset == clear {
                let now = get(page, set, 4);
                let next = if offset == set {
                    now | value
                } else {
                    now & !value
                };
                put(page, set, 4, next & implemented());
                put(page, clear, 4, next & implemented());
                return Ok(());
            }
        }
        if offset == PMCFGR.offset() || offset == PMIIDR.offset() {
            return Err(refuse(AccessError::Rejected));
        }
        if offset == PMCR.offset() {
            return write_pmcr(page, value).map_err(refuse);
        }
        put(page, offset, (width / 8) as usize, value);
        Ok(())
    }
}

/// PMCR: reserved bits refused; P and C zero the counters and read as 0.
fn write_pmcr(page: &mut [u8], value: u64) -> Result<(), AccessError> {
    let reserved = value & (u64::from(Pmcr::RESERVED_MASK) | !0xFFFF_FFFF);
    if reserved != 0 {
        return Err(AccessError::ReservedBits {
            value,
            bits: reserved,
        });
    }
    if Pmcr::P_BITS.is_set(value) {
        for c in 0..SIM_EVENT_COUNTERS {
            put(page, PMEVCNTR[c as usize].offset(), 8, 0);
        }
    }
    if Pmcr::C_BITS.is_set(value) {
        put(page, PMCCNTR.offset(), 8, 0);
    }
    let kept = Pmcr::C_BITS.set(Pmcr::P_BITS.set(value, 0), 0);
    put(page, PMCR.offset(), 4, kept);
    Ok(())
}
