//! Counts a command's task clock and page faults through perf's software events (real
//! counts: no simulator, no hardware PMU needed) and prints them in perf stat's CSV, as this
//! `pmu stat` does:
//!
//! ```text
//! pmu stat -x, -e task-clock,page-faults -- true
//! ```
//!
//! With `--default`, it counts perf's default events instead and prints their rows, then the
//! derived metrics alone, as these print them:
//!
//! ```text
//! pmu stat -x, -- true
//! pmu stat -x, --metric-only -- true
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example perf_stat [-- --default]`; CI and
//! `runtime/tests/examples.rs` compare its output with those commands', the numbers left out
//! (two runs of a command do not take the same time; [`steady`]).

use std::sync::atomic::AtomicBool;

use pmu_runtime::perf::EventSources;
use pmu_runtime::stat::events::{default_events, parse_events_for};
use pmu_runtime::stat::metric_only;
use pmu_runtime::stat::options::{check, StatOptions};
use pmu_runtime::stat::report::{summary, target_label, StatLayout};
use pmu_runtime::stat::run::{measure, StatPlan};
use pmu_runtime::stat::StatError;

/// The events, in perf's syntax.
pub const EVENTS: &str = "task-clock,page-faults";
/// The command whose run is counted.
pub const COMMAND: [&str; 1] = ["true"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (text, exit_code) = if std::env::args().any(|a| a == "--default") {
        let (rows, metrics, exit_code) = default_report()?;
        (rows + &metrics, exit_code)
    } else {
        report()?
    };
    // Where `pmu stat` prints, as perf stat: the command's stdout stays its own.
    eprint!("{text}");
    std::process::exit(exit_code);
}

/// Runs the command, counting it (and the tasks it starts), and gives perf stat's CSV with
/// the command's exit status.
pub fn report() -> Result<(String, i32), Box<dyn std::error::Error>> {
    // The kernel's PMUs (sysfs) name the events; no processor is needed for perf's own.
    let events = parse_events_for(&[EVENTS], &EventSources::default(), None)?;
    let plan = StatPlan::command(events, COMMAND);
    // Set it to stop counting early (on Ctrl-C, say); with a command, its end stops it.
    let stop = AtomicBool::new(false);
    let outcome = measure(&plan, &stop, |_| {})?;
    let target = target_label(&plan.scope, &plan.command, false);
    let text = summary(&outcome, &target, &StatLayout::Csv(",".into()));
    Ok((text, outcome.exit_code))
}

/// Runs the command twice with perf's default events: the counts, then the derived metrics
/// alone, each as CSV; with the last run's exit status.
pub fn default_report() -> Result<(String, String, i32), StatError> {
    let plan = StatPlan::command(default_events(false), COMMAND);
    // The second run's options (`-x, --metric-only`), checked as `pmu stat` checks them.
    check(&StatOptions {
        metric_only: true,
        separator: true,
        repeat: plan.repeat,
        ..StatOptions::default()
    })?;
    let target = target_label(&plan.scope, &plan.command, false);
    let csv = StatLayout::Csv(",".into());
    let stop = AtomicBool::new(false);
    let rows = summary(&measure(&plan, &stop, |_| {})?, &target, &csv);
    let outcome = measure(&plan, &stop, |_| {})?;
    let metrics = metric_only::summary(&outcome, &target, &csv).unwrap_or_default();
    Ok((rows, metrics, outcome.exit_code))
}

/// perf stat's CSV rows with their numbers (the count, the time counted, the derived value)
/// left out: the unit, the event, the share of time counted and the derived value's unit.
pub fn steady(csv: &str) -> String {
    csv.lines()
        .map(|row| {
            let f: Vec<&str> = row.split(',').collect();
            let kept = [1, 2, 4, 6].map(|i| f.get(i).copied().unwrap_or(""));
            kept.join(",") + "\n"
        })
        .collect()
}
