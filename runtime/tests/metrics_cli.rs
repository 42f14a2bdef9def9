//! `pmu watch --metric` and `pmu list --metrics` on the simulator running its default
//! workload (compute-bound, `runtime/src/sim/workloads.rs`): each metric's value worked out
//! by hand from the workload's published numbers and the vendor's formula: memory read and
//! write bandwidth (the socket's iMC channels summed), the LLC hit rate and top-down level 1,
//! for each processor family with Intel's metric files (E5 v3/v4, Skylake-SP and Cascade
//! Lake; from Ice Lake-SP to Granite Rapids bandwidth and the LLC hit rate, top-down from
//! `PERF_METRICS` being in `topdown_cli.rs`) and for the older parts with the guides'
//! formulas (E5 v1/v2: bandwidth, the LLC hit rate and top-down level 1 from Linux perf's;
//! Xeon 7500: the LLC hit rate); for AMD, Linux perf's formulas (the L3 hit rate on Zen 2 to
//! 5, UMC read and write bandwidth and PipelineL1 and L2 on Zen 4 and 5); and per CPU with -A.
//!
//! The workload, per 1000 cycles (core and uncore clocks both 2 GHz): 8 CAS reads and 4 CAS
//! writes a memory channel (Granite Rapids: 4 and 2 a sub-channel); 20 LLC references, 2
//! misses; 2300 instructions in 1000 unhalted cycles; Intel's 4000 slots: 400 not delivered,
//! 2800 retired, 2900 issued and 25 recovery cycles; AMD's 6000 slots (8000 on Zen 5): 600
//! (800) with no op from the front end of which 50 cycles with none at all, 1200 (1600)
//! backend stalls, 300 (400) SMT contention, 3600 (4800) ops retired of 3900 (5200)
//! dispatched, 4 mispredicts and 1 resync, 100 of 300 not-complete cycles waiting on a load,
//! 36 microcode ops.

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

/// CAS reads of one channel in MB/s: 8 in 1000 cycles of the 2 GHz uncore clock, 16
/// million a second, 64 bytes each.
const READ_MBS_PER_CHANNEL: f64 = 16e6 * 64.0 / 1e6;
/// CAS writes: 4 in 1000 cycles.
const WRITE_MBS_PER_CHANNEL: f64 = 8e6 * 64.0 / 1e6;

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
        "amd-zen6",
    ]) {
        for (metric, per_channel) in [
            ("memory_bandwidth_read", READ_MBS_PER_CHANNEL),
            ("memory_bandwidth_write", WRITE_MBS_PER_CHANNEL),
        ] {
            // Every channel of the socket alike (Granite Rapids' two sub-channel events add
            // up to the channel's).
            let (unit, _) = families::cas_events(p, metric);
            let channels = families::boxes(p, unit);
            assert!(channels >= 4.0, "{p}");
            let rows = watch(p, &[metric], &[]);
            assert_eq!(rows.len(), 3, "{p}: {rows:?}");
            for (n, (_, socket, name, value)) in rows.iter().enumerate() {
                let expected = channels * per_channel;
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
/// inserts: one select and umask, the local and remote requests in the extension). The
/// workload names none of the four, so each counts its default: the local share is 2 of 4.
#[test]
fn numa_local_reads_are_the_formulas_share() {
    let metric = "numa_reads_addressed_to_local_dram";
    let rows = watch("ice-lake-sp", &[metric], &[]);
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (n, (_, socket, name, value)) in rows.iter().enumerate() {
        assert_eq!((*socket, name.as_str()), (0, metric));
        assert!(close(value.parse().unwrap(), 50.0), "step {n}: {value}");
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
        "amd-zen6",
    ]) {
        // llc_hit_rate = 100 (refs - misses) / refs = 100 x 18 / 20 (on AMD, L3 lookups and
        // misses summed over the socket's L3 complexes, each counting alike).
        let rows = watch(p, &["llc_hit_rate"], &[]);
        assert_eq!(rows.len(), 3, "{p}: {rows:?}");
        for (_, _, _, v) in &rows {
            assert!(close(v.parse().unwrap(), 90.0), "{p}: {v} != 90");
        }
    }
    for p in FAMILIES
        .into_iter()
        .chain(["xeon-e5-2600", "xeon-e5-2600-v2"])
    {
        // With SMT (the simulated core has two threads, the sibling running the workload
        // half a period behind) the core's clocks are CPU_CLK_UNHALTED.THREAD_P_ANY / 2 =
        // 2 x 1000 / 2: Frontend_Bound = 100 x 400 / 4000, Retiring = 100 x 2800 / 4000,
        // Bad_Speculation = 100 (2900 - 2800 + 4 x INT_MISC.RECOVERY_CYCLES_ANY / 2) / 4000,
        // both threads' 2 x 25 recovery cycles (on the E5-2600 v1 to v4, whose lists give the
        // event a counter mask of 1, the cycles either thread recovers: as many, since the
        // sibling recovers in other cycles). Its five events take turns on the four counters
        // a thread has with SMT on the E5-2600 and v2: rows of 0.1 s, each event on a counter
        // for several turns of 10 ms.
        let bad = 5.0;
        for (m, expected) in [
            ("Frontend_Bound", 10.0),
            ("Retiring", 70.0),
            ("Bad_Speculation", bad),
        ] {
            let out = pmu(&[
                "watch",
                "--sim",
                "--processor",
                p,
                "--metric",
                m,
                "--interval",
                "0.1",
                "--count",
                "1",
                "-x,",
            ]);
            assert!(out.0, "{p} {m}: {}", out.2);
            for v in out
                .1
                .lines()
                .skip(1)
                .map(|l| l.split(',').nth(3).unwrap().to_string())
            {
                assert!(
                    close(v.parse().unwrap(), expected),
                    "{p} {m}: {v} != {expected}"
                );
            }
        }
    }
    // AMD's PipelineL1 (Linux perf's pipeline.json): each share is its events over the
    // dispatch slots, 6 a cycle on Zen 4 and 8 on Zen 5: 600 / 6000, 1200 / 6000, 300 / 6000,
    // 3600 / 6000, (3900 - 3600) / 6000, and on Zen 5 the same shares of 8000.
    for p in ["amd-zen4", "amd-zen5", "amd-zen6"] {
        for (m, expected) in [
            ("frontend_bound", 10.0),
            ("backend_bound", 20.0),
            ("smt_contention", 5.0),
            ("retiring", 60.0),
            ("bad_speculation", 5.0),
        ] {
            for (_, _, _, v) in watch(p, &[m], &[]) {
                assert!(
                    close(v.parse().unwrap(), expected),
                    "{p} {m}: {v} != {expected}"
                );
            }
        }
    }
}

/// AMD's PipelineL2 (Linux perf's names differ between Zen 4 and Zen 5), each metric alone,
/// by hand from the workload (Zen 4's slots, then Zen 5's).
#[test]
fn amd_top_down_level_2_is_what_the_formulas_give() {
    let checks: [([&str; 2], [f64; 2]); 8] = [
        // 100 x width x (cycles with all slots empty: 50) / (width x 1000).
        (
            ["frontend_bound_latency", "frontend_bound_by_latency"],
            [5.0, 5.0],
        ),
        // 100 x (600 - 6 x 50) / 6000; 100 x (800 - 8 x 50) / 8000.
        (
            ["frontend_bound_bandwidth", "frontend_bound_by_bandwidth"],
            [5.0, 5.0],
        ),
        // Bad speculation 5 % x 4 mispredicts / (4 + 1 resync), and x 1 / 5.
        (
            [
                "bad_speculation_mispredicts",
                "bad_speculation_from_mispredicts",
            ],
            [4.0, 4.0],
        ),
        (
            [
                "bad_speculation_pipeline_restarts",
                "bad_speculation_from_pipeline_restarts",
            ],
            [1.0, 1.0],
        ),
        // Backend 20 % x 100 / 300 load cycles, and x (1 - 100 / 300).
        (
            ["backend_bound_memory", "backend_bound_by_memory"],
            [20.0 / 3.0, 20.0 / 3.0],
        ),
        (
            ["backend_bound_cpu", "backend_bound_by_cpu"],
            [40.0 / 3.0, 40.0 / 3.0],
        ),
        // Retiring 60 % x (1 - 36 / 3600) on Zen 4, x (1 - 36 / 4800) on Zen 5.
        (
            ["retiring_fastpath", "retiring_from_fastpath"],
            [59.4, 59.55],
        ),
        (
            ["retiring_microcode", "retiring_from_microcode"],
            [0.6, 0.45],
        ),
    ];
    // Zen 6 has Zen 5's names and slots (amdzen6 pipeline.json), resyncs counted by
    // bp_fe_redir.resync.
    for (g, p) in [(0, "amd-zen4"), (1, "amd-zen5"), (1, "amd-zen6")] {
        for (names, expected) in &checks {
            let m = names[g];
            for (_, _, _, v) in watch(p, &[m], &[]) {
                assert!(
                    close(v.parse().unwrap(), expected[g]),
                    "{p} {m}: {v} != {}",
                    expected[g]
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
    for r in &rows {
        // Each CPU counts on its own counters: ipc = 2300 / 1000 on every one.
        let expected = 2.3;
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
    assert!(rows.iter().all(|r| r.ends_with(" 60.00%")), "{out}");
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
/// cycle, 100 a / (6 x CPU_CLK_UNHALTED.CORE_P), each class from its own event.
#[test]
fn sierra_forest_top_down_level_1_is_counted_from_events_over_six_slots() {
    // The compute-bound workload's E-core slots per 1000 cycles (6000 in all): frontend
    // 6 x 50 + 3 x 100 = 600, bad speculation 6 x 50 = 300, backend 6 x 150 = 900, retiring
    // 6 x 600 + 4 x 150 = 4200; CPU_CLK_UNHALTED.CORE_P counts every cycle.
    for (m, slots) in [
        ("Frontend_Bound", 600.0),
        ("Bad_Speculation", 300.0),
        ("Backend_Bound", 900.0),
        ("Retiring", 4200.0),
    ] {
        let rows = watch("sierra-forest", &[m], &[]);
        assert_eq!(rows.len(), 3, "{m}: {rows:?}");
        for (_, _, name, v) in &rows {
            let expected = 100.0 * slots / (6.0 * 1000.0);
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

/// Issue 40: `Info_System_UPI_Data_Transmit_BW` is a rate in MB/s whatever the interval.
/// Intel's record (sapphirerapids_metrics.json, the same in Emerald and Granite Rapids')
/// is `UNC_UPI_TxL_FLITS.ALL_DATA * 64 / 9 / 1000000` with `CountDomain` `MB/sec`; the same
/// file's `upi_data_transmit_bw` divides that by the interval in seconds. The workload does
/// not name the event, so each UPI link counts its default, 1 in 1000 cycles of the 2 GHz
/// uncore clock: 2 million flits a second, of which 64/9 bytes each are data.
#[test]
fn upi_transmit_bandwidth_is_a_rate_whatever_the_interval() {
    let metric = "Info_System_UPI_Data_Transmit_BW";
    for p in ["sapphire-rapids", "emerald-rapids", "granite-rapids"] {
        let links = families::boxes(p, "UPI");
        assert!(links >= 2.0, "{p}");
        let expected = links * 2e6 * 64.0 / 9.0 / 1e6;
        for interval in ["0.01", "0.02"] {
            let args = [
                "watch",
                "--sim",
                "--processor",
                p,
                "--metric",
                metric,
                "--interval",
                interval,
                "--count",
                "2",
                "-x,",
            ];
            let (ok, out, err) = pmu(&args);
            assert!(ok, "{args:?}: {err}");
            let mut lines = out.lines();
            assert_eq!(
                lines.next(),
                Some("time,socket,metric,value,unit,running"),
                "{out}"
            );
            let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
            assert_eq!(rows.len(), 2, "{p} {interval}: {out}");
            for row in rows {
                assert_eq!((row[2], row[4]), (metric, "MB/sec"), "{p}: {row:?}");
                let value: f64 = row[3].parse().unwrap();
                assert!(
                    (value - expected).abs() <= 1e-6 * expected,
                    "{p} at {interval} s: {value} != {expected}"
                );
            }
        }
    }
}

/// Issue 40, one output contract (docs/pmu.md): `watch` event rows and `--metric` rows print
/// the running share alike (`perf stat`'s `60.00%`: two decimals) in CSV, and as JSON one
/// object per row with `time`, `socket`, `processor` and `running` (a share from 0 to 1).
#[test]
fn event_rows_and_metric_rows_follow_one_contract() {
    let two_decimals = |s: &str| {
        let digits = s.strip_suffix('%').unwrap_or_else(|| panic!("{s}"));
        let (whole, frac) = digits.split_once('.').unwrap_or_else(|| panic!("{s}"));
        assert!(
            !whole.is_empty() && whole.bytes().all(|b| b.is_ascii_digit()),
            "{s}"
        );
        assert!(
            frac.len() == 2 && frac.bytes().all(|b| b.is_ascii_digit()),
            "{s}"
        );
    };
    let base = ["watch", "--sim", "--processor", "sapphire-rapids"];
    let metric = ["--metric", "Info_System_UPI_Data_Transmit_BW"];
    // Five events on UPI0's four counters: they take turns, so the rows show `running`.
    let events = [
        "--unit",
        "UPI0",
        "--event",
        "UNC_UPI_TxL_FLITS.ALL_DATA",
        "--event",
        "UNC_UPI_CLOCKTICKS",
        "--event",
        "UNC_UPI_TxL_FLITS.NON_DATA",
        "--event",
        "UNC_UPI_TxL_FLITS.ALL_NULL",
        "--event",
        "UNC_UPI_RxL_FLITS.ALL_DATA",
    ];
    let tail = ["--interval", "0.05", "--count", "1"];
    for what in [&metric[..], &events[..]] {
        let args = [&base[..], what, &tail[..], &["-x,"]].concat();
        let (ok, out, err) = pmu(&args);
        assert!(ok, "{args:?}: {err}");
        let mut lines = out.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = head.iter().position(|c| *c == "running").expect("running");
        assert_eq!(head[..2], ["time", "socket"], "{out}");
        let mut rows = 0;
        for l in lines {
            two_decimals(l.split(',').nth(at).unwrap());
            rows += 1;
        }
        assert!(rows >= 1, "{out}");
        let args = [&base[..], what, &tail[..], &["--json"]].concat();
        let (ok, out, err) = pmu(&args);
        assert!(ok, "{args:?}: {err}");
        assert_eq!(out.lines().count(), rows, "one object per row: {out}");
        for l in out.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["time"].is_f64() && v["socket"].is_u64(), "{v}");
            assert_eq!(v["processor"], "sapphire-rapids", "{v}");
            let running = v["running"].as_f64().unwrap_or_else(|| panic!("{v}"));
            assert!(running > 0.0 && running <= 1.0, "{v}");
        }
    }
}
