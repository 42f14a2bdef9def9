//! The top-down registers of Ice Lake and later cores in a session: fixed counter 3
//! (TOPDOWN.SLOTS, MSR 0x30C) and IA32_PERF_METRICS (MSR 0x329), read per interval on every
//! counted CPU.
//!
//! Opening checks every CPU first (the registers exist and nobody else has fixed counter 3
//! enabled), then enables fixed counter 3 in every ring (IA32_FIXED_CTR_CTRL bits 13:12),
//! its global enable (IA32_PERF_GLOBAL_CTRL bit 35) and PERF_METRICS (bit 48). Each reading
//! takes both registers and writes 0 to both, because the metrics are shares of the slots
//! counted since both were last zeroed (Linux does the same: arch/x86/events/intel/core.c,
//! icl_set_topdown_event_period and icl_update_topdown_event). Closing puts back the bits it
//! set and both registers' values.

use crate::cpuid::Cpuid0A;
use crate::error::{Error, Result, UsageError};
use crate::machine::{Machine, Resolved, Where};

/// Enable of fixed counter 3 in every ring: IA32_FIXED_CTR_CTRL bits 13:12.
const FIXED3_ENABLE: u64 = 0b11 << 12;
/// IA32_PERF_GLOBAL_CTRL: fixed counter 3 (bit 35) and PERF_METRICS (bit 48).
const GLOBAL_ENABLE: u64 = 1 << 35 | 1 << 48;

/// One CPU's fixed counter 3 and IA32_PERF_METRICS over one interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopdownSample {
    /// The logical CPU.
    pub cpu: u32,
    /// The socket it is on.
    pub socket: u32,
    /// Slots counted (fixed counter 3).
    pub slots: u64,
    /// IA32_PERF_METRICS at the end of the interval: each byte a category's share of the
    /// slots, of 0xFF ([`pmu_regs::metrics::topdown_slots`]).
    pub perf_metrics: u64,
}

/// One CPU's registers and what they held before.
struct CpuTopdown {
    cpu: u32,
    socket: u32,
    fixed_ctrl: Resolved,
    global: Resolved,
    slots: Resolved,
    metrics: Resolved,
    /// IA32_FIXED_CTR_CTRL's and IA32_PERF_GLOBAL_CTRL's bits this opening set (to clear
    /// again), and both registers' values before.
    set_ctrl: u64,
    set_global: u64,
    saved_slots: u64,
    saved_metrics: u64,
}

/// Fixed counter 3 and IA32_PERF_METRICS, enabled on some CPUs.
pub(super) struct Topdown<'m> {
    machine: &'m Machine,
    cpus: Vec<CpuTopdown>,
}

impl<'m> Topdown<'m> {
    /// Checks `cpus` (with their sockets), then enables and zeroes the registers on each;
    /// a failure puts back what was done. `force` takes fixed counter 3 even where its
    /// enable is already set.
    pub(super) fn open(machine: &'m Machine, cpus: &[(u32, u32)], force: bool) -> Result<Self> {
        let mut planned = Vec::new();
        for &(cpu, socket) in cpus {
            planned.push(Self::check(machine, cpu, socket, force)?);
        }
        let mut t = Topdown {
            machine,
            cpus: Vec::new(),
        };
        for c in planned {
            // Recorded before its writes, so a failure half-way puts back this CPU too.
            t.cpus.push(c);
            let c = t.cpus.last().expect("pushed above");
            let step = enable(machine, c);
            if let Err(e) = step {
                return Err(match t.restore() {
                    Ok(()) => e,
                    Err(cleanup) => Error::Cleanup {
                        error: Box::new(e),
                        cleanup: Box::new(cleanup),
                    },
                });
            }
        }
        Ok(t)
    }

    /// Refuses what [`Self::open`] would refuse on `cpus`, reading only.
    pub(super) fn check_all(machine: &Machine, cpus: &[(u32, u32)], force: bool) -> Result<()> {
        for &(cpu, socket) in cpus {
            Self::check(machine, cpu, socket, force)?;
        }
        Ok(())
    }

    /// One CPU's registers and their values, or why they cannot be taken.
    fn check(machine: &Machine, cpu: u32, socket: u32, force: bool) -> Result<CpuTopdown> {
        let at = Where {
            cpu: Some(cpu),
            ..Where::default()
        };
        enumerated(machine, cpu, &at)?;
        let fixed_ctrl = machine.resolve("IA32_FIXED_CTR_CTRL", &at)?;
        let global = machine.resolve("IA32_PERF_GLOBAL_CTRL", &at)?;
        let slots = machine.resolve("IA32_FIXED_CTR3", &at)?;
        let metrics = machine.resolve("IA32_PERF_METRICS", &at)?;
        let ctrl = machine.read(&fixed_ctrl)?;
        let glob = machine.read(&global)?;
        if !force && (ctrl & FIXED3_ENABLE != 0 || glob & GLOBAL_ENABLE != 0) {
            return Err(UsageError::BadValue {
                text: format!("CPU {cpu}"),
                expected: "a CPU whose fixed counter 3 and PERF_METRICS nobody else uses \
                           (IA32_FIXED_CTR_CTRL bits 13:12 and IA32_PERF_GLOBAL_CTRL bits 35 \
                           and 48 are set: perf's topdown events, or another tool; stop it, \
                           or take them over with --force)"
                    .into(),
            }
            .into());
        }
        Ok(CpuTopdown {
            cpu,
            socket,
            set_ctrl: FIXED3_ENABLE & !ctrl,
            set_global: GLOBAL_ENABLE & !glob,
            saved_slots: machine.read(&slots)?,
            saved_metrics: machine.read(&metrics)?,
            fixed_ctrl,
            global,
            slots,
            metrics,
        })
    }

    /// The CPUs read, with their sockets.
    pub(super) fn cpus(&self) -> Vec<(u32, u32)> {
        self.cpus.iter().map(|c| (c.cpu, c.socket)).collect()
    }

    /// Starts an interval: both registers of every CPU to 0.
    pub(super) fn zero(&self) -> Result<()> {
        for c in &self.cpus {
            self.machine.write(&c.slots, 0)?;
            self.machine.write(&c.metrics, 0)?;
        }
        Ok(())
    }

    /// Every CPU's slots and metrics since the last reading, then zeroes both.
    pub(super) fn read(&self) -> Result<Vec<TopdownSample>> {
        let mut out = Vec::with_capacity(self.cpus.len());
        for c in &self.cpus {
            out.push(TopdownSample {
                cpu: c.cpu,
                socket: c.socket,
                slots: self.machine.read(&c.slots)?,
                perf_metrics: self.machine.read(&c.metrics)?,
            });
        }
        self.zero()?;
        Ok(out)
    }

    /// Puts back every CPU, last first: the enables it set cleared, both registers' values;
    /// every CPU is tried, the first failure returned.
    pub(super) fn restore(&mut self) -> Result<()> {
        let mut first = None;
        while let Some(c) = self.cpus.pop() {
            if let Err(e) = put_back(self.machine, &c) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// Refuses a CPU that does not report both registers: CPUID leaf 0AH must enumerate fixed
/// counter 3 (a hypervisor may hide it on a part that has it) and IA32_PERF_CAPABILITIES
/// must set PERF_METRICS (bit 15). Where there is no CPUID to ask (a directory tree), the
/// capability register alone decides.
fn enumerated(machine: &Machine, cpu: u32, at: &Where) -> Result<()> {
    use pmu_regs::arch::core::Ia32PerfCapabilities;
    let leaf = machine.cpuid(0x0A).map(Cpuid0A::from);
    if let Some(leaf) = leaf.filter(|l| !l.fixed_counter(3)) {
        let mask = leaf.fixed_counter_mask();
        return Err(UsageError::NoSuchCounter {
            counter: format!("fixed counter 3 (TOPDOWN.SLOTS) on CPU {cpu}"),
            available: format!(
                "fixed counters {}, as CPUID.0AH enumerates them (EDX[4:0] = {}, ECX = {:#x}); \
                 a virtual machine may hide the top-down registers: run on the host",
                list_bits(mask),
                leaf.fixed_counters(),
                leaf.ecx
            ),
        }
        .into());
    }
    let caps = machine.read(&machine.resolve("IA32_PERF_CAPABILITIES", at)?)?;
    if !Ia32PerfCapabilities::from_bits(caps).perf_metrics() {
        return Err(UsageError::NoSuchCounter {
            counter: format!("IA32_PERF_METRICS on CPU {cpu}"),
            available: format!(
                "none: IA32_PERF_CAPABILITIES ({caps:#x}) has PERF_METRICS (bit 15) clear; a \
                 virtual machine may hide it: run on the host"
            ),
        }
        .into());
    }
    Ok(())
}

/// `0-2, 5` for bits 0, 1, 2 and 5; `none` for no bit.
fn list_bits(mask: u32) -> String {
    let bits: Vec<String> = (0..32)
        .filter(|i| mask >> i & 1 == 1)
        .map(|i| i.to_string())
        .collect();
    if bits.is_empty() {
        "none".into()
    } else {
        bits.join(", ")
    }
}

/// Enables fixed counter 3 and PERF_METRICS on one CPU, from zero.
fn enable(machine: &Machine, c: &CpuTopdown) -> Result<()> {
    machine.write(&c.slots, 0)?;
    machine.write(&c.metrics, 0)?;
    let ctrl = machine.read(&c.fixed_ctrl)?;
    machine.write(&c.fixed_ctrl, ctrl | c.set_ctrl)?;
    let glob = machine.read(&c.global)?;
    machine.write(&c.global, glob | c.set_global)
}

/// Clears the enables `c` set (global first, so nothing counts while the rest is put back)
/// and writes back both registers' values.
fn put_back(machine: &Machine, c: &CpuTopdown) -> Result<()> {
    let glob = machine.read(&c.global)?;
    machine.write(&c.global, glob & !c.set_global)?;
    let ctrl = machine.read(&c.fixed_ctrl)?;
    machine.write(&c.fixed_ctrl, ctrl & !c.set_ctrl)?;
    machine.write(&c.slots, c.saved_slots)?;
    machine.write(&c.metrics, c.saved_metrics)
}
