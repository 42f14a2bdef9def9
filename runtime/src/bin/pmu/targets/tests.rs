//! The counting set on the simulator.

use super::*;
use pmu_runtime::machine::Where;
use pmu_runtime::sim::SimConfig;

fn line(text: &str, sockets: Sockets) -> Selection {
    Selection::from_line(text, sockets)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .expect("a selection")
}

/// A register's value on the simulator (socket 0).
fn peek(machine: &Machine, name: &str) -> u64 {
    let at = Where {
        socket: Some(0),
        ..Where::default()
    };
    machine.read(&machine.resolve(name, &at).unwrap()).unwrap()
}

#[test]
fn a_configuration_line_reads_as_watch_reads_its_arguments() {
    assert!(Selection::from_line("  # a comment", Sockets::All)
        .ok()
        .flatten()
        .is_none());
    assert!(Selection::from_line("", Sockets::All)
        .ok()
        .flatten()
        .is_none());
    let err = Selection::from_line("IMC2", Sockets::All).err().unwrap();
    assert!(err.to_string().contains("no event"), "{err}");
    let s = line(
        "IMC2 event=UNC_M_CAS_COUNT.RD ev_sel=0x04,umask=0x0c # reads, writes",
        Sockets::All,
    );
    assert_eq!(s.units, ["IMC2"]);
    assert_eq!(
        s.events,
        ["event=UNC_M_CAS_COUNT.RD", "ev_sel=0x04,umask=0x0c"]
    );
    // The same checks as watch: a setting watch makes itself, an unknown box.
    let err = line("IMC2 ev_sel=1,en=0", Sockets::All)
        .resolve()
        .err()
        .unwrap();
    assert!(err.to_string().contains("`en` cannot be given"), "{err}");
    let err = line("Q9 ev_sel=1", Sockets::All).resolve().err().unwrap();
    assert!(err.to_string().contains("CH2/IMC2"), "{err}");
}

#[test]
fn every_box_on_every_socket_counts_injected_events_and_is_put_back() {
    let plan = line(
        "xeon-e5-2600:IMC2 event=UNC_M_CAS_COUNT.RD ev_sel=0x04,umask=0x0c",
        Sockets::All,
    )
    .resolve()
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.processor().id, "xeon-e5-2600");
    let machine = Machine::simulated(SimConfig::of(plan.processor()));
    let before = peek(&machine, "xeon-e5-2600:MC_CH2_PCI_PMON_CTL0");
    let reach = Reach::new(&machine, EventSources::with_root("/nonexistent"));
    let targets = Targets::program(&reach, &plan).unwrap();
    let series = targets.series();
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
            backend: "sim",
            width: 48,
            perf: None,
            cpu: None,
        }
    );
    assert_ne!(
        peek(&machine, "xeon-e5-2600:MC_CH2_PCI_PMON_CTL0"),
        before,
        "programmed"
    );
    let start = targets.read();
    targets.inject(0, 1000).unwrap();
    targets.inject(1, 7).unwrap();
    let now = targets.read();
    for ((s, a), b) in series.iter().zip(&start).zip(&now) {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(b.running_ratio, None);
        let expected = if s.event_index == 0 { 1000 } else { 7 };
        assert_eq!(b.value - a.value, expected, "{s:?}");
    }
    targets.close().unwrap();
    assert_eq!(
        peek(&machine, "xeon-e5-2600:MC_CH2_PCI_PMON_CTL0"),
        before,
        "put back"
    );
}

#[test]
fn dropping_the_set_puts_the_registers_back_and_a_failed_read_is_none() {
    let plan = line("xeon-7500:C3 ev_sel=0x01", Sockets::One(0))
        .resolve()
        .unwrap_or_else(|e| panic!("{e}"));
    let machine = Machine::simulated(SimConfig::of(plan.processor()));
    let before = peek(&machine, "C3_MSR_PMON_EVT_SEL0");
    let reach = Reach::new(&machine, EventSources::with_root("/nonexistent"));
    {
        let targets = Targets::program(&reach, &plan).unwrap();
        assert_ne!(peek(&machine, "C3_MSR_PMON_EVT_SEL0"), before);
        assert!(targets.read()[0].is_some());
    }
    assert_eq!(
        peek(&machine, "C3_MSR_PMON_EVT_SEL0"),
        before,
        "put back on drop"
    );
    // A box whose read fails reads as None, not as an error for the whole set: fail
    // each read in turn until the first one after programming.
    let failed_read = (1..100).any(|n| {
        let faulty = Machine::simulated(SimConfig::of(plan.processor())).with_fault(
            pmu_runtime::fault::When::Read(n),
            pmu_runtime::fault::Fault::Eio,
        );
        let reach = Reach::new(&faulty, EventSources::with_root("/nonexistent"));
        let Ok(targets) = Targets::program(&reach, &plan) else {
            return false;
        };
        let first = targets.read();
        first == vec![None] && targets.read()[0].is_some()
    });
    assert!(failed_read);
}
