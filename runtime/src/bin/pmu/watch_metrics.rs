//! `pmu watch --metric NAME`: derived metrics. The library plans the events
//! ([`pmu_runtime::metrics::Plan`]), gives the selection a session counts for them
//! ([`Plan::selection`]), evaluates each interval ([`Plan::interval_values`]) and words the
//! values ([`MetricFormat`]: one row per socket and metric, with -A per CPU for metrics of
//! core events, or an exposition); this opens the session and prints them.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pmu_regs::ProcessorInfo;
use pmu_runtime::constants::PartConstants;
use pmu_runtime::machine::Machine;
use pmu_runtime::metrics::{select, Plan};
use pmu_runtime::report::metric_values::MetricFormat;
use pmu_runtime::session::{Options, Selection, Session};

use crate::counting::{check_interval, close_after, Asked};
use crate::failure::Failure;
use crate::place::PlaceArgs;
use crate::watch::{each_interval, quiet_if_closed, WatchArgs};

/// The processor metrics are of: `named` (`--processor`), or the detected one.
pub fn processor(
    named: Option<&str>,
    place: &PlaceArgs,
) -> Result<&'static ProcessorInfo, Failure> {
    crate::detect::processor_named(named)?;
    let id = place.processor(named).ok_or_else(|| {
        Failure::usage(
            "--metric needs the processor: name it with --processor (nothing is detected with \
             --sim, or on a machine the spec does not describe)"
                .to_string(),
        )
    })?;
    Ok(pmu_runtime::lookup::processor(id)?)
}

/// The constants of the machine `place` names (the simulator's, or the hardware under
/// `--root`), each with where it came from, read from `machine`.
pub fn part_constants(
    place: &PlaceArgs,
    machine: &Machine,
    processor: &'static ProcessorInfo,
) -> PartConstants {
    let root = place.root.clone().unwrap_or_else(|| "/".into());
    PartConstants::read(machine, processor, &root)
}

/// Refuses -A for a plan with metrics of the socket's boxes: a row per CPU has no value.
fn check_per_cpu(args: &WatchArgs, plan: &Plan) -> Result<(), Failure> {
    if !args.no_aggr || plan.per_cpu() {
        return Ok(());
    }
    let socket: Vec<&str> = plan
        .metrics
        .iter()
        .filter(|m| m.scope != pmu_regs::metrics::MetricScope::Cpu)
        .map(|m| m.name)
        .collect();
    let verb = if socket.len() == 1 { "reads" } else { "read" };
    Err(Failure::usage(format!(
        "-A gives a row per CPU to metrics of core events only (SCOPE cpu in `pmu list \
         --metrics`); {} {verb} the socket's boxes: leave out -A, or watch them separately",
        socket.join(", ")
    )))
}

/// Runs `pmu watch --metric`: the library plans the metrics and what a session counts for
/// them; this opens the machine once (for the part's constants and the counting), counts,
/// and prints each interval's values.
pub fn run(args: &WatchArgs, json_out: bool) -> Result<String, Failure> {
    check_interval(args.interval)?;
    let info = processor(args.processor.as_deref(), &args.place)?;
    let chosen = select(info.id, &args.metric)?;
    // The metrics' processor's machine: its core counters count the core events, and its
    // top-down registers those that read them.
    let machine = args.place.machine_for(info)?.taking_over(args.force);
    // Threads per core first: it decides which events a top-down formula's branches need.
    let part = part_constants(&args.place, &machine, info);
    let plan = Plan::new(info.id, &chosen, &part.constants())?;
    check_per_cpu(args, &plan)?;
    let selection = plan
        .selection()?
        .on(args.sockets())
        .through(args.place.cpu)
        .on_every_cpu(args.all_sockets);
    let units = box_names(&selection);
    let asked = Asked {
        units: &units,
        processor: Some(info.id),
        ..args.asked()
    };
    asked.check_reach(&selection, args.place.sim, args.place.root.as_deref())?;
    crate::encode::note_experimental_events(&selection, Some(info.id));
    let format = metric_format(args, json_out)?;
    let backend = args.place.backend(&machine, asked.route);
    let options = Options {
        clock: backend.clock(Duration::from_secs_f64(args.interval)),
        allow_mismatch: args.allow_mismatch,
        topdown: !plan.topdown.is_empty(),
        pace: args.place.pace()?,
        quirks: args.quirks.quirks()?,
        ..Options::default()
    };
    let mut session = Session::open(&backend, &selection, options)?;
    crate::warn_mismatches(&session);
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let result = metric_loop(&mut session, args, (&plan, &part), format, &stop);
    close_after(session, result).map(|()| String::new())
}

/// The boxes of `selection`, as `processor:instance`, for messages.
fn box_names(selection: &Selection) -> Vec<String> {
    selection
        .boxes()
        .iter()
        .map(|b| format!("{}:{}", b.boxes.processor.id, b.pmu_box.instance))
        .collect()
}

/// How `--metric`'s values are written, from --format, -x and --json (-o and --per-socket
/// are refused).
fn metric_format(args: &WatchArgs, json_out: bool) -> Result<MetricFormat, Failure> {
    use crate::watch::WatchFormat as W;
    if args.per_socket {
        return Err(Failure::usage(
            "--metric already sums per socket (-A: a row per CPU); --per-socket goes with \
             --event"
                .to_string(),
        ));
    }
    if args.output.is_some() {
        return Err(Failure::usage(
            "--metric prints to stdout; -o goes with --event (redirect the output instead)"
                .to_string(),
        ));
    }
    Ok(match (args.format, args.separator.as_deref(), json_out) {
        (Some(W::Json), _, _) | (None, None, true) => MetricFormat::Json,
        (Some(W::Csv), _, _) | (None, Some(","), _) => MetricFormat::Csv,
        (Some(W::Openmetrics), _, _) => MetricFormat::OpenMetrics,
        (Some(W::Prometheus), _, _) => MetricFormat::PrometheusText,
        (None | Some(W::Table), None, false) => MetricFormat::Table,
        _ => {
            return Err(Failure::usage(
                "--metric writes a table, CSV with commas only (-x, or --format csv), JSON \
                 lines (--json) or OpenMetrics (--format openmetrics, --format prometheus)"
                    .to_string(),
            ))
        }
    })
}

fn metric_loop(
    session: &mut Session,
    args: &WatchArgs,
    (plan, part): (&Plan, &PartConstants),
    format: MetricFormat,
    stop: &AtomicBool,
) -> Result<(), Failure> {
    session.start()?;
    let constants = part.constants();
    let series = session.series().to_vec();
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_all(format.head(part, args.no_aggr).as_bytes()) {
        return quiet_if_closed(e);
    }
    each_interval(session, args, stop, |interval| {
        let values = plan.interval_values(&series, interval, args.no_aggr, &constants);
        out.write_all(format.report(interval.time, &values).as_bytes())?;
        out.flush()
    })
}
