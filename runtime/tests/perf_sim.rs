//! `pmu watch --backend perf` against `--backend raw` on the same injected events, through
//! the command line: the perf path (the spec's PMU names, encoding through the tree's format
//! files, groups per CPU, reads with times, interval deltas) over `sim_perf::SimPerf`, a
//! kernel driver over the simulator, selected by the hidden test hook
//! `PMU_SIM_EVENT_SOURCES` (see `perf_cli::SIM_EVENT_SOURCES`), and the raw path over the
//! same simulator. Every unit of every processor whose spec names its kernel PMUs is
//! watched both ways; the per-interval counts must be the same.

#[path = "support/kernel_pmus.rs"]
mod kernel_pmus;

use assert_cmd::Command;
use pmu_regs::{CounterKind, PROCESSORS};
use serde_json::Value;

/// The simulator's sockets start at CPUs 0 and 2 (two sockets of two CPUs).
const CPUMASK: &str = "0,2";

fn watch(tree: Option<&std::path::Path>, backend: &str, extra: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::cargo_bin("pmu").unwrap();
    cmd.env_remove("PMU_SIM_EVENT_SOURCES");
    if let Some(t) = tree {
        cmd.env("PMU_SIM_EVENT_SOURCES", t);
    }
    let out = cmd
        .args(["--json", "watch", "--sim", "--backend", backend])
        .args(["--count", "3", "--interval", "0.01"])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// One row of an interval: socket, counter register, event, count.
type Row = (u64, String, String, u64);

/// Per interval: every row, and the backends.
fn counts(out: &str) -> (Vec<Vec<Row>>, Vec<String>) {
    let mut backends = Vec::new();
    let intervals = out
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["counts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    backends.push(c["backend"].as_str().unwrap().to_string());
                    (
                        c["socket"].as_u64().unwrap(),
                        c["counter"].as_str().unwrap().to_string(),
                        c["event"].as_str().unwrap().to_string(),
                        c["count"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .collect();
    (intervals, backends)
}

/// Each unit of each processor whose units name kernel PMUs: `PROCESSOR:UNITn` for its first
/// box, with as many events as it has general counters (up to two).
fn cases() -> Vec<(&'static str, String, usize)> {
    let mut out = Vec::new();
    for p in PROCESSORS {
        if !p
            .units
            .iter()
            .any(|u| u.pmu.is_some_and(|m| !m.perf.is_empty()))
        {
            continue;
        }
        for u in p.units {
            let Some(pmu) = u.pmu else { continue };
            let general = pmu
                .counters
                .iter()
                .filter(|c| c.kind == CounterKind::General && c.control.is_some())
                .count();
            if general == 0 {
                continue;
            }
            let name = if u.instances.len() == 1 {
                u.name.to_string()
            } else {
                format!("{}0", u.name)
            };
            out.push((p.id, format!("{}:{name}", p.id), general.min(2)));
        }
    }
    out
}

#[test]
fn perf_and_raw_show_the_same_counts_for_every_unit_on_the_simulator() {
    let mut processors = std::collections::BTreeSet::new();
    let mut compared = 0;
    for (processor, unit, n) in cases() {
        let tree = tempfile::tempdir().unwrap();
        kernel_pmus::write_tree(tree.path(), processor, CPUMASK);
        let events = ["ev_sel=0x1", "ev_sel=0x2,umask=0x1"];
        let mut args = vec!["--unit", unit.as_str()];
        for e in &events[..n] {
            args.extend(["--event", e]);
        }
        // The CORE's umask role aside, a PCU or M-box control may lack a umask: one event.
        let (code, raw, err) = watch(None, "raw", &args);
        let (args, raw) = if code != 0 && err.contains("umask") {
            let args = vec!["--unit", unit.as_str(), "--event", events[0]];
            let (code, raw, err) = watch(None, "raw", &args);
            assert_eq!(code, 0, "{unit} raw: {err}");
            (args, raw)
        } else {
            assert_eq!(code, 0, "{unit} raw: {err}");
            (args, raw)
        };
        let (code, perf, err) = watch(Some(tree.path()), "perf", &args);
        assert_eq!(code, 0, "{unit} perf: {err}");
        let (raw_counts, raw_backends) = counts(&raw);
        let (perf_counts, perf_backends) = counts(&perf);
        assert!(raw_backends.iter().all(|b| b == "sim"), "{unit}: {raw}");
        assert!(perf_backends.iter().all(|b| b == "perf"), "{unit}: {perf}");
        assert_eq!(raw_counts.len(), 3, "{unit}: {raw}");
        assert_eq!(perf_counts, raw_counts, "{unit}\nraw: {raw}\nperf: {perf}");
        // The injected events were counted: 1000 x (event + 1) + 37 x interval each time.
        for (i, interval) in raw_counts.iter().enumerate() {
            for (k, row) in interval.iter().enumerate() {
                assert_eq!(
                    row.3,
                    1000 * (k as u64 + 1) + 37 * (i as u64 + 1),
                    "{unit}: {raw}"
                );
            }
        }
        processors.insert(processor);
        compared += 1;
    }
    assert!(compared >= 45, "only {compared} units compared");
    // Every processor of the spec has a unit compared.
    assert_eq!(
        processors.len(),
        pmu_regs::PROCESSORS.len(),
        "{processors:?}"
    );
}

#[test]
fn every_socket_through_the_simulated_driver_is_a_row_per_socket() {
    let tree = tempfile::tempdir().unwrap();
    kernel_pmus::write_tree(tree.path(), "xeon-e5-2600", CPUMASK);
    let args = [
        "-a",
        "--unit",
        "xeon-e5-2600:CBO3",
        "--event",
        "event=UNC_C_LLC_LOOKUP.DATA_READ",
    ];
    let (code, raw, err) = watch(None, "raw", &args);
    assert_eq!(code, 0, "{err}");
    let (code, perf, err) = watch(Some(tree.path()), "perf", &args);
    assert_eq!(code, 0, "{err}");
    let (raw_counts, _) = counts(&raw);
    let (perf_counts, _) = counts(&perf);
    assert_eq!(perf_counts, raw_counts);
    let sockets: Vec<u64> = perf_counts[0].iter().map(|r| r.0).collect();
    assert_eq!(sockets, [0, 1], "{perf}");
    let v: Value = serde_json::from_str(perf.lines().next().unwrap()).unwrap();
    assert_eq!(
        v["counts"][0]["perf_event"],
        "uncore_cbox_3/event=0x34,umask=0x3/"
    );
    assert_eq!(
        v["counts"][1]["cpu"], 2,
        "socket 1 counts on its cpumask CPU"
    );
}

#[test]
fn the_comparison_can_fail() {
    // A tree whose C-box format puts the umask elsewhere: the simulated driver decodes the
    // event from the same files, so the string round-trips, but a driver that reads the
    // config as a register value would count another event. Here, a tree without `umask`:
    // the perf path refuses the event by name instead of counting something else.
    let tree = tempfile::tempdir().unwrap();
    kernel_pmus::write_tree(tree.path(), "xeon-e5-2600", CPUMASK);
    std::fs::remove_file(tree.path().join("uncore_cbox_0/format/umask")).unwrap();
    let args = [
        "--unit",
        "xeon-e5-2600:CBO0",
        "--event",
        "ev_sel=0x1,umask=0x1",
    ];
    let (code, _, err) = watch(Some(tree.path()), "perf", &args);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("uncore_cbox_0 has no format field for umask"),
        "{err}"
    );
    // Without the hook, --sim has no perf to count through, as documented.
    let (code, _, err) = watch(None, "perf", &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--sim simulates the registers"), "{err}");
    // A PMU the tree lacks: perf names it and the driver, auto falls back to the registers.
    std::fs::remove_dir_all(tree.path().join("uncore_cbox_0")).unwrap();
    let (code, _, err) = watch(Some(tree.path()), "perf", &args);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no PMU uncore_cbox_0"), "{err}");
    let (code, out, err) = watch(Some(tree.path()), "auto", &args);
    assert_eq!(code, 0, "{err}");
    assert!(counts(&out).1.iter().all(|b| b == "sim"), "{out}");
}
