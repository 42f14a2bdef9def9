//! Starting `pmu serve` as a child process, scraping it, and reading its expositions.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `pmu serve` arguments for one simulated box: the Xeon E5-2600's IMC0 counting CAS reads,
/// every 50 ms.
#[allow(dead_code)] // Not every test that includes this file uses it.
pub const SIM: &[&str] = &[
    "--sim",
    "--unit",
    "xeon-e5-2600:IMC0",
    "--event",
    "event=UNC_M_CAS_COUNT.RD",
    "--interval",
    "0.05",
];

/// A running `pmu serve`, killed when dropped.
pub struct Served {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `pmu serve ARGS --listen 127.0.0.1:0` and waits (at most 60 s) until it says where
/// it listens.
pub fn start(args: &[&str]) -> Served {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("pmu"))
        .arg("serve")
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pmu runs");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut banner = String::new();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            banner.push_str(&line);
            banner.push('\n');
            // http:// or, with a web configuration file's TLS, https://.
            if let Some((_, rest)) = line
                .split_once("://")
                .filter(|_| line.contains("listening on"))
            {
                let addr = rest.trim_end_matches("/metrics").to_string();
                let _ = tx.send(Ok((addr, banner.clone())));
                // Keep draining so the child never blocks on a full pipe.
                continue;
            }
        }
        let _ = tx.send(Err(banner));
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok((addr, _banner))) => Served {
            child,
            addr: addr.parse().expect("an address"),
        },
        Ok(Err(banner)) => {
            let status = child.wait().ok();
            panic!("pmu serve {args:?} stopped before listening ({status:?}):\n{banner}")
        }
        Err(_) => {
            let _ = child.kill();
            panic!("pmu serve {args:?} did not say where it listens within 60 s")
        }
    }
}

/// One HTTP GET: (status, body), asking for OpenMetrics as Prometheus does.
pub fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    get_as(
        addr,
        path,
        "application/openmetrics-text; version=1.0.0, text/plain; version=0.0.4; q=0.5",
    )
}

/// One HTTP GET with this `Accept` header: (status, body).
pub fn get_as(addr: SocketAddr, path: &str, accept: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("a response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a complete response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status code");
    (status, body.to_string())
}

/// The samples of metric `name` in an exposition: labels (as written) -> value.
pub fn samples(exposition: &str, name: &str) -> BTreeMap<String, f64> {
    exposition
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(name)?;
            let (labels, value) = if let Some(rest) = rest.strip_prefix('{') {
                let (labels, value) = rest.split_once("} ")?;
                (labels.to_string(), value)
            } else {
                (String::new(), rest.strip_prefix(' ')?)
            };
            Some((labels, value.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// Waits until `done` holds, checking every 50 ms, for at most `limit`.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// One scrape as Prometheus makes it: a fresh connection, an optional `Authorization` header,
/// and the whole exchange within `timeout`. The status code, or why there was none.
#[allow(dead_code)] // Not every test that includes this file uses it.
pub fn scrape_within(
    addr: SocketAddr,
    timeout: Duration,
    authorization: Option<&str>,
) -> Result<u16, String> {
    let deadline = Instant::now() + timeout;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(timeout)).unwrap();
    let auth = authorization.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n{auth}\r\n").map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    if Instant::now() > deadline {
        return Err("answered after the scrape timeout".into());
    }
    let text = String::from_utf8_lossy(&raw);
    text.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("no status line in {text:?}"))
}

/// Whether the server has closed `s` (it reads end of file or a reset, without blocking).
#[allow(dead_code)] // Not every test that includes this file uses it.
pub fn closed(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut b = [0u8; 1];
    match (&*s).read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}
