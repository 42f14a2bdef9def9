//! Samples a Xeon 7500 C-box counter on the simulated PMU: be told after every 10,000 events,
//! find the overflowed counters through the hierarchy, print the interval, re-arm.
//!
//! `cargo run -p pmu-runtime --example sample`

use pmu_regs::xeon_7500::PROCESSOR as NHM;
use pmu_runtime::sampling::uncore::{EventSelect, SamplePlan, Uncore, UncoreCounter};
use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent};

fn main() -> Result<(), pmu_runtime::Error> {
    // The boxes keep counting for 25 events between the overflow and the U-box's freeze.
    let sim = Sim::new(SimConfig {
        freeze_skew: 25,
        ..SimConfig::default()
    });
    let uncore = Uncore::open(&sim, &NHM, 0, 0)?;
    let misses = UncoreCounter::new("C1", 0);
    let hits = UncoreCounter::new("C6", 2);
    let mut sampling = uncore.arm(&SamplePlan {
        counters: vec![
            (misses, EventSelect::event(0x01), 10_000),
            (hits, EventSelect::event(0x02), 1 << 40),
        ],
        pmi_core: 0,
    })?;

    println!(
        "{:>8} {:>10} {:>22} {:>22} overflowed",
        "interval",
        "at event",
        misses.to_string(),
        hits.to_string(),
    );
    let mut pmis_seen = 0;
    for interval in 1..=8 {
        // A workload: a steady stream of hits, and misses in bursts of varying size.
        for burst in 0..50u64 {
            sim.inject_uncore(
                0,
                UncoreEvent {
                    instance: "C6",
                    ev_sel: 0x02,
                    umask: None,
                },
                37,
            )?;
            sim.inject_uncore(
                0,
                UncoreEvent {
                    instance: "C1",
                    ev_sel: 0x01,
                    umask: None,
                },
                150 + (burst * interval) % 200,
            )?;
        }
        let pmis = sim.pmis();
        let Some(pmi) = pmis.get(pmis_seen).cloned() else {
            println!("{interval:>8} {:>10} (no PMI yet: still counting)", "-");
            continue;
        };
        pmis_seen = pmis.len();
        let sample = uncore.frozen_sample(&mut sampling)?;
        let count = |c| {
            sample
                .counts
                .iter()
                .find(|(x, _)| *x == c)
                .map_or(0, |(_, n)| *n)
        };
        let names: Vec<String> = sample.overflowed.iter().map(|c| c.to_string()).collect();
        println!(
            "{interval:>8} {:>10} {:>22} {:>22} {} ({} status reads)",
            pmi.event,
            count(misses),
            count(hits),
            names.join(", "),
            sample.walk_reads
        );
        uncore.rearm(&mut sampling, &sample)?;
    }
    Ok(())
}
