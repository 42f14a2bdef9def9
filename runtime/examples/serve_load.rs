//! Load on `pmu serve`: CLIENTS threads each scrape `/metrics` REQUESTS times, as fast as the
//! server answers, and the figures are printed: scrapes per second and latency percentiles.
//!
//! ```sh
//! pmu serve --sim --unit xeon-e5-2600:IMC0 --event event=UNC_M_CAS_COUNT.RD --listen 127.0.0.1:9464 &
//! cargo run --release -p pmu-runtime --example serve_load -- 127.0.0.1:9464 32 200
//! ```
//! `bench/serve.sh` does both and stops the server. Only loopback addresses are accepted.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

fn scrape(addr: SocketAddr) -> Result<usize, String> {
    let mut s = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(s, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").map_err(|e| e.to_string())?;
    let mut body = Vec::new();
    s.read_to_end(&mut body).map_err(|e| e.to_string())?;
    if !body.starts_with(b"HTTP/1.1 200") {
        return Err(String::from_utf8_lossy(&body[..body.len().min(80)]).into_owned());
    }
    Ok(body.len())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: serve_load ADDR:PORT CLIENTS REQUESTS (a loopback address)";
    let (Some(addr), Some(clients), Some(requests)) = (
        args.first().and_then(|a| a.parse::<SocketAddr>().ok()),
        args.get(1).and_then(|a| a.parse::<usize>().ok()),
        args.get(2).and_then(|a| a.parse::<usize>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    if !addr.ip().is_loopback() || clients == 0 || requests == 0 || clients > 1024 {
        eprintln!("{usage}; CLIENTS from 1 to 1024, REQUESTS at least 1");
        std::process::exit(2);
    }
    let started = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            std::thread::spawn(move || {
                let mut latencies = Vec::with_capacity(requests);
                let mut failures = 0usize;
                for _ in 0..requests {
                    let t = Instant::now();
                    match scrape(addr) {
                        Ok(_) => latencies.push(t.elapsed()),
                        Err(_) => failures += 1,
                    }
                }
                (latencies, failures)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut failures = 0;
    for t in threads {
        let (l, f) = t.join().expect("a client thread");
        latencies.extend(l);
        failures += f;
    }
    let wall = started.elapsed();
    latencies.sort();
    if latencies.is_empty() {
        eprintln!("no scrape succeeded ({failures} failed)");
        std::process::exit(1);
    }
    println!("clients            {clients}");
    println!(
        "scrapes            {} ok, {failures} failed",
        latencies.len()
    );
    println!(
        "scrapes per second {:.0}",
        latencies.len() as f64 / wall.as_secs_f64()
    );
    for (name, p) in [("p50", 0.50), ("p90", 0.90), ("p99", 0.99)] {
        println!(
            "latency {name}        {:.2} ms",
            percentile(&latencies, p).as_secs_f64() * 1e3
        );
    }
    println!(
        "latency max        {:.2} ms",
        latencies.last().unwrap().as_secs_f64() * 1e3
    );
}
