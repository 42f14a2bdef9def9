//! Serves a simulated Xeon E5-2600's IMC0 CAS reads at `/metrics` on 127.0.0.1 (a free port),
//! counts them every 50 ms, scrapes itself once as Prometheus does and prints what it got, as
//! a scrape of this `pmu serve` gets it:
//!
//! ```text
//! pmu serve --sim --unit xeon-e5-2600:IMC0 --event event=UNC_M_CAS_COUNT.RD \
//!     --interval 0.05 --listen 127.0.0.1:0
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example exporter`; CI and
//! `runtime/tests/examples.rs` compare its output with a scrape of that command, the values
//! of the series named in [`VARYING`] (counts and times) left out.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pmu_runtime::export::http::{self, Limits};
use pmu_runtime::export::serving;
use pmu_runtime::export::web_config::WebConfig;
use pmu_runtime::machine::Machine;
use pmu_runtime::session::{Clock, Options, Pace, Selection, Session, SessionBackend};

/// The box and its event, as `pmu serve --unit` and `--event` take them.
pub const UNIT: &str = "xeon-e5-2600:IMC0";
/// The event the box counts.
pub const EVENT: &str = "event=UNC_M_CAS_COUNT.RD";
/// What Prometheus asks for: OpenMetrics, else the Prometheus text format.
pub const ACCEPT: &str =
    "application/openmetrics-text; version=1.0.0, text/plain; version=0.0.4; q=0.5";
/// The series whose values depend on when the scrape came: left out when two scrapes are
/// compared.
pub const VARYING: [&str; 3] = [
    "pmu_events_total",
    "pmu_intervals_total",
    "pmu_since_programmed_seconds",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    print!("{}", scrape_once()?);
    Ok(())
}

/// Programs the box, serves its totals, and gives the body of one scrape; every register is
/// put back before it returns.
pub fn scrape_once() -> Result<String, Box<dyn std::error::Error>> {
    let selection = Selection::of_named_boxes(&[UNIT], &[EVENT], None, None)?;
    let machine = Machine::simulating(selection.processor());
    let backend = SessionBackend::Registers(&machine);
    // Prometheus's rate() is per second of real time: the wall clock, the simulator counting
    // 1,000 events a second (as `pmu serve --sim` does by default).
    let options = Options {
        clock: Clock::Wall,
        pace: Pace::Steady(1000),
        ..Options::default()
    };
    let mut sessions = vec![Session::open(&backend, &selection, options)?];
    let exporter = Arc::new(serving::exporter(&sessions, None));
    let mut failed = |e: &pmu_runtime::Error| eprintln!("reading the top-down registers: {e}");
    serving::baseline(&mut sessions, &exporter, &mut failed);
    // The server answers from the exporter's totals on threads of its own.
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let handler = serving::handler(Arc::clone(&exporter));
    let server = {
        let stop = Arc::clone(&stop);
        let web = WebConfig::default(); // no TLS, no users: loopback only
        std::thread::spawn(move || http::run(listener, handler, Limits::default(), &web, &stop))
    };
    // A client scrapes after two intervals and stops the counting loop.
    let client = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(120));
            let body = get(addr);
            stop.store(true, Ordering::SeqCst);
            body
        })
    };
    let period = Duration::from_millis(50);
    serving::count_until(&mut sessions, &exporter, period, &stop, &mut failed);
    let body = client.join().map_err(|_| "the client panicked")?;
    server.join().map_err(|_| "the server panicked")??;
    for session in sessions {
        session.close()?; // every register as it was
    }
    Ok(body?)
}

/// One `GET /metrics` over a fresh connection: the body of a `200` answer.
fn get(addr: SocketAddr) -> Result<String, String> {
    let mut s = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAccept: {ACCEPT}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).map_err(|e| e.to_string())?;
    match raw.split_once("\r\n\r\n") {
        Some((head, body)) if head.starts_with("HTTP/1.1 200") => Ok(body.to_string()),
        _ => Err(format!("no 200 answer: {raw}")),
    }
}

/// `exposition` with the values of the [`VARYING`] series replaced by `…`: what two scrapes
/// of the same counters show alike.
pub fn steady(exposition: &str) -> String {
    exposition
        .lines()
        .map(|line| {
            let name = line.split(['{', ' ']).next().unwrap_or("");
            match line.rsplit_once(' ') {
                Some((series, _)) if VARYING.contains(&name) => format!("{series} …\n"),
                _ => format!("{line}\n"),
            }
        })
        .collect()
}
