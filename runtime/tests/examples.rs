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
