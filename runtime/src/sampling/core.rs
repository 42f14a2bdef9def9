//! The architectural counters of one logical CPU (Intel SDM Vol. 3B chapter 18): how many
//! and how wide (CPUID leaf 0AH), taking a counter only when IA32_PERF_GLOBAL_INUSE says it is
//! free, and writing counters the way the processor allows.
//!
//! ```
//! use pmu_runtime::sampling::core::{CoreEventSelect, CorePmu};
//! use pmu_runtime::sim::{Sim, SimConfig};
//!
//! let sim = Sim::new(SimConfig::default());
//! let pmu = CorePmu::new(&sim, 0, sim.cpuid_0a())?;
//! pmu.take(0, false)?;                       // refuses a counter someone else holds
//! let armed = pmu.arm(0, &CoreEventSelect::user(0x3C, 0x00), 1000)?;
//! sim.inject_core(0, 0x3C, 0x00, 1000)?;
//! assert_eq!(sim.pmis()[0].event, 1000);
//! armed.close()?;                            // event select, counter and global control put back
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

use pmu_regs::arch::core::{
    Ia32FixedCtrCtrlEn4, Ia32FixedCtrCtrlEn5, Ia32FixedCtrCtrlEn6, Ia32PerfEvtSel, IA32_A_PMC,
    IA32_FIXED_CTR_CTRL, IA32_PERFEVTSEL, IA32_PERF_CAPABILITIES, IA32_PERF_GLOBAL_CTRL,
    IA32_PERF_GLOBAL_INUSE, IA32_PMC,
};

/// The fixed counters the spec describes as counters of a fixed event: 0-2 on every core, 4-6
/// (the top-down classes) on Clearwater Forest's. Fixed counter 3, TOPDOWN.SLOTS, belongs to
/// the top-down registers (`session::topdown`).
const FIXED_COUNTERS: [u32; 6] = [0, 1, 2, 4, 5, 6];

use crate::access::{MsrAccess, MsrAccessExt, OnCpu};
pub use crate::cpuid::{host_cpuid_0a, Cpuid0A};
use crate::error::{Result, SamplingError, UsageError};
use crate::ownership::{Lease, Ownership, Pmu};
use crate::sampling::{preload, rolled_back};

/// What an architectural counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CoreEventSelect {
    /// Event select.
    pub ev_sel: u8,
    /// Unit mask.
    pub umask: u8,
    /// Count at privilege levels above 0.
    pub usr: bool,
    /// Count at privilege level 0.
    pub os: bool,
    /// Count rising edges.
    pub edge: bool,
    /// Invert the counter-mask comparison.
    pub inv: bool,
    /// Counter mask.
    pub cmask: u8,
}

impl CoreEventSelect {
    /// An event counted in user mode only.
    pub const fn user(ev_sel: u8, umask: u8) -> Self {
        Self {
            ev_sel,
            umask,
            usr: true,
            os: false,
            edge: false,
            inv: false,
            cmask: 0,
        }
    }
}

/// The architectural PMU of one logical CPU, owned by this session while the value lives.
pub struct CorePmu<'a, B: MsrAccess + Ownership + ?Sized> {
    cpu: OnCpu<'a, B>,
    cpuid: Cpuid0A,
    fw_write: bool,
    _lease: Lease,
}

/// An armed counter: [`Self::close`] (or drop) puts back its event select, its value and
/// IA32_PERF_GLOBAL_CTRL as they were before [`CorePmu::arm`].
#[must_use = "dropping the armed counter disarms it at once"]
pub struct CoreArmed<'p, 'a, B: MsrAccess + Ownership + ?Sized> {
    pmu: &'p CorePmu<'a, B>,
    n: u32,
    saved: Option<CoreSaved>,
}

#[derive(Debug, Clone, Copy)]
struct CoreSaved {
    evtsel: Ia32PerfEvtSel,
    value: u64,
    global: Option<pmu_regs::arch::core::Ia32PerfGlobalCtrl>,
}

impl<B: MsrAccess + Ownership + ?Sized> CoreArmed<'_, '_, B> {
    /// The counter.
    pub fn counter(&self) -> u32 {
        self.n
    }

    /// Disarms: puts back the event select (stopping the counter), the counter's value and
    /// IA32_PERF_GLOBAL_CTRL. Every write is attempted; the first failure is returned.
    pub fn close(mut self) -> Result<()> {
        match self.saved.take() {
            Some(saved) => self.pmu.restore(self.n, &saved),
            None => Ok(()),
        }
    }
}

impl<B: MsrAccess + Ownership + ?Sized> std::fmt::Debug for CoreArmed<'_, '_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreArmed")
            .field("counter", &self.n)
            .field("armed", &self.saved.is_some())
            .finish()
    }
}

impl<B: MsrAccess + Ownership + ?Sized> Drop for CoreArmed<'_, '_, B> {
    fn drop(&mut self) {
        if let Some(saved) = self.saved.take() {
            let _ = self.pmu.restore(self.n, &saved);
        }
    }
}

impl<'a, B: MsrAccess + Ownership + ?Sized> CorePmu<'a, B> {
    /// Claims the core PMU of `cpu` (refused, naming the holder, while another session owns
    /// it) as `cpuid` (leaf 0AH of that CPU) describes it; reads IA32_PERF_CAPABILITIES to
    /// learn whether full-width writes are available.
    pub fn new(backend: &'a B, cpu: u32, cpuid: Cpuid0A) -> Result<Self> {
        let lease = backend.claim(&Pmu::Core { cpu })?;
        let on = backend.on_cpu(cpu);
        let fw_write = on.read(IA32_PERF_CAPABILITIES)?.fw_write();
        Ok(Self {
            cpu: on,
            cpuid,
            fw_write,
            _lease: lease,
        })
    }

    /// CPUID leaf 0AH as given.
    pub fn cpuid(&self) -> Cpuid0A {
        self.cpuid
    }

    /// Whether counters are written through IA32_A_PMCx (FW_WRITE).
    pub fn full_width_writes(&self) -> bool {
        self.fw_write
    }

    fn check(&self, n: u32) -> Result<()> {
        let count = u32::from(self.cpuid.counters()).min(IA32_PMC.len() as u32);
        if n < count {
            Ok(())
        } else {
            Err(UsageError::NoSuchCounter {
                counter: format!("IA32_PMC{n}"),
                available: format!(
                    "IA32_PMC0-{} (CPUID.0AH:EAX[15:8] = {})",
                    count.saturating_sub(1),
                    self.cpuid.counters()
                ),
            }
            .into())
        }
    }

    fn width_mask(&self) -> u64 {
        let w = u32::from(self.cpuid.width());
        if w >= 64 {
            u64::MAX
        } else {
            (1u64 << w) - 1
        }
    }

    /// Claims general-purpose counter `n`: refused if IA32_PERF_GLOBAL_INUSE (or, before
    /// version 4, the counter's event select) shows another user, unless `force`.
    pub fn take(&self, n: u32, force: bool) -> Result<()> {
        self.check(n)?;
        if force {
            return Ok(());
        }
        let busy = if self.cpuid.version() >= 4 {
            self.cpu.read(IA32_PERF_GLOBAL_INUSE)?.perfevtsel_in_use(n)
        } else {
            // The same test INUSE makes: event select bits 7:0 non-zero.
            self.cpu.read(IA32_PERFEVTSEL[n as usize])?.ev_sel() != 0
        };
        if busy {
            return Err(SamplingError::InUse {
                counter: format!("IA32_PMC{n}"),
                holder: format!("its event select IA32_PERFEVTSEL{n} has a non-zero event; choose another counter"),
            }.into());
        }
        Ok(())
    }

    /// Claims fixed counter `i` (refused if its IA32_FIXED_CTR_CTRL field is non-zero).
    pub fn take_fixed(&self, i: u32, force: bool) -> Result<()> {
        // CPUID says which of the described fixed counters the CPU has.
        if !FIXED_COUNTERS.contains(&i) || !self.cpuid.fixed_counter(i) {
            let have: Vec<String> = FIXED_COUNTERS
                .into_iter()
                .filter(|&n| self.cpuid.fixed_counter(n))
                .map(|n| format!("IA32_FIXED_CTR{n}"))
                .collect();
            return Err(UsageError::NoSuchCounter {
                counter: format!("IA32_FIXED_CTR{i}"),
                available: if have.is_empty() {
                    "no fixed counter (CPUID.0AH enumerates none)".into()
                } else {
                    format!("{} (as CPUID.0AH enumerates them)", have.join(", "))
                },
            }
            .into());
        }
        if force {
            return Ok(());
        }
        if i >= 4 {
            // IA32_PERF_GLOBAL_INUSE reports fixed counters 0-2 only: the counter's own block
            // says whether another user enabled it.
            let ctrl = self.cpu.read(IA32_FIXED_CTR_CTRL)?;
            let busy = match i {
                4 => ctrl.en4() != Ia32FixedCtrCtrlEn4::Disabled,
                5 => ctrl.en5() != Ia32FixedCtrCtrlEn5::Disabled,
                _ => ctrl.en6() != Ia32FixedCtrCtrlEn6::Disabled,
            };
            return Self::fixed_free(i, busy);
        }
        if self.cpuid.version() < 4 {
            return Ok(());
        }
        let inuse = self.cpu.read(IA32_PERF_GLOBAL_INUSE)?;
        let busy = [inuse.fc0_in_use(), inuse.fc1_in_use(), inuse.fc2_in_use()][i as usize];
        Self::fixed_free(i, busy)
    }

    /// Refuses fixed counter `i` if `busy`: another user enabled it.
    fn fixed_free(i: u32, busy: bool) -> Result<()> {
        if busy {
            return Err(SamplingError::InUse {
                counter: format!("IA32_FIXED_CTR{i}"),
                holder: format!("IA32_FIXED_CTR_CTRL.en{i} is non-zero"),
            }
            .into());
        }
        Ok(())
    }

    /// Claims the PMI: refused if some counter already interrupts on overflow (PMI_InUse).
    pub fn take_pmi(&self, force: bool) -> Result<()> {
        if force || self.cpuid.version() < 4 {
            return Ok(());
        }
        if self.cpu.read(IA32_PERF_GLOBAL_INUSE)?.pmi_in_use() {
            return Err(SamplingError::InUse {
                counter: "the PMI".into(),
                holder:
                    "an IA32_PERFEVTSELx.INT, IA32_FIXED_CTR_CTRL.ENi_PMI or PEBS enable bit is set"
                        .into(),
            }
            .into());
        }
        Ok(())
    }

    /// Sets counter `n` to `value`: through IA32_A_PMCn when full-width writes exist, else
    /// through IA32_PMCn, whose write keeps only the sign extension of bits 31:0; a value that
    /// cannot be made that way is refused before anything is written.
    pub fn write_counter(&self, n: u32, value: u64) -> Result<()> {
        self.check_counter_value(n, value)?;
        if self.fw_write {
            return Ok(self.cpu.write_raw(IA32_A_PMC[n as usize], value)?);
        }
        Ok(self.cpu.write_raw(IA32_PMC[n as usize], value)?)
    }

    /// Refuses what [`Self::write_counter`] cannot store, without touching the machine.
    fn check_counter_value(&self, n: u32, value: u64) -> Result<()> {
        self.check(n)?;
        let width = u32::from(self.cpuid.width());
        let refuse = || {
            Err(SamplingError::NotRepresentable {
                counter: format!("IA32_PMC{n}"),
                value,
                width,
            }
            .into())
        };
        if value & !self.width_mask() != 0 {
            return refuse();
        }
        let stored = (value as u32 as i32 as i64 as u64) & self.width_mask();
        if !self.fw_write && stored != value {
            return refuse();
        }
        Ok(())
    }

    /// Reads counter `n`.
    pub fn read_counter(&self, n: u32) -> Result<u64> {
        self.check(n)?;
        Ok(self.cpu.read(IA32_PMC[n as usize])?.count() & self.width_mask())
    }

    /// Programs counter `n` for `sel` and enables it in its event select and in
    /// IA32_PERF_GLOBAL_CTRL.
    pub fn program(&self, n: u32, sel: &CoreEventSelect, interrupt: bool) -> Result<()> {
        self.check(n)?;
        let v = Ia32PerfEvtSel::RESET
            .with_ev_sel(sel.ev_sel)
            .with_umask(sel.umask)
            .with_usr(sel.usr)
            .with_os(sel.os)
            .with_edge(sel.edge)
            .with_inv(sel.inv)
            .with_cmask(sel.cmask)
            .with_int(interrupt)
            .with_en(true);
        self.cpu.write(IA32_PERFEVTSEL[n as usize], v)?;
        if self.cpuid.version() >= 2 {
            self.cpu
                .modify(IA32_PERF_GLOBAL_CTRL, |g| g.with_pmc_en(n, true))?;
        }
        Ok(())
    }

    /// Interrupts after exactly `n_events` events on counter `n`: preloads `2^width - N` and
    /// programs the counter with INT set. Everything that can be checked is checked before
    /// the first access (the counter exists, the interval can be counted and preloaded); if a
    /// step fails later, the event select, the counter and the global control are put back.
    /// The returned handle disarms ([`CoreArmed::close`], or drop).
    pub fn arm<'p>(
        &'p self,
        n: u32,
        sel: &CoreEventSelect,
        n_events: u64,
    ) -> Result<CoreArmed<'p, 'a, B>> {
        self.check(n)?;
        let start = preload(n_events, u32::from(self.cpuid.width()))?;
        self.check_counter_value(n, start)?;
        let saved = CoreSaved {
            evtsel: self.cpu.read(IA32_PERFEVTSEL[n as usize])?,
            value: self.read_counter(n)?,
            global: if self.cpuid.version() >= 2 {
                Some(self.cpu.read(IA32_PERF_GLOBAL_CTRL)?)
            } else {
                None
            },
        };
        rolled_back(
            || {
                self.write_counter(n, start)?;
                self.program(n, sel, true)
            },
            || self.restore(n, &saved),
        )?;
        Ok(CoreArmed {
            pmu: self,
            n,
            saved: Some(saved),
        })
    }

    /// Puts back what arming counter `n` changed; every write attempted, the first error
    /// returned.
    fn restore(&self, n: u32, saved: &CoreSaved) -> Result<()> {
        let mut first_error = None;
        if let Err(e) = self.cpu.write(IA32_PERFEVTSEL[n as usize], saved.evtsel) {
            first_error.get_or_insert(e.into());
        }
        if let Err(e) = self.write_counter(n, saved.value) {
            first_error.get_or_insert(e);
        }
        if let Some(g) = saved.global {
            if let Err(e) = self.cpu.write(IA32_PERF_GLOBAL_CTRL, g) {
                first_error.get_or_insert(e.into());
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}
