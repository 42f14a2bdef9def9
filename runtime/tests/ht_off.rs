//! Core events that Intel's lists let count on more counters when the core runs one hardware
//! thread (`CounterHTOff`: `EventInfo::counters_ht_off`), counted through the library's session
//! on a simulated Skylake-SP. Without Hyper-Threading the core reports 8 general counters in
//! CPUID leaf 0AH, and eight such events count at once, one on each. With it on, the core
//! reports 4: the same events take turns on counters 0-3 and nothing is written to 4-7. Events
//! the lists keep to counters 0-3 either way take turns on a core of 8 counters too.

use std::time::Duration;

use pmu_regs::skylake_sp::core::Event;
use pmu_regs::EventInfo;
use pmu_runtime::boxes::Boxes;
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::{Clock, Options, Pace, Selection, Session, SessionBackend};
use pmu_runtime::sim::{ArchConfig, SimConfig};

const SKX: &pmu_regs::ProcessorInfo = &pmu_regs::skylake_sp::PROCESSOR;

/// Eight events whose lists give counters 0-3, and 0-7 without Hyper-Threading.
const WIDENED: [Event; 8] = [
    Event::LD_BLOCKS_STORE_FORWARD,
    Event::LD_BLOCKS_NO_SR,
    Event::LD_BLOCKS_PARTIAL_ADDRESS_ALIAS,
    Event::DTLB_LOAD_MISSES_MISS_CAUSES_A_WALK,
    Event::DTLB_LOAD_MISSES_WALK_COMPLETED_4K,
    Event::L2_RQSTS_DEMAND_DATA_RD_MISS,
    Event::L2_RQSTS_RFO_MISS,
    Event::L2_RQSTS_CODE_RD_MISS,
];

/// Five events whose lists give counters 0-3 with Hyper-Threading off too.
const KEPT: [Event; 5] = [
    Event::MEM_INST_RETIRED_STLB_MISS_LOADS,
    Event::MEM_INST_RETIRED_STLB_MISS_STORES,
    Event::MEM_INST_RETIRED_LOCK_LOADS,
    Event::MEM_INST_RETIRED_SPLIT_LOADS,
    Event::MEM_INST_RETIRED_SPLIT_STORES,
];

/// A simulated Skylake-SP whose cores report `gp` general counters (8: Hyper-Threading off).
fn machine(gp: u8) -> Machine {
    Machine::simulated(SimConfig {
        arch: ArchConfig {
            gp_counters: gp,
            ..ArchConfig::of(SKX)
        },
        ..SimConfig::of(SKX)
    })
}

/// What a tool selects for event `e`: its code and umask, on the counters its list allows a
/// core without Hyper-Threading (the session keeps it to those the part reports).
fn select(e: &EventInfo) -> EventSelect {
    EventSelect {
        umask: Some(e.umask),
        counters: Some(e.counters_without_ht()),
        ..EventSelect::event(e.code)
    }
}

/// The events on CPU 0's core PMU.
fn selection(events: &[Event]) -> Selection {
    let boxes = Boxes::of(&pmu_regs::arch::PROCESSOR);
    let core = boxes.boxes.iter().find(|b| b.unit.name == "CORE").unwrap();
    let infos: Vec<&EventInfo> = events.iter().map(|e| e.info()).collect();
    let names: Vec<&str> = infos.iter().map(|e| e.name).collect();
    let sels: Vec<EventSelect> = infos.iter().map(|e| select(e)).collect();
    Selection::of_boxes(&[(boxes, core)], &names, &sels).unwrap()
}

/// Readings 10 ms apart, event i at (i + 1) thousand a second: (i + 1) x 10 an interval.
/// In turns, a turn per millisecond.
fn options() -> Options {
    Options {
        clock: Clock::Steps(Duration::from_millis(10)),
        pace: Pace::Ladder(1000),
        turn: Duration::from_millis(1),
        ..Options::default()
    }
}

/// CPU 0's event selects, of the `gp` the part has (reading another faults, as on a real
/// core).
fn controls(machine: &Machine, gp: u8) -> Vec<u64> {
    let at = Where {
        cpu: Some(0),
        ..Where::default()
    };
    (0..gp)
        .map(|n| {
            let reg = machine
                .resolve(&format!("IA32_PERFEVTSEL{n}"), &at)
                .unwrap();
            machine.read(&reg).unwrap()
        })
        .collect()
}

/// Opens a session of `events` on a core of `gp` counters and reads one interval: whether it
/// counts in turns, and CPU 0's counter of each event and its count, which is exact (in
/// turns too: each event counts steadily, and its time on a counter scales it). Closing puts
/// back every control.
fn count(gp: u8, events: &[Event]) -> (bool, Vec<String>, Vec<u64>) {
    let machine = machine(gp);
    let before = controls(&machine, gp);
    let backend = SessionBackend::Registers(&machine);
    let mut session = Session::open(&backend, &selection(events), options()).unwrap();
    let interval = session.interval().unwrap();
    let on_cpu_0: Vec<(String, u64)> = session
        .series()
        .iter()
        .zip(&interval.counts)
        .filter(|(s, _)| s.cpu == Some(0))
        .map(|(s, c)| (s.counter.clone(), c.delta))
        .collect();
    assert_eq!(on_cpu_0.len(), events.len());
    let (counters, counts): (Vec<String>, Vec<u64>) = on_cpu_0.into_iter().unzip();
    let expected: Vec<u64> = (1..=events.len() as u64).map(|i| i * 10).collect();
    assert_eq!(counts, expected, "{gp} counters");
    let turns = session.in_turns();
    session.close().unwrap();
    assert_eq!(controls(&machine, gp), before, "{gp} counters: put back");
    (turns, counters, counts)
}

#[test]
fn without_hyper_threading_eight_widened_events_count_at_once_on_eight_counters() {
    let infos: Vec<&EventInfo> = WIDENED.iter().map(|e| e.info()).collect();
    for e in &infos {
        assert_eq!((e.counters, e.counters_ht_off), (0xF, 0xFF), "{}", e.name);
    }
    let (turns, counters, counts) = count(8, &WIDENED);
    assert!(!turns);
    let expected: Vec<String> = (0..8).map(|n| format!("IA32_PMC{n}")).collect();
    assert_eq!(counters, expected);
    assert_eq!(counts.len(), 8);
}

#[test]
fn with_hyper_threading_the_same_events_take_turns_on_counters_0_to_3() {
    let (turns, counters, counts) = count(4, &WIDENED);
    assert!(turns);
    for c in &counters {
        let n: u32 = c.trim_start_matches("IA32_PMC").parse().unwrap();
        assert!(n < 4, "{c}");
    }
    assert_eq!(counts.len(), 8);
}

#[test]
fn events_kept_to_counters_0_to_3_take_turns_on_a_core_of_eight() {
    for e in KEPT {
        assert_eq!(e.info().counters_ht_off, 0, "{}", e.info().name);
        assert_eq!(e.info().counters_without_ht(), 0xF, "{}", e.info().name);
    }
    let (turns, counters, _) = count(8, &KEPT);
    assert!(turns);
    for c in &counters {
        let n: u32 = c.trim_start_matches("IA32_PMC").parse().unwrap();
        assert!(n < 4, "{c}");
    }
    // Four of them fit at once.
    let (turns, counters, _) = count(8, &KEPT[..4]);
    assert!(!turns);
    assert_eq!(counters.len(), 4);
}
