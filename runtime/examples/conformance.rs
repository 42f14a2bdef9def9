//! The conformance run from a program: the checks `pmu check` makes on the simulated part of
//! a processor (every discovery table joined, one box of every unit counted exactly, a
//! saturating counter counted across its top, everything put back), or with `here` on this
//! machine (its counts through perf against the real `perf stat`), with the part's discovery
//! tables dumped into a directory if one is named, printed as this command prints them:
//!
//! ```text
//! pmu check --sim --processor sapphire-rapids --dump DIR
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example conformance -- sapphire-rapids DIR` (or
//! `-- here`); `runtime/tests/examples.rs` compares its output with that command's.

use std::path::Path;
use std::process::ExitCode;

use pmu_runtime::check::dump::dump_tables;
use pmu_runtime::check::here::on_this_machine;
use pmu_runtime::check::outcome::CheckReport;
use pmu_runtime::check::simulated::on_simulator;
use pmu_runtime::machine::Machine;
use pmu_runtime::quirks::Quirks;

/// The processor checked when none is named.
pub const PROCESSOR: &str = "sapphire-rapids";

/// What names this machine instead of a processor.
pub const HERE: &str = "here";

/// The conformance run on this machine (`target` [`HERE`]) or on the simulated part of
/// processor `target`, every quirk handled; with `dump`, the part's discovery tables saved
/// there (an existing directory).
pub fn report(target: &str, dump: Option<&Path>) -> Result<CheckReport, String> {
    let (mut report, machine) = if target == HERE {
        let root = Path::new("/");
        (on_this_machine(root, "perf"), Machine::hardware(root))
    } else {
        let processor = pmu_regs::PROCESSORS
            .iter()
            .copied()
            .find(|p| p.id == target)
            .ok_or_else(|| format!("no processor {target}: `pmu list --summary` lists them"))?;
        let machine = Machine::simulating(processor);
        let report = on_simulator(&machine, Quirks::ALL).map_err(|e| e.to_string())?;
        (report, machine)
    };
    if let Some(dir) = dump {
        report.rows.extend(dump_tables(&machine, dir));
    }
    Ok(report)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let target = args.next().unwrap_or_else(|| PROCESSOR.into());
    let dump = args.next();
    match report(&target, dump.as_deref().map(Path::new)) {
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
