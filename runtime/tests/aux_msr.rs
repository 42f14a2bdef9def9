//! What an event needs besides its select and unit mask, programmed by the library's counting
//! session on the simulator: a core event's auxiliary MSR (Intel's `MSRIndex`/`MSRValue`: the
//! offcore response, the front-end select) and an uncore event's unit-mask extension. The
//! simulated core counts an offcore stream only while its register holds the event's value,
//! so an exact count shows the session wrote it. Closing puts back what the register held;
//! events needing one register with different values take turns, each turn writing its
//! events' values (programming them at once is refused before anything is written).

use std::time::Duration;

use pmu_regs::EventInfo;
use pmu_runtime::boxes::Boxes;
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::{Clock, Options, Pace, Selection, Session, SessionBackend};

const SKX: &pmu_regs::ProcessorInfo = &pmu_regs::skylake_sp::PROCESSOR;
const ICX: &pmu_regs::ProcessorInfo = &pmu_regs::ice_lake_sp::PROCESSOR;

/// What a tool selects for event `e`: everything its list gives it.
fn select(e: &EventInfo) -> EventSelect {
    EventSelect {
        umask: Some(e.umask),
        umask_ext: (e.umask_ext != 0).then_some(e.umask_ext),
        counters: Some(e.counters),
        aux: e.aux,
        ..EventSelect::event(e.code)
    }
}

/// Skylake-SP's core events by name.
fn core_events(names: &[&str]) -> Vec<&'static EventInfo> {
    names
        .iter()
        .map(|n| {
            pmu_regs::skylake_sp::core::Event::ALL
                .iter()
                .map(|e| e.info())
                .find(|e| e.name == *n)
                .unwrap_or_else(|| panic!("{n}"))
        })
        .collect()
}

/// The events on CPU 0's core PMU.
fn on_core(events: &[&'static EventInfo]) -> Selection {
    let boxes = Boxes::of(&pmu_regs::arch::PROCESSOR);
    let core = boxes.boxes.iter().find(|b| b.unit.name == "CORE").unwrap();
    let names: Vec<&str> = events.iter().map(|e| e.name).collect();
    let sels: Vec<EventSelect> = events.iter().map(|e| select(e)).collect();
    Selection::of_boxes(&[(boxes, core)], &names, &sels).unwrap()
}

/// Readings 10 ms apart, event i at (i + 1) thousand a second; a turn per millisecond.
fn options() -> Options {
    Options {
        clock: Clock::Steps(Duration::from_millis(10)),
        pace: Pace::Ladder(1000),
        turn: Duration::from_millis(1),
        ..Options::default()
    }
}

fn cpu0() -> Where {
    Where {
        cpu: Some(0),
        ..Where::default()
    }
}

/// CPU 0's registers `names`.
fn regs(machine: &Machine, names: &[&str]) -> Vec<u64> {
    names
        .iter()
        .map(|n| machine.read(&machine.resolve(n, &cpu0()).unwrap()).unwrap())
        .collect()
}

const AUX_AND_CONTROLS: [&str; 7] = [
    "MSR_OFFCORE_RSP_0",
    "MSR_OFFCORE_RSP_1",
    "MSR_PEBS_FRONTEND",
    "IA32_PERFEVTSEL0",
    "IA32_PERFEVTSEL1",
    "IA32_PERFEVTSEL2",
    "IA32_PERFEVTSEL3",
];

/// A Skylake-SP whose offcore response register holds another tool's value.
fn machine_with_a_value_left() -> Machine {
    let machine = Machine::simulating(SKX);
    let reg = machine.resolve("MSR_OFFCORE_RSP_0", &cpu0()).unwrap();
    machine.write(&reg, 0x1234).unwrap();
    machine
}

/// CPU 0's count of each event over one interval.
fn counts_on_cpu_0(session: &mut Session) -> Vec<u64> {
    let interval = session.interval().unwrap();
    session
        .series()
        .iter()
        .zip(&interval.counts)
        .filter(|(s, _)| s.cpu == Some(0))
        .map(|(_, c)| c.delta)
        .collect()
}

#[test]
fn an_offcore_event_counts_with_its_register_set_and_closing_puts_it_back() {
    let machine = machine_with_a_value_left();
    let before = regs(&machine, &AUX_AND_CONTROLS);
    let events = core_events(&[
        "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
        "INST_RETIRED.ANY_P",
        "FRONTEND_RETIRED.DSB_MISS",
    ]);
    let backend = SessionBackend::Registers(&machine);
    let mut session = Session::open(&backend, &on_core(&events), options()).unwrap();
    // While counting, each register holds what its event needs.
    let during = regs(&machine, &AUX_AND_CONTROLS[..3]);
    assert_eq!(during, vec![0x10001, 0, 0x11]);
    // (i + 1) x 10 each: the offcore stream counted because its register held its value.
    assert_eq!(counts_on_cpu_0(&mut session), vec![10, 20, 30]);
    session.close().unwrap();
    assert_eq!(regs(&machine, &AUX_AND_CONTROLS), before);
}

#[test]
fn the_simulated_core_counts_an_offcore_stream_only_while_its_register_selects_it() {
    use pmu_runtime::sim::{Rate, Sim, SimConfig, Stream, StreamTarget};
    use pmu_runtime::MsrAccess;
    let sim = Sim::new(SimConfig::of(SKX));
    let event = core_events(&["OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE"])[0];
    let aux = event.aux.unwrap();
    // IA32_PERFEVTSEL0: the event, user and kernel, enabled; IA32_PERF_GLOBAL_CTRL: PMC0.
    sim.write_msr(
        0,
        0x186,
        0x43_0000 | u64::from(event.umask) << 8 | u64::from(event.code),
    )
    .unwrap();
    sim.write_msr(0, 0x38F, 1).unwrap();
    sim.write_msr(0, aux.address, 0x1234).unwrap();
    let id = sim.start_stream(Stream {
        target: StreamTarget::Core { cpu: 0 },
        ev_sel: event.code,
        umask: Some(event.umask),
        rate: Rate::steady(1000),
        masks: None,
        aux: Some(aux),
    });
    sim.advance(&[id], Duration::from_millis(10)).unwrap();
    assert_eq!(
        sim.read_msr(0, 0xC1).unwrap(),
        0,
        "another selection: nothing counted"
    );
    sim.write_msr(0, aux.address, aux.value).unwrap();
    sim.advance(&[id], Duration::from_millis(20)).unwrap();
    assert_eq!(sim.read_msr(0, 0xC1).unwrap(), 10);
    // A reserved bit of the register faults, as on hardware.
    assert!(sim.write_msr(0, aux.address, 1 << 63).is_err());
}

#[test]
fn two_events_needing_one_register_with_different_values_take_turns() {
    let machine = machine_with_a_value_left();
    let before = regs(&machine, &AUX_AND_CONTROLS);
    let events = core_events(&[
        "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
        "INST_RETIRED.ANY_P",
        "OFFCORE_RESPONSE.DEMAND_RFO.ANY_RESPONSE",
    ]);
    let backend = SessionBackend::Registers(&machine);
    // Three events and four counters, but MSR_OFFCORE_RSP_0 holds one value at a time: the
    // offcore events take turns, each with its value in the register while it counts.
    let mut session = Session::open(&backend, &on_core(&events), options()).unwrap();
    assert!(session.in_turns());
    assert_eq!(counts_on_cpu_0(&mut session), vec![10, 20, 30]);
    // INST_RETIRED.ANY_P fits beside either offcore event: it counts in both turns, the
    // whole time; each offcore event half of it.
    let interval = session.interval().unwrap();
    let ratios: Vec<f64> = session
        .series()
        .iter()
        .zip(&interval.counts)
        .filter(|(s, _)| s.cpu == Some(0))
        .map(|(_, c)| c.running_ratio.unwrap())
        .collect();
    assert_eq!(ratios, vec![0.5, 1.0, 0.5]);
    session.close().unwrap();
    assert_eq!(regs(&machine, &AUX_AND_CONTROLS), before);
    // One register holding one value for two events is fine at once.
    let same = core_events(&[
        "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
        "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
    ]);
    let mut session = Session::open(&backend, &on_core(&same), options()).unwrap();
    assert!(!session.in_turns());
    // Both counters count both streams of the event (10 and 20 a reading).
    assert_eq!(counts_on_cpu_0(&mut session), vec![30, 30]);
    session.close().unwrap();
    assert_eq!(regs(&machine, &AUX_AND_CONTROLS), before);
}

#[test]
fn programming_two_values_of_one_register_at_once_is_refused_before_any_write() {
    use pmu_runtime::counters::Counting;
    let machine = machine_with_a_value_left();
    let before = regs(&machine, &AUX_AND_CONTROLS);
    let events = core_events(&[
        "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
        "INST_RETIRED.ANY_P",
        "OFFCORE_RESPONSE.DEMAND_RFO.ANY_RESPONSE",
    ]);
    let sels: Vec<EventSelect> = events.iter().map(|e| select(e)).collect();
    let boxes = Boxes::of(&pmu_regs::arch::PROCESSOR);
    let core = boxes.boxes.iter().find(|b| b.unit.name == "CORE").unwrap();
    let mut counting = Counting::open(&machine, boxes, core, 0, 0, None).unwrap();
    let text = counting.program(&sels).unwrap_err().to_string();
    assert!(
        text.contains("MSR_OFFCORE_RSP_0")
            && text.contains("event 3 needs it as 0x10002")
            && text.contains("event 1 as 0x10001"),
        "{text}"
    );
    assert_eq!(regs(&machine, &AUX_AND_CONTROLS), before);
    // A value with a reserved bit is refused too.
    let mut bad = sels[0];
    bad.aux = bad.aux.map(|a| pmu_regs::AuxMsr {
        value: 1 << 63,
        ..a
    });
    assert!(counting.program(&[bad]).is_err());
    assert_eq!(regs(&machine, &AUX_AND_CONTROLS), before);
    counting.close().unwrap();
}

#[test]
fn counting_in_turns_sets_every_turns_registers_and_puts_them_back() {
    let machine = machine_with_a_value_left();
    let before = regs(&machine, &AUX_AND_CONTROLS);
    // Six events on four counters: the offcore and front-end events are in different turns.
    let events = core_events(&[
        "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
        "INST_RETIRED.ANY_P",
        "BR_INST_RETIRED.ALL_BRANCHES",
        "LD_BLOCKS.STORE_FORWARD",
        "FRONTEND_RETIRED.DSB_MISS",
        "MEM_LOAD_RETIRED.L3_MISS",
    ]);
    let backend = SessionBackend::Registers(&machine);
    let mut session = Session::open(&backend, &on_core(&events), options()).unwrap();
    assert!(session.in_turns());
    // Each count scaled by its share of the time: exact for steady streams.
    assert_eq!(counts_on_cpu_0(&mut session), vec![10, 20, 30, 40, 50, 60]);
    session.close().unwrap();
    assert_eq!(regs(&machine, &AUX_AND_CONTROLS), before);
}

#[test]
fn an_uncore_event_gets_its_unit_mask_extension() {
    let machine = Machine::simulating(ICX);
    let boxes = Boxes::of(ICX);
    let cha0 = boxes.find("CHA0").unwrap();
    let event = cha0
        .unit
        .events
        .iter()
        .find(|e| e.name == "UNC_CHA_TOR_INSERTS.IA_MISS")
        .unwrap();
    assert_eq!(event.umask_ext, 0xc001fe);
    let selection = Selection::of_boxes(&[(boxes, cha0)], &[event.name], &[select(event)]).unwrap();
    let backend = SessionBackend::Registers(&machine);
    let at = Where {
        socket: Some(0),
        ..Where::default()
    };
    let ctl = machine
        .resolve("ice-lake-sp:C0_MSR_PMON_CTL0", &at)
        .unwrap();
    let before = machine.read(&ctl).unwrap();
    let session = Session::open(&backend, &selection, options()).unwrap();
    // The control Linux's perf writes for uncore_cha/event=0x35,umask=0xc001fe01/, enabled.
    let raw = machine.read(&ctl).unwrap();
    assert_eq!(
        raw & 0xFFFF_FFFF_0000_FFFF,
        0x00c0_01fe_0000_0135,
        "{raw:#x}"
    );
    session.close().unwrap();
    assert_eq!(machine.read(&ctl).unwrap(), before);
}
