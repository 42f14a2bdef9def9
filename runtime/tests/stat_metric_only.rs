//! `pmu stat --metric-only` against the real `perf stat --metric-only` (perf 6.1, which
//! `.ci/run` installs) on this machine, with and without `-I`, as text and as CSV.
//!
//! On a machine without hardware events (this VM) perf has no metric column for the events it
//! can count: `task-clock`'s `CPUs utilized` and the rates are not metrics to
//! `--metric-only` (perf's `valid_only_metric`), and it prints no header for an event it
//! cannot count. So the shape compared is: the header line exactly as perf's (the time
//! column under `-I`, the place columns with `--per-socket`), one line per interval as
//! perf's (as many, each starting with the time as `%6lu.%09lu`, then the place), and the
//! same non-empty fields after them (none here). perf 6.1 also writes stray empty fields on
//! some lines (an interval where an event counted nothing, or an event it cannot count);
//! they are not compared.

use std::process::{Command, Output};
use std::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(tool: &str, args: &[&str]) -> String {
    let mut c = if tool == "perf" {
        let mut c = Command::new("perf");
        c.arg("stat");
        c
    } else {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("pmu"));
        c.arg("stat");
        c
    };
    let o: Output = c.args(args).output().unwrap_or_else(|e| {
        panic!("cannot run {tool} ({e}): install perf (Debian: apt-get install linux-perf)")
    });
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{tool} {args:?}: {err}");
    err
}

fn both(args: &[&str]) -> (String, String) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    (run("perf", args), run("pmu", args))
}

/// A line's fields after the time and place: split on `sep` (text: whitespace), empty ones
/// dropped.
fn values(line: &str, sep: Option<&str>, skip: usize) -> Vec<String> {
    let fields: Vec<&str> = match sep {
        Some(s) => line.split(s).collect(),
        None => line.split_whitespace().collect(),
    };
    fields
        .into_iter()
        .skip(skip)
        .filter(|f| !f.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn is_time(field: &str) -> bool {
    let (whole, frac) = field.split_once('.').unwrap_or(("", ""));
    whole.len() == 6 && frac.len() == 9 && frac.bytes().all(|b| b.is_ascii_digit())
}

/// The interval lines' shape: the header as perf's; then each line starts with the time as
/// perf prints it, and each interval (the lines of one time) has perf's first interval's places
/// and values, in order. How many intervals each prints is left to the clock: on a loaded
/// machine the command may outlast one more tick of either tool.
fn same_interval_shape(perf: &str, pmu: &str, sep: Option<&str>) {
    let lines = |s: &str| -> Vec<String> { s.lines().map(str::to_string).collect() };
    let (theirs, ours) = (lines(perf), lines(pmu));
    assert_eq!(ours[0], theirs[0], "header\nperf:\n{perf}\npmu:\n{pmu}");
    let intervals = |ls: &[String]| -> Vec<Vec<Vec<String>>> {
        let mut out: Vec<(String, Vec<Vec<String>>)> = Vec::new();
        for l in ls {
            let time = match sep {
                Some(s) => l.split(s).next().unwrap().to_string(),
                None => l.get(..16).unwrap_or(l).to_string(),
            };
            assert!(
                is_time(&time),
                "{l:?} starts with the time as perf prints it"
            );
            let row = values(l, sep, 1);
            match out.last_mut() {
                Some((t, rows)) if *t == time => rows.push(row),
                _ => out.push((time, vec![row])),
            }
        }
        out.into_iter().map(|(_, rows)| rows).collect()
    };
    let (theirs, ours) = (intervals(&theirs[1..]), intervals(&ours[1..]));
    assert!(!ours.is_empty(), "no interval\npmu:\n{pmu}");
    // Places and values as printed: the software events here carry no metric, so perf and pmu
    // print the same words after the time.
    for (i, rows) in ours.iter().enumerate() {
        assert_eq!(rows, &theirs[0], "interval {i}\nperf:\n{perf}\npmu:\n{pmu}");
    }
    let (n, m) = (ours.len(), theirs.len());
    assert!(
        n.abs_diff(m) <= 1,
        "{n} intervals against perf's {m}\nperf:\n{perf}\npmu:\n{pmu}"
    );
}

#[test]
fn intervals_are_a_line_each_with_perfs_columns() {
    let events = ["-e", "task-clock,page-faults", "--", "sleep", "0.35"];
    for sep in [None, Some(","), Some(";")] {
        let mut args = vec!["-I", "100", "--metric-only"];
        let flag = sep.map(|s| format!("-x{s}"));
        args.extend(flag.as_deref());
        args.extend(events);
        let (perf, pmu) = both(&args);
        // 0.35 s in 100 ms intervals: three whole ones and the rest, after the header (one
        // more where the loaded machine lets the command outlast a fourth tick).
        let n = pmu.lines().count();
        assert!((5..=6).contains(&n), "{n} lines:\n{pmu}");
        same_interval_shape(&perf, &pmu, sep);
    }
}

#[test]
fn per_socket_intervals_name_the_socket_as_perf() {
    let args = [
        "-I",
        "100",
        "--metric-only",
        "-a",
        "--per-socket",
        "--",
        "sleep",
        "0.25",
    ];
    let (perf, pmu) = both(&args);
    same_interval_shape(&perf, &pmu, None);
    let mut with_x = vec!["-x,"];
    with_x.extend(args);
    let (perf, pmu) = both(&with_x);
    same_interval_shape(&perf, &pmu, Some(","));
}

#[test]
fn without_intervals_the_header_and_values_lines_are_perfs() {
    // perf's default events: on this machine only the software ones count, none a metric.
    let (perf, pmu) = both(&["--metric-only", "-x,", "--", "sleep", "0.1"]);
    let (theirs, ours): (Vec<&str>, Vec<&str>) = (perf.lines().collect(), pmu.lines().collect());
    assert_eq!(ours.len(), theirs.len(), "perf:\n{perf}\npmu:\n{pmu}");
    assert_eq!(ours[0], theirs[0], "the header line");
    assert_eq!(
        values(ours[1], Some(","), 0),
        values(theirs[1], Some(","), 0)
    );
    // Text: the title, the two lines and the footer, as perf.
    let (perf, pmu) = both(&["--metric-only", "-e", "task-clock", "--", "sleep", "0.1"]);
    let shape = |s: &str| -> Vec<bool> { s.lines().map(|l| l.trim().is_empty()).collect() };
    assert_eq!(shape(&pmu), shape(&perf), "perf:\n{perf}\npmu:\n{pmu}");
    assert!(pmu.contains(" Performance counter stats for 'sleep 0.1':"));
    assert!(pmu.contains(" seconds time elapsed"));
}

/// `-j`: perf 6.1's `--metric-only -j` lines on this machine (no metric column: software
/// events only) are `{}` after the run and, under `-I`, a header line `{}` then
/// `{"interval" : T}` for each interval; with `-A` or
/// `--per-socket` perf opens each place's object (`{"cpu" : "0", `) and never closes it.
/// pmu's: the same lines, each a whole JSON object (perf's fields, closed).
#[test]
fn json_lines_are_perfs_objects() {
    let lines = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect()
    };
    let (perf, pmu) = both(&[
        "--metric-only",
        "-j",
        "-e",
        "task-clock",
        "--",
        "sleep",
        "0.1",
    ]);
    assert_eq!(lines(&pmu), lines(&perf), "perf:\n{perf}\npmu:\n{pmu}");
    let args = [
        "--metric-only",
        "-j",
        "-I",
        "100",
        "-a",
        "-e",
        "cpu-clock",
        "--",
        "sleep",
        "0.25",
    ];
    let (perf, pmu) = both(&args);
    let (perf, pmu) = (lines(&perf), lines(&pmu));
    assert_eq!(pmu.len(), perf.len(), "perf:\n{perf:?}\npmu:\n{pmu:?}");
    assert_eq!(
        (pmu[0].as_str(), perf[0].as_str()),
        ("{}", "{}"),
        "the header line"
    );
    for (ours, theirs) in pmu.iter().zip(&perf).skip(1) {
        let v: serde_json::Value = serde_json::from_str(ours).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["interval"], "{ours} (perf: {theirs})");
        assert!(theirs.starts_with("{\"interval\" : "), "{theirs}");
    }
    for place in ["-A", "--per-socket"] {
        let (perf, pmu) = both(&[
            "--metric-only",
            "-j",
            "-a",
            place,
            "-e",
            "cpu-clock",
            "--",
            "sleep",
            "0.1",
        ]);
        let opened: Vec<String> = lines(&perf)
            .into_iter()
            .filter(|l| l.starts_with("{\"cpu\"") || l.starts_with("{\"socket\""))
            .map(|l| l.trim_end().trim_end_matches(',').to_string() + "}")
            .collect();
        assert!(
            !opened.is_empty(),
            "{place}: perf printed no place:\n{perf}"
        );
        assert_eq!(lines(&pmu), opened, "{place}: perf:\n{perf}\npmu:\n{pmu}");
        for l in lines(&pmu) {
            serde_json::from_str::<serde_json::Value>(&l).unwrap();
        }
    }
}

/// An interval that is not whole milliseconds of at least 10 says what to type (exit 2).
#[test]
fn absurd_intervals_say_what_to_type() {
    for ms in ["0", "5", "1.5", "abc", "99999999999999999999"] {
        let o = Command::new(assert_cmd::cargo::cargo_bin("pmu"))
            .args(["stat", "-I", ms, "--metric-only", "--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "-I {ms}: {err}");
        assert!(err.contains("at least 10 (-I 100"), "-I {ms}: {err}");
    }
}

/// `--metric-only` with `-r 2` is refused as perf 6.1 refuses it (its message, a failure exit),
/// pmu with its usage status 2; `-r 1` counts, as perf's does.
#[test]
fn metric_only_with_repeats_is_refused_as_perf_refuses_it() {
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let args = ["stat", "--metric-only", "-r", "2", "--", "true"];
    let perf = Command::new("perf").args(args).output().unwrap();
    let pmu = Command::new(assert_cmd::cargo::cargo_bin("pmu"))
        .args(args)
        .output()
        .unwrap();
    let (perf_err, pmu_err) = (
        String::from_utf8_lossy(&perf.stderr),
        String::from_utf8_lossy(&pmu.stderr),
    );
    let refusal = "--metric-only is not supported with -r";
    assert!(
        !perf.status.success() && perf_err.contains(refusal),
        "perf: {perf_err}"
    );
    assert_eq!(pmu.status.code(), Some(2), "{pmu_err}");
    assert!(pmu_err.contains(refusal), "{pmu_err}");
    drop(one); // `both` takes the lock itself
    let (perf, pmu) = both(&["--metric-only", "-r", "1", "--", "true"]);
    assert!(
        perf.contains("Performance counter stats") && pmu.contains("Performance counter stats")
    );
}
