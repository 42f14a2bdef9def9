//! `pmu check --sim`: each box counted through its registers is counted again through the
//! simulated kernel's perf PMU (the PMU the spec says Linux registers for it, driven by
//! `sim_perf::SimPerf`), and both must count what the simulator runs: 1,000,000 events a
//! second read every 10 ms, 10,000 an interval, worked by hand. The two paths share no
//! access, so a fault injected into one fails that path's rows only.

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::run;

/// The rows whose name starts with `prefix`.
fn rows<'a>(out: &'a str, prefix: &str) -> Vec<&'a str> {
    out.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// The box a row names (`perf CHA0` -> `CHA0`).
fn box_of(row: &str) -> &str {
    row.split_whitespace().nth(1).unwrap()
}

#[test]
fn every_box_counts_the_same_through_perf_as_through_the_registers() {
    // Each processor whose boxes the kernel has PMUs for, with the boxes the run counts.
    for id in [
        "xeon-7500",
        "xeon-e5-2600-v4",
        "skylake-sp",
        "sapphire-rapids",
        "amd-zen4",
    ] {
        let (code, out, err) = run(&["check", "--sim", "--processor", id]);
        assert_eq!(code, 0, "{id}: {out}{err}");
        let perf = rows(&out, "perf ");
        assert!(!perf.is_empty(), "{id}: no perf row in\n{out}");
        for r in &perf {
            assert!(
                r.contains("10000, 10000, 10000") && r.contains(" pass"),
                "{id}: {r}"
            );
            // The kernel PMU it went through: uncore_*, amd_*, or AMD's core PMU, cpu.
            assert!(r.contains(" through "), "{r}");
            // The same box was counted through the registers too.
            let count = format!("count {} ", box_of(r));
            assert!(
                rows(&out, &count)
                    .iter()
                    .any(|c| c.contains("10000, 10000, 10000")),
                "{id}: {r} has no register count"
            );
        }
    }
}

/// The first perf group read fails with EIO: that box's perf row fails naming the fault;
/// every register row and every other perf row still passes.
#[test]
fn a_fault_in_the_perf_path_fails_that_row_only() {
    let (code, out, err) = run(&[
        "check",
        "--sim",
        "--processor",
        "skylake-sp",
        "--inject-fault",
        "perf-read:1:eio",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let failed: Vec<&str> = out.lines().filter(|l| l.contains(" FAIL ")).collect();
    assert_eq!(failed.len(), 1, "{out}");
    assert!(failed[0].starts_with("perf CHA0"), "{out}");
    assert!(failed[0].contains("Input/output error"), "{}", failed[0]);
    assert!(
        rows(&out, "count ").iter().all(|r| r.contains(" pass")),
        "{out}"
    );
    // 23 rows before the reset rows, and one `reset BOX` per counted Skylake-SP unit whose box
    // control has rst_ctrs: CHA, IIO, IMC, IRP, M2M, M2PCIE, M3UPI, PCU, UPI (9).
    assert!(err.contains("1 of 32 checks failed"), "{err}");
}

/// A register read that fails fails register rows; the perf path, which the fault does not
/// reach, passes every row.
#[test]
fn a_fault_in_the_registers_leaves_the_perf_rows_passing() {
    let (code, out, err) = run(&[
        "check",
        "--sim",
        "--processor",
        "skylake-sp",
        "--inject-fault",
        "read:1:eio",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let perf = rows(&out, "perf ");
    assert_eq!(perf.len(), 10, "{out}");
    assert!(perf.iter().all(|r| r.contains(" pass")), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains(" FAIL ") && !l.starts_with("perf ")),
        "{out}"
    );
}

/// The perf path has no writes to fail: `perf-write` is a usage error that says what it takes.
#[test]
fn a_perf_fault_other_than_a_read_is_refused() {
    let (code, out, err) = run(&[
        "check",
        "--sim",
        "--processor",
        "skylake-sp",
        "--inject-fault",
        "perf-write:1:eio",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("perf-read:N:KIND"), "{err}");
}

/// The fault profile of a broken box (`broken:BOX`, `SimConfig::broken`): CHA0's counters
/// never move. Both of its rows fail with `0, 0, 0`, naming it broken (not counting 0), and
/// so does the verdict; every other box still counts 10,000 an interval and put-back passes.
#[test]
fn a_box_that_does_not_count_is_named_broken() {
    let (code, out, err) = run(&[
        "check",
        "--sim",
        "--processor",
        "skylake-sp",
        "--inject-fault",
        "broken:cha0",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let failed: Vec<&str> = out.lines().filter(|l| l.contains(" FAIL ")).collect();
    assert_eq!(failed.len(), 2, "{out}");
    for r in &failed {
        assert!(
            r.starts_with("count CHA0") || r.starts_with("perf CHA0"),
            "{r}"
        );
        assert!(r.contains("0, 0, 0"), "{r}");
        assert!(
            r.contains("CHA0 is broken: its counter did not move in 3 intervals"),
            "{r}"
        );
    }
    assert!(out
        .lines()
        .any(|l| l.starts_with("count IIO0") && l.contains("10000, 10000, 10000")));
    assert!(
        out.lines()
            .any(|l| l.starts_with("put-back") && l.contains(" pass")),
        "{out}"
    );
    assert!(err.contains("CHA0 is broken"), "{err}");
}

/// The run counts the first box of each unit, and also the box a fault profile names: a broken
/// CHA1 on Ice Lake-SP (not a first box) fails its rows, named, where before the run passed
/// without counting it; CHA0 still counts 10,000 an interval.
#[test]
fn a_fault_on_a_box_other_than_the_first_is_found_and_named() {
    let (code, out, err) = run(&[
        "check",
        "--sim",
        "--processor",
        "ice-lake-sp",
        "--inject-fault",
        "broken:CHA1",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let failed: Vec<&str> = out.lines().filter(|l| l.contains(" FAIL ")).collect();
    assert!(!failed.is_empty(), "{out}");
    for r in &failed {
        assert!(r.contains("CHA1 is broken"), "{r}");
    }
    assert!(out
        .lines()
        .any(|l| l.starts_with("count CHA0") && l.contains("10000, 10000, 10000")));
    assert!(err.contains("CHA1 is broken"), "{err}");
}

/// A box the processor lacks is a usage error that names some it has.
#[test]
fn a_broken_box_the_processor_lacks_is_refused() {
    let (code, out, err) = run(&[
        "check",
        "--sim",
        "--processor",
        "skylake-sp",
        "--inject-fault",
        "broken:CHA99",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("one of the 66 boxes of skylake-sp (CHA0, CHA1"),
        "{err}"
    );
}

/// A misspelt fault says every form `check` takes.
#[test]
fn a_misspelt_fault_lists_every_form() {
    let (code, out, err) = run(&[
        "check",
        "--sim",
        "--processor",
        "skylake-sp",
        "--inject-fault",
        "brokn:CHA0",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    for form in [
        "read:N:KIND",
        "perf-read:N:KIND",
        "broken:BOX",
        "no-reset:BOX",
    ] {
        assert!(err.contains(form), "{err}");
    }
}
