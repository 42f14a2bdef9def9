//! SIGTERM sent to `pmu stat` while it counts a command, beside the real `perf stat` (perf
//! 6.1, which `.ci/run` installs) on this machine: pmu passes the signal on to the command,
//! prints what it counted and exits with the command's status (143: ended by SIGTERM, as a
//! shell reports it); perf dies of the signal itself without printing, and the command runs
//! on (it is ended here).

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `program` with its stderr in `err` (a file: a command left running would hold a
/// pipe open).
fn start(program: &str, args: &[&str], err: &std::fs::File) -> Child {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(err.try_clone().unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e} (perf: apt-get install linux-perf)"))
}

/// The child processes of `pid` (from /proc/PID/task/*/children), once it has one.
fn children_of(pid: u32) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut out = Vec::new();
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                let text = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
                out.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<u32>().ok()),
                );
            }
        }
        if !out.is_empty() || Instant::now() > deadline {
            return out;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn term(pid: u32) {
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Whether process `pid` is running (not gone, not a zombie).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Sends SIGTERM to `tool` counting `sleep 5` once the sleep runs; its status, stderr, the
/// sleep's pid and how long it took to end.
fn terminated(tool: &str, args: &[&str]) -> (std::process::ExitStatus, String, u32, Duration) {
    let err = tempfile::tempfile().unwrap();
    let mut child = start(tool, args, &err);
    let sleeps = children_of(child.id());
    assert_eq!(sleeps.len(), 1, "{tool}: the command's process");
    // Once it runs `sleep` (perf's child waits for perf before its exec).
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(format!("/proc/{}/comm", sleeps[0]))
        .unwrap_or_default()
        .trim()
        != "sleep"
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    let sent = Instant::now();
    term(child.id());
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    let mut text = String::new();
    let mut err = err;
    std::io::Seek::rewind(&mut err).unwrap();
    std::io::Read::read_to_string(&mut err, &mut text).unwrap();
    (status, text, sleeps[0], took)
}

#[test]
fn sigterm_reaches_the_command_and_pmu_prints_its_counts() {
    let pmu = env!("CARGO_BIN_EXE_pmu");
    let (status, stderr, sleep, took) =
        terminated(pmu, &["stat", "-e", "task-clock", "--", "sleep", "5"]);
    assert_eq!(status.code(), Some(128 + 15), "{stderr}");
    assert!(
        stderr.contains("Performance counter stats for 'sleep 5'"),
        "{stderr}"
    );
    assert!(stderr.contains("task-clock"), "{stderr}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(!running(sleep), "the command still runs");
}

#[test]
fn perf_dies_of_sigterm_and_leaves_the_command_running() {
    let (status, stderr, sleep, _) =
        terminated("perf", &["stat", "-e", "task-clock", "--", "sleep", "5"]);
    let still = running(sleep);
    if still {
        term(sleep);
    }
    assert_eq!(status.signal(), Some(15), "{stderr}");
    assert!(!stderr.contains("Performance counter stats"), "{stderr}");
    assert!(still, "perf 6.1 leaves the command running");
}

/// With `-r N`, SIGTERM ends the repeats too: the command it reached ends (143), no other
/// run starts, and the run made so far is printed; before, each run's command took the
/// signal and the next run began, so `pmu stat -r 3` outlived two SIGTERMs (and `-r 50`, any number).
#[test]
fn sigterm_ends_the_repeats_too() {
    let pmu = env!("CARGO_BIN_EXE_pmu");
    let (status, stderr, sleep, took) = terminated(
        pmu,
        &["stat", "-r", "3", "-e", "task-clock", "--", "sleep", "5"],
    );
    assert_eq!(status.code(), Some(128 + 15), "{stderr}");
    assert!(
        stderr.contains("Performance counter stats for 'sleep 5'"),
        "{stderr}"
    );
    assert!(!stderr.contains("runs)"), "one run was made: {stderr}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(!running(sleep), "the command still runs");
}
