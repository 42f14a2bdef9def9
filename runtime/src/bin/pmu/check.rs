//! `pmu check`: the conformance run ([`pmu_runtime::check`]), printed as a table and a
//! verdict line (or JSON); exit status 1 when a check fails. Also `--no-quirk`, which
//! `watch` shares.

use std::path::Path;

use clap::Args;
use pmu_runtime::check::{here, simulated};
use pmu_runtime::quirks::Quirks;

use crate::place::PlaceArgs;
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
    #[command(flatten)]
    place: PlaceArgs,
}

/// `pmu check`.
pub fn run(a: &CheckArgs, json_out: bool) -> Result<String, Failure> {
    let quirks = a.quirks.quirks()?;
    let report = if a.place.sim {
        let id = crate::detect::processor_named(a.processor.as_deref())?.ok_or_else(|| {
            Failure::usage("name the simulated part: --processor ID (pmu list --summary)".into())
        })?;
        let processor = pmu_regs::PROCESSORS
            .iter()
            .copied()
            .find(|p| p.id == id)
            .expect("processor_named returns a known id");
        simulated::on_simulator(&a.place.machine_for(processor)?, quirks)?
    } else {
        let root = a.place.root.as_deref().unwrap_or(Path::new("/"));
        here::on_this_machine(root, &a.perf)
    };
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
