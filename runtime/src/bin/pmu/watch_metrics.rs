//! `pmu watch --metric NAME` and `pmu list --metrics`: derived metrics. The library plans the
//! events ([`pmu_runtime::metrics::Plan`]) and evaluates them; this turns the plan into the
//! boxes and `--event` words of an ordinary watch, runs the session, sums each event over
//! the boxes (and CPUs) of a socket, and prints one row per socket and metric.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pmu_regs::metrics::for_processor;
use pmu_regs::PROCESSORS;
use pmu_runtime::constants::PartConstants;
use pmu_runtime::metrics::{format_value, select, Plan};
use pmu_runtime::session::{Interval, Options, SeriesInfo, Session, Sockets};
use serde_json::json;

use crate::detect;
use crate::failure::Failure;
use crate::place::PlaceArgs;
use crate::table::Table;
use crate::targets::{check_interval, close_after, Selection};
use crate::watch::WatchArgs;

/// `pmu list --metrics`: every metric of the processors (or of one), with its unit, level,
/// scope, groups and description.
pub fn list(processor: Option<&str>, json_out: bool) -> Result<String, Failure> {
    let only = crate::commands::processor_named(processor)?;
    let mut rows = Vec::new();
    for p in PROCESSORS.iter().filter(|p| only.is_none_or(|o| o == p.id)) {
        for m in for_processor(p.id) {
            rows.push((p.id, m));
        }
    }
    if rows.is_empty() {
        return Err(Failure::usage(format!(
            "{} has no metrics; `pmu list --metrics` lists every processor's",
            processor.unwrap_or("the spec")
        )));
    }
    if json_out {
        let items: Vec<_> = rows
            .iter()
            .map(|(p, m)| {
                json!({"processor": p, "metric": m.name, "unit": m.unit, "category": m.category,
                       "groups": m.groups, "level": m.level, "parent": m.parent,
                       "scope": m.scope.as_str(), "description": m.description,
                       "formula": m.formula,
                       "events": m.events.iter().map(|e| e.name).collect::<Vec<_>>()})
            })
            .collect();
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&items).expect("JSON values serialise")
        ));
    }
    let mut t = Table::new(&[
        "PROCESSOR",
        "METRIC",
        "UNIT",
        "LEVEL",
        "SCOPE",
        "GROUPS",
        "DESCRIPTION",
    ]);
    for (p, m) in &rows {
        t.row(vec![
            p.to_string(),
            m.name.to_string(),
            m.unit.to_string(),
            m.level.to_string(),
            m.scope.as_str().to_string(),
            m.groups.join(";"),
            if m.description.is_empty() {
                format!("= {}", m.formula)
            } else {
                m.description.to_string()
            },
        ]);
    }
    Ok(t.render())
}

/// The processor the metrics are of: `--processor`, or the detected one.
fn processor(args: &WatchArgs) -> Result<&'static str, Failure> {
    if let Some(p) = crate::commands::processor_named(args.processor.as_deref())? {
        return Ok(p);
    }
    detect::detected(args.place.sim, args.place.root.as_deref()).ok_or_else(|| {
        Failure::usage(
            "--metric needs the processor: name it with --processor (nothing is detected with \
             --sim, or on a machine the spec does not describe)"
                .to_string(),
        )
    })
}

/// The constants of the machine `place` names (the simulator's, or the hardware under
/// `--root`), each with where it came from.
pub fn part_constants(place: &PlaceArgs, processor: &str) -> Result<PartConstants, Failure> {
    let info = PROCESSORS
        .iter()
        .find(|p| p.id == processor)
        .copied()
        .ok_or_else(|| Failure::from(pmu_runtime::lookup::unknown_processor(processor)))?;
    let machine = place.machine_for(info)?;
    let root = place.root.clone().unwrap_or_else(|| "/".into());
    Ok(PartConstants::read(&machine, info, &root))
}

/// Runs `pmu watch --metric`.
pub fn run(args: &WatchArgs, json_out: bool) -> Result<String, Failure> {
    check_interval(args.interval)?;
    let processor = processor(args)?;
    let chosen = select(processor, &args.metric)?;
    // Threads per core first: it decides which events a top-down formula's branches need.
    let part = part_constants(&args.place, processor)?;
    let plan = Plan::new(processor, &chosen, &part.constants())?;
    let selection = Selection {
        units: plan.boxes(),
        events: plan.events.iter().map(|e| e.word()).collect(),
        sockets: if args.all_sockets {
            Sockets::All
        } else {
            Sockets::One(args.place.socket.unwrap_or(0))
        },
        cpu: args.place.cpu,
        detected: Some(processor),
        backend: args.perf.backend,
        kernel_pmu: None,
        every_cpu: args.all_sockets,
    };
    let targets = selection.resolve()?;
    targets.check_reach(args.place.sim, args.place.root.as_deref())?;
    let format = MetricFormat::of(args, json_out)?;
    // Core events are the architectural processor's; the top-down registers are the metric's
    // processor's own (the simulator gives them to the cores of the processors that have them).
    let on = match PROCESSORS.iter().find(|p| p.id == plan.processor) {
        Some(p) if !plan.topdown.is_empty() => p,
        _ => targets.processor(),
    };
    let machine = args.place.machine_for(on)?.taking_over(args.force);
    let backend = args.place.backend(&machine, targets.selection().route());
    let period = Duration::from_secs_f64(args.interval);
    let options = Options {
        clock: backend.clock(period),
        allow_mismatch: args.allow_mismatch,
        topdown: !plan.topdown.is_empty(),
        ..Options::default()
    };
    let mut session = Session::open(&backend, targets.counting(), options)?;
    crate::warn_mismatches(&session);
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let result = metric_loop(&mut session, args, &plan, &part, format, &stop);
    close_after(session, result).map(|()| String::new())
}

/// How the rows are written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MetricFormat {
    Table,
    Csv,
    Json,
    OpenMetrics,
    /// The Prometheus text format: OpenMetrics without its `# EOF`.
    PrometheusText,
}

impl MetricFormat {
    fn of(args: &WatchArgs, json_out: bool) -> Result<Self, Failure> {
        use crate::watch::WatchFormat as W;
        if args.output.is_some() || args.no_aggr || args.per_socket {
            return Err(Failure::usage(
                "--metric prints one row per socket and metric to stdout; -o, -A and \
                 --per-socket go with --event"
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
                    "--metric writes a table, CSV (-x, or --format csv), JSON lines (--json) or \
                     OpenMetrics (--format openmetrics)"
                        .to_string(),
                ))
            }
        })
    }
}

/// A socket and its events' summed counts, each with its smallest running fraction.
type SocketCounts = (u32, Vec<(u64, Option<f64>)>);

/// Each socket's summed counts of the plan's events: (socket, [(count, running fraction)]).
fn per_socket(series: &[SeriesInfo], interval: &Interval, events: usize) -> Vec<SocketCounts> {
    let mut out: Vec<SocketCounts> = Vec::new();
    // A socket whose metrics read only the top-down registers has no counted series.
    for t in &interval.topdown {
        if !out.iter().any(|(socket, _)| *socket == t.socket) {
            out.push((t.socket, vec![(0, None); events]));
        }
    }
    for (s, c) in series.iter().zip(&interval.counts) {
        let at = match out.iter().position(|(socket, _)| *socket == s.socket) {
            Some(at) => at,
            None => {
                out.push((s.socket, vec![(0, None); events]));
                out.len() - 1
            }
        };
        if let Some(slot) = out[at].1.get_mut(s.event_index) {
            slot.0 = slot.0.saturating_add(c.delta);
            // A sum is as complete as its least-running part.
            slot.1 = match (slot.1, c.running_ratio) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }
    out
}

fn metric_loop(
    session: &mut Session,
    args: &WatchArgs,
    plan: &Plan,
    part: &PartConstants,
    format: MetricFormat,
    stop: &AtomicBool,
) -> Result<(), Failure> {
    session.start()?;
    let mut constants = part.constants();
    let series = session.series().to_vec();
    let mut out = io::stdout().lock();
    let head = match format {
        MetricFormat::Table => format!(
            "{}\n{:>10}  {:>6}  {:<40} {:>16}  {:<16} {}\n",
            part.header(),
            "time",
            "socket",
            "metric",
            "value",
            "unit",
            "running"
        ),
        MetricFormat::Csv => "time,socket,metric,value,unit,running\n".to_string(),
        _ => String::new(),
    };
    if let Err(e) = out.write_all(head.as_bytes()) {
        return quiet_if_closed(e);
    }
    let period = Duration::from_secs_f64(args.interval);
    let mut report = 0u64;
    while args.count.is_none_or(|c| report < c) && !stop.load(Ordering::SeqCst) {
        report += 1;
        crate::watch::wait_interval(session, period, stop)?;
        let interval = session.interval()?;
        constants.duration_seconds = Some(interval.seconds);
        let mut text = String::new();
        if matches!(
            format,
            MetricFormat::OpenMetrics | MetricFormat::PrometheusText
        ) {
            text.push_str("# TYPE pmu_metric gauge\n# HELP pmu_metric A derived metric over the last interval, by socket (pmu list --metrics).\n");
        }
        // The share of the interval each metric's events ran, where they shared counters.
        let mut shares = String::new();
        for (socket, mut counts) in per_socket(&series, &interval, plan.events.len()) {
            let running = counts.iter().filter_map(|c| c.1).fold(1.0f64, f64::min);
            if counts.iter().any(|c| c.1.is_some()) {
                shares.push_str(&running_share(format, socket, plan, running));
            }
            counts.extend(plan.topdown_counts(&interval.topdown, socket));
            let values = plan.evaluate(&counts, &constants);
            for (m, v) in plan.metrics.iter().zip(values) {
                text.push_str(&row(
                    format,
                    interval.time,
                    socket,
                    plan.processor,
                    m,
                    v,
                    running,
                ));
            }
        }
        if !shares.is_empty() {
            text.push_str("# TYPE pmu_metric_running_ratio gauge\n# HELP pmu_metric_running_ratio The smallest share of the interval a metric's events were on a counter (below 1: counted in turns or multiplexed, and scaled).\n");
            text.push_str(&shares);
        }
        if format == MetricFormat::OpenMetrics {
            text.push_str("# EOF\n");
        }
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            return quiet_if_closed(e);
        }
    }
    Ok(())
}

/// One metric's row in `format`.
fn row(
    format: MetricFormat,
    time: f64,
    socket: u32,
    processor: &str,
    m: &pmu_regs::metrics::MetricInfo,
    v: Option<f64>,
    running: f64,
) -> String {
    let running_pct = format!("{:.0}%", running * 100.0);
    match format {
        MetricFormat::Table => format!(
            "{time:>10.3}  {socket:>6}  {:<40} {:>16}  {:<16} {running_pct}\n",
            m.name,
            format_value(v),
            m.unit
        ),
        MetricFormat::Csv => format!(
            "{time:.3},{socket},{},{},{},{running_pct}\n",
            m.name,
            v.map_or("n/a".into(), |v| v.to_string()),
            m.unit
        ),
        MetricFormat::Json => format!(
            "{}\n",
            json!({"time": time, "socket": socket, "processor": processor, "metric": m.name,
                   "value": v, "unit": m.unit, "running": running})
        ),
        MetricFormat::OpenMetrics | MetricFormat::PrometheusText => match v {
            // An undefined value is left out, not written as NaN.
            None => String::new(),
            Some(v) => format!(
                "pmu_metric{{processor=\"{processor}\",metric=\"{}\",unit=\"{}\",socket=\"{socket}\"}} {v}\n",
                m.name,
                m.unit.replace('\\', "\\\\").replace('"', "\\\"")
            ),
        },
    }
}

/// The OpenMetrics samples of `pmu_metric_running_ratio` for one socket (nothing in the other
/// formats, whose rows carry the share themselves).
fn running_share(format: MetricFormat, socket: u32, plan: &Plan, running: f64) -> String {
    if !matches!(
        format,
        MetricFormat::OpenMetrics | MetricFormat::PrometheusText
    ) {
        return String::new();
    }
    plan.metrics
        .iter()
        .map(|m| {
            format!(
                "pmu_metric_running_ratio{{processor=\"{}\",metric=\"{}\",socket=\"{socket}\"}} {running}\n",
                plan.processor, m.name
            )
        })
        .collect()
}

/// A reader that went away (`watch ... | head`) ends the watch normally.
fn quiet_if_closed(e: io::Error) -> Result<(), Failure> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(Failure::operation(format!("cannot write the report: {e}")))
    }
}
