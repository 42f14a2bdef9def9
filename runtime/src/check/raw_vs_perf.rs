//! The same box counted through the simulated kernel's perf PMU (`pmu check --sim`): what a
//! run on a machine compares between the registers and perf, on a simulated part whose counts
//! are known exactly. The simulated kernel publishes the PMUs the spec says Linux registers
//! ([`crate::sim_perf::write_kernel_tree`], in a directory of its own removed afterwards) and
//! its driver ([`SimPerf`]) programs the simulator as Linux's drivers program hardware; each
//! box the registers count is counted again through it, the same event at the same steady
//! pace, and must count what the registers count: a row per box (`perf CHA0`).
//!
//! The two paths share no access: a fault injected into the machine's registers fails the
//! register rows only, and one injected into the perf path ([`PerfFault`]: the Nth group read
//! fails) fails the perf rows only.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::outcome::CheckRow;
use crate::boxes::{Boxes, EventSelect, PmuBox};
use crate::fault::Fault;
use crate::machine::Machine;
use crate::perf::layer::{EventAttr, GroupValues, OpenError, OpenGroup, PerfLayer};
use crate::perf::EventSources;
use crate::quirks::Quirks;
use crate::session::{Clock, Options, Pace, PerfBackend, Selection, Session, SessionBackend};
use crate::sim_perf::{write_kernel_tree, SimPerf};

/// What each box is counted for, as the register rows count it: `intervals` readings, one
/// every `step`, while the simulator runs every event at `rate` a second; each interval must
/// count `rate x step`, which the rows write as `expected`.
#[derive(Debug, Clone)]
pub struct Steady {
    /// Events a second.
    pub rate: u64,
    /// The interval, on the simulator's stepped clock.
    pub step: std::time::Duration,
    /// How many intervals.
    pub intervals: usize,
    /// The event select counted.
    pub event: u16,
    /// The expectation as the register rows write it.
    pub expected: String,
}

impl Steady {
    fn per_interval(&self) -> u64 {
        self.rate * self.step.as_millis() as u64 / 1000
    }
}

/// A fault in the perf path: the `read`-th group read (from 1, over the whole run) fails
/// with `fault`, as `read(2)` on a perf event would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfFault {
    /// Which group read fails.
    pub read: usize,
    /// How.
    pub fault: Fault,
}

impl PerfFault {
    /// Parses `perf-read:N:KIND` (KIND one of eio, eacces, enoent, short); `None` for text
    /// that does not start with `perf-read:` (a register fault, `read:N:KIND`...).
    pub fn parse(text: &str) -> Option<Result<Self, crate::error::UsageError>> {
        let rest = text.strip_prefix("perf-")?;
        let parsed = crate::fault::parse(rest).and_then(|(when, fault)| match when {
            crate::fault::When::Read(read) => Ok(PerfFault { read, fault }),
            _ => Err(crate::error::UsageError::BadValue {
                text: text.to_string(),
                expected: "perf-read:N:KIND (a perf group read; the perf path has no writes)"
                    .into(),
            }),
        });
        Some(parsed)
    }

    fn error(self) -> io::Error {
        let code = match self.fault {
            Fault::Eio => 5,
            Fault::Eacces => 13,
            Fault::Enoent => 2,
            Fault::Short => return io::Error::other("a short read of the perf group"),
        };
        io::Error::from_raw_os_error(code)
    }
}

/// A perf layer whose `fault.read`-th group read fails.
struct Faulting<'l> {
    inner: &'l dyn PerfLayer,
    fault: Option<PerfFault>,
    reads: AtomicUsize,
}

impl PerfLayer for Faulting<'_> {
    fn open_group<'l>(
        &'l self,
        cpu: Option<u32>,
        events: &[EventAttr],
    ) -> Result<Box<dyn OpenGroup + 'l>, OpenError> {
        let group = self.inner.open_group(cpu, events)?;
        Ok(Box::new(FaultingGroup { layer: self, group }))
    }
}

struct FaultingGroup<'l> {
    layer: &'l Faulting<'l>,
    group: Box<dyn OpenGroup + 'l>,
}

impl OpenGroup for FaultingGroup<'_> {
    fn enable(&mut self) -> io::Result<()> {
        self.group.enable()
    }
    fn disable(&mut self) -> io::Result<()> {
        self.group.disable()
    }
    fn read(&mut self) -> io::Result<GroupValues> {
        let n = self.layer.reads.fetch_add(1, Ordering::Relaxed) + 1;
        match self.layer.fault {
            Some(f) if f.read == n => Err(f.error()),
            _ => self.group.read(),
        }
    }
}

/// A directory of its own under the system's temporary directory, removed when dropped.
struct TempTree(PathBuf);

impl TempTree {
    fn new() -> io::Result<Self> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pmu-check-kernel-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir)?;
        Ok(TempTree(dir))
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A row per box of `counted` that the kernel has a PMU for: its count through the simulated
/// perf driver, which must be what the registers count (`steady`).
pub fn rows(
    machine: &Machine,
    (boxes, counted): (&'static Boxes, &[&'static PmuBox]),
    steady: &Steady,
    quirks: Quirks,
    fault: Option<PerfFault>,
) -> Vec<CheckRow> {
    let with_pmu: Vec<(&'static PmuBox, &'static str)> = counted
        .iter()
        .filter_map(|b| {
            let perf = b.unit.pmu?.perf.iter().find(|p| p.instance == b.instance)?;
            Some((*b, perf.pmu))
        })
        .collect();
    let Some(sim) = machine.sim().filter(|_| !with_pmu.is_empty()) else {
        return Vec::new();
    };
    let tree = TempTree::new().and_then(|t| {
        let cpus: Vec<String> = machine
            .topology()
            .map_err(io::Error::other)?
            .sockets()
            .filter_map(|s| machine.cpu_for_socket(s).ok())
            .map(|c| c.to_string())
            .collect();
        write_kernel_tree(boxes.processor, &t.0, &cpus.join(","))?;
        Ok(t)
    });
    let tree = match tree {
        Ok(t) => t,
        Err(e) => {
            let why = format!("cannot write the simulated kernel's PMUs: {e}");
            return vec![CheckRow::failed("perf", "-".into(), why)];
        }
    };
    let sources = EventSources::with_root(&tree.0);
    let driver = match SimPerf::new(sim, &sources) {
        Ok(d) => d,
        Err(e) => return vec![CheckRow::failed("perf", "-".into(), e.to_string())],
    };
    let layer = Faulting {
        inner: &driver,
        fault,
        reads: AtomicUsize::new(0),
    };
    with_pmu
        .into_iter()
        .map(|(b, pmu)| {
            let backend = SessionBackend::Perf(PerfBackend {
                machine,
                sources: EventSources::with_root(&tree.0),
                layer: &layer,
                fallback: false,
            });
            row(&backend, (boxes, b), pmu, steady, quirks)
        })
        .collect()
}

/// The row of box `b` counted through perf PMU `pmu`.
fn row(
    backend: &SessionBackend<'_>,
    (boxes, b): (&'static Boxes, &'static PmuBox),
    pmu: &str,
    steady: &Steady,
    quirks: Quirks,
) -> CheckRow {
    let name = format!("perf {}", b.instance);
    let expected = if b.through_perf_only() {
        steady.expected.clone()
    } else {
        format!("{}, as the registers", steady.expected)
    };
    match steady_deltas(backend, (boxes, b), steady, quirks) {
        Ok(d) => {
            let measured = d.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            let ok = d.iter().all(|&x| x == steady.per_interval());
            let mut row = CheckRow::judged(name, expected, measured, ok);
            let broken = super::outcome::broken(b.instance, &d, steady.per_interval());
            row.note = match broken.as_str() {
                "" => format!("through {pmu}"),
                why => format!("through {pmu}: {why}"),
            };
            row
        }
        Err(e) => CheckRow::failed(name, expected, format!("through {pmu}: {e}")),
    }
}

/// Each interval's count of `steady.event` on box `b` through a session on `backend` (the
/// registers or perf), at the steady pace.
pub(super) fn steady_deltas(
    backend: &SessionBackend<'_>,
    (boxes, b): (&'static Boxes, &'static PmuBox),
    steady: &Steady,
    quirks: Quirks,
) -> crate::error::Result<Vec<u64>> {
    let event = steady.event;
    let selection = Selection::of_boxes(
        &[(boxes, b)],
        &[&format!("ev_sel={event:#x}")],
        &[EventSelect::event(event)],
    )?;
    let options = Options {
        clock: Clock::Steps(steady.step),
        pace: Pace::Steady(steady.rate),
        quirks,
        ..Options::default()
    };
    let mut session = Session::open(backend, &selection, options)?;
    let mut out = Vec::new();
    for _ in 0..steady.intervals {
        match session.interval() {
            Ok(i) => out.push(i.counts[0].delta),
            Err(e) => {
                let _ = session.close();
                return Err(e);
            }
        }
    }
    session.close()?;
    Ok(out)
}
