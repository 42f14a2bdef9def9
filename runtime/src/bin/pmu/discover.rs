//! `pmu discover`: the part's uncore discovery table against the spec.

use std::path::{Path, PathBuf};

use clap::Args;
use pmu_runtime::boxes::Boxes;
use pmu_runtime::discovery::{
    join, processors_with_a_table, read_dump, DiscoveryError, Joined, DISCOVERY_DEVICE_ID,
};
use pmu_runtime::lookup::processor;
use pmu_runtime::machine::Machine;
use pmu_runtime::part::{domain_init_text, joined_tables, readable_tables, JoinedTable};
use pmu_runtime::report::joined::{json_text, text};
use pmu_runtime::Bdf;

use crate::Failure;

/// The device a dumped table is taken to come from (it locates nothing: a dump is read from
/// its first byte).
const DUMP_DEVICE: Bdf = Bdf::new(0x7e, 0, 1);

#[derive(Args)]
pub struct DiscoverArgs {
    /// The spec to join the table with (an id or module, e.g. sapphire-rapids).
    #[arg(long)]
    processor: Option<String>,
    /// Read the table the simulator publishes for the processor (built from its spec).
    #[arg(long, conflicts_with = "table")]
    sim: bool,
    /// Read a table dumped to FILE (its raw bytes, from its first byte).
    #[arg(long, value_name = "FILE")]
    table: Option<PathBuf>,
    /// Print comma-separated values instead of a table.
    #[arg(long)]
    csv: bool,
    /// Exit with status 1 unless every box matches the spec.
    #[arg(long)]
    check: bool,
    /// Read the machine under ROOT instead of / (its discovery devices under
    /// ROOT/sys/bus/pci/devices, their tables in ROOT/dev/mem).
    #[arg(long)]
    root: Option<PathBuf>,
}

/// `pmu discover`.
pub fn run(a: &DiscoverArgs, json_out: bool) -> Result<String, Failure> {
    let processor = processor(a.processor.as_deref().ok_or_else(|| {
        Failure::usage(
            "name the spec to join the table with: --processor ID (pmu list --summary lists them)"
                .into(),
        )
    })?)?;
    let id = processor.id;
    let boxes = Boxes::of(processor);
    let tables: Vec<(u32, Joined)> = if let Some(path) = &a.table {
        let table = read_dump(path, DUMP_DEVICE).map_err(discovery_failure)?;
        vec![(0, join(boxes, &table))]
    } else if a.sim && !processor.discovery_domains.is_empty() {
        let joined = pmu_runtime::part::joined_domains(processor, &Machine::simulating(processor));
        pmu_runtime::discovery::readable_domains(joined).map_err(discovery_failure)?
    } else if a.sim {
        let machine = Machine::simulating(processor);
        let tables = joined_tables(&machine, boxes);
        if tables.is_empty() {
            return Err(Failure::usage(format!(
                "no unit of {id} has a discovery type (<pmu discovery-type>), so its simulated \
                 part publishes no discovery table; the spec gives one to {} only",
                processors_with_a_table()
            )));
        }
        readable(tables)?
    } else {
        hardware(a.root.as_deref(), boxes)?
    };
    let out = if json_out {
        json_text(&tables)
    } else {
        let sim = a.sim.then(|| Machine::simulating(processor));
        text(&tables, a.csv) + &sim.map_or_else(String::new, |m| domain_init_text(processor, &m))
    };
    let all = tables.iter().flat_map(|(_, j)| &j.boxes);
    let bad = all.clone().filter(|b| !b.status.is_trusted()).count();
    if a.check && bad > 0 {
        print!("{out}");
        return Err(Failure::operation(format!(
            "{bad} of {} boxes do not match the spec",
            all.count()
        )));
    }
    Ok(out)
}

fn discovery_failure(e: DiscoveryError) -> Failure {
    Failure::operation(e.to_string())
}

/// On hardware: every discovery device's table (one per socket), read in place through
/// `dev/mem` and joined knowing what the part says of itself; where none is found, or one
/// cannot be read, what was found and why.
fn hardware(root: Option<&Path>, boxes: &'static Boxes) -> Result<Vec<(u32, Joined)>, Failure> {
    let root = root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let machine = Machine::hardware(&root);
    let tables = joined_tables(&machine, boxes);
    if tables.is_empty() {
        return Err(Failure::operation(format!(
            "no uncore discovery device (8086:{DISCOVERY_DEVICE_ID:04x}) under {}: this part \
             has no discovery table (the spec gives one to {} only; virtual machines show \
             none); --sim reads the simulated part's",
            root.join("sys/bus/pci/devices").display(),
            processors_with_a_table()
        )));
    }
    readable(tables)
}

/// The joins of tables that were read; any table that could not be read fails the command,
/// naming each device and why.
fn readable(tables: Vec<JoinedTable>) -> Result<Vec<(u32, Joined)>, Failure> {
    readable_tables(tables).map_err(|e| {
        Failure::operation(format!(
            "{e}; a table dumped to a file is read with --table FILE"
        ))
    })
}
