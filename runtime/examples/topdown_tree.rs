//! Counts a simulated Sapphire Rapids's top-down tree to level 2 over a command's run and
//! prints it, each node over its threshold (Intel's metric list) marked `<==`, as this
//! `pmu stat` does:
//!
//! ```text
//! pmu stat --sim --processor sapphire-rapids --td-level 2 -- true
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example topdown_tree`; CI and
//! `runtime/tests/examples.rs` compare its output with that command's. The tree's values are
//! fractions of the simulated workload's slots, so they do not depend on how long the command
//! took.

use std::sync::atomic::AtomicBool;

use pmu_runtime::stat::simulated::{self, SimRequest, SimShow};

/// The tree's depth: level 1 (Frontend_Bound, Bad_Speculation, Backend_Bound, Retiring) and
/// each one's children.
pub const LEVEL: u8 = 2;

/// The command whose run is counted.
pub const COMMAND: [&str; 1] = ["true"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (text, exit_code) = report()?;
    // Where `pmu stat` prints, as perf stat: the command's stdout stays its own.
    eprint!("{text}");
    std::process::exit(exit_code);
}

/// Runs the command while the simulator runs its default workload, and gives the tree as
/// text with the command's exit status.
pub fn report() -> Result<(String, i32), Box<dyn std::error::Error>> {
    let command = COMMAND.map(String::from);
    // The default workload; `interval`, `metric_only` and `separator` as `-I`,
    // `--metric-only` and `-x` set them.
    let request = SimRequest {
        processor: &pmu_regs::sapphire_rapids::PROCESSOR,
        ..SimRequest::new(None, None, SimShow::Tree(LEVEL), &command)?
    };
    // Set it to stop counting early (on Ctrl-C, say); with a command, its end stops it.
    let stop = AtomicBool::new(false);
    Ok(simulated::report(&request, &stop)?)
}
