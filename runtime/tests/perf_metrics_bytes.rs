//! Each of the eight bytes of IA32_PERF_METRICS pinned to its top-down category: the
//! simulated register holds a different value in every byte, a session reads it, and each
//! top-down metric of Sapphire Rapids is the value its formula gives with the category it
//! names taken from the byte the SDM gives that category, computed here by hand.
//!
//! Byte order: Intel SDM Vol. 3B, "Performance Metrics" (section 21.3.9.3 in recent
//! editions, IA32_PERF_METRICS MSR 329H): byte 0 retiring, 1 bad speculation, 2 frontend
//! bound, 3 backend bound, and from Sapphire Rapids 4 heavy operations, 5 branch mispredicts,
//! 6 fetch latency, 7 memory bound; Linux gives the same order in
//! arch/x86/include/asm/perf_event.h (INTEL_TD_METRIC_RETIRING 0x8000 ... _MEM_BOUND 0x8700,
//! byte n = (config >> 8) & 0x7). A category's slots are slots x byte / 0xFF (Linux
//! arch/x86/events/intel/core.c, icl_get_metrics_event_value: mul_u64_u32_div(slots, val,
//! 0xff)), rounded down.
//!
//! The formulas are Intel's TMA metrics for Sapphire Rapids (sapphirerapids_metrics.json:
//! tma_retiring, tma_backend_bound, tma_memory_bound, tma_heavy_operations,
//! tma_branch_mispredicts, tma_light_operations, tma_core_bound, tma_fetch_latency,
//! tma_frontend_bound, tma_bad_speculation), written out below.

use std::time::Duration;

use pmu_regs::metrics::Constants;
use pmu_runtime::machine::Machine;
use pmu_runtime::metrics::{select, Plan};
use pmu_runtime::session::{Clock, Options, Pace, Session, SessionBackend};
use pmu_runtime::sim::SimConfig;

/// The bytes the simulated register holds, each a category's share of 0xFF: the four
/// level-1 shares sum to 0xFF, each level-2 share lies within its parent, and no two are
/// equal, so any swap of two bytes changes some metric.
const RETIRING: u64 = 0x5A;
const BAD_SPECULATION: u64 = 0x14;
const FRONTEND_BOUND: u64 = 0x32;
const BACKEND_BOUND: u64 = 0x5F;
const HEAVY_OPERATIONS: u64 = 0x1E;
const BRANCH_MISPREDICTS: u64 = 0x0F;
const FETCH_LATENCY: u64 = 0x28;
const MEMORY_BOUND: u64 = 0x46;

/// IA32_PERF_METRICS with each category in the byte the SDM gives it.
const PERF_METRICS: u64 = RETIRING
    | BAD_SPECULATION << 8
    | FRONTEND_BOUND << 16
    | BACKEND_BOUND << 24
    | HEAVY_OPERATIONS << 32
    | BRANCH_MISPREDICTS << 40
    | FETCH_LATENCY << 48
    | MEMORY_BOUND << 56;

const METRICS: [&str; 10] = [
    "Retiring",
    "Bad_Speculation",
    "Frontend_Bound",
    "Backend_Bound",
    "Heavy_Operations",
    "Branch_Mispredicts",
    "Fetch_Latency",
    "Memory_Bound",
    "Light_Operations",
    "Core_Bound",
];

/// A category's slots from the interval's slots and its share, as Linux computes them.
fn slots_of(slots: u64, share: u64) -> f64 {
    (slots * share / 0xFF) as f64
}

#[test]
fn every_perf_metrics_byte_is_read_as_its_category() {
    assert_eq!(
        RETIRING + BAD_SPECULATION + FRONTEND_BOUND + BACKEND_BOUND,
        0xFF
    );
    let spr = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == "sapphire-rapids")
        .unwrap();
    let mut config = SimConfig::of(spr);
    config.arch.topdown.perf_metrics = PERF_METRICS;
    let machine = Machine::simulated(config);
    let names: Vec<String> = METRICS.iter().map(|m| m.to_string()).collect();
    let chosen = select("sapphire-rapids", &names).unwrap();
    let constants = Constants {
        threads_per_core: Some(1.0),
        ..Constants::NONE
    };
    let plan = Plan::new("sapphire-rapids", &chosen, &constants).unwrap();
    let selection = plan.selection().unwrap();
    let backend = SessionBackend::Registers(&machine);
    let options = Options {
        clock: Clock::Steps(Duration::from_millis(10)),
        pace: Pace::Steady(10_000),
        topdown: true,
        ..Options::default()
    };
    let mut session = Session::open(&backend, &selection, options).unwrap();
    let interval = session.interval().unwrap();
    let series = session.series().to_vec();
    session.close().unwrap();
    assert_eq!(interval.topdown.len(), 1, "{:?}", interval.topdown);
    let sample = interval.topdown[0];
    assert_eq!(
        sample.perf_metrics, PERF_METRICS,
        "the register as the test set it"
    );
    let slots = sample.slots;
    assert!(slots > 0);
    // INT_MISC.UOP_DROPPING as counted over the interval (a reading, not a metric).
    let dropping = series
        .iter()
        .zip(&interval.counts)
        .filter(|(s, _)| s.event == "event=INT_MISC.UOP_DROPPING")
        .map(|(_, c)| c.delta as f64)
        .sum::<f64>();
    let values = plan.interval_values(&series, &interval, true, &constants);

    let s = |share| slots_of(slots, share);
    let level1 = s(RETIRING) + s(BAD_SPECULATION) + s(FRONTEND_BOUND) + s(BACKEND_BOUND);
    let dropped = dropping / slots as f64;
    let frontend = s(FRONTEND_BOUND) / level1 - dropped;
    let expected = [
        ("Retiring", 100.0 * s(RETIRING) / level1),
        (
            "Bad_Speculation",
            100.0 * (1.0 - (frontend + s(BACKEND_BOUND) / level1 + s(RETIRING) / level1)).max(0.0),
        ),
        ("Frontend_Bound", 100.0 * frontend),
        ("Backend_Bound", 100.0 * s(BACKEND_BOUND) / level1),
        ("Heavy_Operations", 100.0 * s(HEAVY_OPERATIONS) / level1),
        ("Branch_Mispredicts", 100.0 * s(BRANCH_MISPREDICTS) / level1),
        (
            "Fetch_Latency",
            100.0 * (s(FETCH_LATENCY) / level1 - dropped),
        ),
        ("Memory_Bound", 100.0 * s(MEMORY_BOUND) / level1),
        (
            "Light_Operations",
            100.0 * (s(RETIRING) / level1 - s(HEAVY_OPERATIONS) / level1).max(0.0),
        ),
        (
            "Core_Bound",
            100.0 * (s(BACKEND_BOUND) / level1 - s(MEMORY_BOUND) / level1).max(0.0),
        ),
    ];
    for (name, want) in expected {
        let got = values
            .iter()
            .find(|v| v.metric.name == name)
            .unwrap_or_else(|| panic!("{name} not evaluated"))
            .value
            .unwrap_or_else(|| panic!("{name} is n/a"));
        assert!(
            (got - want).abs() < 1e-9 * want.abs().max(1.0),
            "{name}: {got}, by hand {want} (slots {slots}, PERF_METRICS {PERF_METRICS:#x})"
        );
    }
}

/// The same bytes on Ice Lake-SP, which reports only the four level-1 shares: the register
/// reads 0 above byte 3, and Retiring (icelakex_metrics.json tma_retiring) reads bytes 0-3.
#[test]
fn ice_lake_reports_only_the_level_1_bytes() {
    let icx = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == "ice-lake-sp")
        .unwrap();
    let mut config = SimConfig::of(icx);
    config.arch.topdown.perf_metrics = PERF_METRICS;
    let machine = Machine::simulated(config);
    let names = vec!["Retiring".to_string()];
    let chosen = select("ice-lake-sp", &names).unwrap();
    let plan = Plan::new("ice-lake-sp", &chosen, &Constants::NONE).unwrap();
    let selection = plan.selection().unwrap();
    let backend = SessionBackend::Registers(&machine);
    let options = Options {
        clock: Clock::Steps(Duration::from_millis(10)),
        pace: Pace::Steady(10_000),
        topdown: true,
        ..Options::default()
    };
    let mut session = Session::open(&backend, &selection, options).unwrap();
    let interval = session.interval().unwrap();
    let series = session.series().to_vec();
    session.close().unwrap();
    let sample = interval.topdown[0];
    assert_eq!(sample.perf_metrics, PERF_METRICS & 0xFFFF_FFFF);
    let s = |share| slots_of(sample.slots, share);
    let level1 = s(RETIRING) + s(BAD_SPECULATION) + s(FRONTEND_BOUND) + s(BACKEND_BOUND);
    let values = plan.interval_values(&series, &interval, true, &Constants::NONE);
    let want = 100.0 * s(RETIRING) / level1;
    let got = values
        .iter()
        .find(|v| v.metric.name == "Retiring")
        .and_then(|v| v.value)
        .expect("Retiring is n/a");
    assert!(
        (got - want).abs() < 1e-9 * want,
        "Retiring: {got}, by hand {want}"
    );
}
