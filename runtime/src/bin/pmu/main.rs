//! `pmu`: list, decode, encode, read, write and watch Intel and AMD performance-monitoring registers
//! by name.

// Functions read in one sitting: at most 80 lines (clippy.toml), with no `allow`.
#![warn(clippy::too_many_lines)]

mod check;
mod completion;
mod counting;
mod decode;
mod detect;
mod discover;
mod encode;
mod failure;
mod list;
mod messages;
mod perf_cli;
mod place;
mod read;
mod serve;
mod show;
mod stat;
mod watch;
mod watch_metrics;
mod write;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use clap_complete::ArgValueCandidates;
use pmu_runtime::lookup::Pattern;
use pmu_runtime::report::listing;

pub use failure::Failure;
pub use place::PlaceArgs;

/// List, decode, encode, read, write and watch Intel and AMD performance-monitoring registers by name.
///
/// Registers are named as the Intel guides name them (W_MSR_PMON_EVT_SEL2, HA_PCI_PMON_CTL0,
/// IA32_PERFEVTSEL1), in any case, or by MSR number (0x186). Numbers: 0x1f hex, 0d31
/// decimal, 0b11111 binary; a bare number with a hex letter (1f) is hex, as rdmsr prints it; a
/// bare number of two or more plain digits (430076) is refused as ambiguous. Exit status: 0
/// success, 1 the operation failed, 2 the command line was wrong.
#[derive(Parser)]
#[command(
    name = "pmu",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = examples()
)]
pub struct Cli {
    /// Print JSON instead of tables (a stable schema; see the README).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

/// The register `pmu decode` decodes in the examples of `pmu --help`.
const DECODE_EXAMPLE: &str = "W_MSR_PMON_EVT_SEL2";

/// The examples `pmu --help` ends with. The `list` line names the processor and unit of the
/// `decode` line's register, as the spec gives them, so the two describe one register.
fn examples() -> String {
    let list = pmu_runtime::lookup::find(DECODE_EXAMPLE).map_or_else(
        |_| "  pmu list --summary".to_string(),
        |f| {
            format!(
                "  pmu list --processor {} --unit {}",
                f.info.processor, f.info.unit
            )
        },
    );
    format!(
        "Examples:
{list}
  pmu decode {DECODE_EXAMPLE} 0x500f01
  pmu encode IA32_PERFEVTSEL0 ev_sel=0x3c usr=1 en=1
  pmu encode HA_PCI_PMON_CTL0 ev_sel=0x1 umask=0x3 --perf
  pmu read U_MSR_PMON_GLOBAL_CTL --socket 1
  pmu read 0x186 --cpu 0 -f 7:0
  pmu write W_MSR_PMON_EVT_SEL0 ev_sel=0x02 en=1 --dry-run
  pmu watch --sim --unit HA --event event=UNC_H_REQUESTS.READS --count 3 -x,
  pmu watch --backend perf --pmu msr --event tsc --count 3
  pmu completions bash > /etc/bash_completion.d/pmu; pmu man --dir /usr/local/share/man/man1"
    )
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
    #[command(after_help = pmu_runtime::session::words::NUMBER_RULE)]
    Decode(DecodeArgs),
    /// Build a register value from field=value pairs, starting from the reset value.
    ///
    /// Example: pmu encode IA32_PERFEVTSEL0 ev_sel=0x3c usr=1 en=1
    #[command(after_help = pmu_runtime::session::words::NUMBER_RULE)]
    Encode(EncodeArgs),
    /// Read a register and decode it.
    ///
    /// Example: pmu read U_MSR_PMON_GLOBAL_CTL --socket 1
    Read(ReadArgs),
    /// Write a register: a whole value, or field=value pairs applied to its current value.
    ///
    /// Refused while a session (`pmu watch`, `pmu serve`) holds the register's box, naming it:
    /// the session would put its own value back when it ends. The register is read back, and
    /// a warning says which fields did not take.
    ///
    /// Example: pmu write W_MSR_PMON_EVT_SEL0 ev_sel=0x02 en=1 --dry-run
    #[command(after_help = pmu_runtime::session::words::NUMBER_RULE)]
    Write(WriteArgs),
    /// Program counters and print their counts every interval, like `perf stat -I`.
    ///
    /// Example: pmu watch --sim --unit xeon-7500:C3 --event ev_sel=0x01 --event ev_sel=0x02,umask=0x04 --count 3
    Watch(watch::WatchArgs),
    /// Count a command as `perf stat` does (per task, inherited by its children), or the
    /// system, CPUs or processes; perf's options, rows, comments and layouts.
    ///
    /// The counts go to stderr (or -o FILE). Exit status: the command's (128 + N for a
    /// command signal N ended), 127 for a command that does not exist, 2 for a usage error, 1
    /// for a failed count.
    ///
    /// Example: pmu stat -e task-clock,page-faults -r 5 -- ./program
    Stat(stat::StatArgs),
    /// Count on an interval of its own and serve the totals at /metrics (OpenMetrics) for
    /// Prometheus; put everything back on Ctrl-C or SIGTERM.
    ///
    /// Example: pmu serve --sim --unit xeon-e5-2600:IMC0 --event event=UNC_M_CAS_COUNT.RD --listen 127.0.0.1:9464
    Serve(serve::ServeArgs),
    /// Name this machine's processor (from /proc/cpuinfo) and the specs that apply to it.
    ///
    /// Example: pmu detect
    Detect(DetectArgs),
    /// Read the part's uncore discovery table (Sapphire Rapids on) and join it with the spec:
    /// each box matching, missing from the table, unknown to the spec, or disagreeing.
    ///
    /// Example: pmu discover --table dump.bin --processor PROCESSOR --check
    Discover(discover::DiscoverArgs),
    /// A conformance run: does this machine count what the kernel and `perf stat` count?
    /// With --sim, every check against a simulated part whose events are known exactly.
    ///
    /// Prints a table (check, expected, measured, tolerance, verdict) and a verdict line;
    /// exit status 1 when a check fails. Writes nothing but what a session puts back.
    ///
    /// Example: pmu check; pmu check --sim --processor xeon-e5-2600 --no-quirk all
    Check(check::CheckArgs),
    /// Print the script that registers shell completion (bash, zsh, fish, elvish,
    /// powershell): options, and the spec's processor, register, unit and event names, which
    /// the shell asks this binary for as you type.
    ///
    /// Example: pmu completions bash > /etc/bash_completion.d/pmu
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), generated from these definitions; with --dir, write a
    /// page per subcommand too (pmu-watch.1, ...), which the top page refers to.
    ///
    /// Example: pmu man --dir /usr/local/share/man/man1
    Man {
        /// Write pmu.1 and a page per subcommand into this directory (which must exist).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Args)]
struct DetectArgs {
    /// Read ROOT/proc/cpuinfo instead of /proc/cpuinfo.
    #[arg(long)]
    root: Option<PathBuf>,
}

/// Value-only output, for scripts (like rdmsr's -f, -x, -d).
#[derive(Args, Clone)]
pub struct ValueArgs {
    /// Print only this field's value: a field name (ev_sel) or a bit range (15:8, 22).
    #[arg(short = 'f', long = "field", value_name = "FIELD|MSB:LSB")]
    field: Option<String>,
    /// Print only the value in hex, without 0x (as rdmsr does).
    #[arg(short = 'x', long = "hex", conflicts_with = "decimal")]
    hex: bool,
    /// Print only the value in decimal.
    #[arg(short = 'd', long = "decimal")]
    decimal: bool,
}

impl ValueArgs {
    fn wanted(&self) -> bool {
        self.field.is_some() || self.hex || self.decimal
    }
}

#[derive(Args)]
struct ListArgs {
    /// Only the registers and events whose name (or description) this matches, like `perf
    /// list PATTERN`: case-insensitive, `*` and `?` glob, otherwise anywhere in the name
    /// (`pmu list cas_count`).
    #[arg(conflicts_with_all = ["summary", "backends"])]
    pattern: Option<String>,
    /// Only this processor, by the name `pmu list --summary` gives in its first column
    /// (xeon-e5-2600, amd-zen4, ...): that lists every processor the specs have.
    #[arg(long, add = ArgValueCandidates::new(crate::completion::processors))]
    processor: Option<String>,
    /// Only this unit (W, C, HA, QPI, CORE, or its module name such as wbox).
    #[arg(long)]
    unit: Option<String>,
    /// List events instead of registers. COUNTERS: those that may count each event, and in
    /// brackets those an Intel core running one hardware thread adds (`(HT off: 0-7)`, from
    /// Intel's CounterHTOff); SETTINGS: what the event sets besides its select and umask
    /// (counter mask, uncore masks, its auxiliary MSR's value).
    #[arg(long, conflicts_with = "summary")]
    events: bool,
    /// Count registers and events per unit.
    #[arg(long, conflicts_with = "events")]
    summary: bool,
    /// List derived metrics (name, unit, level, scope, groups, description) instead of
    /// registers: what `watch --metric` takes.
    #[arg(long, conflicts_with_all = ["events", "summary", "unit"])]
    metrics: bool,
    /// List the simulator's named workloads (what `--sim --workload NAME` runs).
    #[arg(long, conflicts_with_all = ["events", "summary", "unit", "metrics"])]
    workloads: bool,
    /// With --events: take each event's description from Intel's event list (the JSON files
    /// of github.com/intel/perfmon, e.g. Jaketown_uncore.json). The descriptions go to the
    /// events of the processor the file is of (told by its name, Intel's code name, or by
    /// --processor), never to another processor's events of the same name. The specs carry
    /// event facts only, not Intel's text.
    #[arg(long, value_name = "FILE", requires = "events")]
    perfmon: Option<PathBuf>,
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
    /// Register: an instance (W_MSR_PMON_EVT_SEL2), a layout (W_MSR_PMON_EVT_SEL{N} in any
    /// case, WEvtSel), or an MSR number (0x186).
    #[arg(add = ArgValueCandidates::new(crate::completion::registers))]
    register: String,
    /// The value: 0x430076 hex, 0d31 decimal, 0b101 binary; bare 4300c0 (with a hex letter) is
    /// hex, as rdmsr prints it; bare 430076 (digits only) is refused as ambiguous.
    #[arg(allow_hyphen_values = true)]
    value: String,
    /// The processor whose register a name several processors share means (as for encode).
    #[arg(long, add = ArgValueCandidates::new(crate::completion::processors))]
    processor: Option<String>,
    #[command(flatten)]
    show: ValueArgs,
}

#[derive(Args)]
struct EncodeArgs {
    /// Register: an instance or a layout name.
    #[arg(add = ArgValueCandidates::new(crate::completion::registers))]
    register: String,
    /// field=value pairs; a value is a number or a named value (invert=lt); event=NAME sets
    /// the event select and umask from the unit's event list (and, for a core event, the
    /// counter mask, invert, edge and any-thread bits Intel's list gives it).
    #[arg(required_unless_present = "perf")]
    fields: Vec<String>,
    /// The processor whose own core events event=NAME may name for IA32_PERFEVTSELx
    /// (xeon-e5-2600, ...; by default the one /proc/cpuinfo names), and whose register a
    /// name several processors share means (never guessed from the machine, as in decode).
    #[arg(long, add = ArgValueCandidates::new(crate::completion::processors))]
    processor: Option<String>,
    /// Print the perf event string instead (`uncore_ha/event=0x1,umask=0x3/`), for
    /// `perf stat -e`; the register must be a counter control instance.
    #[arg(long, conflicts_with_all = ["hex", "decimal", "field"])]
    perf: bool,
    #[command(flatten)]
    show: ValueArgs,
    /// The filesystem root (default /): ROOT/proc/cpuinfo names the processor when
    /// --processor does not; with --perf, the PMU's format is read from
    /// ROOT/sys/bus/event_source/devices (the driver's own format is used when it is absent).
    #[arg(long)]
    root: Option<PathBuf>,
}

#[derive(Args)]
struct ReadArgs {
    /// Register instance (W_MSR_PMON_EVT_SEL2, Q_P0_PCI_PMON_CTL1) or MSR number (0x186).
    #[arg(add = ArgValueCandidates::new(crate::completion::registers))]
    register: String,
    /// Read it everywhere: on every CPU (core registers) or every socket (uncore registers).
    #[arg(short = 'a', long = "all", conflicts_with_all = ["cpu", "socket", "device"])]
    all: bool,
    #[command(flatten)]
    show: ValueArgs,
    #[command(flatten)]
    place: PlaceArgs,
}

#[derive(Args)]
struct WriteArgs {
    /// Register instance, or MSR number (0x186).
    #[arg(add = ArgValueCandidates::new(crate::completion::registers))]
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

/// `pmu list`, by what it lists: metrics, backends, events, registers matching a pattern, a
/// summary, or registers.
fn list(a: ListArgs, json_out: bool) -> Result<String, Failure> {
    match a {
        a if a.workloads => Ok(pmu_runtime::machine::list_workloads(json_out)),
        a if a.metrics => Ok(listing::metrics(
            a.processor.as_deref(),
            a.pattern.as_deref().map(Pattern::new).as_ref(),
            json_out,
        )?),
        a if a.backends => Ok(listing::backends(
            a.root.as_deref().unwrap_or("/".as_ref()),
            &perf_cli::sources(a.root.as_deref()),
            json_out,
        )),
        a if a.events => list::events(
            a.processor.as_deref(),
            a.unit.as_deref(),
            a.perfmon.as_deref(),
            a.pattern.as_deref().map(Pattern::new).as_ref(),
            json_out,
        ),
        ListArgs {
            pattern: Some(p),
            summary: false,
            backends: false,
            processor,
            unit,
            ..
        } => list::search(
            processor.as_deref(),
            unit.as_deref(),
            &Pattern::new(&p),
            &p,
            json_out,
        ),
        a if a.summary => Ok(listing::summary(
            a.processor.as_deref(),
            a.unit.as_deref(),
            json_out,
        )?),
        a => Ok(listing::registers(
            a.processor.as_deref(),
            a.unit.as_deref(),
            None,
            json_out,
        )?),
    }
}

fn main() -> ExitCode {
    // The shell asking for completions (`PMU_COMPLETE=bash pmu -- ...`) is answered first.
    completion::answer_if_asked();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with status 0, usage errors with 2, in
            // the same `error: ` style as the tool's own messages.
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    let json = cli.json;
    let result = match cli.command {
        // The measured command's exit status is stat's own.
        Command::Stat(a) => return stat::run(&a, json),
        Command::List(a) => list(a, json),
        Command::Decode(a) => {
            decode::decode(&a.register, &a.value, a.processor.as_deref(), &a.show, json)
        }
        Command::Encode(a) if a.perf => perf_cli::encode(
            &a.register,
            &a.fields,
            (a.processor.as_deref(), a.root.as_deref()),
            json,
        ),
        Command::Encode(a) => encode::encode(
            &a.register,
            &a.fields,
            (a.processor.as_deref(), a.root.as_deref()),
            &a.show,
            json,
        ),
        Command::Read(a) => read::read(&a.register, a.all, &a.show, &a.place, json)
            .map_err(|e| explain(e, &a.register, &a.place)),
        Command::Write(a) => write::write(&a.register, &a.values, a.dry_run, &a.place, json)
            .map_err(|e| explain(e, &a.register, &a.place)),
        Command::Serve(a) => serve::run(&a),
        Command::Watch(a) if !a.metric.is_empty() => {
            watch_metrics::run(&a, json).map_err(|e| messages::explain(e, &a.place, &[]))
        }
        Command::Watch(a) => watch::run(&a, json).map_err(|e| {
            // The devices of the boxes asked for, to name in a "not found" message.
            let addresses: Vec<&pmu_regs::AddressInfo> = a
                .unit
                .iter()
                .filter_map(|u| pmu_runtime::session::find_box(u, None).ok())
                .flat_map(|(_, b)| b.counters.iter().map(|c| c.counter.addr))
                .collect();
            messages::explain(e, &a.place, &messages::device_ids(addresses))
        }),
        Command::Detect(a) => detect::run(a.root.as_deref(), json),
        Command::Discover(a) => discover::run(&a, json),
        Command::Check(a) => check::run(&a, json),
        Command::Completions { shell } => completion::registration(shell),
        Command::Man { dir: None } => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(Cli::command())
                .render(&mut buf)
                .map_err(|e| Failure::operation(format!("cannot render the man page: {e}")))
                .map(|()| String::from_utf8_lossy(&buf).into_owned())
        }
        Command::Man { dir: Some(dir) } => man_pages(&dir),
    };
    finish(result)
}

/// Writes a command's output to stdout, or its failure to stderr, and gives the exit status.
fn finish(result: Result<String, Failure>) -> ExitCode {
    match result {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(out.as_bytes())
                .and_then(|()| stdout.flush())
            {
                // A reader that went away (`pmu list --json | head`) is a normal end.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    eprint_error(&format!("cannot write the output: {e}"));
                    ExitCode::from(1)
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(e) => {
            eprint_error(&e.to_string());
            ExitCode::from(e.exit_code())
        }
    }
}

/// `pmu man --dir DIR`: every page, written beside DIR's files first and then renamed into
/// place, so a failure leaves no half-written set; prints the pages written.
fn man_pages(dir: &std::path::Path) -> Result<String, Failure> {
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "--dir {}: no such directory; create it first (mkdir -p {})",
            dir.display(),
            dir.display()
        )));
    }
    let staging = dir.join(format!(".pmu-man.{}", std::process::id()));
    let written = std::fs::create_dir(&staging)
        .and_then(|()| clap_mangen::generate_to(Cli::command(), &staging))
        .and_then(|()| {
            let mut pages = Vec::new();
            for entry in std::fs::read_dir(&staging)? {
                let entry = entry?;
                pages.push(entry.file_name());
            }
            pages.sort();
            for page in &pages {
                std::fs::rename(staging.join(page), dir.join(page))?;
            }
            Ok(pages)
        });
    let _ = std::fs::remove_dir_all(&staging);
    match written {
        Ok(pages) => Ok(pages
            .iter()
            .map(|p| format!("{}\n", dir.join(p).display()))
            .collect()),
        Err(e) => Err(Failure::operation(format!(
            "cannot write the man pages into {}: {e}; choose a directory you can write",
            dir.display()
        ))),
    }
}

/// A read or write failure told for where it ran (see `messages`).
fn explain(e: Failure, register: &str, place: &PlaceArgs) -> Failure {
    let addresses = match pmu_runtime::lookup::find(register.trim()) {
        Ok(f) => f
            .address
            .map_or(f.info.known_addresses(), std::slice::from_ref),
        Err(_) => &[],
    };
    messages::explain(e, place, &messages::device_ids(addresses))
}

/// `error: ...` on stderr, as clap writes its own errors; a closed stderr is ignored.
pub fn eprint_error(message: &str) {
    let _ = writeln!(std::io::stderr(), "error: {message}");
}

/// `warning: ...` on stderr.
pub fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "warning: {message}");
}

/// Each box a session programmed although the part's discovery table disagreed with the
/// spec (`--allow-mismatch`), as a warning on stderr.
pub fn warn_mismatches(session: &pmu_runtime::session::Session<'_>) {
    for w in session.warnings() {
        warn(&format!("discovery table: {w}"));
    }
}
