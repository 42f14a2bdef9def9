//! Counts a command with perf's default events, as `pmu stat` does, and prints the counts as
//! perf stat -x, prints them, then the derived metrics alone as perf stat -x, --metric-only
//! prints them:
//!
//! ```text
//! pmu stat -x, -- true
//! pmu stat -x, --metric-only -- true
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example stat_command`;
//! `runtime/tests/examples.rs` compares its rows and columns with those commands'.

use std::sync::atomic::AtomicBool;

use pmu_runtime::stat::report::{summary, target_label, StatLayout};
use pmu_runtime::stat::run::{measure, StatPlan, StatScope};
use pmu_runtime::stat::{events, metric_only, StatError};

/// The command counted.
pub const COMMAND: [&str; 1] = ["true"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (rows, metrics, exit_code) = report()?;
    // Where `pmu stat` prints, as perf stat: the command's stdout stays its own.
    eprint!("{rows}{metrics}");
    std::process::exit(exit_code);
}

/// Runs the command twice (the counts, then the metrics alone), each as CSV, with the last
/// run's exit status.
pub fn report() -> Result<(String, String, i32), StatError> {
    let plan = StatPlan {
        events: events::default_events(false),
        scope: StatScope::Command,
        command: COMMAND.map(String::from).to_vec(),
        repeat: 1,
        interval: None,
        interval_count: None,
        aggr: Default::default(),
        delay: None,
    };
    let target = target_label(&plan.scope, &plan.command, false);
    let csv = StatLayout::Csv(",".into());
    // Set it to stop counting early (on Ctrl-C, say); with a command, its end stops it.
    let stop = AtomicBool::new(false);
    let rows = summary(&measure(&plan, &stop, |_| {})?, &target, &csv);
    let outcome = measure(&plan, &stop, |_| {})?;
    let metrics = metric_only::summary(&outcome, &target, &csv).unwrap_or_default();
    Ok((rows, metrics, outcome.exit_code))
}
