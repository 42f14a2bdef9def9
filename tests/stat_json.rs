//! `pmu stat -j` against its versioned schema (docs/stat-json.schema.json): every line the
//! library's JSON layout writes (what `pmu stat -j` prints) for a command counted with perf's
//! software events on this machine's kernel, once, over several runs (`variance`), every
//! interval per CPU (`interval`, `cpu`) and per socket (`socket`, `aggregate-number`).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use pmu_runtime::perf::sysfs::EventSources;
use pmu_runtime::stat::aggr::StatAggr;
use pmu_runtime::stat::events;
use pmu_runtime::stat::report::{self, StatLayout};
use pmu_runtime::stat::run::{self, StatPlan, StatScope};
use serde_json::Value;

fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/stat-json.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).expect("a valid schema")
}

fn plan(scope: StatScope, command: &[&str]) -> StatPlan {
    let events = events::parse_events(
        &["task-clock,page-faults,cpu-clock"],
        &EventSources::default(),
    )
    .unwrap();
    StatPlan {
        events,
        scope,
        command: command.iter().map(|s| s.to_string()).collect(),
        repeat: 1,
        interval: None,
        interval_count: None,
        aggr: StatAggr::Global,
        delay: None,
    }
}

/// Every line of `text`, each a JSON object valid against the schema; the lines.
fn valid_lines(v: &jsonschema::Validator, text: &str) -> Vec<Value> {
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!lines.is_empty());
    for (l, value) in text.lines().zip(&lines) {
        let errors: Vec<String> = v.iter_errors(value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{l}: {}", errors.join("; "));
    }
    lines
}

#[test]
fn every_json_line_follows_the_schema() {
    let v = validator();
    let stop = AtomicBool::new(false);
    let once = plan(StatScope::Command, &["true"]);
    let o = run::measure(&once, &stop, |_| {}).unwrap();
    let lines = valid_lines(&v, &report::summary(&o, "'true'", &StatLayout::Json));
    assert_eq!(lines[0]["event"], "task-clock");
    // Over runs: the spread.
    let repeated = StatPlan {
        repeat: 3,
        ..plan(StatScope::Command, &["true"])
    };
    let o = run::measure(&repeated, &stop, |_| {}).unwrap();
    let lines = valid_lines(&v, &report::summary(&o, "'true'", &StatLayout::Json));
    assert!(lines.iter().all(|l| l.get("variance").is_some()));
    // Every interval, per CPU and per socket.
    for (aggr, key) in [(StatAggr::PerCpu, "cpu"), (StatAggr::PerSocket, "socket")] {
        let every = StatPlan {
            interval: Some(Duration::from_millis(50)),
            aggr,
            ..plan(
                StatScope::Cpus(run::online_cpus().unwrap()),
                &["sleep", "0.12"],
            )
        };
        let mut text = String::new();
        let mut index = 0;
        run::measure(&every, &stop, |iv| {
            text.push_str(&report::interval(iv, index, &StatLayout::Json));
            index += 1;
        })
        .unwrap();
        let lines = valid_lines(&v, &text);
        assert!(lines
            .iter()
            .all(|l| l.get("interval").is_some() && l.get(key).is_some()));
    }
}

/// The schema can fail: a field of the wrong type, an unknown field, a missing one.
#[test]
fn the_schema_refuses_what_pmu_must_not_write() {
    let v = validator();
    let good: Value = serde_json::from_str(
        r#"{"counter-value" : "0.510000", "unit" : "msec", "event" : "task-clock", "event-runtime" : 510000, "pcnt-running" : 100.00, "metric-value" : 0.423000, "metric-unit" : "CPUs utilized"}"#,
    )
    .unwrap();
    assert!(v.is_valid(&good));
    let mut bad = good.clone();
    bad["pcnt-running"] = Value::from("100.00%");
    assert!(!v.is_valid(&bad));
    let mut bad = good.clone();
    bad["counter-value"] = Value::from("108.97919999999999");
    assert!(!v.is_valid(&bad));
    let mut bad = good.clone();
    bad["extra"] = Value::from(1);
    assert!(!v.is_valid(&bad));
    let mut bad = good;
    bad.as_object_mut().unwrap().remove("event");
    assert!(!v.is_valid(&bad));
}

/// `-G` (schema 1.1): each line names its event's cgroup, empty for an event counting every
/// task; counted in the root cgroup (`/`), which exists wherever a cgroup file system is
/// mounted.
#[test]
fn cgroup_lines_follow_the_schema() {
    if pmu_runtime::perf::cgroup::mount_point().is_none() {
        eprintln!("no cgroup file system is mounted: -G's JSON not validated");
        return;
    }
    let v = validator();
    let mut counted = plan(StatScope::Cpus(run::online_cpus().unwrap()), &["true"]);
    events::assign_cgroups(&mut counted.events, "/,").unwrap();
    let o = run::measure(&counted, &AtomicBool::new(false), |_| {}).unwrap();
    let lines = valid_lines(&v, &report::summary(&o, "'system wide'", &StatLayout::Json));
    let cgroups: Vec<&Value> = lines.iter().map(|l| &l["cgroup"]).collect();
    assert_eq!(cgroups, ["/", "", ""]);
}

/// `--metric-only -j` (schema 1.2): every line valid, per CPU and per socket under `-I`
/// (`{}` first, perf's header) and after the run; a column's value is a string of digits
/// or `none`, never a number or a unit (the schema refuses them).
#[test]
fn metric_only_lines_follow_the_schema() {
    use pmu_runtime::stat::metric_only;
    let v = validator();
    let stop = AtomicBool::new(false);
    for aggr in [StatAggr::PerCpu, StatAggr::PerSocket] {
        let every = StatPlan {
            interval: Some(Duration::from_millis(50)),
            aggr,
            ..plan(
                StatScope::Cpus(run::online_cpus().unwrap()),
                &["sleep", "0.12"],
            )
        };
        let mut text = String::new();
        let mut index = 0;
        let o = run::measure(&every, &stop, |iv| {
            text.push_str(&metric_only::interval(iv, index, aggr, &StatLayout::Json).unwrap());
            index += 1;
        })
        .unwrap();
        let lines = valid_lines(&v, &text);
        assert_eq!(lines[0], serde_json::json!({}));
        assert!(lines[1..].iter().all(|l| l.get("interval").is_some()));
        let after = metric_only::summary(&o, "'sleep 0.12'", &StatLayout::Json).unwrap();
        valid_lines(&v, &after);
    }
    let good: Value = serde_json::from_str(
        r#"{"interval" : 0.100000000, "cpu" : "0", "GHz" : "2.000", "branch-misses of all branches" : "none"}"#,
    )
    .unwrap();
    assert!(v.is_valid(&good));
    let mut bad = good.clone();
    bad["GHz"] = Value::from(2.0);
    assert!(!v.is_valid(&bad));
    let mut bad = good;
    bad["GHz"] = Value::from("2.000 GHz");
    assert!(!v.is_valid(&bad));
}
