//! Counting and sampling on the Xeon 7500 uncore, following section 2.1 of its guide.
//!
//! ```
//! use pmu_runtime::sampling::uncore::{EventSelect, SamplePlan, Uncore, UncoreCounter};
//! use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent};
//!
//! let sim = Sim::new(SimConfig::default());
//! let uncore = Uncore::new(&sim, 0, 0);
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
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

use std::fmt;

use crate::access::MsrAccess;
pub use crate::access::UncoreSummary;
use crate::catalog::{self, Nhm, NhmBox, NhmCounter, Reg};
use crate::error::{Error, Result, SamplingError, UsageError};
use crate::sampling::{delta, preload, read_msr_reg, rolled_back, with_fields, write_msr_reg};

/// Uncore counters are 48 bits wide.
pub const COUNTER_WIDTH: u32 = 48;

/// A counter of a Xeon 7500 box: the box instance and the counter's index in it. The W-box
/// fixed counter is index 4 (after the four general-purpose counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UncoreCounter {
    /// Box instance: `U`, `W`, `S0`, `S1`, `B0`, `B1`, `C0`..`C7`, `M0`, `M1`, `R`.
    pub instance: &'static str,
    /// Position among the box's counters.
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
        match lookup(*self) {
            Ok((_, c)) => f.write_str(c.ctr.addr.name),
            Err(_) => write!(f, "{} counter {}", self.instance, self.position),
        }
    }
}

fn lookup(c: UncoreCounter) -> Result<(&'static NhmBox, &'static NhmCounter)> {
    let nhm = catalog::nhm();
    let b = nhm
        .boxed(c.instance)
        .ok_or_else(|| UsageError::NoSuchCounter {
            counter: format!("box {}", c.instance),
            available: nhm
                .boxes
                .iter()
                .map(|b| b.instance)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let counter = b
        .counters
        .get(c.position as usize)
        .ok_or_else(|| UsageError::NoSuchCounter {
            counter: format!("counter {} in box {}", c.position, c.instance),
            available: format!("counters 0-{}", b.counters.len().saturating_sub(1)),
        })?;
    Ok((b, counter))
}

/// What to count, in the terms the boxes' control registers use. Settings a box does not have
/// (a umask on the B-box, a threshold on the M-box) are refused rather than dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventSelect {
    /// Event select (`ev_sel`; `inc_sel` in the M-box). The W-box fixed counter counts only
    /// uncore clocks, selected as 0xFF.
    pub ev_sel: u8,
    /// Unit mask.
    pub umask: Option<u8>,
    /// Threshold compared with the per-cycle increment.
    pub thresh: Option<u8>,
    /// Invert the threshold comparison.
    pub invert: Option<bool>,
    /// Count rising edges instead of cycles.
    pub edge_detect: Option<bool>,
}

impl EventSelect {
    /// Event `ev_sel` with every other setting left at its reset value.
    pub const fn event(ev_sel: u8) -> Self {
        Self {
            ev_sel,
            umask: None,
            thresh: None,
            invert: None,
            edge_detect: None,
        }
    }

    /// The same event with a unit mask.
    pub const fn with_umask(mut self, umask: u8) -> Self {
        self.umask = Some(umask);
        self
    }
}

/// A set of counters to sample, each with its event and interval, and the core that takes
/// the PMI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplePlan {
    /// (counter, event, N): freeze after the Nth event on that counter.
    pub counters: Vec<(UncoreCounter, EventSelect, u64)>,
    /// U_MSR_PMON_GLOBAL_CTL.pmi_core_sel: the core the monitoring thread runs on.
    pub pmi_core: u8,
}

/// The state of an armed sampling session: each counter's interval and where it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampling {
    armed: Vec<Armed>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Armed {
    counter: UncoreCounter,
    n: u64,
    /// Counter value at the start of the current interval.
    start: u64,
}

/// One frozen sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Counters the overflow hierarchy reports as overflowed (more than one may be).
    pub overflowed: Vec<UncoreCounter>,
    /// Events each armed counter counted this interval, including those counted between the
    /// overflow and the freeze.
    pub counts: Vec<(UncoreCounter, u64)>,
    /// Register reads the hierarchy walk took.
    pub walk_reads: usize,
    /// Counter values read (the start of the next interval for counters that did not
    /// overflow).
    values: Vec<(UncoreCounter, u64)>,
    /// U_MSR_PMON_GLOBAL_STATUS as read.
    u_status: u64,
}

/// Register values saved before programming counters, to put back afterwards.
#[derive(Debug, Clone)]
pub struct Saved {
    /// Registers and their values, in the order they were saved.
    values: Vec<(Reg, u64)>,
}

/// The Xeon 7500 uncore of one socket, reached through one of its CPUs.
pub struct Uncore<'a, B: MsrAccess + UncoreSummary + ?Sized> {
    backend: &'a B,
    cpu: u32,
    socket: usize,
    nhm: &'static Nhm,
}

impl<'a, B: MsrAccess + UncoreSummary + ?Sized> Uncore<'a, B> {
    /// The uncore of `socket`, through `cpu` (any online CPU of that socket; see
    /// [`crate::topology::Topology::cpu_for_socket`]).
    pub fn new(backend: &'a B, cpu: u32, socket: usize) -> Self {
        Self {
            backend,
            cpu,
            socket,
            nhm: catalog::nhm(),
        }
    }

    fn read(&self, reg: &Reg) -> Result<u64> {
        read_msr_reg(self.backend, self.cpu, reg)
    }

    fn write(&self, reg: &Reg, raw: u64) -> Result<()> {
        write_msr_reg(self.backend, self.cpu, reg, raw)
    }

    fn set_u_ctl(&self, fields: &[(&'static str, u64)]) -> Result<u64> {
        let u = &self.nhm.u_ctl;
        let raw = with_fields(u.info, self.read(u)? & !u.info.reserved_mask, fields)?;
        self.write(u, raw)?;
        Ok(raw)
    }

    /// Programs `counter`'s control register for `sel` (enabled, no PMI) and enables the
    /// counter in its box's GLOBAL_CTL: steps (b) to (d) of the guide's set-up. Counting starts
    /// with [`Self::start`].
    pub fn configure(&self, counter: UncoreCounter, sel: &EventSelect) -> Result<()> {
        let saved = self.save(&[counter])?;
        rolled_back(
            || self.configure_with(counter, sel, false),
            || self.restore(&saved),
        )
    }

    fn configure_with(&self, counter: UncoreCounter, sel: &EventSelect, pmi: bool) -> Result<()> {
        let (b, c) = lookup(counter)?;
        let info = c.ctl.info;
        let mut fields: Vec<(&'static str, u64)> = Vec::new();
        if c.fixed {
            if sel.ev_sel != 0xFF || sel.umask.is_some() || sel.thresh.is_some() {
                return Err(UsageError::UnsupportedField {
                    register: c.ctl.addr.name,
                    field: "event select (the fixed counter counts only uncore clocks, 0xFF)",
                }
                .into());
            }
        } else {
            let sel_field = if info.field("ev_sel").is_some() {
                "ev_sel"
            } else {
                "inc_sel"
            };
            fields.push((sel_field, u64::from(sel.ev_sel)));
        }
        if let Some(u) = sel.umask {
            fields.push(("umask", u64::from(u)));
        }
        if let Some(t) = sel.thresh {
            let name = if info.field("thresh").is_some() {
                "thresh"
            } else {
                "threshold"
            };
            fields.push((name, u64::from(t)));
        }
        if let Some(i) = sel.invert {
            fields.push(("invert", u64::from(i)));
        }
        if let Some(e) = sel.edge_detect {
            fields.push(("edge_detect", u64::from(e)));
        }
        fields.push(("pmi_en", u64::from(pmi)));
        fields.push(("en", 1));
        let raw = with_fields(info, info.reset, &fields).map_err(|e| match e {
            Error::Usage(UsageError::UnsupportedField { register, field }) => {
                Error::Usage(UsageError::UnsupportedField {
                    register,
                    field: match field {
                        "umask" => "umask",
                        "threshold" | "thresh" => "threshold",
                        "invert" => "invert",
                        "edge_detect" => "edge detect",
                        f => f,
                    },
                })
            }
            e => e,
        })?;
        self.write(&c.ctl, raw)?;
        self.enable_in_box(b, c)
    }

    fn enable_in_box(&self, b: &NhmBox, c: &NhmCounter) -> Result<()> {
        if b.unit == "U" {
            self.set_u_ctl(&[("en", 1)])?;
            return Ok(());
        }
        let (reg, field, bit) = if c.fixed {
            let r = b.ctl.first().copied().ok_or(UsageError::UnsupportedField {
                register: c.ctl.addr.name,
                field: "box-level enable",
            })?;
            (r, "fixed_en", 0)
        } else {
            let (r, bit) = b.half(&b.ctl, c).ok_or(UsageError::UnsupportedField {
                register: c.ctl.addr.name,
                field: "box-level enable",
            })?;
            (r, "ctr_en", bit)
        };
        let old = self.read(&reg)? & !reg.info.reserved_mask;
        let f = reg.field(field).ok_or(UsageError::UnsupportedField {
            register: reg.addr.name,
            field,
        })?;
        let value = f.extract(old) | 1 << bit;
        self.write(&reg, f.insert(reg.addr.name, old, value)?)
    }

    /// Saves what programming `counters` would change: the U-box global control, their
    /// boxes' GLOBAL_CTL, and their control registers.
    pub fn save(&self, counters: &[UncoreCounter]) -> Result<Saved> {
        let mut regs: Vec<Reg> = vec![self.nhm.u_ctl];
        for c in counters {
            let (b, counter) = lookup(*c)?;
            regs.extend(b.ctl.iter().copied());
            regs.push(counter.ctl);
        }
        let mut values: Vec<(Reg, u64)> = Vec::new();
        for r in regs {
            if values
                .iter()
                .any(|(v, _)| v.addr.location == r.addr.location)
            {
                continue;
            }
            values.push((r, self.read(&r)? & !r.info.reserved_mask));
        }
        Ok(Saved { values })
    }

    /// Puts saved registers back: the global control first (so counting stops, or resumes,
    /// before anything else changes), then box controls, then counter controls. Every write is
    /// attempted; the first error is returned.
    pub fn restore(&self, saved: &Saved) -> Result<()> {
        let mut first_error = None;
        for (r, v) in &saved.values {
            if let Err(e) = self.write(r, *v) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Starts counting: sets U_MSR_PMON_GLOBAL_CTL.en_all and clears rst_all in the same
    /// write (step (f)).
    pub fn start(&self) -> Result<()> {
        self.set_u_ctl(&[("rst_all", 0), ("en_all", 1)]).map(|_| ())
    }

    /// Stops counting everywhere (clears en_all).
    pub fn stop(&self) -> Result<()> {
        self.set_u_ctl(&[("en_all", 0)]).map(|_| ())
    }

    /// Resets every uncore counter and control (rst_all), leaving counting disabled.
    pub fn reset(&self) -> Result<()> {
        self.set_u_ctl(&[("en_all", 0), ("rst_all", 1)])?;
        self.set_u_ctl(&[("rst_all", 0)]).map(|_| ())
    }

    /// Reads a counter while counting continues ("software can continuously read the data
    /// registers without disabling event collection").
    pub fn read_counter(&self, counter: UncoreCounter) -> Result<u64> {
        let (_, c) = lookup(counter)?;
        Ok(self.read(&c.ctr)? & ((1 << COUNTER_WIDTH) - 1))
    }

    /// Reads counters the recommended way for polling: freeze by clearing en_all, read, then
    /// restore en_all as it was (section 2.1.3 (a)). The values are consistent with each
    /// other.
    pub fn poll(&self, counters: &[UncoreCounter]) -> Result<Vec<u64>> {
        let u = &self.nhm.u_ctl;
        let was = self.read(u)?;
        let enabled = was & u.field("en_all").map_or(0, |f| f.mask()) != 0;
        if enabled {
            self.stop()?;
        }
        let values: Result<Vec<u64>> = counters.iter().map(|c| self.read_counter(*c)).collect();
        if enabled {
            // Restore even if a read failed, so a polling error never leaves counting off.
            let restored = self.set_u_ctl(&[("en_all", 1)]);
            let values = values?;
            restored?;
            return Ok(values);
        }
        values
    }

    /// Arms a sampling session: with counting stopped, programs each counter with `pmi_en` and
    /// preloads it with `2^48 - N` so it overflows on exactly its Nth event; then sets
    /// `frz_all`, `pmi_core_sel` and `en_all` (clearing `rst_all`) in one write.
    ///
    /// If any step fails, every register it changed is put back as it was (the error says so
    /// if that fails too), so a failure never leaves the uncore half armed.
    pub fn arm(&self, plan: &SamplePlan) -> Result<Sampling> {
        let counters: Vec<UncoreCounter> = plan.counters.iter().map(|(c, _, _)| *c).collect();
        let saved = self.save(&counters)?;
        rolled_back(|| self.arm_unchecked(plan), || self.restore(&saved))
    }

    fn arm_unchecked(&self, plan: &SamplePlan) -> Result<Sampling> {
        self.stop()?;
        let mut armed = Vec::new();
        for &(counter, sel, n) in &plan.counters {
            let start = preload(n, COUNTER_WIDTH)?;
            self.configure_with(counter, &sel, true)?;
            let (_, c) = lookup(counter)?;
            self.write(&c.ctr, start)?;
            armed.push(Armed { counter, n, start });
        }
        self.set_u_ctl(&[
            ("frz_all", 1),
            ("pmi_core_sel", u64::from(plan.pmi_core)),
            ("rst_all", 0),
            ("en_all", 1),
        ])?;
        Ok(Sampling { armed })
    }

    /// Reads a frozen sample: confirms the freeze came from a PMI, walks the overflow hierarchy
    /// (U_MSR_PMON_GLOBAL_STATUS, then the S-box summaries, then each flagged box's
    /// GLOBAL_STATUS) to find every overflowed counter, and reads each armed counter's count
    /// for the interval.
    pub fn frozen_sample(&self, sampling: &mut Sampling) -> Result<Sample> {
        let u = self.read(&self.nhm.u_ctl)?;
        if self
            .nhm
            .u_ctl
            .field("en_all")
            .is_some_and(|f| f.extract(u) != 0)
        {
            return Err(SamplingError::NotFrozen {
                reason: "U_MSR_PMON_GLOBAL_CTL.en_all is still set, so the uncore is counting; wait for the PMI, or poll instead".into(),
            }.into());
        }
        if self.backend.global_pmi(self.socket) == Some(false) {
            return Err(SamplingError::NotFrozen {
                reason:
                    "U_MSR_PMON_GLOBAL_SUMMARY.pmi is clear: counting was stopped, but not by a PMI"
                        .into(),
            }
            .into());
        }
        let (overflowed, u_status, walk_reads) = self.walk()?;
        if overflowed.is_empty() && self.backend.global_pmi(self.socket).is_none() {
            return Err(SamplingError::NotFrozen {
                reason: "en_all is clear but no overflow is recorded in U_MSR_PMON_GLOBAL_STATUS, so the freeze did not come from a PMI".into(),
            }.into());
        }
        let mut counts = Vec::new();
        let mut values = Vec::new();
        for a in &sampling.armed {
            let v = self.read_counter(a.counter)?;
            // An overflowed counter wrapped once: it counted up to 2^48 and then `v` more
            // (the events between the overflow and the freeze). Summing the two parts keeps
            // an interval of exactly 2^48 from reading as 0.
            let count = if overflowed.contains(&a.counter) {
                ((1u64 << COUNTER_WIDTH) - a.start) + v
            } else {
                delta(a.start, v, COUNTER_WIDTH)
            };
            counts.push((a.counter, count));
            values.push((a.counter, v));
        }
        Ok(Sample {
            overflowed,
            counts,
            walk_reads,
            values,
            u_status,
        })
    }

    /// The hierarchy walk: every counter whose overflow bit is set, and the reads it took.
    fn walk(&self) -> Result<(Vec<UncoreCounter>, u64, usize)> {
        let mut reads = 0;
        let u_status_reg = &self.nhm.u_status;
        let u_status = self.read(u_status_reg)?;
        reads += 1;
        let flag = |name: &str| {
            u_status_reg
                .field(name)
                .is_some_and(|f| f.extract(u_status) != 0)
        };
        let mut found = Vec::new();
        // Each S-box summary is asked for once, when the U-box first points below it.
        let mut summaries: [Option<Option<Vec<&'static str>>>; 2] = [None, None];
        for b in &self.nhm.boxes {
            let Some(route) = b.counters.first().map(|c| c.route) else {
                continue;
            };
            if !flag(route.u_status_field) {
                continue;
            }
            if b.unit == "U" {
                // The U-box counter has no box status: ov_u is its overflow bit.
                found.push(UncoreCounter::new(b.instance, 0));
                continue;
            }
            // Below an S-box, its summary narrows the boxes to read when the backend can
            // read it; otherwise every box reporting to that S-box is read.
            if let Some(s) = route.s_box {
                let summary = summaries[usize::from(s & 1)]
                    .get_or_insert_with(|| self.backend.s_summary(self.socket, s));
                if let Some(fields) = summary {
                    let any = b
                        .counters
                        .iter()
                        .any(|c| c.route.summary_field.is_some_and(|f| fields.contains(&f)));
                    if !any {
                        continue;
                    }
                }
            }
            let mut status_values = Vec::new();
            for r in &b.status {
                status_values.push(self.read(r)?);
                reads += 1;
            }
            for (pos, c) in b.counters.iter().enumerate() {
                let set = if c.fixed {
                    b.status
                        .first()
                        .zip(status_values.first())
                        .is_some_and(|(r, v)| {
                            r.field("ov_fixed").is_some_and(|f| f.extract(*v) != 0)
                        })
                } else {
                    let half = (c.index / 8) as usize;
                    let (r, v) = (
                        b.status.get(half).or(b.status.first()),
                        status_values.get(half).or(status_values.first()),
                    );
                    r.zip(v).is_some_and(|(r, v)| {
                        r.field("ov")
                            .is_some_and(|f| f.extract(*v) >> (c.index % 8) & 1 != 0)
                    })
                };
                if set {
                    found.push(UncoreCounter::new(b.instance, pos as u32));
                }
            }
        }
        Ok((found, u_status, reads))
    }

    /// Starts the next interval from a frozen sample without losing events: clears the
    /// overflow bits (box and U-box), preloads each overflowed counter again for its N, keeps
    /// the others counting from where they are, and sets en_all again (section 2.1.4).
    pub fn rearm(&self, sampling: &mut Sampling, sample: &Sample) -> Result<()> {
        for counter in &sample.overflowed {
            let (b, c) = lookup(*counter)?;
            if b.unit == "U" {
                continue;
            }
            let (reg, field, bit) = if c.fixed {
                (b.ovf.first().copied(), "clr_ov_fixed", 0)
            } else {
                let half = b.half(&b.ovf, c);
                (half.map(|h| h.0), "clr_ov", half.map_or(0, |h| h.1))
            };
            let reg = reg.ok_or(UsageError::UnsupportedField {
                register: c.ctr.addr.name,
                field: "box-level overflow clear",
            })?;
            let raw = with_fields(reg.info, 0, &[(field, 1 << bit)])?;
            self.write(&reg, raw)?;
        }
        // U-box bits: write 1 to clear each bit that was set.
        let ovf = &self.nhm.u_ovf;
        let mut clear = 0;
        for (status_field, clr_field) in [
            ("ov_u", "clr_ov_u"),
            ("ov_w", "clr_ov_w"),
            ("ov_s0", "clr_ov_s0"),
            ("ov_s1", "clr_ov_s1"),
        ] {
            if self
                .nhm
                .u_status
                .field(status_field)
                .is_some_and(|f| f.extract(sample.u_status) != 0)
            {
                clear = with_fields(ovf.info, clear, &[(clr_field, 1)])?;
            }
        }
        if clear != 0 {
            self.write(ovf, clear)?;
        }
        for a in &mut sampling.armed {
            let value = sample
                .values
                .iter()
                .find(|(c, _)| *c == a.counter)
                .map(|(_, v)| *v);
            if sample.overflowed.contains(&a.counter) {
                a.start = preload(a.n, COUNTER_WIDTH)?;
                let (_, c) = lookup(a.counter)?;
                self.write(&c.ctr, a.start)?;
            } else if let Some(v) = value {
                a.start = v;
            }
        }
        self.backend.acknowledge_pmi(self.socket);
        self.set_u_ctl(&[("en_all", 1)]).map(|_| ())
    }
}
