//! A counting session: what `pmu watch` and `pmu serve` do, for any program. Built from a
//! [`Selection`] (boxes and their events, or a kernel PMU; sockets; a CPU) over a
//! [`SessionBackend`] (the registers of hardware or the simulator, or the kernel's perf PMUs), it
//! opens (checks everything, then programs every box on every socket), reads per interval
//! (counts, wrap-correct 64-bit totals, a perf event's time enabled and running), and closes
//! (puts back every register it changed) on every way out: [`Session::close`], a failure
//! while opening, or dropping it.
//!
//! On the simulator the session also runs the simulator's workload on its own clock (a
//! named workload by default, see [`Pace`]): every counter counts what its control selects
//! of it, so what a simulated interval counts depends on the time it spans, not on how
//! often it is read.
//!
//! ```
//! use pmu_runtime::boxes::Boxes;
//! use pmu_runtime::machine::Machine;
//! use pmu_runtime::sampling::uncore::EventSelect;
//! use pmu_runtime::session::{SessionBackend, Options, Selection, Session};
//! use std::time::Duration;
//!
//! let processor = &pmu_regs::xeon_7500::PROCESSOR;
//! let boxes = Boxes::of(processor);
//! let selection = Selection::of_boxes(
//!     &[(boxes, boxes.find("C3").unwrap())],
//!     &["ev_sel=0x01"],
//!     &[EventSelect::event(0x01)],
//! )?;
//! let machine = Machine::simulating(processor);
//! let backend = SessionBackend::Registers(&machine);
//! // The simulator's clock: a reading every 10 ms of simulated time.
//! let clock = backend.clock(Duration::from_millis(10));
//! let options = Options { clock, ..Options::default() };
//! let mut session = Session::open(&backend, &selection, options)?;
//! let interval = session.interval()?;
//! // An event the default workload does not name: one in 1000 cycles of the 2 GHz uncore
//! // clock, 20,000 in 10 ms.
//! assert_eq!(interval.counts[0].delta, 20_000);
//! session.close()?; // every register as it was
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

mod backend;
mod broken;
mod discovered;
mod named;
mod open;
mod placed;
mod selection;
mod topdown;
pub mod turns;
pub mod words;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::boxes::EventSelect;
use crate::counters::delta;
use crate::counters::Counting;
use crate::error::{Error, Result};
use crate::machine::Machine;
use crate::machine::{Rate, StreamId};
use crate::perf::counting::BoxGroup;
use crate::quirks::Quirks;

use turns::Turns;

pub use backend::{BackendKind, PerfBackend, Route, SessionBackend};
pub use named::config_line;
pub use open::SLOTS_PER_EVENT;
pub use selection::{find_box, BoxEvents, Counted, Selection, Sockets};
pub use topdown::TopdownSample;

/// The shortest and longest counting interval `watch` and `serve` accept, in seconds.
pub const INTERVAL: (f64, f64) = (0.01, 86400.0);

/// What one counter counts: one series of readings.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesInfo {
    /// The processor's id (`xeon-e5-2600`); `kernel` for a kernel PMU counted by name.
    pub processor: &'static str,
    /// The socket.
    pub socket: u32,
    /// The unit (box kind) as the spec names it (`IMC`), or the kernel PMU's name.
    pub unit: String,
    /// The box instance (`CH2`), or the kernel PMU's name.
    pub instance: String,
    /// The counter register's name (`MC_CH2_PCI_PMON_CTR0`); for a kernel PMU counted by
    /// name, the perf event string (`msr/event=0x0/`).
    pub counter: String,
    /// The event's name in the selection (`event=UNC_M_CAS_COUNT.RD`).
    pub event: String,
    /// Which of the selection's events it is.
    pub event_index: usize,
    /// What counts it.
    pub backend: BackendKind,
    /// The counter's width in bits: readings wrap at 2^width (64 through perf, which
    /// accumulates in the kernel).
    pub width: u32,
    /// Through perf: the kernel PMU, the CPU the event is opened on, and the event string.
    pub perf: Option<PerfSeries>,
    /// The CPU of a per-CPU PMU's counter (the core PMU; a kernel PMU without a cpumask,
    /// such as `msr`); `None` for an uncore box.
    pub cpu: Option<u32>,
}

/// Where a series counts through perf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfSeries {
    /// The kernel PMU (`uncore_imc_2`).
    pub pmu: String,
    /// The CPU the group is opened on.
    pub cpu: Option<u32>,
    /// The event as perf writes it (`uncore_ha/event=0x1,umask=0x3/`).
    pub event: String,
}

/// One read of one counter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The counter's value (through perf: the 64-bit count, scaled if multiplexed).
    pub value: u64,
    /// Through perf: the share of the enabled time the event was on the hardware.
    pub running_ratio: Option<f64>,
    /// Through perf: how long the event has been enabled, and on the hardware, so far.
    /// Counted in turns: the same, the time on one of the box's counters.
    pub times: Option<Times>,
    /// Counted in turns ([`turns`]) or through perf: the events counted while on a counter,
    /// unscaled, in 64 bits (`value` is this scaled by the times), from which each interval
    /// is scaled by its own times; `None` for a counter of its own.
    pub counted: Option<u64>,
}

impl Reading {
    /// A counter's `value` and, through perf, the share of the time it ran, with no times:
    /// what an exporter fed by other means than a session records.
    pub fn new(value: u64, running_ratio: Option<f64>) -> Self {
        Reading {
            value,
            running_ratio,
            times: None,
            counted: None,
        }
    }
}

/// How long a perf event has been enabled, and how long of that it was on the hardware
/// (less where the kernel multiplexed it with other events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Times {
    /// Time enabled.
    pub enabled: Duration,
    /// Time running.
    pub running: Duration,
}

/// One counter over one interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Count {
    /// Events in the interval, correct across a wrap of the counter; where the event shared
    /// the counters (perf's multiplexing, or counting in turns), what it counted scaled up by
    /// the interval's time enabled over its time running.
    pub delta: u64,
    /// Events since the session's first reading, in 64 bits whatever the counter's width.
    pub total: u64,
    /// Through perf or in turns: the share of the interval the event was on a counter.
    pub running_ratio: Option<f64>,
    /// Through perf or in turns: the time enabled and running within this interval.
    pub times: Option<Times>,
}

/// Every counter over one interval, in [`Session::series`] order.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// Seconds from the first reading to the end of this interval, on the session's clock.
    pub time: f64,
    /// Seconds the interval spans.
    pub seconds: f64,
    /// The counts.
    pub counts: Vec<Count>,
    /// With [`Options::topdown`]: each counted CPU's fixed counter 3 and IA32_PERF_METRICS
    /// over the interval; empty otherwise.
    pub topdown: Vec<TopdownSample>,
}

/// The time a session's readings are taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The time that passed since the session opened.
    #[default]
    Wall,
    /// The n-th reading is at n steps: a simulated machine's time, the same on every run.
    Steps(Duration),
}

/// What happens on a simulated machine while a session counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// A named workload ([`crate::machine::WORKLOADS`]): every event counts what the workload
    /// says an event of its encoding does, under the counter mask, invert, edge and
    /// privilege bits its control sets. The default is [`crate::machine::DEFAULT_WORKLOAD`].
    Workload(&'static crate::machine::NamedWorkload),
    /// A test fixture, not a machine: event i (from 0) at 100,000 x (i + 1) + 1,850 per
    /// second, rising by 370,000 per second each second: in steps of 10 ms, 1000 x (i + 1) +
    /// 37 x n events in the n-th. Also what a custom backend without named workloads runs.
    Demo,
    /// A test fixture: every event at this many per second.
    Steady(u64),
    /// A test fixture: event i (from 0) steadily at (i + 1) times this many per second:
    /// each event's count tells which it is, and what an interval counts is known exactly.
    Ladder(u64),
}

impl Default for Pace {
    /// The default named workload.
    fn default() -> Self {
        Pace::Workload(crate::machine::default_workload())
    }
}

impl Pace {
    /// The rate of the selection's `event`-th event under a fixture pace (a named workload
    /// has no per-event rate: it runs [`Pace::Demo`]'s on a backend without named workloads).
    pub fn rate(self, event: usize) -> Rate {
        match self {
            Pace::Demo | Pace::Workload(_) => Rate {
                per_second: 100_000 * (event as u64 + 1) + 1_850,
                ramp: 370_000,
            },
            Pace::Steady(n) => Rate::steady(n),
            Pace::Ladder(n) => Rate::steady(n.saturating_mul(event as u64 + 1)),
        }
    }
}

/// How long each turn lasts where a box counts more events than it has counters, unless
/// [`Options::turn`] says otherwise.
pub const TURN: Duration = Duration::from_millis(10);

/// How a session runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// When readings are taken (see [`SessionBackend::clock`]).
    pub clock: Clock,
    /// On a simulated machine, how often the counted events happen.
    pub pace: Pace,
    /// Where a box has more events than general counters, how long each group of events
    /// stays on the counters before the next ([`turns`]). On the simulated clock turns end
    /// exactly at its multiples; on the wall clock at the first reading or
    /// [`Session::rotate`] after one is due. Zero: a turn per reading.
    pub turn: Duration,
    /// Program boxes the part's discovery table does not list, disagrees with, or that
    /// cannot be read, as the spec says, instead of refusing them (`--allow-mismatch`).
    pub allow_mismatch: bool,
    /// Also read the top-down registers (fixed counter 3 and IA32_PERF_METRICS, Ice Lake
    /// and later) on every CPU whose core counters the selection programs: each interval's
    /// [`Interval::topdown`]. On the simulator those CPUs then run TOPDOWN.SLOTS at
    /// [`SLOTS_PER_EVENT`] times the pace's rate for the event after the selection's last.
    pub topdown: bool,
    /// Which of the spec's hardware quirks the session handles ([`Quirks::ALL`]: every
    /// one). A conformance run turns them off to show what the hardware does without them.
    pub quirks: Quirks,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            clock: Clock::default(),
            pace: Pace::default(),
            turn: TURN,
            allow_mismatch: false,
            topdown: false,
            quirks: Quirks::ALL,
        }
    }
}

/// One box on one socket, programmed through its registers.
struct Group<'m> {
    counting: Counting<'m, Machine>,
    counters: Vec<u32>,
    sels: Vec<EventSelect>,
    cpu: u32,
    socket: u32,
    /// Where the box has more events than counters: their turns.
    turns: Option<Turns>,
}

impl Group<'_> {
    /// How many series the box reads: one per event.
    fn series_count(&self) -> usize {
        self.turns
            .as_ref()
            .map_or(self.counters.len(), Turns::events)
    }
}

/// A box counted through perf on the simulator: where the workload's events go.
struct SimulatedPerfBox {
    pmu_box: &'static crate::boxes::PmuBox,
    cpu: u32,
    socket: u32,
    sels: Vec<EventSelect>,
}

/// The programmed counters of a [`Selection`]: every selected box on every selected socket.
/// Dropping it puts every register back (best effort) and closes every perf event;
/// [`Session::close`] does the same and reports a failure.
pub struct Session<'m> {
    machine: &'m Machine,
    groups: Vec<Group<'m>>,
    /// Perf groups (one per kernel PMU and CPU).
    perf: Vec<BoxGroup<'m>>,
    /// Boxes counted through perf on the simulator, for its workload.
    perf_sim_boxes: Vec<SimulatedPerfBox>,
    /// Per series: `None` for the registers, or the perf group and member it reads.
    perf_index: Vec<Option<(usize, usize)>>,
    series: Vec<SeriesInfo>,
    options: Options,
    /// The simulator's streams this session runs.
    streams: Vec<StreamId>,
    opened: Instant,
    /// Readings taken so far (the clock's step count).
    reads: u32,
    /// The previous reading's time and readings, for [`Self::interval`].
    last: Option<(Duration, Vec<Reading>)>,
    totals: Vec<u64>,
    /// When the last turn ended (or counting in turns began).
    turned_at: Duration,
    /// Whether the boxes counting in turns have begun.
    turns_begun: bool,
    /// The top-down registers, with [`Options::topdown`].
    topdown: Option<topdown::Topdown<'m>>,
    /// What the part's discovery tables say against the spec of boxes programmed anyway.
    warnings: Vec<String>,
    /// The discovery domain tables' global controls this session wrote (the domain's
    /// `global_init`), with the value found there: put back last.
    domain_inits: Vec<(placed::DomainInit, u32)>,
}

impl<'m> Session<'m> {
    /// What the part's discovery tables say against the spec of the boxes this session
    /// programmed anyway ([`Options::allow_mismatch`]): one line per box and table, empty
    /// when everything agreed. `pmu watch` and `pmu serve` print them on stderr.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// What each reading is, in the same order: the boxes counted through perf first, then
    /// those programmed through the registers, each socket by socket.
    pub fn series(&self) -> &[SeriesInfo] {
        &self.series
    }

    /// The next reading's time on the session's clock, with the simulator's workload run up
    /// to it.
    fn tick(&mut self) -> Result<(Duration, f64)> {
        let (at, seconds) = match self.options.clock {
            Clock::Wall => {
                let t = self.opened.elapsed();
                (t, t.as_secs_f64())
            }
            Clock::Steps(step) => (
                step * self.reads,
                step.as_secs_f64() * f64::from(self.reads),
            ),
        };
        self.reads += 1;
        if matches!(self.options.clock, Clock::Steps(_)) {
            self.turns_until(at)?;
        }
        if let (Some(w), false) = (self.machine.workload(), self.streams.is_empty()) {
            w.advance(&self.streams, at)?;
        }
        Ok((at, seconds))
    }

    /// Whether any box counts its events in turns (more events than counters).
    pub fn in_turns(&self) -> bool {
        self.groups.iter().any(|g| g.turns.is_some())
    }

    /// How long a turn lasts where boxes count in turns: on the wall clock, call
    /// [`Self::rotate`] at least this often between readings so every turn gets its time.
    pub fn turn_length(&self) -> Option<Duration> {
        self.in_turns().then_some(self.options.turn)
    }

    /// Waits one interval of `period` in short steps, so that `stop` (set by a signal
    /// handler) is noticed promptly and, where boxes count in turns, each turn ends on time
    /// ([`Self::rotate`]). Returns early once `stop` is set.
    pub fn wait_interval(&mut self, period: Duration, stop: &AtomicBool) -> Result<()> {
        let step = self.turn_length().map_or(Duration::from_millis(50), |t| {
            t.clamp(Duration::from_millis(1), Duration::from_millis(50))
        });
        let deadline = Instant::now() + period;
        while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
            std::thread::sleep((deadline - Instant::now()).min(step));
            self.rotate()?;
        }
        Ok(())
    }

    /// On the wall clock, ends the turn on the counters of every box counting in turns if it
    /// has lasted [`Options::turn`], and puts the next on. On the simulated clock turns end
    /// at exact times as the clock passes them, so this does nothing.
    pub fn rotate(&mut self) -> Result<()> {
        if self.options.clock != Clock::Wall || !self.turns_begun || !self.in_turns() {
            return Ok(());
        }
        let at = self.opened.elapsed();
        if at.saturating_sub(self.turned_at) >= self.options.turn {
            self.rotate_all(at)?;
        }
        Ok(())
    }

    /// Ends every turn due by `at` on the simulated clock, the workload run up to each end.
    fn turns_until(&mut self, at: Duration) -> Result<()> {
        if !self.turns_begun || self.options.turn.is_zero() || !self.in_turns() {
            return Ok(());
        }
        while self.turned_at + self.options.turn <= at {
            let end = self.turned_at + self.options.turn;
            if let (Some(w), false) = (self.machine.workload(), self.streams.is_empty()) {
                w.advance(&self.streams, end)?;
            }
            self.rotate_all(end)?;
        }
        Ok(())
    }

    /// Puts the next turn on every box counting in turns, at `at`.
    fn rotate_all(&mut self, at: Duration) -> Result<()> {
        for g in &mut self.groups {
            if let Some(t) = &mut g.turns {
                t.rotate(&mut g.counting, at)?;
            }
        }
        self.turned_at = at;
        Ok(())
    }

    /// Every counter's value, in [`Self::series`] order; `None` for each counter of a box
    /// whose read failed (the others are still read): what an exporter that must keep going
    /// reads.
    pub fn read(&mut self) -> Vec<Option<Reading>> {
        let Ok((at, _)) = self.tick() else {
            return vec![None; self.series.len()];
        };
        let (raw, perf) = self.read_boxes(at);
        self.assemble(
            raw.into_iter().map(Result::ok).collect(),
            perf.into_iter().map(Result::ok).collect(),
        )
    }

    /// Like [`Self::read`], but the first failure is returned.
    pub fn read_all(&mut self) -> Result<Vec<Reading>> {
        let (at, _) = self.tick()?;
        self.read_strict(at)
    }

    fn read_strict(&mut self, at: Duration) -> Result<Vec<Reading>> {
        let (raw, perf) = self.read_boxes(at);
        let raw = raw
            .into_iter()
            .map(|r| r.map(Some))
            .collect::<Result<_, _>>()?;
        let perf = perf
            .into_iter()
            .map(|r| r.map(Some))
            .collect::<Result<_, _>>()?;
        Ok(self
            .assemble(raw, perf)
            .into_iter()
            .map(|r| r.expect("every box was read"))
            .collect())
    }

    /// With [`Options::topdown`]: each counted CPU's fixed counter 3 and IA32_PERF_METRICS
    /// since the last reading of them (or [`Self::start`], or the opening), both zeroed
    /// again; empty without. [`Self::interval`] reads them itself; this is for callers that
    /// read counters with [`Self::read`] (an exporter).
    pub fn read_topdown(&mut self) -> Result<Vec<TopdownSample>> {
        match &self.topdown {
            Some(t) => t.read(),
            None => Ok(Vec::new()),
        }
    }

    /// Takes the reading intervals are counted from. [`Self::interval`] takes it itself if
    /// it was not taken; take it first to report a failure before the first interval.
    pub fn start(&mut self) -> Result<()> {
        let (at, _) = self.tick()?;
        let readings = self.read_strict(at)?;
        if let Some(t) = &self.topdown {
            t.zero()?;
        }
        self.last = Some((at, readings));
        self.totals = vec![0; self.series.len()];
        Ok(())
    }

    /// Reads every counter and returns what each counted since the previous interval (or
    /// since [`Self::start`]); the first failure is returned.
    pub fn interval(&mut self) -> Result<Interval> {
        if self.last.is_none() {
            self.start()?;
        }
        let (at, time) = self.tick()?;
        let now = self.read_strict(at)?;
        let (before, previous) = self.last.take().expect("started above");
        let counts = self
            .series
            .iter()
            .zip(&previous)
            .zip(&now)
            .zip(&mut self.totals)
            .map(|(((s, p), n), total)| {
                let times = n.times.zip(p.times).map(|(n, p)| Times {
                    enabled: n.enabled.saturating_sub(p.enabled),
                    running: n.running.saturating_sub(p.running),
                });
                let (d, running_ratio) = match (n.counted.zip(p.counted), times) {
                    // In turns: this interval's count scaled by this interval's times.
                    (Some((n, p)), Some(t)) => (
                        turns::scale(n.wrapping_sub(p), t.enabled, t.running).unwrap_or(0),
                        Some(turns::ratio(t.enabled, t.running)),
                    ),
                    _ => (delta(p.value, n.value, s.width), n.running_ratio),
                };
                *total = total.wrapping_add(d);
                Count {
                    delta: d,
                    total: *total,
                    running_ratio,
                    times,
                }
            })
            .collect::<Vec<_>>();
        self.last = Some((at, now));
        if let Some(broken) = self.broken_box(&counts, (at - before).as_secs_f64()) {
            return Err(Error::Broken(Box::new(broken)));
        }
        let topdown = self.read_topdown()?;
        Ok(Interval {
            time,
            seconds: (at - before).as_secs_f64(),
            counts,
            topdown,
        })
    }

    /// Reads each box (registers) and each group (perf) once, all its counters together; a
    /// box counting in turns credits the turn on its counters up to `at`.
    #[allow(clippy::type_complexity)]
    fn read_boxes(
        &mut self,
        at: Duration,
    ) -> (Vec<Result<Vec<Reading>>>, Vec<Result<Vec<Reading>>>) {
        let begin = !self.turns_begun;
        let raw = self
            .groups
            .iter_mut()
            .map(|g| match &mut g.turns {
                Some(t) => {
                    if begin {
                        t.begin(&g.counting, at)?;
                    } else {
                        t.settle(&g.counting, at)?;
                    }
                    Ok((0..t.events()).map(|e| t.reading(e, at)).collect())
                }
                None => g
                    .counters
                    .iter()
                    .map(|&n| {
                        g.counting.read_counter(n).map(|value| Reading {
                            value,
                            running_ratio: None,
                            times: None,
                            counted: None,
                        })
                    })
                    .collect(),
            })
            .collect();
        if begin {
            self.turns_begun = true;
            self.turned_at = at;
        } else if (self.options.clock == Clock::Wall
            && at.saturating_sub(self.turned_at) >= self.options.turn)
            || self.options.turn.is_zero()
        {
            // A failed turn shows in the next reading of the box.
            let _ = self.rotate_all(at);
        }
        let perf = self
            .perf
            .iter_mut()
            .map(|g| {
                Ok(g.read()?
                    .into_iter()
                    .map(|r| Reading {
                        value: r.scaled().unwrap_or(0),
                        running_ratio: Some(if r.time_enabled.is_zero() {
                            0.0
                        } else {
                            r.time_running.as_secs_f64() / r.time_enabled.as_secs_f64()
                        }),
                        times: Some(Times {
                            enabled: r.time_enabled,
                            running: r.time_running,
                        }),
                        // Each interval is scaled by its own times, as `perf stat -I` does.
                        counted: Some(r.count),
                    })
                    .collect())
            })
            .collect();
        (raw, perf)
    }

    /// The readings of boxes and groups (`None` where one failed) in series order.
    fn assemble(
        &self,
        raw: Vec<Option<Vec<Reading>>>,
        perf: Vec<Option<Vec<Reading>>>,
    ) -> Vec<Option<Reading>> {
        let (mut box_no, mut member) = (0, 0);
        let mut out = Vec::with_capacity(self.series.len());
        for index in &self.perf_index {
            out.push(match index {
                Some((g, m)) => perf[*g].as_ref().map(|v| v[*m]),
                None => {
                    let r = raw[box_no].as_ref().map(|v| v[member]);
                    member += 1;
                    if member == self.groups[box_no].series_count() {
                        (box_no, member) = (box_no + 1, 0);
                    }
                    r
                }
            });
        }
        out
    }

    /// Puts back every box, last first, and closes every perf event; every box is tried, the
    /// first failure returned.
    fn restore(&mut self) -> Result<()> {
        if let Some(w) = self.machine.workload() {
            w.stop(&self.streams);
        }
        self.streams.clear();
        self.perf.clear();
        let mut first = None;
        // Opened after the boxes: put back first.
        if let Some(mut t) = self.topdown.take() {
            if let Err(e) = t.restore() {
                first = Some(e);
            }
        }
        while let Some(g) = self.groups.pop() {
            if let Err(e) = g.counting.close() {
                first.get_or_insert(e);
            }
        }
        // Written before any box: put back after every one.
        while let Some((d, found)) = self.domain_inits.pop() {
            use crate::access::MmioAccess;
            if let Err(e) = self.machine.write_mmio(d.address, 32, u64::from(found)) {
                first.get_or_insert(e.into());
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Puts back what was programmed after `e`, reporting both if that fails too.
    fn undo(&mut self, e: Error) -> Error {
        match self.restore() {
            Ok(()) => e,
            Err(cleanup) => Error::Cleanup {
                error: Box::new(e),
                cleanup: Box::new(cleanup),
            },
        }
    }

    /// Ends counting: puts back every register it changed, counter values included.
    pub fn close(mut self) -> Result<()> {
        self.restore()
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}
