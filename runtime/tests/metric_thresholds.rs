//! Metrics over their thresholds in `pmu watch --metric` (the table's `<==`, JSON's
//! `over_threshold`) and in the exposition `pmu serve --metric` exports
//! (`pmu_metric_over_threshold`), on a simulated Sapphire Rapids. The values are worked out
//! here by hand from the workload's IA32_PERF_METRICS bytes (runtime/src/sim/workloads.rs;
//! bytes 0-4: retiring, bad speculation, frontend bound, backend bound, heavy operations, in
//! 255ths, Linux's INTEL_TD_METRIC_* order), and the verdicts from Intel's thresholds
//! (sapphirerapids_metrics.json, `Threshold`): Backend_Bound > 20, Frontend_Bound > 15,
//! Bad_Speculation > 15, Retiring > 70 or Heavy_Operations > 10.

#[path = "support/serve.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use pmu_runtime::machine::workload_named as workload;
use serde_json::Value;

/// The level-1 shares and heavy operations of `name`'s workload, in percent, by hand.
fn shares(name: &str) -> [f64; 5] {
    let pm = workload(name).unwrap().perf_metrics;
    let byte = |n: u32| ((pm >> (8 * n)) & 0xff) as f64;
    let level1 = byte(0) + byte(1) + byte(2) + byte(3);
    [0, 1, 2, 3, 4].map(|n| 100.0 * byte(n) / level1)
}

fn watch(workload: &str, metrics: &[&str], format: Option<&str>) -> String {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("pmu"));
    c.args([
        "watch",
        "--sim",
        "--processor",
        "sapphire-rapids",
        "--workload",
        workload,
    ]);
    c.args(["--count", "1", "--interval", "0.01"]);
    for m in metrics {
        c.args(["--metric", m]);
    }
    if let Some(f) = format {
        c.args(["--format", f]);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The table's row of `metric` on socket 0: its value and whether it ends with `<==`.
fn table_row(text: &str, metric: &str) -> (f64, bool) {
    let words: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.get(1) == Some(&"0") && w.get(2) == Some(&metric))
        .unwrap_or_else(|| panic!("no row for {metric} in\n{text}"));
    (words[3].parse().unwrap(), words.last() == Some(&"<=="))
}

#[test]
fn the_table_and_json_mark_what_is_over_its_threshold() {
    // Memory-bound: backend bound far over 20, frontend bound and bad speculation under 15.
    let [retiring, bad, frontend, backend, _] = shares("memory-bound");
    assert!(backend > 20.0 && frontend < 15.0 && bad < 15.0 && retiring < 70.0);
    let text = watch("memory-bound", &["TmaL1"], None);
    let (v, over) = table_row(&text, "Backend_Bound");
    assert!(
        (v - backend).abs() < 0.01 && over,
        "{v} against {backend}\n{text}"
    );
    // Frontend bound: its share less the dropped uops (a rare event), under 15 either way.
    let (_, over) = table_row(&text, "Frontend_Bound");
    assert!(!over, "{text}");
    // Bad speculation: Intel's formula is what level 1 leaves over (1 - the other three),
    // so the frontend's dropped uops move it by as much; under 15 either way.
    let (v, over) = table_row(&text, "Bad_Speculation");
    assert!((v - bad).abs() < 0.1 && !over, "{v} against {bad}\n{text}");
    // Retiring's threshold reads Heavy_Operations, which TmaL1 does not hold: no verdict.
    let json = watch("memory-bound", &["TmaL1"], Some("json"));
    let lines: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |m: &str| {
        lines
            .iter()
            .find(|l| l["metric"] == m && l["socket"] == 0)
            .unwrap()
    };
    assert_eq!(of("Backend_Bound")["over_threshold"], true);
    assert_eq!(of("Frontend_Bound")["over_threshold"], false);
    assert!(of("Retiring").get("over_threshold").is_none(), "{json}");
}

#[test]
fn a_threshold_that_reads_another_metric_is_judged_when_that_metric_is_watched() {
    // Compute-bound: retiring 179/255 of the slots, 70.2 %, just over 70; heavy operations
    // 3.9 %, under 10; backend bound 14.5 %, under 20.
    let [retiring, _, _, backend, heavy] = shares("compute-bound");
    assert!(retiring > 70.0 && heavy < 10.0 && backend < 20.0);
    let text = watch("compute-bound", &["TmaL1", "Heavy_Operations"], None);
    let (v, over) = table_row(&text, "Retiring");
    assert!(
        (v - retiring).abs() < 0.01 && over,
        "{v} against {retiring}\n{text}"
    );
    let (v, over) = table_row(&text, "Backend_Bound");
    assert!((v - backend).abs() < 0.01 && !over, "{text}");
}

#[test]
fn the_exposition_carries_the_verdicts_in_watch_and_serve() {
    let text = watch("memory-bound", &["TmaL1"], Some("openmetrics"));
    let verdicts = support::samples(&text, "pmu_metric_over_threshold");
    let of = |v: &std::collections::BTreeMap<String, f64>, metric: &str| {
        v.iter()
            .find(|(l, _)| {
                l.contains(&format!("metric=\"{metric}\"")) && l.contains("socket=\"0\"")
            })
            .map(|(_, v)| *v)
    };
    assert_eq!(of(&verdicts, "Backend_Bound"), Some(1.0), "{text}");
    assert_eq!(of(&verdicts, "Frontend_Bound"), Some(0.0), "{text}");
    assert_eq!(of(&verdicts, "Retiring"), None, "{text}");
    let served = support::start(&[
        "--sim",
        "--processor",
        "sapphire-rapids",
        "--workload",
        "memory-bound",
        "-a",
        "--interval",
        "0.2",
        "--metric",
        "TmaL1",
    ]);
    let scrape = || support::get(served.addr, "/metrics").1;
    assert!(
        support::wait_until(Duration::from_secs(60), || {
            !support::samples(&scrape(), "pmu_metric_over_threshold").is_empty()
        }),
        "a verdict within a minute"
    );
    let text = scrape();
    let verdicts = support::samples(&text, "pmu_metric_over_threshold");
    for socket in ["0", "1"] {
        let on = |metric: &str| {
            verdicts
                .iter()
                .find(|(l, _)| {
                    l.contains(&format!("metric=\"{metric}\""))
                        && l.contains(&format!("socket=\"{socket}\""))
                })
                .map(|(_, v)| *v)
        };
        assert_eq!(on("Backend_Bound"), Some(1.0), "socket {socket}\n{text}");
        assert_eq!(on("Bad_Speculation"), Some(0.0), "socket {socket}\n{text}");
    }
}
