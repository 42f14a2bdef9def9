//! `pmu`: list, decode, encode, read, write and watch Intel performance-monitoring registers
//! by name.

mod commands;
mod perf_cli;
mod table;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use pmu_runtime::fault;
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::sim::SimConfig;
use pmu_runtime::{Bdf, Error, UsageError};

/// List, decode, encode, read, write and watch Intel performance-monitoring registers by name.
///
/// Registers are named as the Intel guides name them (W_MSR_PMON_EVT_SEL2, HA_PCI_PMON_CTL0,
/// IA32_PERFEVTSEL1), in any case. Exit status: 0 success, 1 the operation failed, 2 the
/// command line was wrong.
#[derive(Parser)]
#[command(
    name = "pmu",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = "Examples:
  pmu list --processor xeon-7500 --unit W
  pmu decode W_MSR_PMON_EVT_SEL2 0x500f01
  pmu encode IA32_PERFEVTSEL0 ev_sel=0x3c usr=1 en=1
  pmu encode HA_PCI_PMON_CTL0 ev_sel=0x1 umask=0x3 --perf
  pmu read U_MSR_PMON_GLOBAL_CTL --socket 1
  pmu write W_MSR_PMON_EVT_SEL0 ev_sel=0x02 en=1 --dry-run
  pmu watch --sim --unit C3 --event ev_sel=0x01 --count 3
  pmu watch --backend perf --pmu msr --event tsc --count 3"
)]
pub struct Cli {
    /// Print JSON instead of tables (a stable schema; see the README).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List registers (processor, unit, instance, address, width), events, or a summary.
    ///
    /// Example: pmu list --processor xeon-7500 --unit W; pmu list --events --unit HA; pmu list --summary
    List(ListArgs),
    /// Split a value into the register's fields, with their meanings.
    ///
    /// Example: pmu decode W_MSR_PMON_EVT_SEL2 0x500f01
    Decode(DecodeArgs),
    /// Build a register value from field=value pairs, starting from the reset value.
    ///
    /// Example: pmu encode IA32_PERFEVTSEL0 ev_sel=0x3c usr=1 en=1
    Encode(EncodeArgs),
    /// Read a register and decode it.
    ///
    /// Example: pmu read U_MSR_PMON_GLOBAL_CTL --socket 1
    Read(ReadArgs),
    /// Write a register: a whole value, or field=value pairs applied to its current value.
    ///
    /// Example: pmu write W_MSR_PMON_EVT_SEL0 ev_sel=0x02 en=1 --dry-run
    Write(WriteArgs),
    /// Program counters and print their counts every interval, like `perf stat -I`.
    ///
    /// Example: pmu watch --sim --unit C3 --event ev_sel=0x01 --event ev_sel=0x02,umask=0x04 --count 3
    Watch(watch::WatchArgs),
}

#[derive(Args)]
struct ListArgs {
    /// Only this processor (xeon-7500, xeon-e5-2600, architectural).
    #[arg(long)]
    processor: Option<String>,
    /// Only this unit (W, C, HA, QPI, CORE, or its module name such as wbox).
    #[arg(long)]
    unit: Option<String>,
    /// List events instead of registers.
    #[arg(long, conflicts_with = "summary")]
    events: bool,
    /// Count registers and events per unit.
    #[arg(long, conflicts_with = "events")]
    summary: bool,
    /// For every box: its kernel perf PMU, and whether perf and the raw backends reach it on
    /// this machine (and so which `watch --backend auto` uses).
    #[arg(long, conflicts_with_all = ["events", "summary"])]
    backends: bool,
    /// With --backends: the filesystem root to look under (ROOT/sys/bus/event_source/devices,
    /// ROOT/dev/cpu, ROOT/sys/bus/pci/devices).
    #[arg(long, requires = "backends")]
    root: Option<PathBuf>,
}

#[derive(Args)]
struct DecodeArgs {
    /// Register: an instance (W_MSR_PMON_EVT_SEL2) or a layout (W_MSR_PMON_EVT_SEL{n}, WEvtSel).
    register: String,
    /// The value: hex (0x...), decimal or binary (0b...).
    value: String,
}

#[derive(Args)]
struct EncodeArgs {
    /// Register: an instance or a layout name.
    register: String,
    /// field=value pairs; a value is a number or a named value (invert=lt); event=NAME sets
    /// the event select and umask from the unit's event list.
    #[arg(required = true)]
    fields: Vec<String>,
    /// Print the perf event string instead (`uncore_ha/event=0x1,umask=0x3/`), for
    /// `perf stat -e`; the register must be a counter control instance.
    #[arg(long)]
    perf: bool,
    /// With --perf: read the PMU's format from ROOT/sys/bus/event_source/devices (default /;
    /// the driver's own format is used when the PMU is absent).
    #[arg(long, requires = "perf")]
    root: Option<PathBuf>,
}

/// Where to reach the hardware.
#[derive(Args, Clone)]
pub struct PlaceArgs {
    /// The logical CPU for an MSR (default: 0, or the first CPU of --socket).
    #[arg(long, conflicts_with = "device")]
    cpu: Option<u32>,
    /// The socket: picks a CPU of it for MSRs, or its uncore device for PCI registers.
    #[arg(long)]
    socket: Option<u32>,
    /// The PCI device (e.g. 0000:3f:0e.1) for a PCI register.
    #[arg(long)]
    device: Option<String>,
    /// Use this directory as the filesystem root: ROOT/dev/cpu/N/msr,
    /// ROOT/sys/bus/pci/devices, ROOT/sys/devices/system/cpu.
    #[arg(long, conflicts_with = "sim")]
    root: Option<PathBuf>,
    /// Use the simulated PMU instead of hardware (a fresh one each run).
    #[arg(long)]
    sim: bool,
    /// Fail one register access (without performing it) to see how a command copes:
    /// read:N:KIND, write:N:KIND or writes-from:N:KIND, KIND one of eio, eacces, enoent,
    /// short. N counts reads or writes from 1.
    #[arg(long, value_name = "OP:N:KIND", hide_short_help = true)]
    inject_fault: Option<String>,
}

impl PlaceArgs {
    /// The machine these options name: `--sim`, or the hardware under `--root` (default `/`),
    /// with `--inject-fault` applied.
    fn machine(&self) -> Result<Machine, Error> {
        let machine = if self.sim {
            Machine::simulated(SimConfig::default())
        } else {
            Machine::hardware(self.root.clone().unwrap_or_else(|| PathBuf::from("/")))
        };
        Ok(match &self.inject_fault {
            Some(text) => {
                let (when, fault) = fault::parse(text)?;
                machine.with_fault(when, fault)
            }
            None => machine,
        })
    }

    /// Where `--cpu`, `--socket` and `--device` say a register is.
    fn at(&self) -> Result<Where, Error> {
        let device = match &self.device {
            Some(d) => Some(d.parse::<Bdf>().map_err(|e| UsageError::BadValue {
                text: d.clone(),
                expected: e.to_string(),
            })?),
            None => None,
        };
        Ok(Where {
            cpu: self.cpu,
            socket: self.socket,
            device,
        })
    }
}

#[derive(Args)]
struct ReadArgs {
    /// Register instance (W_MSR_PMON_EVT_SEL2, Q_P0_PCI_PMON_CTL1).
    register: String,
    #[command(flatten)]
    place: PlaceArgs,
}

#[derive(Args)]
struct WriteArgs {
    /// Register instance.
    register: String,
    /// A whole value (0x...), or field=value pairs applied to the current value.
    #[arg(required = true)]
    values: Vec<String>,
    /// Show what would be written, and write nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    place: PlaceArgs,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with status 0, usage errors with 2.
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    let json = cli.json;
    let result = match cli.command {
        Command::List(a) if a.backends => perf_cli::list_backends(a.root.as_deref(), json),
        Command::List(a) if a.events => {
            commands::list_events(a.processor.as_deref(), a.unit.as_deref(), json)
        }
        Command::List(a) if a.summary => {
            commands::list_summary(a.processor.as_deref(), a.unit.as_deref(), json)
        }
        Command::List(a) => commands::list(a.processor.as_deref(), a.unit.as_deref(), json),
        Command::Decode(a) => commands::decode(&a.register, &a.value, json),
        Command::Encode(a) if a.perf => {
            perf_cli::encode(&a.register, &a.fields, a.root.as_deref(), json)
        }
        Command::Encode(a) => commands::encode(&a.register, &a.fields, json),
        Command::Read(a) => commands::read(&a.register, &a.place, json),
        Command::Write(a) => commands::write(&a.register, &a.values, a.dry_run, &a.place, json),
        Command::Watch(a) => watch::run(&a, json),
    };
    match result {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pmu: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// A failed command: usage errors (a name or value the user got wrong) exit 2, operation
/// failures 1.
pub struct Failure {
    error: pmu_runtime::Error,
}

impl Failure {
    fn exit_code(&self) -> u8 {
        if self.error.is_usage() {
            2
        } else {
            1
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl<E: Into<pmu_runtime::Error>> From<E> for Failure {
    fn from(error: E) -> Self {
        Self {
            error: error.into(),
        }
    }
}
