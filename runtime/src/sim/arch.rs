//! The simulated architectural PMU of one logical CPU (Intel SDM Vol. 3B chapter 18): general
//! and fixed counters as wide as the simulated CPUID says, legacy sign-extending writes to
//! IA32_PMCx and full-width writes to IA32_A_PMCx when FW_WRITE is set, global control and
//! status, and IA32_PERF_GLOBAL_INUSE derived from the registers it reflects.

use super::regs::{self, Reg, RegFile};
use super::{Journal, PmiRecord, PmiSource};
use crate::cpuid::Cpuid0A;
use pmu_regs::ProcessorInfo;

/// What the simulated processor reports through CPUID leaf 0AH and IA32_PERF_CAPABILITIES.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchConfig {
    /// Architectural performance-monitoring version (`CPUID.0AH:EAX[7:0]`).
    pub version: u8,
    /// General-purpose counters per logical CPU (`CPUID.0AH:EAX[15:8]`), at most 8 here.
    pub gp_counters: u8,
    /// Their width in bits (`CPUID.0AH:EAX[23:16]`).
    pub gp_width: u8,
    /// Fixed counters (`CPUID.0AH:EDX[4:0]`). Counters 0-2 and 4-6 are simulated; counter 3
    /// is TOPDOWN.SLOTS, there only with [`Self::topdown`].
    pub fixed_counters: u8,
    /// The bitmap of further fixed counters (`CPUID.0AH:ECX`, from version 5): counter i
    /// exists if bit i is set or i is below [`Self::fixed_counters`].
    pub fixed_mask: u32,
    /// Their width (`CPUID.0AH:EDX[12:5]`).
    pub fixed_width: u8,
    /// IA32_PERF_CAPABILITIES.FW_WRITE: IA32_A_PMCx exist.
    pub fw_write: bool,
    /// Fixed counter 3 and IA32_PERF_METRICS (Ice Lake and later), and the workload's
    /// top-down profile.
    pub topdown: SimTopdown,
}

/// The top-down registers of a simulated core. Fixed counter 3 counts the slots injected as
/// event 0x00, unit mask 0x04 (TOPDOWN.SLOTS's encoding in Intel's event lists) while its
/// IA32_FIXED_CTR_CTRL block (bits 13:12) and IA32_PERF_GLOBAL_CTRL bit 35 are set.
/// IA32_PERF_METRICS reads what software last wrote until slots are counted with bit 48
/// also set; from then on it reads the workload's shares, `perf_metrics` (its level-1 bytes
/// summing to 0xFF), of the bytes the core reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimTopdown {
    /// Shares IA32_PERF_METRICS reports (`processors.xml`'s `topdown-metrics`): 0 (the core
    /// has neither register), 4 or 8.
    pub shares: u8,
    /// The workload's shares of the slots, one byte each (retiring, bad speculation,
    /// frontend bound, backend bound, then the level-2 bytes).
    pub perf_metrics: u64,
}

impl SimTopdown {
    /// The demonstration workload's profile: retiring 0x66, bad speculation 0x1A, frontend
    /// bound 0x33, backend bound 0x4C (sum 0xFF); heavy operations 0x22, branch mispredicts
    /// 0x15, fetch latency 0x20, memory bound 0x30 (each within its level-1 parent).
    pub const DEMO_PROFILE: u64 = 0x3020_1522_4C33_1A66;

    /// A core reporting `shares` shares (0, 4 or 8) running the demonstration workload.
    pub fn demo(shares: u8) -> Self {
        SimTopdown {
            shares,
            perf_metrics: SimTopdown::DEMO_PROFILE,
        }
    }

    /// The bytes the core reports: the low `shares` bytes.
    fn reported(&self) -> u64 {
        match self.shares {
            0 => 0,
            s if s >= 8 => u64::MAX,
            s => (1u64 << (8 * u32::from(s))) - 1,
        }
    }
}

/// TOPDOWN.SLOTS's event select and unit mask in Intel's event lists ("Fixed counter 3").
pub const SLOTS_EVENT: (u16, u16) = (0x00, 0x04);

impl Default for ArchConfig {
    /// A Sandy Bridge-like core: version 3, 4 counters of 48 bits, 3 fixed, full-width writes.
    fn default() -> Self {
        Self {
            version: 3,
            gp_counters: 4,
            gp_width: 48,
            fixed_counters: 3,
            fixed_mask: 0,
            fixed_width: 48,
            fw_write: true,
            topdown: SimTopdown::default(),
        }
    }
}

/// The fixed counters simulated as counters of their fixed events (0-2 and 4-6); counter 3 is
/// the top-down slots ([`SimTopdown`]), and its element of the counters is unused.
const SIMULATED_FIXED: usize = 7;

/// The event each fixed counter counts, as the workload's general-counter event (select,
/// umask): 0 INST_RETIRED.ANY, 1 and 2 unhalted core cycles (the simulated reference clock
/// runs with the core's), 4-6 Clearwater Forest's TOPDOWN_BAD_SPECULATION.ALL,
/// TOPDOWN_FE_BOUND.ALL and TOPDOWN_RETIRING.ALL (Linux's intel_skt_event_constraints:
/// 0x0073, 0x019c, 0x02c2). Counter 3 counts slots.
const FIXED_EVENTS: [(u16, u16); SIMULATED_FIXED] = [
    (0xC0, 0x00),
    (0x3C, 0x00),
    (0x3C, 0x00),
    (0x00, 0x00),
    (0x73, 0x00),
    (0x9C, 0x01),
    (0xC2, 0x02),
];

impl ArchConfig {
    /// The core of `processor`: the default one, or where the processor has the top-down
    /// registers (`topdown-metrics` in processors.xml), a version-5 core that enumerates
    /// four fixed counters, reports PERF_METRICS and runs the demonstration profile.
    pub fn of(processor: &ProcessorInfo) -> Self {
        if processor.fixed_counters & 0x70 != 0 {
            // Fixed counters beyond 3 are enumerated by CPUID.0AH:ECX's bitmap (version 5).
            return ArchConfig {
                version: 5,
                fixed_mask: u32::from(processor.fixed_counters),
                ..ArchConfig::default()
            };
        }
        if processor.topdown_metrics == 0 {
            return ArchConfig::default();
        }
        ArchConfig {
            version: 5,
            fixed_counters: 4,
            topdown: SimTopdown::demo(processor.topdown_metrics),
            ..ArchConfig::default()
        }
    }

    /// Whether fixed counter `i` exists: 0-2 and 4-6 where CPUID enumerates them, 3
    /// (TOPDOWN.SLOTS) where [`Self::has_slots`] says.
    fn has_fixed(&self, i: u32) -> bool {
        match i {
            0..=2 | 4..=6 => self.cpuid().fixed_counter(i),
            3 => self.has_slots(),
            _ => false,
        }
    }

    /// Whether fixed counter 3 (TOPDOWN.SLOTS) exists: the core has the top-down registers
    /// and CPUID enumerates it.
    fn has_slots(&self) -> bool {
        self.topdown.shares > 0 && self.cpuid().fixed_counter(3)
    }

    /// The CPUID leaf 0AH a processor with this configuration returns.
    pub fn cpuid(&self) -> Cpuid0A {
        Cpuid0A {
            eax: u32::from(self.version)
                | u32::from(self.gp_counters) << 8
                | u32::from(self.gp_width) << 16
                | 7 << 24,
            ebx: 0,
            ecx: self.fixed_mask,
            edx: u32::from(self.fixed_counters) | u32::from(self.fixed_width) << 5,
        }
    }
}

fn width_mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Which architectural register an MSR is.
enum Kind {
    Pmc(u32),
    APmc(u32),
    EvtSel(u32),
    FixedCtr(u32),
    FixedCtrl,
    Slots,
    PerfMetrics,
    GlobalStatus,
    GlobalCtrl,
    GlobalOvf,
    Capabilities,
    InUse,
    /// An auxiliary MSR some core events need (offcore response, load latency, front end):
    /// it holds what software writes, its reserved bits refused.
    Aux,
}

fn kind(reg: &Reg) -> Option<Kind> {
    let n = reg.addr.index;
    Some(match reg.info.type_name {
        "Ia32Pmc" => Kind::Pmc(n),
        "Ia32APmc" => Kind::APmc(n),
        "Ia32PerfEvtSel" => Kind::EvtSel(n),
        "Ia32FixedCtr" => Kind::FixedCtr(n),
        "Ia32FixedCtrCtrl" => Kind::FixedCtrl,
        "Ia32FixedCtr3" => Kind::Slots,
        "Ia32FixedCtr4" => Kind::FixedCtr(4),
        "Ia32FixedCtr5" => Kind::FixedCtr(5),
        "Ia32FixedCtr6" => Kind::FixedCtr(6),
        "Ia32PerfMetrics" => Kind::PerfMetrics,
        "Ia32PerfGlobalStatus" => Kind::GlobalStatus,
        "Ia32PerfGlobalCtrl" => Kind::GlobalCtrl,
        "Ia32PerfGlobalOvfCtrl" => Kind::GlobalOvf,
        "Ia32PerfCapabilities" => Kind::Capabilities,
        "Ia32PerfGlobalInuse" => Kind::InUse,
        "MsrOffcoreRsp" | "MsrPebsLdLatThreshold" | "MsrPebsFrontend" => Kind::Aux,
        _ => return None,
    })
}

/// One logical CPU's PMU.
#[derive(Debug, Clone)]
pub(crate) struct CpuState {
    config: ArchConfig,
    regs: RegFile,
    gp: Vec<u64>,
    fixed: Vec<u64>,
    /// Fixed counter 3.
    slots: u64,
    /// IA32_PERF_METRICS as last written, and whether slots have been counted into the
    /// metrics since (then it reads the workload's shares).
    perf_metrics: (u64, bool),
    /// The shares of the named workload running, which replace the configured ones.
    perf_metrics_profile: Option<u64>,
}

/// Bits of IA32_PERF_GLOBAL_CTRL/STATUS for counters this CPU lacks, which it refuses.
fn absent_counter_bits(c: &ArchConfig) -> u64 {
    let gp = width_mask(c.gp_counters) ^ 0xFFFF_FFFF;
    // Fixed counters 0-6 (3 is TOPDOWN.SLOTS), and the PERF_METRICS enable.
    let fixed = (0..7)
        .filter(|&i| !c.has_fixed(i))
        .fold(0, |m, i| m | 1 << (32 + i));
    let metrics = if c.topdown.shares == 0 { 1 << 48 } else { 0 };
    gp | fixed | metrics
}

impl CpuState {
    pub fn new(config: ArchConfig) -> Self {
        Self {
            config,
            regs: RegFile::default(),
            gp: vec![0; usize::from(config.gp_counters)],
            fixed: vec![0; SIMULATED_FIXED],
            slots: 0,
            perf_metrics: (0, false),
            perf_metrics_profile: None,
        }
    }

    fn exists(&self, k: &Kind) -> bool {
        let c = &self.config;
        match *k {
            Kind::Pmc(n) | Kind::EvtSel(n) => n < u32::from(c.gp_counters),
            Kind::APmc(n) => c.fw_write && n < u32::from(c.gp_counters),
            Kind::FixedCtr(n) => c.has_fixed(n),
            Kind::InUse => c.version >= 4,
            Kind::GlobalStatus | Kind::GlobalCtrl | Kind::GlobalOvf => c.version >= 2,
            Kind::FixedCtrl => c.cpuid().fixed_counter_mask() != 0,
            Kind::Slots => c.has_slots(),
            Kind::PerfMetrics => c.topdown.shares > 0,
            Kind::Capabilities | Kind::Aux => true,
        }
    }

    /// A read, or `None` where the processor faults.
    pub fn read(&self, reg: &Reg) -> Option<u64> {
        let k = kind(reg)?;
        if !self.exists(&k) {
            return None;
        }
        Some(match k {
            Kind::Pmc(n) | Kind::APmc(n) => self.gp[n as usize],
            Kind::FixedCtr(n) => self.fixed[n as usize],
            Kind::Slots => self.slots,
            Kind::PerfMetrics => match self.perf_metrics {
                (_, true) => {
                    let shares = self
                        .perf_metrics_profile
                        .unwrap_or(self.config.topdown.perf_metrics);
                    shares & self.config.topdown.reported()
                }
                (written, false) => written,
            },
            Kind::Capabilities => {
                let caps = regs::set(reg.info, 0, "fw_write", u64::from(self.config.fw_write));
                let metrics = self.config.topdown.shares > 0;
                regs::set(reg.info, caps, "perf_metrics", u64::from(metrics))
            }
            Kind::InUse => self.in_use(reg),
            _ => self.regs.get(reg),
        })
    }

    /// IA32_PERF_GLOBAL_INUSE as the SDM lists it: a counter is in use when its event select
    /// (bits 7:0) is non-zero, a fixed counter when its enable field is non-zero, and PMI when
    /// any INT or ENi_PMI bit is set.
    fn in_use(&self, reg: &Reg) -> u64 {
        let mut v = 0u64;
        let mut pmi = false;
        for n in 0..u32::from(self.config.gp_counters) {
            let sel = self.evtsel(n);
            if sel & 0xFF != 0 {
                v |= 1 << n;
            }
            pmi |= sel >> 20 & 1 != 0;
        }
        let fc = self.fixed_ctrl();
        for i in (0..4).filter(|&i| self.config.has_fixed(i)) {
            if fc >> (4 * i) & 0b11 != 0 {
                v |= 1 << (32 + i);
            }
            pmi |= fc >> (4 * i + 3) & 1 != 0;
        }
        regs::set(reg.info, v, "pmi_in_use", u64::from(pmi))
    }

    fn evtsel(&self, n: u32) -> u64 {
        self.reg_value("Ia32PerfEvtSel", n)
    }

    fn fixed_ctrl(&self) -> u64 {
        self.reg_value("Ia32FixedCtrCtrl", 0)
    }

    fn reg_value(&self, type_name: &str, index: u32) -> u64 {
        super::arch_reg(type_name, index).map_or(0, |r| self.regs.get(&r))
    }

    /// A write, or `false` where the processor faults (#GP).
    pub fn write(&mut self, reg: &Reg, raw: u64) -> bool {
        let Some(k) = kind(reg) else { return false };
        if !self.exists(&k) {
            return false;
        }
        let c = self.config;
        match k {
            Kind::Pmc(n) => {
                // WRMSR to IA32_PMCx stores the sign extension of EAX (SDM 18.2.5).
                let extended = raw as u32 as i32 as i64 as u64;
                self.gp[n as usize] = extended & width_mask(c.gp_width);
                true
            }
            Kind::APmc(n) => {
                if raw & !width_mask(c.gp_width) != 0 {
                    return false;
                }
                self.gp[n as usize] = raw;
                true
            }
            Kind::FixedCtr(n) => {
                if raw & !width_mask(c.fixed_width) != 0 {
                    return false;
                }
                self.fixed[n as usize] = raw;
                true
            }
            Kind::Slots => {
                if raw & !width_mask(c.fixed_width) != 0 {
                    return false;
                }
                self.slots = raw;
                true
            }
            Kind::PerfMetrics => {
                self.perf_metrics = (raw, false);
                true
            }
            Kind::Capabilities | Kind::InUse => false,
            Kind::GlobalCtrl | Kind::GlobalOvf if raw & absent_counter_bits(&c) != 0 => false,
            Kind::GlobalOvf => {
                let Some(w) = regs::write(reg.info, 0, raw) else {
                    return false;
                };
                // Each clear bit sits at the position of the status bit it clears.
                if let Some(status) = super::arch_reg("Ia32PerfGlobalStatus", 0) {
                    let s = self.regs.get(&status) & !w.actions;
                    self.regs.put(&status, s);
                }
                true
            }
            _ => {
                let old = self.regs.get(reg);
                match regs::write(reg.info, old, raw) {
                    Some(w) => {
                        self.regs.put(reg, w.stored);
                        true
                    }
                    None => false,
                }
            }
        }
    }

    fn global_enabled(&self, bit: u32) -> bool {
        self.config.version < 2 || self.reg_value("Ia32PerfGlobalCtrl", 0) >> bit & 1 != 0
    }

    fn set_status(&mut self, bit: u32) {
        if let Some(status) = super::arch_reg("Ia32PerfGlobalStatus", 0) {
            let s = self.regs.get(&status) | 1 << bit;
            self.regs.put(&status, s);
        }
    }

    /// Counts `count` events with this event select and umask in every enabled counter that
    /// selects them (and TOPDOWN.SLOTS in fixed counter 3).
    pub fn inject(&mut self, cpu: u32, ev_sel: u16, umask: u16, count: u64, journal: &mut Journal) {
        if (ev_sel, umask) == SLOTS_EVENT {
            self.count_slots(count);
        }
        for n in 0..u32::from(self.config.gp_counters) {
            let sel = self.evtsel(n);
            let matches = sel & 0xFF == u64::from(ev_sel) && sel >> 8 & 0xFF == u64::from(umask);
            if matches && sel >> 22 & 1 != 0 && self.global_enabled(n) {
                self.count_gp(cpu, n, count, journal);
            }
        }
        journal.seq.0 += count;
    }

    /// Adds `count` to general counter `n`, with its overflow and PMI.
    fn count_gp(&mut self, cpu: u32, n: u32, count: u64, journal: &mut Journal) {
        let int = self.evtsel(n) >> 20 & 1 != 0;
        let width = self.config.gp_width;
        let overflows = advance(&mut self.gp[n as usize], width, count, journal.seq.0);
        let counter = || format!("IA32_PMC{n}");
        self.overflowed(&overflows, n, int, cpu, counter, journal);
    }

    /// Sets global status bit `bit` for each overflow (at its event number) and, where the
    /// counter interrupts (`pmi`), records a PMI from `counter` on `cpu`.
    fn overflowed(
        &mut self,
        overflows: &[u64],
        bit: u32,
        pmi: bool,
        cpu: u32,
        counter: impl Fn() -> String,
        journal: &mut Journal,
    ) {
        for &at in overflows {
            self.set_status(bit);
            if pmi {
                journal.pmis.push(PmiRecord {
                    event: at,
                    source: PmiSource::Core {
                        cpu,
                        counter: counter(),
                    },
                    core: Some(cpu),
                });
            }
        }
    }

    /// Runs the workload `w` from core cycle `from` to `to` of its clock: each enabled
    /// general counter counts what its IA32_PERFEVTSELx selects (SDM Vol. 3B 20.2.1: event
    /// select 7:0, unit mask 15:8, USR 16, OS 17, E 18, INT 20, ANY 21, EN 22, INV 23, CMASK
    /// 31:24), fixed counters 0-2 instructions retired, unhalted core cycles and reference
    /// cycles as IA32_FIXED_CTR_CTRL's nibble selects (OS bit 0, USR bit 1, AnyThread bit
    /// 2), fixed counters 4-6 (where the core has them) their top-down events, fixed counter 3 the core's slots per unhalted cycle, and IA32_PERF_METRICS then reads
    /// the workload's shares.
    pub fn run_workload(
        &mut self,
        cpu: u32,
        w: &super::running::ResolvedWorkload,
        (from, to): (u64, u64),
        journal: &mut Journal,
    ) {
        use super::counting::Filter;
        let span = |p: super::counting::CyclePattern, f: &Filter| {
            p.count_until(f, to).saturating_sub(p.count_until(f, from))
        };
        for n in 0..u32::from(self.config.gp_counters) {
            let sel = self.evtsel(n);
            if sel >> 22 & 1 == 0 || !self.global_enabled(n) {
                continue;
            }
            let filter = Filter {
                cmask: (sel >> 24) as u8,
                invert: sel >> 23 & 1 != 0,
                edge: sel >> 18 & 1 != 0,
                user: sel >> 16 & 1 != 0,
                kernel: sel >> 17 & 1 != 0,
                any_thread: sel >> 21 & 1 != 0,
            };
            let p = w.core((sel & 0xFF) as u16, (sel >> 8 & 0xFF) as u16);
            let count = span(p, &filter);
            self.count_gp(cpu, n, count, journal);
        }
        let fc = self.fixed_ctrl();
        for i in (0..SIMULATED_FIXED as u32).filter(|&i| i != 3) {
            let nibble = fc >> (4 * i) & 0xF;
            let filter = Filter {
                kernel: nibble & 1 != 0,
                user: nibble & 2 != 0,
                any_thread: nibble & 4 != 0,
                ..Filter::ALL
            };
            let (ev, umask) = FIXED_EVENTS[i as usize];
            let p = w.core(ev, umask);
            let count = span(p, &filter);
            self.inject_fixed(cpu, i, count, journal);
        }
        let slots = span(w.core(0x3C, 0x00), &Filter::ALL).saturating_mul(w.slots_per_cycle());
        self.perf_metrics_profile = Some(w.workload().perf_metrics);
        self.count_slots(slots);
    }

    /// Counts `count` slots in fixed counter 3 if the core has it and it is enabled; with
    /// PERF_METRICS enabled too, the metrics then read the workload's shares.
    fn count_slots(&mut self, count: u64) {
        let enabled = self.fixed_ctrl() >> 12 & 0b11 != 0 && self.global_enabled(35);
        if !self.config.has_slots() || !enabled || count == 0 {
            return;
        }
        let width = self.config.fixed_width;
        // No PMI is modelled for fixed counter 3.
        let _ = advance(&mut self.slots, width, count, 0);
        if self.global_enabled(48) {
            self.perf_metrics.1 = true;
        }
    }

    /// Counts `count` events in fixed counter `i` if it is enabled.
    pub fn inject_fixed(&mut self, cpu: u32, i: u32, count: u64, journal: &mut Journal) {
        // Fixed counter 3 counts slots (count_slots), not a fixed event.
        if i != 3 && (i as usize) < SIMULATED_FIXED && self.config.has_fixed(i) {
            let fc = self.fixed_ctrl();
            if fc >> (4 * i) & 0b11 != 0 && self.global_enabled(32 + i) {
                let width = self.config.fixed_width;
                let overflows = advance(&mut self.fixed[i as usize], width, count, journal.seq.0);
                let pmi = fc >> (4 * i + 3) & 1 != 0;
                let counter = || format!("IA32_FIXED_CTR{i}");
                self.overflowed(&overflows, 32 + i, pmi, cpu, counter, journal);
            }
        }
        journal.seq.0 += count;
    }
}

/// Adds `count` to a `width`-bit counter; returns the injected-event numbers at which it
/// wrapped (at most a few are listed: a caller injecting 2^48 events at once does not need
/// every one).
fn advance(value: &mut u64, width: u8, count: u64, seq: u64) -> Vec<u64> {
    let modulus = width_mask(width) as u128 + 1;
    let old = u128::from(*value);
    let sum = old + u128::from(count);
    let wraps = (sum / modulus) as u64;
    *value = (sum % modulus) as u64;
    (0..wraps.min(4))
        .map(|k| seq + (modulus - old) as u64 + k * modulus as u64)
        .collect()
}
