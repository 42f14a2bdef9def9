//! `pmu serve` under pressure: idle and slow clients holding connections do not keep a
//! scraper from its answers. Loopback only; every loop is bounded in count and time.

#[path = "support/serve.rs"]
#[allow(dead_code)] // Not every helper is used here.
mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use support::{closed, start, SIM};

/// One scrape as Prometheus makes it: a fresh connection and a 2 s timeout for the whole
/// exchange (Prometheus's default is 10 s). The status code, or why there was none.
fn scrape(addr: SocketAddr) -> Result<u16, String> {
    support::scrape_within(addr, Duration::from_secs(2), None)
}

#[test]
fn a_scraper_is_answered_while_200_idle_connections_are_held() {
    let served = start(SIM);
    let mut idle: Vec<TcpStream> = Vec::new();
    let mut dropped_early = 0;
    // Ten rounds: top the idle connections up to 200 (the server closes some to keep room;
    // an attacker opens them again), then scrape. Before, 64 idle connections made every
    // scrape a 503 for ten seconds.
    for round in 0..10 {
        let before = idle.len();
        idle.retain(|s| !closed(s));
        dropped_early += before - idle.len();
        while idle.len() < 200 {
            idle.push(TcpStream::connect(served.addr).expect("connects"));
        }
        assert_eq!(scrape(served.addr), Ok(200), "round {round}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The server did not keep 200 idle connections from one address: it closed the
    // oldest to make room, well before their idle timeout.
    assert!(
        dropped_early > 0,
        "idle connections beyond a client's share are closed"
    );
}

#[test]
fn a_slow_client_dripping_its_request_does_not_delay_a_scraper() {
    let served = start(SIM);
    let mut slow: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect(served.addr).unwrap())
        .collect();
    for s in &mut slow {
        s.write_all(b"GET /met").unwrap();
    }
    for _ in 0..5 {
        assert_eq!(scrape(served.addr), Ok(200));
    }
    // A head not finished within the request timeout (5 s) is answered 408.
    let s = &mut slow[0];
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
}
