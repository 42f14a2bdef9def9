//! `pmu check`, the conformance run, through the command line:
//!
//! - on the simulator of every processor it passes: each unit's box counts exactly the events
//!   the simulator runs (1,000,000 a second read every 10 ms: 10,000 an interval), every
//!   discovery table matches, everything is put back;
//! - with a fault injected into the simulated machine it fails, naming the fault as the
//!   kernel words it (`strerror`: EIO, EACCES, ENOENT) or the short transfer;
//! - with the runtime's handling of AMD's saturating UMC counters off (`--no-quirk`) the
//!   saturation check sees what Linux's fix is for: a counter found 1,000 below its top
//!   (2^48 - 1) counts those 1,000 events and then nothing; with the handling on, 10,000 an
//!   interval;
//! - on this machine it compares `msr/tsc/`, `cpu-clock`, `task-clock` and `page-faults`
//!   with the real `perf stat` (Debian's `linux-perf`, which `.ci/run` installs) and passes.

use std::process::Output;

use assert_cmd::Command;
use pmu_regs::PROCESSORS;

fn pmu(args: &[&str]) -> Output {
    Command::cargo_bin("pmu")
        .unwrap()
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The row of check `name` in the table.
fn row<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{out}"))
}

#[test]
fn the_simulated_run_passes_on_every_processor() {
    for p in PROCESSORS {
        let o = pmu(&["check", "--sim", "--processor", p.id]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{}: {out}{err}", p.id);
        // Every unit with a general counter is counted, each interval exactly (the spec of
        // the discovery table's own format has no unit that counts).
        let counted = out.lines().filter(|l| l.starts_with("count ")).count();
        let boxes = &pmu_runtime::boxes::Boxes::of(p).boxes;
        // Boxes only a discovery table places (Granite Rapids' PCU, Diamond Rapids' CBO) are
        // not counted by the check: discovery_session.rs counts them.
        let counts = boxes
            .iter()
            .any(|b| !b.through_perf_only() && !b.placed_by_firmware() && !b.table_placed());
        // A CoreSight PMU the APMT places (NVIDIA's SCF) has a note instead (cspmu_sim.rs
        // counts it).
        let placed = boxes.iter().any(|b| b.placed_by_firmware());
        assert_eq!(out.contains("apmt-placed "), placed, "{}: {out}", p.id);
        assert_eq!(counted >= 1, counts, "{}: {out}", p.id);
        // Arm's system registers have no register rows (a note says so), and are counted
        // through the simulated kernel's perf PMU, each interval exactly.
        let perf_only = boxes.iter().any(|b| b.through_perf_only());
        assert_eq!(out.contains("perf-only "), perf_only, "{}: {out}", p.id);
        if perf_only {
            let r = row(&out, "perf PMU ");
            assert!(
                r.contains("10000, 10000, 10000") && r.contains(" pass"),
                "{}: {out}",
                p.id
            );
        }
        // Each discovery domain's table is joined (Diamond Rapids: IMH and CBB).
        for d in p.discovery_domains {
            let r = row(&out, &format!("discovery {} 0 ", d.id));
            assert!(r.contains(" pass"), "{}: {out}", p.id);
        }
        // The verdict counts the judged rows; a run where every row is a note (a part only
        // perf reaches, the table format's own spec) passes nothing and says so.
        let judged = out
            .lines()
            .filter(|l| l.contains("  pass ") || l.ends_with("  pass"))
            .count();
        let verdict = match judged {
            0 => "NOTHING TO CHECK on ".to_string(),
            n => format!("PASS: {n} checks passed"),
        };
        assert!(out.contains(&verdict), "{}: {verdict}: {out}", p.id);
        for l in out.lines().filter(|l| l.starts_with("count ")) {
            assert!(l.contains("10000, 10000, 10000"), "{}: {l}", p.id);
        }
        // A reset clears the counter to 0, as the guides say of rst_ctrs.
        for l in out.lines().filter(|l| l.starts_with("reset ")) {
            assert!(l.contains("  0  ") && l.ends_with(" pass"), "{}: {l}", p.id);
        }
        if counts {
            assert!(
                row(&out, "put-back").contains("0 changed"),
                "{}: {out}",
                p.id
            );
        }
    }
}

#[test]
fn a_fault_fails_the_run_and_is_named() {
    // What the kernel's strerror says for each errno, and the short transfer's own words.
    let named = [
        ("eio", "Input/output error"),
        ("eacces", "Permission denied"),
        ("enoent", "No such file or directory"),
        ("short", "transferred 3 of 8 bytes"),
    ];
    for (kind, words) in named {
        // A read (the first: the put-back check's snapshot) and every write (the counting).
        for (fault, failed) in [
            (format!("read:1:{kind}"), "put-back"),
            (format!("writes-from:1:{kind}"), "count C0"),
        ] {
            let o = pmu(&[
                "check",
                "--sim",
                "--processor",
                "xeon-e5-2600",
                "--inject-fault",
                &fault,
            ]);
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(1), "{fault}: {out}{err}");
            assert!(row(&out, failed).contains("FAIL"), "{fault}: {out}");
            assert!(row(&out, failed).contains(words), "{fault}: {out}");
            assert!(
                err.contains("FAIL: ") && err.contains(words),
                "{fault}: {err}"
            );
        }
    }
}

/// The fault profile of a box that does not reset (`no-reset:BOX`, `SimConfig::no_reset`): its
/// box control's rst_ctrs leaves the counter's value in place, where the guides (and Linux's
/// box init, which relies on it) say writing it clears every counter of the box to 0. The check
/// writes 0x5a5a (23,130) and resets: only that box's `reset` row fails, reading 23,130, and the
/// verdict names the box; its counting, every other box's reset (0) and put-back still pass.
#[test]
fn a_box_that_does_not_reset_is_named_and_only_its_row_fails() {
    for (processor, instance, other) in [
        ("skylake-sp", "CHA0", "IMC0"),
        ("sapphire-rapids", "IIO0", "CHA0"),
        ("xeon-e5-2600", "HA", "C0"),
    ] {
        let fault = format!("no-reset:{}", instance.to_lowercase());
        let o = pmu(&[
            "check",
            "--sim",
            "--processor",
            processor,
            "--inject-fault",
            &fault,
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{processor}: {out}{err}");
        let failed: Vec<&str> = out.lines().filter(|l| l.contains(" FAIL ")).collect();
        assert_eq!(failed.len(), 1, "{processor}: {out}");
        let r = row(&out, &format!("reset {instance} "));
        assert_eq!(failed[0], r, "{processor}: {out}");
        assert!(r.contains(" 23130 "), "{processor}: {r}");
        assert!(r.contains(&format!("{instance} does not reset")), "{r}");
        assert!(row(&out, &format!("count {instance} ")).contains("10000, 10000, 10000"));
        let o = row(&out, &format!("reset {other} "));
        assert!(
            o.contains("  0  ") && o.ends_with(" pass"),
            "{processor}: {o}"
        );
        assert!(row(&out, "put-back").contains("0 changed"), "{out}");
        assert!(
            err.contains("1 of ") && err.contains(&format!("{instance} does not reset")),
            "{processor}: {err}"
        );
    }
    // A box the processor lacks is a usage error naming some it has.
    let o = pmu(&[
        "check",
        "--sim",
        "--processor",
        "skylake-sp",
        "--inject-fault",
        "no-reset:CHA99",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("no-reset:BOX with BOX one of the 66 boxes of skylake-sp (CHA0"),
        "{err}"
    );
}

#[test]
fn the_saturation_check_is_wrong_without_the_quirk_handling_and_right_with_it() {
    for id in ["amd-zen4", "amd-zen5"] {
        let name = "saturation UMC0";
        let on = pmu(&["check", "--sim", "--processor", id]);
        let (out, _) = text(&on);
        assert_eq!(on.status.code(), Some(0), "{id}: {out}");
        assert!(row(&out, name).contains("10000, 10000, 10000"), "{out}");
        // The other quirk off changes nothing here (no UMC has a global init).
        let other = pmu(&[
            "check",
            "--sim",
            "--processor",
            id,
            "--no-quirk",
            "global-init",
        ]);
        assert_eq!(other.status.code(), Some(0), "{id}: {}", text(&other).0);
        for off in ["saturation", "all"] {
            let o = pmu(&["check", "--sim", "--processor", id, "--no-quirk", off]);
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(1), "{id} {off}: {out}{err}");
            let r = row(&out, name);
            assert!(
                r.contains("1000, 0, 0") && r.contains("FAIL"),
                "{id} {off}: {r}"
            );
            assert!(err.contains(name), "{err}");
        }
    }
}

#[test]
fn an_unknown_quirk_is_a_usage_error_for_check_and_watch() {
    for args in [
        &[
            "check",
            "--sim",
            "--processor",
            "amd-zen4",
            "--no-quirk",
            "wrap",
        ][..],
        &[
            "watch",
            "--sim",
            "--unit",
            "amd-zen4:UMC0",
            "--event",
            "ev_sel=0x0a",
            "--count",
            "1",
            "--no-quirk",
            "wrap",
        ],
    ] {
        let o = pmu(args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.contains("saturation") && err.contains("global-init"),
            "{err}"
        );
    }
}

#[test]
fn the_report_is_json_with_json() {
    let o = pmu(&["check", "--sim", "--processor", "amd-zen4", "--json"]);
    let (out, _) = text(&o);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["passed"], true, "{out}");
    let checks = v["checks"].as_array().unwrap();
    let sat = checks
        .iter()
        .find(|c| c["name"].as_str().unwrap().starts_with("saturation UMC0"))
        .unwrap();
    assert_eq!(sat["measured"], "10000, 10000, 10000");
    assert_eq!(sat["verdict"], "pass");
}

#[test]
fn this_machine_counts_what_the_real_perf_stat_counts() {
    let o = pmu(&["check"]);
    let (out, err) = text(&o);
    assert!(
        !out.contains("nothing to compare with"),
        "perf is missing: install it (Debian: apt-get install linux-perf; .ci/run does)\n{out}"
    );
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    for name in [
        "page-faults",
        "msr/tsc/ per task-clock second",
        "cpu-clock / task-clock",
        "task-clock / CPU time",
    ] {
        assert!(row(&out, name).contains(" pass"), "{name}: {out}");
    }
    // The load faults in its 64 MiB buffer: 16,384 pages of 4 KiB, plus its start-up.
    let faults: f64 = row(&out, "page-faults")
        .split_whitespace()
        .nth(4)
        .unwrap()
        .parse()
        .unwrap();
    assert!((16_384.0..17_384.0).contains(&faults), "{out}");
}

#[test]
fn a_perf_that_counts_otherwise_fails_the_comparison() {
    // A `perf` that reports ten times the page faults (a 0 appended): the comparison must
    // notice, and still pass the clocks.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("perf");
    std::fs::write(
        &fake,
        "#!/bin/sh\nperf \"$@\" 2>&1 >/dev/null | sed -E 's/([0-9]+)( +page-faults)/\\10\\2/' >&2\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = pmu(&["check", "--perf", fake.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(row(&out, "page-faults").contains("FAIL"), "{out}");
    assert!(
        row(&out, "cpu-clock / task-clock").contains("pass"),
        "{out}"
    );
}

#[test]
fn the_dumped_discovery_tables_replay_with_pmu_discover() {
    let mut dumped = 0;
    for p in PROCESSORS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let o = pmu(&["check", "--sim", "--processor", p.id, "--dump", d]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{}: {out}{err}", p.id);
        let file = dir.path().join("discovery-socket0.bin");
        if !out.contains("dump socket 0") {
            // A part without discovery types publishes no table, and nothing is written.
            assert!(!file.exists(), "{}", p.id);
            continue;
        }
        assert!(row(&out, "dump socket 0").contains(" pass"), "{out}");
        // The file is the table: `pmu discover` joins it with the spec, every box agreeing
        // (or corrected by the spec), as the part's own table does.
        let replay = pmu(&[
            "discover",
            "--table",
            file.to_str().unwrap(),
            "--processor",
            p.id,
            "--check",
        ]);
        let (out, err) = text(&replay);
        assert_eq!(replay.status.code(), Some(0), "{}: {out}{err}", p.id);
        dumped += 1;
    }
    // Sapphire, Emerald and Granite Rapids, Sierra and Clearwater Forest have tables.
    assert!(dumped >= 5, "{dumped}");
    let o = pmu(&[
        "check",
        "--sim",
        "--processor",
        "sapphire-rapids",
        "--dump",
        "/nonexistent/dir",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.is_empty() && err.contains("mkdir -p"), "{err}");
}

/// On a file tree: a Sapphire Rapids machine (its `/proc/cpuinfo`) with the NMI watchdog on,
/// whose discovery device locates the table the simulated part publishes, in physical memory
/// (a sparse `dev/mem`). The run names the processor and the watchdog, joins the table with
/// the spec (every box agreeing), dumps it, and without a `perf` program says there is
/// nothing to compare with rather than failing.
#[test]
fn on_a_file_tree_the_table_is_joined_and_dumped() {
    use std::io::{Seek, SeekFrom, Write};
    let p = PROCESSORS
        .iter()
        .find(|p| p.id == "sapphire-rapids")
        .unwrap();
    let table = pmu_runtime::sim::Sim::new(pmu_runtime::sim::SimConfig::of(p))
        .discovery_table()
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    let at = |path: &str| root.path().join(path);
    std::fs::create_dir_all(at("proc/sys/kernel")).unwrap();
    std::fs::write(
        at("proc/cpuinfo"),
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n\n",
    )
    .unwrap();
    std::fs::write(at("proc/sys/kernel/nmi_watchdog"), "1\n").unwrap();
    let dev = at("sys/bus/pci/devices").join(table.device.to_string());
    std::fs::create_dir_all(&dev).unwrap();
    std::fs::write(dev.join("vendor"), "0x8086\n").unwrap();
    std::fs::write(dev.join("device"), "0x09a7\n").unwrap();
    let config: Vec<u8> = table.config.iter().flat_map(|d| d.to_le_bytes()).collect();
    std::fs::write(dev.join("config"), config).unwrap();
    std::fs::create_dir_all(at("dev")).unwrap();
    let mut mem = std::fs::File::create(at("dev/mem")).unwrap();
    // Whole pages, as physical memory is mapped.
    mem.set_len(table.base + (table.bytes.len() as u64).next_multiple_of(4096))
        .unwrap();
    mem.seek(SeekFrom::Start(table.base)).unwrap();
    mem.write_all(&table.bytes).unwrap();
    drop(mem);
    let dumps = tempfile::tempdir().unwrap();
    let o = pmu(&[
        "check",
        "--root",
        root.path().to_str().unwrap(),
        "--perf",
        "/nonexistent/perf",
        "--dump",
        dumps.path().to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(row(&out, "processor").contains("Platinum 8480+"), "{out}");
    assert!(
        row(&out, "other counter holders").contains("NMI watchdog on"),
        "{out}"
    );
    let joined = row(&out, "discovery socket 0");
    assert!(joined.contains(" pass"), "{out}");
    assert!(
        row(&out, "perf stat").contains("nothing to compare with"),
        "{out}"
    );
    assert!(row(&out, "dump socket 0").contains(" pass"), "{out}");
    // The dump holds the table's bytes as the part published them.
    let dumped = std::fs::read(dumps.path().join("discovery-socket0.bin")).unwrap();
    assert_eq!(dumped[..], table.bytes[..dumped.len()], "{joined}");
}
