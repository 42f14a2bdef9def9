//! Top-down level 1 and 2 on the older cores through `pmu watch --metric`: their events do
//! not fit four counters, so they are counted in turns of 10 ms, and each metric is exactly
//! what its formula gives on the scaled counts; so is the DRAM bandwidth of AMD's Zen 2 and 3,
//! eight channel events on the Data Fabric's four counters. The simulator runs its default
//! workload (compute-bound, `runtime/src/sim/workloads.rs`) at steady rates, so an event's
//! count scaled from its turns is its whole-interval count, and each metric is the value
//! worked out by hand from the workload; turn t (t = 0, 1, ...) puts events t*4 .. t*4 + 3
//! (modulo the n events) on the counters, so each event's running share is known exactly.

use std::process::Command;

use pmu_regs::metrics::Constants;
use pmu_runtime::metrics::{select, Plan};
use pmu_runtime::session::turns::{turn_count, turn_events};

/// `pmu watch --sim --metric GROUP` as CSV rows of (metric, value, running).
fn watch(processor: &str, group: &str, interval: &str, count: &str) -> Vec<Vec<String>> {
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args([
            "watch",
            "--sim",
            "--processor",
            processor,
            "--metric",
            group,
        ])
        .args(["--interval", interval, "--count", count, "-x,"])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{processor} {group}: {stderr}");
    assert_eq!(
        stdout.lines().next(),
        Some("time,socket,metric,value,unit,running")
    );
    stdout
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(1) == Some("0"))
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// Each planned event's share of `slices` 10 ms turns from slice `first` (from 1) with the
/// plan's events over 4 counters (`None`: all of them).
fn running(plan: &Plan, first: u64, slices: u64) -> Vec<Option<f64>> {
    let n = plan.events.len();
    let turns = turn_count(n, 4);
    (0..n)
        .map(|i| {
            let ran = (first..first + slices)
                .filter(|m| turn_events(((m - 1) as usize) % turns, n, 4).any(|(_, e)| e == i))
                .count();
            Some(ran as f64 / slices as f64).filter(|&r| r < 1.0)
        })
        .collect()
}

#[test]
fn openmetrics_and_json_carry_the_share_the_metrics_events_ran() {
    let run = |format: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
            .args([
                "watch",
                "--sim",
                "--processor",
                "skylake-sp",
                "--metric",
                "TmaL1",
            ])
            .args(["--interval", "0.1", "--count", "1"])
            .args(format)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Six events on four counters in turns of 10 ms: 0.7 or 0.6 of the interval each.
    let text = run(&["--format", "openmetrics"]);
    assert!(
        text.contains("# TYPE pmu_metric_running_ratio gauge"),
        "{text}"
    );
    let shares: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("pmu_metric_running_ratio{"))
        .collect();
    assert_eq!(shares.len(), 7, "{text}");
    assert!(shares.iter().all(|l| l.ends_with(" 0.6")), "{text}");
    assert!(
        shares[0].contains("metric=\"Frontend_Bound\",socket=\"0\""),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"));
    for line in run(&["--json"]).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["running"], 0.6, "{line}");
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn top_down_levels_1_and_2_in_turns_are_exactly_what_the_formulas_give() {
    // The simulator: two sockets of two CPUs, no SMT.
    let constants = Constants {
        socket_count: Some(2.0),
        cpu_count: Some(4.0),
        threads_per_core: Some(1.0),
        cores_per_socket: Some(2.0),
        duration_seconds: Some(0.06),
        ..Constants::NONE
    };
    for processor in [
        "xeon-e5-2600-v3",
        "xeon-e5-2600-v4",
        "skylake-sp",
        "cascade-lake",
    ] {
        for group in ["TmaL1", "TmaL2"] {
            let plan = Plan::new(
                processor,
                &select(processor, &[group.into()]).unwrap(),
                &constants,
            )
            .unwrap();
            let n = plan.events.len();
            assert!(n > 4, "{processor} {group}: {n} events fit the counters");
            // An interval of 60 ms: six turns of 10 ms; two intervals.
            let rows = watch(processor, group, "0.06", "2");
            assert_eq!(rows.len(), 2 * plan.metrics.len(), "{rows:?}");
            for (k, interval) in rows.chunks(plan.metrics.len()).enumerate() {
                let shares = running(&plan, 1 + 6 * k as u64, 6);
                let least = shares.iter().flatten().fold(1.0f64, |a, b| a.min(*b));
                for (row, m) in interval.iter().zip(&plan.metrics) {
                    assert_eq!(row[2], m.name);
                    let v: f64 = row[3]
                        .parse()
                        .unwrap_or_else(|_| panic!("{processor} {}: {}", m.name, row[3]));
                    assert!(v >= 0.0, "{processor} {}: {v}", m.name);
                    // Level 1 by hand (4000 slots a period): 400 not delivered, 2800
                    // retired, 2900 issued and 25 recovery cycles.
                    let by_hand = match m.name {
                        "Frontend_Bound" => Some(10.0),
                        "Bad_Speculation" => Some(5.0),
                        "Retiring" => Some(70.0),
                        "Backend_Bound" => Some(15.0),
                        _ => None,
                    };
                    if let Some(e) = by_hand {
                        assert!(close(v, e), "{processor} {}: {v} != {e}", m.name);
                    }
                    // The metric's row shows its least-running event's share (every
                    // event of the plan takes turns with the rest).
                    assert_eq!(row[5], format!("{:.2}%", least * 100.0));
                }
            }
        }
    }
}

#[test]
fn zen_2_and_3_dram_bandwidth_counted_in_turns_is_what_the_formula_gives() {
    let constants = Constants {
        duration_seconds: Some(0.06),
        ..Constants::NONE
    };
    for processor in ["amd-zen2", "amd-zen3"] {
        let metric = "memory_bandwidth_total";
        let plan = Plan::new(
            processor,
            &select(processor, &[metric.into()]).unwrap(),
            &constants,
        )
        .unwrap();
        // Eight DRAM channel events, each its own code, on the socket's one Data Fabric box.
        assert_eq!(plan.events.len(), 8, "{processor}");
        let rows = watch(processor, metric, "0.06", "2");
        assert_eq!(rows.len(), 2, "{rows:?}");
        // Two turns of four: each event ran half of the six 10 ms slices.
        assert!(running(&plan, 1, 6).iter().all(|r| *r == Some(0.5)));
        for row in &rows {
            // 8 channels x 12 requests in 1000 cycles of the 2 GHz clock x 64 bytes.
            let by_hand = 8.0 * 12.0 * 2e6 * 64.0 / 1e6;
            assert_eq!(row[2], metric);
            assert!(
                close(row[3].parse().unwrap(), by_hand),
                "{processor}: {} != {by_hand}",
                row[3]
            );
            assert_eq!(row[5], "50.00%");
        }
    }
}
