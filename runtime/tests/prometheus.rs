//! `pmu serve` against the real thing: `promtool check metrics` on its exposition, and a real
//! Prometheus server scraping it on loopback, whose HTTP API must report the rate of events
//! the simulator injects.
//!
//! These need Debian's `prometheus` package (the server and promtool). They are `#[ignore]`d,
//! so `cargo test --workspace` on a machine with only Rust lists them as ignored, with the
//! reason; `.ci/run` installs the package and runs them with `--ignored`. Every wait is bounded,
//! only 127.0.0.1 is used, and every process started is killed at the end.

#[path = "support/serve.rs"]
mod support;

#[path = "support/families.rs"]
mod families;

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::{get, start, wait_until};

const NEEDS: &str = "needs Prometheus and promtool (apt-get install prometheus; .ci/run installs them and runs these with --ignored)";

/// Events per second the simulator injects into each watched counter.
const RATE: f64 = 50_000.0;
/// The counting interval of `pmu serve`, in seconds.
const INTERVAL: f64 = 0.1;

fn serve() -> support::Served {
    start(&[
        "--sim",
        "--unit",
        "xeon-e5-2600:IMC0",
        "--event",
        "event=UNC_M_CAS_COUNT.RD",
        "--interval",
        &INTERVAL.to_string(),
        "--sim-rate",
        &RATE.to_string(),
    ])
}

fn tool(name: &str) -> Command {
    assert!(
        Command::new(name).arg("--version").output().is_ok(),
        "`{name}` is not on PATH: {NEEDS}"
    );
    Command::new(name)
}

/// `promtool check metrics` on `text`: it must find nothing to say.
fn promtool_check(text: &str) {
    let mut check = tool("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = check.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool: {said}\n---\n{text}");
    assert!(
        said.trim().is_empty(),
        "promtool found problems: {said}\n---\n{text}"
    );
}

#[test]
#[ignore = "needs Prometheus and promtool (apt-get install prometheus); .ci/run runs it"]
fn promtool_accepts_the_exposition() {
    let served = serve();
    assert!(wait_until(Duration::from_secs(30), || {
        let intervals = support::samples(&get(served.addr, "/metrics").1, "pmu_intervals_total");
        intervals.values().any(|&n| n >= 2.0)
    }));
    // promtool reads the Prometheus text format: what a client that does not ask for
    // OpenMetrics (curl, promtool) gets.
    let (status, body) = support::get_as(served.addr, "/metrics", "text/plain");
    assert_eq!(status, 200);
    assert!(!body.contains("# EOF"), "{body}");
    promtool_check(&body);
    // `pmu watch --format prometheus`, for the textfile collector, passes too.
    let out = Command::new(assert_cmd::cargo::cargo_bin("pmu"))
        .args([
            "watch",
            "--sim",
            "--unit",
            "xeon-e5-2600:IMC0",
            "--event",
            "event=UNC_M_CAS_COUNT.RD",
            "--count",
            "1",
            "--interval",
            "0.01",
            "--format",
            "prometheus",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    promtool_check(&String::from_utf8(out.stdout).unwrap());
}

/// A Prometheus server, killed when dropped.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_loopback_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

fn prometheus(targets: &[SocketAddr]) -> Prometheus {
    let targets: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
    let targets = targets.join(", ");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: pmu\n    scrape_interval: 1s\n    scrape_timeout: 900ms\n\
             \x20   static_configs:\n      - targets: [{targets}]\n"
        ),
    )
    .unwrap();
    let addr = free_loopback_port();
    let child = tool("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={addr}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus starts");
    let p = Prometheus {
        child,
        addr,
        _dir: dir,
    };
    assert!(
        wait_until(Duration::from_secs(60), || {
            std::net::TcpStream::connect(addr).is_ok() && get(addr, "/-/ready").0 == 200
        }),
        "Prometheus became ready within 60 s"
    );
    p
}

/// Runs a PromQL query through the HTTP API and returns `data.result`.
fn query(p: &Prometheus, promql: &str) -> Vec<serde_json::Value> {
    let encoded: String = promql
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let (status, body) = get(p.addr, &format!("/api/v1/query?query={encoded}"));
    assert_eq!(status, 200, "{promql}: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "success", "{promql}: {body}");
    v["data"]["result"].as_array().cloned().unwrap_or_default()
}

fn number(v: &serde_json::Value) -> f64 {
    match v {
        serde_json::Value::String(s) => s.parse().unwrap(),
        other => other.as_f64().unwrap(),
    }
}

/// `pmu watch --metric --format prometheus`: derived metrics as gauges, one per socket.
#[test]
#[ignore = "needs Prometheus and promtool (apt-get install prometheus); .ci/run runs it"]
fn promtool_accepts_the_metric_gauges() {
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args([
            "watch",
            "--sim",
            "--processor",
            "skylake-sp",
            "--metric",
            "memory_bandwidth_read",
            "--metric",
            "memory_bandwidth_write",
            "-a",
            "--format",
            "prometheus",
            "--interval",
            "0.01",
            "--count",
            "1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("pmu_metric{processor=\"skylake-sp\",metric=\"memory_bandwidth_read\",unit=\"MB/sec\",socket=\"1\"}"), "{text}");
    assert!(!text.contains("# EOF"), "{text}");
    promtool_check(&text);
}

#[test]
#[ignore = "needs Prometheus and promtool (apt-get install prometheus); .ci/run runs it"]
fn prometheus_sees_the_injected_rate() {
    let served = serve();
    let p = prometheus(&[served.addr]);
    // Wait for eight scrapes of the counter (about eight seconds), at most a minute.
    let samples = || {
        query(&p, "pmu_events_total[1m]")
            .first()
            .and_then(|s| s["values"].as_array().cloned())
            .unwrap_or_default()
    };
    assert!(
        wait_until(Duration::from_secs(60), || samples().len() >= 8),
        "Prometheus scraped pmu serve eight times within a minute"
    );
    let values = samples();
    let at = |i: usize| (number(&values[i][0]), number(&values[i][1]));
    let (t0, v0) = at(0);
    let (t1, v1) = at(values.len() - 1);
    let span = t1 - t0;
    let observed = (v1 - v0) / span;
    // A scrape is stamped when it starts; the value it gets is the total at the last counting
    // interval, up to one interval older, and the scrape itself took up to its duration. So
    // each end may be off by RATE * (INTERVAL + duration); the longest scrape Prometheus
    // recorded bounds the duration.
    let durations = query(
        &p,
        "max_over_time(scrape_duration_seconds{job=\"pmu\"}[1m])",
    );
    let longest = number(&durations[0]["value"][1]);
    let tolerance = RATE * 2.0 * (INTERVAL + longest) / span;
    assert!(
        (observed - RATE).abs() <= tolerance,
        "Prometheus saw {observed:.0} events/s over {span:.1} s of scrapes; injected {RATE}/s (tolerance {tolerance:.0})"
    );
    // And PromQL's own rate() agrees, within the same bound over its window.
    let rate = query(&p, "rate(pmu_events_total[5s])");
    let promql = number(&rate[0]["value"][1]);
    assert!(
        (promql - RATE).abs() <= RATE * 2.0 * (INTERVAL + longest) / 4.0,
        "rate() = {promql:.0}/s, injected {RATE}/s"
    );
    let labels = &rate[0]["metric"];
    for key in [
        "processor",
        "socket",
        "unit",
        "box",
        "counter",
        "event",
        "backend",
    ] {
        assert!(labels.get(key).is_some(), "label {key} in {labels}");
    }
}

/// `pmu serve --metric` for every processor family, scraped by one Prometheus: each metric's
/// gauge, as Prometheus stored it, is the value its formula predicts, on every socket.
#[test]
#[ignore = "needs Prometheus and promtool (apt-get install prometheus); .ci/run runs it"]
fn prometheus_stores_the_metrics_the_formulas_predict() {
    let served: Vec<(&str, &[&str], support::Served)> = families::FAMILIES
        .iter()
        .map(|&(processor, metrics)| {
            let mut args = vec!["--sim", "--processor", processor, "-a", "--interval", "0.2"];
            args.extend(["--workload", families::WORKLOAD]);
            for m in metrics {
                args.extend(["--metric", m]);
            }
            (processor, metrics, start(&args))
        })
        .collect();
    let addrs: Vec<SocketAddr> = served.iter().map(|s| s.2.addr).collect();
    let p = prometheus(&addrs);
    let expected = served.iter().map(|s| 2 * s.1.len()).sum::<usize>() as f64;
    let stored = || {
        query(&p, "count(pmu_metric)")
            .first()
            .map_or(0.0, |r| number(&r["value"][1]))
    };
    assert!(
        wait_until(Duration::from_secs(60), || stored() >= expected),
        "Prometheus stored {expected} metric series within a minute"
    );
    // Every sample Prometheus stored of every series: its smallest and its largest.
    for (processor, metrics, _) in &served {
        for m in metrics.iter() {
            for over in ["min_over_time", "max_over_time"] {
                let promql =
                    format!("{over}(pmu_metric{{processor=\"{processor}\",metric=\"{m}\"}}[1m])");
                let series = query(&p, &promql);
                assert_eq!(series.len(), 2, "{promql}: a series per socket: {series:?}");
                for s in &series {
                    let got = number(&s["value"][1]);
                    assert!(
                        families::matches(processor, m, got),
                        "{promql} socket {}: {got}, expected {:?}",
                        s["metric"]["socket"],
                        families::expected(processor, m)
                    );
                }
            }
        }
    }
    // The exposition with the gauges and the constants passes promtool.
    let (_, text) = support::get_as(served[0].2.addr, "/metrics", "text/plain");
    assert!(text.contains("pmu_constant{"), "{text}");
    promtool_check(&text);
}
