//! Injected faults: every read or write of the arming, configuring and filter paths is made to
//! fail in turn, with each OS error kind. Each failure must name the register and the
//! operation, and leave the registers as they were before the call (nothing half-programmed,
//! no half-written value).

use pmu_regs::arch::core::{IA32_PERFEVTSEL, IA32_PERF_GLOBAL_CTRL};
use pmu_regs::xeon_7500::PROCESSOR as NHM;
use pmu_regs::xeon_7500::{cbox, ubox, wbox};
use pmu_regs::xeon_e5_2600::{ha, qpi};
use pmu_runtime::fault::{Fault, Faulty, When};
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::sampling::core::{CoreEventSelect, CorePmu};
use pmu_runtime::sampling::standalone::{PacketFilter, StandaloneBox};

/// The first E5-2600's QPI packet filter, in its generated layouts.
type QpiFilter = PacketFilter<
    pmu_regs::xeon_e5_2600::qpi::QpiPktMatch0,
    pmu_regs::xeon_e5_2600::qpi::QpiPktMask0,
    pmu_regs::xeon_e5_2600::qpi::QpiPktMatch1,
    pmu_regs::xeon_e5_2600::qpi::QpiPktMask1,
>;
use pmu_runtime::sampling::uncore::{EventSelect, SamplePlan, Uncore, UncoreCounter};
use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent};
use pmu_runtime::{BackendError, Error, MsrAccessExt, PciAccessExt};

fn plan() -> SamplePlan {
    SamplePlan {
        counters: vec![
            (UncoreCounter::new("C1", 0), EventSelect::event(0x01), 100),
            (UncoreCounter::new("W", 2), EventSelect::event(0x02), 50),
        ],
        pmi_core: 1,
    }
}

/// The registers arming touches, as raw values.
fn uncore_state(sim: &Sim) -> Vec<u64> {
    let cpu = sim.on_cpu(0);
    vec![
        cpu.read_raw(ubox::U_MSR_PMON_GLOBAL_CTL).unwrap(),
        cpu.read_raw(cbox::C_MSR_PMON_GLOBAL_CTL[1]).unwrap(),
        cpu.read_raw(cbox::C_MSR_PMON_EVT_SEL[1][0]).unwrap(),
        cpu.read_raw(wbox::W_MSR_PMON_GLOBAL_CTL).unwrap(),
        cpu.read_raw(wbox::W_MSR_PMON_EVT_SEL[2]).unwrap(),
    ]
}

/// A machine someone else has programmed: W counter 0 counting, en_all set.
fn busy_sim() -> Sim {
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(0);
    cpu.write(
        wbox::W_MSR_PMON_EVT_SEL[0],
        wbox::WEvtSel::RESET.with_ev_sel(0x07).with_en(true),
    )
    .unwrap();
    cpu.write(
        wbox::W_MSR_PMON_GLOBAL_CTL,
        wbox::WGlobalCtl::RESET.with_ctr_en(1),
    )
    .unwrap();
    cpu.write(
        ubox::U_MSR_PMON_GLOBAL_CTL,
        ubox::UGlobalCtl::RESET.with_en_all(true),
    )
    .unwrap();
    sim
}

fn assert_names_register(e: &impl std::fmt::Display, op: &str) {
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("cannot {op} ")), "{msg}");
    assert!(
        msg.contains("_MSR_") || msg.contains("_PCI_") || msg.contains("IA32_"),
        "no register named: {msg}"
    );
}

#[test]
fn a_failed_arm_leaves_every_register_as_it_was() {
    // How many reads and writes a successful arm takes.
    let sim = busy_sim();
    let counting = Faulty::new(&sim, When::Read(usize::MAX), Fault::Eio);
    let uncore = Uncore::open(&counting, &NHM, 0, 0).unwrap();
    let session = uncore.arm(&plan()).unwrap();
    let (reads, writes) = counting.counts();
    drop(session);
    assert!(writes >= 6 && reads >= 6, "{reads} reads, {writes} writes");

    for fault in Fault::ALL {
        for n in 1..=writes {
            let sim = busy_sim();
            let before = uncore_state(&sim);
            let faulty = Faulty::new(&sim, When::Write(n), fault);
            let err = Uncore::open(&faulty, &NHM, 0, 0)
                .unwrap()
                .arm(&plan())
                .expect_err("the write fails");
            assert_names_register(&err, "write");
            assert_eq!(
                uncore_state(&sim),
                before,
                "write {n} failing with {fault:?} left registers changed"
            );
        }
        for n in 1..=reads {
            let sim = busy_sim();
            let before = uncore_state(&sim);
            let faulty = Faulty::new(&sim, When::Read(n), fault);
            let err = Uncore::open(&faulty, &NHM, 0, 0)
                .unwrap()
                .arm(&plan())
                .expect_err("the read fails");
            assert_names_register(&err, "read");
            assert_eq!(
                uncore_state(&sim),
                before,
                "read {n} failing with {fault:?} left registers changed"
            );
        }
    }
}

#[test]
fn when_undoing_fails_too_both_failures_are_reported() {
    let sim = busy_sim();
    let faulty = Faulty::new(&sim, When::WritesFrom(3), Fault::Eacces);
    let err = Uncore::open(&faulty, &NHM, 0, 0)
        .unwrap()
        .arm(&plan())
        .unwrap_err();
    assert!(matches!(err, Error::Cleanup { .. }), "{err}");
    insta::assert_snapshot!("cleanup_failed", err.to_string());
}

#[test]
fn a_failed_configure_leaves_the_counter_disabled() {
    let sim = busy_sim();
    let faulty = Faulty::new(&sim, When::Write(2), Fault::Eio);
    let before = uncore_state(&sim);
    assert!(Uncore::open(&faulty, &NHM, 0, 0)
        .unwrap()
        .configure(UncoreCounter::new("C1", 0), &EventSelect::event(1))
        .is_err());
    assert_eq!(uncore_state(&sim), before);
    // The events still count where they did before.
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: "W",
            ev_sel: 0x07,
            umask: None,
        },
        5,
    )
    .unwrap();
    assert_eq!(
        sim.on_cpu(0)
            .read(wbox::W_MSR_PMON_CTR[0])
            .unwrap()
            .event_count(),
        5
    );
}

#[test]
fn a_failed_filter_programming_leaves_the_counter_as_it_was() {
    let sim = Sim::new(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR));
    let devices = sim.uncore_devices();
    let ctl = devices.bdf(0, qpi::Q_P_PCI_PMON_CTL[0][0]).unwrap();
    for n in 1..=5 {
        let faulty = Faulty::new(&sim, When::Write(n), Fault::Enoent);
        let port = StandaloneBox::of(&faulty, &devices, 0, "P0").unwrap();
        let err = port.program_filter(0, &QpiFilter::default()).unwrap_err();
        assert_names_register(&err, "write");
        assert_eq!(
            sim.on_device(ctl)
                .read_raw(qpi::Q_P_PCI_PMON_CTL[0][0])
                .unwrap(),
            0,
            "write {n}: the counter was left programmed"
        );
    }
}

#[test]
fn a_64_bit_pci_write_never_leaves_half_a_value() {
    let sim = Sim::new(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR));
    let bdf = sim.uncore_devices().bdf(0, ha::HA_PCI_PMON_CTR[1]).unwrap();
    sim.on_device(bdf)
        .write_raw(ha::HA_PCI_PMON_CTR[1], 0x0000_1111_2222_3333)
        .unwrap();
    // The second write (the high dword) fails: the low dword must be put back.
    let faulty = Faulty::new(&sim, When::Write(2), Fault::Short);
    let err = faulty
        .on_device(bdf)
        .write_raw(ha::HA_PCI_PMON_CTR[1], 0x0000_4444_5555_6666)
        .unwrap_err();
    assert_names_register(&err, "write");
    assert_eq!(
        sim.on_device(bdf).read_raw(ha::HA_PCI_PMON_CTR[1]).unwrap(),
        0x0000_1111_2222_3333
    );
}

#[test]
fn a_64_bit_pci_write_by_name_takes_the_same_rolled_back_path() {
    // What `pmu write HA_PCI_PMON_CTR1 ...` does: resolve by name, then write by metadata.
    let at = Where {
        socket: Some(0),
        ..Where::default()
    };
    let value = |m: &Machine| {
        m.read(&m.resolve("HA_PCI_PMON_CTR1", &at).unwrap())
            .unwrap()
    };
    for kind in Fault::ALL {
        let machine = Machine::simulated(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR));
        let reg = machine.resolve("HA_PCI_PMON_CTR1", &at).unwrap();
        machine.write(&reg, 0x0000_1111_2222_3333).unwrap();
        // Write 1 is the low dword, write 2 the high one: failing the second must put the
        // first back.
        let sim = machine.with_fault(When::Write(2), kind);
        let err = sim.write(&reg, 0x0000_4444_5555_6666).unwrap_err();
        assert_names_register(&err, "write");
        assert_eq!(value(&sim), 0x0000_1111_2222_3333, "{kind:?}");
        // When putting it back fails too, both failures are reported.
        let machine = sim.with_fault(When::WritesFrom(2), kind);
        let err = machine.write(&reg, 0x0000_4444_5555_6666).unwrap_err();
        assert!(
            matches!(err, Error::Backend(BackendError::Unwound { .. })),
            "{err}"
        );
    }
}

#[test]
fn a_failed_core_arm_puts_the_event_select_and_global_control_back() {
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(0);
    let before = (
        cpu.read_raw(IA32_PERFEVTSEL[1]).unwrap(),
        cpu.read_raw(IA32_PERF_GLOBAL_CTRL).unwrap(),
    );
    for n in 1..=3 {
        let faulty = Faulty::new(&sim, When::Write(n), Fault::Eio);
        let pmu = CorePmu::new(&faulty, 0, sim.cpuid_0a()).unwrap();
        let err = pmu
            .arm(1, &CoreEventSelect::user(0x3C, 0), 1000)
            .unwrap_err();
        assert_names_register(&err, "write");
        let after = (
            cpu.read_raw(IA32_PERFEVTSEL[1]).unwrap(),
            cpu.read_raw(IA32_PERF_GLOBAL_CTRL).unwrap(),
        );
        assert_eq!(after, before, "write {n}");
    }
}

#[test]
fn two_threads_sampling_two_sockets_count_as_if_one_after_the_other() {
    // Each session owns its socket's uncore; two sessions share one simulator.
    let run = |sim: &Sim, socket: usize, instance: &'static str, ev_sel: u16| {
        let cpu = sim.topology().cpu_for_socket(socket as u32).unwrap();
        let uncore = Uncore::open(sim, &NHM, cpu, socket).unwrap();
        let c = UncoreCounter::new(instance, 0);
        uncore.configure(c, &EventSelect::event(ev_sel)).unwrap();
        uncore.start().unwrap();
        for k in 0..200 {
            sim.inject_uncore(
                socket,
                UncoreEvent {
                    instance,
                    ev_sel,
                    umask: None,
                },
                1 + k % 7,
            )
            .unwrap();
        }
        uncore.read_counter(c).unwrap()
    };
    let sequential = {
        let sim = Sim::new(SimConfig::default());
        (run(&sim, 0, "C1", 0x11), run(&sim, 1, "C6", 0x22))
    };
    let sim = Sim::new(SimConfig::default());
    let concurrent = std::thread::scope(|s| {
        let a = s.spawn(|| run(&sim, 0, "C1", 0x11));
        let b = s.spawn(|| run(&sim, 1, "C6", 0x22));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(concurrent, sequential);
    assert_eq!(sequential.0, (0..200u64).map(|k| 1 + k % 7).sum::<u64>());
}
