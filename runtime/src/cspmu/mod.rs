//! CoreSight PMUs (Arm IHI0091, Linux's `arm_cspmu`) that ACPI's APMT lists: found from the
//! table, identified by their own PMIIDR and PMCFGR, and counted on through [`MmioAccess`].
//!
//! The registers are the spec's generic layout (`spec/apmt/cspmu.xml`, `pmu_regs::apmt::cspmu`),
//! the same for every vendor; which vendor's PMU a node is, and so which events it has, its
//! PMIIDR says (NVIDIA's SCF: [`CsPmu::is_nvidia_scf`], whose identity is the spec's
//! `nvidia-grace-scf` PMIIDR). [`count`] programs as Linux's `arm_cspmu.c` does (the event
//! number into `PMEVTYPER<n>`, the counter zeroed, its bit written to PMCNTENSET, PMCR.E set;
//! the cycle counter is counter 31) on counters no one else has enabled, and puts back every
//! register it changed: counters stopped through PMCNTENCLR, types and counts written back,
//! overflow flags it caused cleared through PMOVSCLR, PMCR last. On a real machine the kernel's
//! driver owns these pages; this is for the simulator, dumped pages, and software that owns a
//! PMU itself.

mod error;

pub use error::CspmuError;

use pmu_regs::apmt::cspmu::{
    Pmcfgr, Pmcr, Pmiidr, PMCCFILTR, PMCCNTR, PMCFGR, PMCNTENCLR0, PMCNTENSET0, PMCR, PMEVCNTR,
    PMEVTYPER, PMIIDR, PMOVSCLR0, PMOVSSET0,
};

use crate::access::MmioAccess;
use crate::apmt::{self, ApmtNode};

/// The cycle counter's number and bit in the set/clear registers (ARM_CSPMU_CYCLE_CNTR_IDX).
pub const CYCLE_COUNTER: u32 = 31;

/// One CoreSight PMU an APMT node lists, as its registers describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsPmu {
    /// The node that lists it (its page addresses, affinity, flags).
    pub node: ApmtNode,
    /// PMIIDR as read (or the node's implementation id where PMIIDR reads 0, as Linux does).
    pub pmiidr: u32,
    /// Event counters (PMCFGR.N + 1, less the cycle counter where PMCFGR.CC says there is one).
    pub event_counters: u32,
    /// Counter width in bits (PMCFGR.SIZE + 1).
    pub width: u32,
    /// Whether counter 31 is a cycle counter (PMCFGR.CC).
    pub cycle_counter: bool,
}

impl CsPmu {
    /// Whether this is NVIDIA's SCF PMU: implementer, product, variant and revision as the
    /// spec's `nvidia-grace-scf` PMIIDR gives them (NVIDIA 0x36B, product 0x2CF; Linux's
    /// `nvidia_cspmu.c` matches the same three fields).
    pub fn is_nvidia_scf(&self) -> bool {
        let scf = pmu_regs::nvidia_grace_scf::scf::Pmiidr::RESET;
        let me = Pmiidr::from_bits(self.pmiidr);
        (
            me.implementer(),
            me.productid(),
            me.variant(),
            me.revision(),
        ) == (
            scf.implementer(),
            scf.productid(),
            scf.variant(),
            scf.revision(),
        )
    }

    /// Page 0's address of a register at `offset`.
    fn page0(&self, offset: u32) -> u64 {
        self.node.base0 + u64::from(offset)
    }

    /// The address of a counter or overflow register at `offset`: in page 1 with the
    /// dual-page flag (Linux's `base1`), else page 0.
    fn page1(&self, offset: u32) -> u64 {
        self.node.base1.unwrap_or(self.node.base0) + u64::from(offset)
    }

    /// Counter `n`'s address (event counter n, or the cycle counter).
    fn counter_at(&self, n: u32) -> u64 {
        match n {
            CYCLE_COUNTER => self.page1(PMCCNTR.offset()),
            n => self.page1(PMEVCNTR[n as usize].offset()),
        }
    }

    /// Counter `n`'s type register (PMCCFILTR for the cycle counter).
    fn type_at(&self, n: u32) -> u64 {
        match n {
            CYCLE_COUNTER => self.page0(PMCCFILTR.offset()),
            n => self.page0(PMEVTYPER[n as usize].offset()),
        }
    }
}

/// Reads the APMT `table` (checked first: [`apmt::parse`]) and each PMU it lists through
/// `mmio`. A damaged table is [`CspmuError::Apmt`], and then nothing is read or written.
pub fn find<M: MmioAccess + ?Sized>(table: &[u8], mmio: &M) -> Result<Vec<CsPmu>, CspmuError> {
    let table = apmt::parse(table)?;
    table
        .nodes
        .into_iter()
        .map(|node| identify(mmio, node))
        .collect()
}

/// One node's PMU, from its PMIIDR and PMCFGR.
fn identify<M: MmioAccess + ?Sized>(mmio: &M, node: ApmtNode) -> Result<CsPmu, CspmuError> {
    let regs = Regs {
        mmio,
        atomic: node.atomic64,
    };
    let read = regs.read32(node.base0 + u64::from(PMIIDR.offset()))?;
    let pmiidr = if read == 0 { node.impl_id } else { read };
    let cfg = Pmcfgr::from_bits(regs.read32(node.base0 + u64::from(PMCFGR.offset()))?);
    let counters = u32::from(cfg.n()) + 1;
    Ok(CsPmu {
        node,
        pmiidr,
        event_counters: (counters - u32::from(cfg.cc())).min(CYCLE_COUNTER),
        width: u32::from(cfg.size()) + 1,
        cycle_counter: cfg.cc(),
    })
}

/// What [`count`] counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Each event's count, in the order asked, and the counter it was on.
    pub events: Vec<(u32, u64)>,
    /// The cycle counter's count, when asked for.
    pub cycles: Option<u64>,
}

/// Counts `events` (event numbers, as PMEVTYPER takes them: NVIDIA's SCF event list gives
/// them) and, with `cycles`, the cycle counter, on `pmu` while `work` runs. The events go on
/// the lowest event counters not enabled already (someone else's); too many events, or a
/// cycle counter that is missing or in use, is refused before anything is written. Every
/// register written is put back, on success and on failure.
pub fn count<M: MmioAccess + ?Sized>(
    mmio: &M,
    pmu: &CsPmu,
    (events, cycles): (&[u32], bool),
    work: impl FnOnce(),
) -> Result<Counts, CspmuError> {
    let regs = Regs {
        mmio,
        atomic: pmu.node.atomic64,
    };
    let plan = Placement::new(&regs, pmu, events, cycles)?;
    let saved = plan.save(&regs, pmu)?;
    let counted = plan.run(&regs, pmu, &saved, work);
    let undone = plan.put_back(&regs, pmu, &saved);
    match (counted, undone) {
        (Ok(c), Ok(())) => Ok(c),
        (Err(e), Ok(())) | (Ok(_), Err(e)) => Err(e),
        (Err(error), Err(undo)) => Err(CspmuError::PutBack {
            error: Box::new(error),
            undo: Box::new(undo),
        }),
    }
}

/// Which counter counts what, decided before the first write.
struct Placement {
    /// (counter, event number) for each event, in the order asked.
    placed: Vec<(u32, u32)>,
    /// Whether the cycle counter counts.
    cycles: bool,
}

/// The registers [`count`] changes, as they were.
struct Before {
    pmcr: u32,
    overflow: u32,
    /// (type, count) of each counter used, in `Placement::used` order.
    counters: Vec<(u32, u64)>,
}

impl Placement {
    /// Places the events on free counters and checks the cycle counter; reads only.
    fn new<M: MmioAccess + ?Sized>(
        regs: &Regs<'_, M>,
        pmu: &CsPmu,
        events: &[u32],
        cycles: bool,
    ) -> Result<Self, CspmuError> {
        let enabled = regs.read32(pmu.page0(PMCNTENSET0.offset()))?;
        let free: Vec<u32> = (0..pmu.event_counters)
            .filter(|n| enabled & (1 << n) == 0)
            .collect();
        if events.len() > free.len() {
            return Err(CspmuError::TooManyEvents {
                asked: events.len(),
                free: free.len(),
            });
        }
        if cycles && (!pmu.cycle_counter || enabled & (1 << CYCLE_COUNTER) != 0) {
            return Err(CspmuError::NoCycleCounter {
                busy: pmu.cycle_counter,
            });
        }
        let placed = free.into_iter().zip(events.iter().copied()).collect();
        Ok(Placement { placed, cycles })
    }

    /// Every counter used, the cycle counter last.
    fn used(&self) -> Vec<u32> {
        let mut used: Vec<u32> = self.placed.iter().map(|p| p.0).collect();
        if self.cycles {
            used.push(CYCLE_COUNTER);
        }
        used
    }

    /// The enable (and overflow) bits of the counters used.
    fn mask(&self) -> u32 {
        self.used().iter().fold(0, |m, n| m | 1 << n)
    }

    /// Reads what will be changed.
    fn save<M: MmioAccess + ?Sized>(
        &self,
        regs: &Regs<'_, M>,
        pmu: &CsPmu,
    ) -> Result<Before, CspmuError> {
        let mut counters = Vec::new();
        for n in self.used() {
            counters.push((
                regs.read32(pmu.type_at(n))?,
                regs.read64(pmu.counter_at(n))?,
            ));
        }
        Ok(Before {
            pmcr: regs.read32(pmu.page0(PMCR.offset()))?,
            overflow: regs.read32(pmu.page1(PMOVSSET0.offset()))?,
            counters,
        })
    }

    /// Programs, runs `work`, stops the counters and reads them.
    fn run<M: MmioAccess + ?Sized>(
        &self,
        regs: &Regs<'_, M>,
        pmu: &CsPmu,
        saved: &Before,
        work: impl FnOnce(),
    ) -> Result<Counts, CspmuError> {
        for &(n, event) in &self.placed {
            regs.write32(pmu.type_at(n), event)?;
        }
        if self.cycles {
            // NVIDIA's SCF filter mask and default are 0: the cycle counter's filter is 0.
            regs.write32(pmu.type_at(CYCLE_COUNTER), 0)?;
        }
        for n in self.used() {
            regs.write64(pmu.counter_at(n), 0)?;
        }
        regs.write32(pmu.page0(PMCNTENSET0.offset()), self.mask())?;
        let on = Pmcr::from_bits(saved.pmcr).with_e(true).bits();
        regs.write32(pmu.page0(PMCR.offset()), on)?;
        work();
        // Stop the counters first, so what is read is the work's count.
        regs.write32(pmu.page0(PMCNTENCLR0.offset()), self.mask())?;
        let mut events = Vec::new();
        for &(n, _) in &self.placed {
            events.push((n, regs.read64(pmu.counter_at(n))?));
        }
        let cycles = if self.cycles {
            Some(regs.read64(pmu.counter_at(CYCLE_COUNTER))?)
        } else {
            None
        };
        Ok(Counts { events, cycles })
    }

    /// Puts back every register [`Placement::run`] may have changed, PMCR last; goes on past a
    /// failure and reports the first.
    fn put_back<M: MmioAccess + ?Sized>(
        &self,
        regs: &Regs<'_, M>,
        pmu: &CsPmu,
        saved: &Before,
    ) -> Result<(), CspmuError> {
        let mut first = Ok(());
        let mut keep = |r: Result<(), CspmuError>| {
            if first.is_ok() {
                first = r;
            }
        };
        keep(regs.write32(pmu.page0(PMCNTENCLR0.offset()), self.mask()));
        for (n, &(kind, value)) in self.used().into_iter().zip(&saved.counters) {
            keep(regs.write32(pmu.type_at(n), kind));
            keep(regs.write64(pmu.counter_at(n), value));
        }
        // Only the flags that were clear before and are ours.
        let ours = self.mask() & !saved.overflow;
        keep(regs.write32(pmu.page1(PMOVSCLR0.offset()), ours));
        keep(regs.write32(pmu.page0(PMCR.offset()), saved.pmcr));
        first
    }
}

/// A PMU's registers through `mmio`: 32-bit registers, and 64-bit counters read in one access
/// where the node says 64-bit accesses are atomic, else high, low, high until the high half
/// holds (Linux's `read_reg64_hilohi`).
struct Regs<'a, M: MmioAccess + ?Sized> {
    mmio: &'a M,
    atomic: bool,
}

impl<M: MmioAccess + ?Sized> Regs<'_, M> {
    fn read(&self, address: u64, width: u32) -> Result<u64, CspmuError> {
        self.mmio
            .read_mmio(address, width)
            .map_err(|source| CspmuError::Read { address, source })
    }

    fn write(&self, address: u64, width: u32, value: u64) -> Result<(), CspmuError> {
        self.mmio
            .write_mmio(address, width, value)
            .map_err(|source| CspmuError::Write { address, source })
    }

    fn read32(&self, address: u64) -> Result<u32, CspmuError> {
        // A 32-bit read holds 32 bits.
        Ok(self.read(address, 32)? as u32)
    }

    fn write32(&self, address: u64, value: u32) -> Result<(), CspmuError> {
        self.write(address, 32, u64::from(value))
    }

    fn read64(&self, address: u64) -> Result<u64, CspmuError> {
        if self.atomic {
            return self.read(address, 64);
        }
        loop {
            let high = self.read(address + 4, 32)?;
            let low = self.read(address, 32)?;
            if self.read(address + 4, 32)? == high {
                return Ok(high << 32 | low);
            }
        }
    }

    fn write64(&self, address: u64, value: u64) -> Result<(), CspmuError> {
        if self.atomic {
            return self.write(address, 64, value);
        }
        self.write(address, 32, value & 0xFFFF_FFFF)?;
        self.write(address + 4, 32, value >> 32)
    }
}
