//! Generation time on the real spec: loading (parse + validate) and rendering every file in
//! memory. Larger synthetic specs are timed by `bench/run.sh`, which also reports memory.
//!
//! `cargo bench -p codegen`

use std::path::PathBuf;
use std::time::Duration;

use criterion::Criterion;

fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec")
}

fn main() {
    let mut c = Criterion::default()
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500))
        .configure_from_args();
    let dir = spec_dir();
    c.bench_function("load_spec (parse + validate)", |b| {
        b.iter(|| codegen::load_spec(&dir).expect("the spec is valid"))
    });
    let spec = codegen::load_spec(&dir).expect("the spec is valid");
    c.bench_function("emit (Rust, tests, docs, SVG) in memory", |b| {
        b.iter(|| codegen::emit::generate(&spec).expect("rendering succeeds"))
    });
    c.bench_function("render (load + emit)", |b| {
        b.iter(|| codegen::render(&dir).expect("the spec renders"))
    });
    c.final_summary();
}
