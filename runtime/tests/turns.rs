//! Counting in turns (multiplexing) through the library's session on the simulator: a box
//! given more events than it has general counters counts them in turns, each count scaled by
//! the time enabled over the time running and reported with its running fraction; every
//! rotation writes only valid control values, and closing puts every register back.

use std::time::Duration;

use pmu_runtime::boxes::Boxes;
use pmu_runtime::fault::{Fault, When};
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::turns::{turn_count, turn_events};
use pmu_runtime::session::{Clock, Options, Pace, Selection, Session, SessionBackend};
use proptest::prelude::*;

const E5: &pmu_regs::ProcessorInfo = &pmu_regs::xeon_e5_2600::PROCESSOR;
/// The iMC channel's registers a session touches.
const CH2: [&str; 9] = [
    "MC_CH2_PCI_PMON_BOX_CTL",
    "MC_CH2_PCI_PMON_CTL0",
    "MC_CH2_PCI_PMON_CTL1",
    "MC_CH2_PCI_PMON_CTL2",
    "MC_CH2_PCI_PMON_CTL3",
    "MC_CH2_PCI_PMON_CTR0",
    "MC_CH2_PCI_PMON_CTR1",
    "MC_CH2_PCI_PMON_CTR2",
    "MC_CH2_PCI_PMON_CTR3",
];

fn at_socket_0() -> Where {
    Where {
        socket: Some(0),
        ..Where::default()
    }
}

fn peek(machine: &Machine, name: &str) -> u64 {
    let reg = machine
        .resolve(&format!("xeon-e5-2600:{name}"), &at_socket_0())
        .unwrap();
    machine.read(&reg).unwrap()
}

fn poke(machine: &Machine, name: &str, value: u64) {
    let reg = machine
        .resolve(&format!("xeon-e5-2600:{name}"), &at_socket_0())
        .unwrap();
    machine.write(&reg, value).unwrap();
}

/// `n` different events (event selects 0x01, 0x02, ...) on iMC channel 2 of socket 0, which
/// has four general counters.
fn events_on_ch2(n: usize) -> Selection {
    let boxes = Boxes::of(E5);
    let sels: Vec<EventSelect> = (1..=n as u16).map(EventSelect::event).collect();
    let names: Vec<String> = (1..=n).map(|i| format!("ev_sel={i:#04x}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    Selection::of_boxes(&[(boxes, boxes.find("CH2").unwrap())], &names, &sels).unwrap()
}

/// Event i at (i + 1) million per second, read every `interval_ms`, turns of `turn_ms`.
fn options(interval_ms: u64, turn_ms: u64) -> Options {
    Options {
        clock: Clock::Steps(Duration::from_millis(interval_ms)),
        pace: Pace::Ladder(1_000_000),
        turn: Duration::from_millis(turn_ms),
        ..Options::default()
    }
}

#[test]
fn six_events_on_four_counters_are_counted_in_turns_and_scaled_exactly() {
    let machine = Machine::simulating(E5);
    let backend = SessionBackend::Registers(&machine);
    let selection = events_on_ch2(6);
    let mut session = Session::open(&backend, &selection, options(100, 10)).unwrap();
    assert!(session.in_turns());
    assert_eq!(session.turn_length(), Some(Duration::from_millis(10)));
    let series = session.series().to_vec();
    assert_eq!(series.len(), 6, "one series per event");
    assert!(series.iter().all(|s| s.width == 64));
    // Six events over four counters take three turns: {0,1,2,3}, {4,5,0,1}, {2,3,4,5}. Ten
    // turns of 10 ms in an interval of 100 ms: turns 0,1,2,0,1,2,0,1,2,0 (then 1,2,0,...).
    for _ in 0..3 {
        let interval = session.interval().unwrap();
        for (s, c) in series.iter().zip(&interval.counts) {
            let i = s.event_index as u64;
            // (i + 1) million per second over 0.1 s, whatever share of it the event ran.
            assert_eq!(c.delta, (i + 1) * 100_000, "{s:?} {c:?}");
            let times = c.times.unwrap();
            assert_eq!(times.enabled, Duration::from_millis(100));
            let ratio = c.running_ratio.unwrap();
            assert!(ratio > 0.5 && ratio < 0.8, "{ratio}");
            assert_eq!(ratio, times.running.as_secs_f64() / 0.1);
        }
        // Four counters ran the whole interval between them.
        let running: Duration = interval
            .counts
            .iter()
            .map(|c| c.times.unwrap().running)
            .sum();
        assert_eq!(running, Duration::from_millis(400));
    }
    let first = session.interval().unwrap();
    let shares: Vec<f64> = first
        .counts
        .iter()
        .map(|c| (c.running_ratio.unwrap() * 10.0).round() / 10.0)
        .collect();
    // The fourth interval starts with turn 0 again (30 turns so far): 0,1,2,0,1,2,0,1,2,0.
    assert_eq!(shares, [0.7, 0.7, 0.7, 0.7, 0.6, 0.6]);
    session.close().unwrap();
}

#[test]
fn every_rotation_writes_valid_controls_and_close_puts_everything_back() {
    let machine = Machine::simulating(E5);
    // Counters with values of their own: closing must restore them too.
    for (n, name) in CH2[5..].iter().enumerate() {
        poke(&machine, name, 0x1000 + n as u64);
    }
    let before: Vec<u64> = CH2.iter().map(|r| peek(&machine, r)).collect();
    let backend = SessionBackend::Registers(&machine);
    let selection = events_on_ch2(5);
    let mut session = Session::open(&backend, &selection, options(7, 3)).unwrap();
    for _ in 0..12 {
        session.interval().unwrap();
        // Each control holds one of the five events, enabled, and no two the same event.
        let mut seen: Vec<u64> = CH2[1..5].iter().map(|r| peek(&machine, r) & 0xff).collect();
        assert!(seen.iter().all(|e| (1..=5).contains(e)), "{seen:?}");
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 4);
    }
    session.close().unwrap();
    let after: Vec<u64> = CH2.iter().map(|r| peek(&machine, r)).collect();
    assert_eq!(after, before, "every register put back");
}

#[test]
fn dropping_a_session_in_turns_puts_everything_back() {
    let machine = Machine::simulating(E5);
    let before: Vec<u64> = CH2.iter().map(|r| peek(&machine, r)).collect();
    let backend = SessionBackend::Registers(&machine);
    {
        let mut session = Session::open(&backend, &events_on_ch2(9), options(50, 5)).unwrap();
        session.interval().unwrap();
        session.interval().unwrap();
        assert_ne!(CH2.map(|r| peek(&machine, r)).to_vec(), before);
    }
    assert_eq!(CH2.map(|r| peek(&machine, r)).to_vec(), before);
}

#[test]
fn a_turn_that_fails_to_write_is_an_error_and_everything_is_still_put_back() {
    // Fail the n-th write, for each n until one falls in a turn after the session opened.
    let mut failed_in_a_turn = false;
    for n in 1..200 {
        let machine = Machine::simulating(E5).with_fault(When::Write(n), Fault::Eio);
        let before: Vec<u64> = CH2.iter().map(|r| peek(&machine, r)).collect();
        let backend = SessionBackend::Registers(&machine);
        let Ok(mut session) = Session::open(&backend, &events_on_ch2(6), options(100, 10)) else {
            assert_eq!(CH2.map(|r| peek(&machine, r)).to_vec(), before);
            continue;
        };
        let result = (0..3).try_for_each(|_| session.interval().map(drop));
        drop(session);
        assert_eq!(CH2.map(|r| peek(&machine, r)).to_vec(), before, "write {n}");
        if result.is_err() {
            failed_in_a_turn = true;
            break;
        }
    }
    assert!(failed_in_a_turn);
}

#[test]
fn a_turn_per_reading_on_the_wall_clock_still_gives_every_event_its_time() {
    let machine = Machine::simulating(E5);
    let backend = SessionBackend::Registers(&machine);
    let options = Options {
        clock: Clock::Wall,
        pace: Pace::Ladder(1_000_000),
        turn: Duration::ZERO,
        ..Options::default()
    };
    let mut session = Session::open(&backend, &events_on_ch2(8), options).unwrap();
    session.start().unwrap();
    // Two turns of four: each reading ends one, so over two intervals each event ran once.
    let a = session.interval().unwrap();
    let b = session.interval().unwrap();
    for (x, y) in a.counts.iter().zip(&b.counts) {
        let (rx, ry) = (x.running_ratio.unwrap(), y.running_ratio.unwrap());
        assert!(
            (rx == 1.0 && ry == 0.0) || (rx == 0.0 && ry == 1.0),
            "{rx} {ry}"
        );
    }
    session.close().unwrap();
}

#[test]
fn a_box_with_enough_counters_does_not_count_in_turns() {
    let machine = Machine::simulating(E5);
    let backend = SessionBackend::Registers(&machine);
    let mut session = Session::open(&backend, &events_on_ch2(4), options(100, 10)).unwrap();
    assert!(!session.in_turns());
    assert_eq!(session.turn_length(), None);
    let interval = session.interval().unwrap();
    for (s, c) in session.series().iter().zip(&interval.counts) {
        assert_eq!(c.delta, (s.event_index as u64 + 1) * 100_000);
        assert_eq!((c.running_ratio, c.times), (None, None));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The scheduler: over its turns every event is on a counter equally often, never twice
    /// in one turn, and every counter is used in every turn.
    #[test]
    fn every_event_gets_an_equal_share_of_turns(n in 1usize..40, k in 1usize..9) {
        let turns = turn_count(n, k);
        let mut on = vec![0usize; n];
        for t in 0..turns {
            let events: Vec<usize> = turn_events(t, n, k).map(|(_, e)| e).collect();
            prop_assert_eq!(events.len(), k.min(n));
            let mut distinct = events.clone();
            distinct.sort_unstable();
            distinct.dedup();
            prop_assert_eq!(distinct.len(), events.len());
            for (slot, e) in turn_events(t, n, k) {
                prop_assert!(slot < k && e < n);
                on[e] += 1;
            }
        }
        prop_assert!(on.iter().all(|&c| c == on[0] && c > 0), "{:?}", on);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Through the session: any number of events, any turn length; an interval long enough for
    /// every turn gives every event a share of the time and exactly its rate scaled up.
    #[test]
    fn every_event_gets_a_turn_and_its_exact_scaled_count(n in 1usize..12, turn_ms in 1u64..20) {
        let machine = Machine::simulating(E5);
        let backend = SessionBackend::Registers(&machine);
        let interval_ms = turn_ms * turn_count(n, 4) as u64;
        let mut session =
            Session::open(&backend, &events_on_ch2(n), options(interval_ms, turn_ms)).unwrap();
        for _ in 0..2 {
            let interval = session.interval().unwrap();
            let mut running = Duration::ZERO;
            for (s, c) in session.series().iter().zip(&interval.counts) {
                let i = s.event_index as u64;
                prop_assert_eq!(c.delta, (i + 1) * 1000 * interval_ms);
                if n > 4 {
                    let t = c.times.unwrap();
                    prop_assert!(t.running > Duration::ZERO);
                    running += t.running;
                }
            }
            if n > 4 {
                prop_assert_eq!(running, Duration::from_millis(4 * interval_ms));
            }
        }
        session.close().unwrap();
    }
}
