//! Derived metrics' values as `pmu watch --metric` prints them every interval: a table after
//! the constants the metrics read, CSV, JSON lines, or one exposition (OpenMetrics or the
//! Prometheus text format) per interval.

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
            _ => values.iter().map(|v| self.row(time, v)).collect(),
        }
    }

    /// One value's row; a value of one CPU (-A) adds a cpu column.
    fn row(self, time: f64, v: &MetricValue) -> String {
        let running = v.running.unwrap_or(1.0);
        let running_pct = crate::report::counts::running_share(running);
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
                format!("{line}\n")
            }
        }
    }
}
