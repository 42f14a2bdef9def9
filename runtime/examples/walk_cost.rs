//! What one sample read costs in backend calls: two counters overflow in one interval (C1,
//! reporting through S0, and C6, through S1), and `Uncore::frozen_sample` confirms the
//! freeze, walks the overflow hierarchy and reads the counters. Every MSR read and write it
//! makes is counted, with the simulator's summary registers and without them (what real
//! hardware offers: no public source gives their addresses).
//!
//! `cargo run -p pmu-runtime --example walk_cost`

use pmu_regs::xeon_7500::PROCESSOR as NHM;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use pmu_regs::xeon_7500::ubox;
use pmu_regs::{Addresses, Location, PROCESSORS};
use pmu_runtime::access::BackendResult;
use pmu_runtime::ownership::{Lease, Ownership, Pmu};
use pmu_runtime::sampling::uncore::{
    EventSelect, Sample, SamplePlan, Uncore, UncoreCounter, UncoreSummary,
};
use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent};
use pmu_runtime::{Bdf, MmioAccess, MsrAccess, MsrAccessExt, PciAccess};

/// The simulator, with every MSR call counted. Its summary registers are the simulator's.
struct Counted<'a> {
    sim: &'a Sim,
    reads: AtomicUsize,
    writes: AtomicUsize,
    /// Questions about the summary registers, which have no MSR address: U_MSR_PMON_GLOBAL_SUMMARY
    /// (`global_pmi`) and S{0,1}_MSR_PMON_SUMMARY bits (`hidden_bit`).
    global_pmi: AtomicUsize,
    s_summary: AtomicUsize,
    /// The MSRs read, in order.
    read_log: Mutex<Vec<u32>>,
}

impl<'a> Counted<'a> {
    fn new(sim: &'a Sim) -> Self {
        Self {
            sim,
            reads: AtomicUsize::new(0),
            writes: AtomicUsize::new(0),
            global_pmi: AtomicUsize::new(0),
            s_summary: AtomicUsize::new(0),
            read_log: Mutex::new(Vec::new()),
        }
    }

    fn reset(&self) {
        self.reads.store(0, Ordering::Relaxed);
        self.writes.store(0, Ordering::Relaxed);
        self.global_pmi.store(0, Ordering::Relaxed);
        self.s_summary.store(0, Ordering::Relaxed);
        self.read_log.lock().unwrap().clear();
    }
}

impl MsrAccess for Counted<'_> {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.read_log.lock().unwrap().push(address);
        self.sim.read_msr(cpu, address)
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.sim.write_msr(cpu, address, value)
    }
}

impl UncoreSummary for Counted<'_> {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        self.global_pmi.fetch_add(1, Ordering::Relaxed);
        self.sim.global_pmi(socket)
    }
    fn hidden_bit(&self, socket: usize, bit: &pmu_regs::BitRef) -> Option<bool> {
        self.s_summary.fetch_add(1, Ordering::Relaxed);
        self.sim.hidden_bit(socket, bit)
    }
    fn acknowledge_pmi(&self, socket: usize) {
        self.sim.acknowledge_pmi(socket)
    }
}

/// The same, without the summary registers: the trait's defaults answer "unknown", as on real
/// hardware.
struct NoSummary<'a>(Counted<'a>);

impl MsrAccess for NoSummary<'_> {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        self.0.read_msr(cpu, address)
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        self.0.write_msr(cpu, address, value)
    }
}

impl UncoreSummary for NoSummary<'_> {}

// The Xeon 7500 uncore is all MSRs; PCI access is never used.
impl PciAccess for Counted<'_> {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        self.sim.read_dword(bdf, offset)
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        self.sim.write_dword(bdf, offset, value)
    }
}

// Nor is memory-mapped access.
impl MmioAccess for Counted<'_> {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        self.sim.read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        self.sim.write_mmio(address, width, value)
    }
}

impl MmioAccess for NoSummary<'_> {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        self.0.read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        self.0.write_mmio(address, width, value)
    }
}

impl PciAccess for NoSummary<'_> {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        self.0.read_dword(bdf, offset)
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        self.0.write_dword(bdf, offset, value)
    }
}

impl Ownership for Counted<'_> {
    fn claim(&self, pmu: &Pmu) -> pmu_runtime::Result<Lease> {
        self.sim.claim(pmu)
    }
}

impl Ownership for NoSummary<'_> {
    fn claim(&self, pmu: &Pmu) -> pmu_runtime::Result<Lease> {
        self.0.claim(pmu)
    }
}

const C1: UncoreCounter = UncoreCounter::new("C1", 0);
const C6: UncoreCounter = UncoreCounter::new("C6", 3);

fn event(instance: &'static str, ev_sel: u16) -> UncoreEvent {
    UncoreEvent {
        instance,
        ev_sel,
        umask: None,
    }
}

/// Arms C1 and C6, makes both overflow, injects until the uncore freezes, then reads one
/// sample with the counters reset, so they count `frozen_sample` alone.
fn one_sample<B: MsrAccess + PciAccess + MmioAccess + UncoreSummary + Ownership>(
    sim: &Sim,
    backend: &B,
    counted: &Counted,
) -> Sample {
    let uncore = Uncore::open(backend, &NHM, 0, 0).expect("the uncore is free");
    let mut sampling = uncore
        .arm(&SamplePlan {
            counters: vec![
                (C1, EventSelect::event(0x01), 100),
                (C6, EventSelect::event(0x02), 60),
            ],
            pmi_core: 2,
        })
        .expect("arm");
    sim.inject_uncore(0, event("C1", 0x01), 100)
        .expect("inject"); // C1 overflows
    sim.inject_uncore(0, event("C6", 0x02), 60).expect("inject"); // C6 overflows before the freeze
    let frozen = || {
        !sim.on_cpu(0)
            .read(ubox::U_MSR_PMON_GLOBAL_CTL)
            .expect("U_MSR_PMON_GLOBAL_CTL")
            .en_all()
    };
    let mut more = 0;
    while !frozen() {
        sim.inject_uncore(0, event("C1", 0x01), 10).expect("inject");
        more += 10;
        assert!(more < 10_000, "the uncore never froze");
    }
    counted.reset();
    let sample = uncore
        .frozen_sample(&mut sampling)
        .expect("a frozen sample");
    assert_eq!(sample.overflowed, vec![C1, C6], "both counters overflowed");
    sample
}

/// The name of a Xeon 7500 MSR, from the generated metadata.
fn msr_name(address: u32) -> String {
    PROCESSORS
        .iter()
        .filter(|p| p.id == "xeon-7500")
        .flat_map(|p| p.units.iter())
        .flat_map(|u| u.registers.iter())
        .flat_map(|r| match r.addresses {
            Addresses::Known(a) => a,
            Addresses::Unknown(_) | Addresses::FromTable(_) => &[],
        })
        .find(|a| a.location == Location::Msr(address))
        .map_or_else(|| format!("{address:#x}"), |a| a.name.to_string())
}

fn report(title: &str, counted: &Counted, sample: &Sample) {
    let reads = counted.reads.load(Ordering::Relaxed);
    let writes = counted.writes.load(Ordering::Relaxed);
    println!("{title}:");
    println!(
        "  backend calls      {:>3}  ({reads} read_msr, {writes} write_msr)",
        reads + writes
    );
    println!(
        "  walk status reads  {:>3}  (sample.walk_reads)",
        sample.walk_reads
    );
    println!(
        "  summary queries    {:>3}  ({} U_MSR_PMON_GLOBAL_SUMMARY, {} S{{0,1}}_MSR_PMON_SUMMARY; no MSR address, \
         answered by the simulator, not counted above)",
        counted.global_pmi.load(Ordering::Relaxed) + counted.s_summary.load(Ordering::Relaxed),
        counted.global_pmi.load(Ordering::Relaxed),
        counted.s_summary.load(Ordering::Relaxed),
    );
    let log = counted.read_log.lock().unwrap();
    let names: Vec<String> = log.iter().map(|a| msr_name(*a)).collect();
    println!("  MSRs read: {}", names.join(", "));
}

fn main() {
    // The minimum the hierarchy allows for this sample:
    // - the walk: 1 read of U_MSR_PMON_GLOBAL_STATUS, then for each armed counter whose route
    //   is flagged (the session owns the uncore, so only armed counters can have raised the
    //   PMI) its box's GLOBAL_STATUS: C1's and C6's, so 1 + 2 = 3 status reads;
    // - 1 read of U_MSR_PMON_GLOBAL_CTL, to confirm the freeze (en_all clear);
    // - 1 read per armed counter (2), for the counts.
    // So 6 reads and no writes. The summary registers themselves have no MSR address; with
    // them, the walk asks for each armed counter's summary bit once.
    const WALK_MIN: usize = 1 + 2;
    const CALLS_MIN: usize = WALK_MIN + 1 + 2;

    let config = SimConfig {
        freeze_skew: 100,
        ..SimConfig::default()
    };

    let sim = Sim::new(config);
    let counted = Counted::new(&sim);
    let with = one_sample(&sim, &counted, &counted);
    report("with the summary registers (simulator)", &counted, &with);

    let sim = Sim::new(config);
    let hw = NoSummary(Counted::new(&sim));
    let without = one_sample(&sim, &hw, &hw.0);
    report("without them (real hardware)", &hw.0, &without);

    println!("minimum the hierarchy allows: {CALLS_MIN} backend calls, of which {WALK_MIN} walk status reads");
    assert_eq!(
        with.counts, without.counts,
        "both walks find the same counts"
    );
}
