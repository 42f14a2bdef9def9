//! Counts as metrics for a fleet: monotonic totals in the OpenMetrics text format, served over
//! HTTP for Prometheus to scrape (`pmu serve`) or printed once per interval
//! (`pmu watch --format openmetrics`).
//!
//! - [`Exporter`]: the metrics. Counting adds each interval's wrap-correct deltas to a 64-bit
//!   total per counter, so a 48-bit counter that wraps between two reads still gives a total
//!   that only grows, and `rate()` over it is right. It also keeps the exporter's own health:
//!   read errors per box, the time since the counters were programmed, how long scrapes take,
//!   and (perf backend) the fraction of time each counter was running.
//! - [`MetricGauges`]: derived metrics (`pmu serve --metric`) as `pmu_metric` gauges by
//!   socket, evaluated each interval from the exporter's deltas.
//! - [`http`]: a small HTTP/1.1 server for `/metrics`, with limits on header size, time to send
//!   a request, and concurrent connections, so a bad or slow client gets an answer or a timeout
//!   and never stalls counting.
//! - [`serving`]: what a server counts and exports, and its counting loop.
//! - [`web_config`]: TLS and basic-auth users from the Prometheus exporters' web
//!   configuration file (`--web.config.file`).
//!
//! Counting and scraping are independent: the counting loop calls [`Exporter::record`] on its
//! own interval; a scrape calls [`Exporter::encode`], which never touches the hardware. Each
//! interval's updates are applied under one lock, so a scrape sees every counter at the same
//! interval, never half of one.

mod derived;
pub mod http;
mod metrics;
mod openmetrics;
pub mod serving;
mod text;
pub mod web_config;

pub use derived::{MetricGauges, MetricInput};
pub use metrics::{Exporter, Series, SeriesLabels};
pub use openmetrics::Exposition;
pub use text::{negotiate, prometheus_text};

/// The content type of an OpenMetrics text exposition.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The content type of the Prometheus text format (0.0.4), for clients that do not ask for
/// OpenMetrics (promtool, the node exporter's textfile collector, curl).
pub const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
