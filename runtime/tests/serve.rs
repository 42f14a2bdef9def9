//! `pmu serve` end to end: what it refuses, what a scrape sees under concurrent load, and that
//! SIGTERM puts back what it programmed. Every loop here is bounded in count and time and
//! talks only to 127.0.0.1.

#[path = "support/serve.rs"]
mod support;

use std::time::Duration;

use support::{get, samples, start, wait_until};

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::{pmu, two_sockets};

/// Two counters of one box counting the same simulated event: in any scrape that sees whole
/// intervals only, their totals are equal.
const TWINS: &[&str] = &[
    "--sim",
    "--unit",
    "xeon-e5-2600:IMC0",
    "--event",
    "event=UNC_M_CAS_COUNT.RD",
    "--event",
    "event=UNC_M_CAS_COUNT.RD",
    "--interval",
    "0.05",
    "--sim-rate",
    "100000",
];

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

#[test]
fn a_non_loopback_address_needs_allow_remote() {
    let out = pmu()
        .args(["serve", "--listen", "0.0.0.0:0", "--sim"])
        .args(&TWINS[1..])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    insta::assert_snapshot!("serve_non_loopback", stderr);
}

#[test]
fn concurrent_scrapes_see_whole_intervals_and_nothing_is_lost() {
    let served = start(TWINS);
    let pid = served.child.id();
    // Let the allocator settle on the first scrapes before measuring memory.
    for _ in 0..20 {
        assert_eq!(get(served.addr, "/metrics").0, 200);
    }
    let rss_before = rss_kib(pid);
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let addr = served.addr;
            std::thread::spawn(move || {
                let mut last = 0.0f64;
                for _ in 0..40 {
                    let (status, body) = get(addr, "/metrics");
                    assert_eq!(status, 200, "{body}");
                    assert!(body.ends_with("# EOF\n"), "a whole exposition: {body}");
                    let totals: Vec<f64> =
                        samples(&body, "pmu_events_total").into_values().collect();
                    assert_eq!(totals.len(), 2, "{body}");
                    // The two counters count the same events: a scrape that saw half an
                    // interval would show them apart.
                    assert_eq!(totals[0], totals[1], "{body}");
                    // Totals only grow.
                    assert!(totals[0] >= last, "{} after {last}", totals[0]);
                    last = totals[0];
                }
                last
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a scraper thread");
    }
    let rss_after = rss_kib(pid);
    // 640 scrapes must not grow the exporter: allow a little allocator slack.
    assert!(
        rss_after <= rss_before + 4096,
        "RSS grew from {rss_before} KiB to {rss_after} KiB over 640 scrapes"
    );
    // Counting went on while scrapes came in: the interval counter moved.
    let (_, body) = get(served.addr, "/metrics");
    let intervals = samples(&body, "pmu_intervals_total");
    assert!(intervals.values().all(|&n| n > 0.0), "{body}");
}

#[test]
fn unknown_paths_get_404_and_the_index_points_at_metrics() {
    let served = start(TWINS);
    assert_eq!(get(served.addr, "/nope").0, 404);
    let (status, body) = get(served.addr, "/");
    assert_eq!(status, 200);
    assert!(body.contains("/metrics"), "{body}");
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_restores_what_serve_programmed() {
    use std::fs;
    let root = two_sockets();
    let msr = root.path().join("dev/cpu/0/msr");
    let before = fs::read(&msr).unwrap();
    let root_arg = root.path().display().to_string();
    let served = start(&[
        "--root",
        &root_arg,
        "--unit",
        "xeon-7500:W",
        "--event",
        "ev_sel=0x01",
        "--interval",
        "0.05",
    ]);
    assert!(
        wait_until(Duration::from_secs(30), || fs::read(&msr).unwrap()
            != before),
        "serve programmed the W-box"
    );
    let pid = rustix::process::Pid::from_raw(served.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let mut served = served;
    let status = served.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "SIGTERM is a normal way to stop");
    assert!(
        fs::read(&msr).unwrap() == before,
        "every MSR serve changed is back as it was"
    );
}
