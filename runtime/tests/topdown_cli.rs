//! Top-down levels 1 and 2 on Ice Lake-SP and later through `pmu watch --metric`: their
//! formulas read IA32_PERF_METRICS's shares of fixed counter 3's slots, which the session
//! reads and zeroes each interval. Every value is worked out by hand from the default
//! workload (compute-bound, `runtime/src/sim/workloads.rs`): IA32_PERF_METRICS reads
//! retiring 0xB3, bad speculation 0x0D, frontend bound 0x1A, backend bound 0x25 (of 0xFF),
//! heavy operations 0x0A, branch mispredicts 0x0A, fetch latency 0x10, memory bound 0x0C;
//! the slots are 5 a cycle on Ice Lake-SP and 6 from Sapphire Rapids on; per 1000 cycles
//! INT_MISC.UOP_DROPPING (not named: the default) counts 1, the recoveries start 5 times
//! (INT_MISC.CLEARS_COUNT), 4 branches are mispredicted and 1 machine clear happens, and 40
//! cycles deliver no uop at all.

use std::process::Command;

use pmu_regs::metrics::Constants;
use pmu_runtime::metrics::{select, Plan};

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

/// A share of IA32_PERF_METRICS in percent.
fn share(byte: u32) -> f64 {
    100.0 * f64::from(byte) / 255.0
}

/// Level 1 and 2 by hand, for a core of `slots` slots a cycle.
fn by_hand(processor: &str, slots: f64) -> Vec<(&'static str, f64)> {
    let dropping = 100.0 / (1000.0 * slots);
    let frontend = share(0x1A) - dropping;
    let retiring = share(0xB3);
    if processor == "ice-lake-sp" {
        // Backend adds 5 slots for each of the 5 clears a period; bad speculation is the
        // rest; fetch latency is 5 x 40 cycles less the 1 dropped uop of 5000 slots; the
        // mispredicts' share of bad speculation is 4 of 5 clears.
        let backend = share(0x25) + 100.0 * 5.0 * 5.0 / (1000.0 * slots);
        let bad = 100.0 - frontend - backend - retiring;
        let latency = 100.0 * (5.0 * 40.0 - 1.0) / (1000.0 * slots);
        return vec![
            ("Frontend_Bound", frontend),
            ("Bad_Speculation", bad),
            ("Backend_Bound", backend),
            ("Retiring", retiring),
            ("Fetch_Latency", latency),
            ("Fetch_Bandwidth", frontend - latency),
            ("Branch_Mispredicts", bad * 4.0 / 5.0),
            ("Machine_Clears", bad / 5.0),
        ];
    }
    let backend = share(0x25);
    let bad = 100.0 - frontend - backend - retiring;
    let latency = share(0x10) - dropping;
    vec![
        ("Frontend_Bound", frontend),
        ("Bad_Speculation", bad),
        ("Backend_Bound", backend),
        ("Retiring", retiring),
        ("Fetch_Latency", latency),
        ("Fetch_Bandwidth", frontend - latency),
        ("Branch_Mispredicts", share(0x0A)),
        ("Machine_Clears", bad - share(0x0A)),
        ("Memory_Bound", share(0x0C)),
        ("Core_Bound", backend - share(0x0C)),
        ("Heavy_Operations", share(0x0A)),
        ("Light_Operations", retiring - share(0x0A)),
    ]
}

fn close(a: f64, b: f64) -> bool {
    // The session scales each category's slots down to whole slots: about 1e-9.
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

#[test]
fn top_down_levels_1_and_2_from_perf_metrics_are_what_the_workload_gives() {
    for (processor, slots) in [
        ("ice-lake-sp", 5.0),
        ("sapphire-rapids", 6.0),
        ("emerald-rapids", 6.0),
        ("granite-rapids", 6.0),
    ] {
        let rows: Vec<(String, String)> = ["TmaL1", "TmaL2"]
            .iter()
            .flat_map(|g| watch(processor, g))
            .collect();
        let value = |name: &str| -> f64 {
            let row = rows.iter().find(|r| r.0 == name);
            row.unwrap_or_else(|| panic!("{processor}: no {name} in {rows:?}"))
                .1
                .parse()
                .unwrap()
        };
        for (name, expected) in by_hand(processor, slots) {
            let shown = value(name);
            assert!(
                close(shown, expected),
                "{processor} {name}: {shown} != {expected}"
            );
        }
        let level1: f64 = [
            "Frontend_Bound",
            "Bad_Speculation",
            "Backend_Bound",
            "Retiring",
        ]
        .iter()
        .map(|m| value(m))
        .sum();
        assert!(
            close(level1, 100.0),
            "{processor}: level 1 sums to {level1}"
        );
        // Each level-2 pair adds up to its parent.
        assert!(close(
            value("Memory_Bound") + value("Core_Bound"),
            value("Backend_Bound")
        ));
        assert!(close(
            value("Light_Operations") + value("Heavy_Operations"),
            value("Retiring")
        ));
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
/// workload's retiring share of the level-1 shares (which sum to 0xFF): 0xB3 of 0xFF, to the
/// rounding of each share's slots.
#[test]
fn a_metric_of_perf_metrics_alone_is_counted() {
    let retiring = share(0xB3);
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
