//! The processor families whose metrics are checked through `pmu serve --metric`, and what
//! each metric must be when the simulator runs the compute-bound workload (`serve --sim
//! --workload compute-bound`), where each event counts what it is: a swapped or wrong event
//! shows.

use pmu_runtime::boxes::Boxes;

/// The workload the served families run.
pub const WORKLOAD: &str = "compute-bound";

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

/// What `metric` of `processor` must be per socket under the compute-bound workload
/// (`runtime/src/sim/workloads.rs`; core and uncore clocks 2 GHz, so 2 million periods of
/// 1000 cycles a second), by hand from the vendor's formula, and how far off it may be,
/// relative. Each event counts what it is, so no ratio is a constant of the test.
///
/// - Bandwidth: 8 CAS reads and 4 CAS writes per channel in 1000 cycles (Granite Rapids'
///   two sub-channels 4 + 4 and 2 + 2; AMD's UMCs alike), 64 bytes each, every channel of the
///   socket: channels x 8 x 2e6 x 64 / 1e6 MB/s. Zen 2 and 3: 12 requests at each of the eight
///   DRAM channel events of the Data Fabric (counted in turns on its four counters).
///   The interval's length is the exporter's clock, stamped just before each read while the
///   simulator's clock is read inside it, so the two may differ by the time a read takes to
///   start: 2 % (10 % counted in turns).
/// - `llc_hit_rate` = 100 (references - misses) / references = 100 x (20 - 2) / 20. A
///   ratio's two counters are read one after the other on the wall clock, the machine's
///   time moving on between the reads: 1e-4.
/// - `Frontend_Bound` up to Cascade Lake = 100 x IDQ_UOPS_NOT_DELIVERED.CORE / (4 x
///   CPU_CLK_UNHALTED.THREAD_P) = 100 x 400 / 4000; Sierra Forest's E-core top-down
///   (sierraforest_metrics.json) TOPDOWN_FE_BOUND.ALL_P / (6 x CPU_CLK_UNHALTED.CORE_P) =
///   (6 x 50 + 3 x 100) / 6000; AMD's `frontend_bound` = no ops from the front end over the
///   dispatch slots, 600 / 6000 on Zen 4, 800 / 8000 on Zen 5 and 6 (Linux perf's pipeline.json):
///   10 % each.
/// - `Retiring` from IA32_PERF_METRICS: the retiring byte over the four level-1 bytes,
///   0xB3 / (0xB3 + 0x0D + 0x1A + 0x25) = 179 / 255; each share's slots are rounded down
///   (slots x share / 0xFF), which moves the ratio by about 1 / slots: 1e-6.
pub fn expected(processor: &str, metric: &str) -> (f64, f64) {
    const MB_PER_EVENT_A_PERIOD: f64 = 2e6 * 64.0 / 1e6;
    match metric {
        "memory_bandwidth_read" | "memory_bandwidth_write" => {
            let (unit, _) = cas_events(processor, metric);
            let cas = if metric.ends_with("read") { 8.0 } else { 4.0 };
            (boxes(processor, unit) * cas * MB_PER_EVENT_A_PERIOD, 0.02)
        }
        "memory_bandwidth_total" => {
            let (unit, channels) = cas_events(processor, metric);
            (
                boxes(processor, unit) * channels as f64 * 12.0 * MB_PER_EVENT_A_PERIOD,
                0.1,
            )
        }
        "llc_hit_rate" => (100.0 * (20.0 - 2.0) / 20.0, 1e-4),
        "Frontend_Bound" | "frontend_bound" => (10.0, 1e-4),
        "Retiring" => (100.0 * 179.0 / 255.0, 1e-6),
        other => panic!("no expectation for {other}"),
    }
}

/// Whether `value` is what [`expected`] says.
pub fn matches(processor: &str, metric: &str, value: f64) -> bool {
    let (want, within) = expected(processor, metric);
    (value - want).abs() <= within * want.abs() + 1e-9
}
