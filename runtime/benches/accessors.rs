//! Building and reading a register value: the generated builders and getters against
//! hand-written shifts and masks. Each group holds the two variants, so criterion's report
//! gives their ratio directly.
//!
//! `cargo bench -p pmu-runtime --bench accessors`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use pmu_regs::xeon_7500::wbox::WEvtSel;

/// A W-box event select through the generated builders.
fn generated_evtsel(ev: u8, umask: u8, thresh: u8) -> u64 {
    WEvtSel::RESET
        .with_ev_sel(ev)
        .with_umask(umask)
        .with_thresh(thresh)
        .with_en(true)
        .with_pmi_en(true)
        .bits()
}

/// The same by hand: ev_sel 7:0, umask 15:8, thresh 31:24, en bit 22, pmi_en bit 20.
fn handwritten_evtsel(ev: u8, umask: u8, thresh: u8) -> u64 {
    u64::from(ev) | u64::from(umask) << 8 | u64::from(thresh) << 24 | 1 << 22 | 1 << 20
}

fn generated_umask(raw: u64) -> u8 {
    WEvtSel::from_bits(raw).umask()
}

fn handwritten_umask(raw: u64) -> u8 {
    (raw >> 8 & 0xff) as u8
}

/// Inputs for the batch variants: varied, so nothing folds to a constant.
fn inputs(n: usize) -> Vec<(u8, u8, u8)> {
    (0..n)
        .map(|i| (i as u8, (i * 7) as u8, (i * 13) as u8))
        .collect()
}

fn build(c: &mut Criterion) {
    assert_eq!(
        generated_evtsel(0x01, 0x0f, 0x20),
        handwritten_evtsel(0x01, 0x0f, 0x20)
    );
    let mut g = c.benchmark_group("evtsel_build");
    g.bench_function("generated", |b| {
        b.iter(|| generated_evtsel(black_box(0x01), black_box(0x0f), black_box(0x20)))
    });
    g.bench_function("handwritten", |b| {
        b.iter(|| handwritten_evtsel(black_box(0x01), black_box(0x0f), black_box(0x20)))
    });
    g.finish();

    let batch = inputs(1024);
    let mut g = c.benchmark_group("evtsel_build_1024");
    g.throughput(Throughput::Elements(batch.len() as u64));
    batch_bench(&mut g, "generated", &batch, generated_evtsel);
    batch_bench(&mut g, "handwritten", &batch, handwritten_evtsel);
    g.finish();
}

/// Builds a value for every input (a generic, so `f` is inlined, not called through a pointer).
fn batch_bench<M: criterion::measurement::Measurement>(
    g: &mut criterion::BenchmarkGroup<'_, M>,
    name: &str,
    batch: &[(u8, u8, u8)],
    f: impl Fn(u8, u8, u8) -> u64,
) {
    g.bench_with_input(BenchmarkId::from_parameter(name), batch, |b, batch| {
        b.iter(|| {
            black_box(batch)
                .iter()
                .fold(0u64, |acc, &(e, u, t)| acc ^ f(e, u, t))
        })
    });
}

fn read(c: &mut Criterion) {
    let raw = handwritten_evtsel(0x01, 0x0f, 0x20);
    assert_eq!(generated_umask(raw), handwritten_umask(raw));
    let mut g = c.benchmark_group("umask_read");
    g.bench_function("generated", |b| b.iter(|| generated_umask(black_box(raw))));
    g.bench_function("handwritten", |b| {
        b.iter(|| handwritten_umask(black_box(raw)))
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
}

// What `criterion_group!`/`criterion_main!` expand to, written out: the macro's `pub fn`
// would have no documentation, which the workspace lints refuse.
fn main() {
    let mut c = config().configure_from_args();
    build(&mut c);
    read(&mut c);
    c.final_summary();
}
