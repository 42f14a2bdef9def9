//! What a backend call costs.
//!
//! - `msr_read`: one typed read through [`MsrDev`] (a regular file standing in for
//!   `/dev/cpu/0/msr`) against a bare `pread` of the same 8 bytes on an open file: the price of
//!   the typed layer, the error mapping and the open-file cache.
//! - `perf_vs_msr_read`: one read of a counter through perf (the kernel's `msr` PMU, `msr/tsc/`
//!   on CPU 0: a `read` of the group with its times) against one typed read through
//!   [`MsrDev`]. This machine has no `/dev/cpu/N/msr`, so the latter reads a regular file that
//!   stands in for it: the kernel's `rdmsr` is not in that figure.
//! - `sim_inject`: the simulator's event injection rate, one event per call (events/s is
//!   criterion's `elem/s`), and 1,000,000 events per call.
//! - `joined_domains`: Diamond Rapids' two discovery domains on its simulator, published,
//!   read and joined (`part::joined_domains`, what `pmu discover --sim` calls). Its
//!   instructions per call, which load does not change, are `bench/discovery_instructions.sh`'s.
//!
//! `cargo bench -p pmu-runtime --bench backends`

use std::fs::File;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use pmu_regs::xeon_7500::{cbox, ubox, wbox};
use pmu_regs::Register;
use pmu_runtime::machine::Machine;
use pmu_runtime::msr::MsrDev;
use pmu_runtime::sim::{Sim, UncoreEvent};
use pmu_runtime::MsrAccessExt;

fn msr_read(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(dir.path().join("0")).expect("<tmp>/0");
    let path = dir.path().join("0").join("msr");
    let reg = wbox::W_MSR_PMON_EVT_SEL[0];
    {
        // Sparse: 8 KiB of MSR space, with one event select written where the driver has it.
        let f = File::create(&path).expect("<tmp>/0/msr");
        f.set_len(0x2000).expect("set_len");
        let sel = wbox::WEvtSel::RESET
            .with_ev_sel(0x01)
            .with_umask(0x0f)
            .with_en(true);
        f.write_all_at(&sel.to_raw().to_le_bytes(), u64::from(reg.address()))
            .expect("write the event select");
    }

    let dev = MsrDev::with_root(dir.path());
    let cpu = dev.on_cpu(0);
    // The first read opens the file; the benchmark measures the reads after it.
    let first = cpu.read(reg).expect("a typed read");
    assert_eq!(first.umask(), 0x0f);

    let file = File::open(&path).expect("open <tmp>/0/msr");
    let offset = u64::from(reg.address());

    let mut g = c.benchmark_group("msr_read");
    g.throughput(Throughput::Elements(1));
    g.bench_function("typed_msrdev", |b| {
        b.iter(|| cpu.read(black_box(reg)).expect("read"))
    });
    g.bench_function("bare_pread", |b| {
        b.iter(|| {
            let mut buf = [0u8; 8];
            file.read_exact_at(&mut buf, black_box(offset))
                .expect("pread");
            u64::from_le_bytes(buf)
        })
    });
    g.finish();
}

fn perf_vs_msr_read(c: &mut Criterion) {
    use pmu_runtime::perf::{counting::BoxGroup, encode::from_terms, EventSources};
    let msr = match EventSources::default().pmu("msr", "the msr PMU") {
        Ok(p) => p,
        Err(e) => {
            eprintln!("perf_vs_msr_read: skipped, {e}");
            return;
        }
    };
    let tsc = from_terms(&msr, "tsc").expect("msr/tsc/");
    // A CPU-bound event read from another CPU costs an interprocessor interrupt; the
    // benchmark thread is on one of the two CPUs, so one of these is local, one remote.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let mut groups: Vec<BoxGroup> = (0..cpus as u32)
        .map(|cpu| {
            let mut g =
                BoxGroup::open(&msr, Some(cpu), std::slice::from_ref(&tsc)).expect("open msr/tsc/");
            g.enable().expect("enable");
            assert!(
                g.read().expect("read")[0].count > 0,
                "the TSC does not count"
            );
            g
        })
        .collect();

    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(dir.path().join("0")).expect("<tmp>/0");
    File::create(dir.path().join("0").join("msr"))
        .expect("<tmp>/0/msr")
        .set_len(0x2000)
        .expect("set_len");
    let dev = MsrDev::with_root(dir.path());
    let cpu = dev.on_cpu(0);
    let ctr = wbox::W_MSR_PMON_CTR[0];
    cpu.read(ctr).expect("a typed read");

    let mut g = c.benchmark_group("perf_vs_msr_read");
    g.throughput(Throughput::Elements(1));
    for (cpu, group) in groups.iter_mut().enumerate() {
        g.bench_function(format!("perf_group_read_cpu{cpu}"), |b| {
            b.iter(|| group.read().expect("read")[0].count)
        });
    }
    g.bench_function("msrdev_file_tree", |b| {
        b.iter(|| cpu.read(black_box(ctr)).expect("read"))
    });
    g.finish();
}

/// A simulator with C-box 0 counter 0 counting event 0x01, enabled at every level (no PMI, so
/// nothing freezes; an overflow only sets status bits).
fn programmed_sim() -> Sim {
    let sim = Sim::new(Default::default());
    let cpu = sim.on_cpu(0);
    cpu.write(
        cbox::C_MSR_PMON_EVT_SEL[0][0],
        cbox::CEvtSel::RESET.with_ev_sel(0x01).with_en(true),
    )
    .expect("event select");
    cpu.write(
        cbox::C_MSR_PMON_GLOBAL_CTL[0],
        cbox::CGlobalCtl::RESET.with_ctr_en(1),
    )
    .expect("box control");
    cpu.write(
        ubox::U_MSR_PMON_GLOBAL_CTL,
        ubox::UGlobalCtl::RESET.with_en_all(true),
    )
    .expect("global control");
    sim
}

const C0_EVENT: UncoreEvent = UncoreEvent {
    instance: "C0",
    ev_sel: 0x01,
    umask: None,
};

fn sim_inject(c: &mut Criterion) {
    let sim = programmed_sim();
    sim.inject_uncore(0, C0_EVENT, 10).expect("inject");
    let counted = sim
        .on_cpu(0)
        .read(cbox::C_MSR_PMON_CTR[0][0])
        .expect("counter")
        .event_count();
    assert_eq!(counted, 10, "the benchmark's counter does not count");

    let mut g = c.benchmark_group("sim_inject");
    g.throughput(Throughput::Elements(1));
    g.bench_function("1_event_per_call", |b| {
        b.iter(|| sim.inject_uncore(0, black_box(C0_EVENT), black_box(1)))
    });
    const BULK: u64 = 1_000_000;
    g.throughput(Throughput::Elements(BULK));
    g.bench_function("1M_events_per_call", |b| {
        b.iter(|| sim.inject_uncore(0, black_box(C0_EVENT), black_box(BULK)))
    });
    g.finish();
}

fn joined_domains(c: &mut Criterion) {
    let dmr = &pmu_regs::diamond_rapids::PROCESSOR;
    let machine = Machine::simulating(dmr);
    let joined = pmu_runtime::part::joined_domains(dmr, &machine);
    assert_eq!(
        joined.len(),
        2,
        "Diamond Rapids' simulator publishes two domains' tables"
    );
    assert!(
        joined.iter().all(|d| d.joined.is_ok()),
        "every table is read and joined"
    );
    c.bench_function("joined_domains/diamond-rapids", |b| {
        b.iter(|| pmu_runtime::part::joined_domains(dmr, black_box(&machine)))
    });
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
    msr_read(&mut c);
    perf_vs_msr_read(&mut c);
    sim_inject(&mut c);
    joined_domains(&mut c);
    c.final_summary();
}
