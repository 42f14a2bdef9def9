//! Metrics files (`<processor>/metrics/*.xml`): raw structs, as written.

use serde::Deserialize;

/// A metrics file: `<metrics processor=".." source="..">` with one `<metric>` per metric.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetrics {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@processor")]
    pub processor: String,
    /// A public source or a document of the processor, for every metric without its own.
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(default)]
    pub metric: Vec<RawMetric>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetric {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@unit", default)]
    pub unit: String,
    #[serde(rename = "@category", default)]
    pub category: String,
    #[serde(rename = "@groups", default)]
    pub groups: String,
    #[serde(rename = "@level")]
    pub level: Option<String>,
    #[serde(rename = "@parent")]
    pub parent: Option<String>,
    /// This metric's own source (a document section, say), instead of the file's.
    #[serde(rename = "@source")]
    pub source: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub event: Vec<RawMetricEvent>,
    pub formula: RawFormula,
    /// When the metric's value calls for attention (Intel's `Threshold`), over metric names.
    pub threshold: Option<RawFormula>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetricEvent {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@alias")]
    pub alias: String,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@threshold")]
    pub threshold: Option<String>,
    #[serde(rename = "@invert")]
    pub invert: Option<String>,
    #[serde(rename = "@edge")]
    pub edge: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFormula {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "$text", default)]
    pub text: String,
}
