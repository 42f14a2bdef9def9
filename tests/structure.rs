//! The PMU structure in the generated crate: every counter of every box of every processor
//! resolves to real registers and role fields, every route reaches its processor's global
//! status, and the role traits program a counter without field names.

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
    for p in PROCESSORS {
        for u in p.units {
            assert!(u.pmu.is_some(), "{}:{} has no <pmu>", p.id, u.name);
        }
    }
    // 7 + 8 + 1 units.
    assert_eq!(pmus().count(), 16);
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
                    assert!(enable.is_some(), "{what}: no enable");
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
            // A box with bitmaps has a bit for each counter in each of them.
            if !pmu.statuses.is_empty() && c.kind != CounterKind::FreeRunning {
                for role in [Role::CounterEnable, Role::Overflow, Role::OverflowClear] {
                    assert!(pmu.box_bit(role, c.number).is_some(), "{what}: {role:?}");
                }
            }
        }
    }
    // Counters over all box instances: Xeon 7500 (U 1, W 5, B 4*2, C 6*8, M 6*2, R 16,
    // S 4*2 = 98), E5-2600 (C 4*8, HA 4, iMC 5*4, PCU 6, QPI 4*2, R2PCIe 4, R3QPI 3*2, U 3 =
    // 83), core 11.
    assert_eq!(counters, 98 + 83 + 11);
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
                    let route = pmu
                        .route(instance, c.number)
                        .unwrap_or_else(|| panic!("{what}: no route"));
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
