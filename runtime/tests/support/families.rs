//! The processor families whose metrics are checked through `pmu serve --metric`, and what
//! each metric must be when the simulator injects every counted event at the same steady
//! rate into every counted box (`serve --sim --sim-rate R`).

use pmu_runtime::boxes::Boxes;
use pmu_runtime::sim::SimTopdown;

/// Events per second the simulator injects into every counted event of every box.
pub const RATE: f64 = 200_000.0;

/// Each family's processor and the metrics served for it: memory read and write bandwidth,
/// the LLC hit rate and top-down level 1 where the spec has them: `Frontend_Bound` from
/// counted events from the E5-2600 (v1 and v2 from Linux perf's formulas, v3 on from Intel's
/// metric files) up to Cascade Lake and on Sierra Forest's E-cores (six slots a cycle),
/// `Retiring` from IA32_PERF_METRICS alone (no counted event) from Ice Lake-SP on; the older parts' bandwidth and every part's hit rate are the
/// guides' formulas (spec/*/metrics/guide.xml).
/// AMD's are Linux perf's: the L3 hit rate on Zen 2 to 5, and on Zen 4 and 5 UMC bandwidth
/// and `frontend_bound` of PipelineL1; Zen 2 and 3's total Data Fabric bandwidth, its eight
/// events counted in turns.
pub const FAMILIES: [(&str, &[&str]); 18] = [
    ("xeon-7500", &["llc_hit_rate"]),
    (
        "xeon-e5-2600",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Frontend_Bound",
        ],
    ),
    (
        "xeon-e5-2600-v2",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Frontend_Bound",
        ],
    ),
    (
        "xeon-e5-2600-v3",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Frontend_Bound",
        ],
    ),
    (
        "xeon-e5-2600-v4",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Frontend_Bound",
        ],
    ),
    (
        "skylake-sp",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Frontend_Bound",
        ],
    ),
    (
        "cascade-lake",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Frontend_Bound",
        ],
    ),
    (
        "ice-lake-sp",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Retiring",
        ],
    ),
    (
        "sapphire-rapids",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Retiring",
        ],
    ),
    (
        "emerald-rapids",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Retiring",
        ],
    ),
    (
        "granite-rapids",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Retiring",
        ],
    ),
    (
        "sierra-forest",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "Frontend_Bound",
        ],
    ),
    // Intel's Clearwater Forest metric file has no top-down metric.
    (
        "clearwater-forest",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
        ],
    ),
    ("amd-zen2", &["memory_bandwidth_total", "llc_hit_rate"]),
    ("amd-zen3", &["memory_bandwidth_total", "llc_hit_rate"]),
    (
        "amd-zen4",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "frontend_bound",
        ],
    ),
    (
        "amd-zen5",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "frontend_bound",
        ],
    ),
    (
        "amd-zen6",
        &[
            "memory_bandwidth_read",
            "memory_bandwidth_write",
            "llc_hit_rate",
            "frontend_bound",
        ],
    ),
];

/// The boxes of `unit` on one socket of `processor`.
pub fn boxes(processor: &str, unit: &str) -> f64 {
    let p = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == processor)
        .unwrap();
    Boxes::of(p)
        .boxes
        .iter()
        .filter(|b| b.unit.name == unit)
        .count() as f64
}

/// The memory controller unit `metric` of `processor` counts on (Intel's iMC, AMD's UMC) and
/// how many CAS events it adds up: one per channel, or one per sub-channel (Granite Rapids'
/// SCH0 and SCH1), each at `RATE`.
pub fn cas_events(processor: &str, metric: &str) -> (&'static str, usize) {
    let m = pmu_regs::metrics::for_processor(processor)
        .iter()
        .find(|m| m.name == metric)
        .unwrap_or_else(|| panic!("{processor} has no {metric}"));
    let unit = m.events[0].unit;
    assert!(m.events.iter().all(|e| e.unit == unit), "{m:?}");
    (unit, m.events.len())
}

/// What `metric` of `processor` must be per socket, and how far off it may be, relative.
///
/// - Bandwidth: the socket's channels x its CAS events x `RATE` commands per second x 64
///   bytes, in MB/s.
///   The counts are exact; the interval's length is the exporter's clock, stamped just
///   before each read while the simulator's clock is read inside it, so the two may differ
///   by the time a read takes to start (microseconds on an idle machine; a loaded shared
///   one may stall a thread for a few milliseconds of a 200 ms interval): 2 %.
/// - Ratios of two events at the same rate in the same boxes over the same interval: their
///   counts are equal, so `llc_hit_rate` = 100 (refs - misses) / refs = 0 and, without SMT,
///   `Frontend_Bound` = 100 x not-delivered / (4 x cycles) = 25: exactly; AMD's
///   `frontend_bound` = 100 / the slots a cycle.
/// - `Retiring` from IA32_PERF_METRICS: the simulated workload's retiring share of the four
///   level-1 shares, which sum to 0xFF ([`SimTopdown::DEMO_PROFILE`]); each share's slots are
///   rounded down (slots x share / 0xFF), which moves the ratio by about 1 / slots: 1e-6.
pub fn expected(processor: &str, metric: &str) -> (f64, f64) {
    match metric {
        "memory_bandwidth_read" | "memory_bandwidth_write" => {
            let (unit, cas) = cas_events(processor, metric);
            (
                boxes(processor, unit) * cas as f64 * RATE * 64.0 / 1e6,
                0.02,
            )
        }
        // Zen 2 and 3's eight Data Fabric channel events take turns on its four counters:
        // each count is scaled by its share of the interval on the wall clock.
        "memory_bandwidth_total" => {
            let (unit, requests) = cas_events(processor, metric);
            (
                boxes(processor, unit) * requests as f64 * RATE * 64.0 / 1e6,
                0.1,
            )
        }
        "llc_hit_rate" => (0.0, 0.0),
        // Sierra Forest's E-core top-down (sierraforest_metrics.json): six slots a cycle,
        // TOPDOWN_FE_BOUND.ALL_P / (6 x CPU_CLK_UNHALTED.CORE_P), from counted events.
        "Frontend_Bound" if processor == "sierra-forest" => (100.0 / 6.0, 1e-12),
        "Frontend_Bound" => (25.0, 0.0),
        // AMD's share of dispatch slots: 6 a cycle on Zen 4, 8 on Zen 5 (Linux perf's
        // pipeline.json).
        "frontend_bound" if processor == "amd-zen4" => (100.0 / 6.0, 1e-12),
        "frontend_bound" if processor == "amd-zen5" => (100.0 / 8.0, 1e-12),
        // Zen 6: eight slots a cycle, as Zen 5 (amdzen6 pipeline.json).
        "frontend_bound" if processor == "amd-zen6" => (100.0 / 8.0, 1e-12),
        "Retiring" => (
            100.0 * (SimTopdown::DEMO_PROFILE & 0xFF) as f64 / 255.0,
            1e-6,
        ),
        other => panic!("no expectation for {other}"),
    }
}

/// Whether `value` is what [`expected`] says.
pub fn matches(processor: &str, metric: &str, value: f64) -> bool {
    let (want, within) = expected(processor, metric);
    (value - want).abs() <= within * want.abs() + 1e-9
}
