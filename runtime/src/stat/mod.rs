//! `perf stat` as a library: count a command (or the system, CPUs or running tasks) with
//! perf's event language or perf's default events, and give the rows perf prints, with
//! their derived comments and, over several runs, their spread.
//!
//! - [`events`]: the `-e` list resolved, or perf's default set;
//! - [`run`]: the counters opened per task (inherited by the command's children, switched
//!   by the kernel with them; see [`crate::perf::task`]) or per CPU, the command run with
//!   this process's terminal, its exit status as a shell reports it, `-r` and `-I`;
//! - [`aggr`]: counts summed, per CPU (`-A`) or per socket (`--per-socket`);
//! - [`rows`]: counts, units, perf's comments and spreads;
//! - [`report`]: perf's text, CSV and JSON layouts;
//! - [`metric_only`]: `--metric-only`'s columns of the derived metrics, after the runs or a
//!   line per interval;
//! - [`options`]: the one check of which options go together, and of `-I`'s and `-r`'s values;
//! - [`sim`] and [`views`]: a metric plan counted on the simulator over a command's run, shown
//!   as the top-down tree (`--td-level`, nodes over Intel's thresholds marked) or a view
//!   across units (`--view memory`), for the whole run or every interval; [`simulated`]: a
//!   `pmu stat --sim` request counted and worded in one call.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use pmu_runtime::stat::{events, report, run};
//!
//! let plan = run::StatPlan::command(events::default_events(false), ["sleep", "0.2"]);
//! let outcome = run::measure(&plan, &AtomicBool::new(false), |_| {})?;
//! let target = report::target_label(&plan.scope, &plan.command, false);
//! eprint!("{}", report::summary(&outcome, &target, &report::StatLayout::Text));
//! std::process::exit(outcome.exit_code);
//! # Ok::<(), pmu_runtime::stat::StatError>(())
//! ```

use std::io;

use crate::perf::PerfError;

pub mod aggr;
pub mod events;
pub mod metric_only;
pub mod options;
pub mod report;
pub mod rows;
pub mod run;
pub mod signals;
#[cfg(feature = "json")]
pub mod sim;
#[cfg(feature = "json")]
pub mod simulated;
#[cfg(feature = "json")]
pub mod views;

/// Why a measurement could not be made.
#[derive(Debug)]
pub enum StatError {
    /// The request cannot be done as asked.
    Usage(String),
    /// The command could not be started.
    Spawn {
        /// The program.
        command: String,
        /// Why.
        source: io::Error,
    },
    /// A counter could not be opened.
    Open(PerfError),
    /// Reading a counter or waiting for the command failed.
    Read(io::Error),
}

impl StatError {
    /// The exit status: 2 for a usage error, 127 for a command that does not exist and 126
    /// for one that cannot be run (as a shell), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            StatError::Usage(_) => 2,
            StatError::Spawn { source, .. } if source.kind() == io::ErrorKind::NotFound => 127,
            StatError::Spawn { .. } => 126,
            StatError::Open(_) | StatError::Read(_) => 1,
        }
    }
}

impl std::fmt::Display for StatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatError::Usage(m) => f.write_str(m),
            StatError::Spawn { command, source } if source.kind() == io::ErrorKind::NotFound => {
                write!(
                    f,
                    "cannot run `{command}`: no such program ({source}); check its name, or \
                     give its path; nothing was counted"
                )
            }
            StatError::Spawn { command, source } => write!(
                f,
                "cannot run `{command}`: {source}; check that it is an executable file; \
                 nothing was counted"
            ),
            StatError::Open(e) => e.fmt(f),
            StatError::Read(e) => write!(f, "reading the counters failed: {e}"),
        }
    }
}

impl std::error::Error for StatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StatError::Spawn { source, .. } | StatError::Read(source) => Some(source),
            StatError::Open(e) => Some(e),
            StatError::Usage(_) => None,
        }
    }
}
