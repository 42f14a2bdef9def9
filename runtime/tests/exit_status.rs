//! One exit-status rule for every subcommand (issue 40; docs/pmu.md "Exit status"): 0 success,
//! 1 a runtime failure, 2 a usage error, and a selection that matches nothing (a pattern, a
//! processor, a unit, an event or register name) is a usage error: 2, with a message that
//! says what to do.

use std::fs;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::run;

/// Runs `args`, checks the usage status and that stderr says what to do (`hint`).
fn refused(args: &[&str], hint: &str) {
    let (code, out, err) = run(args);
    assert_eq!(code, 2, "pmu {}: {err}", args.join(" "));
    assert!(
        out.is_empty(),
        "pmu {}: no half output: {out}",
        args.join(" ")
    );
    assert!(
        err.contains(hint),
        "pmu {}: the message says {hint}: {err}",
        args.join(" ")
    );
}

#[test]
fn every_list_that_matches_nothing_exits_2() {
    // A pattern that matches nothing: before, `list PATTERN` exited 1 and `list --events
    // PATTERN` printed a header and exited 0.
    refused(&["list", "zz_no_such_name"], "pmu list");
    refused(
        &["list", "--events", "zz_no_such_name"],
        "pmu list --events",
    );
    refused(
        &["list", "--metrics", "zz_no_such_name"],
        "pmu list --metrics",
    );
    refused(
        &["list", "--events", "--json", "zz_no_such_name"],
        "pmu list",
    );
    // A processor or a unit that names nothing.
    for list in [&["list"][..], &["list", "--events"], &["list", "--summary"]] {
        refused(&[list, &["--processor", "xeon-9999"]].concat(), "xeon");
        refused(&[list, &["--unit", "NOSUCHUNIT"]].concat(), "NOSUCHUNIT");
    }
    refused(&["list", "--metrics", "--processor", "xeon-9999"], "xeon");
}

#[test]
fn every_unknown_register_name_exits_2() {
    refused(&["decode", "NO_SUCH_REG", "0x1"], "NO_SUCH_REG");
    refused(&["encode", "NO_SUCH_REG", "en=1"], "NO_SUCH_REG");
    refused(&["read", "NO_SUCH_REG", "--sim"], "NO_SUCH_REG");
    refused(
        &["write", "NO_SUCH_REG", "0x1", "--sim", "--dry-run"],
        "NO_SUCH_REG",
    );
}

#[test]
fn every_other_subcommand_refuses_an_unknown_name_with_2() {
    // stat: an unknown event, before the command runs (its status would be the command's).
    refused(&["stat", "-e", "cpu-clok", "--", "true"], "cpu-clock");
    refused(
        &[
            "serve",
            "--sim",
            "--unit",
            "NOSUCHUNIT",
            "--event",
            "event=X",
            "--listen",
            "127.0.0.1:0",
        ],
        "pmu list --summary",
    );
    refused(
        &[
            "watch",
            "--sim",
            "--processor",
            "sapphire-rapids",
            "--metric",
            "NoSuchMetric",
            "--count",
            "1",
        ],
        "pmu list --metrics",
    );
    refused(&["discover", "--processor", "xeon-9999", "--check"], "xeon");
}

#[test]
fn an_unknown_perf_event_name_exits_2_like_an_unknown_event_select() {
    // A misspelt generic event: perf's name list has cpu-clock, which the message suggests.
    // Before, this exited 1 (a runtime failure) where `event=NOSUCH` exited 2.
    refused(
        &[
            "watch",
            "-e",
            "cpu-clok",
            "--count",
            "1",
            "--interval",
            "0.01",
        ],
        "cpu-clock",
    );
    refused(
        &[
            "watch",
            "--sim",
            "--unit",
            "xeon-7500:W",
            "--event",
            "event=NOSUCH",
            "--count",
            "1",
        ],
        "NOSUCH",
    );
}

/// A root whose /proc/cpuinfo is an AMD Zen 4 (family 0x19, model 0x11: AMD's Genoa), a
/// processor whose PERF_CTL0 Zen 5 has too.
fn zen4_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("proc")).unwrap();
    fs::write(
        root.path().join("proc/cpuinfo"),
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: test part\nstepping\t: 1\nflags\t\t: fpu msr\n\n",
    )
    .unwrap();
    root
}

#[test]
fn encode_and_decode_read_a_shared_register_name_alike() {
    let root = zen4_root();
    let r = root.path().to_str().unwrap();
    // Before, encode took the machine's processor (Zen 4 here) where decode refused.
    let (dcode, _, derr) = run(&["decode", "PERF_CTL0", "0x430076"]);
    let (ecode, eout, eerr) = run(&["encode", "PERF_CTL0", "ev_sel=0x76", "en=1", "--root", r]);
    assert_eq!(
        (dcode, ecode),
        (2, 2),
        "decode: {derr}\nencode: {eout}{eerr}"
    );
    for err in [&derr, &eerr] {
        assert!(err.contains("amd-zen4:PERF_CTL0"), "{err}");
        assert!(err.contains("amd-zen5:PERF_CTL0"), "{err}");
    }
    // With --processor both mean Zen 4's; the value encoded decodes to the same fields.
    let (code, value, err) = run(&[
        "encode",
        "PERF_CTL0",
        "ev_sel=0x76",
        "en=1",
        "--processor",
        "amd-zen4",
        "-x",
    ]);
    assert_eq!(code, 0, "{err}");
    // Event select 0x76 at bits 7:0, enable at bit 22 (AMD's PERF_CTL layout), in bare hex
    // as wrmsr takes it.
    assert_eq!(value.trim(), "400076");
    let (code, out, err) = run(&[
        "decode",
        "PERF_CTL0",
        &format!("0x{}", value.trim()),
        "--processor",
        "amd-zen4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("PERF_CTL0"), "{out}");
}
