//! What evaluating derived metrics costs per interval: every metric of the processor with
//! the most (Sapphire Rapids, Intel's list imported and the guides' own), evaluated for one
//! socket from counts that change every interval, against the interval it reports on
//! (1 s, `pmu watch`'s default) and the shortest `watch` takes (10 ms). Single-threaded and
//! CPU-bound, so wall time is CPU time; the median of many rounds.
//!
//! Then what `pmu serve --metric` adds to an interval: the exporter's `record` of one series
//! per event and socket (2 sockets), with and without the `pmu_metric` gauges of every metric
//! of that processor that plans onto one box's counters (each metric a plan of its own: the
//! most series an interval can feed), and the scrape that encodes them.
//!
//! `cargo run --release -p pmu-runtime --example metrics_cost [PROCESSOR]` (another
//! processor's id to measure it instead, to compare two in one build).

use std::time::Instant;

use pmu_regs::metrics::{for_processor, Constants};
use pmu_regs::PROCESSORS;
use pmu_runtime::constants::PartConstants;
use pmu_runtime::export::{Exporter, MetricGauges, MetricInput, Series, SeriesLabels};
use pmu_runtime::machine::Machine;
use pmu_runtime::metrics::Plan;
use pmu_runtime::session::Reading;

const ROUNDS: usize = 2000;

fn main() {
    let chosen = std::env::args().nth(1);
    let (id, metrics) = PROCESSORS
        .iter()
        .map(|p| (p.id, for_processor(p.id)))
        .filter(|(id, _)| chosen.as_deref().is_none_or(|c| c == *id))
        .max_by_key(|(_, m)| m.len())
        .expect("a processor of `pmu list --summary`");
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
    serve_cost(id);
}

/// The median time of `f` over `rounds` runs, in microseconds.
fn median_us(rounds: usize, mut f: impl FnMut(usize)) -> f64 {
    let mut times: Vec<f64> = (0..rounds)
        .map(|r| {
            let t = Instant::now();
            f(r);
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[rounds / 2]
}

/// `record` with and without the metrics' gauges, and the scrape, for `id`'s metrics.
fn serve_cost(id: &'static str) {
    let info = PROCESSORS.iter().find(|p| p.id == id).expect("listed");
    let part = PartConstants::read(&Machine::simulating(info), info, std::path::Path::new("/"));
    let mut series = Vec::new();
    let mut plans = Vec::new();
    for m in for_processor(id) {
        let Ok(plan) = Plan::new(id, &[m], &part.constants()) else {
            continue;
        };
        let mut inputs = Vec::new();
        for socket in 0..2u32 {
            for (event, e) in plan.events.iter().enumerate() {
                series.push(Series {
                    labels: SeriesLabels {
                        processor: id.into(),
                        socket,
                        cpu: None,
                        unit: plan.unit.into(),
                        box_name: format!("{}{}", m.name, event),
                        counter: format!("CTR{event}"),
                        event: e.name.into(),
                        backend: "sim".into(),
                    },
                    width: 48,
                });
                inputs.push((series.len() - 1, MetricInput { socket, event }));
            }
        }
        plans.push((plan, inputs));
    }
    let n = series.len();
    let with_inputs = |plan: &Plan, inputs: &[(usize, MetricInput)]| {
        let mut all = vec![None; n];
        for (i, input) in inputs {
            all[*i] = Some(*input);
        }
        (plan.clone(), all)
    };
    let mut gauges = MetricGauges::new(&part);
    for (plan, inputs) in &plans {
        let (plan, all) = with_inputs(plan, inputs);
        gauges = gauges.with_plan(plan, all);
    }
    let plain = Exporter::new(series.clone(), Instant::now());
    let served = Exporter::new(series, Instant::now()).with_metrics(gauges);
    let readings = |round: usize| -> Vec<Option<Reading>> {
        (0..n)
            .map(|i| {
                Some(Reading::new(
                    (1_000_000 * (round as u64 + 1)) + 7919 * i as u64,
                    None,
                ))
            })
            .collect()
    };
    let start = Instant::now();
    plain.baseline_at(&readings(0), start);
    served.baseline_at(&readings(0), start);
    let rounds = 500;
    let at = |r: usize| start + std::time::Duration::from_millis(1000 * (r as u64 + 1));
    let without = median_us(rounds, |r| plain.record_at(&readings(r + 1), at(r)));
    let with = median_us(rounds, |r| served.record_at(&readings(r + 1), at(r)));
    let scrape = median_us(100, |_| {
        std::hint::black_box(served.encode().expect("encodes"));
    });
    println!(
        "serve --metric: {} of {} metrics plan onto one box each, {n} series (2 sockets); record per interval {without:.1} us without the gauges, {with:.1} us with (+{:.1} us, {:.1} us per metric and socket); a scrape of it all {scrape:.0} us",
        plans.len(),
        for_processor(id).len(),
        with - without,
        (with - without) / (2.0 * plans.len() as f64)
    );
}
