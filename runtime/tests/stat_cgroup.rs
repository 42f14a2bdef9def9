//! `pmu stat -a -G CGROUP` beside the real `perf stat -a -G CGROUP` (perf 6.1, which `.ci/run`
//! installs): the test makes a cgroup of its own under the cgroup file system perf uses (a
//! v1 hierarchy with `perf_event`, else cgroup2, found in /proc/mounts), and the measured
//! command moves itself into it and execs a program that burns 200 ms of its own CPU time
//! (`CLOCK_PROCESS_CPUTIME_ID`), so that the cgroup's task-clock is 200 msec by
//! construction: each tool's count within 10% of that, and pmu's within 10% of perf's. A
//! cgroup nobody runs in reads `<not counted>` in both. Needs root (to make a cgroup and
//! move a task into it); where a cgroup cannot be made, the tests say so and pass without
//! running.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// How far a count may be from 200 msec and from perf's.
const TOLERANCE: f64 = 0.10;

const BURN: &str = r#"
#include <time.h>
int main(void) {
    struct timespec t;
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++) x += i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while (t.tv_sec * 1000000000L + t.tv_nsec < 200000000L);
    return 0;
}
"#;

/// The cgroup mount point perf counts in, read from /proc/mounts here (not by pmu's code).
fn mount_point() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let fields: Vec<Vec<&str>> = mounts
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let v1 = fields
        .iter()
        .find(|f| f[2] == "cgroup" && f[3].split(',').any(|o| o == "perf_event"));
    let v2 = fields.iter().find(|f| f[2] == "cgroup2");
    v1.or(v2).map(|f| PathBuf::from(f[1]))
}

/// A cgroup made for the test, removed when dropped.
struct Cgroup {
    dir: PathBuf,
    name: String,
}

impl Cgroup {
    fn make(tag: &str) -> Option<Cgroup> {
        let mount = mount_point()?;
        let name = format!("pmu-test-{tag}-{}", std::process::id());
        let dir = mount.join(&name);
        match std::fs::create_dir(&dir) {
            Ok(()) => Some(Cgroup { dir, name }),
            Err(e) => {
                eprintln!(
                    "cannot make a cgroup at {} ({e}): -G not tested",
                    dir.display()
                );
                None
            }
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The tasks have ended; an empty cgroup is removed with rmdir.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

fn tool(name: &str, args: &[&str], dir: &Path) -> Output {
    let mut c = if name == "perf" {
        Command::new("perf")
    } else {
        Command::new(assert_cmd::cargo::cargo_bin("pmu"))
    };
    c.arg("stat")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {name} ({e}): install perf (Debian: apt-get install linux-perf)")
        })
}

/// The CSV count and cgroup of `event` in a `-x,` output.
fn csv_row(out: &str, event: &str) -> (String, String) {
    let line = out
        .lines()
        .find(|l| l.split(',').nth(2) == Some(event))
        .unwrap_or_else(|| panic!("no {event} row in {out}"));
    let f: Vec<&str> = line.split(',').collect();
    (f[0].to_string(), f[3].to_string())
}

#[test]
fn a_cgroups_task_clock_is_its_tasks_cpu_time_as_perfs() {
    let Some(cg) = Cgroup::make("burn") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("burn.c"), BURN).unwrap();
    let cc = Command::new("cc")
        .args(["-O1", "-o", "burn", "burn.c"])
        .current_dir(work.path())
        .output()
        .expect("cc (gcc) builds the test program; .ci/run installs it");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let script = format!("echo $$ > {}/cgroup.procs && exec ./burn", cg.dir.display());
    let args = [
        "-a",
        "-x,",
        "-e",
        "task-clock",
        "-G",
        &cg.name,
        "--",
        "sh",
        "-c",
        &script,
    ];
    let mut counts = Vec::new();
    for name in ["perf", "pmu"] {
        let o = tool(name, &args, work.path());
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{name}: {err}");
        let (count, cgroup) = csv_row(&err, "task-clock");
        assert_eq!(cgroup, cg.name, "{name}: {err}");
        let msec: f64 = count.parse().unwrap_or_else(|_| panic!("{name}: {err}"));
        assert!(
            (msec - 200.0).abs() <= 200.0 * TOLERANCE,
            "{name}: {msec} msec, not 200"
        );
        counts.push(msec);
    }
    let (perf, pmu) = (counts[0], counts[1]);
    assert!(
        (pmu - perf).abs() <= perf * TOLERANCE,
        "pmu {pmu} msec, perf {perf} msec"
    );
}

#[test]
fn a_cgroup_nobody_runs_in_is_not_counted_in_both_and_the_rows_say_so_as_perfs() {
    let Some(cg) = Cgroup::make("empty") else {
        return;
    };
    let dir = std::env::temp_dir();
    let events = "task-clock,page-faults";
    // One cgroup for the first event; the second counts every task.
    let names = format!("{},", cg.name);
    let args = [
        "-a", "-x,", "-e", events, "-G", &names, "--", "sleep", "0.1",
    ];
    let perf = String::from_utf8_lossy(&tool("perf", &args, &dir).stderr).into_owned();
    let pmu = String::from_utf8_lossy(&tool("pmu", &args, &dir).stderr).into_owned();
    for out in [&perf, &pmu] {
        assert_eq!(
            csv_row(out, "task-clock"),
            ("<not counted>".into(), cg.name.clone()),
            "{out}"
        );
        let (faults, cgroup) = csv_row(out, "page-faults");
        assert!(faults.parse::<u64>().is_ok() && cgroup.is_empty(), "{out}");
    }
    // Text: the cgroup after the event name, as perf's.
    let args = [
        "-a",
        "-e",
        "task-clock",
        "-G",
        &cg.name,
        "--",
        "sleep",
        "0.1",
    ];
    let text = String::from_utf8_lossy(&tool("pmu", &args, &dir).stderr).into_owned();
    let row = text.lines().find(|l| l.contains("task-clock")).unwrap();
    let words: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        words,
        ["<not", "counted>", "msec", "task-clock", cg.name.as_str()],
        "{text}"
    );
}

#[test]
fn mistakes_say_what_to_do() {
    let dir = std::env::temp_dir();
    for (args, says) in [
        (
            &[
                "-a",
                "-e",
                "task-clock",
                "-G",
                "pmu-no-such-cgroup",
                "--",
                "true",
            ][..],
            "mkdir",
        ),
        (&["-e", "task-clock", "-G", "x", "--", "true"], "-a"),
        (&["-a", "-G", "x", "--", "true"], "-e task-clock -G NAME"),
        (
            &["-a", "-e", "task-clock", "-G", "a,b", "--", "true"],
            "2 cgroups for 1 events",
        ),
    ] {
        let o = tool("pmu", args, &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Several `-G`, each after its `-e`, as perf pairs them (the N-th cgroup name of all the
/// `-G`s goes to the N-th event; a single one so far limits every event before it): each
/// event's cgroup column (`-x,`) as perf's on the same command line, and what perf refuses
/// (`-G` before any `-e`, more names than events before it) refused with status 2.
#[test]
fn several_cgroup_options_pair_with_events_as_perfs() {
    let (Some(g1), Some(g2)) = (Cgroup::make("pair1"), Cgroup::make("pair2")) else {
        return;
    };
    let dir = std::env::temp_dir();
    let (a, b) = (g1.name.as_str(), g2.name.as_str());
    let lines: [&[&str]; 4] = [
        &["-e", "task-clock", "-G", a, "-e", "page-faults"],
        &["-e", "task-clock", "-G", a, "-e", "page-faults", "-G", b],
        &[
            "-e",
            "task-clock,page-faults",
            "-G",
            a,
            "-e",
            "cpu-clock",
            "-G",
            b,
        ],
        &["-e", "task-clock", "-e", "page-faults,cpu-clock", "-G", a],
    ];
    let cgroups = |out: &str| -> Vec<(String, String)> {
        out.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f.len() > 3).then(|| (f[2].to_string(), f[3].to_string()))
            })
            .collect()
    };
    for events in lines {
        let args: Vec<&str> = [&["-a", "-x,"][..], events, &["--", "sleep", "0.01"]].concat();
        let perf = tool("perf", &args, &dir);
        let pmu = tool("pmu", &args, &dir);
        let (perf, pmu) = (
            String::from_utf8_lossy(&perf.stderr),
            String::from_utf8_lossy(&pmu.stderr),
        );
        assert_eq!(
            cgroups(&pmu),
            cgroups(&perf),
            "{args:?}\nperf:\n{perf}\npmu:\n{pmu}"
        );
        assert!(
            cgroups(&perf).iter().any(|(_, g)| g == a),
            "{args:?}: {perf}"
        );
    }
    for refused in [
        &["-a", "-G", a, "-e", "task-clock", "--", "true"][..],
        &["-a", "-e", "task-clock", "-G", a, "-G", b, "--", "true"],
    ] {
        let perf = tool("perf", refused, &dir);
        assert!(!perf.status.success(), "perf took {refused:?}");
        let o = tool("pmu", refused, &dir);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{refused:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
