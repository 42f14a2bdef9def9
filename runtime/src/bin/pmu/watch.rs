//! `pmu watch`: program counters, print their counts every interval, and put everything back
//! as it was on exit (including Ctrl-C, SIGTERM and a panic). The counting is the library's
//! [`Session`]: this parses the arguments, opens it, and prints each interval.

use clap_complete::ArgValueCandidates;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use pmu_runtime::report::counts::{Format, Grouping, Output, Rows};
use pmu_runtime::session::{Interval, Options, Session, Sockets};

use crate::counting::{check_interval, close_after, Asked};
use crate::failure::Failure;
use crate::perf_cli::PerfWatchArgs;
use crate::place::PlaceArgs;

#[derive(Args)]
pub struct WatchArgs {
    /// The box: an instance (C3, CH2, HA, P0), a unit with the instance's position (CBO3,
    /// IMC2, QPI1) or a one-box unit (PCU, CORE); prefix the processor where two share the
    /// name (xeon-7500:C3). `pmu list --summary` lists the units. Repeat for more boxes
    /// (--unit CBO0 --unit CBO1); the first box's processor settles the others' names
    /// (--unit xeon-7500:C3 --unit C4).
    /// Without --unit, --event takes perf's events instead.
    #[arg(long, conflicts_with = "metric", add = ArgValueCandidates::new(crate::completion::units))]
    pub unit: Vec<String>,
    /// With --unit: an event for the next free counter of each box, in encode's grammar:
    /// event=NAME (from `pmu list --events`; a bare NAME too) or ev_sel=N, then optionally ,umask=N ,thresh=N
    /// ,invert=lt|ge|0|1 ,edge=1 ,ext=1 (the event-select extension bit) ,any=1 (a core
    /// control's any-thread bit) ,umask_ext=N ,ch_mask=N ,fc_mask=N (uncore masks; a named
    /// event sets its own, and its auxiliary MSR). Repeat for more events; more than a box has
    /// counters take turns on them (10 ms each), scaled, with a running column. Without --unit: events as `perf
    /// stat -e` takes them, counted through perf: PMU/TERMS/ (msr/tsc/, cpu/event=0x3c/u),
    /// generic names (cycles, instructions, cpu-clock, task-clock, with :u or :k) and a PMU's
    /// named events (tsc), comma-separated.
    #[arg(
        short = 'e',
        long = "event",
        required_unless_present = "metric",
        conflicts_with = "metric",
        add = ArgValueCandidates::new(crate::completion::events)
    )]
    events: Vec<String>,
    /// A derived metric instead of --unit/--event: its name (memory_bandwidth_read), or a
    /// category or group that selects several (TmaL1, "BW, MC"), like `perf stat -M`; `pmu
    /// list --metrics` lists them. Repeatable. Its events are counted on every box of their
    /// unit and summed per socket (-A: per CPU, for metrics of core events); needs
    /// --processor where nothing is detected (--sim).
    #[arg(long = "metric", value_name = "NAME")]
    pub metric: Vec<String>,
    /// The processor this runs on (xeon-e5-2600, ...): settles a box name two processors
    /// share, and lets --event name its own core events for CORE (event=INST_RETIRED.ANY_P).
    /// On hardware it is detected; with --sim, name it to use a processor's core events.
    #[arg(long, add = ArgValueCandidates::new(crate::completion::processors))]
    pub processor: Option<String>,
    /// Seconds between reports, from 0.01 to 86400.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub interval: f64,
    /// Stop after this many reports (1 or more; default: until Ctrl-C).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Watch the boxes on every socket (a row per socket), like `perf stat -a`; a per-CPU
    /// PMU (CORE, --pmu msr) is counted on every CPU and summed per socket (-A: a row per
    /// CPU).
    #[arg(
        short = 'a',
        long = "all-sockets",
        visible_alias = "all-cpus",
        conflicts_with_all = ["socket", "cpu", "device"]
    )]
    pub all_sockets: bool,
    /// A row per CPU for a per-CPU PMU, not their sum (like `perf stat -A`); with a cpu
    /// column. With --metric: a row per CPU for metrics of core events (`perf stat -M -A`).
    #[arg(short = 'A', long = "no-aggr", conflicts_with = "per_socket")]
    pub no_aggr: bool,
    /// Sum each event over the boxes of a socket, like `perf stat --per-socket`.
    #[arg(long)]
    pub per_socket: bool,
    /// CSV with this separator instead of the table (like `perf stat -x,`): time, socket,
    /// counter, event, count, rate (with --metric, `-x,` only: time, socket, cpu with -A,
    /// metric, value, unit, running).
    #[arg(
        short = 'x',
        long = "field-separator",
        value_name = "SEP",
        conflicts_with = "json"
    )]
    pub separator: Option<String>,
    /// Write the report to FILE instead of stdout (with --format openmetrics, FILE is
    /// replaced whole every interval, for the Prometheus textfile collector).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The report's format: table (the default), csv (as -x,), json (JSON lines, as --json),
    /// openmetrics (one exposition of running totals per interval, as `pmu serve` exports
    /// them) or prometheus (the same in the Prometheus text format, for the node exporter's
    /// textfile collector: -o /var/lib/node_exporter/pmu.prom).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<WatchFormat>,
    /// Take counters that are already enabled (left by a killed session, or another tool's):
    /// they are saved and put back at exit. Without it such a counter is refused, named.
    #[arg(long)]
    pub force: bool,
    /// Program a box that the part's uncore discovery table (Sapphire Rapids on) does not
    /// list or disagrees with, or every box when the table cannot be read, at the spec's
    /// addresses. Without it such a box is refused, with what the table says (`pmu discover`
    /// shows the whole table beside the spec).
    #[arg(long)]
    pub allow_mismatch: bool,
    #[command(flatten)]
    pub quirks: crate::check::QuirkArgs,
    #[command(flatten)]
    pub place: PlaceArgs,
    #[command(flatten)]
    pub perf: PerfWatchArgs,
}

/// `--format`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchFormat {
    Table,
    Csv,
    Json,
    Openmetrics,
    Prometheus,
}

impl WatchArgs {
    /// How the rows group the counts: --per-socket, -a (a per-CPU PMU's CPUs summed per
    /// socket, unless -A), -A.
    fn grouping(&self) -> Grouping {
        Grouping {
            per_socket: self.per_socket,
            sums_cpus: self.all_sockets && !self.no_aggr,
            per_cpu: self.no_aggr,
        }
    }

    /// What to count, as the arguments say it.
    pub fn asked(&self) -> Asked<'_> {
        let processor = self.place.processor(self.processor.as_deref());
        Asked {
            units: &self.unit,
            events: &self.events,
            kernel_pmu: self.perf.pmu.as_deref(),
            processor,
            cpu: self.place.cpu,
            route: self.perf.backend.0,
        }
    }

    /// The sockets to count on: every one with -a, else `--socket` (default 0).
    pub fn sockets(&self) -> Sockets {
        self.place.sockets(self.all_sockets)
    }
}

/// Runs `pmu watch`. Output goes out as it happens; the returned text is empty. Everything
/// the command line can get wrong is refused before the first register is touched.
pub fn run(args: &WatchArgs, json_out: bool) -> Result<String, Failure> {
    check_interval(args.interval)?;
    if let Some(device) = &args.place.device {
        return Err(Failure::usage(format!(
            "--device {device} does not apply to watch: it finds each box's device itself; \
             choose the socket with --socket (or every socket with -a)"
        )));
    }
    crate::detect::processor_named(args.processor.as_deref())?;
    let asked = args.asked();
    let selection = asked
        .selection()?
        .on(args.sockets())
        .on_every_cpu(args.all_sockets);
    asked.check_reach(&selection, args.place.sim, args.place.root.as_deref())?;
    crate::encode::note_experimental_events(&selection, asked.processor);
    let format = format_of(args, json_out)?;
    let machine = args
        .place
        .machine_for(selection.processor())?
        .taking_over(args.force);
    let backend = args.place.backend(&machine, asked.route);
    let period = Duration::from_secs_f64(args.interval);
    let options = Options {
        clock: backend.clock(period),
        allow_mismatch: args.allow_mismatch,
        pace: args.place.pace()?,
        quirks: args.quirks.quirks()?,
        ..Options::default()
    };
    let mut session = Session::open(&backend, &selection, options)?;
    crate::warn_mismatches(&session);
    // A `running` column where events may share counters: through perf, or in turns.
    let perf = session.series().iter().any(|s| s.perf.is_some()) || session.in_turns();
    let rows = Rows::new(session.series().to_vec(), args.grouping());
    let mut out = match Output::new(format, perf, args.output.as_deref()) {
        Ok(out) => out.with_cpu_column(rows.shows_cpu()),
        Err(e) => {
            let failure = Failure::operation(format!(
                "cannot write {}: {e}; choose a file in a writable directory",
                args.output
                    .as_deref()
                    .unwrap_or("stdout".as_ref())
                    .display()
            ));
            return close_after(session, Err(failure));
        }
    };

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        // A second watch in the same process (tests) cannot install a handler again; the
        // first one's flag is not this one, so Ctrl-C then ends the process, which is fine.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }

    // A panic from here on unwinds through `session`, whose drop puts the registers back.
    let result = watch_loop(&mut session, args, &stop, (&rows, &mut out));
    // Disable what was enabled, whatever happened, and report both failures if both fail.
    close_after(session, result).map(|()| String::new())
}

/// The report's format from --format, -x and --json, refusing combinations that disagree.
fn format_of(args: &WatchArgs, json_out: bool) -> Result<Format, Failure> {
    Ok(match (args.format, &args.separator, json_out) {
        (Some(f), Some(_), _) if f != WatchFormat::Csv => {
            return Err(Failure::usage(
                "-x SEP writes CSV; it does not go with another --format".to_string(),
            ))
        }
        (Some(f), _, true) if f != WatchFormat::Json => {
            return Err(Failure::usage(
                "--json writes JSON lines; it does not go with another --format".to_string(),
            ))
        }
        (Some(WatchFormat::Openmetrics | WatchFormat::Prometheus), _, _) if args.no_aggr => {
            return Err(Failure::usage(
                "-A prints a row per CPU, and the exposition's labels have no CPU; give -A with \
                 the table, CSV or JSON"
                    .to_string(),
            ))
        }
        (Some(WatchFormat::Openmetrics), _, _) => Format::OpenMetrics,
        (Some(WatchFormat::Prometheus), _, _) => Format::PrometheusText,
        (Some(WatchFormat::Csv), None, _) => Format::Separated(",".to_string()),
        (Some(WatchFormat::Json), _, _) => Format::JsonLines,
        (_, Some(sep), _) if sep.is_empty() => {
            return Err(Failure::usage(
                "-x needs a separator, such as -x, or -x';'".to_string(),
            ))
        }
        (_, Some(sep), _) => Format::Separated(sep.clone()),
        (_, None, true) => Format::JsonLines,
        // The columns widen to the names once the session has opened (`fit_columns`).
        (_, None, false) => Format::Table {
            counter_w: "counter".len(),
            event_w: "event".len(),
        },
    })
}

fn watch_loop(
    session: &mut Session,
    args: &WatchArgs,
    stop: &AtomicBool,
    (rows, out): (&Rows, &mut Output),
) -> Result<(), Failure> {
    session.start()?;
    out.fit_columns(rows.counters().into_iter(), rows.events().into_iter());
    if let Err(e) = out.header() {
        return quiet_if_closed(e);
    }
    each_interval(session, args, stop, |interval| {
        let rows = rows.rows(interval);
        rows.iter().try_for_each(|r| out.row(r))?;
        out.end_interval(interval.time)
    })
}

/// Counts an interval at a time, as --interval and --count say, until `stop`, handing each
/// to `write`.
pub fn each_interval(
    session: &mut Session,
    args: &WatchArgs,
    stop: &AtomicBool,
    mut write: impl FnMut(&Interval) -> io::Result<()>,
) -> Result<(), Failure> {
    let period = Duration::from_secs_f64(args.interval);
    let mut report = 0u64;
    while args.count.is_none_or(|c| report < c) && !stop.load(Ordering::SeqCst) {
        report += 1;
        session.wait_interval(period, stop)?;
        let interval = session.interval()?;
        if let Err(e) = write(&interval) {
            return quiet_if_closed(e);
        }
    }
    Ok(())
}

/// A reader that went away (`watch ... | head`) ends the watch normally; other write errors
/// are failures.
pub fn quiet_if_closed(e: io::Error) -> Result<(), Failure> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(Failure::operation(format!("cannot write the report: {e}")))
    }
}
