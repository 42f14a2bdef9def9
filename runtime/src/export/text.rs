//! The Prometheus text format (0.0.4) from an OpenMetrics exposition, for the clients that
//! read only that one.
//!
//! The two differ, for what the exporter writes, in three ways: a counter family's `# HELP`
//! and `# TYPE` name it without `_total` in OpenMetrics and with it in the Prometheus format;
//! OpenMetrics may carry `# UNIT` lines; and it ends with `# EOF`. Samples are the same.

use super::{OPENMETRICS_CONTENT_TYPE, PROMETHEUS_CONTENT_TYPE};

/// `openmetrics` in the Prometheus text format.
pub fn prometheus_text(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    // A family's HELP comes before its TYPE, which says whether the name takes `_total`.
    let mut help: Option<(&str, &str)> = None;
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            help = Some(rest.split_once(' ').unwrap_or((rest, "")));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let exposed = if kind == "counter" {
                format!("{name}_total")
            } else {
                name.to_string()
            };
            if let Some((_, text)) = help.take() {
                out.push_str(&format!("# HELP {exposed} {text}\n"));
            }
            out.push_str(&format!("# TYPE {exposed} {kind}\n"));
            continue;
        }
        if let Some((name, text)) = help.take() {
            out.push_str(&format!("# HELP {name} {text}\n"));
        }
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The format a client asks for in its `Accept` header: OpenMetrics where it names it (as
/// Prometheus does), else the Prometheus text format. Returns the content type and the body.
pub fn negotiate(accept: Option<&str>, openmetrics: String) -> (&'static str, String) {
    if accept.is_some_and(|a| a.contains("application/openmetrics-text")) {
        (OPENMETRICS_CONTENT_TYPE, openmetrics)
    } else {
        (PROMETHEUS_CONTENT_TYPE, prometheus_text(&openmetrics))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OM: &str = "# HELP pmu_events Events.\n# TYPE pmu_events counter\npmu_events_total{a=\"1\"} 5\n# HELP pmu_up Seconds.\n# TYPE pmu_up gauge\n# UNIT pmu_up seconds\npmu_up 1.5\n# EOF\n";

    #[test]
    fn counters_take_total_in_their_metadata_and_eof_goes() {
        assert_eq!(
            prometheus_text(OM),
            "# HELP pmu_events_total Events.\n# TYPE pmu_events_total counter\npmu_events_total{a=\"1\"} 5\n# HELP pmu_up Seconds.\n# TYPE pmu_up gauge\npmu_up 1.5\n"
        );
    }

    #[test]
    fn openmetrics_only_for_clients_that_ask() {
        let prometheus =
            "application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5";
        assert_eq!(
            negotiate(Some(prometheus), OM.into()).0,
            OPENMETRICS_CONTENT_TYPE
        );
        assert_eq!(negotiate(Some("*/*"), OM.into()).0, PROMETHEUS_CONTENT_TYPE);
        assert!(!negotiate(None, OM.into()).1.contains("# EOF"));
    }
}
