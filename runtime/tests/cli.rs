//! End-to-end tests of the `pmu` command: every subcommand and its error paths, against
//! temporary file trees and `--sim`, with the human output kept as insta snapshots.

use std::fs;

#[path = "support/chunks.rs"]
mod chunks;
#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::redact;
use fake_machine::{add_ha, peek, poke, run, two_sockets};

/// A machine root: ROOT/dev/cpu/{0,1}/msr, ROOT/sys CPU topology (CPU 0 socket 0, CPU 1
/// socket 1), and an HA device on bus 0x3f.
fn machine() -> tempfile::TempDir {
    let root = two_sockets();
    add_ha(root.path());
    root
}

#[test]
fn list_prints_a_table_per_instance() {
    let (code, out, _) = run(&["list", "--processor", "xeon-e5-2600", "--unit", "HA"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("list_ha", out);
}

#[test]
fn list_json_follows_the_documented_schema() {
    let (code, out, _) = run(&["list", "--json"]);
    assert_eq!(code, 0);
    let items: serde_json::Value = serde_json::from_str(&out).unwrap();
    let items = items.as_array().unwrap();
    assert!(
        items.len() > 300,
        "every register instance: {}",
        items.len()
    );
    for item in items {
        for key in [
            "name",
            "processor",
            "unit",
            "space",
            "address",
            "width",
            "fields",
        ] {
            assert!(item.get(key).is_some(), "{key} missing in {item}");
        }
        for f in item["fields"].as_array().unwrap() {
            for key in ["name", "lsb", "msb", "access", "reset"] {
                assert!(f.get(key).is_some(), "{key} missing in {f}");
            }
        }
    }
    let sel2 = items
        .iter()
        .find(|i| i["name"] == "W_MSR_PMON_EVT_SEL2")
        .unwrap();
    assert_eq!(sel2["address"], 0xC94);
    assert_eq!(sel2["space"], "msr");
    let q = items
        .iter()
        .find(|i| i["name"] == "Q_P1_PCI_PMON_CTL3")
        .unwrap();
    assert_eq!(
        (
            q["offset"].as_u64(),
            q["device_id"].as_u64(),
            q["function"].as_u64()
        ),
        (Some(0xE4), Some(0x3C42), Some(2))
    );
    let summary = items
        .iter()
        .find(|i| i["name"] == "U_MSR_PMON_GLOBAL_SUMMARY")
        .unwrap();
    assert!(summary["address"].is_null() && summary["address_unknown"].is_string());
}

#[test]
fn list_with_an_unknown_unit_is_a_usage_error() {
    let (code, _, err) = run(&["list", "--unit", "Z"]);
    assert_eq!(code, 2);
    assert!(err.contains("there is no unit Z"), "{err}");
}

#[test]
fn decode_splits_fields_and_flags_reserved_bits_loudly() {
    let (code, out, err) = run(&["decode", "w_msr_pmon_evt_sel2", "0x4000000d00f01"]);
    assert_eq!(code, 0);
    assert!(
        err.contains("reserved bits 0x4000000000000 are set"),
        "{err}"
    );
    insta::assert_snapshot!("decode_w_evt_sel", out);
    let (_, json, _) = run(&["decode", "WEvtSel", "0d1234", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["value"], 1234);
    assert_eq!(
        v["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "ev_sel")
            .unwrap()["value"],
        1234 & 0xff
    );
}

#[test]
fn decode_errors_are_usage_errors_with_suggestions() {
    let (code, _, err) = run(&["decode", "W_MSR_PMON_EVT_SLE2", "1"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("decode_typo", err);
    let (code, _, err) = run(&["decode", "W_MSR_PMON_EVT_SEL2", "12g"]);
    assert_eq!(code, 2);
    assert!(err.contains("`12g` is not a number"), "{err}");
}

#[test]
fn encode_starts_from_reset_and_refuses_bad_fields() {
    let (code, out, _) = run(&[
        "encode",
        "IA32_FIXED_CTR_CTRL",
        "en1=usr",
        "en1_pmi=1",
        "en2=3",
    ]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("encode_fixed_ctrl", out);
    let (code, _, err) = run(&["encode", "IA32_PERFEVTSEL0", "evsel=1"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("encode_unknown_field", err);
    let (code, _, err) = run(&[
        "encode",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "pmi_core_sel=0x10",
    ]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("encode_too_wide", err);
    let (code, _, err) = run(&["encode", "IA32_PERF_CAPABILITIES", "fw_write=1"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("encode_read_only", err);
    let (code, _, _) = run(&["encode", "IA32_PERFEVTSEL0"]);
    assert_eq!(code, 2, "fields are required");
}

#[test]
fn read_decodes_an_msr_from_the_tree() {
    let root = machine();
    poke(&root.path().join("dev/cpu/1/msr"), 0xC00, 0x9000_0003);
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&[
        "read",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "--socket",
        "1",
        "--root",
        r,
    ]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("read_u_global_ctl", out);
    let (code, out, _) = run(&[
        "read",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "--cpu",
        "0",
        "--root",
        r,
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["value"].as_u64(), v["place"]["cpu"].as_u64()),
        (Some(0), Some(0))
    );
}

#[test]
fn read_finds_the_pci_device_of_the_socket() {
    let root = machine();
    poke(
        &root.path().join("sys/bus/pci/devices/0000:3f:0e.1/config"),
        0xA8,
        0x0000_0001_0000_0002,
    );
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&["read", "HA_PCI_PMON_CTR1", "--root", r]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("event_count  rw-v    0x100000002"), "{out}");
    let (code, _, err) = run(&["read", "HA_PCI_PMON_CTR1", "--root", r, "--socket", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("was not found on socket 1"), "{err}");
    let (code, out, _) = run(&[
        "read",
        "HA_PCI_PMON_CTR1",
        "--root",
        r,
        "--device",
        "0000:3f:0e.1",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("on device 0000:3f:0e.1"), "{out}");
}

#[test]
fn read_errors_say_what_to_do() {
    let root = machine();
    let r = root.path().to_str().unwrap();
    // A CPU the topology lists but without an msr device (issue 21: one it does not list is
    // refused first, as watch refuses it).
    let cpu5 = root.path().join("sys/devices/system/cpu/cpu5/topology");
    fs::create_dir_all(&cpu5).unwrap();
    fs::write(cpu5.join("physical_package_id"), "1\n").unwrap();
    let (code, _, err) = run(&["read", "W_MSR_PMON_EVT_SEL0", "--cpu", "5", "--root", r]);
    assert_eq!(code, 1);
    insta::assert_snapshot!("read_no_msr_device", redact(&err, root.path()));
    let (code, _, err) = run(&["read", "xeon-e5-2600:Q_P0_PCI_PMON_CTL0", "--root", r]);
    assert_eq!(code, 1);
    assert!(err.contains("was not found on socket 0"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "read",
        "HA_PCI_PMON_CTL0",
        "--root",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no PCI 0x3C46 (dev 14 fn 1) under"), "{err}");
    let (code, _, err) = run(&["read", "W_MSR_PMON_EVT_SEL{n}", "--sim"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("read_needs_instance", err);
    // Skylake-SP's CHA counter controls: 28 boxes of 4, so six names and an ellipsis, in
    // `read` and `encode --perf` alike.
    let layout = "skylake-sp:C{i}_MSR_PMON_CTL{n}";
    for args in [
        &["read", layout, "--sim"][..],
        &["encode", "--perf", layout, "ev_sel=1"],
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("name an instance: C0_MSR_PMON_CTL0, C0_MSR_PMON_CTL1, C0_MSR_PMON_CTL2, C0_MSR_PMON_CTL3, C1_MSR_PMON_CTL0, C1_MSR_PMON_CTL1, ...\n"),
            "{args:?}: {err}"
        );
    }
    let (code, _, err) = run(&["read", "U_MSR_PMON_GLOBAL_SUMMARY", "--sim"]);
    assert_eq!(code, 1);
    assert!(err.contains("its address is unknown"), "{err}");
    let (code, _, err) = run(&["read", "HA_PCI_PMON_CTL0", "--cpu", "0", "--sim"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--cpu does not apply to HA_PCI_PMON_CTL0"),
        "{err}"
    );
    let (code, _, _) = run(&["read", "HA_PCI_PMON_CTL0", "--sim", "--root", "/"]);
    assert_eq!(code, 2, "--sim and --root conflict");
}

#[test]
fn write_applies_fields_to_the_current_value() {
    let root = machine();
    let msr = root.path().join("dev/cpu/0/msr");
    // Current value: umask 0x0f, with reserved bit 50 set by "hardware".
    poke(&msr, 0xC90, 1 << 50 | 0x0f00);
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&[
        "write",
        "W_MSR_PMON_EVT_SEL0",
        "ev_sel=0x02",
        "en=1",
        "--root",
        r,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        peek(&msr, 0xC90),
        0x0040_0f02,
        "fields applied, reserved bit dropped"
    );
    insta::assert_snapshot!("write_fields", out);
}

#[test]
fn write_dry_run_writes_nothing() {
    let root = machine();
    let msr = root.path().join("dev/cpu/0/msr");
    let r = root.path().to_str().unwrap();
    let (code, out, _) = run(&[
        "write",
        "W_MSR_PMON_EVT_SEL1",
        "0x400001",
        "--dry-run",
        "--root",
        r,
    ]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("would write W_MSR_PMON_EVT_SEL1 = 0x0000000000400001"),
        "{out}"
    );
    assert_eq!(peek(&msr, 0xC92), 0);
}

#[test]
fn write_refuses_reserved_bits_and_read_only_registers() {
    let root = machine();
    let msr = root.path().join("dev/cpu/0/msr");
    let r = root.path().to_str().unwrap();
    let (code, _, err) = run(&[
        "write",
        "W_MSR_PMON_EVT_SEL1",
        "0x4000000000001",
        "--root",
        r,
    ]);
    // A usage error, as the same reserved bit given as a field is (issue 21).
    assert_eq!(code, 2);
    insta::assert_snapshot!("write_reserved", err);
    assert_eq!(peek(&msr, 0xC92), 0, "nothing written");
    let (code, _, err) = run(&["write", "IA32_PERF_GLOBAL_STATUS", "0", "--root", r]);
    assert_eq!(code, 2);
    assert!(err.contains("read-only"), "{err}");
    let (code, _, err) = run(&["write", "W_MSR_PMON_EVT_SEL1", "umask=0x100", "--root", r]);
    assert_eq!(code, 2);
    assert!(err.contains("8 bits wide"), "{err}");
}

#[test]
fn write_through_the_simulator_faults_like_hardware() {
    // 32-bit register, value too wide: refused before reaching the backend.
    let (code, _, err) = run(&[
        "write",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "0x100000000",
        "--sim",
    ]);
    assert_eq!(code, 2, "a value too wide is a usage error");
    assert!(err.contains("does not fit in the 32-bit register"), "{err}");
    // IA32_A_PMC4 does not exist on the simulated CPU (4 counters): EIO.
    let (code, _, err) = run(&["write", "IA32_A_PMC4", "1", "--sim"]);
    assert_eq!(code, 1);
    assert!(err.contains("#GP"), "{err}");
}

#[test]
fn watch_prints_counts_per_interval() {
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "xeon-7500:C3",
        "--event",
        "ev_sel=0x01",
        "--event",
        "ev_sel=0x02,umask=0x04",
        "--count",
        "3",
        "--interval",
        "0.01",
    ]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("watch_c3", out);
    let (code, out, _) = run(&[
        "watch",
        "--sim",
        "--unit",
        "xeon-e5-2600:P1",
        "--event",
        "ev_sel=0x14",
        "--count",
        "2",
        "--interval",
        "0.01",
        "--json",
    ]);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["counter"], "Q_P1_PCI_PMON_CTR0");
    // An event the default workload does not name: one in 1000 cycles of the 2 GHz uncore
    // clock, 20,000 in each 10 ms interval.
    assert_eq!(lines[1]["count"], 20_000);
}

#[test]
fn watch_puts_the_registers_back() {
    let root = machine();
    let msr = root.path().join("dev/cpu/0/msr");
    poke(&msr, 0xC00, 0x1); // U-box global control as someone left it
    let r = root.path().to_str().unwrap();
    let (code, _, err) = run(&[
        "watch",
        "--root",
        r,
        "--unit",
        "W",
        "--event",
        "ev_sel=0x05",
        "--count",
        "1",
        "--interval",
        "0.01",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(peek(&msr, 0xC00), 0x1, "U_MSR_PMON_GLOBAL_CTL restored");
    assert_eq!(peek(&msr, 0xC80), 0, "W_MSR_PMON_GLOBAL_CTL restored");
    assert_eq!(peek(&msr, 0xC90), 0, "W_MSR_PMON_EVT_SEL0 restored");
}

#[test]
fn a_second_watch_on_a_socket_is_refused_naming_the_first() {
    use pmu_runtime::ownership::{LockDir, Ownership, Pmu};
    let root = machine();
    let r = root.path().to_str().unwrap();
    let watch = || {
        run(&[
            "watch",
            "--root",
            r,
            "--unit",
            "xeon-7500:C0",
            "--event",
            "ev_sel=0x01",
            "--count",
            "1",
            "--interval",
            "0.01",
        ])
    };
    // Another process holds socket 0's uncore: this test, through the same lock file.
    let held = LockDir::new(root.path().join("run/pmu-regs"))
        .claim(&Pmu::Uncore {
            processor: "xeon-7500",
            socket: 0,
        })
        .unwrap();
    let msr = root.path().join("dev/cpu/0/msr");
    let before = fs::read(&msr).unwrap();
    let (code, _, err) = watch();
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("the xeon-7500 uncore of socket 0 is in use by")
            && err.contains(&format!("process {}", std::process::id())),
        "{err}"
    );
    assert_eq!(fs::read(&msr).unwrap(), before, "nothing was touched");
    drop(held);
    let (code, _, err) = watch();
    assert_eq!(code, 0, "{err}");
}

#[test]
fn watch_rejects_bad_events_and_units() {
    let (code, _, err) = run(&[
        "watch", "--sim", "--unit", "C3", "--event", "umask=1", "--count", "1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("ev_sel"), "{err}");
    let (code, _, err) = run(&[
        "watch", "--sim", "--unit", "Q9", "--event", "ev_sel=1", "--count", "1",
    ]);
    assert_eq!(code, 2);
    // The closest names, not every box of every processor.
    assert!(
        err.contains("no processor has a box Q9; did you mean C9") && err.lines().count() <= 3,
        "{err}"
    );
    // A name two processors share needs the processor.
    let (code, _, err) = run(&[
        "watch", "--sim", "--unit", "C3", "--event", "ev_sel=1", "--count", "1",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("xeon-7500:C3") && err.contains("xeon-e5-2600:C3"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "B0",
        "--event",
        "ev_sel=1,umask=2",
        "--count",
        "1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("has no field umask"), "{err}");
    // The U-box has one general counter: two events take turns on it, 10 ms each, and the
    // table shows the share of the interval each ran.
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "U",
        "--event",
        "ev_sel=1",
        "--event",
        "ev_sel=2",
        "--interval",
        "0.1",
        "--count",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().next().unwrap().ends_with("running"), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.ends_with(" 50.00%")).count(),
        2,
        "{out}"
    );
}

#[test]
fn help_has_an_example_per_command_and_usage_errors_exit_2() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("help", out);
    for cmd in ["list", "decode", "encode", "read", "write", "watch", "stat"] {
        let (code, out, _) = run(&[cmd, "--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("Example: pmu"), "{cmd} --help has no example");
    }
    let (code, _, _) = run(&["frobnicate"]);
    assert_eq!(code, 2);
}

#[test]
fn list_events_and_summary() {
    let (code, out, _) = run(&["list", "--events", "--unit", "R3QPI"]);
    assert_eq!(code, 0);
    assert!(out.lines().next().unwrap().starts_with("EVENT"), "{out}");
    assert!(out.contains("UNC_R3_"), "{out}");
    let (code, out, _) = run(&["list", "--events", "--unit", "QPI", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cto = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "UNC_Q_CTO_COUNT")
        .unwrap();
    assert_eq!(
        (cto["code"].as_u64(), cto["ext_sel"].as_bool()),
        (Some(0x38), Some(true))
    );
    let (code, out, _) = run(&["list", "--summary"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("list_summary", out);
}

/// `pmu list PATTERN`, as `perf list PATTERN`: registers and events by name, globs or
/// substrings, any case; each event row names its processor when several have it.
#[test]
fn list_searches_names() {
    let (code, out, err) = run(&["list", "--processor", "xeon-e5-2600-v3", "cas_count.rd"]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(names.contains(&"UNC_M_CAS_COUNT.RD"), "{out}");
    assert!(names.iter().all(|n| n.contains("CAS_COUNT.RD")), "{out}");
    let (code, out, _) = run(&["list", "--events", "--unit", "HA", "*_requests.reads"]);
    assert_eq!(code, 0);
    let units: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(
        units,
        [
            "xeon-e5-2600:HA",
            "xeon-e5-2600-v2:HA",
            "xeon-e5-2600-v3:HA",
            "xeon-e5-2600-v4:HA"
        ],
        "{out}"
    );
    let (code, out, _) = run(&["list", "--processor", "xeon-e5-2600", "C?_MSR_PMON_BOX_CTL"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("REGISTER"), "{out}");
    assert_eq!(out.lines().count(), 9, "{out}");
    // Registers and events at once: two tables, or one JSON object.
    let (code, out, _) = run(&["list", "--processor", "xeon-e5-2600", "--json", "*imc*"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["registers"].as_array().is_some() || v.as_array().is_some(),
        "{out}"
    );
    // Nothing matched: a usage error, as in every list (tests/exit_status.rs).
    let (code, _, err) = run(&["list", "no_such_thing"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no register or event name matches no_such_thing"),
        "{err}"
    );
    let (code, _, _) = run(&["list", "cas", "--summary"]);
    assert_eq!(code, 2);
}

#[test]
fn encode_takes_an_event_by_name() {
    let (code, out, err) = run(&[
        "encode",
        "xeon-e5-2600:Q_P0_PCI_PMON_CTL0",
        "event=UNC_Q_CTO_COUNT",
        "en=1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Q_P0_PCI_PMON_CTL0 = 0x00600038"), "{out}");
    let (code, out, _) = run(&["encode", "HA_PCI_PMON_CTL0", "event=requests.reads"]);
    assert_eq!(code, 0);
    assert!(out.contains("0x00000301"), "{out}");
    let (code, _, err) = run(&["encode", "HA_PCI_PMON_CTL0", "event=UNC_H_REQUESTS.READ"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean UNC_H_REQUESTS.READS"), "{err}");
    let (code, _, err) = run(&["encode", "C0_MSR_PMON_CTR0", "event_count=1"]);
    assert_eq!(code, 2);
    assert!(err.contains("xeon-e5-2600:C0_MSR_PMON_CTR0"), "{err}");
}

/// `watch` on the file-tree machine with one access failing (`--inject-fault`), for every
/// write and every read it makes and every kind of failure: the error names the register and
/// the operation, and the machine is left exactly as it was found, or the message says that
/// putting it back failed and what to do.
/// Watches `unit` with the `n`th access of `op` failing as `kind`, for n = 1, 2, ... until a
/// watch gets past the last access; checks each failure's message and that the machine is
/// as it was. Returns the first message of each outcome (rolled back, cleanup failed).
fn faults_of_one_kind(
    unit: &str,
    place: [&str; 2],
    file: &str,
    names: [&str; 2],
    op: &str,
    kind: &str,
) -> Vec<(String, String)> {
    let mut messages = Vec::new();
    let mut n = 1;
    loop {
        let root = machine();
        let msr = root.path().join("dev/cpu/0/msr");
        poke(&msr, 0xC00, 0x1); // U-box global control as someone left it
        poke(&msr, 0xC90, 0x40_0001); // W-box EVT_SEL0 enabled by someone else
        let config = root.path().join("sys/bus/pci/devices/0000:3f:0e.1/config");
        poke(&config, 0xD8, 0x40_0001); // HA CTL0 likewise
        let path = root.path().join(file);
        let before = fs::read(&path).unwrap();
        let fault = format!("{unit} {op}:{n}:{kind}");
        // --force: those enabled controls are taken over, and must be put back.
        let mut args = vec!["watch", "--force", "--root", root.path().to_str().unwrap()];
        args.extend(place);
        let spec = format!("{op}:{n}:{kind}");
        args.extend([
            "--unit",
            unit,
            "--event",
            "ev_sel=0x05",
            "--event",
            "ev_sel=0x06",
            "--count",
            "2",
            "--interval",
            "0.01",
            "--inject-fault",
            &spec,
        ]);
        let (code, _, err) = run(&args);
        if code == 0 {
            // Past the last access: nothing failed, and the run put everything back.
            assert_eq!(fs::read(&path).unwrap(), before, "{fault}: clean run");
            assert!(n > 1, "{fault}: the first access must fail");
            break;
        }
        assert_eq!(code, 1, "{fault}: {err}");
        let verb = if op == "read" {
            "cannot read "
        } else {
            "cannot write "
        };
        assert!(
            err.contains(verb) && names.iter().all(|n| err.contains(n)),
            "{fault}: the error names the register and the operation: {err}"
        );
        let cleanup_failed = err.contains("also failed") || err.contains("restoring");
        if cleanup_failed {
            assert!(err.contains("check them with `pmu read`"), "{fault}: {err}");
        } else {
            assert_eq!(
                fs::read(&path).unwrap(),
                before,
                "{fault}: registers left changed after: {err}"
            );
        }
        let outcome = if cleanup_failed {
            "cleanup failed"
        } else {
            "rolled back"
        };
        let key = format!("{unit} {op}:{kind}:{outcome}");
        if !messages.iter().any(|(k, _)| *k == key) {
            messages.push((key, redact(&err, root.path())));
        }
        n += 1;
        assert!(n < 80, "{fault}: watch never succeeded");
    }
    messages
}

#[test]
fn watch_under_injected_faults_leaves_the_machine_as_it_found_it() {
    // An MSR box (through /dev/cpu/0/msr) and a PCI box (through sysfs config space).
    let boxes = [
        (
            "W",
            ["--cpu", "0"],
            "dev/cpu/0/msr",
            ["_MSR_PMON_", "(MSR 0x"],
        ),
        (
            "HA",
            ["--socket", "0"],
            "sys/bus/pci/devices/0000:3f:0e.1/config",
            ["HA_PCI_PMON_", "(PCI 0000:3f:0e.1 offset 0x"],
        ),
    ];
    let mut cases = Vec::new();
    for b in boxes {
        for op in ["write", "read", "writes-from"] {
            for kind in ["eio", "eacces", "enoent", "short"] {
                cases.push((b, op, kind));
            }
        }
    }
    // Each case is its own machine and its own watches: four at a time (each is a process
    // per access, most of this file's time).
    let messages: std::collections::BTreeMap<String, String> =
        chunks::in_chunks(&cases, 4, |some| {
            some.iter()
                .flat_map(|&((unit, place, file, names), op, kind)| {
                    faults_of_one_kind(unit, place, file, names, op, kind)
                })
                .collect()
        })
        .into_iter()
        .collect();
    // `writes-from` fails the undo too, so both outcomes occur.
    assert!(messages.keys().any(|k| k.ends_with("cleanup failed")));
    assert!(messages.keys().any(|k| k.ends_with("rolled back")));
    insta::assert_snapshot!(messages
        .iter()
        .map(|(k, v)| format!("[{k}]\n{v}"))
        .collect::<Vec<_>>()
        .join("\n"));
}

#[test]
fn inject_fault_syntax_errors_say_what_is_accepted() {
    let (code, _, err) = run(&[
        "read",
        "W_MSR_PMON_CTR0",
        "--sim",
        "--inject-fault",
        "write:0:eio",
    ]);
    assert_eq!(code, 2, "{err}");
    insta::assert_snapshot!(err);
}

#[test]
fn every_unit_of_the_summary_can_be_watched_on_the_simulator() {
    let (code, out, _) = run(&["list", "--summary", "--json"]);
    assert_eq!(code, 0);
    let units: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert!(units.len() >= 16);
    for u in units {
        let (processor, unit) = (
            u["processor"].as_str().unwrap(),
            u["unit"].as_str().unwrap(),
        );
        // A processor's own core event list: its counters are the architectural CORE unit's,
        // watched below and with each list's events in core_events.rs.
        if u["core_events"] == true {
            assert_eq!(u["layouts"], 0, "{u}");
            continue;
        }
        // A processor with no unit (Diamond Rapids: its uncore is only in its discovery
        // tables) has nothing to watch, and its row says so.
        if u["no_units"] == true {
            assert_eq!((&u["layouts"], &u["events"]), (&0.into(), &0.into()), "{u}");
            continue;
        }
        let info = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == processor)
            .and_then(|p| p.units.iter().find(|x| x.name == unit))
            .unwrap();
        // Layouts without boxes (the discovery table's) have nothing to watch.
        if info.pmu.is_none() {
            continue;
        }
        // System registers (Arm's PMUv3) are reached only through the kernel's perf PMU; the
        // simulator does not model them yet, and `watch --sim` refuses them by name
        // (a_system_register_unit_is_refused_on_the_simulator_with_the_way_to_it).
        if info
            .registers
            .iter()
            .any(|r| r.space == pmu_regs::Space::SysReg)
        {
            continue;
        }
        // A CoreSight PMU's registers (NVIDIA's SCF) are in a page the APMT places: no box
        // of the simulated machine; `pmu_runtime::cspmu` counts it on its own simulator
        // (cspmu_sim.rs), and `watch --sim` refuses it by saying so (below).
        if info
            .registers
            .iter()
            .all(|r| r.space == pmu_regs::Space::Table)
        {
            let args = ["watch", "--sim", "--event", "ev_sel=0xf2", "--unit"];
            let (code, _, err) = run(&[
                &args[..],
                &[&format!("{processor}:{}", info.instances[0])],
                &["--count", "1"],
            ]
            .concat());
            assert_eq!(code, 2, "{processor}:{unit}: {err}");
            assert!(
                err.contains("a CoreSight PMU's page the APMT places"),
                "{err}"
            );
            continue;
        }
        // A unit of free-running counters only is watched by the kernel's name of one.
        let pmu = info.pmu.unwrap();
        let event = match pmu.counters.iter().find(|c| c.control.is_some()) {
            Some(_) => "ev_sel=0x10".to_string(),
            None => format!("event={}", pmu.counters[0].perf_event.unwrap().name),
        };
        // Every instance of the unit, by its instance name with the processor prefix, in one
        // watch (a process per instance was most of this file's time): a count from each.
        let mut args = vec!["watch", "--sim", "--event", &event];
        let names: Vec<String> = info
            .instances
            .iter()
            .map(|i| format!("{processor}:{i}"))
            .collect();
        for name in &names {
            args.extend(["--unit", name]);
        }
        args.extend(["--count", "1", "--interval", "0.01", "--json"]);
        let (code, out, err) = run(&args);
        let what = format!("{processor}:{unit}");
        assert_eq!(code, 0, "{what}: {err}");
        let counts: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // One counter of each instance, in a row for each place it counts (each L3 of a
        // per-L3 box).
        let counters: std::collections::BTreeSet<&str> = counts
            .iter()
            .map(|c| c["counter"].as_str().unwrap())
            .collect();
        assert_eq!(counters.len(), names.len(), "{what}: {out}");
        // An event the simulated workload does not name counts its default: one in 1000
        // cycles of the 2 GHz uncore clock, 20,000 in 10 ms (a per-CPU box: of the 2 GHz
        // core clock, the same).
        assert!(counts.iter().all(|c| c["count"] == 20_000), "{what}: {out}");
    }
    // The unit-and-position names.
    for name in [
        "xeon-e5-2600:CBO3",
        "xeon-e5-2600:IMC2",
        "xeon-e5-2600:PCU",
        "CORE",
        "xeon-e5-2600:QPI1",
        "xeon-e5-2600:UBOX",
    ] {
        let (code, _, err) = run(&[
            "watch",
            "--sim",
            "--unit",
            name,
            "--event",
            "ev_sel=0x10",
            "--count",
            "1",
            "--interval",
            "0.01",
        ]);
        assert_eq!(code, 0, "{name}: {err}");
    }
}

/// An uncore event's unit-mask extension and IIO port and traffic-class masks: `list` shows
/// them, `encode event=NAME` programs them where Linux's formats put them, `decode` names the
/// event only with them, and `watch` programs them too.
#[test]
fn uncore_masks_are_listed_encoded_decoded_and_never_dropped() {
    let (code, out, err) = run(&[
        "list",
        "--events",
        "--unit",
        "CHA",
        "--processor",
        "ice-lake-sp",
    ]);
    assert_eq!(code, 0, "{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("UNC_CHA_TOR_INSERTS.IA_MISS "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(row.ends_with("umask_ext=0xc001fe"), "{row}");
    // perf: uncore_cha/event=0x35,umask=0xc001fe01/ is config 0x00c001fe00000135.
    let (code, out, err) = run(&[
        "encode",
        "ice-lake-sp:C0_MSR_PMON_CTL0",
        "event=UNC_CHA_TOR_INSERTS.IA_MISS",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("C0_MSR_PMON_CTL0 = 0x00c001fe00000135"),
        "{out}"
    );
    // perf: the kernel's CHA umask term carries the extension above the umask.
    let (code, out, err) = run(&[
        "encode",
        "ice-lake-sp:C0_MSR_PMON_CTL0",
        "event=UNC_CHA_TOR_INSERTS.IA_MISS",
        "--perf",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "uncore_cha_0/event=0x35,umask=0xc001fe01/\n");
    let (code, out, err) = run(&[
        "encode",
        "granite-rapids:IIO0_MSR_PMON_CTL0",
        "event=UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("IIO0_MSR_PMON_CTL0 = 0x0007001000000483"),
        "{out}"
    );
    // The same select and umask with another extension is another event (IA_HIT).
    for (raw, event) in [
        ("0x00c001fe00000135", "UNC_CHA_TOR_INSERTS.IA_MISS"),
        ("0x00c001fd00000135", "UNC_CHA_TOR_INSERTS.IA_HIT"),
    ] {
        let (code, out, err) = run(&["decode", "ice-lake-sp:C0_MSR_PMON_CTL0", raw]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(&format!("event: {event}\n")), "{raw}: {out}");
    }
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--processor",
        "ice-lake-sp",
        "--unit",
        "CHA0",
        "--socket",
        "0",
        "--event",
        "event=UNC_CHA_TOR_INSERTS.IA_MISS",
        "--count",
        "1",
        "--interval",
        "0.01",
        "-x,",
    ]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().last().unwrap_or_default();
    let count: u64 = row
        .split(',')
        .nth(4)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    assert!(
        row.contains("UNC_CHA_TOR_INSERTS.IA_MISS") && count > 0,
        "{out}"
    );
    // The masks by hand, as perf's terms name them; a control without one refuses it.
    for (unit, event) in [
        ("IIO0", "ev_sel=0x83,umask=0x4,ch_mask=0x1,fc_mask=0x7"),
        ("CHA0", "ev_sel=0x35,umask=0x1,umask_ext=0xc001fe"),
    ] {
        let (code, out, err) = run(&[
            "watch",
            "--sim",
            "--processor",
            "ice-lake-sp",
            "--unit",
            unit,
            "--socket",
            "0",
            "--event",
            event,
            "--count",
            "1",
            "--interval",
            "0.01",
            "-x,",
        ]);
        assert_eq!(code, 0, "{event}: {err}");
        assert_eq!(out.lines().count(), 2, "{out}");
    }
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--processor",
        "xeon-e5-2600",
        "--unit",
        "CBO0",
        "--event",
        "ev_sel=0x35,umask_ext=0x1",
        "--count",
        "1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("has no field umask_ext"), "{err}");
}

/// Events from Intel's experimental lists: `list --events` marks them in its STATUS column
/// (and `--json` with `experimental`), `encode` and `decode` name them as experimental and
/// `encode` says so on stderr, keeping stdout the value alone with `-x`; `watch` counts them
/// and says so once.
#[test]
fn experimental_events_are_marked_wherever_they_are_used() {
    let event = "UNC_CHA_BYPASS_CHA_IMC.TAKEN";
    let (code, out, err) = run(&[
        "list",
        "--events",
        "--unit",
        "CHA",
        "--processor",
        "skylake-sp",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().next().unwrap().contains("STATUS"), "{out}");
    let row = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in {out}"))
            .to_string()
    };
    assert!(
        row(event).trim_end().ends_with("experimental"),
        "{}",
        row(event)
    );
    assert!(!row("UNC_CHA_CLOCKTICKS").contains("experimental"));
    let (code, out, _) = run(&[
        "list",
        "--events",
        "--unit",
        "CHA",
        "--processor",
        "skylake-sp",
        "--json",
    ]);
    assert_eq!(code, 0);
    let items: serde_json::Value = serde_json::from_str(&out).unwrap();
    let flag = |name: &str| {
        items
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .map(|e| e["experimental"].clone())
    };
    assert_eq!(flag(event), Some(serde_json::json!(true)));
    assert_eq!(flag("UNC_CHA_CLOCKTICKS"), Some(serde_json::json!(false)));

    let word = format!("event={event}");
    let (code, out, err) = run(&["encode", "skylake-sp:C0_MSR_PMON_CTL0", &word, "en=1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("C0_MSR_PMON_CTL0 = 0x00400157 "), "{out}");
    assert!(
        out.contains(&format!("event: {event} (experimental: ")),
        "{out}"
    );
    assert!(
        err.contains(&format!("note: {event} is experimental")),
        "{err}"
    );
    let (code, out, err) = run(&["encode", "skylake-sp:C0_MSR_PMON_CTL0", &word, "-x"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "157");
    assert!(err.contains("is experimental"), "{err}");
    // A main-list event: no note.
    let (code, _, err) = run(&[
        "encode",
        "skylake-sp:C0_MSR_PMON_CTL0",
        "event=UNC_CHA_CLOCKTICKS",
    ]);
    assert_eq!(code, 0);
    assert!(!err.contains("experimental"), "{err}");

    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--processor",
        "skylake-sp",
        "--unit",
        "CHA0",
        "--event",
        &word,
        "--count",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.is_empty());
    assert_eq!(err.matches("is experimental").count(), 1, "{err}");
}

/// A core event that needs an auxiliary MSR (Intel's MSRIndex and MSRValue): `encode` shows
/// the register and its value beside the control (text and JSON), `encode --perf` puts the
/// value in the driver's `config1` term for that register (`offcore_rsp`, `frontend`), and
/// `watch` programs it beside the control; two events needing one register with different
/// values take turns, each turn writing its own.
#[test]
fn an_event_with_an_auxiliary_msr_is_shown_encoded_and_counted() {
    let args = |event: &'static str| {
        [
            "encode",
            "IA32_PERFEVTSEL0",
            event,
            "usr=1",
            "en=1",
            "--processor",
            "skylake-sp",
        ]
    };
    let (code, out, err) = run(&args("event=OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE"));
    assert_eq!(code, 0, "{err}");
    // The first of Intel's two codes (0xB7, 0xBB) with the first register (0x1a6).
    assert!(
        out.starts_with("IA32_PERFEVTSEL0 = 0x00000000004101b7"),
        "{out}"
    );
    assert!(
        out.contains("aux MSR: MSR_OFFCORE_RSP_0 (0x1a6) = 0x10001"),
        "{out}"
    );
    let mut json = args("event=FRONTEND_RETIRED.DSB_MISS").to_vec();
    json.push("--json");
    let (code, out, err) = run(&json);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["aux_msr"]["register"], "MSR_PEBS_FRONTEND", "{out}");
    assert_eq!(v["aux_msr"]["address"], 0x3F7);
    assert_eq!(v["aux_msr"]["value"], 0x11);
    // An event without one has no line and no key.
    let (code, out, _) = run(&args("event=INST_RETIRED.ANY_P"));
    assert_eq!(code, 0);
    assert!(!out.contains("aux MSR"), "{out}");
    // perf: the kernel's cpu PMU takes the value as offcore_rsp (config1:0-63).
    let mut perf = args("event=OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE").to_vec();
    perf.extend(["--perf", "--json"]);
    let (code, out, err) = run(&perf);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["config1"], 0x10001, "{out}");
    assert!(
        v["event"].as_str().unwrap().contains("offcore_rsp=0x10001"),
        "{out}"
    );
    let watch = |events: &[&str]| {
        let mut v = vec![
            "watch",
            "--sim",
            "--processor",
            "skylake-sp",
            "--unit",
            "CORE",
            "--cpu",
            "0",
        ];
        for e in events {
            v.extend(["--event", e]);
        }
        // Two turns of 10 ms in an interval, where events take turns.
        v.extend(["--count", "1", "--interval", "0.02", "-x,"]);
        run(&v)
    };
    let (code, out, err) = watch(&["event=OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE"]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().last().unwrap_or_default();
    let count: u64 = row
        .split(',')
        .nth(4)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    assert!(count > 0, "{out}");
    // Two values for MSR_OFFCORE_RSP_0: the events take turns, each half the time.
    let (code, out, err) = watch(&[
        "event=OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
        "event=OFFCORE_RESPONSE.DEMAND_RFO.ANY_RESPONSE",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{out}");
    for row in rows {
        let count: u64 = row
            .split(',')
            .nth(4)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        assert!(count > 0 && row.ends_with("50.00%"), "{out}");
    }
}

/// `event=NAME` carries the counters the event's list allows: Skylake-SP's
/// UNC_CHA_RxC_OCCUPANCY.IRQ counts only on counter 0, so it takes counter 0 even when given
/// second; two such events take turns on it, each half the time.
#[test]
fn watch_puts_an_event_on_a_counter_its_list_allows() {
    let watch = |first: &str, second: &str| {
        let mut v = vec![
            "watch",
            "--sim",
            "--processor",
            "skylake-sp",
            "--unit",
            "CHA0",
        ];
        v.extend(["--event", first, "--event", second]);
        v.extend(["--interval", "0.02", "--count", "1", "-x,"]);
        let (code, out, err) = run(&v);
        assert_eq!(code, 0, "{err}");
        out
    };
    let on = |out: &str, event: &str| -> (String, String) {
        let row: Vec<&str> = out
            .lines()
            .find(|l| l.contains(event))
            .unwrap_or_else(|| panic!("{out}"))
            .split(',')
            .collect();
        (row[2].to_string(), row.last().unwrap().to_string())
    };
    let out = watch(
        "event=UNC_CHA_CLOCKTICKS",
        "event=UNC_CHA_RxC_OCCUPANCY.IRQ",
    );
    assert_eq!(on(&out, "RxC_OCCUPANCY").0, "C0_MSR_PMON_CTR0", "{out}");
    assert_eq!(on(&out, "CLOCKTICKS").0, "C0_MSR_PMON_CTR1", "{out}");
    let out = watch(
        "event=UNC_CHA_RxC_OCCUPANCY.IRQ",
        "event=UNC_CHA_TOR_OCCUPANCY.IA",
    );
    for event in ["RxC_OCCUPANCY", "TOR_OCCUPANCY"] {
        let (counter, running) = on(&out, event);
        assert_eq!(counter, "C0_MSR_PMON_CTR0", "{out}");
        assert!(running.starts_with("50"), "{out}");
    }
}

/// `list --events` lists every event `list --summary` counts: each unit's event list and the
/// kernel's event of each free-running counter (issue 40: 105 of these were counted and not
/// listed). Both counted from their JSON, processor by processor.
#[test]
fn list_events_lists_every_event_the_summary_counts() {
    let (code, summary, err) = run(&["list", "--summary", "--json"]);
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    let (code, events, err) = run(&["list", "--events", "--json"]);
    assert_eq!(code, 0, "{err}");
    let events: serde_json::Value = serde_json::from_str(&events).unwrap();
    let counted: u64 = summary
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["events"].as_u64().unwrap())
        .sum();
    let events = events.as_array().unwrap();
    assert_eq!(events.len() as u64, counted);
    // Sapphire Rapids' free-running IMC counters are among them, by the kernel's names.
    let free: Vec<&str> = events
        .iter()
        .filter(|e| e["free_running"] == true && e["processor"] == "sapphire-rapids")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(!free.is_empty(), "no free-running event of sapphire-rapids");
    // `list --help` named three processors as if they were all: it now says where all are
    // listed, and that list (the summary's first column) has every processor of the spec.
    let (_, help, _) = run(&["list", "--help"]);
    assert!(help.contains("`pmu list --summary`"), "{help}");
    for p in pmu_regs::PROCESSORS {
        assert!(
            summary
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["processor"] == p.id),
            "{} is not in the summary",
            p.id
        );
    }
    // In the table too, with their status.
    let (code, out, err) = run(&["list", "--events", "--processor", "sapphire-rapids"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with(free[0]) && l.contains("free-running")),
        "{out}"
    );
}

/// A unit of Arm system registers cannot be programmed from user space: `watch --sim` says
/// so, and names the kernel's perf PMU as the way to its counters.
#[test]
fn a_system_register_unit_is_refused_on_the_simulator_with_the_way_to_it() {
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "neoverse-v2:PMU",
        "--event",
        "event=INST_RETIRED",
        "--count",
        "1",
        "--interval",
        "0.01",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("system register") && err.contains("perf"),
        "{err}"
    );
}
