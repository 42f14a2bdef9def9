//! `pmu check`'s first part: what else holds the counters. On a file tree (a watchdog on,
//! one process with two perf events among others, one whose descriptors cannot be read) and
//! on this machine while the real `perf stat` counts: its process is named with its events.
//! perf is Debian's `linux-perf` (`.ci/run` installs it).

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pmu_runtime::check::holders::{holders, PerfHolder};

#[test]
fn holders_are_read_from_a_file_tree() {
    let root = tempfile::tempdir().unwrap();
    let proc_ = root.path().join("proc");
    std::fs::create_dir_all(proc_.join("sys/kernel")).unwrap();
    std::fs::write(proc_.join("sys/kernel/nmi_watchdog"), "1\n").unwrap();
    let process = |pid: u32, comm: &str, fds: &[&str]| {
        let dir = proc_.join(pid.to_string());
        std::fs::create_dir_all(dir.join("fd")).unwrap();
        std::fs::write(dir.join("comm"), format!("{comm}\n")).unwrap();
        for (n, target) in fds.iter().enumerate() {
            symlink(target, dir.join("fd").join(n.to_string())).unwrap();
        }
    };
    process(
        42,
        "perf",
        &[
            "/dev/null",
            "anon_inode:[perf_event]",
            "anon_inode:[perf_event]",
        ],
    );
    process(
        7,
        "bash",
        &["/dev/pts/0", "pipe:[1234]", "anon_inode:[eventfd]"],
    );
    // Another user's process: its fd directory is missing from the tree as it is unreadable.
    std::fs::create_dir_all(proc_.join("99")).unwrap();
    // Not a process.
    std::fs::create_dir_all(proc_.join("self-ish")).unwrap();
    let found = holders(root.path());
    assert_eq!(found.nmi_watchdog, Some(true));
    assert_eq!(
        found.perf,
        [PerfHolder {
            pid: 42,
            command: "perf".into(),
            events: 2
        }]
    );
    assert_eq!(found.unreadable, 1);
    assert_eq!(
        found.summary(),
        "NMI watchdog on (it holds one core counter per CPU); perf events held by perf (pid 42): 2; 1 processes could not be looked at"
    );
    std::fs::write(proc_.join("sys/kernel/nmi_watchdog"), "0\n").unwrap();
    std::fs::remove_dir_all(proc_.join("42")).unwrap();
    assert_eq!(
        holders(root.path()).summary(),
        "NMI watchdog off; no other process holds perf events; 1 processes could not be looked at"
    );
}

/// The real `perf stat` counting two software events on every CPU holds one event per event
/// and CPU; the check names its process with that many while it runs, and the watchdog's
/// state is what the kernel's file says.
#[test]
fn the_real_perf_stat_is_named_as_a_holder_on_this_machine() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let mut perf = Command::new("perf")
        .args([
            "stat",
            "-a",
            "-e",
            "task-clock,page-faults",
            "--",
            "sleep",
            "5",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("perf is not installed: install Debian's linux-perf (.ci/run does)");
    let pid = perf.id();
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut seen = None;
    while Instant::now() < deadline {
        let found = holders(Path::new("/"));
        if let Some(h) = found
            .perf
            .iter()
            .find(|h| h.pid == pid && h.events >= 2 * cpus)
        {
            seen = Some((h.clone(), found.nmi_watchdog));
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = perf.kill();
    let _ = perf.wait();
    let (holder, watchdog) = seen.expect("perf stat's events were never seen in /proc");
    assert_eq!(holder.command, "perf");
    assert_eq!(holder.events, 2 * cpus, "one per event and CPU");
    let file = std::fs::read_to_string("/proc/sys/kernel/nmi_watchdog").ok();
    assert_eq!(watchdog, file.map(|w| w.trim() != "0"));
}
