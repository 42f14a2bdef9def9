//! The simulated kernel's Arm core PMU driver (`armv8_pmuv3_0`): what Linux's
//! `drivers/perf/arm_pmuv3.c` does with an event, on the simulator's PMUv3 system registers
//! ([`crate::sim::pmuv3`]) instead of a core's. [`crate::sim_perf::SimPerf`] hands it the
//! groups of a PMU whose counters are system registers.
//!
//! Opening a group decodes each event's `config` through the PMU's format files into
//! PMEVTYPER{n}_EL0 (the event, and the filter bits: `exclude_user` sets U, `exclude_kernel`
//! P, as the driver's `armv8pmu_set_event_filter` does) and takes the event counters in
//! order, only those below the core's PMCR_EL0.N, as the driver's probe
//! (`__armv8pmu_probe_pmu`) reads the number of counters from the core and uses no other, so
//! a group larger than N is refused when opened. Enabling writes each PMEVTYPER, sets its bit in PMCNTENSET_EL0 and PMCR_EL0.E;
//! reading adds each counter's 64-bit increments; closing clears the enable bits it set
//! (PMCNTENCLR_EL0) and puts back PMCR_EL0, the types and the counters as they were.

use std::io;

use pmu_regs::{Location, RegisterInfo, SysRegEncoding};

use crate::boxes::PmuBox;
use crate::perf::encode::to_control;
use crate::perf::layer::{EventAttr, GroupValues, OpenError, OpenGroup};
use crate::perf::KernelPmu;
use crate::sim::Sim;

use super::{io_err, EnabledTime};

/// PMEVTYPER{n}_EL0's U (exclude EL0) and P (exclude EL1) bits (Arm ARM; Linux's
/// ARMV8_PMU_EXCLUDE_EL0 and ARMV8_PMU_EXCLUDE_EL1).
const EXCLUDE_EL0: u64 = 1 << 30;
const EXCLUDE_EL1: u64 = 1 << 31;

fn encoding_of(location: Location) -> Option<SysRegEncoding> {
    match location {
        Location::SysReg(e) => Some(e),
        _ => None,
    }
}

/// A box-level register of `b` by its layout's type name (`Pmcr`).
fn box_reg(b: &PmuBox, type_name: &str) -> Option<SysRegEncoding> {
    b.unit
        .registers
        .iter()
        .find(|r| r.type_name == type_name)
        .and_then(|r| r.known_addresses().first())
        .and_then(|a| encoding_of(a.location))
}

/// One event counter of the group: its number, type and counter registers, the type value.
#[derive(Debug, Clone, Copy)]
struct Slot {
    number: u32,
    typer: SysRegEncoding,
    counter: SysRegEncoding,
    value: u64,
}

/// The number of event counters `pmcr` (PMCR_EL0, laid out by `info`) reports: its field N,
/// whose role is `counter-count`.
fn event_counters(info: &RegisterInfo, pmcr: u64) -> u32 {
    info.role(pmu_regs::Role::CounterCount)
        .map_or(0, |f| f.extract(pmcr)) as u32
}

/// The slots of `events` on box `b` of kernel PMU `pmu`, the counters in `numbers`' order
/// and below `n` (PMCR_EL0.N).
fn slots(
    b: &'static PmuBox,
    (pmu, numbers, n): (&KernelPmu, &[u32], u32),
    events: &[EventAttr],
) -> Result<Vec<Slot>, OpenError> {
    let general: Vec<&crate::boxes::Counter> = numbers
        .iter()
        .filter_map(|&n| b.counter(n))
        .filter(|c| c.info.kind == pmu_regs::CounterKind::General)
        .filter(|c| c.number() < n)
        .collect();
    let mut out = Vec::new();
    for (i, ev) in events.iter().enumerate() {
        let c = general.get(i).ok_or_else(|| OpenError {
            index: i,
            fits_alone: i > 0,
            source: io::Error::from_raw_os_error(22),
        })?;
        let refused = |why: String| OpenError {
            index: i,
            fits_alone: false,
            source: io::Error::new(io::ErrorKind::InvalidInput, why),
        };
        let control = c
            .control
            .ok_or_else(|| refused("no type register".into()))?;
        let info: &'static RegisterInfo = control.info;
        let mut value = to_control(info, &ev.config, &pmu.name, &pmu.formats)
            .map_err(|e| refused(format!("the simulated driver refused it: {e}")))?;
        if ev.exclude_user {
            value |= EXCLUDE_EL0;
        }
        if ev.exclude_kernel {
            value |= EXCLUDE_EL1;
        }
        let (Some(typer), Some(counter)) = (
            encoding_of(control.addr.location),
            encoding_of(c.counter.addr.location),
        ) else {
            return Err(refused("not a system register".into()));
        };
        out.push(Slot {
            number: c.number(),
            typer,
            counter,
            value,
        });
    }
    Ok(out)
}

/// What enabling found and changes: PMCR_EL0, the enable bits, each slot's type and count.
#[derive(Debug, Clone)]
struct PutBack {
    pmcr: u64,
    enabled: u64,
    slots: Vec<(u64, u64)>,
}

/// A group on the simulated Arm core PMU of one CPU.
pub(crate) struct SysRegGroup<'s> {
    sim: &'s Sim,
    cpu: u32,
    slots: Vec<Slot>,
    pmcr: SysRegEncoding,
    enable_set: SysRegEncoding,
    enable_clear: SysRegEncoding,
    /// What was there before enabling.
    saved: Option<PutBack>,
    last: Vec<u64>,
    totals: Vec<u64>,
    enabled: EnabledTime,
}

impl<'s> SysRegGroup<'s> {
    /// The group of `events` on `b`'s registers of `cpu`, counters taken from `numbers`.
    pub fn open(
        sim: &'s Sim,
        (b, pmu, numbers): (&'static PmuBox, &KernelPmu, &[u32]),
        cpu: u32,
        events: &[EventAttr],
    ) -> Result<Self, OpenError> {
        let regs = (
            box_reg(b, "Pmcr"),
            box_reg(b, "Pmcntenset"),
            box_reg(b, "Pmcntenclr"),
        );
        let (Some(pmcr), Some(enable_set), Some(enable_clear)) = regs else {
            return Err(OpenError {
                index: 0,
                fits_alone: false,
                source: io::Error::other("the spec lacks PMCR_EL0 or PMCNTENSET/CLR_EL0"),
            });
        };
        let pmcr_info = b.unit.registers.iter().find(|r| r.type_name == "Pmcr");
        let n = match (pmcr_info, sim.read_sysreg(cpu, pmcr)) {
            (Some(info), Ok(value)) => event_counters(info, value),
            (_, Err(e)) => {
                return Err(OpenError {
                    index: 0,
                    fits_alone: false,
                    source: io_err(e),
                })
            }
            (None, Ok(_)) => 0,
        };
        let slots = slots(b, (pmu, numbers, n), events)?;
        let n = events.len();
        Ok(Self {
            sim,
            cpu,
            slots,
            pmcr,
            enable_set,
            enable_clear,
            saved: None,
            last: vec![0; n],
            totals: vec![0; n],
            enabled: EnabledTime::default(),
        })
    }

    fn mask(&self) -> u64 {
        self.slots.iter().fold(0, |m, s| m | 1 << s.number)
    }

    fn program(&mut self) -> crate::Result<()> {
        let (sim, cpu) = (self.sim, self.cpu);
        let pmcr = sim.read_sysreg(cpu, self.pmcr)?;
        let enabled = sim.read_sysreg(cpu, self.enable_set)?;
        let mut kept = Vec::new();
        for s in &self.slots {
            kept.push((
                sim.read_sysreg(cpu, s.typer)?,
                sim.read_sysreg(cpu, s.counter)?,
            ));
        }
        self.saved = Some(PutBack {
            pmcr,
            enabled,
            slots: kept,
        });
        for s in &self.slots {
            sim.write_sysreg(cpu, s.typer, s.value)?;
        }
        sim.write_sysreg(cpu, self.enable_set, self.mask())?;
        // PMCR_EL0.E, bit 0: the global enable.
        sim.write_sysreg(cpu, self.pmcr, pmcr | 1)
    }

    fn accumulate(&mut self) -> io::Result<()> {
        if !self.enabled.is_running() {
            return Ok(());
        }
        for (k, s) in self.slots.iter().enumerate() {
            let now = self.sim.read_sysreg(self.cpu, s.counter).map_err(io_err)?;
            self.totals[k] = self.totals[k].wrapping_add(now.wrapping_sub(self.last[k]));
            self.last[k] = now;
        }
        Ok(())
    }

    /// Puts back what enabling changed.
    fn restore(&mut self) -> crate::Result<()> {
        let Some(PutBack {
            pmcr,
            enabled,
            slots: kept,
        }) = self.saved.take()
        else {
            return Ok(());
        };
        let (sim, cpu) = (self.sim, self.cpu);
        sim.write_sysreg(cpu, self.enable_clear, self.mask() & !enabled)?;
        for (s, &(typer, count)) in self.slots.iter().zip(&kept) {
            sim.write_sysreg(cpu, s.typer, typer)?;
            sim.write_sysreg(cpu, s.counter, count)?;
        }
        // P and C (bits 1, 2) are actions, read as zero: writing back what was read keeps them.
        sim.write_sysreg(cpu, self.pmcr, pmcr)
    }
}

impl OpenGroup for SysRegGroup<'_> {
    fn enable(&mut self) -> io::Result<()> {
        if self.enabled.is_running() {
            return Ok(());
        }
        if self.saved.is_none() {
            if let Err(e) = self.program() {
                let undo = self.restore();
                return Err(io_err(match undo {
                    Ok(()) => e,
                    Err(cleanup) => crate::Error::Cleanup {
                        error: Box::new(e),
                        cleanup: Box::new(cleanup),
                    },
                }));
            }
        }
        self.last = self
            .slots
            .iter()
            .map(|s| self.sim.read_sysreg(self.cpu, s.counter))
            .collect::<crate::Result<_>>()
            .map_err(io_err)?;
        self.enabled.start();
        Ok(())
    }

    fn disable(&mut self) -> io::Result<()> {
        self.accumulate()?;
        self.enabled.stop();
        Ok(())
    }

    fn read(&mut self) -> io::Result<GroupValues> {
        self.accumulate()?;
        Ok(self.enabled.values(self.totals.clone()))
    }
}

impl Drop for SysRegGroup<'_> {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}
