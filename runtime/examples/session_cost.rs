//! What a counting session costs per interval: a session on every box of the largest
//! processor (the Xeon E5-2600 v4: every general counter of every box counting), on the
//! simulator, read for many intervals. Prints the register reads per interval against the
//! fewest the structure allows (one MSR read per MSR counter, two dword reads per 64-bit PCI
//! counter), and the session's own time per interval (single-threaded and CPU-bound, so
//! wall time is CPU time): an interval's median time, with and without the simulated
//! workload running, against reading the same registers directly.
//!
//! `cargo run --release -p pmu-runtime --example session_cost`

use std::time::{Duration, Instant};

use pmu_regs::{CounterKind, Location};
use pmu_runtime::boxes::{Boxes, EventSelect};
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::session::{
    BoxEvents, Clock, Counted, Options, Pace, Selection, Session, SessionBackend, Sockets,
};

const INTERVALS: u32 = 2000;

fn main() -> Result<(), pmu_runtime::Error> {
    let processor = &pmu_regs::xeon_e5_2600_v4::PROCESSOR;
    let boxes = Boxes::of(processor);
    let mut selected = Vec::new();
    let mut minimum = 0;
    for b in &boxes.boxes {
        let general: Vec<_> = b
            .counters
            .iter()
            .filter(|c| c.info.kind == CounterKind::General && c.control.is_some())
            .collect();
        if general.is_empty() {
            continue;
        }
        for c in &general {
            minimum += match c.counter.addr.location {
                Location::Msr(_) | Location::Mmio { .. } | Location::SysReg(_) => 1,
                Location::Pci { .. } | Location::Table(_) => {
                    c.counter.info.width.div_ceil(32) as usize
                }
            };
        }
        selected.push(BoxEvents {
            boxes,
            pmu_box: b,
            events: vec![EventSelect::event(0x01); general.len()],
        });
    }
    let most = selected.iter().map(|b| b.events.len()).max().unwrap_or(0);
    let selection = Selection {
        counted: Counted::Boxes(selected),
        events: (0..most).map(|i| format!("counter {i}")).collect(),
        sockets: Sockets::One(0),
        cpu: None,
        every_cpu: false,
    };
    let boxes_counted = selection.boxes().len();
    let (counters, reads, busy, direct) = measure(&selection, Pace::Steady(1_000_000))?;
    let (_, _, idle, _) = measure(&selection, Pace::Steady(0))?;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "processor {}: {boxes_counted} boxes, {counters} counters, {INTERVALS} intervals",
        processor.id
    );
    println!(
        "register reads per interval: {reads:.1} (fewest the structure allows: {minimum}; ratio {:.2})",
        reads / minimum as f64
    );
    println!(
        "session time per interval: {:.1} us with the simulated workload running, {:.1} us without",
        us(busy),
        us(idle)
    );
    println!(
        "the same registers read directly: {:.1} us; the session's own share: {:.1} us ({:.2} us per counter)",
        us(direct),
        us(idle) - us(direct),
        (us(idle) - us(direct)) / counters as f64
    );
    Ok(())
}

/// Opens `selection` on a fresh simulator and reads it `INTERVALS` times: the counters, the
/// register reads per interval, the median time of an interval, and the median time of
/// reading the same counter registers directly once each.
fn measure(
    selection: &Selection,
    pace: Pace,
) -> Result<(usize, f64, Duration, Duration), pmu_runtime::Error> {
    let processor = selection.processor();
    let machine = Machine::simulating(processor);
    let backend = SessionBackend::Registers(&machine);
    let options = Options {
        clock: Clock::Steps(Duration::from_secs(1)),
        pace,
        ..Options::default()
    };
    let mut session = Session::open(&backend, selection, options)?;
    session.start()?;
    let at = Where {
        socket: Some(0),
        ..Where::default()
    };
    let registers = session
        .series()
        .iter()
        .map(|s| machine.resolve(&format!("{}:{}", processor.id, s.counter), &at))
        .collect::<Result<Vec<_>, _>>()?;
    // Interleaved, so both see the same load on a shared machine; medians, so a preemption
    // does not count.
    let (mut reads, mut intervals, mut directs) = (0, Vec::new(), Vec::new());
    for _ in 0..INTERVALS {
        let (before, _) = machine.access_counts();
        let started = Instant::now();
        session.interval()?;
        intervals.push(started.elapsed());
        reads += machine.access_counts().0 - before;
        let started = Instant::now();
        for r in &registers {
            std::hint::black_box(machine.read(r)?);
        }
        directs.push(started.elapsed());
    }
    let per_interval = reads as f64 / f64::from(INTERVALS);
    let counters = session.series().len();
    session.close()?;
    Ok((counters, per_interval, median(intervals), median(directs)))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}
