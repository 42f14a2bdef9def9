//! Top-down level 1 and 2 on the older cores through `pmu watch --metric`: their events do
//! not fit four counters, so they are counted in turns of 10 ms, and each metric is exactly
//! what its formula gives on the scaled counts; so is the DRAM bandwidth of AMD's Zen 2 and 3,
//! eight channel events on the Data Fabric's four counters. The simulator's demo pace makes the i-th
//! planned event happen 1000 (i + 1) + 37 m times in the m-th 10 ms of simulated time, and
//! turn t (t = 0, 1, ...) puts events t*4 .. t*4 + 3 (modulo the n events) on the counters,
//! so what each event counted, and its scaled count, are known exactly.

use std::process::Command;

use pmu_regs::metrics::Constants;
use pmu_runtime::metrics::{select, Plan};
use pmu_runtime::session::turns::{turn_count, turn_events};

/// The demo pace: the i-th planned event's count in the m-th 10 ms (m from 1).
fn demo(i: usize, m: u64) -> u64 {
    1000 * (i as u64 + 1) + 37 * m
}

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

/// Each planned event's scaled count over `slices` 10 ms turns from slice `first` (from 1),
/// with the plan's events over 4 counters: what it counted in its turns, times the slices
/// over the slices it ran (rounded down, as the session scales in whole events). The
/// simulator counts an event's occurrences on every counter selecting its event code and
/// unit mask, whatever its counter mask: planned events of one code and unit mask (`codes`)
/// count each other's too.
fn scaled(plan: &Plan, codes: &[(u64, u64)], first: u64, slices: u64) -> Vec<(u64, Option<f64>)> {
    let n = plan.events.len();
    let turns = turn_count(n, 4);
    (0..n)
        .map(|i| {
            let ran: Vec<u64> = (first..first + slices)
                .filter(|m| turn_events(((m - 1) as usize) % turns, n, 4).any(|(_, e)| e == i))
                .collect();
            let same: Vec<usize> = (0..n).filter(|&j| codes[j] == codes[i]).collect();
            let counted: u64 = ran
                .iter()
                .flat_map(|&m| same.iter().map(move |&j| demo(j, m)))
                .sum();
            let scaled = u128::from(counted) * u128::from(slices) / ran.len() as u128;
            (
                scaled as u64,
                Some(ran.len() as f64 / slices as f64).filter(|&r| r < 1.0),
            )
        })
        .collect()
}

/// Each planned event's (event code, unit mask), as `pmu list --events --json` gives them.
fn codes(processor: &str, plan: &Plan) -> Vec<(u64, u64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args([
            "list",
            "--events",
            "--unit",
            "CORE",
            "--processor",
            processor,
            "--json",
        ])
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    plan.events
        .iter()
        .map(|e| {
            let found = list
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["name"] == e.name)
                .unwrap_or_else(|| panic!("{processor}: {} is not listed", e.name));
            (
                found["code"].as_u64().unwrap(),
                found["umask"].as_u64().unwrap(),
            )
        })
        .collect()
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
            let codes = codes(processor, &plan);
            assert!(n > 4, "{processor} {group}: {n} events fit the counters");
            // An interval of 60 ms: six turns of 10 ms; two intervals.
            let rows = watch(processor, group, "0.06", "2");
            assert_eq!(rows.len(), 2 * plan.metrics.len(), "{rows:?}");
            for (k, interval) in rows.chunks(plan.metrics.len()).enumerate() {
                let counts = scaled(&plan, &codes, 1 + 6 * k as u64, 6);
                let expected = plan.evaluate(&counts, &constants);
                let least = counts.iter().filter_map(|c| c.1).fold(1.0f64, f64::min);
                for ((row, m), e) in interval.iter().zip(&plan.metrics).zip(&expected) {
                    assert_eq!(row[2], m.name);
                    match e {
                        Some(e) => assert!(
                            close(row[3].parse().unwrap(), *e),
                            "{processor} {}: {} != {e}",
                            m.name,
                            row[3]
                        ),
                        None => assert_eq!(row[3], "n/a"),
                    }
                    // The metric's row shows its least-running event's share (every
                    // event of the plan takes turns with the rest).
                    assert_eq!(row[5], format!("{:.0}%", least * 100.0));
                }
                // Frontend_Bound, by hand: 100 x IDQ_UOPS_NOT_DELIVERED.CORE / (4 cycles).
                if let Some(at) = plan.metrics.iter().position(|m| m.name == "Frontend_Bound") {
                    let ev = |name: &str| {
                        let i = plan.events.iter().position(|e| e.name == name).unwrap();
                        counts[i].0 as f64
                    };
                    let by_hand = 100.0 * ev("IDQ_UOPS_NOT_DELIVERED.CORE")
                        / (4.0 * ev("CPU_CLK_UNHALTED.THREAD_P"));
                    let shown: f64 = interval[at][3].parse().unwrap();
                    assert!(close(shown, by_hand), "{processor}: {shown} != {by_hand}");
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
        let distinct: Vec<(u64, u64)> = (0..8).map(|i| (i, 0)).collect();
        let rows = watch(processor, metric, "0.06", "2");
        assert_eq!(rows.len(), 2, "{rows:?}");
        for (k, row) in rows.iter().enumerate() {
            let counts = scaled(&plan, &distinct, 1 + 6 * k as u64, 6);
            // Two turns of four: each event ran half of the six 10 ms slices.
            assert!(counts.iter().all(|c| c.1 == Some(0.5)), "{counts:?}");
            let requests: u64 = counts.iter().map(|c| c.0).sum();
            let by_hand = requests as f64 * 64.0 / 1e6 / 0.06;
            assert_eq!(row[2], metric);
            assert!(
                close(row[3].parse().unwrap(), by_hand),
                "{processor}: {} != {by_hand}",
                row[3]
            );
            assert_eq!(row[5], "50%");
        }
    }
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
