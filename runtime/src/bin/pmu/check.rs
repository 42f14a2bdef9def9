//! `pmu check`: the conformance run ([`pmu_runtime::check`]), printed as a table and a
//! verdict line (or JSON); exit status 1 when a check fails. Also `--no-quirk`, which
//! `watch` shares.

use std::path::{Path, PathBuf};

use clap::Args;
use pmu_runtime::check::simulated::Injected;
use pmu_runtime::check::{dump, here, simulated};
use pmu_runtime::machine::Machine;
use pmu_runtime::quirks::Quirks;

use crate::Failure;

/// `--no-quirk NAME`: turn off the runtime's handling of one of the spec's hardware quirks.
#[derive(Args, Clone, Default)]
pub struct QuirkArgs {
    /// Leave a hardware quirk the spec records unhandled, to see what the part does without
    /// the runtime's correction: global-init (a part that powers up frozen counts 0),
    /// saturation (a saturating counter's delta stops at its top), or all. Repeatable.
    #[arg(long = "no-quirk", value_name = "NAME")]
    pub no_quirk: Vec<String>,
}

impl QuirkArgs {
    /// The quirks handled.
    pub fn quirks(&self) -> Result<Quirks, Failure> {
        Quirks::without(&self.no_quirk).map_err(|e| Failure::usage(e.to_string()))
    }
}

#[derive(Args)]
pub struct CheckArgs {
    /// With --sim: the processor whose simulated part is checked (pmu list --summary).
    #[arg(long, requires = "sim", add = clap_complete::ArgValueCandidates::new(crate::completion::processors))]
    processor: Option<String>,
    /// The `perf` program to compare with (default: perf on the PATH).
    #[arg(
        long,
        value_name = "PROGRAM",
        default_value = "perf",
        conflicts_with = "sim"
    )]
    perf: String,
    #[command(flatten)]
    quirks: QuirkArgs,
    /// Check the simulated part of --processor instead of this machine.
    #[arg(long, conflicts_with = "root")]
    sim: bool,
    /// With --sim: fail one register access (read:N:KIND, write:N:KIND or
    /// writes-from:N:KIND, KIND one of eio, eacces, enoent, short), the Nth read of a
    /// perf group (perf-read:N:KIND), or make a box count nothing (broken:BOX) or keep its
    /// counts when reset (no-reset:BOX), to see the run name it.
    #[arg(long, value_name = "OP:N:KIND", requires = "sim")]
    inject_fault: Option<String>,
    /// Read the machine under ROOT instead of / (its /proc and discovery devices).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Save each discovery table the part publishes to DIR/discovery-socketN.bin, to send
    /// with a bug report (`pmu discover --table FILE` replays it). DIR must exist.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
}

/// `pmu check`.
pub fn run(a: &CheckArgs, json_out: bool) -> Result<String, Failure> {
    let quirks = a.quirks.quirks()?;
    if let Some(dir) = a.dump.as_deref().filter(|d| !d.is_dir()) {
        return Err(Failure::usage(format!(
            "--dump {}: no such directory; create it first (mkdir -p {})",
            dir.display(),
            dir.display()
        )));
    }
    let root = a.root.as_deref().unwrap_or(Path::new("/"));
    let (mut report, machine) = if a.sim {
        let id = crate::detect::processor_named(a.processor.as_deref())?.ok_or_else(|| {
            Failure::usage("name the simulated part: --processor ID (pmu list --summary)".into())
        })?;
        let processor = pmu_regs::PROCESSORS
            .iter()
            .copied()
            .find(|p| p.id == id)
            .expect("processor_named returns a known id");
        let injected = a
            .inject_fault
            .as_deref()
            .map(|t| Injected::parse(processor, t))
            .transpose()?;
        let (machine, perf_fault) = Injected::machine(injected, processor);
        let report = simulated::on_simulator_with(&machine, quirks, perf_fault)?;
        (report, machine)
    } else {
        (
            here::on_this_machine(root, &a.perf),
            Machine::hardware(root),
        )
    };
    if let Some(dir) = &a.dump {
        report.rows.extend(dump::dump_tables(&machine, dir));
    }
    let out = if json_out {
        report.json()
    } else {
        report.text()
    };
    if report.passed() {
        return Ok(out);
    }
    print!("{out}");
    Err(Failure::operation(report.verdict_line()))
}
