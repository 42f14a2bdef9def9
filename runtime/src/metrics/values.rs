//! A plan's metrics evaluated over one interval at each site: what `pmu watch --metric`
//! prints and `pmu serve --metric` exports, and what a program counting a plan's
//! [`Plan::selection`] gets the same way.

use pmu_regs::metrics::{Constants, MetricInfo};

use super::{MetricSite, Plan, Summed, Sums};
use crate::session::{Interval, SeriesInfo};

/// One metric's value at one site over one interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricValue {
    /// The processor whose metric it is.
    pub processor: &'static str,
    /// The metric.
    pub metric: &'static MetricInfo,
    /// Where it was evaluated: a socket, or one CPU.
    pub site: MetricSite,
    /// The value; `None` where it is not defined (a division by zero, an event not counted).
    pub value: Option<f64>,
    /// The smallest share of the interval the plan's events ran at the site, where they
    /// shared counters (counted in turns, or multiplexed by perf, and scaled); `None` where
    /// every one ran the whole time.
    pub running: Option<f64>,
}

impl MetricValue {
    /// Whether the value is over its metric's threshold (Intel's `Threshold`, in the spec),
    /// reading the metrics the threshold names from `interval` (the interval's values, at the
    /// same site): `None` without a threshold, without a value, or where a metric the
    /// threshold reads is not among them.
    pub fn over_threshold(&self, interval: &[MetricValue]) -> Option<bool> {
        self.value?;
        self.metric.over_threshold(|name| {
            interval
                .iter()
                .find(|v| v.site == self.site && v.metric.name == name)
                .and_then(|v| v.value)
        })
    }
}

impl Plan {
    /// Every metric's value at each site from the sums there ([`Sums::finish`]), under
    /// `constants` (with the interval's length), in order of site, then of metric.
    pub fn values(
        &self,
        sums: &[(MetricSite, Vec<Summed>)],
        constants: &Constants,
    ) -> Vec<MetricValue> {
        let mut out = Vec::new();
        for (site, counts) in sums {
            let counted = &counts[..self.events.len().min(counts.len())];
            let running = counted
                .iter()
                .any(|c| c.1.is_some())
                .then(|| counted.iter().filter_map(|c| c.1).fold(1.0f64, f64::min));
            let values = self.evaluate(counts, constants);
            out.extend(
                self.metrics
                    .iter()
                    .zip(values)
                    .map(|(metric, value)| MetricValue {
                        processor: self.processor,
                        metric,
                        site: *site,
                        value,
                        running,
                    }),
            );
        }
        out
    }

    /// Every metric's value over one interval of a session counting this plan's
    /// [`Plan::selection`] (`series` are its [`crate::session::Session::series`]): each
    /// event's counts summed per socket, or with `per_cpu` per CPU for a plan whose metrics
    /// are all per CPU ([`Plan::per_cpu`]), under `constants` with the interval's length.
    pub fn interval_values(
        &self,
        series: &[SeriesInfo],
        interval: &Interval,
        per_cpu: bool,
        constants: &Constants,
    ) -> Vec<MetricValue> {
        let mut sums = Sums::new(self, per_cpu);
        for (s, c) in series.iter().zip(&interval.counts) {
            sums.add(
                s.socket,
                s.cpu,
                s.event_index,
                Some((c.delta, c.running_ratio)),
            );
        }
        let constants = Constants {
            duration_seconds: Some(interval.seconds),
            ..*constants
        };
        self.values(&sums.finish(self, &interval.topdown), &constants)
    }
}
