//! What each checked metric means, and a mutation check that the meaning tests would see a
//! wrong event (issue 38).
//!
//! [`meaning`] is the meaning test as a function: it counts a metric table (the processor's
//! own, or one changed in memory) on the simulator under the compute-bound and memory-bound
//! workloads, as `pmu watch --sim --metric` does, and compares every checked metric with the
//! value worked out in [`expected`] by hand from the vendor's formula (written out there)
//! and the workload's named quantities ([`Quantities`]: copied from the workload's table in
//! `runtime/src/sim/workloads.rs`, not computed by the simulator or the evaluator).
//!
//! The mutation check changes the loaded metric model in memory (nothing regenerated), one
//! change at a time, for every checked metric of one processor of each family, and runs
//! [`meaning`] on the changed table:
//! - every swap of two of the metric's events (the formula reads each where the other
//!   was), where the two count differently under a workload and the formula is not
//!   symmetric in them (`a + b`: the same value, not a mutant);
//! - every modifier its events set dropped: the counter mask, invert, edge and any-thread
//!   bits, and each set bit of the unit mask, cleared in the control the session programs;
//! - each `PERF_METRICS` byte it reads replaced by each other byte the part reports.
//!
//! No mutant may survive: each must make [`meaning`] fail. The counts of mutants made,
//! killed and set aside as equivalent are printed per processor.

use std::collections::BTreeMap;
use std::time::Duration;

use pmu_regs::metrics::{for_processor, Constants, MetricEvent, MetricInfo, MetricRead, Op};
use pmu_regs::{ProcessorInfo, PROCESSORS};
use pmu_runtime::boxes::FIXED_EVENT;
use pmu_runtime::constants::PartConstants;
use pmu_runtime::machine::Machine;
use pmu_runtime::metrics::Plan;
use pmu_runtime::session::{Counted, Options, Pace, Selection, Session, SessionBackend};
use pmu_runtime::sim::{NamedWorkload, WORKLOADS};

#[path = "support/families.rs"]
#[allow(dead_code)]
mod families;

/// What a workload does in 1000 cycles of one hardware thread (core and uncore clocks both
/// 2 GHz), by the names its table gives them; per memory channel, per UPI link and per IIO
/// stack for the uncore.
#[derive(Debug, Clone, Copy)]
struct Quantities {
    /// The workload's name.
    name: &'static str,
    /// Unhalted core cycles.
    cycles: f64,
    /// Instructions retired.
    instructions: f64,
    /// Intel, four slots a cycle: uops retired, uops issued, slots the front end left
    /// empty, cycles it delivered none.
    retired: f64,
    issued: f64,
    undelivered: f64,
    no_uop_cycles: f64,
    /// Intel, five slots a cycle (Ice Lake): cycles with no uop delivered.
    no_uop_cycles_5: f64,
    /// Recovery cycles after a mispredict or a machine clear, and how many recoveries.
    recovery_cycles: f64,
    recoveries: f64,
    /// Uops dropped (Intel's INT_MISC.UOP_DROPPING).
    dropped: f64,
    /// Branch mispredicts and machine clears.
    mispredicts: f64,
    clears: f64,
    /// Last-level cache (AMD: L3) references and misses.
    references: f64,
    misses: f64,
    /// CAS commands per memory channel.
    cas_reads: f64,
    cas_writes: f64,
    /// Data flits sent per UPI link.
    upi_data_flits: f64,
    /// 4-byte requests of the CPU's memory reads and writes per IIO stack.
    iio_reads: f64,
    iio_writes: f64,
    /// IA32_PERF_METRICS, byte 0 to 7, in 255ths.
    perf_metrics: [f64; 8],
    /// AMD Zen 4, six slots a cycle: slots with no op from the front end, cycles with none
    /// at all, backend stalls, SMT contention; ops dispatched, retired, from microcode.
    amd_frontend: f64,
    amd_frontend_empty: f64,
    amd_backend: f64,
    amd_smt: f64,
    amd_dispatched: f64,
    amd_retired: f64,
    amd_microcode: f64,
    /// AMD: branch mispredicts and resyncs.
    amd_mispredicts: f64,
    amd_resyncs: f64,
    /// AMD: cycles nothing retired, and of them waiting on a load.
    amd_not_complete: f64,
    amd_load_not_complete: f64,
    /// AMD Zen 2/3: Data Fabric requests per DRAM channel.
    df_per_channel: f64,
}

/// The compute-bound workload (`runtime/src/sim/workloads.rs`, COMPUTE_BOUND), by hand from
/// its runs: instructions 4 x 300 + 3 x 200 + 2 x 200 + 100; uops retired 4 x 600 + 2 x 200;
/// issued 4 x 650 + 3 x 100; not delivered 4 x 50 + 2 x 100 (5 and 6 wide: 40 cycles with
/// none); five recoveries of five cycles; Zen 4's slots: front end 6 x 50 + 3 x 100, backend
/// 6 x 150 + 3 x 100, SMT 3 x 100, dispatched 6 x 550 + 4 x 150, retired 6 x 500 + 4 x 150.
const COMPUTE: Quantities = Quantities {
    name: "compute-bound",
    cycles: 1000.0,
    instructions: 2300.0,
    retired: 2800.0,
    issued: 2900.0,
    undelivered: 400.0,
    no_uop_cycles: 50.0,
    no_uop_cycles_5: 40.0,
    recovery_cycles: 25.0,
    recoveries: 5.0,
    dropped: 1.0,
    mispredicts: 4.0,
    clears: 1.0,
    references: 20.0,
    misses: 2.0,
    cas_reads: 8.0,
    cas_writes: 4.0,
    upi_data_flits: 1.0,
    iio_reads: 1.0,
    iio_writes: 1.0,
    perf_metrics: [179.0, 13.0, 26.0, 37.0, 10.0, 10.0, 16.0, 12.0],
    amd_frontend: 600.0,
    amd_frontend_empty: 50.0,
    amd_backend: 1200.0,
    amd_smt: 300.0,
    amd_dispatched: 3900.0,
    amd_retired: 3600.0,
    amd_microcode: 36.0,
    amd_mispredicts: 4.0,
    amd_resyncs: 1.0,
    amd_not_complete: 300.0,
    amd_load_not_complete: 100.0,
    df_per_channel: 12.0,
};

/// The memory-bound workload (MEMORY_BOUND), by hand: instructions 2 x 100 + 200; uops
/// retired 4 x 100 + 80; issued 4 x 110 + 80; not delivered 4 x 25 + 100 (5 and 6 wide: 20
/// cycles with none); four recoveries of five cycles (two mispredicts, two machine clears);
/// 3 uops dropped; 36 UPI data flits; 16 and 8 IIO read and write requests; Zen 4: front end 6 x 25 + 3 x 50,
/// backend 6 x 800, SMT 3 x 40, dispatched 6 x 100 + 3 x 60, retired 6 x 100.
const MEMORY: Quantities = Quantities {
    name: "memory-bound",
    cycles: 1000.0,
    instructions: 400.0,
    retired: 480.0,
    issued: 520.0,
    undelivered: 200.0,
    no_uop_cycles: 25.0,
    no_uop_cycles_5: 20.0,
    recovery_cycles: 20.0,
    recoveries: 4.0,
    dropped: 3.0,
    mispredicts: 2.0,
    clears: 2.0,
    references: 40.0,
    misses: 30.0,
    cas_reads: 94.0,
    cas_writes: 40.0,
    upi_data_flits: 36.0,
    iio_reads: 16.0,
    iio_writes: 8.0,
    perf_metrics: [31.0, 8.0, 13.0, 203.0, 6.0, 5.0, 10.0, 180.0],
    amd_frontend: 300.0,
    amd_frontend_empty: 25.0,
    amd_backend: 4800.0,
    amd_smt: 120.0,
    amd_dispatched: 780.0,
    amd_retired: 600.0,
    amd_microcode: 6.0,
    amd_mispredicts: 1.0,
    amd_resyncs: 1.0,
    amd_not_complete: 800.0,
    amd_load_not_complete: 700.0,
    df_per_channel: 134.0,
};

/// The workloads [`meaning`] counts.
const CHECKED: [Quantities; 2] = [COMPUTE, MEMORY];

/// One processor of each family and the metrics checked on it.
const FAMILIES: &[(&str, &[&str])] = &[
    ("xeon-e5-2600-v4", &[BW, LLC, CPI, TMA_COUNTED]),
    ("cascade-lake", &[BW, LLC, CPI, UPI, TMA_COUNTED]),
    ("ice-lake-sp", &[BW, LLC, CPI, UPI, TMA_ICL]),
    ("sapphire-rapids", &[BW, LLC, CPI, UPI, IIO, TMA_SPR]),
    ("amd-zen3", &[DF, LLC, IPC]),
    ("amd-zen4", &[BW, LLC, IPC, AMD_L1, AMD_L2]),
];

const BW: &str = "memory_bandwidth_read memory_bandwidth_write memory_bandwidth_total";
const DF: &str = "memory_bandwidth_total";
const LLC: &str = "llc_hit_rate";
const CPI: &str = "cpi";
const IPC: &str = "ipc";
const UPI: &str = "upi_data_transmit_bw";
const IIO: &str = "iio_bandwidth_read iio_bandwidth_write";
const TMA_COUNTED: &str = "Frontend_Bound Bad_Speculation Retiring Backend_Bound Fetch_Latency \
     Fetch_Bandwidth Branch_Mispredicts Machine_Clears";
const TMA_ICL: &str = TMA_COUNTED;
const TMA_SPR: &str = "Frontend_Bound Bad_Speculation Retiring Backend_Bound Fetch_Latency \
     Fetch_Bandwidth Branch_Mispredicts Machine_Clears Heavy_Operations Light_Operations \
     Memory_Bound Core_Bound";
const AMD_L1: &str = "frontend_bound bad_speculation backend_bound smt_contention retiring";
const AMD_L2: &str = "frontend_bound_latency frontend_bound_bandwidth \
     bad_speculation_mispredicts bad_speculation_pipeline_restarts backend_bound_memory \
     backend_bound_cpu retiring_fastpath retiring_microcode";

/// The metrics checked on `processor`.
fn checked(processor: &str) -> Vec<&'static str> {
    FAMILIES
        .iter()
        .filter(|(p, _)| *p == processor)
        .flat_map(|(_, groups)| groups.iter().flat_map(|g| g.split_whitespace()))
        .collect()
}

fn processor(id: &str) -> &'static ProcessorInfo {
    PROCESSORS.iter().copied().find(|p| p.id == id).unwrap()
}

/// Events a second of 1000-cycle periods of a 2 GHz clock holds, per event a period.
const PERIODS_PER_SECOND: f64 = 2e6;

/// `metric`'s value per socket on `processor` under `q`, by hand from the vendor's formula
/// (Intel's metric files, Linux perf's AMD metrics, the guides' formulas for the LLC hit
/// rate), or `None` where this test does not check it.
fn expected(processor: &str, metric: &str, q: &Quantities) -> Option<f64> {
    let per_second = |n: f64| n * PERIODS_PER_SECOND;
    let value = match metric {
        // 100 (references - misses) / references (AMD: L3 lookups and misses).
        "llc_hit_rate" => 100.0 * (q.references - q.misses) / q.references,
        "cpi" => q.cycles / q.instructions,
        "ipc" => q.instructions / q.cycles,
        // Bytes a second: 64 per CAS command, every channel of the socket; Zen 2/3: 64 per
        // Data Fabric request at each of the eight DRAM channels.
        "memory_bandwidth_read" | "memory_bandwidth_write" | "memory_bandwidth_total" => {
            if processor == "amd-zen3" {
                return Some(8.0 * per_second(q.df_per_channel) * 64.0 / 1e6);
            }
            let (unit, _) = families::cas_events(processor, metric);
            let cas = match metric {
                "memory_bandwidth_read" => q.cas_reads,
                "memory_bandwidth_write" => q.cas_writes,
                _ => q.cas_reads + q.cas_writes,
            };
            families::boxes(processor, unit) * per_second(cas) * 64.0 / 1e6
        }
        // UNC_UPI_TxL_FLITS.ALL_DATA * (64 / 9) / 1e6 / seconds, every link.
        "upi_data_transmit_bw" => {
            families::boxes(processor, "UPI") * per_second(q.upi_data_flits) * 64.0 / 9.0 / 1e6
        }
        // UNC_IIO_DATA_REQ_OF_CPU.MEM_{READ,WRITE}.ALL_PARTS * 4 / 1e6 / seconds.
        "iio_bandwidth_read" | "iio_bandwidth_write" => {
            let n = if metric.ends_with("read") {
                q.iio_reads
            } else {
                q.iio_writes
            };
            families::boxes(processor, "IIO") * per_second(n) * 4.0 / 1e6
        }
        _ => return top_down(processor, metric, q),
    };
    Some(value)
}

/// Top-down metrics, in percent.
fn top_down(processor: &str, metric: &str, q: &Quantities) -> Option<f64> {
    let shares = match processor {
        "xeon-e5-2600-v4" | "cascade-lake" => counted_top_down(q),
        "ice-lake-sp" => icl_top_down(q),
        "sapphire-rapids" => spr_top_down(q),
        "amd-zen4" => amd_top_down(q),
        _ => return None,
    };
    shares
        .into_iter()
        .find(|(m, _)| *m == metric)
        .map(|(_, v)| 100.0 * v)
}

/// Intel's formulas up to Cascade Lake (broadwellx_metrics.json, cascadelakex_metrics.json)
/// with SMT (the simulated core has two threads in step: `HYPERTHREADING_ON`): core clocks =
/// CPU_CLK_UNHALTED.THREAD_P_ANY / 2, where any-thread counts both threads' cycles, 2 x
/// cycles; slots = 4 x core clocks; frontend = IDQ_UOPS_NOT_DELIVERED.CORE / slots; bad
/// speculation = (UOPS_ISSUED.ANY - UOPS_RETIRED.RETIRE_SLOTS + 4 x
/// INT_MISC.RECOVERY_CYCLES_ANY / 2) / slots; retiring = UOPS_RETIRED.RETIRE_SLOTS / slots;
/// backend the rest; fetch latency = 4 x IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE /
/// slots, fetch bandwidth frontend less that; mispredicts BR_MISP_RETIRED.ALL_BRANCHES /
/// (that + MACHINE_CLEARS.COUNT) of bad speculation, machine clears the rest.
/// INT_MISC.RECOVERY_CYCLES_ANY counts both threads' recovery cycles, 2 x recovery cycles:
/// added up (Cascade Lake), or, where the list gives it a counter mask of 1 (Broadwell-EP,
/// unit mask 0x03), the cycles either thread recovers, which are as many since the sibling
/// (half a period behind) recovers in other cycles.
fn counted_top_down(q: &Quantities) -> Vec<(&'static str, f64)> {
    let slots = 4.0 * (2.0 * q.cycles) / 2.0;
    let recovery_any = 2.0 * q.recovery_cycles;
    let frontend = q.undelivered / slots;
    let bad = (q.issued - q.retired + 4.0 * recovery_any / 2.0) / slots;
    let retiring = q.retired / slots;
    let latency = 4.0 * q.no_uop_cycles / slots;
    let mispredicts = q.mispredicts / (q.mispredicts + q.clears) * bad;
    vec![
        ("Frontend_Bound", frontend),
        ("Bad_Speculation", bad),
        ("Retiring", retiring),
        ("Backend_Bound", 1.0 - frontend - bad - retiring),
        ("Fetch_Latency", latency),
        ("Fetch_Bandwidth", frontend - latency),
        ("Branch_Mispredicts", mispredicts),
        ("Machine_Clears", bad - mispredicts),
    ]
}

/// IA32_PERF_METRICS byte `n` as a share of level 1 (bytes 0 to 3).
fn byte(q: &Quantities, n: usize) -> f64 {
    q.perf_metrics[n] / q.perf_metrics[..4].iter().sum::<f64>()
}

/// Ice Lake-SP (icelakex_metrics.json), slots = 5 x cycles: frontend = its byte -
/// INT_MISC.UOP_DROPPING / slots; backend = its byte + 5 x INT_MISC.CLEARS_COUNT / slots;
/// retiring its byte; bad speculation the rest (at least 0); fetch latency = (5 x
/// IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE - INT_MISC.UOP_DROPPING) / slots;
/// mispredicts and machine clears as before.
fn icl_top_down(q: &Quantities) -> Vec<(&'static str, f64)> {
    let slots = 5.0 * q.cycles;
    let frontend = byte(q, 2) - q.dropped / slots;
    let backend = byte(q, 3) + 5.0 * q.recoveries / slots;
    let retiring = byte(q, 0);
    let bad = (1.0 - frontend - backend - retiring).max(0.0);
    let latency = (5.0 * q.no_uop_cycles_5 - q.dropped) / slots;
    let mispredicts = q.mispredicts / (q.mispredicts + q.clears) * bad;
    vec![
        ("Frontend_Bound", frontend),
        ("Bad_Speculation", bad),
        ("Retiring", retiring),
        ("Backend_Bound", backend),
        ("Fetch_Latency", latency),
        ("Fetch_Bandwidth", (frontend - latency).max(0.0)),
        ("Branch_Mispredicts", mispredicts),
        ("Machine_Clears", (bad - mispredicts).max(0.0)),
    ]
}

/// Sapphire Rapids (sapphirerapids_metrics.json), slots = 6 x cycles: level 1 as Ice Lake's
/// without the clears term; level 2 from bytes 4 (heavy operations), 5 (branch
/// mispredicts), 6 (fetch latency, less the dropped uops) and 7 (memory bound), the others
/// their parent less these.
fn spr_top_down(q: &Quantities) -> Vec<(&'static str, f64)> {
    let slots = 6.0 * q.cycles;
    let frontend = byte(q, 2) - q.dropped / slots;
    let backend = byte(q, 3);
    let retiring = byte(q, 0);
    let bad = (1.0 - frontend - backend - retiring).max(0.0);
    let latency = byte(q, 6) - q.dropped / slots;
    vec![
        ("Frontend_Bound", frontend),
        ("Bad_Speculation", bad),
        ("Retiring", retiring),
        ("Backend_Bound", backend),
        ("Fetch_Latency", latency),
        ("Fetch_Bandwidth", (frontend - latency).max(0.0)),
        ("Branch_Mispredicts", byte(q, 5)),
        ("Machine_Clears", (bad - byte(q, 5)).max(0.0)),
        ("Heavy_Operations", byte(q, 4)),
        ("Light_Operations", (retiring - byte(q, 4)).max(0.0)),
        ("Memory_Bound", byte(q, 7)),
        ("Core_Bound", (backend - byte(q, 7)).max(0.0)),
    ]
}

/// AMD Zen 4 (Linux perf's pipeline.json): each level-1 share over 6 slots a cycle; level 2
/// splits frontend by the cycles with no op at all (latency: 6 slots each), bad speculation
/// by mispredicts and resyncs, backend by the not-complete cycles waiting on a load,
/// retiring by the microcode ops.
fn amd_top_down(q: &Quantities) -> Vec<(&'static str, f64)> {
    let slots = 6.0 * q.cycles;
    let bad = (q.amd_dispatched - q.amd_retired) / slots;
    let backend = q.amd_backend / slots;
    let retiring = q.amd_retired / slots;
    let restarts = q.amd_resyncs / (q.amd_mispredicts + q.amd_resyncs);
    let memory = q.amd_load_not_complete / q.amd_not_complete;
    let microcode = q.amd_microcode / q.amd_retired;
    vec![
        ("frontend_bound", q.amd_frontend / slots),
        ("bad_speculation", bad),
        ("backend_bound", backend),
        ("smt_contention", q.amd_smt / slots),
        ("retiring", retiring),
        ("frontend_bound_latency", 6.0 * q.amd_frontend_empty / slots),
        (
            "frontend_bound_bandwidth",
            (q.amd_frontend - 6.0 * q.amd_frontend_empty) / slots,
        ),
        ("bad_speculation_mispredicts", bad * (1.0 - restarts)),
        ("bad_speculation_pipeline_restarts", bad * restarts),
        ("backend_bound_memory", backend * memory),
        ("backend_bound_cpu", backend * (1.0 - memory)),
        ("retiring_fastpath", retiring * (1.0 - microcode)),
        ("retiring_microcode", retiring * microcode),
    ]
}

/// A change to the control a session programs: applied to the selection of a plan.
type Tweak<'a> = &'a dyn Fn(&mut Selection);

fn workload(name: &str) -> &'static NamedWorkload {
    WORKLOADS.iter().copied().find(|w| w.name == name).unwrap()
}

/// Each of `metrics`' value on socket 0 over 100 ms of `q`'s workload on `p` (what `pmu
/// watch --sim --metric` prints), the plan's selection changed by `tweak`; `Err` where the
/// session refuses it.
fn measure(
    p: &'static ProcessorInfo,
    q: &Quantities,
    metrics: &[&'static MetricInfo],
    tweak: Tweak<'_>,
) -> Result<Vec<Option<f64>>, String> {
    let machine = Machine::simulating(p);
    let part = PartConstants::read(&machine, p, "/".as_ref());
    let constants: Constants = part.constants();
    let plan = Plan::new(p.id, metrics, &constants).map_err(|e| e.to_string())?;
    let backend = SessionBackend::Registers(&machine);
    let options = Options {
        clock: backend.clock(Duration::from_millis(100)),
        pace: Pace::Workload(workload(q.name)),
        topdown: !plan.topdown.is_empty(),
        ..Options::default()
    };
    let mut selection = plan.selection().map_err(|e| e.to_string())?;
    tweak(&mut selection);
    let mut session = Session::open(&backend, &selection, options).map_err(|e| e.to_string())?;
    let series = session.series().to_vec();
    let interval = session.interval().map_err(|e| e.to_string())?;
    let values = plan
        .interval_values(&series, &interval, false, &constants)
        .into_iter()
        .filter(|v| v.site.socket == 0)
        .map(|v| v.value)
        .collect();
    session.close().map_err(|e| e.to_string())?;
    Ok(values)
}

/// Whether `value` is `expected` (relative 1e-6: IA32_PERF_METRICS's shares are rounded
/// down to whole slots).
fn matches(value: f64, expected: f64) -> bool {
    (value - expected).abs() <= 1e-6 * expected.abs().max(1.0)
}

/// The meaning test: each metric of `names` in `table` (a processor's metrics, possibly
/// changed) counted alone on `p` under every checked workload, with `tweak` applied to what
/// is programmed, against its value by hand. Returns what differs (empty: it passes); with
/// `first`, no more than the first difference.
fn meaning(
    p: &'static ProcessorInfo,
    table: &[&'static MetricInfo],
    names: &[&str],
    tweak: Tweak<'_>,
    first: bool,
) -> Vec<String> {
    let mut failures = Vec::new();
    for name in names {
        let Some(m) = table.iter().copied().find(|m| m.name == *name) else {
            failures.push(format!("{} has no {name}", p.id));
            continue;
        };
        for q in &CHECKED {
            if first && !failures.is_empty() {
                return failures;
            }
            let want = expected(p.id, name, q).unwrap_or_else(|| panic!("{name}: no hand value"));
            match measure(p, q, &[m], tweak) {
                Ok(v) if v.len() == 1 && v[0].is_some_and(|v| matches(v, want)) => {}
                Ok(v) => failures.push(format!("{} {} {name}: {v:?} != {want}", p.id, q.name)),
                Err(e) => failures.push(format!("{} {} {name}: {e}", p.id, q.name)),
            }
        }
    }
    failures
}

/// No change to what is programmed.
fn as_planned(_: &mut Selection) {}

#[test]
fn every_checked_metric_is_its_formula_by_hand() {
    let mut failures = Vec::new();
    for (id, _) in FAMILIES {
        let p = processor(id);
        let table: Vec<&'static MetricInfo> = for_processor(id).iter().collect();
        failures.extend(meaning(p, &table, &checked(id), &as_planned, false));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A modifier an event's control sets, which a mutant drops.
#[derive(Debug, Clone, Copy)]
enum Modifier {
    CounterMask,
    Invert,
    Edge,
    AnyThread,
    UmaskBit(u16),
}

impl Modifier {
    /// The modifiers `sel` sets.
    fn of(sel: &pmu_runtime::boxes::EventSelect) -> Vec<Modifier> {
        let mut out = Vec::new();
        if sel.thresh.is_some_and(|c| c > 0) {
            out.push(Modifier::CounterMask);
        }
        if sel.invert == Some(true) {
            out.push(Modifier::Invert);
        }
        if sel.edge_detect == Some(true) {
            out.push(Modifier::Edge);
        }
        if sel.any_thread == Some(true) {
            out.push(Modifier::AnyThread);
        }
        let umask = sel.umask.unwrap_or(0);
        out.extend(
            (0..16)
                .map(|b| 1u16 << b)
                .filter(|bit| umask & bit != 0)
                .map(Modifier::UmaskBit),
        );
        out
    }

    /// `sel` without it.
    fn drop_from(self, sel: &mut pmu_runtime::boxes::EventSelect) {
        match self {
            Modifier::CounterMask => sel.thresh = None,
            Modifier::Invert => sel.invert = Some(false),
            Modifier::Edge => sel.edge_detect = Some(false),
            Modifier::AnyThread => sel.any_thread = Some(false),
            Modifier::UmaskBit(bit) => sel.umask = sel.umask.map(|u| u & !bit),
        }
    }
}

/// One change to a checked metric.
struct Mutant {
    /// What was changed, for the message.
    what: String,
    /// The metric as changed (its table entry).
    metric: &'static MetricInfo,
    /// A modifier dropped from planned event n's control.
    dropped: Option<(usize, Modifier)>,
}

/// `m` with `events` in place of its own.
fn with_events(m: &'static MetricInfo, events: Vec<MetricEvent>) -> &'static MetricInfo {
    let events: &'static [MetricEvent] = Box::leak(events.into_boxed_slice());
    Box::leak(Box::new(MetricInfo { events, ..*m }))
}

/// Each event of `m` counted alone (a metric of that one event) under each checked
/// workload on socket 0: `counts[workload][event]`.
fn event_counts(p: &'static ProcessorInfo, m: &'static MetricInfo) -> Vec<Vec<Option<f64>>> {
    const ONE: &[Op] = &[Op::Event(0)];
    let probes: Vec<&'static MetricInfo> = m
        .events
        .iter()
        .map(|e| {
            let alone = with_events(m, vec![*e]);
            &*Box::leak(Box::new(MetricInfo { ops: ONE, ..*alone }))
        })
        .collect();
    CHECKED
        .iter()
        .map(|q| measure(p, q, &probes, &as_planned).expect("each event counts"))
        .collect()
}

/// The counts of each checked workload (`counts[workload][event]`), and the constants.
struct Counts {
    counts: Vec<Vec<Option<f64>>>,
    constants: Constants,
}

impl Counts {
    /// Whether `m` gives the same value (to 1e-9, relative) under every workload with the
    /// counts changed by `change`.
    fn same_value(&self, m: &MetricInfo, change: &dyn Fn(&mut Vec<Option<f64>>)) -> bool {
        let constants = Constants {
            duration_seconds: Some(0.1),
            ..self.constants
        };
        self.counts.iter().all(|c| {
            let mut changed = c.clone();
            change(&mut changed);
            match (m.evaluate(c, &constants), m.evaluate(&changed, &constants)) {
                (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1e-9),
                (a, b) => a == b,
            }
        })
    }

    /// Whether the value of `m` does not depend on the count of its event `k` (it cancels
    /// out, as UOPS_RETIRED.RETIRE_SLOTS does in E5 v4's Backend_Bound): every change to
    /// that event alone is equivalent.
    fn irrelevant(&self, m: &MetricInfo, k: usize) -> bool {
        self.same_value(m, &|c| c[k] = c[k].map(|v| 1.5 * v + 1.0))
    }
}

/// Why a change is not a mutant: nothing the meaning test could see.
const ALIKE: &str = "swapped events count alike or the formula is symmetric in them";
const IRRELEVANT: &str = "the event's count does not change the value";
const EDGE_CMASK_1: &str = "counter mask 1 dropped under edge detect";

/// Every mutant of checked metric `m` of `p`, and how many changes were left out as
/// equivalent, by reason.
fn mutants_of(
    p: &'static ProcessorInfo,
    m: &'static MetricInfo,
) -> (Vec<Mutant>, BTreeMap<&'static str, usize>) {
    let machine = Machine::simulating(p);
    let counts = Counts {
        counts: event_counts(p, m),
        constants: PartConstants::read(&machine, p, "/".as_ref()).constants(),
    };
    let mut out = Vec::new();
    let mut equivalent = BTreeMap::new();
    let n = m.events.len();
    for (i, j) in (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))) {
        if counts.same_value(m, &|c| c.swap(i, j)) {
            *equivalent.entry(ALIKE).or_default() += 1;
            continue;
        }
        let mut events = m.events.to_vec();
        let (a, b) = (events[i], events[j]);
        events[i] = MetricEvent {
            alias: a.alias,
            ..b
        };
        events[j] = MetricEvent {
            alias: b.alias,
            ..a
        };
        out.push(Mutant {
            what: format!("{} swapped with {}", a.name, b.name),
            metric: with_events(m, events),
            dropped: None,
        });
    }
    for (mutant, k) in byte_mutants(p, m) {
        if counts.irrelevant(m, k) {
            *equivalent.entry(IRRELEVANT).or_default() += 1;
        } else {
            out.push(mutant);
        }
    }
    for (mutant, why) in modifier_mutants(m, &counts) {
        match why {
            Some(why) => *equivalent.entry(why).or_default() += 1,
            None => out.push(mutant),
        }
    }
    (out, equivalent)
}

/// Each `PERF_METRICS` byte `m` reads replaced by each other byte the part reports, with the
/// index of the event changed.
fn byte_mutants(p: &ProcessorInfo, m: &'static MetricInfo) -> Vec<(Mutant, usize)> {
    let mut out = Vec::new();
    for (k, e) in m.events.iter().enumerate() {
        let MetricRead::SlotsShare(byte) = e.read else {
            continue;
        };
        for other in (0..p.topdown_metrics).filter(|b| *b != byte) {
            let mut events = m.events.to_vec();
            events[k].read = MetricRead::SlotsShare(other);
            let mutant = Mutant {
                what: format!("{} read from byte {other}", e.name),
                metric: with_events(m, events),
                dropped: None,
            };
            out.push((mutant, k));
        }
    }
    out
}

/// Each modifier each counted event of `m` sets, dropped from the control programmed, with
/// why it is equivalent where it is: the event does not change the value, or a counter mask
/// of 1 is dropped where edge detect stays (SDM Vol. 3B, IA32_PERFEVTSELx: edge detect counts
/// the rising edges of the condition the other fields express; with no counter mask that is
/// an event in the cycle, what a counter mask of 1 compares).
fn modifier_mutants(
    m: &'static MetricInfo,
    counts: &Counts,
) -> Vec<(Mutant, Option<&'static str>)> {
    let plan = Plan::new(m_processor(m), &[m], &counts.constants).expect("plan");
    let selection = plan.selection().expect("selection");
    let Counted::Boxes(boxes) = &selection.counted else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (n, planned) in plan.events.iter().enumerate() {
        let sel = &boxes[0].events[n];
        if sel.ev_sel == FIXED_EVENT {
            continue;
        }
        // The metric's events counted by planned event n.
        let ks: Vec<usize> = (0..m.events.len())
            .filter(|k| plan.inputs[0][*k] == n)
            .collect();
        let irrelevant = ks.iter().all(|k| counts.irrelevant(m, *k));
        for modifier in Modifier::of(sel) {
            let edge_cmask_1 = matches!(modifier, Modifier::CounterMask)
                && sel.thresh == Some(1)
                && sel.edge_detect == Some(true);
            let why = if irrelevant {
                Some(IRRELEVANT)
            } else {
                edge_cmask_1.then_some(EDGE_CMASK_1)
            };
            let mutant = Mutant {
                what: format!("{} without {modifier:?}", planned.label()),
                metric: m,
                dropped: Some((n, modifier)),
            };
            out.push((mutant, why));
        }
    }
    out
}

/// The processor whose table holds `m` (the checked families').
fn m_processor(m: &'static MetricInfo) -> &'static str {
    FAMILIES
        .iter()
        .map(|(p, _)| *p)
        .find(|p| for_processor(p).iter().any(|x| std::ptr::eq(x, m)))
        .expect("a checked processor's metric")
}

/// Runs every mutant of every checked metric of `id` through [`meaning`]: each must fail it.
fn mutation_check(id: &str) {
    let p = processor(id);
    let table: Vec<&'static MetricInfo> = for_processor(id).iter().collect();
    let (mut made, mut killed) = (0, 0);
    let mut equivalent: BTreeMap<&str, usize> = BTreeMap::new();
    let mut survivors = Vec::new();
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for name in checked(id) {
        let m = table.iter().copied().find(|m| m.name == name).unwrap();
        let (mutants, eq) = mutants_of(p, m);
        for (why, n) in eq {
            *equivalent.entry(why).or_default() += n;
        }
        for mutant in mutants {
            made += 1;
            let kind = match (&mutant.dropped, mutant.what.contains(" byte ")) {
                (Some(_), _) => "modifier",
                (None, true) => "byte",
                (None, false) => "swap",
            };
            *by_kind.entry(kind).or_default() += 1;
            let changed: Vec<&'static MetricInfo> = table
                .iter()
                .map(|t| if t.name == name { mutant.metric } else { *t })
                .collect();
            let tweak = |s: &mut Selection| {
                if let (Some((n, modifier)), Counted::Boxes(boxes)) =
                    (mutant.dropped, &mut s.counted)
                {
                    for b in boxes {
                        modifier.drop_from(&mut b.events[n]);
                    }
                }
            };
            if meaning(p, &changed, &[name], &tweak, true).is_empty() {
                survivors.push(format!("{id} {name}: {}", mutant.what));
            } else {
                killed += 1;
            }
        }
    }
    eprintln!(
        "{id}: {made} mutants ({by_kind:?}), {killed} killed, {} survived; equivalent, not counted: {equivalent:?}",
        survivors.len()
    );
    assert!(
        made > 0 && survivors.is_empty(),
        "survivors:\n{}",
        survivors.join("\n")
    );
}

#[test]
fn no_mutant_survives_on_e5_v4() {
    mutation_check("xeon-e5-2600-v4");
}

#[test]
fn no_mutant_survives_on_cascade_lake() {
    mutation_check("cascade-lake");
}

#[test]
fn no_mutant_survives_on_ice_lake_sp() {
    mutation_check("ice-lake-sp");
}

#[test]
fn no_mutant_survives_on_sapphire_rapids() {
    mutation_check("sapphire-rapids");
}

#[test]
fn no_mutant_survives_on_zen3() {
    mutation_check("amd-zen3");
}

#[test]
fn no_mutant_survives_on_zen4() {
    mutation_check("amd-zen4");
}
