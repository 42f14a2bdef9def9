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

#[path = "../examples/stat_command.rs"]
#[allow(dead_code)]
mod stat_command;

/// The example's CSV rows name the events and units `pmu stat -x, -- true` names, in its
/// order, and its metric-only lines have the header and the number of fields of `pmu stat
/// -x, --metric-only -- true` (the counts themselves differ from run to run).
#[test]
fn the_stat_example_prints_the_rows_and_columns_pmu_stat_prints() {
    let (rows, metrics, exit_code) = stat_command::report().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(exit_code, 0);
    let stat = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_pmu"))
            .args(["stat", "-x,"])
            .args(extra)
            .arg("--")
            .args(stat_command::COMMAND)
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
