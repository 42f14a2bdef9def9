//! Counting and sampling on a processor's uncore, driven by the structure its spec declares
//! (the procedure of the Xeon 7500 guide's section 2.1, which any uncore with a global level,
//! overflow status and PMI enables shares).
//!
//! A session owns the socket's uncore ([`Uncore::open`] claims it, naming the holder if
//! another session has it), arms counters ([`Uncore::arm`] checks the whole plan before the
//! first access), reads frozen samples by walking each counter's overflow route and re-arms,
//! and ends with [`Sampling::close`] (or on drop), which puts back every register arming
//! changed, counter values included. Counting without sampling (`configure`, `start`,
//! `poll`) works on every box, including those whose spec declares no overflow status (the
//! E5-2600's): arming those is refused, saying why.
//!
//! ```
//! use pmu_runtime::sampling::uncore::{EventSelect, SamplePlan, Uncore, UncoreCounter};
//! use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent};
//!
//! let sim = Sim::new(SimConfig::default());
//! let uncore = Uncore::open(&sim, &pmu_regs::xeon_7500::PROCESSOR, 0, 0)?;
//! let counter = UncoreCounter::new("C2", 0);
//! let mut sampling = uncore.arm(&SamplePlan {
//!     counters: vec![(counter, EventSelect::event(0x01), 1000)],
//!     pmi_core: 3,
//! })?;
//! sim.inject_uncore(0, UncoreEvent { instance: "C2", ev_sel: 0x01, umask: None }, 1500)?;
//! let sample = uncore.frozen_sample(&mut sampling)?;
//! assert_eq!(sample.overflowed, vec![counter]);
//! assert_eq!(sample.counts, vec![(counter, 1000)]); // frozen on the 1000th event
//! uncore.rearm(&mut sampling, &sample)?;
//! sampling.close()?; // every register as it was before arm
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt;

use pmu_regs::{Location, ProcessorInfo, Role};

use crate::access::UncoreDevices;
pub use crate::access::UncoreSummary;
use crate::boxes::{hop_reg, Boxes, Counter, Global, PmuBox, Reg};
use crate::counters::Registers;
use crate::error::{Result, SamplingError, UsageError};
use crate::ownership::{Lease, Pmu};
use crate::quirks::global_inits;
use crate::sampling::{delta, preload, rolled_back, RegIo};

/// A counter of a box: the box instance and the counter's number in it (the W-box fixed
/// counter is number 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UncoreCounter {
    /// Box instance (`C3`, `R`, `CH2`).
    pub instance: &'static str,
    /// The counter's number in the box.
    pub position: u32,
}

impl UncoreCounter {
    /// Counter `position` of box `instance`.
    pub const fn new(instance: &'static str, position: u32) -> Self {
        Self { instance, position }
    }
}

impl fmt::Display for UncoreCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} counter {}", self.instance, self.position)
    }
}

pub use crate::boxes::EventSelect;

/// A set of counters to sample, each with its event and interval, and the core that takes
/// the PMI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplePlan {
    /// (counter, event, N): freeze after the Nth event on that counter. Each counter at most
    /// once.
    pub counters: Vec<(UncoreCounter, EventSelect, u64)>,
    /// U_MSR_PMON_GLOBAL_CTL.pmi_core_sel: the core the monitoring thread runs on.
    pub pmi_core: u8,
}

/// An armed sampling session: each counter's interval and where it started, and what to put
/// back when it ends ([`Self::close`], or drop).
pub struct Sampling<'u, 'a, B: Registers + ?Sized> {
    uncore: &'u Uncore<'a, B>,
    armed: Vec<ArmedUncoreCounter>,
    /// What arming changed; `None` once put back.
    saved: Option<Saved>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ArmedUncoreCounter {
    counter: UncoreCounter,
    n: u64,
    /// Counter value at the start of the current interval.
    start: u64,
}

impl<B: Registers + ?Sized> Sampling<'_, '_, B> {
    /// The armed counters, in plan order.
    pub fn counters(&self) -> Vec<UncoreCounter> {
        self.armed.iter().map(|a| a.counter).collect()
    }

    /// Ends the session: stops counting and puts back every register arming changed (the
    /// U-box and box controls, the counters' controls and their values). Every write is
    /// attempted; the first failure is returned.
    pub fn close(mut self) -> Result<()> {
        match self.saved.take() {
            Some(saved) => self.uncore.restore(&saved),
            None => Ok(()),
        }
    }
}

impl<B: Registers + ?Sized> Drop for Sampling<'_, '_, B> {
    fn drop(&mut self) {
        // A session dropped without close (an error, a panic) still puts everything back;
        // a failure here has no one to report to, which is what close() is for.
        if let Some(saved) = self.saved.take() {
            let _ = self.uncore.restore(&saved);
        }
    }
}

impl<B: Registers + ?Sized> fmt::Debug for Sampling<'_, '_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sampling")
            .field("armed", &self.armed)
            .field("open", &self.saved.is_some())
            .finish()
    }
}

/// One frozen sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// ArmedUncoreCounter counters the overflow hierarchy reports as overflowed (more than one may be).
    pub overflowed: Vec<UncoreCounter>,
    /// Events each armed counter counted this interval, including those counted between the
    /// overflow and the freeze.
    pub counts: Vec<(UncoreCounter, u64)>,
    /// Register reads the hierarchy walk took.
    pub walk_reads: usize,
    /// Counter values read (the start of the next interval for counters that did not
    /// overflow).
    values: Vec<(UncoreCounter, u64)>,
}

/// Register values saved before programming counters, to put back afterwards.
#[derive(Debug, Clone)]
pub struct Saved {
    /// The global control, put back last.
    global: Option<u64>,
    /// Arming raised and lifted the freeze signal (which cannot be read back, so it is not
    /// saved): putting back raises it first and lifts it last, as it is after a reset.
    signal: bool,
    /// Box controls, counter controls and counter values, in the order they were saved.
    values: Vec<(Reg, u64)>,
}

/// A counter's control value, computed before anything is read or written.
#[derive(Debug, Clone, Copy)]
struct Prepared {
    counter: UncoreCounter,
    ctl: Option<u64>,
}

/// The uncore of one socket, owned by this session while the value lives.
pub struct Uncore<'a, B: Registers + ?Sized> {
    io: RegIo<'a, B>,
    boxes: &'static Boxes,
    _lease: Lease,
}

impl<'a, B: Registers + ?Sized> Uncore<'a, B> {
    /// Claims the uncore of `processor` on `socket`, reached through `cpu` (any online CPU
    /// of that socket; see [`crate::access::Topology::cpu_for_socket`]). Refused, naming
    /// the holder, while another session owns it. Boxes in PCI space need
    /// [`Self::with_devices`].
    pub fn open(
        backend: &'a B,
        processor: &'static ProcessorInfo,
        cpu: u32,
        socket: usize,
    ) -> Result<Self> {
        let lease = backend.claim(&Pmu::Uncore {
            processor: processor.id,
            socket,
        })?;
        Ok(Self {
            io: RegIo {
                backend,
                cpu,
                socket,
                devices: None,
            },
            boxes: Boxes::of(processor),
            _lease: lease,
        })
    }

    /// Reaches the boxes in PCI space through `devices` (from discovery).
    pub fn with_devices(mut self, devices: UncoreDevices) -> Self {
        self.io.devices = Some(devices);
        self
    }

    fn read(&self, reg: &Reg) -> Result<u64> {
        self.io.read(reg)
    }

    fn write(&self, reg: &Reg, raw: u64) -> Result<()> {
        self.io.write(reg, raw)
    }

    fn global(&self) -> Option<&'static Global> {
        self.boxes.global.as_ref()
    }

    /// The box and counter `c` names.
    fn lookup(&self, c: UncoreCounter) -> Result<(&'static PmuBox, &'static Counter)> {
        let boxes = self.boxes;
        let b = boxes
            .boxes
            .iter()
            .find(|b| b.instance == c.instance)
            .ok_or_else(|| UsageError::NoSuchCounter {
                counter: format!("box {}", c.instance),
                available: boxes
                    .boxes
                    .iter()
                    .map(|b| b.instance)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let counter = b
            .counter(c.position)
            .ok_or_else(|| UsageError::NoSuchCounter {
                counter: format!("counter {} in box {}", c.position, c.instance),
                available: format!("counters 0-{}", b.counters.len().saturating_sub(1)),
            })?;
        Ok((b, counter))
    }

    /// The name of `counter`'s register (`C3_MSR_PMON_CTR0`).
    pub fn counter_name(&self, counter: UncoreCounter) -> Result<&'static str> {
        Ok(self.lookup(counter)?.1.counter.name())
    }

    /// Sets global-control fields by role (read-modify-write); nothing without a global level.
    fn set_global(&self, roles: &[(Role, u64)]) -> Result<()> {
        let Some(g) = self.global() else {
            return Ok(());
        };
        let mut raw = self.read(&g.control)? & !g.control.info.reserved_mask;
        for &(role, value) in roles {
            if let Some(f) = g.info.field(role) {
                raw = f.insert(g.control.name(), raw, value)?;
            }
        }
        self.write(&g.control, raw)
    }

    /// The control value that counts `sel` on `counter` (with or without its overflow
    /// signal): computed from the layout's roles alone, so a setting the box lacks is refused
    /// before any access.
    fn prepare(&self, counter: UncoreCounter, sel: &EventSelect, pmi: bool) -> Result<Prepared> {
        let (_, c) = self.lookup(counter)?;
        Ok(Prepared {
            counter,
            ctl: Some(c.control_value(sel, pmi)?),
        })
    }

    /// Programs `counter`'s control for `sel` (enabled, no PMI) and enables the counter in
    /// its box: steps (b) to (d) of the guide's set-up. Counting starts with [`Self::start`].
    /// A setting the box lacks is refused before anything is read or written; a failed write
    /// puts back what was changed.
    pub fn configure(&self, counter: UncoreCounter, sel: &EventSelect) -> Result<()> {
        let prepared = self.prepare(counter, sel, false)?;
        let saved = self.save(&[counter])?;
        rolled_back(|| self.program(&prepared), || self.restore(&saved))
    }

    /// Writes a prepared control and enables the counter in its box.
    fn program(&self, p: &Prepared) -> Result<()> {
        let (b, c) = self.lookup(p.counter)?;
        if let (Some(ctl), Some(raw)) = (c.control, p.ctl) {
            self.write(&ctl, raw)?;
        }
        if let Some((reg, bits)) = b.box_bit(Role::CounterEnable, c.number()) {
            let old = self.read(&reg)? & !reg.info.reserved_mask;
            self.write(&reg, bits.insert(reg.name(), old, bits.max())?)?;
        }
        // The part's global initialisation (`<global-init>`), saved with the rest.
        for (reg, g) in global_inits(self.boxes) {
            let old = self.read(&reg)? & !reg.info.reserved_mask;
            self.write(&reg, g.field.insert(reg.name(), old, g.write)?)?;
        }
        Ok(())
    }

    /// Saves what programming `counters` would change: the global control, their boxes'
    /// counter-enable registers, their controls and their values.
    pub fn save(&self, counters: &[UncoreCounter]) -> Result<Saved> {
        let mut regs: Vec<Reg> = Vec::new();
        for c in counters {
            let (b, counter) = self.lookup(*c)?;
            if let Some((r, _)) = b.box_bit(Role::CounterEnable, counter.number()) {
                regs.push(r);
            }
            if let Some((r, _)) = b.box_field(Role::FreezeEnable) {
                regs.push(r);
            }
            regs.extend(counter.control);
            regs.push(counter.counter);
        }
        if !counters.is_empty() {
            regs.extend(global_inits(self.boxes).into_iter().map(|(r, _)| r));
        }
        let global = match self.global() {
            Some(g) => Some(self.read(&g.control)? & !g.control.info.reserved_mask),
            None => None,
        };
        let mut values: Vec<(Reg, u64)> = Vec::new();
        for r in regs {
            let is_global = self
                .global()
                .is_some_and(|g| g.control.addr.location == r.addr.location);
            if is_global
                || values
                    .iter()
                    .any(|(v, _)| v.addr.location == r.addr.location)
            {
                continue;
            }
            values.push((r, self.read(&r)? & !r.info.reserved_mask));
        }
        Ok(Saved {
            global,
            values,
            signal: false,
        })
    }

    /// Puts saved registers back, writing only: counting is stopped first (from the saved
    /// global control), then box-level enables, counter controls and values are written, and
    /// the global control last. Every write is attempted; the first error is returned.
    pub fn restore(&self, saved: &Saved) -> Result<()> {
        let mut first_error = None;
        let global = self.global().zip(saved.global);
        if let Some((g, v)) = global {
            let enable = g.info.field(Role::GlobalEnable).map_or(0, |f| f.mask());
            first_error = self.write(&g.control, v & !enable).err();
            if saved.signal {
                if let Err(e) = self.pulse_global(Role::GlobalFreeze) {
                    first_error.get_or_insert(e);
                }
            }
        }
        for (r, v) in &saved.values {
            if let Err(e) = self.write(r, *v) {
                first_error.get_or_insert(e);
            }
        }
        if let Some((g, v)) = global {
            if let Err(e) = self.write(&g.control, v) {
                first_error.get_or_insert(e);
            }
            if saved.signal {
                if let Err(e) = self.pulse_global(Role::GlobalUnfreeze) {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Writes 1 to the global control's write-only command bit playing `role` (the
    /// freeze-signal model's freeze or unfreeze), keeping its other fields; nothing where the
    /// global level has no such bit.
    fn pulse_global(&self, role: Role) -> Result<()> {
        let Some(g) = self.global() else {
            return Ok(());
        };
        let Some(f) = g.info.field(role) else {
            return Ok(());
        };
        // Other commands read back as nothing meaningful: never repeat them.
        let commands = g
            .control
            .info
            .fields
            .iter()
            .filter(|f| f.access == pmu_regs::Access::Wo)
            .fold(0, |m, f| m | f.mask());
        let raw = self.read(&g.control)? & !g.control.info.reserved_mask & !commands;
        self.write(&g.control, f.insert(g.control.name(), raw, 1)?)
    }

    /// Starts counting: sets the global enable and clears the global reset in the same
    /// write (step (f)); where the global level is a freeze signal, lifts it instead.
    pub fn start(&self) -> Result<()> {
        self.set_global(&[(Role::GlobalReset, 0), (Role::GlobalEnable, 1)])?;
        self.pulse_global(Role::GlobalUnfreeze)
    }

    /// Stops counting everywhere (clears the global enable, or raises the freeze signal).
    pub fn stop(&self) -> Result<()> {
        self.set_global(&[(Role::GlobalEnable, 0)])?;
        self.pulse_global(Role::GlobalFreeze)
    }

    /// Resets every uncore counter and control (global reset), leaving counting disabled.
    pub fn reset(&self) -> Result<()> {
        self.set_global(&[(Role::GlobalEnable, 0), (Role::GlobalReset, 1)])?;
        self.set_global(&[(Role::GlobalReset, 0)])
    }

    /// Reads a counter while counting continues ("software can continuously read the data
    /// registers without disabling event collection").
    pub fn read_counter(&self, counter: UncoreCounter) -> Result<u64> {
        let (_, c) = self.lookup(counter)?;
        let raw = self.read(&c.counter)?;
        Ok(c.count_bits().map_or(raw, |b| b.extract(raw)))
    }

    fn globally_enabled(&self) -> Result<Option<bool>> {
        let Some(g) = self.global() else {
            return Ok(None);
        };
        let Some(f) = g.info.field(Role::GlobalEnable) else {
            return Ok(None);
        };
        Ok(Some(f.extract(self.read(&g.control)?) != 0))
    }

    /// Reads counters the recommended way for polling: freeze by clearing the global enable,
    /// read, then restore it as it was (section 2.1.3 (a)). The values are consistent with
    /// each other.
    pub fn poll(&self, counters: &[UncoreCounter]) -> Result<Vec<u64>> {
        let enabled = self.globally_enabled()? == Some(true);
        if enabled {
            self.stop()?;
        }
        let values: Result<Vec<u64>> = counters.iter().map(|c| self.read_counter(*c)).collect();
        if enabled {
            // Restore even if a read failed, so a polling error never leaves counting off.
            let restored = self.set_global(&[(Role::GlobalEnable, 1)]);
            let values = values?;
            restored?;
            return Ok(values);
        }
        values
    }

    /// Arms a sampling session: with counting stopped, programs each counter with its
    /// overflow signal, preloads it with `2^width - N` so it overflows on exactly its Nth
    /// event, and clears any overflow left from earlier counting; then sets the global
    /// level's freeze-on-PMI, PMI target and enable (clearing its reset) in one write. Where
    /// the global level is a freeze signal (Xeon E5 v2 and later: write-only freeze and
    /// unfreeze commands), each armed box's freeze enable is set first and counting starts
    /// with the unfreeze command; an overflow then freezes every such box.
    ///
    /// The whole plan is checked first (each counter exists and is given once, each interval
    /// can be counted, each setting fits its box, the box can signal an overflow): a refused
    /// plan reads and writes nothing. If a step fails later, every register it changed is put
    /// back as it was (the error says so if that fails too).
    pub fn arm<'u>(&'u self, plan: &SamplePlan) -> Result<Sampling<'u, 'a, B>> {
        let mut prepared = Vec::new();
        for (i, &(counter, sel, n)) in plan.counters.iter().enumerate() {
            let (_, c) = self.lookup(counter)?;
            if plan.counters[..i].iter().any(|(o, _, _)| *o == counter) {
                return Err(UsageError::DuplicateCounter {
                    counter: c.counter.name().to_string(),
                }
                .into());
            }
            let start = preload(n, c.info.width)?;
            prepared.push((self.prepare(counter, &sel, true)?, n, start));
        }
        let signal = match self.global() {
            Some(g) if g.info.pmi_freeze().is_some() => false,
            Some(g) if g.info.freeze_signal().is_some() => true,
            _ => {
                return Err(UsageError::UnsupportedField {
                    register: self.boxes.processor.id,
                    field: "global freeze on PMI",
                }
                .into())
            }
        };
        if signal {
            // An overflow freezes only the boxes whose control lets the freeze signal act.
            for (counter, _, _) in &plan.counters {
                let (b, c) = self.lookup(*counter)?;
                if b.box_field(Role::FreezeEnable).is_none() {
                    return Err(UsageError::UnsupportedField {
                        register: c.counter.name(),
                        field: "box freeze enable (an overflow freezes the uncore through each box's freeze enable, and this box has none)",
                    }
                    .into());
                }
            }
        }
        let counters: Vec<UncoreCounter> = plan.counters.iter().map(|(c, _, _)| *c).collect();
        let mut saved = self.save(&counters)?;
        saved.signal = signal;
        let armed = rolled_back(
            || self.arm_prepared(&prepared, plan.pmi_core),
            || self.restore(&saved),
        )?;
        Ok(Sampling {
            uncore: self,
            armed,
            saved: Some(saved),
        })
    }

    fn arm_prepared(
        &self,
        prepared: &[(Prepared, u64, u64)],
        pmi_core: u8,
    ) -> Result<Vec<ArmedUncoreCounter>> {
        if self
            .global()
            .is_some_and(|g| g.info.freeze_signal().is_some())
        {
            // A box obeys the freeze signal only with its freeze enable set: set it first, so
            // that the freeze below (and an overflow later) stops it.
            for (p, _, _) in prepared {
                let (b, _) = self.lookup(p.counter)?;
                if let Some((reg, f)) = b.box_field(Role::FreezeEnable) {
                    let old = self.read(&reg)? & !reg.info.reserved_mask;
                    self.write(&reg, f.insert(reg.name(), old, 1)?)?;
                }
            }
        }
        self.stop()?;
        let mut armed = Vec::new();
        for &(p, n, start) in prepared {
            self.program(&p)?;
            self.write_count(p.counter, start)?;
            armed.push(ArmedUncoreCounter {
                counter: p.counter,
                n,
                start,
            });
        }
        // Overflow bits left from earlier counting would read as this interval's overflow.
        let counters: Vec<UncoreCounter> = armed.iter().map(|a| a.counter).collect();
        self.clear_overflows(&counters)?;
        self.io.backend.acknowledge_pmi(self.io.socket);
        self.set_global(&[
            (Role::FreezeOnPmi, 1),
            (Role::PmiSelect, u64::from(pmi_core)),
            (Role::GlobalReset, 0),
            (Role::GlobalEnable, 1),
        ])?;
        self.pulse_global(Role::GlobalUnfreeze)?;
        Ok(armed)
    }

    fn write_count(&self, counter: UncoreCounter, value: u64) -> Result<()> {
        let (_, c) = self.lookup(counter)?;
        let raw = match c.count_bits() {
            Some(b) => b.insert(c.counter.name(), 0, value)?,
            None => value,
        };
        self.write(&c.counter, raw)
    }

    /// Clears the overflow bits of `counters`: in their boxes, and every clear bit along
    /// their routes (writing 1 to clear a bit that is already clear changes nothing).
    fn clear_overflows(&self, counters: &[UncoreCounter]) -> Result<()> {
        let mut writes: Vec<(Reg, u64)> = Vec::new();
        let mut add = |reg: Reg, mask: u64| match writes
            .iter_mut()
            .find(|(r, _)| r.addr.location == reg.addr.location)
        {
            Some((_, v)) => *v |= mask,
            None => writes.push((reg, mask)),
        };
        for counter in counters {
            let (b, c) = self.lookup(*counter)?;
            if let Some((reg, bits)) = b.box_bit(Role::OverflowClear, c.number()) {
                add(reg, bits.mask());
            } else if let Some((reg, bits)) = b.box_bit(Role::Overflow, c.number()) {
                // A rw1c status is its own clear: a written 1 clears the bit.
                if bits.field.access == pmu_regs::Access::Rw1c {
                    add(reg, bits.mask());
                }
            }
            for hop in c.route.map_or(&[][..], |r| r.hops) {
                if let Some(clear) = hop.clear {
                    if let Some(reg) = hop_reg(&clear) {
                        add(reg, clear.field.mask());
                    }
                }
            }
        }
        for (reg, raw) in writes {
            self.write(&reg, raw)?;
        }
        Ok(())
    }

    /// Reads a frozen sample: confirms the freeze came from a PMI, walks each armed counter's
    /// overflow route top-down (global status, summaries, its box's status) to find every
    /// overflowed armed counter, and reads each armed counter's count for the interval.
    pub fn frozen_sample(&self, sampling: &mut Sampling<'_, 'a, B>) -> Result<Sample> {
        if self.globally_enabled()? == Some(true) {
            let g = self.global().expect("a global enable has a global level");
            return Err(SamplingError::NotFrozen {
                reason: format!(
                    "{}.{} is still set, so the uncore is counting; wait for the PMI, or poll instead",
                    g.control.name(),
                    g.info.field(Role::GlobalEnable).map_or("", |f| f.name)
                ),
            }
            .into());
        }
        if self.io.backend.global_pmi(self.io.socket) == Some(false) {
            return Err(SamplingError::NotFrozen {
                reason: "no PMI is pending: counting was stopped, but not by a PMI".into(),
            }
            .into());
        }
        let armed: Vec<UncoreCounter> = sampling.armed.iter().map(|a| a.counter).collect();
        let (overflowed, walk_reads) = self.walk(&armed)?;
        if overflowed.is_empty() && self.io.backend.global_pmi(self.io.socket).is_none() {
            return Err(SamplingError::NotFrozen {
                reason: "counting is stopped but no overflow is recorded along any armed counter's route, so the freeze did not come from a PMI".into(),
            }
            .into());
        }
        let mut counts = Vec::new();
        let mut values = Vec::new();
        for a in &sampling.armed {
            let v = self.read_counter(a.counter)?;
            let width = self.lookup(a.counter)?.1.info.width;
            // An overflowed counter wrapped once: it counted up to 2^width and then `v` more
            // (the events between the overflow and the freeze). Summing the two parts keeps
            // an interval of exactly 2^width from reading as 0.
            let count = if overflowed.contains(&a.counter) {
                ((1u128 << width) - u128::from(a.start) + u128::from(v)) as u64
            } else {
                delta(a.start, v, width)
            };
            counts.push((a.counter, count));
            values.push((a.counter, v));
        }
        Ok(Sample {
            overflowed,
            counts,
            walk_reads,
            values,
        })
    }

    /// The walk: for each armed counter, its route from the top (every hop must be set; a
    /// hop no address reaches is asked of the backend, or assumed set when it cannot say),
    /// then its box's own overflow bit. Each register is read at most once.
    fn walk(&self, armed: &[UncoreCounter]) -> Result<(Vec<UncoreCounter>, usize)> {
        let mut read: HashMap<Location, u64> = HashMap::new();
        let mut reads = 0;
        let mut value = |reg: &Reg| -> Result<u64> {
            if let Some(v) = read.get(&reg.addr.location) {
                return Ok(*v);
            }
            let v = self.read(reg)?;
            reads += 1;
            read.insert(reg.addr.location, v);
            Ok(v)
        };
        let mut found = Vec::new();
        'counters: for counter in armed {
            let (b, c) = self.lookup(*counter)?;
            for hop in c.route.map_or(&[][..], |r| r.hops).iter().rev() {
                let set = match hop_reg(&hop.bit) {
                    Some(reg) => hop.bit.field.extract(value(&reg)?) != 0,
                    None => self
                        .io
                        .backend
                        .hidden_bit(self.io.socket, &hop.bit)
                        .unwrap_or(true),
                };
                if !set {
                    continue 'counters;
                }
            }
            let set = match b.box_bit(Role::Overflow, c.number()) {
                Some((reg, bits)) => bits.extract(value(&reg)?) != 0,
                // No box status: the route's first hop is the counter's own overflow bit.
                None => c.route.is_some(),
            };
            if set {
                found.push(*counter);
            }
        }
        Ok((found, reads))
    }

    /// Starts the next interval from a frozen sample without losing events: clears the
    /// overflow bits along the overflowed counters' routes, preloads each overflowed counter
    /// again for its N, keeps the others counting from where they are, and sets the global
    /// enable again (section 2.1.4).
    pub fn rearm(&self, sampling: &mut Sampling<'_, 'a, B>, sample: &Sample) -> Result<()> {
        self.clear_overflows(&sample.overflowed)?;
        for a in &mut sampling.armed {
            let value = sample
                .values
                .iter()
                .find(|(c, _)| *c == a.counter)
                .map(|(_, v)| *v);
            if sample.overflowed.contains(&a.counter) {
                let width = self.lookup(a.counter)?.1.info.width;
                a.start = preload(a.n, width)?;
                self.write_count(a.counter, a.start)?;
            } else if let Some(v) = value {
                a.start = v;
            }
        }
        self.io.backend.acknowledge_pmi(self.io.socket);
        self.set_global(&[(Role::GlobalEnable, 1)])?;
        self.pulse_global(Role::GlobalUnfreeze)
    }
}
