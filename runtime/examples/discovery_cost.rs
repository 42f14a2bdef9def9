//! What reading and joining a discovery table costs: the largest table the format allows at
//! Sapphire Rapids' entry stride (1,023 boxes, 32 bytes apart: 32 KiB), located through its
//! device's capability, read through `MmioAccess` from memory, and joined with a spec.
//! Prints the median of 200 runs of each step, and the backend reads the read makes.
//!
//! `cargo run --release -p pmu-runtime --example discovery_cost`

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pmu_runtime::access::{MmioAccess, Result};
use pmu_runtime::boxes::Boxes;
use pmu_runtime::discovery::{join, locate, read_table, AccessKind, MemoryTable, TableBox};
use pmu_runtime::Bdf;

/// The table in memory, with every read counted.
struct Counted {
    table: MemoryTable,
    reads: AtomicUsize,
}

impl MmioAccess for Counted {
    fn read_mmio(&self, address: u64, width: u32) -> Result<u64> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.table.read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> Result<()> {
        self.table.write_mmio(address, width, value)
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let device = Bdf::new(0x7e, 0, 1);
    let boxes: Vec<TableBox> = (0..1023u16)
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
    let t = Counted {
        table: MemoryTable::build(0xFE00_0000, device, 0x2FF0, &boxes),
        reads: AtomicUsize::new(0),
    };
    let spec = Boxes::of(&pmu_regs::xeon_e5_2600_v4::PROCESSOR);
    let (mut located, mut read, mut joined) = (Vec::new(), Vec::new(), Vec::new());
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
        assert_eq!(j.boxes.len(), 1023);
    }
    println!("table: 1023 boxes, {} bytes", t.table.bytes.len());
    println!("locate (capability list, BAR): {:?}", median(located));
    println!(
        "read_table: {:?} ({} reads of 8 bytes)",
        median(read),
        t.reads.load(Ordering::Relaxed)
    );
    println!(
        "join with the E5-2600 v4 spec ({} boxes): {:?}",
        spec.boxes.len(),
        median(joined)
    );
}
