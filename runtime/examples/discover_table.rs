//! Reads the uncore discovery table a simulated Sapphire Rapids publishes, joins it with the
//! spec knowing what the part says of itself, and prints a row per box with its status
//! (matching, missing, unknown, disagreeing), as this `pmu discover` does:
//!
//! ```text
//! pmu discover --sim --processor sapphire-rapids
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example discover_table`; CI and
//! `runtime/tests/examples.rs` compare its output with that command's. On hardware,
//! `Machine::hardware("/")` reads the part's own tables the same way.

use pmu_runtime::boxes::Boxes;
use pmu_runtime::machine::Machine;
use pmu_runtime::part::{joined_tables, readable_tables};
use pmu_runtime::report::joined;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    print!("{}", report()?);
    Ok(())
}

/// The joined table as text (`joined::text(.., true)` gives CSV, `joined::json_text` JSON).
pub fn report() -> Result<String, Box<dyn std::error::Error>> {
    let processor = &pmu_regs::sapphire_rapids::PROCESSOR;
    let machine = Machine::simulating(processor);
    // A table per socket, each joined on its own; one that cannot be read is named.
    let tables = readable_tables(joined_tables(&machine, Boxes::of(processor)))?;
    Ok(joined::text(&tables, false))
}
