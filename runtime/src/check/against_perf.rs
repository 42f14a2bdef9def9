//! This machine's kernel counts through the runtime's perf backend against the real `perf
//! stat`: the same steady load ([`LOAD`], `dd` copying 2 GiB from `/dev/zero` through a 64 MiB
//! buffer) measured by each, one after the other, counting [`EVENTS`] per task.
//!
//! The load's CPU time varies from run to run on a shared machine (222 ms to 307 ms over
//! three runs of `perf stat` here), so the clocks are compared as ratios that one run fixes
//! whatever its length, each against perf's own, with tolerances measured on this machine:
//!
//! - `page-faults`: a count (16,384 pages of the buffer plus the program's start-up faults,
//!   16,443 to 16,466 in ten runs of either tool): within 1%;
//! - `msr/tsc/` over `task-clock`: TSC ticks per second of the task running, the TSC's rate
//!   (2.600 GHz here in every run): within 1%;
//! - `cpu-clock` over `task-clock`: both time the task on its CPU (1.000 in every run): within
//!   1%;
//! - `task-clock` over the run's CPU time as the kernel accounts it (`getrusage`'s user plus
//!   system time, which `perf stat` prints under its table and the runtime reads when the
//!   command ends): the counters start at `exec`, the accounting at `fork`, and it is
//!   adjusted from tick samples, so the ratio was 0.979 to 1.036 over six runs: within 10%.
//!
//! Nothing is written: perf events only.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use super::outcome::CheckRow;
use crate::perf::EventSources;
use crate::stat::events::parse_events;
use crate::stat::run::{measure, StatPlan};

/// The events compared, as `perf stat -e` takes them.
pub const EVENTS: &str = "msr/tsc/,cpu-clock,task-clock,page-faults";

/// The steady load both tools measure: 2 GiB copied through a 64 MiB buffer, which faults in
/// 16,384 pages of 4 KiB; `status=none` keeps `dd` quiet.
pub const LOAD: [&str; 6] = [
    "dd",
    "if=/dev/zero",
    "of=/dev/null",
    "bs=64M",
    "count=32",
    "status=none",
];

/// One tool's measurement of the load: each event's count (the clocks in nanoseconds), and
/// the load's CPU time in seconds as the kernel accounts it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadCounts {
    /// Counts by event name.
    pub counts: BTreeMap<String, f64>,
    /// User plus system time, in seconds.
    pub cpu_seconds: f64,
}

impl LoadCounts {
    fn get(&self, event: &str) -> Option<f64> {
        self.counts.get(event).copied()
    }

    /// The compared quantities: `(check, value)`; `None` where an event is missing.
    fn quantities(&self) -> [(&'static str, Option<f64>); 4] {
        let task = self.get("task-clock");
        let ratio = |a: Option<f64>, b: Option<f64>| Some(a? / b?).filter(|x| x.is_finite());
        [
            ("page-faults", self.get("page-faults")),
            (
                "msr/tsc/ per task-clock second (GHz)",
                ratio(self.get("msr/tsc/"), task),
            ),
            ("cpu-clock / task-clock", ratio(self.get("cpu-clock"), task)),
            (
                "task-clock / CPU time",
                ratio(task.map(|t| t / 1e9), Some(self.cpu_seconds)),
            ),
        ]
    }
}

/// The tolerance of each quantity of [`LoadCounts::quantities`], in its order (see the
/// module's documentation for why).
const TOLERANCES: [f64; 4] = [0.01, 0.01, 0.01, 0.10];

/// The load measured through the runtime's perf backend.
pub fn through_runtime() -> Result<LoadCounts, String> {
    let events = parse_events(&[EVENTS], &EventSources::default()).map_err(|e| e.to_string())?;
    let plan = StatPlan::command(events, LOAD);
    let outcome = measure(&plan, &AtomicBool::new(false), |_| {}).map_err(|e| e.to_string())?;
    let mut counts = BTreeMap::new();
    for (event, totals) in outcome.events.iter().zip(&outcome.totals[0]) {
        if let Some(t) = totals {
            // An event perf_event_paranoid kept to user mode is named `page-faults:u`.
            let name = event.name.split(':').next().unwrap_or(&event.name);
            counts.insert(name.to_string(), t.count.mean());
        }
    }
    let (user, sys) = outcome.user_sys.unwrap_or_default();
    Ok(LoadCounts {
        counts,
        cpu_seconds: (user + sys).as_secs_f64(),
    })
}

/// The load measured by the `perf` program at `perf` (`perf stat` in the C locale, its table
/// and its user and system times parsed). `Ok(None)` when there is no such program.
pub fn through_perf_stat(perf: &str) -> Result<Option<LoadCounts>, String> {
    let output = match Command::new(perf)
        .args(["stat", "--no-big-num", "-e", EVENTS, "--"])
        .args(LOAD)
        .env("LC_ALL", "C")
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot run {perf}: {e}")),
    };
    let text = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("{perf} stat failed: {}", text.trim()));
    }
    Ok(Some(parse_perf_stat(&text)))
}

/// `perf stat`'s text output: each row's count (a clock's msec as nanoseconds) by event,
/// and the `seconds user` and `seconds sys` lines summed.
pub fn parse_perf_stat(text: &str) -> LoadCounts {
    let mut out = LoadCounts::default();
    for line in text.lines() {
        let head = line.split(" # ").next().unwrap_or(line);
        let words: Vec<&str> = head.split_whitespace().collect();
        let Some(value) = words.first().and_then(|w| w.parse::<f64>().ok()) else {
            continue;
        };
        match words.get(1..) {
            Some(["msec", event, ..]) => {
                out.counts.insert(event.to_string(), value * 1e6);
            }
            Some(["seconds", "user" | "sys"]) => out.cpu_seconds += value,
            Some([event]) if !event.starts_with("seconds") => {
                out.counts.insert(event.to_string(), value);
            }
            _ => {}
        }
    }
    out
}

/// The rows comparing `ours` (the runtime's) with `perf`'s, quantity by quantity.
pub fn compare(ours: &LoadCounts, perf: &LoadCounts) -> Vec<CheckRow> {
    ours.quantities()
        .into_iter()
        .zip(perf.quantities())
        .zip(TOLERANCES)
        .map(|(((name, mine), (_, theirs)), tolerance)| {
            // A count as a whole number, a ratio to three places.
            let places = if name == "page-faults" { 0 } else { 3 };
            let shown = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.places$}"));
            let expected = format!("{} (perf stat)", shown(theirs));
            let ok = match (mine, theirs) {
                (Some(m), Some(t)) => (m - t).abs() <= tolerance * t.abs(),
                _ => false,
            };
            let mut row = CheckRow::judged(name, expected, shown(mine), ok)
                .within(&format!("{}%", tolerance * 100.0));
            if mine.is_none() || theirs.is_none() {
                row.note = "not counted by both tools".into();
            }
            row
        })
        .collect()
}

/// The comparison's rows on this machine, with the `perf` program at `perf`: the four
/// quantities, or a note saying `perf` is not installed (nothing to compare with), or a
/// failure saying why a tool could not count.
pub fn rows(perf: &str) -> Vec<CheckRow> {
    let expected = "the load counted".to_string();
    let ours = match through_runtime() {
        Ok(c) => c,
        Err(e) => return vec![CheckRow::failed("pmu's perf backend", expected, e)],
    };
    match through_perf_stat(perf) {
        Ok(Some(theirs)) => compare(&ours, &theirs),
        Ok(None) => vec![CheckRow::note(
            "perf stat",
            format!(
                "no {perf} program: nothing to compare with (Debian: apt-get install linux-perf)"
            ),
        )],
        Err(e) => vec![CheckRow::failed("perf stat", expected, e)],
    }
}
