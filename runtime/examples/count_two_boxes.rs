//! Counts two events on two boxes of a simulated Xeon 7500 for three intervals of 10 ms and
//! prints each interval as `pmu watch -x,` does:
//!
//! ```text
//! pmu watch --sim --unit xeon-7500:C3 --unit xeon-7500:C4 --event ev_sel=0x01 \
//!     --event ev_sel=0x02,umask=0x04 --count 3 --interval 0.01 -x,
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example count_two_boxes`; CI compares its output
//! with that command's.

use std::time::Duration;

use pmu_runtime::boxes::Boxes;
use pmu_runtime::machine::Machine;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::{Options, Selection, Session, SessionBackend};

fn main() -> Result<(), pmu_runtime::Error> {
    let processor = &pmu_regs::xeon_7500::PROCESSOR;
    let boxes = Boxes::of(processor);
    let c3_c4 = [
        (boxes, boxes.find("C3").unwrap()),
        (boxes, boxes.find("C4").unwrap()),
    ];
    let events = [
        EventSelect::event(0x01),
        EventSelect {
            umask: Some(0x04),
            ..EventSelect::event(0x02)
        },
    ];
    let selection =
        Selection::of_boxes(&c3_c4, &["ev_sel=0x01", "ev_sel=0x02,umask=0x04"], &events)?;

    let machine = Machine::simulating(processor);
    let backend = SessionBackend::Registers(&machine);
    let period = Duration::from_millis(10);
    let options = Options {
        clock: backend.clock(period),
        ..Options::default()
    };
    let mut session = Session::open(&backend, &selection, options)?;
    let series = session.series().to_vec();
    println!("time,socket,counter,event,count,rate");
    for _ in 0..3 {
        std::thread::sleep(period);
        let interval = session.interval()?;
        for (s, c) in series.iter().zip(&interval.counts) {
            let rate = c.delta as f64 / interval.seconds;
            // CSV: a field with the separator in it is quoted.
            let event = if s.event.contains(',') {
                format!("\"{}\"", s.event)
            } else {
                s.event.clone()
            };
            println!(
                "{:.3},{},{},{event},{},{rate:.1}",
                interval.time, s.socket, s.counter, c.delta
            );
        }
    }
    session.close() // every register as it was
}
