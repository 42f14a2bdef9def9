//! The Neoverse cores' PMU system registers against Linux's own constants: each register's
//! encoding against `arch/arm64/include/asm/sysreg.h` (`sys_reg(op0, op1, CRn, CRm, op2)`),
//! and the fields the kernel names against `include/linux/perf/arm_pmuv3.h` and
//! `arch/arm64/tools/sysreg`. The numbers below are transcribed from those files, not from
//! the spec; every core that takes the V2's unit (`units-from`) is checked.

use pmu_regs::{Addresses, Location, RegisterInfo, PROCESSORS};

/// `SYS_<name>` of sysreg.h: (name, op0, op1, CRn, CRm, op2), for element 0 of an array.
const LINUX_SYSREG: &[(&str, [u8; 5])] = &[
    ("PMCR_EL0", [3, 3, 9, 12, 0]),
    ("PMCNTENSET_EL0", [3, 3, 9, 12, 1]),
    ("PMCNTENCLR_EL0", [3, 3, 9, 12, 2]),
    ("PMOVSCLR_EL0", [3, 3, 9, 12, 3]),
    ("PMSWINC_EL0", [3, 3, 9, 12, 4]),
    ("PMSELR_EL0", [3, 3, 9, 12, 5]),
    ("PMCEID0_EL0", [3, 3, 9, 12, 6]),
    ("PMCEID1_EL0", [3, 3, 9, 12, 7]),
    ("PMCCNTR_EL0", [3, 3, 9, 13, 0]),
    ("PMUSERENR_EL0", [3, 3, 9, 14, 0]),
    ("PMOVSSET_EL0", [3, 3, 9, 14, 3]),
    ("PMINTENSET_EL1", [3, 0, 9, 14, 1]),
    ("PMINTENCLR_EL1", [3, 0, 9, 14, 2]),
    // SYS_PMEVCNTRn_EL0(0) and SYS_PMEVTYPERn_EL0(0): CRm 0b10 and 0b11 with n[4:3] = 0.
    ("PMEVCNTR{n}_EL0", [3, 3, 14, 8, 0]),
    ("PMEVTYPER{n}_EL0", [3, 3, 14, 12, 0]),
    ("PMCCFILTR_EL0", [3, 3, 14, 15, 7]),
    ("PMXEVTYPER_EL0", [3, 3, 9, 13, 1]),
    ("PMXEVCNTR_EL0", [3, 3, 9, 13, 2]),
    ("PMMIR_EL1", [3, 0, 9, 14, 6]),
];

/// Registers of a later feature than a core's unit describes: PMMIR_EL1 came with
/// FEAT_PMUv3p4 (Armv8.4), after the Armv8.2 N1, whose unit the V1 takes.
fn later_than(p: &pmu_regs::ProcessorInfo, name: &str) -> bool {
    name == "PMMIR_EL1" && BEFORE_PMUV3P5.contains(&p.id)
}

fn registers(p: &pmu_regs::ProcessorInfo) -> impl Iterator<Item = &'static RegisterInfo> + '_ {
    p.units.iter().flat_map(|u| u.registers.iter().copied())
}

fn encoding(r: &RegisterInfo) -> [u8; 5] {
    let Addresses::Known(a) = r.addresses else {
        panic!("{} has no address", r.name)
    };
    match a[0].location {
        Location::SysReg(e) => [e.op0, e.op1, e.crn, e.crm, e.op2],
        other => panic!("{} is not a system register: {other:?}", r.name),
    }
}

/// The Neoverse cores built (their feature on), each with the V2's registers.
fn neoverse() -> Vec<&'static pmu_regs::ProcessorInfo> {
    PROCESSORS
        .iter()
        .copied()
        .filter(|p| p.id.starts_with("neoverse-"))
        .collect()
}

#[test]
fn every_pmu_system_register_is_at_linuxs_encoding() {
    let cores = neoverse();
    assert!(cores.len() >= 6, "{} Neoverse cores", cores.len());
    for p in cores {
        for (name, enc) in LINUX_SYSREG {
            if later_than(p, name) {
                assert!(registers(p).all(|r| r.name != *name), "{}: {name}", p.id);
                continue;
            }
            let r = registers(p)
                .find(|r| r.name == *name)
                .unwrap_or_else(|| panic!("{}: no {name}", p.id));
            assert_eq!(encoding(r), *enc, "{}: {name}", p.id);
        }
        // And the spec has no PMU register Linux's table lacks.
        for r in registers(p) {
            assert!(
                LINUX_SYSREG.iter().any(|(n, _)| *n == r.name),
                "{}: {} is not in the table",
                p.id,
                r.name
            );
        }
    }
}

/// (register, field, msb, lsb) as Linux names them.
const LINUX_FIELDS: &[(&str, &str, u32, u32)] = &[
    // arm_pmuv3.h: ARMV8_PMU_PMCR_N GENMASK(15, 11), E BIT(0), P BIT(1), C BIT(2), D BIT(3),
    // X BIT(4), DP BIT(5), LC BIT(6), LP BIT(7).
    ("PMCR_EL0", "n", 15, 11),
    ("PMCR_EL0", "e", 0, 0),
    ("PMCR_EL0", "p", 1, 1),
    ("PMCR_EL0", "lc", 6, 6),
    // arm_pmuv3.h: ARMV8_PMU_USERENR_EN BIT(0), SW BIT(1), CR BIT(2), ER BIT(3).
    ("PMUSERENR_EL0", "en", 0, 0),
    ("PMUSERENR_EL0", "sw", 1, 1),
    ("PMUSERENR_EL0", "cr", 2, 2),
    ("PMUSERENR_EL0", "er", 3, 3),
    // tools/sysreg: PMSELR_EL0 Field 4:0 SEL.
    ("PMSELR_EL0", "sel", 4, 0),
    // arm_pmuv3.c: the low 32 bits of PMCEID0/1 are common events 0x00-0x3F, the high 32
    // (shifted down) 0x4000-0x403F.
    ("PMCEID0_EL0", "id", 31, 0),
    ("PMCEID0_EL0", "idhi", 63, 32),
    ("PMCEID1_EL0", "id", 31, 0),
    ("PMCEID1_EL0", "idhi", 63, 32),
    // ARMV8_PMU_CYCLE_IDX 31: the cycle counter's bit in the set/clear registers.
    ("PMINTENSET_EL1", "c", 31, 31),
    ("PMINTENSET_EL1", "p", 30, 0),
    ("PMINTENCLR_EL1", "c", 31, 31),
    ("PMINTENCLR_EL1", "p", 30, 0),
    ("PMOVSSET_EL0", "c", 31, 31),
    ("PMOVSCLR_EL0", "c", 31, 31),
];

/// The cores that predate FEAT_PMUv3p5 (Armv8.5), by the architecture Arm's `cpus.json` gives
/// them: Neoverse N1 `armv8.2-a`, V1 `armv8.4-a`; the others are Armv9.
const BEFORE_PMUV3P5: &[&str] = &["neoverse-n1", "neoverse-v1"];

#[test]
fn the_event_counters_are_as_wide_as_the_architecture_version_says() {
    for p in neoverse() {
        let long = !BEFORE_PMUV3P5.contains(&p.id);
        let pmcr = registers(p).find(|r| r.name == "PMCR_EL0").unwrap();
        let cntr = registers(p).find(|r| r.name == "PMEVCNTR{n}_EL0").unwrap();
        let count = cntr.field("count").unwrap();
        // arm_pmuv3.h: ARMV8_PMU_PMCR_LP BIT(7), which FEAT_PMUv3p5 brought with the 64-bit
        // event counters; before it, bit 7 is reserved and the counters are 32 bits.
        assert_eq!(
            pmcr.field("lp").map(|f| f.lsb),
            long.then_some(7),
            "{}",
            p.id
        );
        assert_eq!(pmcr.reserved_mask >> 7 & 1, u64::from(!long), "{}", p.id);
        assert_eq!(count.msb, if long { 63 } else { 31 }, "{}", p.id);
        // PMEVTYPER.SH (bit 24) came with Secure EL2 (Armv8.4); described from the V2 on.
        let typer = registers(p).find(|r| r.name == "PMEVTYPER{n}_EL0").unwrap();
        assert_eq!(typer.field("sh").is_some(), long, "{}", p.id);
    }
}

#[test]
fn the_fields_linux_names_are_where_it_says() {
    for p in neoverse() {
        for (reg, field, msb, lsb) in LINUX_FIELDS {
            let r = registers(p).find(|r| r.name == *reg).unwrap();
            let f = r
                .field(field)
                .unwrap_or_else(|| panic!("{}: {reg} has no {field}", p.id));
            assert_eq!((f.msb, f.lsb), (*msb, *lsb), "{}: {reg}.{field}", p.id);
        }
        // PMCEID0/1 are read-only; nothing of them may be written.
        for reg in ["PMCEID0_EL0", "PMCEID1_EL0"] {
            let r = registers(p).find(|r| r.name == reg).unwrap();
            assert_eq!(r.writable_mask, 0, "{}: {reg}", p.id);
        }
        // PMUSERENR_EL0: Linux writes only within ARMV8_PMU_USERENR_MASK (0xf before UEN).
        let u = registers(p).find(|r| r.name == "PMUSERENR_EL0").unwrap();
        assert_eq!(u.writable_mask, 0xF, "{}", p.id);
    }
}
