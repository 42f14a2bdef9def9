//! What a server of counts does besides serving: the derived metrics it exports and what it
//! counts for them ([`ServedMetrics`]), one processor's boxes, each once, across its sessions
//! ([`one_processor`], [`check_each_box_once`]), the [`Exporter`] of its sessions' series,
//! the `/metrics` answer ([`handler`]) and the counting loop ([`count_until`]), which reads
//! the counters on its own interval so that a scrape never touches a register.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pmu_regs::metrics::MetricInfo;
use pmu_regs::ProcessorInfo;

use super::http::{Handler, Request, Response};
use super::text::negotiate;
use super::web_config::{read_bounded, MAX_CONFIG_BYTES};
use super::{Exporter, MetricGauges, MetricInput, Series};
use crate::constants::PartConstants;
use crate::error::{Error, UsageError};
use crate::lookup::counter_example;
use crate::metrics::Plan;
use crate::session::{
    config_line, Reading, Selection, SeriesInfo, Session, Sockets, TopdownSample,
};

/// The derived metrics a server exports as `pmu_metric` gauges, what it counts for them, and
/// the part's constants they read.
pub struct ServedMetrics {
    /// The metrics, a plan per unit their events are on.
    pub plans: Vec<Plan>,
    /// The part's constants, with their sources.
    pub constants: PartConstants,
    /// What to count: a selection per plan.
    pub selections: Vec<Selection>,
}

impl ServedMetrics {
    /// Plans `chosen` metrics of `processor` on `sockets`, core events through `cpu` (one CPU
    /// per socket: the exporter's series carry no CPU label), reading `constants`: one plan
    /// per unit the metrics' events are on (a metric whose events are on several units is
    /// refused, saying why).
    pub fn plan(
        chosen: &[&'static MetricInfo],
        processor: &'static ProcessorInfo,
        constants: PartConstants,
        sockets: Sockets,
        cpu: Option<u32>,
    ) -> Result<Self, UsageError> {
        let mut by_unit: Vec<(&str, Vec<&'static MetricInfo>)> = Vec::new();
        for &m in chosen {
            let unit = m.events.first().map_or("", |e| e.unit);
            match by_unit.iter_mut().find(|(u, _)| *u == unit) {
                Some((_, ms)) => ms.push(m),
                None => by_unit.push((unit, vec![m])),
            }
        }
        let mut plans = Vec::new();
        let mut selections = Vec::new();
        for (_, ms) in by_unit {
            let plan = Plan::new(processor.id, &ms, &constants.constants())?;
            selections.push(plan.selection()?.on(sockets).through(cpu));
            plans.push(plan);
        }
        Ok(ServedMetrics {
            plans,
            constants,
            selections,
        })
    }

    /// The processor of the plans (`""` without any).
    pub fn processor(&self) -> &'static str {
        self.plans.first().map_or("", |p| p.processor)
    }

    /// For each plan (each metric selection, in order), whether its metrics read the top-down
    /// registers (fixed counter 3, IA32_PERF_METRICS).
    pub fn reads_topdown(&self) -> Vec<bool> {
        self.plans.iter().map(|p| !p.topdown.is_empty()).collect()
    }

    /// The gauges, fed by `series` (every session's, in the exporter's order); the last
    /// sessions are the plans', in order, their series in `ranges`.
    pub fn gauges(&self, series: &[SeriesInfo], ranges: &[Range<usize>]) -> MetricGauges {
        let mut gauges = MetricGauges::new(&self.constants);
        for (plan, ours) in self.plans.iter().zip(ranges) {
            let inputs = series
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    ours.contains(&i).then_some(MetricInput {
                        socket: s.socket,
                        event: s.event_index,
                    })
                })
                .collect();
            gauges = gauges.with_plan(plan.clone(), inputs);
        }
        gauges
    }
}

/// The exporter of every series of `sessions`, in order, with the gauges of `metrics`, whose
/// plans' sessions are the last of `sessions`, in order; programmed now.
pub fn exporter(sessions: &[Session], metrics: Option<&ServedMetrics>) -> Exporter {
    let infos: Vec<SeriesInfo> = sessions.iter().flat_map(|t| t.series()).cloned().collect();
    let series: Vec<Series> = infos.iter().map(Series::from).collect();
    let mut exporter = Exporter::new(series, Instant::now());
    if let Some(m) = metrics {
        let mut ranges = Vec::new();
        let mut end = infos.len();
        for s in sessions.iter().rev().take(m.plans.len()) {
            ranges.insert(0, end - s.series().len()..end);
            end -= s.series().len();
        }
        exporter = exporter.with_metrics(m.gauges(&infos, &ranges));
    }
    exporter
}

/// The processor whose boxes `selections` count: one, or the architectural CORE box (a core
/// metric's, on every processor) beside one other.
pub fn one_processor(selections: &[&Selection]) -> Result<&'static ProcessorInfo, UsageError> {
    let processors: Vec<_> = selections.iter().map(|s| s.processor()).collect();
    // The architectural CORE box (a core metric's) is on every processor: the machine is
    // the other boxes' processor.
    let processor = processors
        .iter()
        .copied()
        .find(|p| p.id != "architectural")
        .unwrap_or(processors[0]);
    if let Some(other) = processors
        .iter()
        .find(|p| p.id != processor.id && p.id != "architectural")
    {
        let example = processor
            .units
            .iter()
            .find_map(|u| u.instances.first())
            .map_or_else(String::new, |i| format!(" ({}:{i})", processor.id));
        return Err(UsageError::Refused(format!(
            "serve counts one processor's boxes at a time, and the selection names boxes of {} \
             and {}; prefix the box names with one processor{example}",
            processor.id, other.id
        )));
    }
    Ok(processor)
}

/// Refuses one box in two selections (`selections`: each with the box names it was asked
/// by, for the message): it would be claimed twice.
pub fn check_each_box_once(selections: &[(&[String], &Selection)]) -> Result<(), UsageError> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (units, selection) in selections {
        for (unit, b) in units.iter().zip(selection.boxes()) {
            let b = (b.boxes.processor.id, b.pmu_box.instance);
            if seen.contains(&b) {
                return Err(UsageError::Refused(format!(
                    "box {} of {} is selected twice (--unit {unit} names it again); give each \
                     box once, with all its events",
                    b.1, b.0
                )));
            }
            seen.push(b);
        }
    }
    Ok(())
}

/// Answers `/metrics` from the exporter's totals (never the hardware): OpenMetrics for
/// Prometheus (it asks for it), the Prometheus text format for everything else (promtool,
/// curl); `/` points there.
pub fn handler(exporter: Arc<Exporter>) -> Arc<Handler> {
    Arc::new(move |r: &Request| match r.path.as_str() {
        "/metrics" => match exporter.encode() {
            Ok(text) => {
                let (content_type, body) = negotiate(r.accept.as_deref(), text);
                Response {
                    status: 200,
                    content_type,
                    body,
                }
            }
            Err(e) => Response::text(500, format!("encoding the metrics failed: {e}\n")),
        },
        "/" => Response::text(
            200,
            "pmu serve: performance-monitoring counters in the OpenMetrics format at /metrics\n",
        ),
        _ => Response::text(404, "not found; the metrics are at /metrics\n"),
    })
}

/// One reading per series of every session, in the exporter's order.
pub fn read_all(sessions: &mut [Session]) -> Vec<Option<Reading>> {
    sessions.iter_mut().flat_map(|s| s.read()).collect()
}

/// Every session's top-down samples since the last reading (none where a session does not
/// read the registers). A failed read goes to `failed` and gives no samples, so the metrics
/// that read them are n/a for the interval, as for a box that could not be read.
pub fn read_topdown(
    sessions: &mut [Session],
    failed: &mut dyn FnMut(&Error),
) -> Vec<TopdownSample> {
    let mut samples = Vec::new();
    for s in sessions.iter_mut() {
        match s.read_topdown() {
            Ok(t) => samples.extend(t),
            Err(e) => failed(&e),
        }
    }
    samples
}

/// Reads every counter of `sessions` now as `exporter`'s baseline, and starts the top-down
/// registers' count (a failed read goes to `failed`).
pub fn baseline(sessions: &mut [Session], exporter: &Exporter, failed: &mut dyn FnMut(&Error)) {
    exporter.baseline_at(&read_all(sessions), Instant::now());
    let _ = read_topdown(sessions, failed);
}

/// Counts until `stop`: each `period`, reads every counter of `sessions` and adds the deltas
/// to `exporter`'s totals (a failed top-down read goes to `failed`).
pub fn count_until(
    sessions: &mut [Session],
    exporter: &Exporter,
    period: Duration,
    stop: &AtomicBool,
    failed: &mut dyn FnMut(&Error),
) {
    while !stop.load(Ordering::SeqCst) {
        let deadline = Instant::now() + period;
        while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
            std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(20)));
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
        // Stamped before the read, as the sessions' clock is read at its start.
        let at = Instant::now();
        let readings = read_all(sessions);
        exporter.record_with_topdown(&readings, &read_topdown(sessions, failed), at);
    }
}

/// The lines of a configuration file of standing counters that name counters: `FILE:LINE`,
/// the box and its events (see [`config_line`]); an error names the line. At most
/// [`MAX_CONFIG_BYTES`] are read.
pub fn config_lines(path: &Path) -> Result<Vec<(String, String, Vec<String>)>, UsageError> {
    // Bounded: a path such as /dev/zero is refused, not read until memory runs out.
    let text = read_bounded(path, MAX_CONFIG_BYTES).map_err(|e| {
        UsageError::Refused(format!(
            "cannot read the config file {}: {e}; check the path",
            path.display()
        ))
    })?;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let origin = format!("{}:{}", path.display(), i + 1);
        match config_line(line) {
            Ok(Some((unit, events))) => lines.push((origin, unit, events)),
            Ok(None) => {}
            Err(e) => return Err(UsageError::Refused(format!("{origin}: {e}"))),
        }
    }
    if lines.is_empty() {
        let (unit, event) = counter_example();
        return Err(UsageError::Refused(format!(
            "{} names no counter: add a line such as `{unit} event={event}`",
            path.display()
        )));
    }
    Ok(lines)
}
