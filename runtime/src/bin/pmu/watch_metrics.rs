//! `pmu watch --metric NAME` and `pmu list --metrics`: derived metrics. The library plans the
//! events ([`pmu_runtime::metrics::Plan`]), gives the selection a session counts for them
//! ([`Plan::selection`]) and evaluates each interval ([`Plan::interval_values`]); this opens
//! the session and prints one row per socket and metric (with -A, per CPU for metrics of
//! core events), or the exposition the library writes ([`Exposition`]).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pmu_regs::metrics::for_processor;
use pmu_regs::{ProcessorInfo, PROCESSORS};
use pmu_runtime::constants::PartConstants;
use pmu_runtime::export::Exposition;
use pmu_runtime::machine::Machine;
use pmu_runtime::metrics::{format_value, select, MetricValue, Plan};
use pmu_runtime::session::{Options, Selection, Session};
use serde_json::json;

use crate::counting::{check_interval, close_after, Asked};
use crate::detect;
use crate::failure::Failure;
use crate::place::PlaceArgs;
use crate::table::TextTable;
use crate::watch::WatchArgs;

/// `pmu list --metrics`: every metric of the processors (or of one), with its unit, level,
/// scope, groups and description.
pub fn list(
    processor: Option<&str>,
    pattern: Option<&crate::pattern::Pattern>,
    json_out: bool,
) -> Result<String, Failure> {
    let only = crate::detect::processor_named(processor)?;
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
    let mut t = TextTable::new(&[
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
    if let Some(p) = crate::detect::processor_named(args.processor.as_deref())? {
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
/// `--root`), each with where it came from, read from `machine`.
pub fn part_constants(
    place: &PlaceArgs,
    machine: &Machine,
    processor: &'static ProcessorInfo,
) -> PartConstants {
    let root = place.root.clone().unwrap_or_else(|| "/".into());
    PartConstants::read(machine, processor, &root)
}

/// The processor `id` names.
pub fn processor_info(id: &str) -> Result<&'static ProcessorInfo, Failure> {
    PROCESSORS
        .iter()
        .find(|p| p.id == id)
        .copied()
        .ok_or_else(|| Failure::from(pmu_runtime::lookup::unknown_processor(id)))
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
    let info = processor_info(processor(args)?)?;
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
    let format = MetricFormat::of(args, json_out)?;
    let backend = args.place.backend(&machine, asked.route);
    let options = Options {
        clock: backend.clock(Duration::from_secs_f64(args.interval)),
        allow_mismatch: args.allow_mismatch,
        topdown: !plan.topdown.is_empty(),
        pace: args.place.pace()?,
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

    /// The lines before the first interval: the constants and the columns.
    fn head(self, part: &PartConstants, per_cpu: bool) -> String {
        // With -A a cpu column follows the socket.
        let cpu_column = |table: &str, csv: &str| -> String {
            if per_cpu {
                [table, csv].concat()
            } else {
                String::new()
            }
        };
        match self {
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
        }
    }

    /// One interval's report: a row per value, or one exposition.
    fn report(self, time: f64, values: &[MetricValue]) -> String {
        match self {
            MetricFormat::OpenMetrics | MetricFormat::PrometheusText => {
                let mut text = Exposition::new();
                text.metric_values(values);
                if self == MetricFormat::OpenMetrics {
                    text.finish()
                } else {
                    text.text().to_string()
                }
            }
            _ => values.iter().map(|v| self.row(time, v)).collect(),
        }
    }

    /// One value's row; a value of one CPU (-A) adds a cpu column.
    fn row(self, time: f64, v: &MetricValue) -> String {
        let running = v.running.unwrap_or(1.0);
        let running_pct = format!("{:.0}%", running * 100.0);
        let (socket, cpu, m) = (v.site.socket, v.site.cpu, v.metric);
        match self {
            MetricFormat::Table => format!(
                "{time:>10.3}  {socket:>6}{}  {:<40} {:>16}  {:<16} {running_pct}\n",
                cpu.map_or(String::new(), |c| format!("  {c:>4}")),
                m.name,
                format_value(v.value),
                m.unit
            ),
            MetricFormat::Csv => format!(
                "{time:.3},{socket}{},{},{},{},{running_pct}\n",
                cpu.map_or(String::new(), |c| format!(",{c}")),
                m.name,
                v.value.map_or("n/a".into(), |v| v.to_string()),
                m.unit
            ),
            _ => {
                let mut line = json!({"time": time, "socket": socket, "processor": v.processor,
                                      "metric": m.name, "value": v.value, "unit": m.unit,
                                      "running": running});
                if let Some(c) = cpu {
                    line["cpu"] = json!(c);
                }
                format!("{line}\n")
            }
        }
    }
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
    let period = Duration::from_secs_f64(args.interval);
    let mut report = 0u64;
    while args.count.is_none_or(|c| report < c) && !stop.load(Ordering::SeqCst) {
        report += 1;
        crate::watch::wait_interval(session, period, stop)?;
        let interval = session.interval()?;
        let values = plan.interval_values(&series, &interval, args.no_aggr, &constants);
        let text = format.report(interval.time, &values);
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            return quiet_if_closed(e);
        }
    }
    Ok(())
}

/// A reader that went away (`watch ... | head`) ends the watch normally.
fn quiet_if_closed(e: io::Error) -> Result<(), Failure> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(Failure::operation(format!("cannot write the report: {e}")))
    }
}
