//! Each behaviour of the simulated PMU, through the same public traits as the real backends.

use pmu_regs::arch::core::*;
use pmu_regs::xeon_7500::{cbox, rbox, ubox, wbox};
use pmu_regs::xeon_e5_2600::{ha, qpi};
use pmu_runtime::sim::{ArchConfig, PciEvent, PmiSource, QpiPacket, Sim, SimConfig, UncoreEvent};
use pmu_runtime::{AccessError, MsrAccess, MsrAccessExt, PciAccess, PciAccessExt};

const TOP: u64 = 1 << 48;

/// CTO_COUNT, the QPI event that counts the packets the match/mask filters accept.
const CTO_COUNT: u8 = 0x38;

fn e5() -> Sim {
    Sim::new(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR))
}

fn w_event(ev_sel: u16) -> UncoreEvent {
    UncoreEvent {
        instance: "W",
        ev_sel,
        umask: None,
    }
}

/// W-box counter 0 counting event 0x02, with the given enables.
fn program_w(sim: &Sim, en: bool, ctr_en: bool, en_all: bool) {
    let cpu = sim.on_cpu(0);
    cpu.write(
        wbox::W_MSR_PMON_EVT_SEL[0],
        wbox::WEvtSel::RESET.with_ev_sel(0x02).with_en(en),
    )
    .unwrap();
    cpu.write(
        wbox::W_MSR_PMON_GLOBAL_CTL,
        wbox::WGlobalCtl::RESET.with_ctr_en(u8::from(ctr_en)),
    )
    .unwrap();
    cpu.write(
        ubox::U_MSR_PMON_GLOBAL_CTL,
        ubox::UGlobalCtl::RESET.with_en_all(en_all),
    )
    .unwrap();
}

fn w_count(sim: &Sim) -> u64 {
    sim.on_cpu(0)
        .read(wbox::W_MSR_PMON_CTR[0])
        .unwrap()
        .event_count()
}

#[test]
fn counters_advance_only_when_enabled_at_counter_box_and_global_level() {
    for (en, ctr_en, en_all) in [
        (false, true, true),
        (true, false, true),
        (true, true, false),
    ] {
        let sim = Sim::new(SimConfig::default());
        program_w(&sim, en, ctr_en, en_all);
        sim.inject_uncore(0, w_event(0x02), 100).unwrap();
        assert_eq!(
            w_count(&sim),
            0,
            "counted with en={en} ctr_en={ctr_en} en_all={en_all}"
        );
    }
    let sim = Sim::new(SimConfig::default());
    program_w(&sim, true, true, true);
    sim.inject_uncore(0, w_event(0x02), 100).unwrap();
    sim.inject_uncore(0, w_event(0x03), 50).unwrap(); // another event: not counted
    assert_eq!(w_count(&sim), 100);
    // Socket 1 (CPUs 2-3) has its own uncore.
    assert_eq!(
        sim.on_cpu(2)
            .read(wbox::W_MSR_PMON_CTR[0])
            .unwrap()
            .event_count(),
        0
    );
}

#[test]
fn umask_is_compared_where_the_control_has_one() {
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(0);
    cpu.write(
        cbox::C_MSR_PMON_EVT_SEL[3][1],
        cbox::CEvtSel::RESET
            .with_ev_sel(0x11)
            .with_umask(0x04)
            .with_en(true),
    )
    .unwrap();
    cpu.write(
        cbox::C_MSR_PMON_GLOBAL_CTL[3],
        cbox::CGlobalCtl::RESET.with_ctr_en(0b10),
    )
    .unwrap();
    cpu.write(
        ubox::U_MSR_PMON_GLOBAL_CTL,
        ubox::UGlobalCtl::RESET.with_en_all(true),
    )
    .unwrap();
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: "C3",
            ev_sel: 0x11,
            umask: Some(0x01),
        },
        7,
    )
    .unwrap();
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: "C3",
            ev_sel: 0x11,
            umask: Some(0x04),
        },
        9,
    )
    .unwrap();
    assert_eq!(
        cpu.read(cbox::C_MSR_PMON_CTR[3][1]).unwrap().event_count(),
        9
    );
}

#[test]
fn counters_are_48_bits_and_wrap_with_a_carry_out_of_bit_47() {
    let sim = Sim::new(SimConfig::default());
    program_w(&sim, true, true, true);
    let cpu = sim.on_cpu(0);
    cpu.write(
        wbox::W_MSR_PMON_CTR[0],
        wbox::WCtr::RESET.with_event_count(TOP - 10),
    )
    .unwrap();
    sim.inject_uncore(0, w_event(0x02), 9).unwrap();
    assert_eq!(
        cpu.read(wbox::W_MSR_PMON_GLOBAL_STATUS).unwrap().ov(),
        0,
        "no overflow before the carry"
    );
    sim.inject_uncore(0, w_event(0x02), 6).unwrap();
    assert_eq!(w_count(&sim), 5, "wrapped and continued");
    assert_eq!(
        cpu.read(wbox::W_MSR_PMON_GLOBAL_STATUS).unwrap().ov(),
        0b0001
    );
    assert!(cpu.read(ubox::U_MSR_PMON_GLOBAL_STATUS).unwrap().ov_w());
    // A write beyond 48 bits faults like the hardware.
    let err = sim
        .write_msr(0, wbox::W_MSR_PMON_CTR[0].address(), TOP)
        .unwrap_err();
    assert!(matches!(err.access_kind(), Some(AccessError::Rejected)));
}

#[test]
fn reserved_bits_fault_and_ignored_bits_read_as_zero() {
    let sim = Sim::new(SimConfig::default());
    let addr = wbox::W_MSR_PMON_EVT_SEL[0].address();
    // Bit 50 is rsv (must write zero): #GP, reported as the msr driver's EIO.
    let err = sim.write_msr(0, addr, 1 << 50).unwrap_err();
    assert!(matches!(err.access_kind(), Some(AccessError::Rejected)));
    assert!(err.to_string().contains("#GP"), "{err}");
    // Bit 63 is ig: accepted, and reads back as zero.
    sim.write_msr(0, addr, 1 << 63 | 0x42).unwrap();
    assert_eq!(sim.read_msr(0, addr).unwrap(), 0x42);
    // An MSR the model does not have faults too.
    assert!(matches!(
        sim.read_msr(0, 0x1234).unwrap_err().access_kind(),
        Some(AccessError::Rejected)
    ));
    // A CPU that does not exist has no device file.
    assert!(matches!(
        sim.read_msr(9, addr).unwrap_err().access_kind(),
        Some(AccessError::NoMsrDevice { .. })
    ));
}

/// Arms C-box `c` counter 0 for a PMI after `n` events of 0x01, with frz_all.
fn arm(sim: &Sim, instance: &str, n: u64) {
    let cpu = sim.on_cpu(0);
    let i: usize = instance[1..].parse().unwrap();
    cpu.write(
        cbox::C_MSR_PMON_EVT_SEL[i][0],
        cbox::CEvtSel::RESET
            .with_ev_sel(0x01)
            .with_pmi_en(true)
            .with_en(true),
    )
    .unwrap();
    cpu.write(
        cbox::C_MSR_PMON_CTR[i][0],
        cbox::CCtr::RESET.with_event_count(TOP - n),
    )
    .unwrap();
    cpu.write(
        cbox::C_MSR_PMON_GLOBAL_CTL[i],
        cbox::CGlobalCtl::RESET.with_ctr_en(1),
    )
    .unwrap();
}

fn enable_all(sim: &Sim, core: u8) {
    let u = ubox::UGlobalCtl::RESET
        .with_frz_all(true)
        .with_pmi_core_sel(core)
        .with_en_all(true);
    sim.on_cpu(0).write(ubox::U_MSR_PMON_GLOBAL_CTL, u).unwrap();
}

fn c_event(instance: &'static str) -> UncoreEvent {
    UncoreEvent {
        instance,
        ev_sel: 0x01,
        umask: None,
    }
}

#[test]
fn an_overflow_walks_up_the_hierarchy() {
    let sim = Sim::new(SimConfig::default());
    arm(&sim, "C5", 3);
    enable_all(&sim, 2);
    sim.inject_uncore(0, c_event("C5"), 3).unwrap();
    let cpu = sim.on_cpu(0);
    assert_eq!(cpu.read(cbox::C_MSR_PMON_GLOBAL_STATUS[5]).unwrap().ov(), 1);
    // Only S1's summary has a bit set (S0's has none).
    assert_eq!(
        sim.hidden_bits(0).unwrap(),
        vec!["S1_MSR_PMON_SUMMARY.ov_c_l"]
    );
    let u = cpu.read(ubox::U_MSR_PMON_GLOBAL_STATUS).unwrap();
    assert!(u.ov_s1() && !u.ov_s0() && !u.ov_w() && !u.ov_u());
    // Clearing the box's bit clears what sits above it.
    cpu.write(
        cbox::C_MSR_PMON_GLOBAL_OVF_CTL[5],
        cbox::CGlobalOvfCtl::RESET.with_clr_ov(1),
    )
    .unwrap();
    assert_eq!(cpu.read(cbox::C_MSR_PMON_GLOBAL_STATUS[5]).unwrap().ov(), 0);
    assert!(!cpu.read(ubox::U_MSR_PMON_GLOBAL_STATUS).unwrap().ov_s1());
    assert!(sim.hidden_bits(0).unwrap().is_empty());
}

#[test]
fn pmi_and_freeze_come_on_the_overflowing_event_then_after_the_skew() {
    let skew = 3;
    let sim = Sim::new(SimConfig {
        freeze_skew: skew,
        ..SimConfig::default()
    });
    arm(&sim, "C0", 1000);
    enable_all(&sim, 5);
    let cpu = sim.on_cpu(0);
    sim.inject_uncore(0, c_event("C0"), 999).unwrap();
    assert!(sim.pmis().is_empty(), "no PMI on the 999th event");
    assert!(!sim.uncore_pmi_pending(0).unwrap());
    sim.inject_uncore(0, c_event("C0"), 100).unwrap();
    let pmis = sim.pmis();
    assert_eq!(pmis.len(), 1);
    assert_eq!(pmis[0].event, 1000, "the PMI is raised by the 1000th event");
    assert_eq!(pmis[0].core, Some(5), "delivered to pmi_core_sel");
    assert_eq!(
        pmis[0].source,
        PmiSource::Uncore {
            socket: 0,
            instance: "C0",
            counter: "C0_MSR_PMON_CTR0"
        }
    );
    assert!(sim.uncore_pmi_pending(0).unwrap());
    // The counter kept counting for `skew` events after the wrap, then en_all dropped.
    assert_eq!(
        cpu.read(cbox::C_MSR_PMON_CTR[0][0]).unwrap().event_count(),
        skew
    );
    assert!(!cpu.read(ubox::U_MSR_PMON_GLOBAL_CTL).unwrap().en_all());
    sim.acknowledge_uncore_pmi(0).unwrap();
    assert!(!sim.uncore_pmi_pending(0).unwrap());
}

#[test]
fn without_frz_all_the_pmi_does_not_freeze() {
    let sim = Sim::new(SimConfig::default());
    arm(&sim, "C1", 2);
    sim.on_cpu(0)
        .write(
            ubox::U_MSR_PMON_GLOBAL_CTL,
            ubox::UGlobalCtl::RESET.with_en_all(true),
        )
        .unwrap();
    sim.inject_uncore(0, c_event("C1"), 10).unwrap();
    assert_eq!(sim.pmis().len(), 1);
    assert!(sim
        .on_cpu(0)
        .read(ubox::U_MSR_PMON_GLOBAL_CTL)
        .unwrap()
        .en_all());
    assert_eq!(
        sim.on_cpu(0)
            .read(cbox::C_MSR_PMON_CTR[1][0])
            .unwrap()
            .event_count(),
        8
    );
}

#[test]
fn r_box_halves_report_to_different_s_boxes() {
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(0);
    cpu.write(
        rbox::R_MSR_PMON_CTL[9],
        rbox::RCtl::RESET.with_ev_sel(0x04).with_en(true),
    )
    .unwrap();
    cpu.write(
        rbox::R_MSR_PMON_CTR[9],
        rbox::RCtr::RESET.with_event_count(TOP - 1),
    )
    .unwrap();
    cpu.write(
        rbox::R_MSR_PMON_GLOBAL_CTL_15_8,
        rbox::RGlobalCtlHi::RESET.with_ctr_en(0b10),
    )
    .unwrap();
    cpu.write(
        ubox::U_MSR_PMON_GLOBAL_CTL,
        ubox::UGlobalCtl::RESET.with_en_all(true),
    )
    .unwrap();
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: "R",
            ev_sel: 0x04,
            umask: None,
        },
        1,
    )
    .unwrap();
    assert_eq!(
        cpu.read(rbox::R_MSR_PMON_GLOBAL_STATUS_15_8).unwrap().ov(),
        0b10
    );
    assert_eq!(
        sim.hidden_bits(0).unwrap(),
        vec!["S1_MSR_PMON_SUMMARY.ov_r"]
    );
    assert!(cpu.read(ubox::U_MSR_PMON_GLOBAL_STATUS).unwrap().ov_s1());
}

#[test]
fn rst_all_resets_the_uncore() {
    let sim = Sim::new(SimConfig::default());
    program_w(&sim, true, true, true);
    sim.inject_uncore(0, w_event(0x02), 10).unwrap();
    let cpu = sim.on_cpu(0);
    cpu.write(
        ubox::U_MSR_PMON_GLOBAL_CTL,
        ubox::UGlobalCtl::RESET.with_rst_all(true),
    )
    .unwrap();
    assert_eq!(w_count(&sim), 0);
    assert_eq!(
        cpu.read(wbox::W_MSR_PMON_EVT_SEL[0]).unwrap(),
        wbox::WEvtSel::RESET
    );
}

#[test]
fn w_fixed_counter_counts_uncore_clocks() {
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(0);
    cpu.write(
        wbox::W_MSR_PMON_FIXED_CTR_CTL,
        wbox::WFixedCtrCtl::RESET.with_en(true),
    )
    .unwrap();
    cpu.write(
        wbox::W_MSR_PMON_GLOBAL_CTL,
        wbox::WGlobalCtl::RESET.with_fixed_en(true),
    )
    .unwrap();
    cpu.write(
        ubox::U_MSR_PMON_GLOBAL_CTL,
        ubox::UGlobalCtl::RESET.with_en_all(true),
    )
    .unwrap();
    sim.inject_uncore(0, w_event(0xFF), 1234).unwrap();
    assert_eq!(
        cpu.read(wbox::W_MSR_PMON_FIXED_CTR).unwrap().event_count(),
        1234
    );
}

fn ha_bdf(sim: &Sim, socket: usize) -> pmu_runtime::pci::Bdf {
    sim.uncore_devices()
        .bdf(socket, ha::HA_PCI_PMON_BOX_CTL)
        .unwrap()
}

#[test]
fn e5_box_freeze_and_resets() {
    let sim = e5();
    let dev = sim.on_device(ha_bdf(&sim, 0));
    dev.write(
        ha::HA_PCI_PMON_CTL[0],
        ha::HaCtl::RESET
            .with_ev_sel(0x01)
            .with_umask(0x03)
            .with_en(true),
    )
    .unwrap();
    let ev = PciEvent {
        instance: "HA",
        ev_sel: 0x01,
        umask: Some(0x03),
    };
    sim.inject_pci(0, ev, 10).unwrap();
    assert_eq!(dev.read(ha::HA_PCI_PMON_CTR[0]).unwrap().event_count(), 10);

    // frz without frz_en does nothing; with it the box stops. Both bits read back as zero.
    dev.write(ha::HA_PCI_PMON_BOX_CTL, ha::HaBoxCtl::RESET.with_frz(true))
        .unwrap();
    sim.inject_pci(0, ev, 5).unwrap();
    assert_eq!(dev.read(ha::HA_PCI_PMON_CTR[0]).unwrap().event_count(), 15);
    dev.write(
        ha::HA_PCI_PMON_BOX_CTL,
        ha::HaBoxCtl::RESET.with_frz_en(true).with_frz(true),
    )
    .unwrap();
    assert_eq!(
        dev.read_raw(ha::HA_PCI_PMON_BOX_CTL).unwrap(),
        0,
        "write-only bits read as zero"
    );
    assert!(sim.is_frozen(0, "HA").unwrap());
    sim.inject_pci(0, ev, 5).unwrap();
    assert_eq!(dev.read(ha::HA_PCI_PMON_CTR[0]).unwrap().event_count(), 15);

    // The freeze signal stops a box with frz_en even when frz is clear.
    dev.write(
        ha::HA_PCI_PMON_BOX_CTL,
        ha::HaBoxCtl::RESET.with_frz_en(true),
    )
    .unwrap();
    sim.inject_pci(0, ev, 1).unwrap();
    sim.set_freeze_signal(0, true).unwrap();
    sim.inject_pci(0, ev, 100).unwrap();
    assert_eq!(dev.read(ha::HA_PCI_PMON_CTR[0]).unwrap().event_count(), 16);
    sim.set_freeze_signal(0, false).unwrap();

    // rst_ctrs zeroes the counters, rst_ctrl the controls.
    dev.write(
        ha::HA_PCI_PMON_BOX_CTL,
        ha::HaBoxCtl::RESET.with_rst_ctrs(true),
    )
    .unwrap();
    assert_eq!(dev.read(ha::HA_PCI_PMON_CTR[0]).unwrap().event_count(), 0);
    dev.write(
        ha::HA_PCI_PMON_BOX_CTL,
        ha::HaBoxCtl::RESET.with_rst_ctrl(true),
    )
    .unwrap();
    assert_eq!(dev.read(ha::HA_PCI_PMON_CTL[0]).unwrap(), ha::HaCtl::RESET);
}

#[test]
fn qpi_counter_reset_bit_and_48_bit_wrap() {
    let sim = e5();
    let bdf = sim
        .uncore_devices()
        .bdf(1, qpi::Q_P_PCI_PMON_CTL[1][2])
        .unwrap();
    let dev = sim.on_device(bdf);
    dev.write(
        qpi::Q_P_PCI_PMON_CTL[1][2],
        qpi::QpiCtl::RESET.with_ev_sel(0x14).with_en(true),
    )
    .unwrap();
    dev.write(
        qpi::Q_P_PCI_PMON_CTR[1][2],
        qpi::QpiCtr::RESET.with_event_count(TOP - 2),
    )
    .unwrap();
    sim.inject_pci(
        1,
        PciEvent {
            instance: "P1",
            ev_sel: 0x14,
            umask: None,
        },
        5,
    )
    .unwrap();
    assert_eq!(
        dev.read(qpi::Q_P_PCI_PMON_CTR[1][2]).unwrap().event_count(),
        3
    );
    assert_eq!(sim.pci_overflows(1), vec![("Q_P1_PCI_PMON_CTR2", 2)]);
    dev.modify(qpi::Q_P_PCI_PMON_CTL[1][2], |c| c.with_rst(true))
        .unwrap();
    assert_eq!(
        dev.read(qpi::Q_P_PCI_PMON_CTR[1][2]).unwrap().event_count(),
        0
    );
    assert!(
        dev.read(qpi::Q_P_PCI_PMON_CTL[1][2]).unwrap().en(),
        "rst does not disable"
    );
}

#[test]
fn qpi_match_mask_counts_only_matching_packets_with_cto_count() {
    let sim = e5();
    let devices = sim.uncore_devices();
    let filter = sim.on_device(devices.bdf(0, qpi::Q_P_PCI_PMON_PKT_MATCH0[0]).unwrap());
    let counters = sim.on_device(devices.bdf(0, qpi::Q_P_PCI_PMON_CTL[0][0]).unwrap());
    // Match opcode 0x3 in message class 0x2, any destination.
    filter
        .write(
            qpi::Q_P_PCI_PMON_PKT_MATCH0[0],
            qpi::QpiPktMatch0::RESET.with_opc(0x3).with_mc(0x2),
        )
        .unwrap();
    filter
        .write(
            qpi::Q_P_PCI_PMON_PKT_MASK0[0],
            qpi::QpiPktMask0::RESET.with_opc(0xF).with_mc(0xF),
        )
        .unwrap();
    // Counter 1 selects 0x38 without the extension bit: that is not CTO_COUNT.
    counters
        .write(
            qpi::Q_P_PCI_PMON_CTL[0][1],
            qpi::QpiCtl::RESET.with_ev_sel(CTO_COUNT).with_en(true),
        )
        .unwrap();
    counters
        .write(
            qpi::Q_P_PCI_PMON_CTL[0][0],
            qpi::QpiCtl::RESET
                .with_event(qpi::Event::CTO_COUNT)
                .with_en(true),
        )
        .unwrap();
    let packet = |opc, mc, dnid| QpiPacket {
        word0: qpi::QpiPktMatch0::RESET
            .with_opc(opc)
            .with_mc(mc)
            .with_dnid(dnid)
            .bits(),
        word1: 0,
    };
    sim.inject_qpi_packet(0, "P0", packet(0x3, 0x2, 7), 4)
        .unwrap();
    sim.inject_qpi_packet(0, "P0", packet(0x3, 0x2, 1), 1)
        .unwrap();
    sim.inject_qpi_packet(0, "P0", packet(0x4, 0x2, 7), 10)
        .unwrap();
    sim.inject_qpi_packet(0, "P0", packet(0x3, 0x1, 7), 10)
        .unwrap();
    sim.inject_qpi_packet(0, "P1", packet(0x3, 0x2, 7), 10)
        .unwrap();
    assert_eq!(
        counters
            .read(qpi::Q_P_PCI_PMON_CTR[0][0])
            .unwrap()
            .event_count(),
        5
    );
}

#[test]
fn pci_accesses_to_a_missing_device_fail_like_sysfs() {
    let sim = Sim::new(SimConfig {
        sockets: 1,
        ..SimConfig::default()
    });
    let err = sim
        .read_dword("0000:7f:0e.1".parse().unwrap(), 0xF4)
        .unwrap_err();
    assert!(matches!(
        err.access_kind(),
        Some(AccessError::NoPciDevice { .. })
    ));
}

#[test]
fn legacy_pmc_writes_sign_extend_bit_31_and_full_width_writes_do_not() {
    let sim = e5();
    let cpu = sim.on_cpu(0);
    cpu.write(IA32_PMC[0], Ia32Pmc::RESET.with_count(0x8000_0000))
        .unwrap();
    assert_eq!(
        cpu.read(IA32_PMC[0]).unwrap().count(),
        0xFFFF_8000_0000,
        "sign-extended to 48 bits"
    );
    cpu.write(IA32_PMC[1], Ia32Pmc::RESET.with_count(0x7FFF_FFFF))
        .unwrap();
    assert_eq!(cpu.read(IA32_PMC[1]).unwrap().count(), 0x7FFF_FFFF);
    cpu.write(
        IA32_A_PMC[0],
        Ia32APmc::RESET.with_count(0x0000_1234_8000_0000),
    )
    .unwrap();
    assert_eq!(
        cpu.read(IA32_PMC[0]).unwrap().count(),
        0x0000_1234_8000_0000,
        "the alias is the same counter"
    );
    // Beyond the counter width: #GP.
    assert!(cpu
        .write(IA32_A_PMC[0], Ia32APmc::RESET.with_count(1 << 48))
        .is_err());
}

#[test]
fn fw_write_decides_whether_the_full_width_aliases_exist() {
    let sim = Sim::new(SimConfig {
        arch: ArchConfig {
            fw_write: false,
            ..ArchConfig::default()
        },
        ..SimConfig::default()
    });
    let cpu = sim.on_cpu(0);
    assert!(!cpu.read(IA32_PERF_CAPABILITIES).unwrap().fw_write());
    let err = cpu.read(IA32_A_PMC[0]).unwrap_err();
    assert!(
        matches!(err.access_kind(), Some(AccessError::Rejected)),
        "{err}"
    );
    let sim = Sim::new(SimConfig::default());
    assert!(sim
        .on_cpu(0)
        .read(IA32_PERF_CAPABILITIES)
        .unwrap()
        .fw_write());
}

#[test]
fn counters_beyond_cpuid_do_not_exist() {
    let sim = Sim::new(SimConfig::default()); // 4 general-purpose counters
    assert_eq!(sim.cpuid_0a().eax >> 8 & 0xFF, 4);
    assert_eq!(sim.cpuid_0a().eax >> 16 & 0xFF, 48);
    let cpu = sim.on_cpu(0);
    assert!(cpu.read(IA32_PMC[3]).is_ok());
    assert!(cpu.read(IA32_PMC[4]).is_err());
    assert!(cpu
        .write(IA32_PERFEVTSEL[5], Ia32PerfEvtSel::RESET)
        .is_err());
    // Enabling counter 6 in the global control faults on a CPU with 4.
    assert!(cpu
        .write(
            IA32_PERF_GLOBAL_CTRL,
            Ia32PerfGlobalCtrl::RESET.with_pmc_en(6, true)
        )
        .is_err());
}

#[test]
fn global_inuse_reflects_event_selects_fixed_control_and_pmi_enables() {
    let sim = Sim::new(SimConfig {
        arch: ArchConfig {
            version: 4,
            ..ArchConfig::default()
        },
        ..SimConfig::default()
    });
    let cpu = sim.on_cpu(0);
    let inuse = || cpu.read(IA32_PERF_GLOBAL_INUSE).unwrap();
    assert_eq!(inuse().bits(), 0);
    // Event select bits 7:0 non-zero marks the counter in use, enabled or not.
    cpu.write(IA32_PERFEVTSEL[2], Ia32PerfEvtSel::RESET.with_ev_sel(0xC0))
        .unwrap();
    assert!(inuse().perfevtsel_in_use(2) && !inuse().perfevtsel_in_use(0));
    // A umask alone does not.
    cpu.write(IA32_PERFEVTSEL[0], Ia32PerfEvtSel::RESET.with_umask(0x01))
        .unwrap();
    assert!(!inuse().perfevtsel_in_use(0));
    cpu.write(
        IA32_FIXED_CTR_CTRL,
        Ia32FixedCtrCtrl::RESET.with_en1(Ia32FixedCtrCtrlEn1::Usr),
    )
    .unwrap();
    assert!(inuse().fc1_in_use() && !inuse().fc0_in_use() && !inuse().pmi_in_use());
    cpu.write(IA32_PERFEVTSEL[0], Ia32PerfEvtSel::RESET.with_int(true))
        .unwrap();
    assert!(inuse().pmi_in_use());
    cpu.write(IA32_PERFEVTSEL[0], Ia32PerfEvtSel::RESET)
        .unwrap();
    cpu.modify(IA32_FIXED_CTR_CTRL, |c| c.with_en0_pmi(true))
        .unwrap();
    assert!(inuse().pmi_in_use() && !inuse().fc0_in_use());
    // The register is read-only.
    assert!(cpu.write_raw(IA32_PERF_GLOBAL_INUSE, 0).is_err());
    // Version 3 processors do not have it.
    let v3 = Sim::new(SimConfig::default());
    assert!(v3.on_cpu(0).read(IA32_PERF_GLOBAL_INUSE).is_err());
}

#[test]
fn core_counters_overflow_into_global_status_and_raise_a_pmi() {
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(1);
    cpu.write(
        IA32_PERFEVTSEL[1],
        Ia32PerfEvtSel::RESET
            .with_ev_sel(0x3C)
            .with_int(true)
            .with_en(true),
    )
    .unwrap();
    cpu.write(IA32_A_PMC[1], Ia32APmc::RESET.with_count(TOP - 5))
        .unwrap();
    // Not enabled globally: nothing counts.
    sim.inject_core(1, 0x3C, 0, 10).unwrap();
    assert_eq!(cpu.read(IA32_PMC[1]).unwrap().count(), TOP - 5);
    cpu.write(
        IA32_PERF_GLOBAL_CTRL,
        Ia32PerfGlobalCtrl::RESET.with_pmc_en(1, true),
    )
    .unwrap();
    sim.inject_core(1, 0x3C, 0, 10).unwrap();
    assert_eq!(cpu.read(IA32_PMC[1]).unwrap().count(), 5);
    assert!(cpu.read(IA32_PERF_GLOBAL_STATUS).unwrap().ovf_pmc(1));
    let pmis = sim.pmis();
    assert_eq!(pmis.len(), 1);
    assert_eq!(
        pmis[0].event, 15,
        "the 5th of the second 10 events, the 15th injected"
    );
    // Status is read-only; the overflow-control register clears it.
    sim.write_msr(1, IA32_PERF_GLOBAL_STATUS.address(), 0)
        .unwrap_err();
    cpu.write(
        IA32_PERF_GLOBAL_OVF_CTRL,
        Ia32PerfGlobalOvfCtrl::RESET.with_clr_ovf_pmc(1, true),
    )
    .unwrap();
    assert!(!cpu.read(IA32_PERF_GLOBAL_STATUS).unwrap().ovf_pmc(1));
}

#[test]
fn fixed_counters_count_when_enabled_in_both_controls() {
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(0);
    cpu.write(
        IA32_FIXED_CTR_CTRL,
        Ia32FixedCtrCtrl::RESET.with_en2(Ia32FixedCtrCtrlEn2::All),
    )
    .unwrap();
    sim.inject_fixed(0, 2, 100).unwrap();
    assert_eq!(cpu.read(IA32_FIXED_CTR[2]).unwrap().count(), 0);
    cpu.write(
        IA32_PERF_GLOBAL_CTRL,
        Ia32PerfGlobalCtrl::RESET.with_en_fixed_ctr2(true),
    )
    .unwrap();
    sim.inject_fixed(0, 2, 100).unwrap();
    assert_eq!(cpu.read(IA32_FIXED_CTR[2]).unwrap().count(), 100);
}

#[test]
fn the_simulator_is_deterministic() {
    let run = || {
        let sim = Sim::new(SimConfig {
            freeze_skew: 2,
            ..SimConfig::default()
        });
        arm(&sim, "C2", 7);
        arm(&sim, "C6", 11);
        enable_all(&sim, 1);
        for _ in 0..5 {
            sim.inject_uncore(0, c_event("C2"), 3).unwrap();
            sim.inject_uncore(0, c_event("C6"), 4).unwrap();
        }
        (sim.pmis(), sim.events_injected())
    };
    assert_eq!(run(), run());
}

#[test]
fn unknown_boxes_and_sockets_are_errors() {
    let sim = Sim::new(SimConfig::default());
    let e = sim
        .inject_uncore(0, c_event("C9"), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no box C9"), "{e}");
    assert!(sim.inject_uncore(5, c_event("C0"), 1).is_err());
    assert!(sim
        .inject_pci(
            0,
            PciEvent {
                instance: "X",
                ev_sel: 0,
                umask: None
            },
            1
        )
        .is_err());
}
