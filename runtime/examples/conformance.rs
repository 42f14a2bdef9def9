//! The conformance run from a program: the checks `pmu check` makes on the simulated part of
//! a processor (every discovery table joined, one box of every unit counted exactly, a
//! saturating counter counted across its top, everything put back), printed as this command
//! prints them:
//!
//! ```text
//! pmu check --sim --processor sapphire-rapids
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example conformance -- sapphire-rapids`;
//! `runtime/tests/examples.rs` compares its output with that command's. On a real machine a
//! program calls `check::here::on_this_machine` the same way.

use std::process::ExitCode;

use pmu_runtime::check::outcome::CheckReport;
use pmu_runtime::check::simulated::on_simulator;
use pmu_runtime::machine::Machine;
use pmu_runtime::quirks::Quirks;

/// The processor checked when none is named.
pub const PROCESSOR: &str = "sapphire-rapids";

/// The conformance run on the simulated part of processor `id`, every quirk handled.
pub fn report(id: &str) -> Result<CheckReport, String> {
    let processor = pmu_regs::PROCESSORS
        .iter()
        .copied()
        .find(|p| p.id == id)
        .ok_or_else(|| format!("no processor {id}: `pmu list --summary` lists them"))?;
    on_simulator(&Machine::simulating(processor), Quirks::ALL).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let id = std::env::args().nth(1).unwrap_or_else(|| PROCESSOR.into());
    match report(&id) {
        Ok(r) => {
            print!("{}", r.text());
            if r.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
