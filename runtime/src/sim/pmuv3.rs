//! Arm's core PMU (PMUv3) as system registers of each simulated CPU, answering as the Arm
//! Architecture Reference Manual (DDI 0487, D13 and the AArch64 PMU register descriptions)
//! says, for a processor whose spec has `space="sysreg"` registers (`neoverse-v2`):
//!
//! - PMCR_EL0: E is the global enable; a write of P zeroes the event counters and of C the
//!   cycle counter (both read as zero); N (read-only) is the number of event counters, the
//!   spec's reset value of the field (the part's TRM's), which every other rule here takes
//!   from the register; LP and LC choose where an event counter and the cycle counter
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
//! - PMSELR_EL0.SEL selects the counter PMXEVTYPER_EL0 and PMXEVCNTR_EL0 reach: event
//!   counter SEL below N, or with SEL 31 PMCCFILTR_EL0 through PMXEVTYPER_EL0; any other
//!   selection (CONSTRAINED UNPREDICTABLE in the Arm ARM) is refused. A write through them
//!   follows the selected register's own rules (its reserved bits refused).
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
    Selr,
    /// PMXEVTYPER_EL0: the PMEVTYPER (or PMCCFILTR) PMSELR_EL0 selects.
    Xevtyper,
    /// PMXEVCNTR_EL0: the PMEVCNTR PMSELR_EL0 selects.
    Xevcntr,
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
                    "Pmselr" => PmuReg::Selr,
                    "Pmxevtyper" => PmuReg::Xevtyper,
                    "Pmxevcntr" => PmuReg::Xevcntr,
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

    /// The register of kind `kind` (a box-level one: PMCR_EL0, PMCCFILTR_EL0, ...).
    fn info(&self, kind: PmuReg) -> Option<&'static RegisterInfo> {
        self.by_location
            .values()
            .find(|(k, _)| *k == kind)
            .map(|(_, info)| *info)
    }

    /// A core's PMU at power-on: PMCR_EL0 at the spec's reset value, whose N (the part's
    /// number of event counters, from its TRM) says which counters exist.
    pub fn power_on(&self) -> Pmuv3State {
        Pmuv3State {
            pmcr: self.info(PmuReg::Pmcr).map_or(0, |info| info.reset),
            ..Pmuv3State::default()
        }
    }

    /// The event counters the core implements: PMCR_EL0.N of `pmcr`, the field whose role is
    /// `counter-count` (Arm ARM: bits 15:11).
    fn event_counters(&self, pmcr: u64) -> u32 {
        let n = self
            .info(PmuReg::Pmcr)
            .and_then(|info| info.role(pmu_regs::Role::CounterCount))
            .map_or(0, |f| f.extract(pmcr));
        // The field is 5 bits wide: at most 31.
        n.min(31) as u32
    }

    fn get(&self, location: Location) -> Answer<(PmuReg, &'static RegisterInfo)> {
        self.by_location
            .get(&location)
            .copied()
            .ok_or("the encoding of a PMU system register of this core")
    }
}

/// One core's PMU state.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pmuv3State {
    /// PMCR_EL0's stored bits (N included).
    pmcr: u64,
    enabled: u32,
    overflowed: u32,
    types: [u64; 31],
    counts: [u64; 31],
    cycle_filter: u64,
    cycles: u64,
    /// PMSELR_EL0.SEL.
    selected: u32,
    other: HashMap<Location, u64>,
}

/// The enable/overflow bits of the `n` event counters and the cycle counter.
fn implemented(n: u32) -> u32 {
    ((1u64 << n) - 1) as u32 | (1 << CYCLE_BIT)
}

/// `Ok(i)` for event counter `i` of the `n` implemented, else the UNDEFINED access refused.
fn counter(i: u32, n: u32) -> Answer<usize> {
    if i < n {
        Ok(i as usize)
    } else {
        Err("an event counter below PMCR_EL0.N (the others are UNDEFINED)")
    }
}

/// What PMXEVTYPER_EL0 or PMXEVCNTR_EL0 reaches with PMSELR_EL0.SEL `sel`.
fn selected(kind: PmuReg, sel: u32, n: u32) -> Answer<PmuReg> {
    match kind {
        PmuReg::Xevtyper if sel == CYCLE_BIT => Ok(PmuReg::Ccfiltr),
        PmuReg::Xevtyper if sel < n => Ok(PmuReg::Evtyper(sel)),
        PmuReg::Xevcntr if sel < n => Ok(PmuReg::Evcntr(sel)),
        _ => Err(
            "PMSELR_EL0.SEL below PMCR_EL0.N (or 31, PMCCFILTR_EL0, for PMXEVTYPER_EL0): \
                  any other selection is CONSTRAINED UNPREDICTABLE",
        ),
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
    /// The register `kind` names, or for PMXEVTYPER_EL0 and PMXEVCNTR_EL0 the one PMSELR_EL0
    /// selects.
    fn resolve(&self, regs: &Pmuv3Regs, kind: PmuReg) -> Answer<PmuReg> {
        match kind {
            PmuReg::Xevtyper | PmuReg::Xevcntr => {
                selected(kind, self.selected, regs.event_counters(self.pmcr))
            }
            k => Ok(k),
        }
    }

    /// The value of register `kind` (resolved), `info` and `location` its own.
    fn value(
        &self,
        regs: &Pmuv3Regs,
        kind: PmuReg,
        (location, info): (Location, &RegisterInfo),
    ) -> Answer<u64> {
        let n = regs.event_counters(self.pmcr);
        Ok(match kind {
            PmuReg::Pmcr => self.pmcr,
            PmuReg::CntenSet | PmuReg::CntenClr => u64::from(self.enabled),
            PmuReg::OvsSet | PmuReg::OvsClr => u64::from(self.overflowed),
            PmuReg::Evtyper(i) => self.types[counter(i, n)?],
            PmuReg::Evcntr(i) => self.counts[counter(i, n)?],
            PmuReg::Ccfiltr => self.cycle_filter,
            PmuReg::Ccntr => self.cycles,
            PmuReg::Selr => u64::from(self.selected),
            PmuReg::Other | PmuReg::Xevtyper | PmuReg::Xevcntr => {
                self.other.get(&location).copied().unwrap_or(info.reset)
            }
        })
    }

    /// Reads the register at `location`.
    pub fn read(&self, regs: &Pmuv3Regs, location: Location) -> Answer<u64> {
        let (kind, info) = regs.get(location)?;
        self.value(regs, self.resolve(regs, kind)?, (location, info))
    }

    /// Writes `raw` to the register at `location` (through PMXEVTYPER_EL0 or PMXEVCNTR_EL0,
    /// to the one selected, under its rules); a read-only register or a reserved bit set is
    /// refused, nothing written.
    pub fn write(&mut self, regs: &Pmuv3Regs, location: Location, raw: u64) -> Answer<()> {
        let (kind, own) = regs.get(location)?;
        let target = self.resolve(regs, kind)?;
        let info = if target == kind {
            own
        } else {
            regs.info(target)
                .ok_or("the selected register in this core's spec")?
        };
        let old = self.value(regs, target, (location, info))?;
        let written =
            regs::write(info, old, raw).ok_or("a writable register and no reserved bit set")?;
        let n = regs.event_counters(self.pmcr);
        let bits = (raw as u32) & implemented(n);
        match target {
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
            PmuReg::Evtyper(i) => self.types[counter(i, n)?] = written.stored,
            PmuReg::Evcntr(i) => self.counts[counter(i, n)?] = raw,
            PmuReg::Ccfiltr => self.cycle_filter = written.stored,
            PmuReg::Ccntr => self.cycles = raw,
            // SEL is bits 4:0 (Arm ARM; the rest is reserved, refused above).
            PmuReg::Selr => self.selected = (written.stored & 0x1f) as u32,
            PmuReg::Other | PmuReg::Xevtyper | PmuReg::Xevcntr => {
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
        for n in 0..regs.event_counters(self.pmcr) as usize {
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
