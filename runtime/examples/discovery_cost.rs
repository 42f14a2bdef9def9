//! What reading and joining a discovery table costs: Granite Rapids' (the largest part: 189
//! boxes with discovery types, joined with its own spec, every box compared), the largest
//! table the reader accepts at Sapphire Rapids' entry stride (512 boxes, 32 bytes apart:
//! 16 KiB), each located through its device's capability, read through `MmioAccess` from
//! memory, and joined with a spec; and Diamond Rapids' two discovery domains (IMH found
//! through a PCI device, CBB through an MSR), as its simulator publishes them, each read and
//! joined. Prints the median of 200 runs of each step, and the backend reads the read makes.
//!
//! `cargo run --release -p pmu-runtime --example discovery_cost`

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pmu_runtime::access::{BackendResult, MmioAccess};
use pmu_runtime::boxes::Boxes;
use pmu_runtime::discovery::{
    join, join_domains, locate, read_domains, read_table, AccessKind, BoxStatus, MemoryTable,
    TableBox, MAX_ENTRIES,
};
use pmu_runtime::sim::domains::SimDomains;
use pmu_runtime::sim::{Sim, SimConfig, DISCOVERY_DEVICE};
use pmu_runtime::Bdf;

/// The table in memory, with every read counted.
struct Counted {
    table: MemoryTable,
    reads: AtomicUsize,
}

impl MmioAccess for Counted {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.table.read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        self.table.write_mmio(address, width, value)
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Medians of 200 runs of locate, read and join of `table` (located through `device`) with
/// `spec`; prints them under `label`.
fn measure(label: &str, table: MemoryTable, device: Bdf, spec: &'static Boxes) {
    let t = Counted {
        table,
        reads: AtomicUsize::new(0),
    };
    let (mut located, mut read, mut joined) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..200 {
        let start = Instant::now();
        let at = locate(&t.table, device).unwrap()[0].address;
        located.push(start.elapsed());
        t.reads.store(0, Ordering::Relaxed);
        let start = Instant::now();
        let table = read_table(&t, at).unwrap();
        read.push(start.elapsed());
        let start = Instant::now();
        let j = join(spec, &table);
        joined.push(start.elapsed());
        last = Some((table.boxes.len(), j));
    }
    let (listed, j) = last.unwrap();
    let matching = j
        .boxes
        .iter()
        .filter(|b| b.status == BoxStatus::Matching)
        .count();
    println!("{label}: {listed} boxes, {} bytes", t.table.bytes.len());
    println!("  locate (capability list, BAR): {:?}", median(located));
    println!(
        "  read_table: {:?} ({} reads of 8 bytes)",
        median(read),
        t.reads.load(Ordering::Relaxed)
    );
    println!(
        "  join with the {} spec ({} boxes; {matching} of {} joined boxes matching): {:?}",
        spec.processor.id,
        spec.boxes.len(),
        j.boxes.len(),
        median(joined)
    );
}

/// Medians of 200 runs of reading every domain's tables of `processor` from its simulator
/// (locating each table included) and of joining them; prints them under the processor's id.
fn measure_domains(processor: &'static pmu_regs::ProcessorInfo) {
    let sim = SimDomains::of(processor).unwrap();
    let devices = sim.devices();
    let (mut read, mut joined) = (Vec::new(), Vec::new());
    let mut last = Vec::new();
    for _ in 0..200 {
        let start = Instant::now();
        let tables = read_domains(processor, &sim, &devices, |_| vec![0]);
        read.push(start.elapsed());
        let start = Instant::now();
        last = join_domains(processor, tables);
        joined.push(start.elapsed());
    }
    println!("{}: {} domain tables", processor.id, last.len());
    for d in &last {
        let j = d.joined.as_ref().unwrap();
        let trusted = j.boxes.iter().filter(|b| b.status.is_trusted()).count();
        let id = d.domain.id;
        println!(
            "  {id} {}: {trusted} of {} boxes matching or ignored",
            d.index,
            j.boxes.len()
        );
    }
    println!(
        "  read_domains (locate and read every table): {:?}",
        median(read)
    );
    println!("  join_domains: {:?}", median(joined));
}

fn main() {
    let device = DISCOVERY_DEVICE;
    // The largest real part: Granite Rapids' table as its simulator publishes it (every box
    // of every unit with a discovery type, from the spec, the memory-mapped ones at the
    // addresses its windows give), joined with its own spec: every box compared.
    let gnr = Boxes::of(&pmu_regs::granite_rapids::PROCESSOR);
    let table = Sim::new(SimConfig::of(&pmu_regs::granite_rapids::PROCESSOR))
        .discovery_table()
        .unwrap();
    measure("granite-rapids", table, device, gnr);
    // The largest table the reader accepts (MAX_ENTRIES: the format allows 1,023, more than
    // 512 is a corrupt global state), against a spec without discovery types (every box
    // unknown).
    let boxes: Vec<TableBox> = (0..MAX_ENTRIES)
        .map(|k| TableBox {
            box_type: k % 16,
            box_id: k / 16,
            access: AccessKind::Msr,
            box_control: 0x2000 + 0x10 * u64::from(k),
            ctl_offset: 2,
            ctr_offset: 8,
            counters: 4,
            width: 48,
        })
        .collect();
    let table = MemoryTable::build(0xFE00_0000, device, 0x2FF0, &boxes);
    let spec = Boxes::of(&pmu_regs::xeon_e5_2600_v4::PROCESSOR);
    measure("the reader's largest", table, device, spec);
    // Diamond Rapids: two domains, one found through PCI, one through an MSR (issue 43).
    measure_domains(&pmu_regs::diamond_rapids::PROCESSOR);
}
