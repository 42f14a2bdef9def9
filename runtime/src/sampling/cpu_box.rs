//! Sampling on a per-CPU box's overflow interrupt, driven by the structure its spec declares:
//! the core counters of a processor whose core PMU is described by its own unit (AMD's `PMC`),
//! as a PMI handler drives them. Nothing freezes: each armed counter keeps counting after it
//! overflows, so the handler finds which counters overflowed, reads them, clears what records
//! the overflow and preloads the overflowed ones again.
//!
//! How an overflow is seen is the spec's word for each counter ([`OverflowSeen`]): by the
//! counter's bit in the box's status (and cleared through the box's overflow clear), or, where
//! no register records it, by the counter's most significant bit reading 0 once the counter has
//! wrapped from its preload of `2^width - N` (which is why such a counter takes intervals of at
//! most `2^(width-1)` events).
//!
//! ```
//! use pmu_runtime::boxes::EventSelect;
//! use pmu_runtime::sampling::cpu_box::CpuBox;
//! use pmu_runtime::sim::{Sim, SimConfig};
//!
//! let zen3 = pmu_regs::PROCESSORS.iter().find(|p| p.id == "amd-zen3").unwrap();
//! let sim = Sim::new(SimConfig::of(zen3));
//! let pmc = CpuBox::open(&sim, zen3, 1)?;
//! let mut sampling = pmc.arm(&[(0, EventSelect::event(0x1C1), 1000)])?;
//! sim.inject_core(1, 0x1C1, 0, 1500)?;
//! assert_eq!(sim.pmis()[0].event, 1000);       // the interrupt came on the 1000th event
//! let sample = pmc.sample(&sampling)?;          // what the PMI handler reads
//! assert_eq!(sample.overflowed, vec![0]);
//! assert_eq!(sample.counts, vec![(0, 1500)]);   // the counter kept counting
//! pmc.rearm(&mut sampling, &sample)?;
//! sampling.close()?;                            // every register as it was
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt;

use pmu_regs::{Access, CounterKind, Location, OverflowSeen, ProcessorInfo, Role, Scope};

use crate::boxes::{Boxes, Counter, EventSelect, PmuBox, Reg};
use crate::counters::Registers;
use crate::error::{Result, SamplingError, UsageError};
use crate::ownership::{check_idle, Lease, Pmu};
use crate::sampling::{delta, preload, rolled_back, RegIo};

/// The per-CPU box of one logical CPU, owned by this session while the value lives.
pub struct CpuBox<'a, B: Registers + ?Sized> {
    io: RegIo<'a, B>,
    pmu_box: &'static PmuBox,
    _lease: Lease,
}

/// An armed counter: its interval and the value the current interval started from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ArmedCounter {
    number: u32,
    n: u64,
    start: u64,
}

/// An armed sampling session: [`Self::close`] (or drop) puts back every register arming
/// changed, counter values included.
#[must_use = "dropping the sampling session disarms it at once"]
pub struct CpuSampling<'c, 'a, B: Registers + ?Sized> {
    pmu: &'c CpuBox<'a, B>,
    armed: Vec<ArmedCounter>,
    /// What arming changed, in the order it is put back; `None` once put back.
    saved: Option<Vec<(Reg, u64)>>,
}

/// What a PMI handler reads: which armed counters overflowed and what each counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSample {
    /// ArmedCounter counters whose overflow is seen, by number (more than one may be).
    pub overflowed: Vec<u32>,
    /// Events each armed counter counted this interval, including those counted since its
    /// overflow.
    pub counts: Vec<(u32, u64)>,
    /// Status registers read to find the overflows (none where the counters' top bits show
    /// them).
    pub status_reads: usize,
    /// Counter values read.
    values: Vec<(u32, u64)>,
}

impl<B: Registers + ?Sized> CpuSampling<'_, '_, B> {
    /// The armed counters' numbers, in plan order.
    pub fn counters(&self) -> Vec<u32> {
        self.armed.iter().map(|a| a.number).collect()
    }

    /// Ends the session: stops the armed counters and puts back every register arming
    /// changed. Every write is attempted; the first failure is returned.
    pub fn close(mut self) -> Result<()> {
        match self.saved.take() {
            Some(saved) => self.pmu.restore(&saved),
            None => Ok(()),
        }
    }
}

impl<B: Registers + ?Sized> Drop for CpuSampling<'_, '_, B> {
    fn drop(&mut self) {
        if let Some(saved) = self.saved.take() {
            let _ = self.pmu.restore(&saved);
        }
    }
}

impl<B: Registers + ?Sized> fmt::Debug for CpuSampling<'_, '_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuSampling")
            .field("armed", &self.armed)
            .field("open", &self.saved.is_some())
            .finish()
    }
}

/// A counter checked for sampling: its control value with the overflow interrupt, and its
/// preload.
struct Planned {
    counter: &'static Counter,
    n: u64,
    control: u64,
    start: u64,
}

impl<'a, B: Registers + ?Sized> CpuBox<'a, B> {
    /// Claims the per-CPU box of `processor` on `cpu` (refused, naming the holder, while
    /// another session owns that CPU's core PMU). Refused for a processor whose spec has no
    /// per-CPU unit of its own.
    pub fn open(backend: &'a B, processor: &'static ProcessorInfo, cpu: u32) -> Result<Self> {
        let boxes = Boxes::of(processor);
        let pmu_box = boxes
            .boxes
            .iter()
            .find(|b| b.scope() == Scope::Cpu)
            .ok_or_else(|| UsageError::NoSuchBox {
                name: format!("per-CPU box in {}", processor.id),
                available: boxes.names().join(", "),
            })?;
        let lease = backend.claim(&Pmu::of_box(boxes, pmu_box, cpu, 0))?;
        Ok(Self {
            io: RegIo {
                backend,
                cpu,
                socket: 0,
                devices: None,
            },
            pmu_box,
            _lease: lease,
        })
    }

    /// The box.
    pub fn pmu_box(&self) -> &'static PmuBox {
        self.pmu_box
    }

    fn counter(&self, number: u32) -> Result<&'static Counter> {
        let b = self.pmu_box;
        b.counter(number)
            .filter(|c| c.info.kind == CounterKind::General && c.control.is_some())
            .ok_or_else(|| {
                UsageError::NoSuchCounter {
                    counter: format!("general counter {number} in {}", b.instance),
                    available: format!(
                        "counters {}",
                        b.counters
                            .iter()
                            .filter(|c| c.info.kind == CounterKind::General)
                            .map(|c| c.number().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
                .into()
            })
    }

    /// The largest interval counter `c` can be armed for: `2^(width-1)` where the top bit
    /// shows the overflow (a larger one would preload a value whose top bit is already clear).
    fn max_interval(c: &Counter) -> u64 {
        let w = c.info.width;
        match c.info.overflow {
            OverflowSeen::MsbClear => 1u64 << (w - 1).min(63),
            OverflowSeen::Status => {
                if w >= 64 {
                    u64::MAX
                } else {
                    1u64 << w
                }
            }
        }
    }

    /// One entry of a plan, checked without touching the machine.
    fn plan_one(&self, number: u32, sel: &EventSelect, n: u64) -> Result<Planned> {
        let counter = self.counter(number)?;
        if counter.control_bits(Role::OverflowEnable).is_none() {
            return Err(UsageError::UnsupportedField {
                register: counter.control.map_or("", |r| r.name()),
                field: "overflow interrupt (overflow-enable)",
            }
            .into());
        }
        if counter.info.overflow == OverflowSeen::Status
            && self.pmu_box.box_bit(Role::Overflow, number).is_none()
        {
            return Err(UsageError::UnsupportedField {
                register: counter.counter.name(),
                field: "overflow status bit (the spec gives no way to see this counter's overflow)",
            }
            .into());
        }
        let max = Self::max_interval(counter);
        if n > max {
            return Err(SamplingError::BadInterval { n, max }.into());
        }
        Ok(Planned {
            counter,
            n,
            control: counter.control_value(sel, true)?,
            start: preload(n, counter.info.width)?,
        })
    }

    /// Arms counters for an interrupt after each one's Nth event: `(counter number, event,
    /// N)`. The whole plan is checked first (each counter exists, is given once and can
    /// interrupt; its overflow can be seen; N fits; the event fits its control; the counter
    /// is not enabled by someone else), so a refused plan writes nothing. Then it clears the
    /// overflow bits left from earlier counting, preloads each counter with `2^width - N`,
    /// writes its control with the interrupt and enable set, and enables it in the box. If a
    /// step fails, what was written is put back.
    pub fn arm(&self, plan: &[(u32, EventSelect, u64)]) -> Result<CpuSampling<'_, 'a, B>> {
        let mut planned: Vec<Planned> = Vec::new();
        for &(number, sel, n) in plan {
            let p = self.plan_one(number, &sel, n)?;
            if planned.iter().any(|q| q.counter.number() == number) {
                return Err(UsageError::DuplicateCounter {
                    counter: p.counter.counter.name().to_string(),
                }
                .into());
            }
            planned.push(p);
        }
        let saved = self.save(&planned)?;
        check_idle(
            planned.iter().map(|p| p.counter),
            &saved,
            self.io.backend.takes_over(),
        )?;
        rolled_back(|| self.program(&planned), || self.restore(&saved))?;
        Ok(CpuSampling {
            pmu: self,
            armed: planned
                .iter()
                .map(|p| ArmedCounter {
                    number: p.counter.number(),
                    n: p.n,
                    start: p.start,
                })
                .collect(),
            saved: Some(saved),
        })
    }

    /// Reads what arming changes, in the order it is put back: the controls (stopping the
    /// counters), the counters' values, then the box-level enables.
    fn save(&self, planned: &[Planned]) -> Result<Vec<(Reg, u64)>> {
        let mut regs: Vec<Reg> = Vec::new();
        regs.extend(planned.iter().filter_map(|p| p.counter.control));
        regs.extend(planned.iter().map(|p| p.counter.counter));
        regs.extend(planned.iter().filter_map(|p| {
            self.pmu_box
                .box_bit(Role::CounterEnable, p.counter.number())
                .map(|(r, _)| r)
        }));
        let mut saved: Vec<(Reg, u64)> = Vec::new();
        for r in regs {
            if saved
                .iter()
                .any(|(s, _)| s.addr.location == r.addr.location)
            {
                continue;
            }
            saved.push((r, self.io.read(&r)? & !r.info.reserved_mask));
        }
        Ok(saved)
    }

    fn program(&self, planned: &[Planned]) -> Result<()> {
        let numbers: Vec<u32> = planned.iter().map(|p| p.counter.number()).collect();
        self.clear_overflows(&numbers)?;
        for p in planned {
            self.write_count(p.counter, p.start)?;
            let ctl = p.counter.control.expect("checked: a general counter");
            self.io.write(&ctl, p.control)?;
        }
        for p in planned {
            if let Some((reg, bits)) = self
                .pmu_box
                .box_bit(Role::CounterEnable, p.counter.number())
            {
                let old = self.io.read(&reg)? & !reg.info.reserved_mask;
                self.io
                    .write(&reg, bits.insert(reg.name(), old, bits.max())?)?;
            }
        }
        Ok(())
    }

    fn restore(&self, saved: &[(Reg, u64)]) -> Result<()> {
        let mut first_error = None;
        for (r, v) in saved {
            if let Err(e) = self.io.write(r, *v) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    fn write_count(&self, c: &Counter, value: u64) -> Result<()> {
        let raw = match c.count_bits() {
            Some(b) => b.insert(c.counter.name(), 0, value)?,
            None => value,
        };
        self.io.write(&c.counter, raw)
    }

    fn read_count(&self, c: &Counter) -> Result<u64> {
        let raw = self.io.read(&c.counter)?;
        Ok(c.count_bits().map_or(raw, |b| b.extract(raw)))
    }

    /// Clears what records the overflow of counters `numbers` in the box: a `w1c`/`wo`
    /// overflow-clear bit, or the status bit itself where it is `rw1c`. Counters whose top
    /// bit shows the overflow have nothing to clear.
    fn clear_overflows(&self, numbers: &[u32]) -> Result<()> {
        let mut writes: Vec<(Reg, u64)> = Vec::new();
        for &n in numbers {
            let bit = match self.pmu_box.box_bit(Role::OverflowClear, n) {
                Some(b) => Some(b),
                None => self
                    .pmu_box
                    .box_bit(Role::Overflow, n)
                    .filter(|(_, bits)| bits.field.access == Access::Rw1c),
            };
            let Some((reg, bits)) = bit else { continue };
            match writes
                .iter_mut()
                .find(|(r, _)| r.addr.location == reg.addr.location)
            {
                Some((_, v)) => *v |= bits.mask(),
                None => writes.push((reg, bits.mask())),
            }
        }
        for (reg, raw) in writes {
            self.io.write(&reg, raw)?;
        }
        Ok(())
    }

    /// What the PMI handler does first: finds every armed counter whose overflow is seen (its
    /// status bit set, or its top bit clear, as the spec says for that counter) and reads
    /// what each armed counter counted this interval. The counters keep counting.
    pub fn sample(&self, sampling: &CpuSampling<'_, 'a, B>) -> Result<CpuSample> {
        let mut statuses: HashMap<Location, u64> = HashMap::new();
        let mut status_reads = 0;
        let mut overflowed = Vec::new();
        let mut counts = Vec::new();
        let mut values = Vec::new();
        for a in &sampling.armed {
            let c = self.counter(a.number)?;
            let v = self.read_count(c)?;
            let width = c.info.width;
            let seen = match c.info.overflow {
                OverflowSeen::MsbClear => (v >> (width - 1)) & 1 == 0,
                OverflowSeen::Status => {
                    let (reg, bits) = self
                        .pmu_box
                        .box_bit(Role::Overflow, a.number)
                        .expect("checked when armed: the counter has a status bit");
                    let raw = match statuses.get(&reg.addr.location) {
                        Some(raw) => *raw,
                        None => {
                            let raw = self.io.read(&reg)?;
                            status_reads += 1;
                            statuses.insert(reg.addr.location, raw);
                            raw
                        }
                    };
                    bits.extract(raw) != 0
                }
            };
            // An overflowed counter counted up to 2^width and then `v` more.
            let count = if seen {
                overflowed.push(a.number);
                ((1u128 << width) - u128::from(a.start) + u128::from(v)) as u64
            } else {
                delta(a.start, v, width)
            };
            counts.push((a.number, count));
            values.push((a.number, v));
        }
        Ok(CpuSample {
            overflowed,
            counts,
            status_reads,
            values,
        })
    }

    /// Starts the next interval after a sample: clears the overflowed counters' status bits,
    /// preloads each of them again for its N, and lets the others go on from the values the
    /// sample read.
    pub fn rearm(&self, sampling: &mut CpuSampling<'_, 'a, B>, sample: &CpuSample) -> Result<()> {
        self.clear_overflows(&sample.overflowed)?;
        for a in &mut sampling.armed {
            if sample.overflowed.contains(&a.number) {
                let c = self.counter(a.number)?;
                a.start = preload(a.n, c.info.width)?;
                self.write_count(c, a.start)?;
            } else if let Some((_, v)) = sample.values.iter().find(|(n, _)| *n == a.number) {
                a.start = *v;
            }
        }
        Ok(())
    }
}
