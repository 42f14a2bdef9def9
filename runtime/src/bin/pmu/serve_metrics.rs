//! `pmu serve --metric NAME`: the metrics' plans become selections of boxes (as `watch
//! --metric` counts them), and the exporter evaluates the metrics each interval into
//! `pmu_metric` gauges by socket ([`pmu_runtime::export::MetricGauges`]).

use pmu_regs::metrics::MetricInfo;
use pmu_regs::ProcessorInfo;
use pmu_runtime::constants::PartConstants;
use pmu_runtime::export::{MetricGauges, MetricInput};
use pmu_runtime::machine::Machine;
use pmu_runtime::metrics::{select, Plan as MetricPlan};
use pmu_runtime::session::{Selection, SeriesInfo, Sockets};

use crate::failure::Failure;
use crate::place::PlaceArgs;

/// The metrics `serve` exports, what they count, and the constants they read.
pub struct Served {
    /// The metrics, a plan per unit their events are on.
    pub plans: Vec<MetricPlan>,
    /// The part's constants, with their sources.
    pub constants: PartConstants,
    /// What to count: a selection per plan.
    pub selections: Vec<Selection>,
}

/// The processor the metrics are of: named or detected (`None`: neither).
pub fn processor(detected: Option<&'static str>) -> Result<&'static ProcessorInfo, Failure> {
    let Some(id) = detected else {
        return Err(Failure::usage(
            "--metric needs the processor: name it with --processor (nothing is detected with \
             --sim, or on a machine the spec does not describe)"
                .to_string(),
        ));
    };
    crate::watch_metrics::processor_info(id)
}

/// Plans `metrics` of `processor` on `sockets`, with the constants read from `machine`: one
/// plan per unit the metrics' events are on (a metric whose events are on several units is
/// refused, saying why).
pub fn plan(
    metrics: &[String],
    processor: &'static ProcessorInfo,
    place: &PlaceArgs,
    machine: &Machine,
    sockets: Sockets,
) -> Result<Served, Failure> {
    let id = processor.id;
    let chosen = select(id, metrics)?;
    let constants = crate::watch_metrics::part_constants(place, machine, processor);
    let mut by_unit: Vec<(&str, Vec<&'static MetricInfo>)> = Vec::new();
    for m in chosen {
        let unit = m.events.first().map_or("", |e| e.unit);
        match by_unit.iter_mut().find(|(u, _)| *u == unit) {
            Some((_, ms)) => ms.push(m),
            None => by_unit.push((unit, vec![m])),
        }
    }
    let mut plans = Vec::new();
    let mut selections = Vec::new();
    for (_, ms) in by_unit {
        let plan = MetricPlan::new(id, &ms, &constants.constants())?;
        // One CPU per socket for core events: the exporter's series carry no CPU label.
        selections.push(plan.selection()?.on(sockets).through(place.cpu));
        plans.push(plan);
    }
    Ok(Served {
        plans,
        constants,
        selections,
    })
}

impl Served {
    /// For each plan (each metric selection, in order), whether its metrics read the top-down
    /// registers (fixed counter 3, IA32_PERF_METRICS).
    pub fn reads_topdown(&self) -> Vec<bool> {
        self.plans.iter().map(|p| !p.topdown.is_empty()).collect()
    }

    /// The gauges, fed by `series` (every session's, in the exporter's order); the last
    /// sessions are the plans', in order, their series in `ranges`.
    pub fn gauges(&self, series: &[SeriesInfo], ranges: &[std::ops::Range<usize>]) -> MetricGauges {
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
