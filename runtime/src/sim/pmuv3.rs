//! Arm's core PMU (PMUv3) as system registers of each simulated CPU, answering as the Arm
//! Architecture Reference Manual (DDI 0487, D13 and the AArch64 PMU register descriptions)
//! says, for a processor whose spec has `space="sysreg"` registers (`neoverse-v2`):
//!
//! - PMCR_EL0: E is the global enable; a write of P zeroes the event counters and of C the
//!   cycle counter (both read as zero); N (read-only) is the number of event counters,
//!   [`EVENT_COUNTERS`]; LP and LC choose where an event counter and the cycle counter
//!   overflow (64 bits when set, 32 when clear).
//! - PMCNTENSET_EL0 and PMCNTENCLR_EL0 read the same enable bits; a 1 written to the first
//!   sets a bit, to the second clears it, a 0 changes nothing. PMOVSSET_EL0 and PMOVSCLR_EL0
//!   do the same for the overflow flags. Bits of counters the core does not implement read as
//!   zero and ignore writes (RAZ/WI).
//! - An event counter counts the events its PMEVTYPER{n}_EL0 selects (bits 15:0) while E and
//!   its enable bit are set, in the exception levels its filter bits allow; the cycle counter
//!   counts CPU_CYCLES (common event 0x11) under PMCCFILTR_EL0's filter. Counters are 64 bits
//!   (FEAT_PMUv3p5) and overflow (set their flag) on a carry out of bit 31, or of bit 63 under
//!   LP/LC; the value itself wraps at 64 bits, as Linux KVM's emulation (`pmu-emul.c`) does.
//! - PMEVTYPER{n}/PMEVCNTR{n} with n >= N are UNDEFINED: the access is refused.
//!
//! Not modelled: Secure and Realm states (a Linux host runs Non-secure), EL3, PMCR_EL0.D
//! (the divide-by-64 of the cycle counter), chained counters, interrupts (PMINTENSET keeps its
//! value only) and PMSWINC_EL0.

use std::collections::HashMap;

use pmu_regs::{Location, RegisterInfo};

use super::regs;

/// Why the simulated core refused an access: what the access would need instead.
pub(crate) type Refused = &'static str;
type Answer<T> = std::result::Result<T, Refused>;

/// Event counters a simulated core implements (PMCR_EL0.N): six, the `counters` Arm's
/// machine-readable event lists give the Neoverse N1, N2 and V1 (the V2, V3 and N3 lists do
/// not say; every simulated Neoverse core takes six).
pub const EVENT_COUNTERS: u32 = 6;
/// The common event the cycle counter counts: CPU_CYCLES (Arm ARM, common event 0x0011).
pub const CPU_CYCLES: u16 = 0x11;
/// The cycle counter's bit in the enable and overflow registers.
const CYCLE_BIT: u32 = 31;

/// The exception level (in Non-secure state) an injected event happens at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExceptionLevel {
    /// Applications.
    El0,
    /// The kernel.
    El1,
    /// The hypervisor.
    El2,
}

/// Which PMU register an encoding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PmuReg {
    Pmcr,
    CntenSet,
    CntenClr,
    OvsSet,
    OvsClr,
    Evtyper(u32),
    Evcntr(u32),
    Ccfiltr,
    Ccntr,
    /// Any other PMU register: kept as the generic model keeps one.
    Other,
}

/// The PMU system registers of a processor, by encoding.
#[derive(Debug, Default)]
pub(crate) struct Pmuv3Regs {
    by_location: HashMap<Location, (PmuReg, &'static RegisterInfo)>,
    /// The event counters' width: 64 (FEAT_PMUv3p5), or 32 where the spec's PMEVCNTR{n}
    /// count field is 31:0 (the Armv8.2 N1 and Armv8.4 V1).
    event_bits: u32,
}

impl Pmuv3Regs {
    /// The `space="sysreg"` registers of `processor` (none for an x86 part).
    pub fn of(processor: &'static pmu_regs::ProcessorInfo) -> Self {
        let mut by_location = HashMap::new();
        for info in processor.units.iter().flat_map(|u| u.registers.iter()) {
            for addr in info.known_addresses() {
                if !matches!(addr.location, Location::SysReg(_)) {
                    continue;
                }
                let kind = match info.type_name {
                    "Pmcr" => PmuReg::Pmcr,
                    "Pmcntenset" => PmuReg::CntenSet,
                    "Pmcntenclr" => PmuReg::CntenClr,
                    "Pmovsset" => PmuReg::OvsSet,
                    "Pmovsclr" => PmuReg::OvsClr,
                    "Pmevtyper" => PmuReg::Evtyper(addr.index),
                    "Pmevcntr" => PmuReg::Evcntr(addr.index),
                    "Pmccfiltr" => PmuReg::Ccfiltr,
                    "Pmccntr" => PmuReg::Ccntr,
                    _ => PmuReg::Other,
                };
                by_location.insert(addr.location, (kind, *info));
            }
        }
        let event_bits = by_location
            .values()
            .find(|(k, _)| matches!(k, PmuReg::Evcntr(_)))
            .and_then(|(_, info)| info.role(pmu_regs::Role::Count))
            .map_or(64, |f| f.mask().count_ones());
        Self {
            by_location,
            event_bits,
        }
    }

    /// Whether the processor has none (an x86 part).
    pub fn is_empty(&self) -> bool {
        self.by_location.is_empty()
    }

    fn get(&self, location: Location) -> Answer<(PmuReg, &'static RegisterInfo)> {
        self.by_location
            .get(&location)
            .copied()
            .ok_or("the encoding of a PMU system register of this core")
    }
}

/// One core's PMU state.
#[derive(Debug, Clone)]
pub(crate) struct Pmuv3State {
    /// PMCR_EL0's stored bits (N included).
    pmcr: u64,
    enabled: u32,
    overflowed: u32,
    types: [u64; 31],
    counts: [u64; 31],
    cycle_filter: u64,
    cycles: u64,
    other: HashMap<Location, u64>,
}

impl Default for Pmuv3State {
    fn default() -> Self {
        Self {
            pmcr: u64::from(EVENT_COUNTERS) << 11,
            enabled: 0,
            overflowed: 0,
            types: [0; 31],
            counts: [0; 31],
            cycle_filter: 0,
            cycles: 0,
            other: HashMap::new(),
        }
    }
}

/// The enable/overflow bits of the counters the core implements.
fn implemented() -> u32 {
    ((1u32 << EVENT_COUNTERS) - 1) | (1 << CYCLE_BIT)
}

/// `Ok(n)` for an implemented event counter, else the UNDEFINED access refused.
fn counter(n: u32) -> Answer<usize> {
    if n < EVENT_COUNTERS {
        Ok(n as usize)
    } else {
        Err("an event counter below PMCR_EL0.N (the others are UNDEFINED)")
    }
}

/// Whether a filter (PMEVTYPER{n}_EL0 or PMCCFILTR_EL0 bits 31:27) lets an event at `level`
/// in Non-secure state count: EL0 when NSU equals U, EL1 when NSK equals P, EL2 when NSH is
/// set (Arm ARM, PMEVTYPER{n}_EL0 field descriptions).
pub(crate) fn counts_at(filter: u64, level: ExceptionLevel) -> bool {
    let bit = |n: u32| filter >> n & 1;
    let (p, u, nsk, nsu, nsh) = (bit(31), bit(30), bit(29), bit(28), bit(27));
    match level {
        ExceptionLevel::El0 => nsu == u,
        ExceptionLevel::El1 => nsk == p,
        ExceptionLevel::El2 => nsh == 1,
    }
}

impl Pmuv3State {
    /// Reads the register at `location`.
    pub fn read(&self, regs: &Pmuv3Regs, location: Location) -> Answer<u64> {
        let (kind, info) = regs.get(location)?;
        Ok(match kind {
            PmuReg::Pmcr => self.pmcr,
            PmuReg::CntenSet | PmuReg::CntenClr => u64::from(self.enabled),
            PmuReg::OvsSet | PmuReg::OvsClr => u64::from(self.overflowed),
            PmuReg::Evtyper(n) => self.types[counter(n)?],
            PmuReg::Evcntr(n) => self.counts[counter(n)?],
            PmuReg::Ccfiltr => self.cycle_filter,
            PmuReg::Ccntr => self.cycles,
            PmuReg::Other => self.other.get(&location).copied().unwrap_or(info.reset),
        })
    }

    /// Writes `raw` to the register at `location`; a read-only register or a reserved bit set
    /// is refused, nothing written.
    pub fn write(&mut self, regs: &Pmuv3Regs, location: Location, raw: u64) -> Answer<()> {
        let (kind, info) = regs.get(location)?;
        let old = self.read(regs, location)?;
        let written =
            regs::write(info, old, raw).ok_or("a writable register and no reserved bit set")?;
        let bits = (raw as u32) & implemented();
        match kind {
            PmuReg::Pmcr => {
                self.pmcr = written.stored;
                if raw & 0b10 != 0 {
                    self.counts = [0; 31];
                }
                if raw & 0b100 != 0 {
                    self.cycles = 0;
                }
            }
            PmuReg::CntenSet => self.enabled |= bits,
            PmuReg::CntenClr => self.enabled &= !bits,
            PmuReg::OvsSet => self.overflowed |= bits,
            PmuReg::OvsClr => self.overflowed &= !bits,
            PmuReg::Evtyper(n) => self.types[counter(n)?] = written.stored,
            PmuReg::Evcntr(n) => self.counts[counter(n)?] = raw,
            PmuReg::Ccfiltr => self.cycle_filter = written.stored,
            PmuReg::Ccntr => self.cycles = raw,
            PmuReg::Other => {
                self.other.insert(location, written.stored);
            }
        }
        Ok(())
    }

    /// Counts `count` events `event` at `level` on a core with registers `regs`.
    pub fn count(&mut self, regs: &Pmuv3Regs, event: u16, level: ExceptionLevel, count: u64) {
        if self.pmcr & 1 == 0 {
            return;
        }
        let long_events = self.pmcr >> 7 & 1 == 1;
        for n in 0..EVENT_COUNTERS as usize {
            let t = self.types[n];
            if self.enabled >> n & 1 == 1 && t & 0xffff == u64::from(event) && counts_at(t, level) {
                let long = long_events && regs.event_bits == 64;
                let (value, over) = advance(self.counts[n], count, long);
                // A 32-bit counter wraps where it overflows.
                self.counts[n] = if regs.event_bits < 64 {
                    value & u64::from(u32::MAX)
                } else {
                    value
                };
                self.overflowed |= u32::from(over) << n;
            }
        }
        let on = self.enabled >> CYCLE_BIT & 1 == 1;
        if on && event == CPU_CYCLES && counts_at(self.cycle_filter, level) {
            let (value, over) = advance(self.cycles, count, self.pmcr >> 6 & 1 == 1);
            self.cycles = value;
            self.overflowed |= u32::from(over) << CYCLE_BIT;
        }
    }
}

/// A 64-bit counter at `value` after `count` more, and whether it overflowed: a carry out of
/// bit 63 when `long`, else out of bit 31.
fn advance(value: u64, count: u64, long: bool) -> (u64, bool) {
    let top = if long { u64::MAX } else { u64::from(u32::MAX) };
    let room = u128::from(top - (value & top));
    (value.wrapping_add(count), u128::from(count) > room)
}
