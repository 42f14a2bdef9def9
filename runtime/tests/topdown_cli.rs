//! Top-down levels 1 and 2 on Ice Lake-SP and later through `pmu watch --metric`: their
//! formulas read IA32_PERF_METRICS's shares of fixed counter 3's slots, which the session
//! reads and zeroes each interval, and each metric is exactly what its formula gives. The
//! simulator's demo pace makes the i-th counted event happen 1000 (i + 1) + 37 m times in
//! the m-th 10 ms, TOPDOWN.SLOTS 1000 times the rate of the event after the last
//! ([`pmu_runtime::session::SLOTS_PER_EVENT`]), and IA32_PERF_METRICS reads the demo
//! workload's shares ([`pmu_runtime::sim::SimTopdown::DEMO_PROFILE`]).

use std::process::Command;

use pmu_regs::metrics::{Constants, MetricRead};
use pmu_runtime::metrics::{select, Plan};
use pmu_runtime::session::turns::{turn_count, turn_events};
use pmu_runtime::session::SLOTS_PER_EVENT;
use pmu_runtime::sim::SimTopdown;

/// The demo pace: the i-th event's count in the m-th 10 ms (m from 1).
fn demo(i: usize, m: u64) -> u64 {
    1000 * (i as u64 + 1) + 37 * m
}

/// `pmu watch --sim --metric GROUP` on socket 0, one interval of 100 ms: (metric, value).
fn watch(processor: &str, group: &str) -> Vec<(String, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args([
            "watch",
            "--sim",
            "--processor",
            processor,
            "--metric",
            group,
        ])
        .args(["--interval", "0.1", "--count", "1", "-x,"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{processor} {group}: {stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f[1], "0", "{l}");
            (f[2].to_string(), f[3].to_string())
        })
        .collect()
}

/// Each counted event's (event code, unit mask): the simulator counts an event's
/// occurrences on every counter selecting its code and unit mask, so planned events of one
/// code and unit mask count each other's too.
fn codes(processor: &str, plan: &Plan) -> Vec<(u64, u64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args([
            "list",
            "--events",
            "--unit",
            "CORE",
            "--processor",
            processor,
        ])
        .arg("--json")
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = list.as_array().unwrap();
    plan.events
        .iter()
        .map(|e| {
            let x = list.iter().find(|x| x["name"] == e.name).unwrap();
            (x["code"].as_u64().unwrap(), x["umask"].as_u64().unwrap())
        })
        .collect()
}

/// Each counted event's count over the ten 10 ms steps of the interval, scaled where the
/// events take turns on the simulator's four counters (turn t puts events t*4 .. t*4 + 3,
/// modulo n, on them; the session scales in whole events), with its running fraction.
fn scaled(n: usize, codes: &[(u64, u64)]) -> Vec<(u64, Option<f64>)> {
    let turns = turn_count(n, 4);
    (0..n)
        .map(|i| {
            let ran: Vec<u64> = (1..=10u64)
                .filter(|m| turn_events(((m - 1) as usize) % turns, n, 4).any(|(_, e)| e == i))
                .collect();
            let same: Vec<usize> = (0..n).filter(|&j| codes[j] == codes[i]).collect();
            let counted: u64 = ran
                .iter()
                .flat_map(|&m| same.iter().map(move |&j| demo(j, m)))
                .sum();
            let scaled = u128::from(counted) * 10 / ran.len() as u128;
            let ratio = ran.len() as f64 / 10.0;
            (scaled as u64, Some(ratio).filter(|&r| r < 1.0))
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn top_down_levels_1_and_2_from_perf_metrics_are_exactly_what_the_formulas_give() {
    let constants = Constants {
        socket_count: Some(2.0),
        cpu_count: Some(4.0),
        threads_per_core: Some(1.0),
        cores_per_socket: Some(2.0),
        duration_seconds: Some(0.1),
        ..Constants::NONE
    };
    for (processor, shares) in [
        ("ice-lake-sp", 4u32),
        ("sapphire-rapids", 8),
        ("emerald-rapids", 8),
        ("granite-rapids", 8),
    ] {
        let pm = SimTopdown::DEMO_PROFILE & (u64::MAX >> (64 - 8 * shares));
        for group in ["TmaL1", "TmaL2"] {
            let chosen = select(processor, &[group.into()]).unwrap();
            let plan = Plan::new(processor, &chosen, &constants).unwrap();
            assert!(!plan.topdown.is_empty(), "{processor} {group}");
            let n = plan.events.len();
            let codes = codes(processor, &plan);
            let mut counts = scaled(n, &codes);
            // One CPU of socket 0 counts; its slots over the ten 10 ms steps.
            let slots: u64 = (1..=10).map(|m| SLOTS_PER_EVENT * demo(n, m)).sum();
            for r in &plan.topdown {
                let v = match *r {
                    MetricRead::Slots => slots,
                    MetricRead::SlotsShare(b) => slots * (pm >> (8 * b) & 0xFF) / 0xFF,
                    MetricRead::Counted => unreachable!(),
                };
                counts.push((v, None));
            }
            let expected = plan.evaluate(&counts, &constants);
            let rows = watch(processor, group);
            assert_eq!(rows.len(), plan.metrics.len(), "{rows:?}");
            for ((row, m), e) in rows.iter().zip(&plan.metrics).zip(&expected) {
                assert_eq!(row.0, m.name);
                let e = e.unwrap_or_else(|| panic!("{processor} {}: n/a", m.name));
                let shown: f64 = row.1.parse().unwrap();
                assert!(close(shown, e), "{processor} {}: {shown} != {e}", m.name);
            }
            // Retiring by hand: 100 x its share of the level-1 shares' slots.
            if let Some(at) = plan.metrics.iter().position(|m| m.name == "Retiring") {
                let share = |b: u32| (slots * (pm >> (8 * b) & 0xFF) / 0xFF) as f64;
                let by_hand = 100.0 * share(0) / (share(0) + share(1) + share(2) + share(3));
                let shown: f64 = rows[at].1.parse().unwrap();
                assert!(close(shown, by_hand), "{processor}: {shown} != {by_hand}");
            }
        }
    }
}

/// Skylake-SP's top-down metrics are ordinary core events: nothing reads PERF_METRICS.
#[test]
fn older_cores_plan_no_top_down_register() {
    let constants = Constants {
        threads_per_core: Some(1.0),
        ..Constants::NONE
    };
    let skx = Plan::new(
        "skylake-sp",
        &select("skylake-sp", &["TmaL1".into()]).unwrap(),
        &constants,
    )
    .unwrap();
    assert!(skx.topdown.is_empty());
}

/// A metric that reads only the top-down registers (`Retiring`: PERF_METRICS shares, no
/// counted event) still opens them on a CPU of each socket asked for, and its value is the
/// workload's retiring share of the level-1 shares (which sum to 0xFF), to the rounding of
/// each share's slots.
#[test]
fn a_metric_of_perf_metrics_alone_is_counted() {
    let retiring = 100.0 * (SimTopdown::DEMO_PROFILE & 0xFF) as f64 / 255.0;
    for processor in ["ice-lake-sp", "sapphire-rapids", "granite-rapids"] {
        let plan = Plan::new(
            processor,
            &select(processor, &["Retiring".into()]).unwrap(),
            &Constants::NONE,
        )
        .unwrap();
        assert!(plan.events.is_empty(), "{processor}: {:?}", plan.events);
        let rows = watch(processor, "Retiring");
        assert_eq!(rows.len(), 1, "{rows:?}");
        let shown: f64 = rows[0].1.parse().unwrap();
        assert!(
            (shown - retiring).abs() < 1e-3,
            "{processor}: {shown} != {retiring}"
        );
    }
}
