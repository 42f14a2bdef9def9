//! `pmu watch --metric NAME` and `pmu list --metrics`: derived metrics. The library plans the
//! events ([`pmu_runtime::metrics::Plan`]) and evaluates them; this turns the plan into the
//! boxes and `--event` words of an ordinary watch, runs the session, sums each event over
//! the boxes (and CPUs) of a socket ([`Sums`]), and prints one row per socket and metric (with
//! -A, per CPU for metrics of core events).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pmu_regs::metrics::for_processor;
use pmu_regs::PROCESSORS;
use pmu_runtime::constants::PartConstants;
use pmu_runtime::metrics::{format_value, select, Place, Plan, Summed, Sums};
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
pub fn list(
    processor: Option<&str>,
    pattern: Option<&crate::pattern::Pattern>,
    json_out: bool,
) -> Result<String, Failure> {
    let only = crate::commands::processor_named(processor)?;
    let mut rows = Vec::new();
    for p in PROCESSORS.iter().filter(|p| only.is_none_or(|o| o == p.id)) {
        for m in for_processor(p.id) {
            // Like `perf list PATTERN`: the name, category, groups or description.
            let texts: Vec<&str> = [m.name, m.category, m.description]
                .into_iter()
                .chain(m.groups.iter().copied())
                .collect();
            if pattern.is_none_or(|pat| pat.matches_any(&texts)) {
                rows.push((p.id, m));
            }
        }
    }
    if rows.is_empty() {
        return Err(Failure::usage(match pattern {
            Some(_) => "no metric matches the pattern; `pmu list --metrics` lists them all".into(),
            None => format!(
                "{} has no metrics; `pmu list --metrics` lists every processor's",
                processor.unwrap_or("the spec")
            ),
        }));
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
                format!("= {}", pmu_runtime::metrics::spelled_out(m))
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
    if args.no_aggr && !plan.per_cpu() {
        let socket: Vec<&str> = plan
            .metrics
            .iter()
            .filter(|m| m.scope != pmu_regs::metrics::MetricScope::Cpu)
            .map(|m| m.name)
            .collect();
        let verb = if socket.len() == 1 { "reads" } else { "read" };
        return Err(Failure::usage(format!(
            "-A gives a row per CPU to metrics of core events only (SCOPE cpu in `pmu list \
             --metrics`); {} {verb} the socket's boxes: leave out -A, or watch them separately",
            socket.join(", ")
        )));
    }
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
}

/// Each place's (socket's, or with -A CPU's) sums of the plan's events over `interval`.
fn sums(
    series: &[SeriesInfo],
    interval: &Interval,
    plan: &Plan,
    per_cpu: bool,
) -> Vec<(Place, Vec<Summed>)> {
    let mut sums = Sums::new(plan, per_cpu);
    for (s, c) in series.iter().zip(&interval.counts) {
        sums.add(
            s.socket,
            s.cpu,
            s.event_index,
            Some((c.delta, c.running_ratio)),
        );
    }
    sums.finish(plan, &interval.topdown)
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
    // With -A a cpu column follows the socket.
    let cpu_column = |table: &str, csv: &str| -> String {
        if args.no_aggr {
            [table, csv].concat()
        } else {
            String::new()
        }
    };
    let head = match format {
        MetricFormat::Table => format!(
            "{}\n{:>10}  {:>6}{}  {:<40} {:>16}  {:<16} {}\n",
            part.header(),
            "time",
            "socket",
            cpu_column("  ", &format!("{:>4}", "cpu")),
            "metric",
            "value",
            "unit",
            "running"
        ),
        MetricFormat::Csv => format!(
            "time,socket{},metric,value,unit,running\n",
            cpu_column(",", "cpu")
        ),
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
            let by = if args.no_aggr {
                "socket and CPU"
            } else {
                "socket"
            };
            text.push_str(&format!("# TYPE pmu_metric gauge\n# HELP pmu_metric A derived metric over the last interval, by {by} (pmu list --metrics).\n"));
        }
        // The share of the interval each metric's events ran, where they shared counters.
        let mut shares = String::new();
        for (place, counts) in sums(&series, &interval, plan, args.no_aggr) {
            let counted = &counts[..plan.events.len()];
            let running = counted.iter().filter_map(|c| c.1).fold(1.0f64, f64::min);
            if counted.iter().any(|c| c.1.is_some()) {
                shares.push_str(&running_share(format, place, plan, running));
            }
            let values = plan.evaluate(&counts, &constants);
            for (m, v) in plan.metrics.iter().zip(values) {
                text.push_str(&row(
                    format,
                    interval.time,
                    place,
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

/// One metric's row in `format`; a place that is one CPU (-A) adds a cpu column or label.
fn row(
    format: MetricFormat,
    time: f64,
    place: Place,
    processor: &str,
    m: &pmu_regs::metrics::MetricInfo,
    v: Option<f64>,
    running: f64,
) -> String {
    let running_pct = format!("{:.0}%", running * 100.0);
    let socket = place.socket;
    let cpu = place.cpu;
    match format {
        MetricFormat::Table => format!(
            "{time:>10.3}  {socket:>6}{}  {:<40} {:>16}  {:<16} {running_pct}\n",
            cpu.map_or(String::new(), |c| format!("  {c:>4}")),
            m.name,
            format_value(v),
            m.unit
        ),
        MetricFormat::Csv => format!(
            "{time:.3},{socket}{},{},{},{},{running_pct}\n",
            cpu.map_or(String::new(), |c| format!(",{c}")),
            m.name,
            v.map_or("n/a".into(), |v| v.to_string()),
            m.unit
        ),
        MetricFormat::Json => {
            let mut line = json!({"time": time, "socket": socket, "processor": processor,
                                  "metric": m.name, "value": v, "unit": m.unit,
                                  "running": running});
            if let Some(c) = cpu {
                line["cpu"] = json!(c);
            }
            format!("{line}\n")
        }
        MetricFormat::OpenMetrics | MetricFormat::PrometheusText => match v {
            // An undefined value is left out, not written as NaN.
            None => String::new(),
            Some(v) => format!(
                "pmu_metric{{processor=\"{processor}\",metric=\"{}\",unit=\"{}\",{}}} {v}\n",
                m.name,
                m.unit.replace('\\', "\\\\").replace('"', "\\\""),
                place_labels(place)
            ),
        },
    }
}

/// The labels of a place: `socket="0"`, and with -A `cpu="3"` after it.
fn place_labels(place: Place) -> String {
    match place.cpu {
        Some(c) => format!("socket=\"{}\",cpu=\"{c}\"", place.socket),
        None => format!("socket=\"{}\"", place.socket),
    }
}

/// The OpenMetrics samples of `pmu_metric_running_ratio` for one place (nothing in the other
/// formats, whose rows carry the share themselves).
fn running_share(format: MetricFormat, place: Place, plan: &Plan, running: f64) -> String {
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
                "pmu_metric_running_ratio{{processor=\"{}\",metric=\"{}\",{}}} {running}\n",
                plan.processor,
                m.name,
                place_labels(place)
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
