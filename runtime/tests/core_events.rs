//! Each processor's own core events through the `pmu` command: `encode` with `--processor`
//! (or the processor /proc/cpuinfo names), `list --events --unit CORE --processor`, and
//! `watch` on the simulator, with the counter mask, invert, edge and any-thread bits Intel's
//! lists give some events. Messages are snapshots.

use std::fs;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::run;

/// A root whose /proc/cpuinfo says `cpuinfo`, or that has none (nothing is detected).
fn root(cpuinfo: Option<&str>) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    if let Some(text) = cpuinfo {
        fs::create_dir_all(root.path().join("proc")).unwrap();
        fs::write(root.path().join("proc/cpuinfo"), text).unwrap();
    }
    root
}

const JAKETOWN: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 45\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 0 @ 2.70GHz\nflags\t\t: fpu msr arch_perfmon pebs\n";

const PROCESSORS: [&str; 5] = [
    "xeon-7500",
    "xeon-e5-2600",
    "xeon-e5-2600-v2",
    "xeon-e5-2600-v3",
    "xeon-e5-2600-v4",
];

/// `encode IA32_PERFEVTSEL0 event=INST_RETIRED.ANY_P` works for every processor, from its
/// own list (Nehalem-EX's has umask 0x01, the others 0x00), and an event with a counter mask,
/// invert and any-thread bit programs them.
#[test]
fn encode_takes_each_processors_core_events() {
    let none = root(None);
    let mut lines = Vec::new();
    for p in PROCESSORS {
        let (code, out, err) = run(&[
            "encode",
            "IA32_PERFEVTSEL0",
            "event=INST_RETIRED.ANY_P",
            "en=1",
            "--processor",
            p,
            "--root",
            none.path().to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{p}: {err}");
        let head: Vec<&str> = out.lines().take(2).collect();
        lines.push(format!("{p}: {}", head.join(" / ")));
    }
    for (p, event) in [
        ("xeon-e5-2600", "UOPS_ISSUED.CORE_STALL_CYCLES"),
        ("xeon-e5-2600-v3", "CPL_CYCLES.RING0_TRANS"),
        ("xeon-7500", "UOPS_EXECUTED.CORE_ACTIVE_CYCLES"),
    ] {
        let (code, out, err) = run(&[
            "encode",
            "IA32_PERFEVTSEL0",
            &format!("event={event}"),
            "--processor",
            p,
            "--root",
            none.path().to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{p} {event}: {err}");
        lines.push(format!("{p}: {out}"));
    }
    insta::assert_snapshot!("encode_core_events", lines.join("\n"));
}

/// Without --processor, the processor /proc/cpuinfo names gives the list; with none detected,
/// or with an event this processor lacks, the error names the processors that have it.
#[test]
fn the_detected_processor_gives_the_list_and_a_missing_event_names_who_has_it() {
    let jaketown = root(Some(JAKETOWN));
    let (code, out, err) = run(&[
        "encode",
        "IA32_PERFEVTSEL0",
        "event=UOPS_ISSUED.CORE_STALL_CYCLES",
        "--root",
        jaketown.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("IA32_PERFEVTSEL0 = 0x0000000001a0010e"),
        "{out}"
    );
    let none = root(None);
    let mut messages = Vec::new();
    for args in [
        vec!["encode", "IA32_PERFEVTSEL0", "event=INST_RETIRED.ANY_P"],
        vec![
            "encode",
            "IA32_PERFEVTSEL0",
            "event=UOPS_EXECUTED.CORE_CYCLES_NONE",
            "--processor",
            "xeon-7500",
        ],
        vec![
            "encode",
            "IA32_PERFEVTSEL0",
            "event=INST_RETIRED.ANY",
            "--processor",
            "xeon-e5-2600",
        ],
        vec![
            "encode",
            "IA32_PERFEVTSEL0",
            "event=LLC_MISSES",
            "--processor",
            "xeon-9999",
        ],
    ] {
        let mut args = args.clone();
        args.extend(["--root", none.path().to_str().unwrap()]);
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        messages.push(format!("$ pmu {}\n{err}", args[..args.len() - 2].join(" ")));
    }
    insta::assert_snapshot!("core_event_errors", messages.join("\n"));
    // The architectural events need no processor.
    let (code, out, err) = run(&[
        "encode",
        "IA32_PERFEVTSEL0",
        "event=LLC_MISSES",
        "--root",
        none.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("event: LLC_MISSES"), "{out}");
}

/// `list --events --unit CORE --processor P` lists P's own list, with the settings; JSON
/// carries them as keys.
#[test]
fn list_shows_each_processors_core_events() {
    for p in PROCESSORS {
        let info = pmu_regs::PROCESSORS.iter().find(|q| q.id == p).unwrap();
        let want = info.core_events.unwrap().events.len();
        let (code, out, err) = run(&["list", "--events", "--unit", "CORE", "--processor", p]);
        assert_eq!(code, 0, "{p}: {err}");
        assert_eq!(out.lines().count(), want + 1, "{p}");
        assert!(out.lines().next().unwrap().ends_with("SETTINGS"), "{out}");
        assert!(out.contains("INST_RETIRED.ANY_P "), "{p}");
    }
    let (_, out, _) = run(&[
        "list",
        "--events",
        "--unit",
        "core",
        "--processor",
        "xeon_e5_2600",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let stall = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "UOPS_ISSUED.CORE_STALL_CYCLES")
        .unwrap();
    assert_eq!(
        (
            &stall["processor"],
            &stall["unit"],
            &stall["threshold"],
            &stall["invert"],
            &stall["any_thread"],
            &stall["edge"]
        ),
        (
            &"xeon-e5-2600".into(),
            &"CORE".into(),
            &1.into(),
            &true.into(),
            &true.into(),
            &false.into()
        )
    );
    // The architectural PMU's own list is unchanged: its 7 events, no settings column.
    let (_, out, _) = run(&[
        "list",
        "--events",
        "--unit",
        "CORE",
        "--processor",
        "architectural",
    ]);
    assert_eq!(out.lines().count(), 8, "{out}");
    assert!(!out.contains("SETTINGS"), "{out}");
}

/// `watch --sim` counts a processor's core events on the architectural counters (the
/// simulator's counters advance for whatever is programmed), named with event=NAME or bare;
/// a core event of no named processor is refused before anything is programmed.
#[test]
fn watch_counts_core_events_on_the_simulator() {
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "CORE",
        "--processor",
        "xeon-e5-2600-v3",
        // A bare name, as perf users type it, is event=NAME.
        "--event",
        "INST_RETIRED.ANY_P",
        "--event",
        "event=UOPS_ISSUED.CORE_STALL_CYCLES",
        "--count",
        "2",
        "--interval",
        "0.01",
        "-x,",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("time,"))
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    for r in &rows {
        let count: u64 = r[4].parse().unwrap_or_else(|_| panic!("{out}"));
        assert!(count > 0, "{out}");
    }
    assert!(
        rows[1][3].contains("UOPS_ISSUED.CORE_STALL_CYCLES"),
        "{out}"
    );
    assert_eq!(rows[0][3], "INST_RETIRED.ANY_P", "{out}");
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "CORE",
        "--event",
        "event=INST_RETIRED.ANY_P",
        "--count",
        "1",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("is a core event of xeon-7500, xeon-e5-2600"),
        "{err}"
    );
}

/// `--processor` also picks among the registers several processors share, so a newcomer
/// need not learn the `processor:` prefix to encode an uncore control.
#[test]
fn encode_with_a_processor_picks_its_register() {
    let (code, out, err) = run(&[
        "encode",
        "C0_MSR_PMON_CTL0",
        "ev_sel=0x34",
        "umask=3",
        "--processor",
        "xeon-e5-2600-v3",
    ]);
    assert_eq!(code, 0, "{err}");
    // Haswell-EP moved the C-boxes to MSRs 0xE00 + 0x10 n; the E5-2600's C0 control is 0xD10.
    assert!(
        out.starts_with("C0_MSR_PMON_CTL0 = 0x00000334 (32-bit, MSR 0xE01)"),
        "{out}"
    );
    let (code, out, err) = run(&[
        "encode",
        "C0_MSR_PMON_CTL0",
        "ev_sel=0x34",
        "--processor",
        "xeon-e5-2600",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("MSR 0xD10"), "{out}");
    // Without it the name stays ambiguous, and the error says how to choose.
    let (code, _, err) = run(&["encode", "C0_MSR_PMON_CTL0", "ev_sel=0x34"]);
    assert_ne!(code, 0);
    assert!(err.contains("xeon-e5-2600-v3:C0_MSR_PMON_CTL0"), "{err}");
}
