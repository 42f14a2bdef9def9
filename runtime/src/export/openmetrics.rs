//! One writer of the OpenMetrics text format for the families the library writes itself:
//! derived metrics (`pmu_metric`, `pmu_metric_over_threshold` where a metric has a
//! threshold, and `pmu_metric_running_ratio` where their events shared counters), as `pmu watch --metric --format openmetrics` prints them each interval and
//! `pmu serve --metric` exports them. Both write through [`Exposition::metric_values`], so
//! the two show the same families, labels and values.
//!
//! ```
//! use pmu_runtime::export::Exposition;
//! let mut text = Exposition::new();
//! text.family("pmu_up", "gauge", "Whether counting runs.");
//! text.sample("pmu_up", &[("socket", "0")], 1.0);
//! assert_eq!(
//!     text.finish(),
//!     "# HELP pmu_up Whether counting runs.\n# TYPE pmu_up gauge\npmu_up{socket=\"0\"} 1\n# EOF\n"
//! );
//! ```

use crate::metrics::MetricValue;

/// An exposition being written: families, each a `# HELP` and `# TYPE` line and its
/// samples.
#[derive(Debug, Default, Clone)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// An empty exposition.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts family `name` of `kind` (`gauge`, `counter`) with its `help` text.
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        self.text
            .push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
    }

    /// One sample of the family begun last, with its labels in order. A value that is not
    /// finite is left out (the series is absent until it is defined again), never written as
    /// NaN.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        if !value.is_finite() {
            return;
        }
        let labels: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
            .collect();
        self.text
            .push_str(&format!("{name}{{{}}} {value}\n", labels.join(",")));
    }

    /// The derived metrics' families for one interval's `values`: `pmu_metric` (by
    /// processor, metric, unit, socket, and CPU for a value of one CPU), then, where the
    /// events of a site shared counters, `pmu_metric_running_ratio`. An undefined value is
    /// left out.
    pub fn metric_values(&mut self, values: &[MetricValue]) {
        if values.is_empty() {
            return;
        }
        let by = if values.iter().any(|v| v.site.cpu.is_some()) {
            "socket and CPU"
        } else {
            "socket"
        };
        self.family(
            "pmu_metric",
            "gauge",
            &format!(
                "A derived metric over the last counting interval, by {by} (pmu list --metrics)."
            ),
        );
        for v in values {
            let Some(value) = v.value else { continue };
            let value = crate::metrics::without_float_noise(value);
            self.metric_sample("pmu_metric", v, true, value);
        }
        self.over_threshold(values);
        if values.iter().all(|v| v.running.is_none()) {
            return;
        }
        self.family(
            "pmu_metric_running_ratio",
            "gauge",
            "The smallest share of the interval a metric's events were on a counter (below 1: counted in turns or multiplexed, and scaled).",
        );
        for v in values {
            let Some(running) = v.running else { continue };
            self.metric_sample("pmu_metric_running_ratio", v, false, running);
        }
    }

    /// `pmu_metric_over_threshold`: 1 where a value is over its metric's threshold (Intel's
    /// `Threshold`, as toplev flags a bottleneck), 0 where it is under; no sample where the
    /// metric has no threshold or a value it reads is missing.
    fn over_threshold(&mut self, values: &[MetricValue]) {
        let verdicts: Vec<(&MetricValue, bool)> = values
            .iter()
            .filter_map(|v| v.over_threshold(values).map(|o| (v, o)))
            .collect();
        if verdicts.is_empty() {
            return;
        }
        self.family(
            "pmu_metric_over_threshold",
            "gauge",
            "1 where the metric is over its threshold (Intel's metric lists: where to look next), 0 where under.",
        );
        for (v, over) in verdicts {
            let value = f64::from(u8::from(over));
            self.metric_sample("pmu_metric_over_threshold", v, false, value);
        }
    }

    /// One sample of a metric's family, labelled processor, metric, (unit,) socket, and CPU
    /// for a value of one CPU: the one place the metric families' labels are built.
    fn metric_sample(&mut self, family: &str, v: &MetricValue, with_unit: bool, value: f64) {
        let socket = v.site.socket.to_string();
        let cpu = v.site.cpu.map(|c| c.to_string());
        let mut labels = vec![("processor", v.processor), ("metric", v.metric.name)];
        if with_unit {
            labels.push(("unit", v.metric.unit));
        }
        labels.push(("socket", &socket));
        if let Some(c) = &cpu {
            labels.push(("cpu", c));
        }
        self.sample(family, &labels, value);
    }

    /// The text so far, without the closing `# EOF` (to go on inside a larger exposition, or
    /// for the Prometheus text format, which has none).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The whole exposition, ending in `# EOF`.
    pub fn finish(mut self) -> String {
        self.text.push_str("# EOF\n");
        self.text
    }
}

/// A label value as the text format quotes it: backslash, double quote and newline escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_and_undefined_values_left_out() {
        let mut text = Exposition::new();
        text.family("m", "gauge", "h");
        text.sample("m", &[("unit", "a\"b\\c\nd")], 0.5);
        text.sample("m", &[("unit", "x")], f64::NAN);
        text.sample("m", &[("unit", "y")], f64::INFINITY);
        assert_eq!(
            text.text(),
            "# HELP m h\n# TYPE m gauge\nm{unit=\"a\\\"b\\\\c\\nd\"} 0.5\n"
        );
    }
}
