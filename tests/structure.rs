//! The PMU structure in the generated crate: every counter of every box of every processor
//! resolves to real registers and role fields, every route reaches its processor's global
//! status, and the role traits program a counter without field names.

mod support;

use pmu_regs::{
    xeon_7500, xeon_e5_2600, BoxControl, CounterControl, CounterKind, CounterValue, PmuInfo, Role,
    RoleAccess, Scope, PROCESSORS,
};

fn pmus() -> impl Iterator<
    Item = (
        &'static pmu_regs::ProcessorInfo,
        &'static pmu_regs::UnitInfo,
        &'static PmuInfo,
    ),
> {
    PROCESSORS.iter().flat_map(|p| {
        p.units
            .iter()
            .filter_map(move |u| u.pmu.map(|pmu| (*p, *u, pmu)))
    })
}

#[test]
fn every_unit_declares_its_structure() {
    let layouts_only: Vec<_> = PROCESSORS
        .iter()
        .filter(|p| support::layouts_only(p))
        .map(|p| p.id)
        .collect();
    // The rule itself, checked against what each of these processors is.
    assert_eq!(layouts_only, ["arm-cmn-700", "apmt", "discovery"]);
    for p in PROCESSORS.iter().filter(|p| !support::layouts_only(p)) {
        for u in p.units {
            assert!(u.pmu.is_some(), "{}:{} has no <pmu>", p.id, u.name);
        }
    }
    // 7 + 8 + 9 + 10 + 10 + 10 + 10 + 10 + 1 units, Sapphire Rapids' and Emerald Rapids' 8 each,
    // Granite Rapids' 10 (its PCU, B2UPI and B2CXL placed by the discovery table) and the same
    // 10 of Sierra and Clearwater Forest (units-from), and AMD
    // Zen 2 to 6: 3 + 3 + 4 + 4 + 4 (Zen 6 has Zen 5's, units-from); the free-running units: the IIO's of Skylake-SP and Cascade
    // Lake, the IIO's and iMC's of Ice Lake-SP, and of Sapphire and Emerald Rapids, the IIO's
    // of Granite Rapids, Sierra Forest and Clearwater Forest; the Arm Neoverse core PMU of the
    // V2, N2, V3, N3, N1 and V1: 6; Diamond Rapids' CBO (placed by its CBB table): 1; NVIDIA
    // Grace's SCF PMU: 1.
    assert_eq!(
        pmus().count(),
        75 + 8 * 2 + 10 * 3 + 14 + 4 + 4 + 2 + 2 + 3 + 6 + 1 + 1
    );
}

#[test]
fn every_counter_of_every_box_resolves() {
    let mut counters = 0;
    for (p, u, pmu) in pmus() {
        assert_eq!((pmu.processor, pmu.unit), (p.id, u.name));
        for c in pmu.counters {
            let what = format!("{}:{} counter {}", p.id, u.name, c.number);
            let count = c
                .count_bits()
                .unwrap_or_else(|| panic!("{what}: no count field"));
            assert_eq!(count.width, c.width, "{what}");
            assert!(
                u.registers
                    .iter()
                    .any(|r| std::ptr::eq(*r, c.counter.register)),
                "{what}"
            );
            match c.kind {
                CounterKind::FreeRunning => assert!(c.control.is_none(), "{what}"),
                kind => {
                    let enable = c
                        .control_bits(Role::Enable)
                        .or(c.control_bits(Role::RingEnable));
                    // Or a counter-enable bit of the box names it (Arm's PMCNTENSET_EL0).
                    let by_box = u.registers.iter().flat_map(|r| r.fields).any(|f| {
                        f.role == Some(Role::CounterEnable) && f.counters.contains(&c.number)
                    });
                    assert!(enable.is_some() || by_box, "{what}: no enable");
                    assert_eq!(
                        kind == CounterKind::General,
                        c.control_bits(Role::Event).is_some(),
                        "{what}"
                    );
                }
            }
            for &instance in u.instances {
                if c.counter.register.known_addresses().is_empty() {
                    continue;
                }
                let addr = c
                    .counter
                    .address(instance)
                    .unwrap_or_else(|| panic!("{what} in {instance}"));
                assert_eq!(addr.instance, instance);
                if let Some(ctl) = c.control {
                    assert!(
                        ctl.address(instance).is_some(),
                        "{what}: control of {instance}"
                    );
                }
                counters += 1;
            }
            // A box with bitmaps has a bit for each counter in each of them. Not every box has
            // all three: the E5-2600 v2 boxes have an overflow status but no counter-enable
            // bitmap, and their RW1C status is its own clear (no overflow-clear register).
            if !pmu.statuses.is_empty() && c.kind != CounterKind::FreeRunning {
                for role in [Role::CounterEnable, Role::Overflow, Role::OverflowClear] {
                    let box_has_role = pmu
                        .counters
                        .iter()
                        .any(|other| pmu.box_bit(role, other.number).is_some());
                    if box_has_role || role == Role::Overflow {
                        assert!(pmu.box_bit(role, c.number).is_some(), "{what}: {role:?}");
                    }
                }
            }
        }
    }
    // Counters over all box instances: Xeon 7500 (U 1, W 5, B 4*2, C 6*8, M 6*2, R 16,
    // S 4*2 = 98), E5-2600 (C 4*8, HA 4, iMC 5*4, PCU 6, QPI 4*2, R2PCIe 4, R3QPI 3*2, U 3 =
    // 83), E5-2600 v2 (C 4*15, HA 4*2, iMC 5*8, IRP 4, PCU 6, QPI 4*3, R2PCIe 4,
    // R3QPI 3*3, U 3 = 146), E5-2600 v3 (C 4*18, S 4*4, U 3, PCU 6, HA 4*2, iMC 5*8, IRP 4,
    // QPI 4*3, R2PCIe 4, R3QPI 3*3 = 174), v4 (as v3 with 24 C-boxes = 198), Skylake-SP and
    // Cascade Lake each (U 3, CHA 4*28, IIO 4*6, IRP 2*6, PCU 4, iMC 5*6, M2M 4*2, UPI 4*3,
    // M3UPI 3*3, M2PCIe 4*4 = 230), Ice Lake-SP (U 3, CHA 4*40, IIO 4*6, IRP 2*6, M2PCIe 4*6, PCU 4,
    // M2M 4*4, UPI 4*3, M3UPI 4*3, memory-mapped iMC 5*12 = 327), core 14 (8 general, fixed
    // 0-2 and Clearwater Forest's fixed 4-6), Sapphire Rapids
    // (CHA 4*60, U 2, IIO 4*12, IRP 2*12, UPI 4*4, M3UPI 4*4, M2M 4*4, memory-mapped iMC
    // 5*8 = 402) and Emerald Rapids (its units), Granite Rapids (CHA 4*126, IIO 4*16,
    // IRP 2*16, U 2, B2CMI 4*12, UPI 4*6, memory-mapped iMC 5*12 = 734) and Sierra and
    // Clearwater Forest (its units, each); AMD Zen 2 and 3 each
    // (PMC 6, L3 6, DF 4 = 16), Zen 4, 5 and 6 each (PMC 6, L3 6, DF 16, UMC 4*12 = 76).
    // Free-running counters: Skylake-SP's and Cascade Lake's IIO 17*6 each, Ice Lake-SP's IIO
    // 9*6 and memory-mapped iMC 5*4, Sapphire and Emerald Rapids' IIO 17*12 and memory-mapped
    // iMC 3*4 each, Granite Rapids', Sierra Forest's and Clearwater Forest's IIO 17*16 each.
    // Arm Neoverse V2's, N2's, V3's, N3's, N1's and V1's PMUv3: the architecture's 31 event
    // counters and the cycle counter each; NVIDIA Grace's SCF PMU: the CoreSight PMU
    // architecture's 31 event counters and the cycle counter.
    assert_eq!(
        counters,
        98 + 83
            + 146
            + 174
            + 198
            + 230 * 2
            + 327
            + 14
            + 402 * 2
            + 734 * 3
            + 16 * 2
            + 76 * 3
            + 17 * 6 * 2
            + 9 * 6
            + 5 * 4
            + 17 * 12 * 2
            + 3 * 4 * 2
            + 17 * 16 * 3
            + (31 + 1) * 6
            + (31 + 1)
    );
}

#[test]
fn every_route_reaches_the_global_status() {
    for p in PROCESSORS {
        let Some(global) = p.global else {
            // No global level: no routes either (the E5-2600 in our transcription).
            assert!(
                pmus()
                    .filter(|(q, ..)| q.id == p.id)
                    .all(|(.., m)| m.routes.is_empty()),
                "{}",
                p.id
            );
            continue;
        };
        for (_, u, pmu) in pmus().filter(|(q, ..)| q.id == p.id) {
            let own_is_global = pmu.statuses.iter().any(|s| std::ptr::eq(*s, global.status));
            for &instance in u.instances {
                for c in pmu
                    .counters
                    .iter()
                    .filter(|c| c.kind != CounterKind::FreeRunning)
                {
                    let what = format!("{}:{instance} counter {}", p.id, c.number);
                    if own_is_global {
                        assert!(pmu.box_bit(Role::Overflow, c.number).is_some(), "{what}");
                        continue;
                    }
                    let Some(route) = pmu.route(instance, c.number) else {
                        // A route the spec declares unknown (no source gives the global
                        // bit): the walk finds the overflow in the box's own status, or,
                        // in a box no source gives a status (the Ice Lake-SP U-box),
                        // nowhere: that box is counted, never sampled.
                        assert!(
                            pmu.box_bit(Role::Overflow, c.number).is_some()
                                || pmu.statuses.is_empty(),
                            "{what}: no route, and its box status does not cover it"
                        );
                        continue;
                    };
                    let last = route.hops.last().unwrap();
                    assert!(std::ptr::eq(last.bit.register, global.status), "{what}");
                    for hop in route.hops {
                        assert_eq!(hop.bit.field.width(), 1, "{what}");
                        // Metadata statics may be copied: compare fields by content.
                        assert!(hop
                            .bit
                            .register
                            .fields
                            .iter()
                            .any(|f| f.name == hop.bit.field.name && f.lsb == hop.bit.field.lsb));
                        if let Some(clear) = hop.clear {
                            assert!(clear.field.access.is_writable(), "{what}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn xeon_7500_routes_follow_the_guide() {
    let r = xeon_7500::rbox::UNIT.pmu.unwrap();
    // The R-box's upper counters go through S1, the lower through S0 (issue 11's lost overflow).
    assert_eq!(
        r.route("R", 3).unwrap().hops[0].bit.qualified,
        "S0_MSR_PMON_SUMMARY.ov_r"
    );
    assert_eq!(
        r.route("R", 12).unwrap().hops[0].bit.qualified,
        "S1_MSR_PMON_SUMMARY.ov_r"
    );
    let hi = r.box_bit(Role::Overflow, 12).unwrap();
    assert_eq!(
        (hi.register.name, hi.bits.lsb),
        ("R_MSR_PMON_GLOBAL_STATUS_15_8", 4)
    );
    let u = r.route("R", 12).unwrap().hops[1];
    assert_eq!(u.bit.qualified, "U_MSR_PMON_GLOBAL_STATUS.ov_s1");
    assert_eq!(
        u.clear.unwrap().qualified,
        "U_MSR_PMON_GLOBAL_OVF_CTL.clr_ov_s1"
    );
    // The S-box summaries have no address: a walk must read the boxes below.
    assert!(r.route("R", 0).unwrap().hops[0].bit.address().is_none());
    let w = xeon_7500::wbox::UNIT.pmu.unwrap();
    let fixed = w.counter(4).unwrap();
    assert_eq!(
        (fixed.kind, fixed.event),
        (CounterKind::Fixed, Some("uncore clock ticks"))
    );
    assert_eq!(
        w.box_bit(Role::CounterEnable, 4).unwrap().bits.field.name,
        "fixed_en"
    );
    let global = xeon_7500::PROCESSOR.global.unwrap();
    let (freeze, enable) = global.pmi_freeze().unwrap();
    assert_eq!((freeze.name, enable.name), ("frz_all", "en_all"));
    assert_eq!(global.field(Role::PmiSelect).unwrap().name, "pmi_core_sel");
    let m = xeon_7500::mbox::UNIT.pmu.unwrap();
    assert!(m.notes.iter().any(|n| n.title.contains("assumption")));
}

#[test]
fn e5_2600_boxes_have_box_controls_fixed_counters_and_filters() {
    let cbo = xeon_e5_2600::cbox::UNIT.pmu.unwrap();
    assert_eq!(cbo.scope, Scope::Socket);
    assert_eq!(cbo.counter(0).unwrap().width, 44);
    for role in [
        Role::Freeze,
        Role::FreezeEnable,
        Role::ResetCounters,
        Role::ResetControls,
    ] {
        assert!(cbo.box_field(role).is_some(), "{role:?}");
    }
    assert!(cbo.statuses.is_empty() && cbo.routes.is_empty());
    let imc = xeon_e5_2600::imc::UNIT.pmu.unwrap();
    assert_eq!(imc.counter(4).unwrap().kind, CounterKind::Fixed);
    let pcu = xeon_e5_2600::pcu::UNIT.pmu.unwrap();
    assert_eq!(pcu.counter(5).unwrap().kind, CounterKind::FreeRunning);
    assert!(pcu
        .counter(0)
        .unwrap()
        .control_bits(Role::EventExt)
        .is_some());
    let ubox = xeon_e5_2600::ubox::UNIT.pmu.unwrap();
    assert_eq!(
        ubox.counter(2).unwrap().event,
        Some("uncore clock (UCLK) cycles")
    );
    let qpi = xeon_e5_2600::qpi::UNIT.pmu.unwrap();
    assert_eq!(qpi.filters.len(), 2);
    for f in qpi.filters {
        assert_eq!((f.event, f.event_ext), (Some(0x38), true));
        assert!(f.mask.is_some());
    }
}

#[test]
fn e5_2600_v3_v4_boxes_report_overflow_in_their_box_status() {
    use pmu_regs::{xeon_e5_2600_v3 as hsx, xeon_e5_2600_v4 as bdx, Access, Location};
    // The global level is a freeze signal (write-only freeze and unfreeze commands, likwid).
    for p in [&hsx::PROCESSOR, &bdx::PROCESSOR] {
        let g = p.global.unwrap();
        assert!(g.freeze_signal().is_some() && g.pmi_freeze().is_none());
        assert_eq!(g.status.name, "U_MSR_PMON_GLOBAL_STATUS");
    }
    // likwid gives each home agent a global status bit; none for the C-boxes, whose routes
    // are declared unknown, so a walk finds their overflows in the box status.
    let ha = hsx::ha::UNIT.pmu.unwrap();
    let hop = ha.route("HA1", 0).unwrap().hops[0];
    assert_eq!((hop.bit.field.name, hop.bit.field.lsb), ("ov_ha1", 22));
    assert_eq!(hop.clear.unwrap().field.name, "ov_ha1");
    let cbo = hsx::cbox::UNIT.pmu.unwrap();
    assert_eq!(hsx::cbox::UNIT.instances.len(), 18);
    assert_eq!(bdx::cbox::UNIT.instances.len(), 24);
    assert_eq!(cbo.counter(3).unwrap().width, 48);
    let ov = cbo.box_bit(Role::Overflow, 3).unwrap();
    assert_eq!(
        (ov.register.name, ov.bits.field.name, ov.bits.lsb),
        ("C{i}_MSR_PMON_BOX_STATUS", "ov", 3)
    );
    // Read to see the overflow, write 1 to clear it: the status is its own clear.
    assert_eq!(ov.bits.field.access, Access::Rw1c);
    assert!(cbo.box_bit(Role::OverflowClear, 3).is_none() && cbo.routes.is_empty());
    assert!(cbo.box_field(Role::FreezeEnable).is_some());
    assert_eq!(cbo.filters.len(), 2);
    // Linux gives the S-box counters 44 bits on Haswell-EP and 48 on Broadwell-EP.
    let s3 = hsx::sbox::UNIT.pmu.unwrap().counter(0).unwrap().width;
    let s4 = bdx::sbox::UNIT.pmu.unwrap().counter(0).unwrap().width;
    assert_eq!((s3, s4), (44, 48));
    // The fixed counters have no box status bit, so those boxes declare no status.
    let ubox = hsx::ubox::UNIT.pmu.unwrap();
    assert_eq!(ubox.counter(2).unwrap().kind, CounterKind::Fixed);
    assert!(ubox.statuses.is_empty());
    assert_eq!(ubox.filters[0].event, Some(0x41));
    let qpi = bdx::qpi::UNIT.pmu.unwrap();
    assert_eq!(bdx::qpi::UNIT.instances.len(), 3);
    assert!(qpi
        .filters
        .iter()
        .all(|f| f.event == Some(0x38) && f.event_ext));
    // Broadwell-EP channel 0 is 0x6FB0 at device 20 function 0 (the device listing), not
    // likwid's 0x6FB4.
    let ch0 = bdx::imc::UNIT.pmu.unwrap().counter(0).unwrap();
    match ch0.counter.address("CH0").unwrap().location {
        Location::Pci {
            device_id,
            device,
            function,
            offset,
        } => assert_eq!((device_id, device, function, offset), (0x6FB0, 20, 0, 0xA0)),
        other => panic!("{other:?}"),
    }
    // Typed role access works on the new layouts as on the old.
    let c: hsx::cbox::CboCtl = program(0x34, 0x03);
    assert_eq!(
        c,
        hsx::cbox::CboCtl::RESET
            .with_ev_sel(0x34)
            .with_umask(0x03)
            .with_en(true)
    );
}

#[test]
fn the_architectural_pmu_has_fixed_counters_and_aliases() {
    let core = pmu_regs::arch::core::UNIT.pmu.unwrap();
    assert_eq!(core.scope, Scope::Cpu);
    let pmc2 = core.counter(2).unwrap();
    assert_eq!(
        pmc2.alias.unwrap().address("CPU").unwrap().name,
        "IA32_A_PMC2"
    );
    assert_eq!(pmc2.width_cpuid, Some("0AH.EAX[23:16]"));
    let fixed1 = core.counter(33).unwrap();
    assert_eq!(
        fixed1.counter.address("CPU").unwrap().name,
        "IA32_FIXED_CTR1"
    );
    let en = fixed1.control_bits(Role::RingEnable).unwrap();
    assert_eq!((en.field.name, en.lsb, en.width), ("en1", 4, 2));
    assert_eq!(
        fixed1
            .control_bits(Role::OverflowEnable)
            .unwrap()
            .field
            .name,
        "en1_pmi"
    );
    let ov = core.box_bit(Role::Overflow, 33).unwrap();
    assert_eq!((ov.bits.field.name, ov.bits.lsb), ("ovf_fixed_ctr1", 33));
    let ov5 = core.box_bit(Role::Overflow, 5).unwrap();
    assert_eq!(
        (ov5.bits.field.name, ov5.bits.lsb, ov5.bits.width),
        ("Ovf_PMC{n}", 5, 1)
    );
    assert!(pmu_regs::arch::PROCESSOR.global.is_some());
    assert!(core.route("CPU", 0).is_none());
}

/// Program "a counter" of any box through the role traits.
fn program<C: CounterControl>(event: u8, umask: u8) -> C {
    C::reset()
        .try_with_event(event.into())
        .and_then(|c| c.try_with_umask(umask.into()))
        .map(|c| c.with_enable(true))
        .unwrap()
}

#[test]
fn role_traits_program_counters_without_field_names() {
    use xeon_7500::{cbox::CEvtSel, rbox::RCtl};
    use xeon_e5_2600::{pcu::PcuCtl, qpi::QpiCtl};
    let c: CEvtSel = program(0x01, 0x0f);
    assert_eq!(
        c,
        CEvtSel::RESET
            .with_ev_sel(0x01)
            .with_umask(0x0f)
            .with_en(true)
    );
    let q: QpiCtl = program(0x38, 0x00);
    assert_eq!(
        q.try_with_event_ext(true).unwrap(),
        QpiCtl::RESET
            .with_ev_sel(0x38)
            .with_en(true)
            .with_ev_sel_ext(true)
    );
    // A box without a unit mask takes only 0, and says so.
    assert!(RCtl::reset().try_with_umask(1).is_err());
    assert!(PcuCtl::reset().try_with_umask(0).is_ok());
    // The R-box event select is 5 bits wide.
    assert_eq!(RCtl::reset().try_with_event(0x20).unwrap_err().width, 5);
    // Counter values and box controls.
    let v = xeon_7500::cbox::CCtr::try_from_count((1 << 48) - 1).unwrap();
    assert_eq!(v.count(), (1 << 48) - 1);
    assert!(xeon_e5_2600::cbox::CboCtr::try_from_count(1 << 44).is_err());
    let frz = xeon_e5_2600::cbox::CboBoxCtl::RESET
        .try_with_freeze(true)
        .unwrap();
    assert_eq!(frz, xeon_e5_2600::cbox::CboBoxCtl::RESET.with_frz(true));
    // Role access works on every layout, bitmaps included.
    let ctl = xeon_7500::rbox::RGlobalCtlHi::RESET
        .try_with_role(Role::CounterEnable, 12, 1)
        .unwrap();
    assert_eq!(ctl.bits(), 1 << 4);
    assert_eq!(ctl.role_value(Role::CounterEnable, 12), Some(1));
    assert_eq!(ctl.role_value(Role::CounterEnable, 3), None);
}

#[test]
fn the_register_walks_add_what_the_sources_give() {
    use pmu_regs::{xeon_7500::mbox, xeon_e5_2600_v2 as ivt, Register};
    // Xeon 7500 guide walk: the M-box timestamp unit (p. 2-101), at likwid's addresses; no
    // source gives its bits, so none can be set.
    assert_eq!(mbox::M_MSR_PMU_TIMESTAMP[0].address(), 0xCA4);
    assert_eq!(mbox::M_MSR_PMU_TIMESTAMP[1].address(), 0xCE4);
    assert_eq!(mbox::MPmuTimestamp::RESERVED_MASK, u64::MAX);
    // E5-2600 v2 against PCM: QPI port 2 is device 24, function 2 (device 10 is the PCU's).
    let p2 = ivt::qpi::Q_P_PCI_PMON_BOX_CTL[2];
    assert_eq!(
        (p2.device_id(), p2.device(), p2.function()),
        (0x0E3A, 24, 2)
    );
    // E5-2600 v2 global status: the guide's address, likwid's bits, one per box, rw1c.
    let status = ivt::ubox::UGlobalStatus::INFO;
    assert_eq!(ivt::ubox::U_MSR_PMON_GLOBAL_STATUS.address(), 0xC01);
    for (name, lsb) in [
        ("ov_u_fixed", 0),
        ("ov_u", 1),
        ("ov_pcu", 2),
        ("ov_c0", 3),
        ("ov_c14", 17),
        ("ov_ha0", 18),
        ("ov_imc1", 21),
        ("ov_qpi1", 23),
        ("ov_r3qpi0", 24),
        ("ov_r2pcie", 26),
    ] {
        let f = status.field(name).unwrap();
        assert_eq!((f.lsb, f.access), (lsb, pmu_regs::Access::Rw1c), "{name}");
    }
    let global = ivt::PROCESSOR.global.unwrap();
    assert_eq!(
        global.freeze_signal().map(|(f, u)| (f.lsb, u.lsb)),
        Some((31, 29))
    );
    assert_eq!(global.field(Role::PmiSelect).map(|f| f.width()), Some(15));
}

#[test]
fn the_named_fields_are_the_fields_playing_their_roles() {
    use pmu_regs::{arch::core, xeon_7500::cbox::CEvtSel, FieldInfo, Register};
    // The role consts of the generated `pmu` modules are named field constants, each resolved
    // by name at compile time: they must be the fields the role lookup finds.
    let same = |a: &FieldInfo, b: Option<&FieldInfo>| {
        b.is_some_and(|b| (a.lsb, a.name) == (b.lsb, b.name))
    };
    assert!(same(CEvtSel::ENABLE, CEvtSel::INFO.role(Role::Enable)));
    assert!(same(CEvtSel::EVENT, CEvtSel::INFO.role(Role::Event)));
    assert_eq!(CEvtSel::UMASK.map(|f| f.name), Some("umask"));
    assert!(CEvtSel::EVENT_EXT.is_none());
    assert!(same(
        core::Ia32Pmc::COUNT,
        core::Ia32Pmc::INFO.role(Role::Count)
    ));
    assert_eq!(CEvtSel::INFO.field_named("pmi_en").lsb, 20);
    // Every overflow bit a route names is a field of its register.
    for (_, _, pmu) in pmus() {
        for hop in pmu.routes.iter().flat_map(|r| r.hops) {
            for bit in std::iter::once(hop.bit).chain(hop.clear) {
                let f = bit.register.field_named(bit.field.name);
                assert_eq!(
                    (f.lsb, f.msb),
                    (bit.field.lsb, bit.field.msb),
                    "{}",
                    bit.name()
                );
                assert_eq!(bit.qualified, format!("{}.{}", bit.register_name, f.name));
            }
        }
    }
}

#[test]
fn counters_perf_entries_and_formats_say_what_they_are() {
    use pmu_regs::{FormatTarget, Scope as S};
    let core = pmu_regs::arch::core::UNIT.pmu.unwrap();
    let fixed = core.counter(32).unwrap();
    assert_eq!(fixed.kind, CounterKind::Fixed);
    assert_eq!(fixed.event, Some("instructions retired"));
    assert!(fixed.alias.is_none());
    let general = core.counter(0).unwrap();
    assert_eq!(general.width_cpuid, Some("0AH.EAX[23:16]"));
    assert_eq!(general.alias.map(|a| a.index), Some(0));
    // Boxes' perf entries share counters, source and driver; each names its own PMU.
    let cbox = xeon_e5_2600::cbox::UNIT.pmu.unwrap();
    let c3 = cbox.perf.iter().find(|p| p.instance == "C3").unwrap();
    assert_eq!(c3.pmu, "uncore_cbox_3");
    assert_eq!(c3.driver.id, cbox.perf[0].driver.id);
    // Every format sets exactly one thing; the kinds all occur.
    let formats: Vec<_> = pmus()
        .flat_map(|(_, _, pmu)| pmu.perf)
        .flat_map(|p| p.driver.formats)
        .collect();
    assert!(formats
        .iter()
        .any(|f| f.target == FormatTarget::Role(Role::Event)));
    assert!(formats
        .iter()
        .any(|f| matches!(f.target, FormatTarget::Field(_))));
    assert!(formats
        .iter()
        .any(|f| matches!(f.target, FormatTarget::Unmapped(w) if !w.is_empty())));
    // The vocabularies spell both ways.
    assert_eq!(
        Role::from_name(Role::OverflowEnable.as_str()),
        Some(Role::OverflowEnable)
    );
    assert_eq!(Role::from_name("overflow_enable"), None);
    assert_eq!(S::from_name("cpu"), Some(S::Cpu));
    assert_eq!(
        pmu_regs::Access::from_name("rw-v"),
        Some(pmu_regs::Access::RwV)
    );
    assert_eq!(CounterKind::FreeRunning.as_str(), "free-running");
}

#[test]
fn the_structure_modules_read_on_their_own() {
    // Fields by name, registers as `X::INFO`, and lines a reader need not scroll.
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/src");
    let mut modules = 0;
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path().join("pmu.rs");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        modules += 1;
        for (n, line) in text.lines().enumerate().skip(1) {
            let at = format!("{}:{}", path.display(), n + 1);
            assert!(!line.contains("fields["), "{at}: a field by position");
            assert!(!line.contains(" as crate::support::Register>"), "{at}");
            assert!(line.chars().count() <= 100, "{at}: longer than 100 columns");
        }
    }
    assert_eq!(modules, PROCESSORS.len());
}
