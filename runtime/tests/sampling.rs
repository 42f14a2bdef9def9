//! The sampling procedures against the simulated PMU.

use pmu_regs::arch::core::{Ia32PerfEvtSel, IA32_PERFEVTSEL};
use pmu_regs::xeon_7500::ubox;
use pmu_regs::xeon_7500::PROCESSOR as NHM;
use pmu_runtime::ownership::{Lease, Ownership, Pmu};
use pmu_runtime::sampling::core::{CoreEventSelect, CorePmu};
use pmu_runtime::sampling::standalone::{PacketFilter, StandaloneBox};

/// The first E5-2600's QPI packet filter, in its generated layouts.
type QpiFilter = PacketFilter<
    pmu_regs::xeon_e5_2600::qpi::QpiPktMatch0,
    pmu_regs::xeon_e5_2600::qpi::QpiPktMask0,
    pmu_regs::xeon_e5_2600::qpi::QpiPktMatch1,
    pmu_regs::xeon_e5_2600::qpi::QpiPktMask1,
>;
use pmu_runtime::sampling::uncore::{
    EventSelect, SamplePlan, Uncore, UncoreCounter, UncoreSummary,
};
use pmu_runtime::sampling::{delta, preload};
use pmu_runtime::sim::{ArchConfig, PciEvent, QpiPacket, Sim, SimConfig, UncoreEvent};
use pmu_runtime::{Error, MsrAccess, MsrAccessExt, SamplingError, UsageError};

const TOP: u64 = 1 << 48;

fn ev(instance: &'static str, ev_sel: u16) -> UncoreEvent {
    UncoreEvent {
        instance,
        ev_sel,
        umask: None,
    }
}

fn en_all(sim: &Sim) -> bool {
    sim.on_cpu(0)
        .read(ubox::U_MSR_PMON_GLOBAL_CTL)
        .unwrap()
        .en_all()
}

/// Arms one counter for N and checks the PMI and freeze come on exactly the Nth event.
fn check_nth(n: u64) {
    let sim = Sim::new(SimConfig::default());
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let c = UncoreCounter::new("C4", 2);
    let mut s = uncore
        .arm(&SamplePlan {
            counters: vec![(c, EventSelect::event(0x21), n)],
            pmi_core: 1,
        })
        .unwrap();
    if n > 1 {
        sim.inject_uncore(0, ev("C4", 0x21), n - 1).unwrap();
    }
    assert!(sim.pmis().is_empty(), "N = {n}: PMI before the Nth event");
    assert!(en_all(&sim), "N = {n}: frozen before the Nth event");
    sim.inject_uncore(0, ev("C4", 0x21), 1).unwrap();
    assert_eq!(sim.pmis().len(), 1, "N = {n}: no PMI on the Nth event");
    assert_eq!(sim.pmis()[0].event, n);
    assert!(!en_all(&sim), "N = {n}: not frozen on the Nth event");
    sim.inject_uncore(0, ev("C4", 0x21), 10).unwrap();
    let sample = uncore.frozen_sample(&mut s).unwrap();
    assert_eq!(sample.overflowed, vec![c]);
    assert_eq!(
        sample.counts,
        vec![(c, n)],
        "N = {n}: events after the freeze were counted"
    );
}

#[test]
fn pmi_comes_on_exactly_the_nth_event() {
    check_nth(1000);
    check_nth(1);
    check_nth((1 << 47) + 12_345);
    check_nth(TOP);
}

#[test]
fn the_w_box_formula_is_one_event_late() {
    // Preloading (2^48 - 1) - N, as the guide's W-box section says, overflows on event N + 1.
    let n = 1000;
    let sim = Sim::new(SimConfig::default());
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let c = UncoreCounter::new("W", 1);
    let _session = uncore
        .arm(&SamplePlan {
            counters: vec![(c, EventSelect::event(0x05), n)],
            pmi_core: 0,
        })
        .unwrap();
    uncore.stop().unwrap();
    sim.on_cpu(0)
        .write_raw(pmu_regs::xeon_7500::wbox::W_MSR_PMON_CTR[1], (TOP - 1) - n)
        .unwrap();
    uncore.start().unwrap();
    sim.inject_uncore(0, ev("W", 0x05), n).unwrap();
    assert!(
        sim.pmis().is_empty(),
        "the W-box formula overflowed on the Nth event"
    );
    sim.inject_uncore(0, ev("W", 0x05), 1).unwrap();
    assert_eq!(sim.pmis()[0].event, n + 1);
    assert_eq!(preload(n, 48).unwrap(), TOP - n, "the formula we use");
}

#[test]
fn two_boxes_under_different_s_boxes_overflow_in_one_interval() {
    let sim = Sim::new(SimConfig {
        freeze_skew: 100,
        ..SimConfig::default()
    });
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let (a, b, quiet) = (
        UncoreCounter::new("C1", 0),
        UncoreCounter::new("C6", 3),
        UncoreCounter::new("B0", 1),
    );
    let mut s = uncore
        .arm(&SamplePlan {
            counters: vec![
                (a, EventSelect::event(0x01), 100),
                (b, EventSelect::event(0x02), 60),
                (quiet, EventSelect::event(0x03), 1_000_000),
            ],
            pmi_core: 2,
        })
        .unwrap();
    sim.inject_uncore(0, ev("C1", 0x01), 100).unwrap(); // C1 overflows; freeze in 100 events
    sim.inject_uncore(0, ev("C6", 0x02), 60).unwrap(); // C6 overflows before the freeze
    sim.inject_uncore(0, ev("B0", 0x03), 10).unwrap();
    sim.inject_uncore(0, ev("B0", 0x03), 100).unwrap(); // the freeze comes 30 events in
    assert!(!en_all(&sim));
    let sample = uncore.frozen_sample(&mut s).unwrap();
    assert_eq!(
        sample.overflowed,
        vec![a, b],
        "exactly the two overflowed counters"
    );
    assert_eq!(sample.counts, vec![(a, 100), (b, 60), (quiet, 40)]);
    // U status, then the box status of each armed counter whose summary bit is set: C1 (S0's
    // ov_c_l) and C6 (S1's ov_c_r). B0's summary bit (S0's ov_mb) is clear: not read. The
    // session owns the uncore, so only armed counters can have raised the PMI.
    assert_eq!(sample.walk_reads, 3);
    let u = sim.on_cpu(0).read(ubox::U_MSR_PMON_GLOBAL_STATUS).unwrap();
    assert!(u.ov_s0() && u.ov_s1());
}

/// The simulator without its view of the summary registers: what real hardware offers.
struct NoSummary<'a>(&'a Sim);

impl MsrAccess for NoSummary<'_> {
    fn read_msr(&self, cpu: u32, address: u32) -> pmu_runtime::access::BackendResult<u64> {
        self.0.read_msr(cpu, address)
    }
    fn write_msr(
        &self,
        cpu: u32,
        address: u32,
        value: u64,
    ) -> pmu_runtime::access::BackendResult<()> {
        self.0.write_msr(cpu, address, value)
    }
}
impl UncoreSummary for NoSummary<'_> {}
impl pmu_runtime::MmioAccess for NoSummary<'_> {
    fn read_mmio(&self, address: u64, width: u32) -> pmu_runtime::access::BackendResult<u64> {
        self.0.read_mmio(address, width)
    }
    fn write_mmio(
        &self,
        address: u64,
        width: u32,
        value: u64,
    ) -> pmu_runtime::access::BackendResult<()> {
        self.0.write_mmio(address, width, value)
    }
}
impl pmu_runtime::PciAccess for NoSummary<'_> {
    fn read_dword(
        &self,
        bdf: pmu_runtime::Bdf,
        offset: u16,
    ) -> pmu_runtime::access::BackendResult<u32> {
        self.0.read_dword(bdf, offset)
    }
    fn write_dword(
        &self,
        bdf: pmu_runtime::Bdf,
        offset: u16,
        value: u32,
    ) -> pmu_runtime::access::BackendResult<()> {
        self.0.write_dword(bdf, offset, value)
    }
}
impl Ownership for NoSummary<'_> {
    fn claim(&self, pmu: &Pmu) -> pmu_runtime::Result<Lease> {
        self.0.claim(pmu)
    }
}

#[test]
fn without_the_summary_registers_the_walk_reads_every_armed_box_below_a_flagged_s_box() {
    let sim = Sim::new(SimConfig::default());
    let plan = || SamplePlan {
        counters: vec![
            (UncoreCounter::new("C2", 1), EventSelect::event(0x01), 5),
            (UncoreCounter::new("B0", 0), EventSelect::event(0x02), 1000),
            (UncoreCounter::new("C6", 0), EventSelect::event(0x03), 1000),
        ],
        pmi_core: 0,
    };
    let hw = NoSummary(&sim);
    let uncore = Uncore::open(&hw, &NHM, 0, 0).unwrap();
    let mut s = uncore.arm(&plan()).unwrap();
    sim.inject_uncore(0, ev("C2", 0x01), 5).unwrap();
    let sample = uncore.frozen_sample(&mut s).unwrap();
    assert_eq!(sample.overflowed, vec![UncoreCounter::new("C2", 1)]);
    // U status shows only S0 flagged; S0's summary cannot be read, so every armed box below
    // S0 is read (C2, B0); C6 is under S1, which is clear.
    assert_eq!(sample.walk_reads, 1 + 2);
    drop(s);
    drop(uncore);
    // With the summary, only C2's box.
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let mut s = uncore.arm(&plan()).unwrap();
    sim.inject_uncore(0, ev("C2", 0x01), 5).unwrap();
    let sample = uncore.frozen_sample(&mut s).unwrap();
    assert_eq!(sample.walk_reads, 1 + 1);
}

#[test]
fn ten_intervals_lose_no_events() {
    let skew = 7;
    let sim = Sim::new(SimConfig {
        freeze_skew: skew,
        ..SimConfig::default()
    });
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let sampled = UncoreCounter::new("C3", 0);
    let steady = UncoreCounter::new("C3", 1);
    let mut s = uncore
        .arm(&SamplePlan {
            counters: vec![
                (sampled, EventSelect::event(0x01), 1000),
                (steady, EventSelect::event(0x02), 1 << 40),
            ],
            pmi_core: 0,
        })
        .unwrap();
    let (mut sampled_total, mut steady_total) = (0, 0);
    for interval in 0..10 {
        sim.inject_uncore(0, ev("C3", 0x02), 30).unwrap();
        sim.inject_uncore(0, ev("C3", 0x01), 1500).unwrap(); // 1000 + skew counted, then frozen
        let sample = uncore.frozen_sample(&mut s).unwrap();
        assert_eq!(sample.overflowed, vec![sampled], "interval {interval}");
        assert_eq!(
            sample.counts,
            vec![(sampled, 1000 + skew), (steady, 30)],
            "interval {interval}"
        );
        sampled_total += sample.counts[0].1;
        steady_total += sample.counts[1].1;
        uncore.rearm(&mut s, &sample).unwrap();
        assert!(en_all(&sim));
        assert!(!sim.uncore_pmi_pending(0).unwrap());
    }
    assert_eq!(sampled_total, 10 * (1000 + skew));
    assert_eq!(steady_total, 300);
    assert_eq!(sim.pmis().len(), 10);
    // The steady counter was never reset: it holds every event it counted.
    assert_eq!(
        uncore.read_counter(steady).unwrap(),
        preload(1 << 40, 48).unwrap() + 300
    );
}

#[test]
fn polling_freezes_reads_and_restores() {
    let sim = Sim::new(SimConfig::default());
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let c = UncoreCounter::new("S1", 2);
    uncore
        .configure(c, &EventSelect::event(0x0A).with_umask(0x03))
        .unwrap();
    uncore.start().unwrap();
    sim.inject_uncore(
        1,
        UncoreEvent {
            instance: "S1",
            ev_sel: 0x0A,
            umask: Some(0x03),
        },
        1,
    )
    .unwrap(); // other socket
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: "S1",
            ev_sel: 0x0A,
            umask: Some(0x03),
        },
        10,
    )
    .unwrap();
    assert_eq!(uncore.poll(&[c]).unwrap(), vec![10]);
    assert!(en_all(&sim), "polling restores en_all");
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: "S1",
            ev_sel: 0x0A,
            umask: Some(0x03),
        },
        5,
    )
    .unwrap();
    assert_eq!(uncore.read_counter(c).unwrap(), 15);
    uncore.stop().unwrap();
    assert_eq!(uncore.poll(&[c]).unwrap(), vec![15]);
    assert!(!en_all(&sim), "polling leaves a stopped uncore stopped");
}

#[test]
fn deltas_are_right_across_the_48_bit_wrap() {
    let sim = Sim::new(SimConfig::default());
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let c = UncoreCounter::new("M1", 4);
    uncore.configure(c, &EventSelect::event(0x07)).unwrap();
    sim.on_cpu(0)
        .write_raw(pmu_regs::xeon_7500::mbox::M_MSR_PMU_CNT[1][4], TOP - 3)
        .unwrap();
    uncore.start().unwrap();
    let before = uncore.read_counter(c).unwrap();
    sim.inject_uncore(0, ev("M1", 0x07), 10).unwrap();
    let after = uncore.read_counter(c).unwrap();
    assert_eq!(after, 7);
    assert_eq!(delta(before, after, 48), 10);
}

#[test]
fn settings_a_box_does_not_have_are_refused() {
    let sim = Sim::new(SimConfig::default());
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let err = uncore
        .configure(
            UncoreCounter::new("B0", 0),
            &EventSelect::event(0x01).with_umask(1),
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Usage(UsageError::UnsupportedField { field: "umask", .. })
        ),
        "{err}"
    );
    // B-box event selects are five bits wide.
    let err = uncore
        .configure(UncoreCounter::new("B0", 0), &EventSelect::event(0x20))
        .unwrap_err();
    assert!(
        matches!(err, Error::Usage(UsageError::FieldTooWide(_))),
        "{err}"
    );
    let err = uncore
        .configure(UncoreCounter::new("C9", 0), &EventSelect::event(1))
        .unwrap_err();
    assert!(err.to_string().contains("available: B0, B1, C0"), "{err}");
    let err = uncore
        .configure(UncoreCounter::new("C0", 6), &EventSelect::event(1))
        .unwrap_err();
    assert!(err.to_string().contains("counters 0-5"), "{err}");
}

#[test]
fn a_sample_needs_a_freeze_by_pmi() {
    let sim = Sim::new(SimConfig::default());
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let mut s = uncore
        .arm(&SamplePlan {
            counters: vec![(UncoreCounter::new("C0", 0), EventSelect::event(1), 100)],
            pmi_core: 0,
        })
        .unwrap();
    let err = uncore.frozen_sample(&mut s).unwrap_err();
    assert!(err.to_string().contains("en_all is still set"), "{err}");
    uncore.stop().unwrap();
    let err = uncore.frozen_sample(&mut s).unwrap_err();
    assert!(err.to_string().contains("not by a PMI"), "{err}");
    drop(s);
    drop(uncore);
    // Without the summary register the same is seen from the empty overflow status.
    let hw = NoSummary(&sim);
    let uncore = Uncore::open(&hw, &NHM, 0, 0).unwrap();
    let mut s = uncore
        .arm(&SamplePlan {
            counters: vec![(UncoreCounter::new("C0", 0), EventSelect::event(1), 100)],
            pmi_core: 0,
        })
        .unwrap();
    uncore.stop().unwrap();
    let err = uncore.frozen_sample(&mut s).unwrap_err();
    assert!(err.to_string().contains("no overflow is recorded"), "{err}");
}

#[test]
fn legacy_writes_refuse_values_sign_extension_cannot_make() {
    let sim = Sim::new(SimConfig {
        arch: ArchConfig {
            fw_write: false,
            ..ArchConfig::default()
        },
        ..SimConfig::default()
    });
    let pmu = CorePmu::new(&sim, 0, sim.cpuid_0a()).unwrap();
    assert!(!pmu.full_width_writes());
    pmu.write_counter(0, 0xFFFF_8000_0000).unwrap();
    assert_eq!(pmu.read_counter(0).unwrap(), 0xFFFF_8000_0000);
    pmu.write_counter(0, 0x7FFF_FFFF).unwrap();
    let err = pmu.write_counter(0, 0x1_0000_0000).unwrap_err();
    assert!(
        matches!(err, Error::Sampling(SamplingError::NotRepresentable { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("FW_WRITE"), "{err}");
    assert_eq!(
        pmu.read_counter(0).unwrap(),
        0x7FFF_FFFF,
        "nothing was written"
    );
    // Intervals up to 2^31 can be preloaded; longer ones need full-width writes.
    let armed = pmu
        .arm(1, &CoreEventSelect::user(0xC0, 0), 1 << 31)
        .unwrap();
    armed.close().unwrap();
    assert!(pmu
        .arm(1, &CoreEventSelect::user(0xC0, 0), (1 << 31) + 1)
        .is_err());
    // Beyond the counter width is refused either way.
    assert!(pmu.write_counter(0, 1 << 48).is_err());

    let sim = Sim::new(SimConfig::default());
    let pmu = CorePmu::new(&sim, 0, sim.cpuid_0a()).unwrap();
    assert!(pmu.full_width_writes());
    pmu.write_counter(2, 0x1_0000_0000).unwrap();
    assert_eq!(pmu.read_counter(2).unwrap(), 0x1_0000_0000);
    let _armed = pmu
        .arm(3, &CoreEventSelect::user(0xC0, 0), (1 << 40) + 1)
        .unwrap();
    sim.inject_core(0, 0xC0, 0, (1 << 40) + 1).unwrap();
    assert_eq!(sim.pmis().last().unwrap().event, (1 << 40) + 1);
}

#[test]
fn a_counter_in_use_is_refused_unless_forced() {
    let sim = Sim::new(SimConfig {
        arch: ArchConfig {
            version: 4,
            ..ArchConfig::default()
        },
        ..SimConfig::default()
    });
    let other = sim.on_cpu(1);
    other
        .write(IA32_PERFEVTSEL[2], Ia32PerfEvtSel::RESET.with_ev_sel(0x2E))
        .unwrap();
    let pmu = CorePmu::new(&sim, 1, sim.cpuid_0a()).unwrap();
    let err = pmu.take(2, false).unwrap_err();
    assert!(matches!(err, Error::Sampling(SamplingError::InUse { .. })));
    insta::assert_snapshot!("counter_in_use", err.to_string());
    pmu.take(2, true).unwrap();
    pmu.take(1, false).unwrap();
    assert!(pmu.take(4, false).is_err(), "CPUID says 4 counters");
    pmu.take_pmi(false).unwrap();
    pmu.program(1, &CoreEventSelect::user(0x3C, 0), true)
        .unwrap();
    let err = pmu.take_pmi(false).unwrap_err();
    insta::assert_snapshot!("pmi_in_use", err.to_string());
    // CPU 0 is untouched by CPU 1's state.
    CorePmu::new(&sim, 0, sim.cpuid_0a())
        .unwrap()
        .take(2, false)
        .unwrap();
}

#[test]
fn e5_boxes_freeze_reset_and_filter() {
    let sim = Sim::new(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR));
    let devices = sim.uncore_devices();
    let ha = StandaloneBox::of(&sim, &devices, 1, "HA").unwrap();
    ha.configure(0, &EventSelect::event(0x01).with_umask(0x03))
        .unwrap();
    let e = PciEvent {
        instance: "HA",
        ev_sel: 0x01,
        umask: Some(0x03),
    };
    sim.inject_pci(1, e, 10).unwrap();
    ha.freeze().unwrap();
    sim.inject_pci(1, e, 10).unwrap();
    assert_eq!(ha.read_counter(0).unwrap(), 10);
    ha.unfreeze().unwrap();
    sim.inject_pci(1, e, 1).unwrap();
    assert_eq!(ha.read_counter(0).unwrap(), 11);
    ha.reset_counters(false).unwrap();
    assert_eq!(ha.read_counter(0).unwrap(), 0);
    ha.reset_controls(false).unwrap();
    sim.inject_pci(1, e, 1).unwrap();
    assert_eq!(ha.read_counter(0).unwrap(), 0, "controls were reset");
    // The HA has no ev_sel_ext and no packet filter.
    assert!(ha
        .configure(
            1,
            &EventSelect {
                event_ext: Some(true),
                ..Default::default()
            }
        )
        .is_err());
    assert!(ha.program_filter(0, &QpiFilter::default()).is_err());

    let p0 = StandaloneBox::of(&sim, &devices, 1, "P0").unwrap();
    use pmu_regs::xeon_e5_2600::qpi::{QpiPktMask1, QpiPktMatch1};
    p0.program_filter(
        3,
        &QpiFilter {
            match1: QpiPktMatch1::RESET.with_rds(0x2),
            mask1: QpiPktMask1::RESET.with_rds(0xF),
            ..QpiFilter::default()
        },
    )
    .unwrap();
    let pkt = |rds| QpiPacket {
        word0: 0x1234,
        word1: QpiPktMatch1::RESET.with_rds(rds).bits(),
    };
    sim.inject_qpi_packet(1, "P0", pkt(0x2), 3).unwrap();
    sim.inject_qpi_packet(1, "P0", pkt(0x3), 3).unwrap();
    assert_eq!(p0.read_counter(3).unwrap(), 3);
    assert!(StandaloneBox::of(&sim, &devices, 1, "P2").is_err());
}

#[test]
fn a_packet_filter_in_another_processors_layouts_is_refused_before_any_write() {
    use pmu_regs::xeon_e5_2600_v3::qpi as v3;
    use pmu_runtime::fault::{Fault, Faulty, When};
    let sim = Sim::new(SimConfig::of(&pmu_regs::xeon_e5_2600_v3::PROCESSOR));
    let devices = sim.uncore_devices();
    let counted = Faulty::new(&sim, When::Never, Fault::Eio);
    let p0 = StandaloneBox::of(&counted, &devices, 0, "P0").unwrap();
    // The first E5-2600's layouts on a v3 port: refused, naming the v3 register, nothing written.
    let err = p0.program_filter(0, &QpiFilter::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("Q_P{i}_PCI_PMON_PKT_MATCH0 of xeon-e5-2600-v3"),
        "{text}"
    );
    assert_eq!(counted.counts(), (0, 0), "{text}");
    // Its own layouts are taken.
    p0.program_filter(
        0,
        &PacketFilter {
            match0: v3::QpiPktMatch0::RESET,
            mask0: v3::QpiPktMask0::RESET,
            match1: v3::QpiPktMatch1::RESET,
            mask1: v3::QpiPktMask1::RESET,
        },
    )
    .unwrap();
    assert!(counted.counts().1 > 0);
}

#[test]
fn reading_the_cpuid_of_this_machine_does_not_fail() {
    // On a machine without architectural perfmon this is None; either way it must not panic,
    // and any answer must be self-consistent.
    if let Some(id) = pmu_runtime::sampling::core::host_cpuid_0a() {
        assert!(id.version() == 0 || id.counters() <= 32);
    }
}

#[test]
fn events_are_checked_against_their_counters_and_unit() {
    use pmu_regs::xeon_e5_2600::{qpi, r3qpi};
    let sim = Sim::new(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR));
    let devices = sim.uncore_devices();
    let link = StandaloneBox::of(&sim, &devices, 0, "L1").unwrap();
    // An event Intel's list restricts to counters 0 and 1 is refused on counter 2.
    let restricted = r3qpi::Event::ALL
        .iter()
        .find(|e| !e.can_count_on(2) && e.can_count_on(0))
        .expect("R3QPI has counter-restricted events");
    let err = link.configure_event(2, restricted.info()).unwrap_err();
    assert!(err.to_string().contains("available: counters 0"), "{err}");
    link.configure_event(0, restricted.info()).unwrap();
    sim.inject_pci(
        0,
        PciEvent {
            instance: "L1",
            ev_sel: restricted.info().code,
            umask: Some(restricted.info().umask),
        },
        7,
    )
    .unwrap();
    assert_eq!(link.read_counter(0).unwrap(), 7);
    // An event of another unit is refused.
    let err = link
        .configure_event(0, qpi::Event::CLOCKTICKS.info())
        .unwrap_err();
    assert!(
        err.to_string().contains("an event of the R3QPI unit"),
        "{err}"
    );
}

/// From version 5 CPUID leaf 0AH may enumerate fixed counters by bitmap (ECX) as well as by
/// count (EDX[4:0]): a counter the bitmap leaves out is refused, naming those there are, and
/// the simulated CPU has no such register.
#[test]
fn fixed_counters_are_the_ones_cpuid_enumerates() {
    let sim = Sim::new(SimConfig {
        arch: ArchConfig {
            version: 5,
            fixed_counters: 0,
            fixed_mask: 0b101,
            ..ArchConfig::default()
        },
        ..SimConfig::default()
    });
    let pmu = CorePmu::new(&sim, 0, sim.cpuid_0a()).unwrap();
    pmu.take_fixed(0, false).unwrap();
    pmu.take_fixed(2, false).unwrap();
    let err = pmu.take_fixed(1, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "there is no IA32_FIXED_CTR1; available: IA32_FIXED_CTR0, IA32_FIXED_CTR2 (as CPUID.0AH \
         enumerates them)"
    );
    assert!(sim.read_msr(0, 0x30A).is_err(), "IA32_FIXED_CTR1 exists");
    assert_eq!(sim.read_msr(0, 0x30B).unwrap(), 0);
    // Before version 5 ECX is reserved: only the count says.
    let sim = Sim::new(SimConfig {
        arch: ArchConfig {
            version: 4,
            fixed_counters: 2,
            fixed_mask: 0b100,
            ..ArchConfig::default()
        },
        ..SimConfig::default()
    });
    let pmu = CorePmu::new(&sim, 0, sim.cpuid_0a()).unwrap();
    pmu.take_fixed(1, false).unwrap();
    assert!(pmu.take_fixed(2, false).is_err());
}

/// Clearwater Forest's fixed counters 4-6 (CPUID.0AH:ECX bits 4-6, the top-down classes of
/// Linux's intel_skt_event_constraints) are taken like 0-2: one whose IA32_FIXED_CTR_CTRL
/// block another user enabled is refused (IA32_PERF_GLOBAL_INUSE has no bit for it), and
/// fixed counter 3, which these cores lack, is refused naming the six they have.
#[test]
fn clearwater_forest_takes_its_fixed_counters_4_to_6() {
    let cwf = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == "clearwater-forest")
        .unwrap();
    let sim = Sim::new(SimConfig::of(cwf));
    let pmu = CorePmu::new(&sim, 0, sim.cpuid_0a()).unwrap();
    for i in [4, 5, 6] {
        pmu.take_fixed(i, false).unwrap();
    }
    let err = pmu.take_fixed(3, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "there is no IA32_FIXED_CTR3; available: IA32_FIXED_CTR0, IA32_FIXED_CTR1, \
         IA32_FIXED_CTR2, IA32_FIXED_CTR4, IA32_FIXED_CTR5, IA32_FIXED_CTR6 (as CPUID.0AH \
         enumerates them)"
    );
    // Another user counts on fixed counter 5 in every ring (its block, bits 21:20).
    sim.write_msr(0, 0x38D, 0b11 << 20).unwrap();
    let err = pmu.take_fixed(5, false).unwrap_err();
    assert!(
        err.to_string()
            .contains("IA32_FIXED_CTR_CTRL.en5 is non-zero"),
        "{err}"
    );
    pmu.take_fixed(4, false).unwrap();
    pmu.take_fixed(5, true).unwrap();
    // Sierra Forest's cores have none of them.
    let srf = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == "sierra-forest")
        .unwrap();
    let sim = Sim::new(SimConfig::of(srf));
    let pmu = CorePmu::new(&sim, 0, sim.cpuid_0a()).unwrap();
    assert!(pmu.take_fixed(4, false).is_err());
}
