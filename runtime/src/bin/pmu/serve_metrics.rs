//! `pmu serve --metric NAME`: the metrics' events become one more selection of boxes (as
//! `watch --metric` counts them), and the exporter evaluates the metrics each interval into
//! `pmu_metric` gauges by socket ([`pmu_runtime::export::MetricGauges`]).

use pmu_regs::metrics::MetricInfo;
use pmu_runtime::constants::PartConstants;
use pmu_runtime::export::{MetricGauges, MetricInput};
use pmu_runtime::metrics::{select, Plan as MetricPlan};
use pmu_runtime::session::{SeriesInfo, Sockets};

use crate::failure::Failure;
use crate::place::PlaceArgs;
use crate::targets::Selection;

/// The metrics `serve` exports, what they count, and the constants they read.
pub struct Served {
    /// The metrics, a plan per unit their events are on.
    pub plans: Vec<MetricPlan>,
    /// The part's constants, with their sources.
    pub constants: PartConstants,
    /// The boxes and events to count, in `watch`'s words: a selection per plan.
    pub selections: Vec<Selection>,
}

/// Plans `metrics` of `processor` (`None`: not named and not detected) on `sockets`: one
/// plan per unit the metrics' events are on (a metric whose events are on several units is
/// refused, saying why).
pub fn plan(
    metrics: &[String],
    processor: Option<&'static str>,
    place: &PlaceArgs,
    sockets: Sockets,
    backend: crate::perf_cli::Backend,
) -> Result<Served, Failure> {
    let Some(id) = processor else {
        return Err(Failure::usage(
            "--metric needs the processor: name it with --processor (nothing is detected with \
             --sim, or on a machine the spec does not describe)"
                .to_string(),
        ));
    };
    let chosen = select(id, metrics)?;
    let constants = crate::watch_metrics::part_constants(place, id)?;
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
        selections.push(Selection {
            units: plan.boxes(),
            events: plan.events.iter().map(|e| e.word()).collect(),
            sockets,
            cpu: place.cpu,
            detected: Some(id),
            backend,
            kernel_pmu: None,
            // One CPU per socket for core events: the exporter's series carry no CPU label.
            every_cpu: false,
        });
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

    /// The processor whose top-down registers the metrics read, if any reads them.
    pub fn topdown_processor(&self) -> Option<&'static pmu_regs::ProcessorInfo> {
        let plan = self.plans.iter().find(|p| !p.topdown.is_empty())?;
        pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == plan.processor)
            .copied()
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
