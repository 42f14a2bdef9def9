//! Runs one step of Diamond Rapids' discovery on its simulator N times, for
//! `bench/discovery_instructions.sh`, which counts the instructions of N = 1 and N = 101 under
//! valgrind and prints their difference over 100: the step's instructions per call, with the
//! program's start-up taken out, a figure the machine's load does not change.
//!
//! Steps: `publish` (the simulator builds both domains' tables, `SimDomains::of`), `read`
//! (`discovery::read_domains`: locate and read both tables from a published simulator) and
//! `joined` (`part::joined_domains`, what `pmu discover --sim` calls: publish, read and join).
//!
//! `cargo run --release -p pmu-runtime --example domains_instructions -- joined 101`

use std::hint::black_box;

use pmu_runtime::discovery::read_domains;
use pmu_runtime::machine::Machine;
use pmu_runtime::part::joined_domains;
use pmu_runtime::sim::domains::SimDomains;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (step, n) = match args.as_slice() {
        [s, n] => match n.parse::<u32>() {
            Ok(n) => (s.as_str(), n),
            Err(_) => usage(),
        },
        _ => usage(),
    };
    let dmr = &pmu_regs::diamond_rapids::PROCESSOR;
    let machine = Machine::simulating(dmr);
    let sim = SimDomains::of(dmr).expect("Diamond Rapids' simulator publishes its domains");
    let devices = sim.devices();
    let mut boxes = 0;
    for _ in 0..n {
        boxes = match step {
            "publish" => black_box(SimDomains::of(dmr)).map_or(0, |s| s.devices().len()),
            "read" => read_domains(dmr, &sim, &devices, |_| vec![0])
                .iter()
                .filter_map(|t| t.table.as_ref().ok())
                .map(|t| t.boxes.len())
                .sum(),
            "joined" => joined_domains(dmr, black_box(&machine))
                .iter()
                .filter_map(|d| d.joined.as_ref().ok())
                .map(|j| j.boxes.len())
                .sum(),
            _ => usage(),
        };
    }
    println!("{step} x {n}: {boxes}");
}

fn usage() -> ! {
    eprintln!("usage: domains_instructions publish|read|joined N");
    std::process::exit(2)
}
