//! Derived metrics (`<processor>/metrics/*.xml`): a formula over a processor's events and
//! constants, with its unit and place in a hierarchy (Intel's top-down levels).

use serde::Serialize;

use super::formula::Expr;
use super::{EventSettings, Position};

/// Where a metric is evaluated: what the counts it reads are summed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricScope {
    /// Per logical CPU: every event is a core event.
    Cpu,
    /// Per socket: uncore boxes (and any core events) of the socket summed.
    Socket,
}

impl MetricScope {
    /// The name the generated crate, the JSON model and the CLI use.
    pub fn as_str(self) -> &'static str {
        match self {
            MetricScope::Cpu => "cpu",
            MetricScope::Socket => "socket",
        }
    }
}

/// How a metric event's value is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricRead {
    /// Counted by a general-purpose (or uncore) counter.
    Counted,
    /// `TOPDOWN.SLOTS`: fixed counter 3's count over the interval.
    Slots,
    /// `PERF_METRICS.<CATEGORY>`: the slots of one top-down category, from byte `n` of
    /// IA32_PERF_METRICS (slots x byte / 0xFF, as Linux's icl_get_metrics_event_value).
    SlotsShare(u8),
}

/// The top-down categories of IA32_PERF_METRICS in byte order, as Intel's metric files name
/// them after `PERF_METRICS.` (Linux perf_event.h: INTEL_TD_METRIC_RETIRING to _MEM_BOUND).
pub const PERF_METRICS_CATEGORIES: [&str; 8] = [
    "RETIRING",
    "BAD_SPECULATION",
    "FRONTEND_BOUND",
    "BACKEND_BOUND",
    "HEAVY_OPERATIONS",
    "BRANCH_MISPREDICTS",
    "FETCH_LATENCY",
    "MEMORY_BOUND",
];

impl MetricRead {
    /// The read an event name calls for: `TOPDOWN.SLOTS`, `PERF_METRICS.<CATEGORY>` (a
    /// known category, else `None`), or counted.
    pub fn from_event_name(name: &str) -> Option<MetricRead> {
        if name == "TOPDOWN.SLOTS" {
            return Some(MetricRead::Slots);
        }
        match name.strip_prefix("PERF_METRICS.") {
            Some(cat) => PERF_METRICS_CATEGORIES
                .iter()
                .position(|c| *c == cat)
                .map(|i| MetricRead::SlotsShare(i as u8)),
            None => Some(MetricRead::Counted),
        }
    }
}

/// An event a metric reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetricEvent {
    /// The formula's name for it (`a`).
    pub alias: String,
    /// The event's name in the processor's lists (`UNC_M_CAS_COUNT.RD`).
    pub name: String,
    /// The unit that counts it: a unit of the processor, or of its core PMU (`CORE`).
    pub unit: String,
    /// Settings the metric adds to the event (Intel's `:c1`, `:e1`, `:i1`), beyond the
    /// event's own.
    #[serde(flatten, serialize_with = "super::json::metric_settings")]
    pub settings: EventSettings,
    /// Counted, or read from the top-down registers.
    #[serde(flatten, serialize_with = "super::json::metric_read")]
    pub read: MetricRead,
}

/// A metric's threshold: a condition (non-zero: over it) over metrics of its processor.
#[derive(Debug, Clone, Serialize)]
#[serde(into = "String")]
pub struct Threshold {
    /// The condition as written in the spec (`min(Fetch_Latency > 10, Frontend_Bound > 15)`).
    pub formula: String,
    /// The metrics it reads; `Leaf::Event(n)` of `expr` is `metrics[n]`.
    pub metrics: Vec<String>,
    /// The condition.
    pub expr: Expr,
}

impl From<Threshold> for String {
    fn from(t: Threshold) -> String {
        t.formula
    }
}

/// A validated metric.
#[derive(Debug, Clone, Serialize)]
pub struct Metric {
    /// Intel's metric name (`memory_bandwidth_read`, `Frontend_Bound`).
    pub name: String,
    /// What it measures, in our words; empty when the spec gives none.
    pub description: String,
    /// Unit of measure (`MB/sec`, `percent`, empty for a ratio).
    pub unit: String,
    /// Category (`BW, MC`, `TMA`).
    pub category: String,
    /// Groups it belongs to (Intel's `MetricGroup`), each once, in file order.
    pub groups: Vec<String>,
    /// Top-down level (1 for metrics outside the hierarchy).
    pub level: u8,
    /// The metric above it in the hierarchy.
    pub parent: Option<String>,
    /// Per CPU or per socket.
    pub scope: MetricScope,
    /// Public source or document id.
    pub source: String,
    /// The events the formula reads, by index.
    pub events: Vec<MetricEvent>,
    /// The formula.
    #[serde(skip)]
    pub expr: Expr,
    /// The formula as written in the spec.
    pub formula: String,
    /// When the value calls for attention (Intel's `Threshold`, toplev's and perf's marker):
    /// a condition over metrics of the processor, by name; `None` for none.
    pub threshold: Option<Threshold>,
    /// Where it is declared.
    #[serde(skip)]
    pub at: Position,
}
