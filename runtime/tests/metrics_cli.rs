//! `pmu watch --metric` and `pmu list --metrics` on the simulator: a workload of known rates
//! (the session's demo pace: in the n-th 10 ms step, the i-th event of the plan happens
//! 1000 (i + 1) + 37 n times in every counted box and CPU) gives each metric exactly the
//! value its formula predicts: memory read and write bandwidth (the socket's iMC channels
//! summed), the LLC hit rate and top-down level 1, for each processor family with Intel's
//! metric files (E5 v3/v4, Skylake-SP and Cascade Lake; from Ice Lake-SP to Granite Rapids
//! bandwidth and the LLC hit rate, top-down from `PERF_METRICS` being in `topdown_cli.rs`)
//! and for the older parts with the guides' formulas (E5 v1/v2: bandwidth, the LLC hit rate
//! and top-down level 1 from Linux perf's; Xeon 7500: the LLC hit rate); for AMD, Linux perf's formulas (the L3 hit rate on
//! Zen 2 to 5, UMC read and write bandwidth and PipelineL1 on Zen 4 and 5; Zen 2 and 3's
//! Data Fabric bandwidth, counted in turns, is in `turns_cli.rs`); and per CPU with -A.

use std::process::Command;

#[path = "support/families.rs"]
#[allow(dead_code)]
mod families;

fn pmu(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(args)
        .output()
        .expect("pmu runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The demo pace: the i-th planned event's count per box in the n-th 10 ms step (n from 1).
fn demo(i: u64, n: u64) -> f64 {
    (1000 * (i + 1) + 37 * n) as f64
}

/// `watch --metric` as CSV: (time, socket, metric, value) rows.
fn watch(processor: &str, metrics: &[&str], extra: &[&str]) -> Vec<(f64, u32, String, String)> {
    let mut args = vec!["watch", "--sim", "--processor", processor];
    for m in metrics {
        args.extend(["--metric", m]);
    }
    args.extend(["--interval", "0.01", "--count", "3", "-x,"]);
    args.extend(extra);
    let (ok, out, err) = pmu(&args);
    assert!(ok, "{args:?}: {err}");
    out.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].to_string(),
                f[3].to_string(),
            )
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

const FAMILIES: [&str; 4] = [
    "xeon-e5-2600-v3",
    "xeon-e5-2600-v4",
    "skylake-sp",
    "cascade-lake",
];

#[test]
fn memory_bandwidth_is_the_cas_counts_of_every_channel_times_64_bytes() {
    for p in FAMILIES.into_iter().chain([
        "xeon-e5-2600",
        "xeon-e5-2600-v2",
        "ice-lake-sp",
        "sapphire-rapids",
        "emerald-rapids",
        "granite-rapids",
        "sierra-forest",
        "clearwater-forest",
        "amd-zen4",
        "amd-zen5",
    ]) {
        for metric in ["memory_bandwidth_read", "memory_bandwidth_write"] {
            // Alone, the metric's events are the plan's first: event i counts demo(i, n).
            let (unit, events) = families::cas_events(p, metric);
            let channels = families::boxes(p, unit);
            assert!(channels >= 4.0, "{p}");
            let rows = watch(p, &[metric], &[]);
            assert_eq!(rows.len(), 3, "{p}: {rows:?}");
            for (n, (_, socket, name, value)) in rows.iter().enumerate() {
                let n = n as u64 + 1;
                let cas: f64 = (0..events as u64).map(|i| demo(i, n)).sum();
                let expected = channels * cas * 64.0 / 1e6 / 0.01;
                assert_eq!((*socket, name.as_str()), (0, metric));
                assert!(
                    close(value.parse().unwrap(), expected),
                    "{p} {metric} step {n}: {value} != {expected}"
                );
            }
        }
    }
}

/// Metrics of events told apart by their unit-mask extension alone (Ice Lake-SP's CHA TOR
/// inserts: one select and umask, the local and remote requests in the extension): the
/// session programs each event's extension and the simulated CHA counts a stream only on
/// counters whose extension matches, so the share is what the formula gives, not a half.
#[test]
fn numa_local_reads_are_told_apart_by_the_unit_mask_extension() {
    let metric = "numa_reads_addressed_to_local_dram";
    let rows = watch("ice-lake-sp", &[metric], &[]);
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (n, (_, socket, name, value)) in rows.iter().enumerate() {
        let n = n as u64 + 1;
        // 100 * (local DRD + local DRD prefetch) / (those + remote DRD + remote prefetch):
        // the plan's events 0 to 3, each counted in every CHA alike.
        let local = demo(0, n) + demo(1, n);
        let expected = 100.0 * local / (local + demo(2, n) + demo(3, n));
        assert_eq!((*socket, name.as_str()), (0, metric));
        assert!(
            close(value.parse().unwrap(), expected),
            "step {n}: {value} != {expected}"
        );
    }
}

#[test]
fn llc_hit_rate_and_top_down_level_1_are_what_the_formulas_give() {
    for p in FAMILIES.into_iter().chain([
        "ice-lake-sp",
        "sapphire-rapids",
        "emerald-rapids",
        "granite-rapids",
        "sierra-forest",
        "clearwater-forest",
        "xeon-e5-2600",
        "xeon-e5-2600-v2",
        "xeon-7500",
        "amd-zen2",
        "amd-zen3",
        "amd-zen4",
        "amd-zen5",
    ]) {
        // llc_hit_rate = 100 (refs - misses) / refs (on AMD, L3 lookups and misses summed
        // over the socket's L3 complexes, each counting at the same pace); the pace gives more misses than
        // references, so the simulated rate is negative: the formula, not a model of caches.
        let rows = watch(p, &["llc_hit_rate"], &[]);
        assert_eq!(rows.len(), 3, "{p}: {rows:?}");
        for (n, (_, _, _, v)) in rows.iter().enumerate() {
            let n = n as u64 + 1;
            let (refs, misses) = (demo(0, n), demo(1, n));
            let expected = 100.0 * (refs - misses) / refs;
            assert!(
                close(v.parse().unwrap(), expected),
                "{p}: {v} != {expected}"
            );
        }
    }
    for p in FAMILIES
        .into_iter()
        .chain(["xeon-e5-2600", "xeon-e5-2600-v2"])
    {
        // Without SMT (the simulator has none) Frontend_Bound and Retiring read their event
        // and the thread's unhalted cycles: 100 a / (4 c).
        for m in ["Frontend_Bound", "Retiring"] {
            for (n, (_, _, _, v)) in watch(p, &[m], &[]).iter().enumerate() {
                let n = n as u64 + 1;
                let expected = 100.0 * demo(0, n) / (4.0 * demo(1, n));
                assert!(
                    close(v.parse().unwrap(), expected),
                    "{p} {m}: {v} != {expected}"
                );
            }
        }
        // Bad_Speculation = 100 (issued - retired + 4 recovery) / (4 cycles).
        for (n, (_, _, _, v)) in watch(p, &["Bad_Speculation"], &[]).iter().enumerate() {
            let n = n as u64 + 1;
            let (issued, retired, recovery, cycles) =
                (demo(0, n), demo(1, n), demo(2, n), demo(3, n));
            let expected = 100.0 * (issued - retired + 4.0 * recovery) / (4.0 * cycles);
            assert!(
                close(v.parse().unwrap(), expected),
                "{p}: {v} != {expected}"
            );
        }
    }
    // AMD's PipelineL1 (Linux perf's pipeline.json): each share is its events over the
    // dispatch slots, 6 a cycle on Zen 4 and 8 on Zen 5; alone, a metric's events are the
    // plan's first and the cycles its last.
    for (p, width) in [("amd-zen4", 6.0), ("amd-zen5", 8.0)] {
        for m in [
            "frontend_bound",
            "backend_bound",
            "smt_contention",
            "retiring",
        ] {
            for (n, (_, _, _, v)) in watch(p, &[m], &[]).iter().enumerate() {
                let n = n as u64 + 1;
                let expected = 100.0 * demo(0, n) / (width * demo(1, n));
                assert!(
                    close(v.parse().unwrap(), expected),
                    "{p} {m}: {v} != {expected}"
                );
            }
        }
        // bad_speculation = 100 (dispatched - retired) / slots.
        for (n, (_, _, _, v)) in watch(p, &["bad_speculation"], &[]).iter().enumerate() {
            let n = n as u64 + 1;
            let expected = 100.0 * (demo(0, n) - demo(1, n)) / (width * demo(2, n));
            assert!(
                close(v.parse().unwrap(), expected),
                "{p}: {v} != {expected}"
            );
        }
    }
}

/// AMD's PipelineL2 (Linux perf's names differ between Zen 4 and Zen 5), each metric alone so
/// that its i-th event counts demo(i, n), and the dispatch slots a cycle.
#[test]
fn amd_top_down_level_2_is_what_the_formulas_give() {
    type Expect = fn(&dyn Fn(u64) -> f64, f64) -> f64;
    let checks: [([&str; 2], Expect); 8] = [
        // The latency event is the no-ops event with a counter mask of the slot count.
        (
            ["frontend_bound_latency", "frontend_bound_by_latency"],
            |d, w| 100.0 * w * d(0) / (w * d(1)),
        ),
        // Its two events differ only in the counter mask, which the simulator does not
        // model: each counts both events' occurrences.
        (
            ["frontend_bound_bandwidth", "frontend_bound_by_bandwidth"],
            |d, w| {
                let both = d(0) + d(1);
                100.0 * (both - w * both) / (w * d(2))
            },
        ),
        (
            [
                "bad_speculation_mispredicts",
                "bad_speculation_from_mispredicts",
            ],
            |d, w| 100.0 * (d(0) - d(1)) / (w * d(4)) * d(2) / (d(2) + d(3)),
        ),
        (
            [
                "bad_speculation_pipeline_restarts",
                "bad_speculation_from_pipeline_restarts",
            ],
            |d, w| 100.0 * (d(0) - d(1)) / (w * d(4)) * d(3) / (d(2) + d(3)),
        ),
        (
            ["backend_bound_memory", "backend_bound_by_memory"],
            |d, w| 100.0 * d(0) / (w * d(3)) * d(1) / d(2),
        ),
        (["backend_bound_cpu", "backend_bound_by_cpu"], |d, w| {
            100.0 * d(0) / (w * d(3)) * (1.0 - d(1) / d(2))
        }),
        (["retiring_fastpath", "retiring_from_fastpath"], |d, w| {
            100.0 * d(0) / (w * d(2)) * (1.0 - d(1) / d(0))
        }),
        (["retiring_microcode", "retiring_from_microcode"], |d, w| {
            100.0 * d(0) / (w * d(2)) * d(1) / d(0)
        }),
    ];
    for (g, (p, width)) in [("amd-zen4", 6.0), ("amd-zen5", 8.0)]
        .into_iter()
        .enumerate()
    {
        for (names, expect) in &checks {
            let m = names[g];
            for (n, (_, _, _, v)) in watch(p, &[m], &[]).iter().enumerate() {
                let n = n as u64 + 1;
                let expected = expect(&|i| demo(i, n), width);
                assert!(
                    close(v.parse().unwrap(), expected),
                    "{p} {m}: {v} != {expected}"
                );
            }
        }
        let listed = pmu_regs::metrics::for_processor(p)
            .iter()
            .filter(|m| m.groups.contains(&"PipelineL2"))
            .count();
        assert_eq!(listed, checks.len(), "{p}");
    }
}

#[test]
fn every_socket_gets_a_row_and_json_says_null_for_n_a() {
    let rows = watch("skylake-sp", &["memory_bandwidth_read"], &["-a"]);
    let sockets: std::collections::BTreeSet<u32> = rows.iter().map(|r| r.1).collect();
    assert!(sockets.len() >= 2, "{rows:?}");
    let (ok, out, err) = pmu(&[
        "watch",
        "--sim",
        "--processor",
        "xeon-e5-2600-v3",
        "--metric",
        "llc_hit_rate",
        "--interval",
        "0.01",
        "--count",
        "1",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["metric"], "llc_hit_rate");
    assert_eq!(v["unit"], "percent");
    assert!(v["value"].is_number());
}

/// `-A` (like `perf stat -M -A`): a row per CPU for metrics of core events, each CPU's value
/// from its own counts; a metric of the socket's boxes is refused with -A, before counting.
#[test]
fn per_cpu_rows_with_no_aggr_for_metrics_of_core_events() {
    // `watch --sim --processor xeon-e5-2600 --metric M -A` and more, one short interval.
    let watch_a = |metric: &str, extra: &[&str]| {
        let mut args = vec!["watch", "--sim", "--processor", "xeon-e5-2600"];
        args.extend(["--metric", metric, "-A", "--interval", "0.01"]);
        args.extend(extra);
        pmu(&args)
    };
    let (ok, out, err) = watch_a("ipc", &["-a", "--count", "2", "-x,"]);
    assert!(ok, "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("time,socket,cpu,metric,value,unit,running")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let cpus: std::collections::BTreeSet<(&str, &str)> =
        rows.iter().map(|r| (r[1], r[2])).collect();
    let sockets: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[1]).collect();
    // The simulated machine: two sockets of two CPUs, a row each per interval.
    assert_eq!((cpus.len(), sockets.len(), rows.len()), (4, 2, 8), "{out}");
    for (i, r) in rows.iter().enumerate() {
        let n = i as u64 / 4 + 1;
        // Each CPU counts the pace on its own counters: ipc = inst / cycles of that CPU.
        let expected = demo(0, n) / demo(1, n);
        assert_eq!(r[3], "ipc");
        assert!(
            close(r[4].parse().unwrap(), expected),
            "{r:?} != {expected}"
        );
    }
    // JSON lines and OpenMetrics carry the CPU too.
    let (ok, out, err) = watch_a("ipc", &["--cpu", "1", "--count", "1", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        (v["cpu"].as_u64(), v["socket"].as_u64()),
        (Some(1), Some(0)),
        "{v}"
    );
    let (ok, out, err) = watch_a("ipc", &["--count", "1", "--format", "openmetrics"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("metric=\"ipc\",unit=\"instructions per cycle\",socket=\"0\",cpu=\"0\"}"),
        "{out}"
    );
    // Memory bandwidth reads the socket's iMC boxes: no per-CPU value, refused by name.
    let (ok, out, err) = watch_a("MemoryBW", &["--count", "1"]);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(err.contains("-A"), "{err}");
    assert!(
        err.contains("memory_bandwidth_read, memory_bandwidth_write"),
        "{err}"
    );
}

#[test]
fn a_group_selects_several_and_what_does_not_fit_is_refused_before_counting() {
    let (ok, out, err) = pmu(&[
        "watch",
        "--sim",
        "--processor",
        "xeon-e5-2600-v3",
        "--metric",
        "TmaL1",
        "--interval",
        "0.1",
        "--count",
        "1",
    ]);
    // Six events on four counters: counted in turns of 10 ms, ten in the interval, so two
    // events ran 7 of them and the rest 6; a metric's row shows its least-running event's.
    assert!(ok, "{err}");
    assert!(err.is_empty(), "{err}");
    let rows: Vec<&str> = out.lines().skip(2).collect();
    assert!(rows.len() >= 4, "{out}");
    assert!(rows.iter().all(|r| r.ends_with(" 60%")), "{out}");
    let (ok, _, err) = pmu(&[
        "watch",
        "--sim",
        "--processor",
        "xeon-e5-2600-v3",
        "--metric",
        "memory_bandwidth_reed",
    ]);
    assert!(!ok);
    assert!(err.contains("memory_bandwidth_read"), "{err}");
    let (ok, _, err) = pmu(&[
        "watch",
        "--sim",
        "--processor",
        "xeon-e5-2600-v3",
        "--metric",
        "llc_hit_rate",
        "--metric",
        "memory_bandwidth_read",
    ]);
    assert!(!ok);
    assert!(err.contains("separate runs"), "{err}");
    let (ok, _, err) = pmu(&["watch", "--sim", "--metric", "llc_hit_rate"]);
    assert!(!ok);
    assert!(err.contains("--processor"), "{err}");
    let rows = watch("xeon-e5-2600-v3", &["BW, MC"], &[]);
    assert!(
        rows.iter().any(|r| r.2 == "memory_bandwidth_total"),
        "{rows:?}"
    );
}

#[test]
fn list_metrics_shows_units_and_descriptions() {
    let (ok, out, err) = pmu(&["list", "--metrics", "--processor", "xeon-e5-2600"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("memory_bandwidth_read") && out.contains("MB/sec"),
        "{out}"
    );
    assert!(out.contains("64-byte line"), "{out}");
    // Intel's metrics come without a description (their sentences are not copied): the
    // formula stands in, its aliases spelt out as events, with the settings a metric adds.
    let (ok, out, _) = pmu(&["list", "--metrics", "--processor", "skylake-sp"]);
    assert!(ok);
    let cpi = out.lines().find(|l| l.contains(" cpi ")).unwrap();
    assert!(
        cpi.ends_with("= CPU_CLK_UNHALTED.THREAD_P / INST_RETIRED.ANY_P"),
        "{cpi}"
    );
    assert!(out.contains("(ICACHE_16B.IFDATA_STALL + 2 * ICACHE_16B.IFDATA_STALL:c1:e1)"));
    let (ok, out, _) = pmu(&["--json", "list", "--metrics", "--processor", "skylake-sp"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let fb = v
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "Frontend_Bound")
        .unwrap();
    assert_eq!(fb["level"], 1);
    assert_eq!(fb["scope"], "cpu");
}

/// `list --metrics PATTERN` keeps the metrics whose name, category, groups or description
/// the pattern matches, as `perf list PATTERN` does; none matching is an error.
#[test]
fn list_metrics_takes_a_pattern() {
    let (ok, out, err) = pmu(&[
        "list",
        "--metrics",
        "--processor",
        "sapphire-rapids",
        "iio_bandwidth",
    ]);
    assert!(ok, "{err}");
    let names: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(
        names,
        ["iio_bandwidth_read", "iio_bandwidth_write"],
        "{out}"
    );
    let (ok, _, err) = pmu(&["list", "--metrics", "no_such_metric_anywhere"]);
    assert!(!ok && err.contains("no metric matches"), "{err}");
}

/// Sierra Forest's E-cores have no IA32_PERF_METRICS: Intel's E-core top-down
/// (sierraforest_metrics.json) reads each level-1 class from a counted event over six slots a
/// cycle, 100 a / (6 x CPU_CLK_UNHALTED.CORE_P), and the four classes are counted alike.
#[test]
fn sierra_forest_top_down_level_1_is_counted_from_events_over_six_slots() {
    for m in [
        "Frontend_Bound",
        "Bad_Speculation",
        "Backend_Bound",
        "Retiring",
    ] {
        let rows = watch("sierra-forest", &[m], &[]);
        assert_eq!(rows.len(), 3, "{m}: {rows:?}");
        for (n, (_, _, name, v)) in rows.iter().enumerate() {
            let n = n as u64 + 1;
            let expected = 100.0 * demo(0, n) / (6.0 * demo(1, n));
            assert_eq!(name, m);
            assert!(
                close(v.parse().unwrap(), expected),
                "sierra-forest {m}: {v} != {expected}"
            );
        }
    }
    // Clearwater Forest's metric file has no top-down metric: none is made up.
    assert!(pmu_regs::metrics::for_processor("clearwater-forest")
        .iter()
        .all(|m| !["Frontend_Bound", "Retiring"].contains(&m.name)));
}
