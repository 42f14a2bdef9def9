//! What the simulator costs per simulated second: a session programs every general counter
//! of every box of the processor with the most counters, on both sockets; then the
//! simulator alone is advanced one simulated second at a time, under the old per-event
//! streams (a stream of events into each counted box counter, as `Pace::Steady` ran them:
//! "before") and under the default named workload (every counter of the machine counting
//! what its control selects: "after"). Prints the median time of one advance
//! (single-threaded and CPU-bound, so wall time is CPU time), and the session's whole
//! interval (the simulator plus reading every counter) for comparison; BENCHMARKS.md
//! records the figures.
//!
//! `cargo run --release -p pmu-runtime --example sim_cost`

use std::time::{Duration, Instant};

use pmu_regs::{CounterKind, ProcessorInfo, PROCESSORS};
use pmu_runtime::boxes::{Boxes, EventSelect};
use pmu_runtime::machine::Machine;
use pmu_runtime::session::{
    BoxEvents, Counted, Options, Pace, Selection, Session, SessionBackend, Sockets,
};

const INTERVALS: usize = 200;

/// The general counters with a control of `p`'s boxes.
fn general_counters(p: &'static ProcessorInfo) -> usize {
    Boxes::of(p)
        .boxes
        .iter()
        .flat_map(|b| b.counters.iter())
        .filter(|c| c.info.kind == CounterKind::General && c.control.is_some())
        .count()
}

/// Every general counter of every box of `p` counting event 0x01.
fn everything(p: &'static ProcessorInfo) -> Selection {
    let boxes = Boxes::of(p);
    let mut selected = Vec::new();
    for b in &boxes.boxes {
        let n = b
            .counters
            .iter()
            .filter(|c| c.info.kind == CounterKind::General && c.control.is_some())
            .count();
        if n > 0 {
            selected.push(BoxEvents {
                boxes,
                pmu_box: b,
                events: vec![EventSelect::event(0x01); n],
            });
        }
    }
    let most = selected.iter().map(|b| b.events.len()).max().unwrap_or(0);
    Selection {
        counted: Counted::Boxes(selected),
        events: (0..most).map(|i| format!("counter {i}")).collect(),
        sockets: Sockets::All,
        cpu: None,
        every_cpu: false,
    }
}

/// The median time of one interval of one simulated second under `pace`.
fn median_interval(p: &'static ProcessorInfo, pace: Pace) -> Result<Duration, pmu_runtime::Error> {
    let machine = Machine::simulating(p);
    let backend = SessionBackend::Registers(&machine);
    let options = Options {
        clock: backend.clock(Duration::from_secs(1)),
        pace,
        ..Options::default()
    };
    let mut session = Session::open(&backend, &everything(p), options)?;
    let mut times = Vec::with_capacity(INTERVALS);
    for _ in 0..INTERVALS {
        let start = Instant::now();
        session.interval()?;
        times.push(start.elapsed());
    }
    session.close()?;
    times.sort();
    Ok(times[times.len() / 2])
}

/// The median time the simulator takes to advance one simulated second, every box of `p`
/// programmed by a session: under per-event streams (`named` false) or the default named
/// workload.
fn median_advance(p: &'static ProcessorInfo, named: bool) -> Result<Duration, pmu_runtime::Error> {
    use pmu_runtime::sim::{Rate, Stream, StreamTarget};
    let machine = Machine::simulating(p);
    let backend = SessionBackend::Registers(&machine);
    let options = Options {
        clock: backend.clock(Duration::from_secs(1)),
        pace: Pace::Steady(0),
        ..Options::default()
    };
    let session = Session::open(&backend, &everything(p), options)?;
    let sim = machine.sim().expect("a simulated machine");
    let ids = if named {
        vec![sim.run_named(pmu_runtime::sim::default_workload())]
    } else {
        let mut ids = Vec::new();
        for socket in 0..sim.config().sockets as usize {
            for b in &Boxes::of(p).boxes {
                let general = b
                    .counters
                    .iter()
                    .filter(|c| c.info.kind == CounterKind::General);
                if b.scope() != pmu_regs::Scope::Socket {
                    continue;
                }
                for _ in general {
                    ids.push(sim.start_stream(Stream {
                        target: StreamTarget::Uncore {
                            socket,
                            instance: b.instance,
                        },
                        ev_sel: 0x01,
                        umask: None,
                        rate: Rate::steady(1_000_000),
                        masks: None,
                        aux: None,
                    }));
                }
            }
        }
        ids
    };
    let mut times = Vec::with_capacity(INTERVALS);
    for s in 1..=INTERVALS as u64 {
        let start = Instant::now();
        sim.advance(&ids, Duration::from_secs(s))?;
        times.push(start.elapsed());
    }
    session.close()?;
    times.sort();
    Ok(times[times.len() / 2])
}

fn main() -> Result<(), pmu_runtime::Error> {
    let largest = PROCESSORS
        .iter()
        .copied()
        .max_by_key(|p| general_counters(p))
        .expect("processors");
    let before = median_advance(largest, false)?;
    let after = median_advance(largest, true)?;
    let whole = median_interval(largest, Pace::default())?;
    println!(
        "{}: {} general counters per socket, 2 sockets; the simulator per simulated second: streams {:.1} us, named workload {:.1} us (x{:.2}; target <= 1000 us); a session's whole interval (simulator and every read) {:.1} us",
        largest.id,
        general_counters(largest),
        before.as_secs_f64() * 1e6,
        after.as_secs_f64() * 1e6,
        after.as_secs_f64() / before.as_secs_f64(),
        whole.as_secs_f64() * 1e6,
    );
    Ok(())
}
