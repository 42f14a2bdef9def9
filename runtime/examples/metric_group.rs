//! Counts Ice Lake-SP's memory bandwidth (read, write and total) on its simulated iMC
//! channels for three intervals of 10 ms and prints each as this `pmu watch` does:
//!
//! ```text
//! pmu watch --sim --processor ice-lake-sp --metric memory_bandwidth_read \
//!     --metric memory_bandwidth_write --metric memory_bandwidth_total \
//!     --count 3 --interval 0.01 -x,
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example metric_group`; CI and
//! `runtime/tests/examples.rs` compare its output with that command's.

use std::io::Write;
use std::time::Duration;

use pmu_runtime::constants::PartConstants;
use pmu_runtime::machine::Machine;
use pmu_runtime::metrics::{select, Plan};
use pmu_runtime::report::metric_values::MetricFormat;
use pmu_runtime::session::{Options, Session, SessionBackend};

/// The metrics: a name each, or a group or category that selects several.
pub const METRICS: [&str; 3] = [
    "memory_bandwidth_read",
    "memory_bandwidth_write",
    "memory_bandwidth_total",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    report(&mut std::io::stdout().lock())
}

/// Counts the metrics and writes every interval's values to `out`, as CSV.
pub fn report(out: &mut impl Write) -> Result<(), Box<dyn std::error::Error>> {
    let processor = &pmu_regs::ice_lake_sp::PROCESSOR;
    let machine = Machine::simulating(processor);
    let part = PartConstants::read(&machine, processor, "/".as_ref());
    let plan = Plan::new(
        processor.id,
        &select(processor.id, &METRICS.map(String::from))?,
        &part.constants(),
    )?;
    let backend = SessionBackend::Registers(&machine);
    let period = Duration::from_millis(10);
    let options = Options {
        clock: backend.clock(period),
        ..Options::default()
    };
    let mut session = Session::open(&backend, &plan.selection()?, options)?;
    let series = session.series().to_vec();
    // What `pmu watch` prints, through the calls it prints with: CSV, as `-x,` asks.
    let format = MetricFormat::Csv;
    write!(out, "{}", format.head(&part, false))?;
    for _ in 0..3 {
        std::thread::sleep(period);
        let interval = session.interval()?;
        let values = plan.interval_values(&series, &interval, false, &part.constants());
        write!(out, "{}", format.report(interval.time, &values))?;
    }
    Ok(session.close()?) // every register as it was
}
