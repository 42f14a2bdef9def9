//! `pmu stat --sim` in one call: a request (what to show, how, for how long) counted on the
//! simulator over a command's run ([`super::views`]) and worded as `pmu stat` prints it, with
//! the command's exit status. With `-I MS` each interval gets the tree, the view or the
//! metrics with a first column of its time (toplev's interval mode; perf stat -I's stamp),
//! or, with `--metric-only`, perf's interval layout of a line per interval.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use pmu_regs::ProcessorInfo;

use crate::machine::NamedWorkload;
use crate::report::metric_values::{render_metric_only, render_metric_only_interval};

use super::views::{self, Timed};
use super::StatError;

/// What `pmu stat --sim` shows.
#[derive(Debug, Clone, PartialEq)]
pub enum SimShow {
    /// The top-down tree to this level (`--td-level N`).
    Tree(u8),
    /// A view across units (`--view memory`, `io`, `upi`).
    View(String),
    /// Metrics by name, category or group (`-M`).
    Metrics(Vec<String>),
}

/// A `pmu stat --sim` request.
#[derive(Debug, Clone)]
pub struct SimRequest {
    /// The simulated processor.
    pub processor: &'static ProcessorInfo,
    /// What it runs.
    pub workload: &'static NamedWorkload,
    /// What is shown.
    pub show: SimShow,
    /// The values alone, as perf stat --metric-only (the tree's and `-M`'s).
    pub metric_only: bool,
    /// `-x SEP` (with `metric_only`): CSV, without the title.
    pub separator: Option<String>,
    /// `-I`: a reading every this long of the command's run, the last one the rest.
    pub interval: Option<Duration>,
    /// The command whose run is counted (empty: until stopped).
    pub command: Vec<String>,
}

impl SimRequest {
    /// A request for `show` over `command`'s run on the processor named `processor`
    /// (default: [`views::default_sim_processor`]) running the workload named `workload`
    /// (default: [`crate::machine::default_workload`]); one reading, as text.
    pub fn new(
        processor: Option<&str>,
        workload: Option<&str>,
        show: SimShow,
        command: &[String],
    ) -> Result<Self, StatError> {
        let usage = |m: String| StatError::Usage(m);
        let processor = match processor {
            Some(p) => crate::lookup::processor(p).map_err(|e| usage(e.to_string()))?,
            None => views::default_sim_processor()
                .ok_or_else(|| usage("--sim needs --processor here".to_string()))?,
        };
        let workload = match workload {
            Some(w) => crate::machine::workload_named(w).map_err(|e| usage(e.to_string()))?,
            None => crate::machine::default_workload(),
        };
        Ok(Self {
            processor,
            workload,
            show,
            metric_only: false,
            separator: None,
            interval: None,
            command: command.to_vec(),
        })
    }
}

/// Counts `request` on the simulator (until its command ends, or without one until `stop`
/// is set) and gives what `pmu stat --sim` prints, with the command's exit status: the
/// title (not under `-I` nor with `-x`, as perf), then the tree, view or metrics.
pub fn report(request: &SimRequest, stop: &AtomicBool) -> Result<(String, i32), StatError> {
    let r = request;
    let run = (r.command.as_slice(), stop);
    let timed = r.interval.is_some();
    let (body, counts) = match &r.show {
        SimShow::Tree(level) => {
            let (trees, counts) =
                views::topdown_on_sim_every(r.processor, r.workload, *level, run, r.interval)?;
            let body = match r.metric_only {
                true => metric_only(r, &trees, |n| (n.metric, n.value)),
                false => views::render_trees(&trees, *level, timed),
            };
            (body, counts)
        }
        SimShow::Metrics(selectors) => {
            let (readings, counts) =
                views::metrics_on_sim_every(r.processor, r.workload, selectors, run, r.interval)?;
            let body = match r.metric_only {
                true => metric_only(r, &readings, |v| (v.metric, v.value)),
                false => views::render_metrics_every(&readings, timed),
            };
            (body, counts)
        }
        SimShow::View(view) => views::view_on_sim(view, r.processor, r.workload, run, r.interval)?,
    };
    let title = match timed || r.separator.is_some() {
        true => String::new(),
        false => views::sim_header(&r.command, &counts),
    };
    Ok((title + &body, counts.exit_code))
}

/// Readings as perf stat --metric-only prints them: a line of headers and a line of values;
/// under `-I` the time column first and a line per interval, the header again every 25
/// intervals (with `-x`, once), as perf.
fn metric_only<T>(
    request: &SimRequest,
    readings: &[Timed<Vec<T>>],
    pair: impl Fn(&T) -> (&'static pmu_regs::metrics::MetricInfo, Option<f64>),
) -> String {
    let sep = request.separator.as_deref();
    let pairs = |items: &[T]| items.iter().map(&pair).collect::<Vec<_>>();
    if request.interval.is_none() {
        return readings
            .iter()
            .map(|(_, items)| render_metric_only(&pairs(items), sep))
            .collect();
    }
    readings
        .iter()
        .enumerate()
        .map(|(i, (ends, items))| {
            let time = super::report::interval_time(*ends);
            let header = i % 25 == 0 && (i == 0 || sep.is_none());
            render_metric_only_interval(&time, &pairs(items), sep, header)
        })
        .collect()
}
