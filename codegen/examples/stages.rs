//! Times each stage of the pipeline on a spec directory, for finding where generation time
//! goes: `cargo run --release -p codegen --example stages -- SPEC_DIR`.

use std::path::PathBuf;
use std::time::Instant;

/// Peak resident memory so far (Linux), in MiB.
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse::<f64>()
                    .unwrap_or(0.0)
            })
        })
        .unwrap_or(0.0)
        / 1024.0
}

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "spec".into()));
    let t = Instant::now();
    let spec = codegen::load::load_dir(&dir)
        .unwrap_or_else(|e| panic!("{}", codegen::diagnostics::render(&e)));
    let parsed = t.elapsed();
    println!("peak after parse and validate  {:.0} MiB", peak_mib());
    let t = Instant::now();
    let mut rust_bytes = 0;
    for p in &spec.processors {
        for u in &p.units {
            rust_bytes += codegen::emit::layout::unit_module_text(&spec, p, u).len();
        }
    }
    let rust = t.elapsed();
    let t = Instant::now();
    let tests = codegen::emit::tests::layouts_test(&spec).len();
    let tests_time = t.elapsed();
    let t = Instant::now();
    let docs = codegen::emit::docs::render(&spec).expect("docs render");
    let docs_time = t.elapsed();
    println!("peak after emit      {:.0} MiB", peak_mib());
    let registers: usize = spec
        .processors
        .iter()
        .flat_map(|p| &p.units)
        .map(|u| u.registers.len())
        .sum();
    println!("registers {registers}");
    println!("parse+validate {parsed:?}");
    println!("rust      {rust:?} ({rust_bytes} bytes)");
    println!("tests     {tests_time:?} ({tests} bytes)");
    println!(
        "docs+svg  {docs_time:?} ({} files, {} bytes)",
        docs.len(),
        docs.iter().map(|(_, c)| c.len()).sum::<usize>()
    );
}
