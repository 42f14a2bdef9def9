//! Lists the events of Ivy Bridge-EP's UBOX, each with its code, umask, the counters that may
//! count it and its filters, and Intel's description where a perfmon file is given, as this
//! `pmu list` does:
//!
//! ```text
//! pmu list --events --processor xeon-e5-2600-v2 --unit UBOX [--perfmon ivytown_uncore.json]
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example list_events [-- PERFMON_FILE]`; CI and
//! `runtime/tests/examples.rs` compare its output with that command's.

use std::path::Path;

use pmu_runtime::perfmon::Descriptions;
use pmu_runtime::report::listing;

/// The processor (a spec id) whose unit is listed.
pub const PROCESSOR: &str = "xeon-e5-2600-v2";
/// The unit whose events are listed.
pub const UNIT: &str = "UBOX";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let perfmon = std::env::args_os().nth(1);
    print!("{}", report(perfmon.as_deref().map(Path::new))?);
    Ok(())
}

/// The unit's events as a table, described from Intel's perfmon file `perfmon` if given.
pub fn report(perfmon: Option<&Path>) -> Result<String, Box<dyn std::error::Error>> {
    let lists = listing::event_lists(Some(PROCESSOR), Some(UNIT))?;
    let descriptions = match perfmon {
        Some(path) => Some(Descriptions::read(path, Some(PROCESSOR))?),
        None => None,
    };
    Ok(listing::events(&lists, descriptions.as_ref(), None, false)?)
}
