//! The library examples print what the `pmu` command prints for the same request: what the
//! command counts, a program counts with the same calls.

use std::process::Command;

#[path = "../examples/metric_group.rs"]
#[allow(dead_code)]
mod metric_group;

#[test]
fn the_metric_group_example_prints_what_pmu_watch_metric_prints() {
    let mut example = Vec::new();
    metric_group::report(&mut example).unwrap_or_else(|e| panic!("{e}"));
    let mut args = vec!["watch", "--sim", "--processor", "ice-lake-sp"];
    for m in metric_group::METRICS {
        args.extend(["--metric", m]);
    }
    args.extend(["--count", "3", "--interval", "0.01", "-x,"]);
    let watch = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(&args)
        .output()
        .expect("pmu runs");
    assert!(
        watch.status.success(),
        "{}",
        String::from_utf8_lossy(&watch.stderr)
    );
    let example = String::from_utf8(example).expect("UTF-8");
    assert_eq!(example, String::from_utf8_lossy(&watch.stdout));
    // Three intervals of three metrics, each a number of megabytes a second.
    let rows: Vec<&str> = example.lines().skip(1).collect();
    assert_eq!(rows.len(), 9, "{example}");
    assert!(
        rows.iter().all(|r| r
            .split(',')
            .nth(3)
            .is_some_and(|v| v.parse::<f64>().is_ok())),
        "{example}"
    );
}

#[path = "../examples/conformance.rs"]
#[allow(dead_code)]
mod conformance;

#[test]
fn the_conformance_example_prints_what_pmu_check_sim_prints() {
    let dir = tempfile::tempdir().unwrap();
    let report = conformance::report(conformance::PROCESSOR, Some(dir.path()))
        .unwrap_or_else(|e| panic!("{e}"));
    let check = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args([
            "check",
            "--sim",
            "--processor",
            conformance::PROCESSOR,
            "--dump",
        ])
        .arg(dir.path())
        .output()
        .expect("pmu runs");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    assert!(report.passed(), "{}", report.verdict_line());
    assert_eq!(report.text(), String::from_utf8_lossy(&check.stdout));
    // Every unit's box counted: the table has a count row per unit with a general counter.
    assert!(
        report
            .rows
            .iter()
            .filter(|r| r.name.starts_with("count "))
            .count()
            >= 5
    );
}

#[path = "../examples/topdown_tree.rs"]
#[allow(dead_code)]
mod topdown_tree;

#[test]
fn the_topdown_tree_example_prints_what_pmu_stat_sim_td_level_prints() {
    let (example, exit_code) = topdown_tree::report().unwrap_or_else(|e| panic!("{e}"));
    let level = topdown_tree::LEVEL.to_string();
    let stat = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args([
            "stat",
            "--sim",
            "--processor",
            "sapphire-rapids",
            "--td-level",
        ])
        .arg(&level)
        .arg("--")
        .args(topdown_tree::COMMAND)
        .output()
        .expect("pmu runs");
    assert!(
        stat.status.success(),
        "{}",
        String::from_utf8_lossy(&stat.stderr)
    );
    assert_eq!(exit_code, 0);
    // pmu stat prints on stderr, as perf stat.
    assert_eq!(example, String::from_utf8_lossy(&stat.stderr));
    // Level 1's four nodes (toplev's names), each a percentage; the four add up to 100.
    let line = |name: &str| {
        example
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in\n{example}"))
    };
    let value = |name: &str| -> f64 {
        line(name)
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    let marked = |name: &str| line(name).ends_with("<==");
    let level1 = [
        "Frontend_Bound",
        "Bad_Speculation",
        "Backend_Bound",
        "Retiring",
    ]
    .map(value);
    assert!(
        (level1.iter().sum::<f64>() - 100.0).abs() < 0.05,
        "{example}"
    );
    // A level-2 node is indented under its parent; its children add up to it.
    assert!(example.contains("\n  Light_Operations "), "{example}");
    let retiring = value("Light_Operations") + value("Heavy_Operations");
    assert!((retiring - value("Retiring")).abs() < 0.02, "{example}");
    // The markers by Intel's thresholds for Sapphire Rapids (its TMA metric list, as
    // percentages): Retiring > 70 or Heavy_Operations > 10; Light_Operations > 60;
    // Frontend_Bound > 15; Backend_Bound > 20.
    let heavy = value("Heavy_Operations");
    assert_eq!(
        marked("Retiring"),
        value("Retiring") > 70.0 || heavy > 10.0,
        "{example}"
    );
    assert_eq!(
        marked("Light_Operations"),
        value("Light_Operations") > 60.0,
        "{example}"
    );
    assert_eq!(
        marked("Frontend_Bound"),
        value("Frontend_Bound") > 15.0,
        "{example}"
    );
    assert_eq!(
        marked("Backend_Bound"),
        value("Backend_Bound") > 20.0,
        "{example}"
    );
    assert!(example.lines().any(|l| l.ends_with("<==")), "{example}");
}

#[path = "../examples/exporter.rs"]
#[allow(dead_code)]
mod exporter;

#[path = "support/serve.rs"]
#[allow(dead_code)]
mod serve;

#[test]
fn the_exporter_example_serves_what_pmu_serve_sim_serves() {
    let example = exporter::scrape_once().unwrap_or_else(|e| panic!("{e}"));
    let served = serve::start(&[
        "--sim",
        "--unit",
        exporter::UNIT,
        "--event",
        exporter::EVENT,
        "--interval",
        "0.05",
    ]);
    let (status, scraped) = serve::get_as(served.addr, "/metrics", exporter::ACCEPT);
    assert_eq!(status, 200, "{scraped}");
    // The same series, labels, help and types; only the counts and times differ.
    assert_eq!(exporter::steady(&example), exporter::steady(&scraped));
    assert!(example.ends_with("# EOF\n"), "{example}");
    // The simulator counts 1,000 events a second of real time: the total is at most that
    // many times the seconds since programming, and each 50 ms interval added about 50.
    let one = |name: &str| {
        let values: Vec<f64> = serve::samples(&example, name).into_values().collect();
        assert_eq!(values.len(), 1, "{name} in\n{example}");
        values[0]
    };
    let (events, intervals) = (one("pmu_events_total"), one("pmu_intervals_total"));
    assert!(intervals >= 1.0, "{example}");
    assert!(events >= 45.0 * intervals, "{example}");
    assert!(
        events <= 1000.0 * one("pmu_since_programmed_seconds") + 1.0,
        "{example}"
    );
}

#[path = "../examples/list_events.rs"]
#[allow(dead_code)]
mod list_events;

#[test]
fn the_list_events_example_prints_what_pmu_list_events_prints() {
    // Intel's perfmon file for Ivy Bridge-EP (IvyTown), cut to one event: its name, codes and
    // description as Intel's file writes them.
    let dir = tempfile::tempdir().unwrap();
    let perfmon = dir.path().join("ivytown_uncore.json");
    std::fs::write(
        &perfmon,
        r#"{"Events": [{"EventName": "UNC_U_EVENT_MSG.IPI_RCVD", "EventCode": "0x42",
            "UMask": "0x04", "BriefDescription": "Inter-processor interrupts received"}]}"#,
    )
    .unwrap();
    for file in [None, Some(perfmon.as_path())] {
        let example = list_events::report(file).unwrap_or_else(|e| panic!("{e}"));
        let mut list = Command::new(env!("CARGO_BIN_EXE_pmu"));
        list.args(["list", "--events", "--processor", list_events::PROCESSOR])
            .args(["--unit", list_events::UNIT]);
        if let Some(f) = file {
            list.arg("--perfmon").arg(f);
        }
        let list = list.output().expect("pmu runs");
        assert!(
            list.status.success(),
            "{}",
            String::from_utf8_lossy(&list.stderr)
        );
        assert_eq!(example, String::from_utf8_lossy(&list.stdout));
        // Ivy Bridge-EP's UBOX counts its messages with event 0x42, IPIs with umask bit 2
        // (Intel's uncore guide), on either of its two counters.
        let ipi = example
            .lines()
            .find(|l| l.starts_with("UNC_U_EVENT_MSG.IPI_RCVD "))
            .unwrap_or_else(|| panic!("no IPI_RCVD in\n{example}"));
        let words: Vec<&str> = ipi.split_whitespace().collect();
        assert_eq!(words[1..5], ["UBOX", "0x42", "0x04", "0,1"], "{ipi}");
        assert_eq!(
            ipi.ends_with("Inter-processor interrupts received"),
            file.is_some(),
            "{ipi}"
        );
    }
}

#[path = "../examples/decode_value.rs"]
#[allow(dead_code)]
mod decode_value;

#[test]
fn the_decode_value_example_prints_what_pmu_decode_prints() {
    let example = decode_value::report().unwrap_or_else(|e| panic!("{e}"));
    let decode = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["decode", decode_value::REGISTER, decode_value::VALUE])
        .output()
        .expect("pmu runs");
    assert!(
        decode.status.success(),
        "{}",
        String::from_utf8_lossy(&decode.stderr)
    );
    assert_eq!(example, String::from_utf8_lossy(&decode.stdout));
    // The SDM: IA32_PERFEVTSEL0 is MSR 186H; 0x43412e enables the counter (bit 22) for user
    // and OS (16, 17) on event 2EH umask 41H, the architectural LLC misses.
    assert!(
        example.starts_with("IA32_PERFEVTSEL0 = 0x000000000043412e (64-bit, MSR 0x186)"),
        "{example}"
    );
    assert!(example.contains("event: LLC_MISSES\n"), "{example}");
    let field = |name: &str| {
        example
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .and_then(|l| l.split_whitespace().nth(3))
            .unwrap_or_else(|| panic!("no {name} in\n{example}"))
    };
    for (name, value) in [
        ("en", "0x1"),
        ("usr", "0x1"),
        ("os", "0x1"),
        ("umask", "0x41"),
        ("ev_sel", "0x2e"),
        ("inv", "0x0"),
    ] {
        assert_eq!(field(name), value, "{name}");
    }
}

#[path = "../examples/discover_table.rs"]
#[allow(dead_code)]
mod discover_table;

#[test]
fn the_discover_table_example_prints_what_pmu_discover_sim_prints() {
    let example = discover_table::report().unwrap_or_else(|e| panic!("{e}"));
    let discover = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["discover", "--sim", "--processor", "sapphire-rapids"])
        .output()
        .expect("pmu runs");
    assert!(
        discover.status.success(),
        "{}",
        String::from_utf8_lossy(&discover.stderr)
    );
    assert_eq!(example, String::from_utf8_lossy(&discover.stdout));
    let row = |name: &str| -> Vec<&str> {
        example
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no {name} in\n{example}"))
            .split_whitespace()
            .collect()
    };
    // Intel's Sapphire Rapids uncore guide: CHA n's unit control is MSR 0x2000 + 0x10 n.
    assert_eq!(row("CHA0")[4..8], ["matching", "msr", "MSR", "0x2000"]);
    assert_eq!(row("CHA1")[4..8], ["matching", "msr", "MSR", "0x2010"]);
    // Linux ignores the table's UPI and M3UPI entries on this part (spr_uncore_units_ignore):
    // those rows, and only those, are not compared.
    for line in example.lines().skip(1) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let linux_ignores = words[1].starts_with("UPI") || words[1].starts_with("M3UPI");
        let expected = if linux_ignores { "ignored" } else { "matching" };
        assert_eq!(words[4], expected, "{line}");
    }
}

#[path = "../examples/detect_machine.rs"]
#[allow(dead_code)]
mod detect_machine;

#[test]
fn the_detect_machine_example_prints_what_pmu_detect_prints() {
    // A machine whose cpuinfo names family 6, model 0x8f: Sapphire Rapids (the SDM's
    // DisplayFamily_DisplayModel 06_8FH).
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("proc")).unwrap();
    std::fs::write(
        root.path().join("proc/cpuinfo"),
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n\
         model name\t: test part\nstepping\t: 8\n",
    )
    .unwrap();
    let example = detect_machine::report(Some(root.path())).unwrap_or_else(|e| panic!("{e}"));
    let detect = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["detect", "--root"])
        .arg(root.path())
        .output()
        .expect("pmu runs");
    assert!(
        detect.status.success(),
        "{}",
        String::from_utf8_lossy(&detect.stderr)
    );
    assert_eq!(example, String::from_utf8_lossy(&detect.stdout));
    assert!(example.starts_with("processor: test part"), "{example}");
    assert!(example.contains("specs: sapphire-rapids ("), "{example}");
    // The tree has no discovery device and no MSR files: both said.
    assert!(example.contains("discovery table: not found"), "{example}");
    assert!(example.contains("no /dev/cpu/*/msr"), "{example}");
    // A tree without cpuinfo is refused, naming the file.
    let empty = tempfile::tempdir().unwrap();
    let e = detect_machine::report(Some(empty.path())).unwrap_err();
    assert!(e.to_string().contains("proc/cpuinfo"), "{e}");
}

#[path = "../examples/perf_stat.rs"]
#[allow(dead_code)]
mod perf_stat;

#[test]
fn the_perf_stat_example_prints_what_pmu_stat_prints_but_the_numbers() {
    let (example, exit_code) = perf_stat::report().unwrap_or_else(|e| panic!("{e}"));
    let stat = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["stat", "-x,", "-e", perf_stat::EVENTS, "--"])
        .args(perf_stat::COMMAND)
        .output()
        .expect("pmu runs");
    assert!(
        stat.status.success(),
        "{}",
        String::from_utf8_lossy(&stat.stderr)
    );
    assert_eq!(exit_code, 0);
    // pmu stat prints on stderr, as perf stat.
    let printed = String::from_utf8_lossy(&stat.stderr);
    assert_eq!(perf_stat::steady(&example), perf_stat::steady(&printed));
    // perf stat's CSV: count, unit, event, time counted, share counted, derived value, its
    // unit; the task clock in msec with the CPUs it kept busy, page faults per second of it.
    let row = |event: &str| -> Vec<String> {
        example
            .lines()
            .find(|l| l.split(',').nth(2) == Some(event))
            .unwrap_or_else(|| panic!("no {event} in\n{example}"))
            .split(',')
            .map(String::from)
            .collect()
    };
    let (clock, faults) = (row("task-clock"), row("page-faults"));
    assert_eq!(
        [&clock[1], &clock[6]],
        ["msec", "CPUs utilized"],
        "{example}"
    );
    assert_eq!(faults[6], "K/sec", "{example}");
    let msec: f64 = clock[0].parse().unwrap();
    let count: f64 = faults[0].parse().unwrap();
    let rate: f64 = faults[5].parse().unwrap();
    assert!(msec > 0.0 && count > 0.0, "{example}");
    // The rate is the faults over the task clock's seconds, in thousands; the clock is
    // printed to 0.01 msec, so allow that rounding.
    let low = count / ((msec + 0.005) / 1000.0) / 1000.0;
    let high = count / ((msec - 0.005).max(0.001) / 1000.0) / 1000.0;
    assert!((low * 0.999..=high * 1.001).contains(&rate), "{example}");
}

/// The example's default-event CSV rows name the events and units `pmu stat -x, -- true`
/// names, in its order, and its metric-only lines have the header and the number of fields
/// of `pmu stat -x, --metric-only -- true` (the counts themselves differ from run to run).
#[test]
fn the_perf_stat_example_prints_perfs_default_rows_and_metric_columns() {
    let (rows, metrics, exit_code) = perf_stat::default_report().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(exit_code, 0);
    let stat = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_pmu"))
            .args(["stat", "-x,"])
            .args(extra)
            .arg("--")
            .args(perf_stat::COMMAND)
            .output()
            .expect("pmu runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let names = |csv: &str| -> Vec<(String, String)> {
        csv.lines()
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[1].to_string(), f[2].to_string())
            })
            .collect()
    };
    let pmu = stat(&[]);
    assert_eq!(names(&rows), names(&pmu), "example:\n{rows}\npmu:\n{pmu}");
    assert_eq!(names(&rows).len(), 8, "perf's eight default events: {rows}");
    let pmu = stat(&["--metric-only"]);
    let (ours, theirs): (Vec<&str>, Vec<&str>) = (metrics.lines().collect(), pmu.lines().collect());
    assert_eq!(ours.len(), 2, "{metrics}");
    assert_eq!(ours[0], theirs[0]);
    assert_eq!(ours[1].matches(',').count(), theirs[1].matches(',').count());
}

#[path = "../examples/mesh_event.rs"]
#[allow(dead_code)]
mod mesh_event;

#[test]
fn the_mesh_event_example_prints_what_pmu_encode_and_decode_print() {
    let example = mesh_event::report().unwrap_or_else(|e| panic!("{e}"));
    let encode = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["encode", mesh_event::EVENT, mesh_event::NODE, "--perf"])
        .output()
        .unwrap();
    assert!(encode.status.success());
    let encoded = String::from_utf8(encode.stdout).unwrap();
    // 0x68 << 32 | bynodeid << 31 | occupid 1 << 27 | eventid 0x0f << 16 | type 5, by hand.
    assert_eq!(
        encoded,
        "arm_cmn_0/type=0x5,eventid=0xf,occupid=0x1,nodeid=0x68,bynodeid=0x1/\n"
    );
    let decode = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["decode", mesh_event::PMU, "0x68880f0005"])
        .output()
        .unwrap();
    assert!(decode.status.success());
    assert_eq!(
        example,
        encoded + &String::from_utf8(decode.stdout).unwrap()
    );
}
