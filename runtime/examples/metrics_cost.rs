//! What evaluating derived metrics costs per interval: every metric of the processor with
//! the most (Cascade Lake, Intel's list imported and the guides' own), evaluated for one
//! socket from counts that change every interval, against the interval it reports on
//! (1 s, `pmu watch`'s default) and the shortest `watch` takes (10 ms). Single-threaded and
//! CPU-bound, so wall time is CPU time; the median of many rounds.
//!
//! `cargo run --release -p pmu-runtime --example metrics_cost`

use std::time::Instant;

use pmu_regs::metrics::{for_processor, Constants};
use pmu_regs::PROCESSORS;

const ROUNDS: usize = 2000;

fn main() {
    let (id, metrics) = PROCESSORS
        .iter()
        .map(|p| (p.id, for_processor(p.id)))
        .max_by_key(|(_, m)| m.len())
        .expect("a processor");
    let ops: usize = metrics.iter().map(|m| m.ops.len()).sum();
    let constants = Constants {
        tsc_hz: Some(2.1e9),
        socket_count: Some(2.0),
        cores_per_socket: Some(24.0),
        chas_per_socket: Some(24.0),
        threads_per_core: Some(2.0),
        cpu_count: Some(96.0),
        duration_seconds: Some(1.0),
    };
    let mut counts: Vec<Option<f64>> = vec![Some(0.0); 64];
    let mut times = Vec::with_capacity(ROUNDS);
    let mut sink = 0.0;
    let mut defined = 0;
    for round in 0..ROUNDS {
        for (i, c) in counts.iter_mut().enumerate() {
            *c = Some((1_000_000 + 7919 * i + round) as f64);
        }
        let t = Instant::now();
        defined = 0;
        for m in metrics {
            if let Some(v) = m.evaluate(&counts[..m.events.len()], &constants) {
                sink += v;
                defined += 1;
            }
        }
        times.push(t.elapsed());
    }
    times.sort();
    let median = times[ROUNDS / 2];
    println!(
        "{id}: {} metrics ({ops} ops), {defined} defined for these counts; median {:.1} us per interval ({:.1} ns per metric)",
        metrics.len(),
        median.as_secs_f64() * 1e6,
        median.as_secs_f64() * 1e9 / metrics.len() as f64
    );
    println!(
        "ratio to a 1 s interval: {:.2e}; to a 10 ms interval: {:.2e}",
        median.as_secs_f64(),
        median.as_secs_f64() / 0.01
    );
    std::hint::black_box(sink);
}
