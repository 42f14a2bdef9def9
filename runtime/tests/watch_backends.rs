//! One `pmu watch` for every backend: boxes through perf and boxes through the registers in
//! one run, every socket through perf, and a box name two processors share settled by the
//! detected processor. The perf PMUs are sysfs trees the tests build whose type is the
//! kernel's software PMU (type 1: event 0 is cpu-clock), so the syscalls run for real.

use std::fs;
use std::path::Path;

use serde_json::Value;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::{run, two_sockets};

/// PMU `name` under ROOT/sys/bus/event_source/devices, as the kernel's software PMU with
/// uncore_snbep.c's HA format.
fn add_pmu(root: &Path, name: &str, cpumask: &str) {
    let d = root.join("sys/bus/event_source/devices").join(name);
    fs::create_dir_all(d.join("format")).unwrap();
    fs::write(d.join("type"), "1\n").unwrap();
    for (f, spec) in [
        ("event", "config:0-7"),
        ("umask", "config:8-15"),
        ("edge", "config:18"),
        ("inv", "config:23"),
        ("thresh", "config:24-31"),
    ] {
        fs::write(d.join("format").join(f), format!("{spec}\n")).unwrap();
    }
    fs::write(d.join("cpumask"), format!("{cpumask}\n")).unwrap();
}

fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_box_through_perf_and_a_box_through_the_registers_in_one_watch() {
    let root = two_sockets();
    add_pmu(root.path(), "uncore_ha", "0");
    let r = root.path().to_str().unwrap();
    let msr = root.path().join("dev/cpu/0/msr");
    let before = fs::read(&msr).unwrap();
    // auto: the kernel has the HA's PMU here, not the C-box's.
    let args = [
        "--json",
        "watch",
        "--root",
        r,
        "--unit",
        "HA",
        "--unit",
        "xeon-e5-2600:C0",
        "--event",
        "ev_sel=0",
        "--count",
        "1",
        "--interval",
        "0.05",
    ];
    // Event 0 is the C-box's clock event (Intel's UNC_C_CLOCKTICKS), and a counter in a file
    // never moves: the session names the box broken instead of printing its 0, and puts it
    // back.
    let (code, _, err) = run(&args);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("box C0 of socket 0 is broken"), "{err}");
    assert!(err.contains("UNC_C_CLOCKTICKS"), "{err}");
    // The way around for a box whose clock rightly stops (docs/quirks-sources.md, "A zero
    // clock on a memory channel with no DIMM").
    assert!(
        err.contains("no DIMM) shows its zeros with --no-quirk clock-event"),
        "{err}"
    );
    assert_eq!(fs::read(&msr).unwrap(), before, "the C-box was put back");
    // With that check off the file's 0 shows.
    let (code, out, err) = run(&[&args[..], &["--no-quirk", "clock-event"]].concat());
    assert_eq!(code, 0, "{err}");
    // One object per row (docs/pmu.md, "One output contract"), each with its backend.
    let counts = lines(&out);
    let ha = counts.iter().find(|c| c["backend"] == "perf").unwrap();
    assert_eq!(ha["counter"], "HA_PCI_PMON_CTR0");
    assert_eq!(ha["event"], "ev_sel=0");
    assert_eq!(ha["perf_event"], "uncore_ha/event=0x0,umask=0x0/");
    assert!(
        ha["count"].as_u64().unwrap() > 1_000_000,
        "cpu-clock ns: {ha}"
    );
    let c0 = counts.iter().find(|c| c["backend"] == "raw").unwrap();
    assert_eq!(c0["counter"], "C0_MSR_PMON_CTR0");
    assert_eq!(c0["count"], 0, "nothing counts in a file");
    assert_eq!(fs::read(&msr).unwrap(), before, "the C-box was put back");
    // --backend raw programs both through the registers: the HA's device is absent here.
    let (code, _, err) = run(&[
        "watch",
        "--root",
        r,
        "--backend",
        "raw",
        "--unit",
        "HA",
        "--event",
        "ev_sel=0",
        "--count",
        "1",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("no PCI 0x3C46") && !err.contains("uncore_ha"),
        "{err}"
    );
}

#[test]
fn every_socket_through_perf_is_a_row_per_socket() {
    let root = two_sockets();
    add_pmu(root.path(), "uncore_ha", "0,1");
    let (code, out, err) = run(&[
        "watch",
        "--root",
        root.path().to_str().unwrap(),
        "-a",
        "--backend",
        "perf",
        "--unit",
        "HA",
        "--event",
        "ev_sel=0",
        "--count",
        "1",
        "--interval",
        "0.05",
        "-x,",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows[0],
        ["time", "socket", "counter", "event", "count", "rate", "running"]
    );
    assert_eq!(rows.len(), 3, "{out}");
    for (socket, row) in rows[1..].iter().enumerate() {
        assert_eq!(row[1], socket.to_string(), "{out}");
        assert_eq!(row[2], "HA_PCI_PMON_CTR0", "{out}");
        assert!(row[4].parse::<u64>().unwrap() > 0, "{out}");
        assert!(row[6].ends_with('%'), "{out}");
    }
}

#[test]
fn a_box_name_two_processors_share_means_the_detected_ones() {
    let root = two_sockets();
    fs::create_dir_all(root.path().join("proc")).unwrap();
    fs::write(
        root.path().join("proc/cpuinfo"),
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 46\n\
         model name\t: Intel(R) Xeon(R) CPU X7560\nflags\t\t: msr arch_perfmon\n\n",
    )
    .unwrap();
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&[
        "watch",
        "--root",
        r,
        "--unit",
        "C0",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
        "-x,",
        "--interval",
        "0.01",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(",C0_MSR_PMON_CTR0,"), "{out}");
    // Boxes of two processors in one watch are refused, before anything is touched.
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "xeon-e5-2600:CBO3",
        "--unit",
        "xeon-7500:C0",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("one processor at a time"), "{err}");
    // --device names one device; watch finds each box's own.
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "HA",
        "--device",
        "0000:3f:0e.1",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--device 0000:3f:0e.1 does not apply to watch"),
        "{err}"
    );
}
