//! The simulator's Arm core PMU (PMUv3 system registers of a Neoverse V2): enable, filter,
//! count and overflow as the Arm Architecture Reference Manual (DDI 0487, D13 and the
//! PMCR_EL0, PMCNTENSET/CLR_EL0, PMOVSSET/CLR_EL0, PMEVTYPER<n>_EL0 descriptions) states them.
//! The bit positions written here are the Arm ARM's (PMCR_EL0: E 0, P 1, C 2, LP 7, N 15:11;
//! PMEVTYPER: U 30, NSH 27, event 15:0), not read from the code under test.

use pmu_regs::neoverse_v2::core::{
    Event, PMCCFILTR_EL0, PMCCNTR_EL0, PMCNTENCLR_EL0, PMCNTENSET_EL0, PMCR_EL0, PMEVCNTR_EL0,
    PMEVTYPER_EL0, PMOVSCLR_EL0, PMOVSSET_EL0, PMSELR_EL0, PMXEVCNTR_EL0, PMXEVTYPER_EL0,
};
use pmu_runtime::sim::pmuv3::ExceptionLevel::{El0, El1, El2};
use pmu_runtime::sim::{Sim, SimConfig};

const E: u64 = 1;
const P: u64 = 1 << 1;
const C: u64 = 1 << 2;
const LP: u64 = 1 << 7;
const U: u64 = 1 << 30;
const NSH: u64 = 1 << 27;

fn sim() -> Sim {
    Sim::new(SimConfig::of(&pmu_regs::neoverse_v2::PROCESSOR))
}

/// The Neoverse V2's common event `name`'s number, from Arm's event list.
fn event(name: &str) -> u16 {
    let e = Event::ALL
        .iter()
        .map(|e| e.info())
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("{name}"));
    e.code
}

#[test]
fn a_counter_counts_only_with_the_global_and_its_own_enable() {
    let sim = sim();
    let inst = event("INST_RETIRED");
    let (typer, cntr) = (PMEVTYPER_EL0[0].encoding(), PMEVCNTR_EL0[0].encoding());
    sim.write_sysreg(0, typer, u64::from(inst)).unwrap();
    sim.inject_pmuv3(0, inst, El0, 1000).unwrap();
    assert_eq!(sim.read_sysreg(0, cntr).unwrap(), 0, "nothing enabled");
    sim.write_sysreg(0, PMCNTENSET_EL0.encoding(), 1).unwrap();
    sim.inject_pmuv3(0, inst, El0, 1000).unwrap();
    assert_eq!(sim.read_sysreg(0, cntr).unwrap(), 0, "PMCR_EL0.E clear");
    sim.write_sysreg(0, PMCR_EL0.encoding(), E).unwrap();
    sim.inject_pmuv3(0, inst, El0, 1000).unwrap();
    sim.inject_pmuv3(0, event("CPU_CYCLES"), El0, 7).unwrap();
    assert_eq!(
        sim.read_sysreg(0, cntr).unwrap(),
        1000,
        "only its own event"
    );
    // CPU 1's PMU is its own.
    sim.inject_pmuv3(1, inst, El0, 50).unwrap();
    assert_eq!(sim.read_sysreg(0, cntr).unwrap(), 1000);
    // A 0 written to the set register changes nothing; a 1 to the clear register disables.
    sim.write_sysreg(0, PMCNTENSET_EL0.encoding(), 0).unwrap();
    assert_eq!(sim.read_sysreg(0, PMCNTENCLR_EL0.encoding()).unwrap(), 1);
    sim.write_sysreg(0, PMCNTENCLR_EL0.encoding(), 1).unwrap();
    assert_eq!(sim.read_sysreg(0, PMCNTENSET_EL0.encoding()).unwrap(), 0);
    sim.inject_pmuv3(0, inst, El0, 1000).unwrap();
    assert_eq!(sim.read_sysreg(0, cntr).unwrap(), 1000, "disabled");
}

#[test]
fn the_filter_bits_choose_the_exception_levels() {
    let sim = sim();
    let inst = event("INST_RETIRED");
    let typer = PMEVTYPER_EL0[1].encoding();
    sim.write_sysreg(0, PMCR_EL0.encoding(), E).unwrap();
    sim.write_sysreg(0, PMCNTENSET_EL0.encoding(), 1 << 1)
        .unwrap();
    let run = |filter: u64| {
        sim.write_sysreg(0, typer, filter | u64::from(inst))
            .unwrap();
        sim.write_sysreg(0, PMEVCNTR_EL0[1].encoding(), 0).unwrap();
        sim.inject_pmuv3(0, inst, El0, 500).unwrap();
        sim.inject_pmuv3(0, inst, El1, 30).unwrap();
        sim.inject_pmuv3(0, inst, El2, 4).unwrap();
        sim.read_sysreg(0, PMEVCNTR_EL0[1].encoding()).unwrap()
    };
    // All zero: EL0 and EL1, not EL2.
    assert_eq!(run(0), 530);
    // U excludes EL0 (with NSU equal to 0, Non-secure EL0 follows U).
    assert_eq!(run(U), 30);
    // NSH includes EL2.
    assert_eq!(run(NSH), 534);
}

#[test]
fn an_event_counter_overflows_at_32_bits_unless_lp() {
    let sim = sim();
    let inst = event("INST_RETIRED");
    let cntr = PMEVCNTR_EL0[2].encoding();
    sim.write_sysreg(0, PMEVTYPER_EL0[2].encoding(), u64::from(inst))
        .unwrap();
    sim.write_sysreg(0, PMCNTENSET_EL0.encoding(), 1 << 2)
        .unwrap();
    sim.write_sysreg(0, PMCR_EL0.encoding(), E).unwrap();
    sim.write_sysreg(0, cntr, 0xFFFF_FFF0).unwrap();
    sim.inject_pmuv3(0, inst, El0, 0x20).unwrap();
    // 64 bits wide; the overflow flag from the carry out of bit 31.
    assert_eq!(sim.read_sysreg(0, cntr).unwrap(), 0x1_0000_0010);
    assert_eq!(sim.read_sysreg(0, PMOVSSET_EL0.encoding()).unwrap(), 1 << 2);
    sim.write_sysreg(0, PMOVSCLR_EL0.encoding(), 1 << 2)
        .unwrap();
    assert_eq!(sim.read_sysreg(0, PMOVSSET_EL0.encoding()).unwrap(), 0);
    // With LP the same carry is no overflow; the wrap at 64 bits is.
    sim.write_sysreg(0, PMCR_EL0.encoding(), E | LP).unwrap();
    sim.write_sysreg(0, cntr, 0xFFFF_FFF0).unwrap();
    sim.inject_pmuv3(0, inst, El0, 0x20).unwrap();
    assert_eq!(sim.read_sysreg(0, PMOVSCLR_EL0.encoding()).unwrap(), 0);
    sim.write_sysreg(0, cntr, u64::MAX - 1).unwrap();
    sim.inject_pmuv3(0, inst, El0, 3).unwrap();
    assert_eq!(sim.read_sysreg(0, cntr).unwrap(), 1);
    assert_eq!(sim.read_sysreg(0, PMOVSCLR_EL0.encoding()).unwrap(), 1 << 2);
}

#[test]
fn the_cycle_counter_and_the_resets() {
    let sim = sim();
    let cycles = event("CPU_CYCLES");
    sim.write_sysreg(0, PMEVTYPER_EL0[0].encoding(), u64::from(cycles))
        .unwrap();
    sim.write_sysreg(0, PMCNTENSET_EL0.encoding(), 1 << 31 | 1)
        .unwrap();
    sim.write_sysreg(0, PMCCFILTR_EL0.encoding(), U).unwrap();
    sim.write_sysreg(0, PMCR_EL0.encoding(), E).unwrap();
    sim.inject_pmuv3(0, cycles, El1, 100).unwrap();
    sim.inject_pmuv3(0, cycles, El0, 11).unwrap();
    assert_eq!(sim.read_sysreg(0, PMCCNTR_EL0.encoding()).unwrap(), 100);
    assert_eq!(sim.read_sysreg(0, PMEVCNTR_EL0[0].encoding()).unwrap(), 111);
    // P zeroes the event counters only, C the cycle counter only; both read as zero.
    sim.write_sysreg(0, PMCR_EL0.encoding(), E | P).unwrap();
    assert_eq!(sim.read_sysreg(0, PMEVCNTR_EL0[0].encoding()).unwrap(), 0);
    assert_eq!(sim.read_sysreg(0, PMCCNTR_EL0.encoding()).unwrap(), 100);
    sim.write_sysreg(0, PMCR_EL0.encoding(), E | C).unwrap();
    assert_eq!(sim.read_sysreg(0, PMCCNTR_EL0.encoding()).unwrap(), 0);
    assert_eq!(
        sim.read_sysreg(0, PMCR_EL0.encoding()).unwrap() & (P | C),
        0
    );
}

#[test]
fn pmcr_n_says_how_many_event_counters_and_the_rest_are_undefined() {
    let sim = sim();
    let pmcr = sim.read_sysreg(0, PMCR_EL0.encoding()).unwrap();
    // The Neoverse V2 TRM: six event counters.
    assert_eq!(pmcr >> 11 & 0x1f, 6);
    // N is read-only: a write leaves it.
    sim.write_sysreg(0, PMCR_EL0.encoding(), 3 << 11).unwrap();
    assert_eq!(
        sim.read_sysreg(0, PMCR_EL0.encoding()).unwrap() >> 11 & 0x1f,
        6
    );
    assert!(sim.read_sysreg(0, PMEVCNTR_EL0[6].encoding()).is_err());
    assert!(sim.write_sysreg(0, PMEVTYPER_EL0[6].encoding(), 0).is_err());
    // Enable bits of counters not implemented are RAZ/WI.
    sim.write_sysreg(0, PMCNTENSET_EL0.encoding(), 1 << 6 | 1 << 5)
        .unwrap();
    assert_eq!(
        sim.read_sysreg(0, PMCNTENSET_EL0.encoding()).unwrap(),
        1 << 5
    );
    // A reserved bit (PMEVTYPER bit 25) is refused and nothing is written.
    let typer = PMEVTYPER_EL0[0].encoding();
    sim.write_sysreg(0, typer, 0x8).unwrap();
    assert!(sim.write_sysreg(0, typer, 1 << 25 | 0x11).is_err());
    assert_eq!(sim.read_sysreg(0, typer).unwrap(), 0x8);
    // No such CPU.
    assert!(sim.read_sysreg(9, PMCR_EL0.encoding()).is_err());
}

/// The simulated kernel's `armv8_pmuv3_0`: a group counts what happens at the levels it asks
/// for, and closing it puts back PMCR_EL0, the enable bits and the counters it used.
#[test]
fn the_simulated_perf_driver_counts_and_puts_back() {
    use pmu_runtime::perf::layer::{EventAttr, PerfLayer};
    use pmu_runtime::perf::EventSources;
    use pmu_runtime::sim_perf::{write_kernel_tree, SimPerf};

    let sim = sim();
    let tree = tempfile::tempdir().unwrap();
    write_kernel_tree(&pmu_regs::neoverse_v2::PROCESSOR, tree.path(), "0").unwrap();
    let dir = tree.path().join("armv8_pmuv3_0");
    let type_: u32 = std::fs::read_to_string(dir.join("type"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The kernel's format: event=config:0-15.
    let format = std::fs::read_to_string(dir.join("format/event")).unwrap();
    assert_eq!(format.trim(), "config:0-15");
    let driver = SimPerf::new(&sim, &EventSources::with_root(tree.path())).unwrap();
    let inst = event("INST_RETIRED");
    // Something else already uses counter 5 with the global enable off.
    sim.write_sysreg(1, PMCNTENSET_EL0.encoding(), 1 << 5)
        .unwrap();
    let before = state(&sim);
    let attr = |exclude_user| EventAttr {
        type_,
        config: [u64::from(inst), 0, 0],
        exclude_user,
        exclude_kernel: false,
    };
    {
        let mut group = driver
            .open_group(Some(1), &[attr(false), attr(true)])
            .unwrap();
        group.enable().unwrap();
        sim.inject_pmuv3(1, inst, El0, 700).unwrap();
        sim.inject_pmuv3(1, inst, El1, 40).unwrap();
        sim.inject_pmuv3(0, inst, El1, 9).unwrap();
        assert_eq!(group.read().unwrap().counts, vec![740, 40]);
    }
    let after = state(&sim);
    assert_eq!(after, before);
    assert_eq!(before[1], 1 << 5);
}

/// CPU 1's PMCR_EL0, PMCNTENSET_EL0, PMEVTYPER0/1_EL0 and PMEVCNTR0/1_EL0.
fn state(sim: &Sim) -> Vec<u64> {
    let regs = [
        PMCR_EL0.encoding(),
        PMCNTENSET_EL0.encoding(),
        PMEVTYPER_EL0[0].encoding(),
        PMEVTYPER_EL0[1].encoding(),
        PMEVCNTR_EL0[0].encoding(),
        PMEVCNTR_EL0[1].encoding(),
    ];
    regs.iter()
        .map(|&e| sim.read_sysreg(1, e).unwrap())
        .collect()
}

/// The Neoverse N1 (Armv8.2: no FEAT_PMUv3p5) has 32-bit event counters: one wraps to zero
/// where it overflows.
#[test]
fn an_n1_event_counter_is_32_bits() {
    use pmu_regs::neoverse_n1::core as n1;
    let sim = Sim::new(SimConfig::of(&pmu_regs::neoverse_n1::PROCESSOR));
    let inst = event("INST_RETIRED");
    sim.write_sysreg(0, n1::PMEVTYPER_EL0[0].encoding(), u64::from(inst))
        .unwrap();
    sim.write_sysreg(0, n1::PMCNTENSET_EL0.encoding(), 1)
        .unwrap();
    sim.write_sysreg(0, n1::PMCR_EL0.encoding(), E).unwrap();
    sim.write_sysreg(0, n1::PMEVCNTR_EL0[0].encoding(), 0xFFFF_FFF0)
        .unwrap();
    sim.inject_pmuv3(0, inst, El0, 0x20).unwrap();
    assert_eq!(
        sim.read_sysreg(0, n1::PMEVCNTR_EL0[0].encoding()).unwrap(),
        0x10
    );
    assert_eq!(sim.read_sysreg(0, n1::PMOVSSET_EL0.encoding()).unwrap(), 1);
    // No PMCR_EL0.LP on the N1: the bit is reserved, and a write setting it is refused.
    assert!(sim
        .write_sysreg(0, n1::PMCR_EL0.encoding(), E | LP)
        .is_err());
}

/// PMSELR_EL0.SEL (bits 4:0) chooses what PMXEVTYPER_EL0 and PMXEVCNTR_EL0 reach (Arm ARM,
/// D13 and their register descriptions): event counter SEL below PMCR_EL0.N, or with SEL 31
/// PMCCFILTR_EL0 through PMXEVTYPER_EL0; any other selection is refused.
#[test]
fn pmselr_selects_what_pmxevtyper_and_pmxevcntr_reach() {
    let sim = sim();
    let inst = event("INST_RETIRED");
    let (sel, xtype, xcnt) = (
        PMSELR_EL0.encoding(),
        PMXEVTYPER_EL0.encoding(),
        PMXEVCNTR_EL0.encoding(),
    );
    sim.write_sysreg(0, sel, 2).unwrap();
    assert_eq!(sim.read_sysreg(0, sel).unwrap(), 2);
    sim.write_sysreg(0, xtype, u64::from(inst) | U).unwrap();
    sim.write_sysreg(0, xcnt, 100).unwrap();
    assert_eq!(
        sim.read_sysreg(0, PMEVTYPER_EL0[2].encoding()).unwrap(),
        u64::from(inst) | U
    );
    assert_eq!(sim.read_sysreg(0, PMEVCNTR_EL0[2].encoding()).unwrap(), 100);
    // Counter 2 counts its event at EL1 (U excludes EL0), read back through the selector.
    sim.write_sysreg(0, PMCNTENSET_EL0.encoding(), 1 << 2)
        .unwrap();
    sim.write_sysreg(0, PMCR_EL0.encoding(), E).unwrap();
    sim.inject_pmuv3(0, inst, El0, 7).unwrap();
    sim.inject_pmuv3(0, inst, El1, 1000).unwrap();
    assert_eq!(sim.read_sysreg(0, xcnt).unwrap(), 1100);
    // Another selection, another counter: counter 0 never counted.
    sim.write_sysreg(0, sel, 0).unwrap();
    assert_eq!(sim.read_sysreg(0, xcnt).unwrap(), 0);
    // A reserved bit of the selected PMEVTYPER (bit 25) is refused, nothing written.
    assert!(sim.write_sysreg(0, xtype, 1 << 25).is_err());
    assert_eq!(sim.read_sysreg(0, PMEVTYPER_EL0[0].encoding()).unwrap(), 0);
    // SEL 31: PMXEVTYPER_EL0 is PMCCFILTR_EL0; PMXEVCNTR_EL0 reaches nothing.
    sim.write_sysreg(0, sel, 31).unwrap();
    sim.write_sysreg(0, xtype, U).unwrap();
    assert_eq!(sim.read_sysreg(0, PMCCFILTR_EL0.encoding()).unwrap(), U);
    assert!(sim.read_sysreg(0, xcnt).is_err());
    // SEL 6 is PMCR_EL0.N on the V2: no such counter through either.
    sim.write_sysreg(0, sel, 6).unwrap();
    assert!(sim.read_sysreg(0, xtype).is_err());
    assert!(sim.write_sysreg(0, xcnt, 1).is_err());
    // PMSELR_EL0 bits above SEL are reserved.
    assert!(sim.write_sysreg(0, sel, 1 << 5).is_err());
    assert_eq!(sim.read_sysreg(0, sel).unwrap(), 6);
}

/// Each Arm core's event counter count, as its Technical Reference Manual gives PMCR_EL0.N:
/// Neoverse N1 (Arm 100616), V1 (101427), N2 (102099), V2 (102375), V3 (107734) and N3
/// (107997) all have six (also Arm's gator, daemon/events-Neoverse-*.xml, counter_set count
/// 6). The simulated core reports it in PMCR_EL0 (N is bits 15:11, Arm ARM), and the counters
/// below N exist and the one at N does not.
#[test]
fn every_arm_core_reports_its_trm_event_counter_count_in_pmcr() {
    const TRM: [(&str, u64); 6] = [
        ("neoverse-n1", 6),
        ("neoverse-v1", 6),
        ("neoverse-n2", 6),
        ("neoverse-v2", 6),
        ("neoverse-v3", 6),
        ("neoverse-n3", 6),
    ];
    for (id, trm_n) in TRM {
        let p = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == id)
            .unwrap_or_else(|| panic!("{id}"));
        let reg = |name: &str| {
            p.units
                .iter()
                .flat_map(|u| u.registers.iter())
                .find(|r| r.name == name)
                .unwrap_or_else(|| panic!("{id}: {name}"))
        };
        let encoding = |name: &str, index: u32| {
            let a = reg(name)
                .known_addresses()
                .iter()
                .find(|a| a.index == index)
                .unwrap_or_else(|| panic!("{id}: {name}[{index}]"));
            match a.location {
                pmu_regs::Location::SysReg(e) => e,
                _ => panic!("{id}: {name} is not a system register"),
            }
        };
        let sim = Sim::new(SimConfig::of(p));
        let pmcr = sim.read_sysreg(0, encoding("PMCR_EL0", 0)).unwrap();
        let n = pmcr >> 11 & 0x1f;
        assert_eq!(n, trm_n, "{id}: PMCR_EL0.N");
        let last = u32::try_from(n - 1).unwrap();
        assert!(sim
            .read_sysreg(0, encoding("PMEVCNTR{n}_EL0", last))
            .is_ok());
        assert!(
            sim.read_sysreg(0, encoding("PMEVCNTR{n}_EL0", last + 1))
                .is_err(),
            "{id}: counter N is not implemented"
        );
    }
}

/// The simulated `armv8_pmuv3_0` takes as many counters as the core's PMCR_EL0.N says (six on
/// the V2, its TRM's number), as Linux's driver does from its probe: a group of seven events
/// does not fit, and its seventh is the one refused.
#[test]
fn the_simulated_perf_driver_has_pmcr_n_counters() {
    use pmu_runtime::perf::layer::{EventAttr, PerfLayer};
    use pmu_runtime::perf::EventSources;
    use pmu_runtime::sim_perf::{write_kernel_tree, SimPerf};

    let sim = sim();
    let tree = tempfile::tempdir().unwrap();
    write_kernel_tree(&pmu_regs::neoverse_v2::PROCESSOR, tree.path(), "0").unwrap();
    let type_: u32 = std::fs::read_to_string(tree.path().join("armv8_pmuv3_0/type"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let driver = SimPerf::new(&sim, &EventSources::with_root(tree.path())).unwrap();
    let attr = EventAttr {
        type_,
        config: [u64::from(event("INST_RETIRED")), 0, 0],
        exclude_user: false,
        exclude_kernel: false,
    };
    assert!(driver.open_group(Some(0), &[attr; 6]).is_ok());
    let Err(e) = driver.open_group(Some(0), &[attr; 7]) else {
        panic!("seven events on six counters");
    };
    assert_eq!(e.index, 6, "{}", e.source);
}
