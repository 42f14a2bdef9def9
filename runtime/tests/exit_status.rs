//! One exit-status rule for every subcommand (issue 40; docs/pmu.md "Exit status"): 0 success,
//! 1 a runtime failure, 2 a usage error, and a selection that matches nothing (a pattern, a
//! processor, a unit, an event or register name) is a usage error: 2, with a message that
//! says what to do.


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
