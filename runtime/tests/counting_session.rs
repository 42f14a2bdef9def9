//! The library's counting session (`pmu_runtime::session`) on the simulator: every box on
//! every socket programmed, counted per interval with wrap-correct totals, and put back on
//! close, on drop and on a failure part way; the simulator's workload runs on the session's
//! clock, so a rate per second does not depend on how often the counters are read.

use std::time::Duration;

use assert_cmd::Command;
use pmu_regs::PROCESSORS;
use pmu_runtime::boxes::Boxes;
use pmu_runtime::fault::{Fault, When};
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::{
    BackendKind, Clock, Options, Pace, Selection, SeriesInfo, Session, SessionBackend, Sockets,
};
use serde_json::Value;

const E5: &pmu_regs::ProcessorInfo = &pmu_regs::xeon_e5_2600::PROCESSOR;
const NHM: &pmu_regs::ProcessorInfo = &pmu_regs::xeon_7500::PROCESSOR;

/// A register's value on the simulator (socket 0).
fn peek(machine: &Machine, name: &str) -> u64 {
    let at = Where {
        socket: Some(0),
        ..Where::default()
    };
    machine.read(&machine.resolve(name, &at).unwrap()).unwrap()
}

fn one_box(processor: &'static pmu_regs::ProcessorInfo, unit: &str, n: usize) -> Selection {
    let boxes = Boxes::of(processor);
    let sels = [
        EventSelect::event(0x01),
        EventSelect {
            umask: Some(0x0c),
            ..EventSelect::event(0x04)
        },
    ];
    let names = ["ev_sel=0x01", "ev_sel=0x04,umask=0x0c"];
    Selection::of_boxes(
        &[(boxes, boxes.find(unit).unwrap())],
        &names[..n],
        &sels[..n],
    )
    .unwrap()
}

fn stepped(ms: u64, pace: Pace) -> Options {
    Options {
        clock: Clock::Steps(Duration::from_millis(ms)),
        pace,
        ..Options::default()
    }
}

#[test]
fn every_box_on_every_socket_counts_its_workload_and_is_put_back() {
    let selection = one_box(E5, "CH2", 2).on(Sockets::All);
    let machine = Machine::simulating(E5);
    let before = peek(&machine, "xeon-e5-2600:MC_CH2_PCI_PMON_CTL0");
    let backend = SessionBackend::Registers(&machine);
    let mut session = Session::open(&backend, &selection, stepped(10, Pace::Demo)).unwrap();
    let series = session.series().to_vec();
    let sockets = machine.topology().unwrap().sockets().count();
    assert_eq!(series.len(), 2 * sockets);
    assert_eq!(
        series[1],
        SeriesInfo {
            processor: "xeon-e5-2600",
            socket: 0,
            unit: "IMC".into(),
            instance: "CH2".into(),
            counter: "MC_CH2_PCI_PMON_CTR1".into(),
            event: "ev_sel=0x04,umask=0x0c".into(),
            event_index: 1,
            backend: BackendKind::Simulator,
            width: 48,
            perf: None,
            cpu: None,
        }
    );
    assert_ne!(peek(&machine, "xeon-e5-2600:MC_CH2_PCI_PMON_CTL0"), before);
    // The demo pace: 1000 x (event + 1) + 37 x n in the n-th step of 10 ms; totals add up.
    let mut totals = vec![0; series.len()];
    for n in 1..=3u64 {
        let interval = session.interval().unwrap();
        assert_eq!(interval.seconds, 0.01);
        for ((s, c), total) in series.iter().zip(&interval.counts).zip(&mut totals) {
            assert_eq!(c.delta, 1000 * (s.event_index as u64 + 1) + 37 * n, "{s:?}");
            *total += c.delta;
            assert_eq!(c.total, *total);
            assert_eq!((c.running_ratio, c.times), (None, None));
        }
    }
    session.close().unwrap();
    assert_eq!(
        peek(&machine, "xeon-e5-2600:MC_CH2_PCI_PMON_CTL0"),
        before,
        "put back"
    );
}

#[test]
fn dropping_the_session_puts_the_registers_back_and_a_failed_read_is_none() {
    let selection = one_box(NHM, "C3", 1);
    let machine = Machine::simulating(NHM);
    let before = peek(&machine, "C3_MSR_PMON_EVT_SEL0");
    let backend = SessionBackend::Registers(&machine);
    {
        let mut session = Session::open(&backend, &selection, Options::default()).unwrap();
        assert_ne!(peek(&machine, "C3_MSR_PMON_EVT_SEL0"), before);
        assert!(session.read()[0].is_some());
    }
    assert_eq!(
        peek(&machine, "C3_MSR_PMON_EVT_SEL0"),
        before,
        "put back on drop"
    );
    // A box whose read fails reads as None, not as an error for the whole session: fail
    // each read in turn until the first one after programming.
    let failed_read = (1..100).any(|n| {
        let faulty = Machine::simulating(NHM).with_fault(When::Read(n), Fault::Eio);
        let backend = SessionBackend::Registers(&faulty);
        let Ok(mut session) = Session::open(&backend, &selection, Options::default()) else {
            return false;
        };
        let first = session.read();
        first == vec![None] && session.read()[0].is_some()
    });
    assert!(failed_read);
}

#[test]
fn a_box_that_fails_part_way_leaves_every_box_as_it_was() {
    // Two boxes; every write in turn fails: whatever was programmed before is put back.
    let boxes = Boxes::of(NHM);
    let selection = Selection::of_boxes(
        &[
            (boxes, boxes.find("C3").unwrap()),
            (boxes, boxes.find("S0").unwrap()),
        ],
        &["ev_sel=0x01"],
        &[EventSelect::event(0x01)],
    )
    .unwrap();
    let names = [
        "C3_MSR_PMON_EVT_SEL0",
        "S0_MSR_PMON_EVT_SEL0",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
    ];
    let mut refused = 0;
    for n in 1..40 {
        let machine = Machine::simulating(NHM).with_fault(When::Write(n), Fault::Eio);
        let before: Vec<u64> = names.iter().map(|r| peek(&machine, r)).collect();
        let backend = SessionBackend::Registers(&machine);
        match Session::open(&backend, &selection, Options::default()) {
            // A failure while putting back is reported (and leaves what it could not write).
            Ok(session) => {
                if session.close().is_err() {
                    continue;
                }
            }
            Err(_) => refused += 1,
        }
        let after: Vec<u64> = names.iter().map(|r| peek(&machine, r)).collect();
        assert_eq!(after, before, "write {n} failed");
    }
    assert!(refused > 3, "{refused}");
}

#[test]
fn a_simulated_rate_does_not_depend_on_the_interval() {
    // A steady pace: every interval's rate is the pace, at 0.1 s and at 0.5 s.
    for ms in [100, 500] {
        let machine = Machine::simulating(NHM);
        let backend = SessionBackend::Registers(&machine);
        let options = stepped(ms, Pace::Steady(20_000));
        let mut session = Session::open(&backend, &one_box(NHM, "C3", 2), options).unwrap();
        for _ in 0..3 {
            let interval = session.interval().unwrap();
            for c in &interval.counts {
                assert_eq!(c.delta as f64 / interval.seconds, 20_000.0, "{ms} ms");
            }
        }
    }
}

/// `pmu watch --sim` rows: (time, count, rate) of the first counter.
fn watch(interval: &str, count: &str) -> Vec<(f64, u64, f64)> {
    let out = Command::cargo_bin("pmu")
        .unwrap()
        .args(["--json", "watch", "--sim", "--unit", "xeon-7500:C3"])
        .args([
            "--event",
            "ev_sel=0x01",
            "--interval",
            interval,
            "--count",
            count,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let c = &v;
            (
                v["time"].as_f64().unwrap(),
                c["count"].as_u64().unwrap(),
                c["rate"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn watch_sim_reports_the_same_rate_at_any_interval() {
    // Five intervals of 0.1 s and one of 0.5 s span the same simulated time: the same
    // events, so the same rate over it (the demo pace rises with time, so each 0.1 s row
    // has its own rate, and their mean is the 0.5 s row's).
    let short = watch("0.1", "5");
    let long = watch("0.5", "1");
    assert_eq!(short.len(), 5);
    let events: u64 = short.iter().map(|r| r.1).sum();
    assert_eq!(events, long[0].1);
    let mean = short.iter().map(|r| r.2).sum::<f64>() / 5.0;
    assert!((mean - long[0].2).abs() < 1e-6, "{mean} {}", long[0].2);
    assert!((short[4].0 - long[0].0).abs() < 1e-9);
    // Without the fix the count per report was fixed, so the rate was 5x at 0.1 s.
    assert!(long[0].2 > 100_000.0, "{long:?}");
}

#[test]
fn every_processor_box_can_be_selected_by_name() {
    // find_box: every box of every processor, by its own name with the processor prefix.
    for p in PROCESSORS {
        for b in &Boxes::of(p).boxes {
            let name = format!("{}:{}", p.id, b.instance);
            let (found, pmu_box) = pmu_runtime::session::find_box(&name, None).unwrap();
            assert_eq!(found.processor.id, p.id);
            assert!(std::ptr::eq(pmu_box, b), "{name}");
        }
    }
}

/// A session over the E5-2600's C-box 0 with `sels`, named `e1`, `e2`, ...
fn c_box(sels: &[EventSelect]) -> Selection {
    let boxes = Boxes::of(E5);
    let names: Vec<String> = (1..=sels.len()).map(|i| format!("e{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    Selection::of_boxes(&[(boxes, boxes.find("C0").unwrap())], &names, sels).unwrap()
}

/// An event its list keeps to some counters (the E5-2600 C-box's occupancy event
/// UNC_C_ISMQ_DRD_MISS_OCC, counters 0 and 1) is programmed on one of them, whatever its
/// place among the events. Events that cannot all have one at once take turns in groups that
/// can, and within windows of turns each takes one of its counters too; an event no counter
/// of the box may count is refused before any register is written.
#[test]
fn events_kept_to_some_counters_take_one_of_those_or_are_refused_before_any_write() {
    let anywhere = EventSelect::event(0x00);
    let occupancy = EventSelect {
        counters: Some(0b11),
        ..EventSelect::event(0x21)
    };
    let machine = Machine::simulating(E5);
    let backend = SessionBackend::Registers(&machine);
    let counter = |session: &Session, event: usize| {
        session
            .series()
            .iter()
            .find(|s| s.socket == 0 && s.event_index == event)
            .unwrap()
            .counter
            .clone()
    };
    let controls = |machine: &Machine| -> Vec<u64> {
        (0..4)
            .map(|n| peek(machine, &format!("xeon-e5-2600:C0_MSR_PMON_CTL{n}")))
            .collect()
    };
    let before = controls(&machine);
    // Two events free to go anywhere, then the occupancy event: it takes counter 0 or 1 (an
    // earlier event makes room), each event a counter of its own.
    let sels = [anywhere, anywhere, occupancy];
    let session = Session::open(&backend, &c_box(&sels), Options::default()).unwrap();
    let on: Vec<String> = (0..3).map(|e| counter(&session, e)).collect();
    assert!(
        on[2] == "C0_MSR_PMON_CTR0" || on[2] == "C0_MSR_PMON_CTR1",
        "{on:?}"
    );
    assert!(on[0] != on[1] && on[1] != on[2] && on[0] != on[2], "{on:?}");
    session.close().unwrap();
    // Events free to go anywhere take the counters in order.
    let session = Session::open(&backend, &c_box(&[anywhere; 3]), Options::default()).unwrap();
    let on: Vec<String> = (0..3).map(|e| counter(&session, e)).collect();
    assert_eq!(
        on,
        ["C0_MSR_PMON_CTR0", "C0_MSR_PMON_CTR1", "C0_MSR_PMON_CTR2"]
    );
    session.close().unwrap();
    // Three occupancy events and one other on four counters: the first three fit together
    // (two occupancy events on counters 0 and 1), the third occupancy event takes a turn of
    // its own, which the first occupancy event and the other event join (they fit beside
    // it): those two run the whole time, the second and third occupancy events half of it.
    let sels = [occupancy, anywhere, occupancy, occupancy];
    let mut session = Session::open(&backend, &c_box(&sels), stepped(10, Pace::Demo)).unwrap();
    assert_eq!(counter(&session, 3), "C0_MSR_PMON_CTR0");
    // Each 10 ms interval is one turn: over four, events 0 and 1 ran (and counted) in all
    // four, events 2 and 3 in two.
    let socket0: Vec<usize> = (0..session.series().len())
        .filter(|&i| session.series()[i].socket == 0)
        .collect();
    let mut ran = [0; 4];
    for _ in 0..4 {
        session.rotate().unwrap();
        let interval = session.interval().unwrap();
        for &i in &socket0 {
            let c = &interval.counts[i];
            if c.running_ratio.is_some_and(|r| r > 0.0) {
                assert!(c.delta > 0, "{c:?}");
                ran[session.series()[i].event_index] += 1;
            }
        }
    }
    assert_eq!(ran, [4, 4, 2, 2]);
    session.close().unwrap();
    assert_eq!(controls(&machine), before, "put back after turns");
    // Five events in windows of four: each window puts the occupancy event on counter 0 or 1.
    let sels = [anywhere, anywhere, anywhere, anywhere, occupancy];
    let mut session = Session::open(&backend, &c_box(&sels), stepped(10, Pace::Demo)).unwrap();
    let label = counter(&session, 4);
    assert!(
        label == "C0_MSR_PMON_CTR0" || label == "C0_MSR_PMON_CTR1",
        "{label}"
    );
    for _ in 0..5 {
        session.rotate().unwrap();
        let interval = session.interval().unwrap();
        assert!(interval.counts.iter().all(|c| c.running_ratio.is_some()));
    }
    session.close().unwrap();
    assert_eq!(controls(&machine), before, "put back after turns");
    // An event kept to counter 4, which the C-box lacks: refused, nothing written.
    let nowhere = EventSelect {
        counters: Some(0b1_0000),
        ..EventSelect::event(0x21)
    };
    let err = Session::open(&backend, &c_box(&[anywhere, nowhere]), Options::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("event 2 may count on"), "{err}");
    assert_eq!(controls(&machine), before);
}

/// A box whose clock event (the spec's `<clock-event>`: Skylake-SP's CHA, event 0x00 umask
/// 0x00, Intel's UNC_CHA_CLOCKTICKS) counts nothing while enabled is broken: with the fault
/// profile `broken:CHA1` a session's interval names CHA1 instead of giving its 0, and with the
/// handling off (`clock-event`) the 0 shows through; without the fault both boxes count the
/// pace: 1,000,000 per second over 10 ms is 10,000 (hand computed).
#[test]
fn a_box_whose_clock_event_counts_nothing_is_reported_broken_by_name() {
    use pmu_runtime::check::simulated::session_machine;
    use pmu_runtime::quirks::Quirks;
    const SKX: &pmu_regs::ProcessorInfo = &pmu_regs::skylake_sp::PROCESSOR;
    let boxes = Boxes::of(SKX);
    let chas = [boxes.find("CHA0").unwrap(), boxes.find("CHA1").unwrap()];
    // Intel's skylakex uncore list: UNC_CHA_CLOCKTICKS is EventCode 0x00, UMask 0x00.
    let clockticks = EventSelect {
        umask: Some(0x00),
        ..EventSelect::event(0x00)
    };
    let selection = Selection::of_boxes(
        &[(boxes, chas[0]), (boxes, chas[1])],
        &["UNC_CHA_CLOCKTICKS"],
        &[clockticks],
    )
    .unwrap();
    let run = |fault: Option<&str>, quirks: Quirks| {
        let machine = match fault {
            Some(f) => session_machine(SKX, f).unwrap(),
            None => Machine::simulating(SKX),
        };
        let backend = SessionBackend::Registers(&machine);
        let options = Options {
            quirks,
            ..stepped(10, Pace::Steady(1_000_000))
        };
        let mut session = Session::open(&backend, &selection, options).unwrap();
        let interval = session.interval();
        session.close().unwrap();
        interval
    };
    let counts = |i: pmu_runtime::session::Interval| -> Vec<u64> {
        i.counts.iter().map(|c| c.delta).collect()
    };
    assert_eq!(counts(run(None, Quirks::ALL).unwrap()), [10_000, 10_000]);
    match run(Some("broken:CHA1"), Quirks::ALL) {
        Err(pmu_runtime::Error::Broken(b)) => {
            assert_eq!((b.instance, b.socket), ("CHA1", 0));
            assert_eq!(b.event, "UNC_CHA_CLOCKTICKS");
            let text = b.to_string();
            assert!(text.contains("box CHA1 of socket 0 is broken"), "{text}");
        }
        other => panic!("a broken CHA1 was not reported: {other:?}"),
    }
    let off = Quirks {
        clock_event: false,
        ..Quirks::ALL
    };
    assert_eq!(counts(run(Some("broken:CHA1"), off).unwrap()), [10_000, 0]);
}

/// `pmu watch --sim --inject-fault broken:BOX` exits 1 naming the box, and prints no 0 for
/// it; without the fault it prints the box's counts.
#[test]
fn watch_names_a_broken_box_instead_of_printing_zero() {
    let watch = |fault: Option<&str>| {
        let mut cmd = Command::cargo_bin("pmu").unwrap();
        cmd.args([
            "watch",
            "--sim",
            "--processor",
            "skylake-sp",
            "--unit",
            "CHA0",
        ])
        .args(["--unit", "CHA1", "-e", "UNC_CHA_CLOCKTICKS", "--count", "1"]);
        if let Some(f) = fault {
            cmd.args(["--inject-fault", f]);
        }
        cmd.assert()
    };
    let out = watch(Some("broken:CHA1")).code(1);
    let out = out.get_output();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stderr.contains("box CHA1 of socket 0 is broken"),
        "{stderr}"
    );
    assert!(stderr.contains("UNC_CHA_CLOCKTICKS"), "{stderr}");
    assert!(!stdout.contains("C1_MSR_PMON_CTR0"), "{stdout}");
    let ok = watch(None).success();
    let stdout = String::from_utf8_lossy(&ok.get_output().stdout).to_string();
    assert!(stdout.contains("C1_MSR_PMON_CTR0"), "{stdout}");
}
