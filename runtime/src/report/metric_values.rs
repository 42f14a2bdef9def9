//! Derived metrics' values as `pmu watch --metric` prints them every interval: a table after
//! the constants the metrics read, CSV, JSON lines, or one exposition (OpenMetrics or the
//! Prometheus text format) per interval; and `perf stat --metric-only`'s layout
//! ([`render_metric_only`]).

use pmu_regs::metrics::MetricInfo;
use serde_json::json;

use crate::constants::PartConstants;
use crate::export::Exposition;
use crate::metrics::{format_value, without_float_noise, MetricValue};

/// How metric values are written, an interval at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricFormat {
    /// Aligned columns, after the constants the metrics read.
    Table,
    /// Comma-separated values.
    Csv,
    /// A JSON object per value.
    Json,
    /// One OpenMetrics exposition per interval.
    OpenMetrics,
    /// The Prometheus text format: OpenMetrics without its `# EOF`.
    PrometheusText,
}

impl MetricFormat {
    /// The lines before the first interval: the constants `part` the metrics read and the
    /// columns (with `per_cpu`, a cpu column after the socket).
    pub fn head(self, part: &PartConstants, per_cpu: bool) -> String {
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
    pub fn report(self, time: f64, values: &[MetricValue]) -> String {
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
            _ => values
                .iter()
                .map(|v| self.row(time, v, v.over_threshold(values)))
                .collect(),
        }
    }

    /// One value's row; a value of one CPU (-A) adds a cpu column; a value `over` its
    /// threshold ends with `<==` (table) or carries `over_threshold` (JSON, where known).
    fn row(self, time: f64, v: &MetricValue, over: Option<bool>) -> String {
        let running = v.running.unwrap_or(1.0);
        let running_pct = crate::report::counts::running_share(running);
        let (socket, cpu, m) = (v.site.socket, v.site.cpu, v.metric);
        match self {
            MetricFormat::Table => format!(
                "{time:>10.3}  {socket:>6}{}  {:<40} {:>16}  {:<16} {running_pct}{}\n",
                cpu.map_or(String::new(), |c| format!("  {c:>4}")),
                m.name,
                format_value(v.value),
                m.unit,
                if over == Some(true) { "  <==" } else { "" }
            ),
            MetricFormat::Csv => format!(
                "{time:.3},{socket}{},{},{},{},{running_pct}\n",
                cpu.map_or(String::new(), |c| format!(",{c}")),
                m.name,
                v.value
                    .map_or("n/a".into(), |v| without_float_noise(v).to_string()),
                m.unit
            ),
            _ => {
                let mut line = json!({"time": time, "socket": socket, "processor": v.processor,
                                      "metric": m.name, "value": v.value.map(without_float_noise),
                                      "unit": m.unit, "running": without_float_noise(running)});
                if let Some(c) = cpu {
                    line["cpu"] = json!(c);
                }
                if let Some(o) = over {
                    line["over_threshold"] = json!(o);
                }
                format!("{line}\n")
            }
        }
    }
}

// `--metric-only`: metric values alone, in `perf stat --metric-only`'s layout (perf 6.1,
// tools/perf/util/stat-display.c and stat-shadow.c), as `pmu stat --sim -M ... --metric-only`
// prints them: one line of headers, each a metric's unit and name two spaces apart (the name
// alone without a unit), then one line of values in the same order. As text each header is
// right-aligned in 20 columns and followed by a space (perf's `METRIC_ONLY_LEN`), each value
// right-aligned under its header (perf widens a value's column one past a header longer than
// 20, so its two lines drift apart; here they stay aligned); a value with a unit has one
// decimal, one without two (perf's `%8.1f` and `%8.2f`), a value that is not defined an
// empty field. With `-x SEP` each header and each value is followed by SEP, without padding.

/// The columns perf gives each header and value, before the space that follows it.
pub const METRIC_ONLY_WIDTH: usize = 20;

/// The unit as perf prints it: `%` for a percentage (perf's `ScaleUnit` `100%`).
fn unit_of(metric: &MetricInfo) -> &'static str {
    match metric.unit {
        "percent" => "%",
        u => u,
    }
}

/// The metric's header: its unit and name two spaces apart (`%  Backend_Bound`), or its name
/// alone where it has no unit.
pub fn metric_header(metric: &MetricInfo) -> String {
    match unit_of(metric) {
        "" => metric.name.to_string(),
        unit => format!("{unit}  {}", metric.name),
    }
}

/// The value as perf prints it: one decimal with a unit, two without; empty where it is not
/// defined.
pub fn metric_value_text(metric: &MetricInfo, value: Option<f64>) -> String {
    match (value, unit_of(metric)) {
        (None, _) => String::new(),
        (Some(v), "") => format!("{v:.2}"),
        (Some(v), _) => format!("{v:.1}"),
    }
}

/// The header line and the value line of `values` (each metric with its value, in the order
/// to print): text without `separator`, CSV with it.
pub fn render_metric_only(
    values: &[(&'static MetricInfo, Option<f64>)],
    separator: Option<&str>,
) -> String {
    let (head, line) = metric_only_fields(values, separator);
    format!("{head}\n{line}\n")
}

/// One interval's line of `values` under `-I`, after its `time` (perf's `%6lu.%09lu`), with
/// the header line before it where `header`: `#           time ` and the headers (text), or
/// ` time,` and the headers (CSV: perf writes that comma whatever the separator).
pub fn render_metric_only_interval(
    time: &str,
    values: &[(&'static MetricInfo, Option<f64>)],
    separator: Option<&str>,
    header: bool,
) -> String {
    let (head, line) = metric_only_fields(values, separator);
    let mut out = String::new();
    if header {
        let lead = if separator.is_some() {
            " time,"
        } else {
            "#           time "
        };
        out.push_str(&format!("{lead}{head}\n"));
    }
    out + &format!("{time}{}{line}\n", separator.unwrap_or(" "))
}

/// The headers and the values of `values`, each padded (text) or followed by `separator`.
fn metric_only_fields(
    values: &[(&'static MetricInfo, Option<f64>)],
    separator: Option<&str>,
) -> (String, String) {
    let (mut head, mut line) = (String::new(), String::new());
    for (metric, value) in values {
        let (h, v) = (metric_header(metric), metric_value_text(metric, *value));
        match separator {
            Some(sep) => {
                head.push_str(&format!("{h}{sep}"));
                line.push_str(&format!("{v}{sep}"));
            }
            None => {
                let width = METRIC_ONLY_WIDTH.max(h.len());
                head.push_str(&format!("{h:>width$} "));
                line.push_str(&format!("{v:>width$} "));
            }
        }
    }
    (head, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(name: &str, unit: &str) -> Option<&'static MetricInfo> {
        pmu_regs::metrics::for_processor("sapphire-rapids")
            .iter()
            .find(|m| m.name == name && m.unit == unit)
    }

    #[test]
    fn headers_values_and_separators_are_perfs() {
        let backend = metric("Backend_Bound", "percent").expect("a percentage metric");
        let ipc = metric("Info_Core_CoreIPC", "").expect("a metric without a unit");
        let text = render_metric_only(&[(backend, Some(79.614)), (ipc, Some(0.4))], None);
        // "%  Backend_Bound" is 16 characters: 4 spaces before it, one after.
        assert_eq!(
            text,
            "    %  Backend_Bound    Info_Core_CoreIPC \n                79.6                 0.40 \n"
        );
        let csv = render_metric_only(&[(backend, None), (ipc, Some(0.4))], Some(";"));
        assert_eq!(csv, "%  Backend_Bound;Info_Core_CoreIPC;\n;0.40;\n");
    }
}
