//! NVIDIA Grace's SCF PMU on the simulator: the simulated APMT names one CoreSight PMU per
//! socket, `pmu_runtime::cspmu` finds and identifies it by its PMIIDR, counts on it and puts
//! every register back (the page byte for byte as before); a damaged table is refused with the
//! APMT reader's typed error before any PMU register is touched.
//!
//! Expected values come from the injection, from the fabric cycles the test advances and the
//! simulator's stated rate (one `scf_cache` access per 4 cycles), and from Linux's
//! `nvidia_cspmu.c` (`scf_cache` is 0xF2, `bus_cycles` 0x1d, PMIIDR product 0x2CF of
//! implementer 0x36B).

use pmu_runtime::apmt::{Affinity, ApmtError};
use pmu_runtime::cspmu::{self, CspmuError, CYCLE_COUNTER};
use pmu_runtime::sim::cspmu::{SimCspmu, SIM_EVENT_COUNTERS};

/// An SCF event's number, by its name in the spec's event list.
fn event(name: &str) -> u32 {
    let unit = pmu_regs::nvidia_grace_scf::PROCESSOR
        .units
        .iter()
        .find(|u| u.name == "SCF")
        .expect("the SCF unit");
    let e = unit
        .events
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no SCF event {name}"));
    u32::from(e.code)
}

#[test]
fn the_simulated_apmt_lists_one_scf_pmu_per_socket() {
    let sim = SimCspmu::new(2);
    let pmus = cspmu::find(&sim.apmt(), &sim).expect("the simulated table is well formed");
    assert_eq!(pmus.len(), 2);
    for (socket, pmu) in pmus.iter().enumerate() {
        assert!(pmu.is_nvidia_scf(), "{pmu:?}");
        // NVIDIA's JEP106 code and the SCF's product, as nvidia_cspmu.c matches them.
        assert_eq!(pmu.pmiidr & 0xFFF, 0x36B);
        assert_eq!(pmu.pmiidr >> 20, 0x2CF);
        assert_eq!(pmu.node.base0, SimCspmu::base(socket));
        assert_eq!(pmu.node.affinity, Affinity::Container(socket as u32));
        assert_eq!(pmu.event_counters, SIM_EVENT_COUNTERS);
        assert_eq!((pmu.width, pmu.cycle_counter), (64, true));
    }
}

#[test]
fn injected_scf_cache_events_read_back_and_the_page_is_put_back() {
    let sim = SimCspmu::new(2);
    let pmus = cspmu::find(&sim.apmt(), &sim).unwrap();
    let before = (sim.bytes(0), sim.bytes(1));
    let scf_cache = event("scf_cache");
    assert_eq!(scf_cache, 0xF2);
    let counts = cspmu::count(&sim, &pmus[1], (&[scf_cache], true), || {
        sim.inject(1, scf_cache, 12_345);
        // Another event and another socket's events are not counted.
        sim.inject(1, event("scf_cache_wb"), 777);
        sim.inject(0, scf_cache, 999);
    })
    .unwrap();
    assert_eq!(counts.events, vec![(0, 12_345)]);
    assert_eq!(counts.cycles, Some(0));
    assert_eq!(
        (sim.bytes(0), sim.bytes(1)),
        before,
        "every register put back"
    );
}

#[test]
fn fabric_cycles_count_at_the_stated_rates() {
    let sim = SimCspmu::new(1);
    let pmus = cspmu::find(&sim.apmt(), &sim).unwrap();
    let before = sim.bytes(0);
    let asked = [
        event("scf_cache"),
        event("bus_cycles"),
        event("scf_cache_wb"),
    ];
    let counts = cspmu::count(&sim, &pmus[0], (&asked, true), || sim.advance(100_000)).unwrap();
    // 100,000 cycles: bus_cycles and the cycle counter every cycle, scf_cache one in four,
    // no write-backs.
    assert_eq!(counts.events, vec![(0, 25_000), (1, 100_000), (2, 0)]);
    assert_eq!(counts.cycles, Some(100_000));
    assert_eq!(sim.bytes(0), before);
    // Nothing counts once the session is over.
    sim.advance(1_000);
    assert_eq!(sim.bytes(0), before);
}

#[test]
fn too_many_events_or_a_busy_cycle_counter_are_refused_before_any_write() {
    let sim = SimCspmu::new(1);
    let pmus = cspmu::find(&sim.apmt(), &sim).unwrap();
    let before = sim.bytes(0);
    let nine = vec![event("scf_cache"); SIM_EVENT_COUNTERS as usize + 1];
    let err = cspmu::count(&sim, &pmus[0], (&nine, false), || {}).unwrap_err();
    assert!(
        matches!(err, CspmuError::TooManyEvents { asked: 9, free: 8 }),
        "{err:?}"
    );
    assert_eq!(sim.bytes(0), before);
    // Someone else's counters (0 and the cycle counter, enabled already) are left alone.
    let base = SimCspmu::base(0);
    use pmu_runtime::MmioAccess;
    sim.write_mmio(base + 0xC00, 32, 1 | 1 << CYCLE_COUNTER)
        .unwrap();
    let held = sim.bytes(0);
    let err = cspmu::count(&sim, &pmus[0], (&[0xF2], true), || {}).unwrap_err();
    assert!(
        matches!(err, CspmuError::NoCycleCounter { busy: true }),
        "{err:?}"
    );
    let counts = cspmu::count(&sim, &pmus[0], (&[0xF2], false), || sim.inject(0, 0xF2, 5)).unwrap();
    assert_eq!(counts.events, vec![(1, 5)], "counter 0 is someone else's");
    assert_eq!(sim.bytes(0), held);
}

#[test]
fn a_corrupted_apmt_is_refused_with_the_readers_typed_error() {
    let sim = SimCspmu::new(2);
    let before = sim.bytes(0);
    let mut table = sim.apmt();
    table[HEADER_PLUS_ONE] ^= 0x40;
    let err = cspmu::find(&table, &sim).unwrap_err();
    assert!(
        matches!(err, CspmuError::Apmt(ApmtError::BadChecksum { .. })),
        "{err:?}"
    );
    // The message says what to do, and the reader's error is its source.
    assert!(err.to_string().contains("check the table"), "{err}");
    let source = std::error::Error::source(&err).expect("a source");
    assert!(source.is::<ApmtError>());
    // A node cut short is refused too.
    let table = sim.apmt();
    let cut = &table[..table.len() - 1];
    assert!(matches!(
        cspmu::find(cut, &sim),
        Err(CspmuError::Apmt(ApmtError::LengthMismatch { .. }))
    ));
    assert_eq!(sim.bytes(0), before);
}

/// A byte of the first node (its id), so only the checksum catches the change.
const HEADER_PLUS_ONE: usize = 36 + 4;

#[test]
fn the_simulated_pmu_refuses_what_hardware_would() {
    use pmu_runtime::MmioAccess;
    let sim = SimCspmu::new(1);
    let base = SimCspmu::base(0);
    // PMIIDR and PMCFGR are read-only; PMCR's bit 12 is reserved.
    assert!(sim.write_mmio(base + 0xE08, 32, 0).is_err());
    assert!(sim.write_mmio(base + 0xE00, 32, 0).is_err());
    assert!(sim.write_mmio(base + 0xE04, 32, 1 << 12).is_err());
    // Outside the page, unaligned, or an odd width.
    assert!(sim.read_mmio(base + 0x1000, 32).is_err());
    assert!(sim.read_mmio(base + 0x2, 32).is_err());
    assert!(sim.read_mmio(base, 16).is_err());
    // PMCR.P zeroes the event counters and reads back as 0.
    sim.write_mmio(base + 0x8, 64, 42).unwrap();
    sim.write_mmio(base + 0xE04, 32, 0b10).unwrap();
    assert_eq!(sim.read_mmio(base + 0x8, 64).unwrap(), 0);
    assert_eq!(sim.read_mmio(base + 0xE04, 32).unwrap(), 0);
}
