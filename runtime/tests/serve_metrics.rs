//! `pmu serve --metric` on the simulator running the compute-bound workload, where each
//! event counts what it is: each metric is the value its formula gives by hand
//! (support/families.rs), on every socket, for each processor family; and the part's
//! constants are exported with their sources.

#[path = "support/serve.rs"]
mod support;

#[path = "support/families.rs"]
mod families;

use std::time::Duration;

use families::{expected, matches, FAMILIES, WORKLOAD};
use support::{get, samples, start, wait_until};

fn serve(processor: &str, metrics: &[&str]) -> support::Served {
    let mut args = vec!["--sim", "--processor", processor, "-a", "--interval", "0.2"];
    args.extend(["--workload", WORKLOAD]);
    for m in metrics {
        args.extend(["--metric", m]);
    }
    start(&args)
}

/// The `pmu_metric` samples of `metric`, by socket.
fn values(text: &str, metric: &str) -> Vec<(String, f64)> {
    samples(text, "pmu_metric")
        .into_iter()
        .filter(|(labels, _)| labels.contains(&format!("metric=\"{metric}\"")))
        .collect()
}

#[test]
fn every_family_serves_what_the_formulas_predict_on_every_socket() {
    for (processor, metrics) in FAMILIES {
        let served = serve(processor, metrics);
        let scrape = || get(served.addr, "/metrics").1;
        assert!(
            wait_until(Duration::from_secs(60), || {
                samples(&scrape(), "pmu_intervals_total")
                    .values()
                    .any(|&n| n >= 3.0)
            }),
            "{processor}: three intervals within a minute"
        );
        let text = scrape();
        for m in metrics {
            let got = values(&text, m);
            assert_eq!(got.len(), 2, "{processor} {m}: a sample per socket\n{text}");
            for (labels, v) in got {
                assert!(
                    labels.contains(&format!("processor=\"{processor}\"")),
                    "{labels}"
                );
                assert!(
                    matches(processor, m, v),
                    "{processor} {m} {labels}: {v}, expected {:?}",
                    expected(processor, m)
                );
            }
        }
    }
}

#[test]
fn the_constants_are_served_with_where_they_came_from() {
    let served = serve("skylake-sp", &["llc_hit_rate"]);
    assert!(wait_until(Duration::from_secs(60), || {
        !samples(&get(served.addr, "/metrics").1, "pmu_constant").is_empty()
    }));
    let constants = samples(&get(served.addr, "/metrics").1, "pmu_constant");
    let find = |name: &str| {
        constants
            .iter()
            .find(|(l, _)| l.contains(&format!("constant=\"{name}\"")))
            .unwrap_or_else(|| panic!("{name} in {constants:?}"))
    };
    assert_eq!(*find("SOCKET_COUNT").1, 2.0);
    let (labels, tsc) = find("SYSTEM_TSC_FREQ");
    assert_eq!(*tsc, pmu_runtime::constants::SIM_TSC_HZ);
    assert!(labels.contains("source=\"the simulator's\""), "{labels}");
}

#[test]
fn metrics_are_refused_before_anything_is_bound_when_they_cannot_be_served() {
    let pmu = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_pmu"))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = pmu(&["--sim", "--metric", "llc_hit_rate"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--processor"), "{err}");
    let out = pmu(&[
        "--sim",
        "--processor",
        "skylake-sp",
        "--metric",
        "memory_bandwith_read",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("memory_bandwidth_read"), "{err}");
}

/// More events than the core's four counters (Skylake-SP's top-down level 1 and 2) are
/// counted in turns, as in `watch`: the counters' running ratios are exported below 1, and
/// `Frontend_Bound` = 100 x IDQ_UOPS_NOT_DELIVERED.CORE / (4 x CPU_CLK_UNHALTED.THREAD_P) =
/// 100 x 400 / 4000 under the compute-bound workload (the other level-1 and level-2 events
/// counting what they are beside it), to within the turns' scaling (each count scaled by its
/// share of the interval on the wall clock).
#[test]
fn metrics_with_more_events_than_counters_are_served_in_turns() {
    let constants = pmu_regs::metrics::Constants {
        threads_per_core: Some(1.0),
        ..pmu_regs::metrics::Constants::NONE
    };
    let chosen =
        pmu_runtime::metrics::select("skylake-sp", &["TmaL1".into(), "TmaL2".into()]).unwrap();
    let plan = pmu_runtime::metrics::Plan::new("skylake-sp", &chosen, &constants).unwrap();
    assert!(
        plan.events.len() > 4,
        "{} events fit the counters",
        plan.events.len()
    );
    let want = 100.0 * 400.0 / (4.0 * 1000.0);
    let served = serve("skylake-sp", &["TmaL1", "TmaL2"]);
    let scrape = || get(served.addr, "/metrics").1;
    assert!(
        wait_until(Duration::from_secs(60), || {
            samples(&scrape(), "pmu_intervals_total")
                .values()
                .any(|&n| n >= 5.0)
        }),
        "five intervals within a minute"
    );
    let text = scrape();
    let running = samples(&text, "pmu_counter_running_ratio");
    assert!(
        running.values().any(|&r| r > 0.0 && r < 1.0),
        "no counter ran part of the time:\n{text}"
    );
    let got = values(&text, "Frontend_Bound");
    assert_eq!(got.len(), 2, "a sample per socket\n{text}");
    for (labels, v) in got {
        assert!(
            (v - want).abs() < 0.1 * want,
            "{labels}: {v}, expected about {want}"
        );
    }
}
