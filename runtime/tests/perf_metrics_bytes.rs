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
//! The register is the test's: the machine is the simulator behind a backend of this test
//! that answers IA32_PERF_METRICS with the bytes below once the core has counted slots into
//! it (what the simulator's register reads then is its workload's, which this test does not
//! depend on), only the bytes the part reports (`topdown-metrics` in processors.xml: four
//! on Ice Lake-SP, eight from Sapphire Rapids), as hardware does.
//!
//! The formulas are Intel's TMA metrics for Sapphire Rapids (sapphirerapids_metrics.json:
//! tma_retiring, tma_backend_bound, tma_memory_bound, tma_heavy_operations,
//! tma_branch_mispredicts, tma_light_operations, tma_core_bound, tma_fetch_latency,
//! tma_frontend_bound, tma_bad_speculation), written out below.

use std::any::Any;
use std::time::Duration;

use pmu_regs::metrics::Constants;
use pmu_runtime::access::{
    BackendResult, Bdf, MmioAccess, MsrAccess, PciAccess, Topology, UncoreDevices, UncoreSummary,
};
use pmu_runtime::machine::{DiscoveryTables, Machine, MachineBackend, TableAccess, Workload};
use pmu_runtime::metrics::{select, Plan};
use pmu_runtime::ownership::{Lease, Ownership, Pmu};
use pmu_runtime::session::{Clock, Interval, Options, Pace, SeriesInfo, Session, SessionBackend};
use pmu_runtime::sim::{Sim, SimConfig};

/// IA32_PERF_METRICS (SDM Vol. 4, MSR 329H).
const MSR_PERF_METRICS: u32 = 0x329;

/// The simulator, with IA32_PERF_METRICS holding `bytes` (those the part reports) wherever
/// the simulator's own reads non-zero: after slots were counted into it since it was zeroed.
struct Metrics {
    sim: Sim,
    bytes: u64,
}

impl Metrics {
    fn machine(id: &str, bytes: u64) -> Machine {
        let p = pmu_regs::PROCESSORS.iter().find(|p| p.id == id).unwrap();
        let reported = match p.topdown_metrics {
            8 => u64::MAX,
            n => (1u64 << (8 * u32::from(n))) - 1,
        };
        Machine::with_backend(Metrics {
            sim: Sim::new(SimConfig::of(p)),
            bytes: bytes & reported,
        })
    }
}

impl MsrAccess for Metrics {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        let raw = self.sim.read_msr(cpu, address)?;
        Ok(match address {
            MSR_PERF_METRICS if raw != 0 => self.bytes,
            _ => raw,
        })
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        self.sim.write_msr(cpu, address, value)
    }
}

impl PciAccess for Metrics {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        self.sim.read_dword(bdf, offset)
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        self.sim.write_dword(bdf, offset, value)
    }
}

impl MmioAccess for Metrics {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        self.sim.read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        self.sim.write_mmio(address, width, value)
    }
}

impl UncoreSummary for Metrics {}

impl Ownership for Metrics {
    fn claim(&self, pmu: &Pmu) -> pmu_runtime::Result<Lease> {
        self.sim.claim(pmu)
    }
}

impl MachineBackend for Metrics {
    fn topology(&self) -> pmu_runtime::Result<Topology> {
        MachineBackend::topology(&self.sim)
    }
    fn devices(
        &self,
        processor: &'static pmu_regs::ProcessorInfo,
    ) -> pmu_runtime::Result<UncoreDevices> {
        MachineBackend::devices(&self.sim, processor)
    }
    fn discovery_tables(&self, registers: &dyn TableAccess) -> DiscoveryTables {
        MachineBackend::discovery_tables(&self.sim, registers)
    }
    fn cpuid(&self, leaf: u32) -> Option<[u32; 4]> {
        MachineBackend::cpuid(&self.sim, leaf)
    }
    fn workload(&self) -> Option<&dyn Workload> {
        MachineBackend::workload(&self.sim)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

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

/// Counts `plan` for one 10 ms interval of `machine` with top-down on: the interval and its
/// series, the session closed.
fn one_interval(machine: &Machine, plan: &Plan) -> (Interval, Vec<SeriesInfo>) {
    let selection = plan.selection().unwrap();
    let backend = SessionBackend::Registers(machine);
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
    (interval, series)
}

#[test]
fn every_perf_metrics_byte_is_read_as_its_category() {
    assert_eq!(
        RETIRING + BAD_SPECULATION + FRONTEND_BOUND + BACKEND_BOUND,
        0xFF
    );
    let machine = Metrics::machine("sapphire-rapids", PERF_METRICS);
    let names: Vec<String> = METRICS.iter().map(|m| m.to_string()).collect();
    let chosen = select("sapphire-rapids", &names).unwrap();
    let constants = Constants {
        threads_per_core: Some(1.0),
        ..Constants::NONE
    };
    let plan = Plan::new("sapphire-rapids", &chosen, &constants).unwrap();
    let (interval, series) = one_interval(&machine, &plan);
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

/// The same bytes on Ice Lake-SP, which reports only the four level-1 shares: Retiring
/// (icelakex_metrics.json tma_retiring) reads bytes 0-3.
#[test]
fn ice_lake_reports_only_the_level_1_bytes() {
    let machine = Metrics::machine("ice-lake-sp", PERF_METRICS);
    let names = vec!["Retiring".to_string()];
    let chosen = select("ice-lake-sp", &names).unwrap();
    let plan = Plan::new("ice-lake-sp", &chosen, &Constants::NONE).unwrap();
    let (interval, series) = one_interval(&machine, &plan);
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
