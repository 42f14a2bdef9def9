//! `pmu stat` against the real `perf stat` (Debian's `linux-perf`, which `.ci/run` installs)
//! on this machine's kernel: the same command measured by each, one after the other; the
//! rows must be the same (names, order, units, comments, `<not supported>` where this machine
//! lacks an event), the lines as long as perf's, and the counts within these tolerances:
//!
//! - page faults of a program touching 100 MiB: 25,600 (100 MiB over 4 KiB pages, by hand)
//!   plus the program's start-up faults, which perf counts on a run touching nothing; pmu's
//!   count within [`FAULT_TOLERANCE`] (2%) of perf's and of that sum;
//! - a few hundred start-up faults of `sleep`/`true`: within 15% of perf's (the dynamic
//!   loader's faults vary by a few between runs);
//! - CPU time and elapsed time of `sleep 0.2`: the elapsed time 0.2 s to 0.3 s, the CPU time
//!   under 20 msec, for both tools; the comment is the count over the elapsed time;
//! - system-wide clocks per interval (`-I 100 -a`): the number of online CPUs times the
//!   time the full intervals' stamps span, within 10%, for each tool;
//!   per CPU (`-A`) or socket (`--per-socket`), 200 msec a CPU over `sleep 0.2`, within 10%.
//!
//! perf 6.1 exits 0 when the command fails or is killed, and 255 when the command does not
//! exist; pmu passes the status through as a shell reports it (the tests check pmu's), and
//! gives 127 for a missing command.

use std::process::{Command, Output};
use std::sync::Mutex;

/// One tool at a time: each run's faults and CPU time would disturb the other's.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How far pmu's count of the 100 MiB program's faults may be from perf's.
const FAULT_TOLERANCE: f64 = 0.02;

fn perf(args: &[&str]) -> Output {
    Command::new("perf")
        .arg("stat")
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run perf ({e}): install it (Debian: apt-get install linux-perf; .ci/run does)")
        })
}

fn pmu(args: &[&str]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("pmu"))
        .arg("stat")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One row of the text table.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    event: String,
    /// The count, or the marker (`<not supported>`).
    value: Result<f64, String>,
    unit: String,
    comment: Option<(f64, String)>,
    spread: bool,
    len: usize,
}

fn parse_row(line: &str) -> Row {
    let (head, comment) = match line.split_once(" # ") {
        Some((h, c)) => (h, Some(c)),
        None => (line, None),
    };
    let mut words: Vec<&str> = head.split_whitespace().collect();
    let value = if words[0].starts_with('<') {
        let marker = format!("{} {}", words[0], words[1]);
        words.drain(..2);
        Err(marker)
    } else {
        Ok(words.remove(0).parse::<f64>().unwrap())
    };
    let unit = if words[0] == "msec" {
        words.remove(0).to_string()
    } else {
        String::new()
    };
    let comment = comment.map(|c| {
        let c = c.split("  (").next().unwrap().trim();
        let (v, u) = c.split_once(' ').unwrap();
        (
            v.trim_end_matches('%').parse::<f64>().unwrap(),
            u.trim().to_string(),
        )
    });
    Row {
        event: words[0].to_string(),
        value,
        unit,
        comment,
        spread: line.contains("( +-"),
        len: line.len(),
    }
}

/// The table's rows and the footer's lines.
fn text(out: &str) -> (Vec<Row>, Vec<String>) {
    let mut blocks = out.split("\n\n").filter(|b| !b.trim().is_empty());
    let header = blocks.next().unwrap();
    assert!(header.contains("Performance counter stats for"), "{out}");
    let rows = blocks.next().unwrap().lines().map(parse_row).collect();
    (rows, blocks.map(|b| b.trim().to_string()).collect())
}

fn count(rows: &[Row], event: &str) -> f64 {
    rows.iter()
        .find(|r| r.event == event)
        .unwrap_or_else(|| panic!("no row {event} in {rows:?}"))
        .value
        .clone()
        .unwrap()
}

fn within(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance * b.abs().max(1.0)
}

/// The same rows as perf's: names, order, markers, units, comment units, line lengths.
fn same_rows(ours: &[Row], perfs: &[Row]) {
    let names = |r: &[Row]| r.iter().map(|r| r.event.clone()).collect::<Vec<_>>();
    assert_eq!(names(ours), names(perfs));
    for (o, p) in ours.iter().zip(perfs) {
        assert_eq!(o.value.is_err(), p.value.is_err(), "{o:?} / {p:?}");
        assert_eq!(o.value.as_ref().err(), p.value.as_ref().err());
        assert_eq!(o.unit, p.unit, "{o:?} / {p:?}");
        // The comment's unit; a rate's prefix (K/sec, /sec) follows its value, which may
        // differ by a context switch between the runs.
        let unit = |r: &Row| {
            r.comment
                .as_ref()
                .map(|c| c.1.trim_start_matches(['K', 'M', 'G']).to_string())
        };
        assert_eq!(unit(o), unit(p), "{o:?} / {p:?}");
        assert_eq!(o.spread, p.spread, "{o:?} / {p:?}");
        assert_eq!(o.len, p.len, "line length of {o:?} / {p:?}");
    }
}

#[test]
fn sleep_prints_perfs_default_rows_and_times() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = perf(&["--", "sleep", "0.2"]);
    let o = pmu(&["--", "sleep", "0.2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "the counts go to stderr, as perf's");
    let (perf_rows, perf_footer) = text(&stderr(&p));
    let (rows, footer) = text(&stderr(&o));
    same_rows(&rows, &perf_rows);
    assert!(stderr(&o).contains(" Performance counter stats for 'sleep 0.2':\n\n"));
    for r in [&rows, &perf_rows] {
        assert!(count(r, "task-clock") < 20.0, "{r:?}");
        assert!(count(r, "context-switches") <= 10.0, "{r:?}");
    }
    let faults = count(&rows, "page-faults");
    assert!(
        within(faults, count(&perf_rows, "page-faults"), 0.15),
        "{rows:?}\n{perf_rows:?}"
    );
    // The footer: elapsed, then user and sys, as perf's.
    let first_words = |f: &[String]| {
        f.iter()
            .flat_map(|b| b.lines())
            .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(first_words(&footer), first_words(&perf_footer));
    let elapsed: f64 = footer[0]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((0.2..0.3).contains(&elapsed), "{footer:?}");
    // CPUs utilized: task-clock (msec) over the elapsed time, worked here.
    let clock = rows.iter().find(|r| r.event == "task-clock").unwrap();
    let utilized = clock.comment.as_ref().unwrap().0;
    let expected = count(&rows, "task-clock") / 1000.0 / elapsed;
    assert!(
        (utilized - expected).abs() <= 0.0015,
        "{utilized} vs {expected}"
    );
}

#[test]
fn five_runs_print_means_and_spreads_as_perf() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = perf(&["-r", "5", "--", "true"]);
    let o = pmu(&["-r", "5", "--", "true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (perf_rows, perf_footer) = text(&stderr(&p));
    let (rows, footer) = text(&stderr(&o));
    assert!(
        stderr(&o).contains("for 'true' (5 runs):"),
        "{}",
        stderr(&o)
    );
    // The spread shows where perf's does on the rows that always vary (a clock) or never
    // do here (`<not supported>`); a small count's spread depends on the runs.
    let names: Vec<_> = rows.iter().map(|r| &r.event).collect();
    assert_eq!(
        names,
        perf_rows.iter().map(|r| &r.event).collect::<Vec<_>>()
    );
    for (o, p) in rows.iter().zip(&perf_rows) {
        assert_eq!(o.value.is_err(), p.value.is_err());
        if o.event == "task-clock" {
            assert!(o.spread && p.spread);
        }
    }
    assert!(within(
        count(&rows, "page-faults"),
        count(&perf_rows, "page-faults"),
        0.15
    ));
    // `0.001341 +- 0.000198 seconds time elapsed  ( +- 14.79% )`; no user/sys with -r.
    for f in [&footer, &perf_footer] {
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].contains(" +- ") && f[0].contains("seconds time elapsed"),
            "{f:?}"
        );
    }
}

/// A program that writes one byte into each 4 KiB page of `argv[1]` MiB (mapped without
/// transparent huge pages): one page fault each.
const TOUCH: &str = r#"
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    size_t len = (size_t)atoi(argv[1]) << 20;
    if (len == 0) return 0;
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    madvise(p, len, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < len; i += 4096) p[i] = 1;
    return 0;
}
"#;

fn csv_count(out: &str, event: &str) -> f64 {
    out.lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f.get(2) == Some(&event))
        .unwrap_or_else(|| panic!("no {event} in {out}"))[0]
        .parse()
        .unwrap()
}

#[test]
fn page_faults_of_100_mib_are_25600_and_perfs() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("touch.c");
    let exe = dir.path().join("touch");
    std::fs::write(&src, TOUCH).unwrap();
    let cc = Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("cc (gcc) builds the test program; .ci/run installs it");
    assert!(cc.status.success(), "{}", stderr(&cc));
    let exe = exe.to_str().unwrap();
    let page = String::from_utf8(
        Command::new("getconf")
            .arg("PAGESIZE")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(
        page.trim(),
        "4096",
        "the hand computation takes 4 KiB pages"
    );
    let list = "task-clock,page-faults";
    let baseline = csv_count(
        &stderr(&perf(&["-x,", "-e", list, "--", exe, "0"])),
        "page-faults",
    );
    let theirs = csv_count(
        &stderr(&perf(&["-x,", "-e", list, "--", exe, "100"])),
        "page-faults",
    );
    let o = pmu(&["-x,", "-e", list, "--", exe, "100"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = csv_count(&stderr(&o), "page-faults");
    let by_hand = 100.0 * 1024.0 * 1024.0 / 4096.0;
    assert_eq!(by_hand, 25_600.0);
    assert!(
        within(ours, theirs, FAULT_TOLERANCE),
        "pmu {ours}, perf {theirs}"
    );
    assert!(
        within(ours, by_hand + baseline, FAULT_TOLERANCE),
        "pmu {ours}, 25,600 + perf's start-up {baseline}"
    );
    assert!(ours >= by_hand, "{ours}");
}

/// CSV interval lines: (time, event, count or marker).
fn intervals(out: &str) -> Vec<(f64, String, String)> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].trim().parse().unwrap(),
                f[3].to_string(),
                f[1].to_string(),
            )
        })
        .collect()
}

#[test]
fn system_wide_intervals_match_perfs() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus = pmu_runtime::perf::format::parse_cpu_list(&cpus)
        .unwrap()
        .len() as f64;
    let args = ["-x,", "-I", "100", "-a", "--", "sleep", "0.5"];
    let p = intervals(&stderr(&perf(&args)));
    let o = pmu(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = intervals(&stderr(&o));
    let events = |v: &[(f64, String, String)]| {
        let mut e: Vec<String> = v.iter().map(|x| x.1.clone()).collect();
        e.dedup();
        e
    };
    let first: Vec<String> = events(&ours).into_iter().take(8).collect();
    assert_eq!(first, events(&p).into_iter().take(8).collect::<Vec<_>>());
    assert_eq!(
        first[0], "cpu-clock",
        "system-wide, perf's clock is cpu-clock"
    );
    for (tool, v) in [("pmu", &ours), ("perf", &p)] {
        let clocks: Vec<&(f64, String, String)> = v.iter().filter(|x| x.1 == "cpu-clock").collect();
        // 4 full intervals, then one or two more as the command ends at 0.5 s.
        assert!((5..=6).contains(&clocks.len()), "{tool}: {clocks:?}");
        // The full intervals' clocks add up to the CPUs times the time their stamps span (a
        // timer under load runs late, and a read may come a few ms after its stamp: the sum
        // over several intervals evens that out). perf's first interval also holds what its
        // counters saw before its clock started: from its second.
        let first = usize::from(tool == "perf");
        let since = if first == 0 { 0.0 } else { clocks[first - 1].0 };
        let msec: f64 = clocks[first..4]
            .iter()
            .map(|c| c.2.parse::<f64>().unwrap())
            .sum();
        let expected = cpus * (clocks[3].0 - since) * 1000.0;
        assert!(
            within(msec, expected, 0.10),
            "{tool}: {msec} msec over {:?} on {cpus} CPUs, {expected}",
            &clocks[..4]
        );
        let markers: Vec<_> = v.iter().filter(|x| x.1 == "cycles").map(|x| &x.2).collect();
        assert!(
            markers.iter().all(|m| *m == "<not supported>"),
            "{tool}: {markers:?}"
        );
    }
}

#[test]
fn the_commands_exit_status_is_passed_through() {
    let o = pmu(&["-e", "task-clock", "--", "sh", "-c", "exit 3"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("task-clock"));
    // Killed by SIGKILL (9): 128 + 9, as a shell reports it.
    let o = pmu(&["-e", "task-clock", "--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(o.status.code(), Some(137), "{}", stderr(&o));
}

#[test]
fn bad_input_says_what_to_do() {
    let o = pmu(&["-e", "task-clok", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean task-clock"),
        "{}",
        stderr(&o)
    );
    let o = pmu(&["-e", "task-clock", "--"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nothing after `--`"), "{}", stderr(&o));
    // A run count that is no positive number: what -r takes (perf: "Run count must be a
    // positive number"), not clap's tip to pass `-1` after `--`.
    for n in ["-1", "0", "many"] {
        let o = pmu(&["-r", n, "--", "true"]);
        assert_eq!(o.status.code(), Some(2), "-r {n}");
        let e = stderr(&o);
        assert!(
            e.contains("-r takes how many times to run the command"),
            "{e}"
        );
        assert!(!e.contains("tip:"), "{e}");
    }
    // The same for every option that takes a number or a list of them: what it takes.
    for (args, says) in [
        (&["-I", "-100"][..], "-I takes whole milliseconds"),
        (
            &["-I", "100", "--interval-count", "-1"],
            "--interval-count takes",
        ),
        (&["-D", "-5"], "-D takes whole milliseconds"),
        (&["-p", "-1"], "a process id is a number"),
        (&["-C", "-1"], "a CPU is not a number"),
    ] {
        let mut all = args.to_vec();
        all.extend(["-e", "task-clock", "--", "true"]);
        let o = pmu(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(says) && !e.contains("tip:"), "{args:?}: {e}");
    }
    let o = pmu(&["--", "no-such-program-here"]);
    assert_eq!(o.status.code(), Some(127));
    let e = stderr(&o);
    assert!(
        e.contains("no such program") && e.contains("nothing was counted"),
        "{e}"
    );
    assert!(
        !e.contains("Performance counter stats"),
        "no half-written output: {e}"
    );
}

#[test]
fn json_lines_have_perfs_fields() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let keys = |out: &str| {
        out.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
                k.sort();
                (v["event"].as_str().unwrap().to_string(), k)
            })
            .collect::<Vec<_>>()
    };
    let p = keys(&stderr(&perf(&[
        "-j",
        "-e",
        "task-clock,page-faults,cycles",
        "--",
        "true",
    ])));
    let o = pmu(&["-j", "-e", "task-clock,page-faults,cycles", "--", "true"]);
    assert_eq!(keys(&stderr(&o)), p);
}

#[test]
fn one_cpu_counts_its_clock_as_perf() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let args = ["-C", "0", "-e", "cpu-clock", "--", "sleep", "0.2"];
    let p = perf(&args);
    let o = pmu(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Performance counter stats for 'CPU(s) 0':"),
        "{}",
        stderr(&o)
    );
    let (rows, _) = text(&stderr(&o));
    let (perf_rows, _) = text(&stderr(&p));
    same_rows(&rows, &perf_rows);
    // One CPU's clock over 0.2 s: 200 msec, whatever it ran; perf's within the same 10%
    // (its start-up is inside its window).
    let ours = count(&rows, "cpu-clock");
    assert!(within(ours, 200.0, 0.10), "{rows:?}");
    assert!(
        within(count(&perf_rows, "cpu-clock"), 200.0, 0.15),
        "{perf_rows:?}"
    );
}

#[test]
fn a_running_process_is_counted_until_it_ends() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut sleeper = Command::new("sleep").arg("0.6").spawn().unwrap();
    let pid = sleeper.id().to_string();
    // The test reaps the sleeper when it ends, as a shell would; pmu must also see a zombie
    // (ended, not yet reaped) as the end.
    let reaper = std::thread::spawn(move || sleeper.wait().unwrap());
    let started = std::time::Instant::now();
    let o = pmu(&["-p", &pid, "-e", "task-clock,context-switches"]);
    let waited = started.elapsed().as_secs_f64();
    reaper.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            "Performance counter stats for process id '{pid}':"
        )),
        "{e}"
    );
    let (rows, footer) = text(&e);
    assert_eq!(
        rows.iter().map(|r| r.event.as_str()).collect::<Vec<_>>(),
        ["task-clock", "context-switches"]
    );
    // sleep spends nearly all of its 0.6 s asleep: under 20 msec of CPU.
    assert!(count(&rows, "task-clock") < 20.0, "{rows:?}");
    assert!(
        waited < 1.5,
        "pmu ended {waited:.2} s after the start, the process at 0.6 s"
    );
    assert!(footer[0].contains("seconds time elapsed"), "{footer:?}");
}

#[test]
fn per_cpu_and_per_socket_rows_are_perfs() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus = pmu_runtime::perf::format::parse_cpu_list(&online)
        .unwrap()
        .len();
    let table =
        |out: &str| -> Vec<String> { text_block(out).lines().map(str::to_string).collect() };
    for (mode, words_before_count) in [("-A", 1), ("--per-socket", 2)] {
        let args = [
            mode,
            "-a",
            "-e",
            "cpu-clock,page-faults",
            "--",
            "sleep",
            "0.2",
        ];
        let theirs = table(&stderr(&perf(&args)));
        let o = pmu(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let ours = table(&stderr(&o));
        assert_eq!(ours.len(), theirs.len(), "{mode}: {ours:?}\n{theirs:?}");
        for (a, b) in ours.iter().zip(&theirs) {
            let (wa, wb): (Vec<&str>, Vec<&str>) = (
                a.split_whitespace().collect(),
                b.split_whitespace().collect(),
            );
            // The place (CPU0; S0 and its CPU count) and the event are perf's, the line as long.
            assert_eq!(
                wa[..words_before_count],
                wb[..words_before_count],
                "{a}\n{b}"
            );
            assert_eq!(a.contains("cpu-clock"), b.contains("cpu-clock"), "{a}\n{b}");
            assert_eq!(a.len(), b.len(), "{a}\n{b}");
            if a.contains("cpu-clock") {
                // Each CPU's clock is 200 msec over 0.2 s; a socket's, its CPUs' sum.
                let per = if mode == "-A" {
                    1.0
                } else {
                    wa[1].parse::<f64>().unwrap()
                };
                let msec: f64 = wa[words_before_count].parse().unwrap();
                assert!(within(msec, per * 200.0, 0.10), "{a}");
            }
        }
        if mode == "-A" {
            assert_eq!(ours.len(), 2 * cpus, "a row per CPU and event: {ours:?}");
        }
    }
}

/// The table between the header and the footer.
fn text_block(out: &str) -> &str {
    out.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .nth(1)
        .unwrap()
}

#[test]
fn a_delay_leaves_out_what_the_command_did_first() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("touch.c");
    std::fs::write(&src, TOUCH).unwrap();
    let cc = Command::new("cc")
        .current_dir(dir.path())
        .args(["-O1", "-o", "touch", "touch.c"])
        .output()
        .expect("cc (gcc) builds the test program; .ci/run installs it");
    assert!(cc.status.success(), "{}", stderr(&cc));
    // 10 MiB touched at once, 10 MiB more after 1 s: a 500 ms delay counts the second only,
    // 2,560 faults (10 MiB over 4 KiB pages) and that program's start-up. The margins are
    // wide on both sides because under CI's load a first touch of 100 MiB outlasted a 200 ms
    // delay and perf counted part of it (4,144).
    let script = "./touch 10; sleep 1; ./touch 10";
    let args = [
        "-x,",
        "-D",
        "500",
        "-e",
        "page-faults",
        "--",
        "sh",
        "-c",
        script,
    ];
    let run = |o: Output| {
        assert!(o.status.success(), "{}", stderr(&o));
        csv_count(&stderr(&o), "page-faults")
    };
    let in_dir = |mut c: Command| c.current_dir(dir.path()).output().unwrap();
    let mut p = Command::new("perf");
    p.arg("stat").args(args);
    let theirs = run(in_dir(p));
    let mut o = Command::new(assert_cmd::cargo::cargo_bin("pmu"));
    o.arg("stat").args(args);
    let ours = run(in_dir(o));
    assert!((2_560.0..2_560.0 + 500.0).contains(&ours), "pmu {ours}");
    assert!(within(ours, theirs, 0.10), "pmu {ours}, perf {theirs}");
}

/// `pmu stat` (or perf) as nobody, without capabilities, when the tests run as root
/// (setpriv, from util-linux); as themselves otherwise.
fn unprivileged(tool: &std::path::Path, args: &[&str]) -> Output {
    let root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0;
    let mut c = if root {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(tool);
        c
    } else {
        Command::new(tool)
    };
    c.args(args)
        .output()
        .expect("setpriv (util-linux) runs the tool as nobody")
}

#[test]
fn unprivileged_the_kernel_is_left_out_as_perf_does() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("pmu");
    let args = ["stat", "-e", "task-clock,page-faults", "--", "true"];
    let o = unprivileged(&bin, &args);
    let p = unprivileged(std::path::Path::new("perf"), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (rows, _) = text(&stderr(&o));
    let (perf_rows, _) = text(&stderr(&p));
    // perf_event_paranoid 2 and above keeps the kernel from an unprivileged user: both tools
    // count user mode only and say so with `:u`; below 2, both count everything.
    let names: Vec<&str> = rows.iter().map(|r| r.event.as_str()).collect();
    let expected = if paranoid >= 2 {
        ["task-clock:u", "page-faults:u"]
    } else {
        ["task-clock", "page-faults"]
    };
    assert_eq!(names, expected);
    same_rows(&rows, &perf_rows);
    // Counting the whole system is refused, naming the setting and what to do.
    if paranoid >= 1 {
        let o = unprivileged(&bin, &["stat", "-a", "-e", "cpu-clock", "--", "true"]);
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        assert!(
            e.contains("perf_event_paranoid") && e.contains("CAP_PERFMON"),
            "{e}"
        );
        assert!(
            e.contains("open cpu-clock on CPU"),
            "the event as written: {e}"
        );
    }
}

#[test]
fn ctrl_c_reaches_the_command_and_the_counts_are_still_printed() {
    use std::os::unix::process::CommandExt;
    let started = std::time::Instant::now();
    // Its own process group, as a terminal's foreground job: Ctrl-C is SIGINT to the group.
    let child = Command::new(assert_cmd::cargo::cargo_bin("pmu"))
        .args(["stat", "-e", "task-clock", "--", "sleep", "10"])
        .process_group(0)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let group = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process_group(group, rustix::process::Signal::INT).unwrap();
    let o = child.wait_with_output().unwrap();
    // sleep ended by SIGINT (2): 130, as a shell reports it; pmu lived on and printed.
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let (rows, footer) = text(&stderr(&o));
    assert_eq!(rows[0].event, "task-clock");
    assert!(footer[0].contains("seconds time elapsed"), "{footer:?}");
    assert!(
        started.elapsed().as_secs() < 5,
        "the command did not get the signal"
    );
}

#[test]
fn dash_o_writes_the_counts_to_a_file_and_never_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("counts.txt");
    let f = file.to_str().unwrap();
    let o = pmu(&["-o", f, "-e", "task-clock", "--", "echo", "hello"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The command's output is its own; the counts are in the file, stderr is empty.
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello\n");
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let (rows, _) = text(&std::fs::read_to_string(&file).unwrap());
    assert_eq!(rows[0].event, "task-clock");
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let o = pmu(&["-o", link.to_str().unwrap(), "--", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    // `-o /dev/stdout` (a link the system makes to this process's own output) is that
    // output, as perf takes it: the counts on stdout, nothing on stderr, for both. (perf
    // writes a first line `# started on DATE` into any -o file; pmu does not.)
    for o in [
        pmu(&["-o", "/dev/stdout", "-e", "task-clock", "--", "true"]),
        perf(&["-o", "/dev/stdout", "-e", "task-clock", "--", "true"]),
    ] {
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        let out: String = out
            .lines()
            .filter(|l| !l.starts_with("# started on"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(
            out.contains("Performance counter stats for 'true'"),
            "{out}"
        );
        assert_eq!(text(&out).0[0].event, "task-clock", "{out}");
        assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    }
}

/// perf prints the user and system times only for one run counting the command alone
/// (builtin-stat.c: `run_count == 1 && target__none`): with -a or -C beside a command the
/// footer is the elapsed time alone. The footers' words, compared with perf's.
#[test]
fn user_and_sys_times_only_when_the_command_alone_is_counted() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let words = |o: &Output| {
        let (_, footer) = text(&stderr(o));
        footer
            .iter()
            .flat_map(|b| b.lines())
            .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
    };
    for args in [
        &["-a", "-e", "cpu-clock", "--", "sleep", "0.05"][..],
        &["-C", "0", "-e", "cpu-clock", "--", "sleep", "0.05"][..],
        &["-e", "task-clock", "--", "sleep", "0.05"][..],
    ] {
        let (p, o) = (perf(args), pmu(args));
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert_eq!(
            words(&o),
            words(&p),
            "{args:?}\n{}\n{}",
            stderr(&o),
            stderr(&p)
        );
    }
}

/// `pmu stat -I 100 -a | head -3` (counts to a pipe whose reader goes away): perf ends (its
/// SIGPIPE: 141 as a shell reports it) at the next interval instead of counting on for ever;
/// pmu must end too, with the same status. Each tool's counts go through a pipe that is
/// closed after its first 3 lines; each must be gone within 3 s after.
#[test]
fn a_closed_pipe_ends_the_count_as_perfs() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let args = ["stat", "-I", "100", "-a", "-e", "cpu-clock"];
    for tool in [
        "perf",
        assert_cmd::cargo::cargo_bin("pmu").to_str().unwrap(),
    ] {
        let mut c = Command::new(tool);
        // Both write the counts to stderr: the pipe is a shell's `2>&1 | head -3`.
        c.args(args).stdout(std::process::Stdio::null());
        c.stderr(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        for _ in 0..3 {
            lines.next().unwrap().unwrap();
        }
        drop(lines);
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > std::time::Duration::from_secs(3) {
                let _ = child.kill();
                panic!("{tool} kept counting after its reader went away");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let shell = status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap());
        assert_eq!(shell, 141, "{tool}: {status:?}");
    }
}
