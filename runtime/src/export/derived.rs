//! Derived metrics as gauges (`pmu serve --metric`): each counting interval, the exporter's
//! deltas are summed per socket and event, as [`crate::metrics::Plan::evaluate`] takes them,
//! and every metric's value over that interval is kept for the exposition, written by
//! [`super::Exposition::metric_values`] as `pmu watch --metric --format openmetrics` writes
//! it: `pmu_metric` labelled by processor, metric, unit and socket. A value that is not
//! defined (a division by zero, a box that could not be read) is left out of the exposition
//! until it is defined again, never written as NaN.

use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, PoisonError};

use pmu_regs::metrics::Constants;
use prometheus_client::encoding::{EncodeLabelSet, LabelSetEncoder};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::constants::PartConstants;
use crate::metrics::{MetricSite, MetricValue, Plan, Summed, Sums};
use crate::session::TopdownSample;

/// Where one of the exporter's series goes in a plan: its socket, and which of the plan's
/// events ([`Plan::events`]) it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricInput {
    /// The socket its box is on.
    pub socket: u32,
    /// The index of its event in [`Plan::events`].
    pub event: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ConstantLabels {
    constant: String,
    source: String,
}

impl EncodeLabelSet for ConstantLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), fmt::Error> {
        [
            ("constant", self.constant.as_str()),
            ("source", self.source.as_str()),
        ]
        .encode(encoder)
    }
}

/// One interval's change of one series: its delta and running fraction (`None`: it ran the
/// whole time), or `None` where it could not be read.
pub(super) type Change = Option<(u64, Option<f64>)>;

/// One plan's metrics, and where the exporter's series go in it.
#[derive(Debug)]
struct Fed {
    plan: Plan,
    inputs: Vec<Option<MetricInput>>,
}

impl Fed {
    /// Each socket's sums of the plan's events ([`Sums`]); a series that could not be read
    /// makes its sum missing.
    fn sums(
        &self,
        changes: &[Change],
        topdown: &[TopdownSample],
    ) -> Vec<(MetricSite, Vec<Summed>)> {
        let mut sums = Sums::new(&self.plan, false);
        for (input, change) in self.inputs.iter().zip(changes) {
            if let Some(input) = input {
                sums.add(input.socket, None, input.event, *change);
            }
        }
        sums.finish(&self.plan, topdown)
    }
}

/// The gauges of some metrics (of one or more plans, each on one unit), fed by an
/// exporter's series, and the constants they read.
#[derive(Debug)]
pub struct MetricGauges {
    fed: Vec<Fed>,
    constants: Constants,
    known: Family<ConstantLabels, Gauge<f64, AtomicU64>>,
    /// Each metric's value on each socket after the last interval.
    last: Mutex<Vec<MetricValue>>,
}

impl MetricGauges {
    /// Gauges under the part's `constants` (the interval's length is filled in each
    /// interval), which are exported too (`pmu_constant`, labelled by the constant and where
    /// it came from). Add the metrics with [`Self::with_plan`].
    pub fn new(constants: &PartConstants) -> Self {
        let known = Family::<ConstantLabels, Gauge<f64, AtomicU64>>::default();
        for (name, k) in constants.rows() {
            if let Some(v) = k.value {
                let labels = ConstantLabels {
                    constant: name.to_string(),
                    source: k.source.clone(),
                };
                known.get_or_create(&labels).set(v);
            }
        }
        MetricGauges {
            fed: Vec::new(),
            constants: constants.constants(),
            known,
            last: Mutex::new(Vec::new()),
        }
    }

    /// Adds `plan`'s metrics: `inputs[i]` says where the exporter's series i goes in it
    /// (`None`: not one of its events), in the order of the exporter's series.
    pub fn with_plan(mut self, plan: Plan, inputs: Vec<Option<MetricInput>>) -> Self {
        self.fed.push(Fed { plan, inputs });
        self
    }

    pub(super) fn register(&self, registry: &mut Registry) {
        registry.register(
            "pmu_constant",
            "A constant the metrics read (SOCKET_COUNT, SYSTEM_TSC_FREQ, ...), by where it came from",
            self.known.clone(),
        );
    }

    /// Sets every gauge from one interval of `seconds`: `changes[i]` is series i's, and
    /// `topdown` the top-down registers' samples over the interval (none: metrics that read
    /// them are n/a).
    pub(super) fn update(&self, changes: &[Change], topdown: &[TopdownSample], seconds: f64) {
        let constants = Constants {
            duration_seconds: (seconds > 0.0).then_some(seconds),
            ..self.constants
        };
        let mut last = Vec::new();
        for fed in &self.fed {
            last.extend(
                fed.plan
                    .values(&fed.sums(changes, topdown), &constants)
                    .into_iter()
                    .map(|v| MetricValue {
                        value: v.value.filter(|v| v.is_finite()),
                        ..v
                    }),
            );
        }
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = last;
    }

    /// Writes the last interval's values into `text` (see [`super::Exposition::metric_values`]).
    pub(super) fn write(&self, text: &mut super::Exposition) {
        text.metric_values(&self.last.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// The value of `metric` on `socket` as the last interval left it (`None`: n/a, or not
    /// counted yet).
    pub fn value(&self, metric: &str, socket: u32) -> Option<f64> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.iter()
            .find(|v| v.metric.name == metric && v.site.socket == socket)
            .and_then(|v| v.value)
    }
}
