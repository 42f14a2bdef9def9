//! The spec's PMUv3 system registers, field by field, against the architecture's own data as
//! transcribed below (facts only: names, encodings, bit positions).
//!
//! Arm's machine-readable register data (AARCHMRS, `Registers.json`, BSD-3-Clause) could not be
//! obtained here: the public copy found (GitHub jonaschen/arm-mrs-2025-03-aarchmrs, the
//! v9Ap6-A build 445 of March 2025) carries `Registers.json` at over 4 MiB, which the search
//! tools' snapshots leave out. So the fields below are transcribed from two sources that are
//! derived from it or checked against it, and must agree with each other and with the spec:
//!
//! - `AARCHMRS`: the bitfield tables of GitHub lelegard/arm-cpusysregs,
//!   `docs/registers-fields.md` (BSD-2-Clause), which its script extracts from Arm's published
//!   JSON and XML register data: every field the architecture defines, up to Armv9.6.
//! - `LINUX`: Linux's `arch/arm64/tools/sysreg` (PMSELR_EL0), `arch/arm64/include/asm/sysreg.h`
//!   (every encoding) and `include/linux/perf/arm_pmuv3.h` (PMCR, PMEVTYPER/PMCCFILTR filter,
//!   PMUSERENR, PMMIR and overflow-status bits), which Linux's reviewers compare with AARCHMRS.
//!
//! A field the architecture adds with a feature the unit's cores predate (Armv9.0 for the
//! V2's unit, Armv8.2 for the N1's) is listed as `later`, with the feature: the spec keeps its
//! bits reserved, and this test checks that it does.

use pmu_regs::{Access, Location, ProcessorInfo, RegisterInfo, SysRegEncoding};

/// One register as the sources give it: its encoding (for an array, element 0's), the fields
/// the unit describes (`name`, msb, lsb) and the later fields it keeps reserved.
struct Arch {
    name: &'static str,
    encoding: (u8, u8, u8, u8, u8),
    fields: &'static [(&'static str, u32, u32)],
    later: &'static [(&'static str, u32, u32, &'static str)],
}

/// The filter bits PMEVTYPER<n>_EL0 and PMCCFILTR_EL0 share (AARCHMRS PMCCFILTR_EL0; Linux
/// ARMV8_PMU_EXCLUDE_EL1 31, EXCLUDE_EL0 30, EXCLUDE_NS_EL1 29, EXCLUDE_NS_EL0 28,
/// INCLUDE_EL2 27, EXCLUDE_EL3 26).
const FILTER: [(&str, u32, u32); 6] = [
    ("p", 31, 31),
    ("u", 30, 30),
    ("nsk", 29, 29),
    ("nsu", 28, 28),
    ("nsh", 27, 27),
    ("m", 26, 26),
];
/// SH, Secure EL2 (FEAT_SEL2, Armv8.4).
const SH: (&str, u32, u32) = ("sh", 24, 24);
/// The filter fields later than Armv9.0 (AARCHMRS PMCCFILTR_EL0).
const FILTER_LATER: [(&str, u32, u32, &str); 5] = [
    ("vs", 57, 56, "FEAT_SME"),
    ("t", 23, 23, "FEAT_TME"),
    ("rlk", 22, 22, "FEAT_RME"),
    ("rlu", 21, 21, "FEAT_RME"),
    ("rlh", 20, 20, "FEAT_RME"),
];
/// Enable, overflow and interrupt registers: C (31) the cycle counter, P<m> (30:0) the event
/// counters (AARCHMRS; Linux ARMV8_PMU_OVSR_P and _C, ARMV8_PMU_CYCLE_IDX 31).
const BITS: &[(&str, u32, u32)] = &[("c", 31, 31), ("p", 30, 0)];
/// F0 (32), the instruction counter (FEAT_PMUv3_ICNTR, Armv9.4).
const F0: &[(&str, u32, u32, &str)] = &[("f0", 32, 32, "FEAT_PMUv3_ICNTR")];

/// The V2's unit (taken by the N2, V3 and N3), described at Armv9.0.
fn v2_unit() -> Vec<Arch> {
    let mut typer: Vec<(&str, u32, u32)> = FILTER.to_vec();
    typer.extend([SH, ("ev_sel", 15, 0)]);
    let mut filter: Vec<(&str, u32, u32)> = FILTER.to_vec();
    filter.push(SH);
    let leak = |v: Vec<(&'static str, u32, u32)>| &*Vec::leak(v);
    vec![
        Arch {
            name: "PMCR_EL0",
            encoding: (3, 3, 9, 12, 0),
            fields: &[
                ("imp", 31, 24),
                ("idcode", 23, 16),
                ("n", 15, 11),
                ("lp", 7, 7),
                ("lc", 6, 6),
                ("dp", 5, 5),
                ("x", 4, 4),
                ("d", 3, 3),
                ("c", 2, 2),
                ("p", 1, 1),
                ("e", 0, 0),
            ],
            later: &[
                ("fzs", 32, 32, "FEAT_SPEv1p2"),
                ("fzo", 9, 9, "FEAT_PMUv3p7"),
            ],
        },
        Arch {
            name: "PMEVTYPER{n}_EL0",
            // sysreg.h: 3, 3, 14, 0b11:n[4:3], n[2:0].
            encoding: (3, 3, 14, 12, 0),
            fields: leak(typer),
            later: &[
                ("tc", 63, 61, "FEAT_PMUv3_TH"),
                ("th", 43, 32, "FEAT_PMUv3_TH"),
                ("mt", 25, 25, "FEAT_MTPMU"),
                ("t", 23, 23, "FEAT_TME"),
                ("rlk", 22, 22, "FEAT_RME"),
                ("rlu", 21, 21, "FEAT_RME"),
                ("rlh", 20, 20, "FEAT_RME"),
            ],
        },
        Arch {
            name: "PMCCFILTR_EL0",
            encoding: (3, 3, 14, 15, 7),
            fields: leak(filter),
            later: &FILTER_LATER,
        },
        Arch {
            name: "PMEVCNTR{n}_EL0",
            // sysreg.h: 3, 3, 14, 0b10:n[4:3], n[2:0]; 64 bits with FEAT_PMUv3p5.
            encoding: (3, 3, 14, 8, 0),
            fields: &[("count", 63, 0)],
            later: &[],
        },
        Arch {
            name: "PMCCNTR_EL0",
            encoding: (3, 3, 9, 13, 0),
            fields: &[("count", 63, 0)],
            later: &[],
        },
        Arch {
            name: "PMCNTENSET_EL0",
            encoding: (3, 3, 9, 12, 1),
            fields: BITS,
            later: F0,
        },
        Arch {
            name: "PMCNTENCLR_EL0",
            encoding: (3, 3, 9, 12, 2),
            fields: BITS,
            later: F0,
        },
        Arch {
            name: "PMOVSCLR_EL0",
            encoding: (3, 3, 9, 12, 3),
            fields: BITS,
            later: F0,
        },
        Arch {
            name: "PMOVSSET_EL0",
            encoding: (3, 3, 9, 14, 3),
            fields: BITS,
            later: F0,
        },
        Arch {
            name: "PMINTENSET_EL1",
            encoding: (3, 0, 9, 14, 1),
            fields: BITS,
            later: F0,
        },
        Arch {
            name: "PMINTENCLR_EL1",
            encoding: (3, 0, 9, 14, 2),
            fields: BITS,
            later: F0,
        },
        Arch {
            name: "PMSWINC_EL0",
            encoding: (3, 3, 9, 12, 4),
            fields: &[("p", 30, 0)],
            later: &[],
        },
        Arch {
            name: "PMSELR_EL0",
            encoding: (3, 3, 9, 12, 5),
            fields: &[("sel", 4, 0)],
            later: &[],
        },
        Arch {
            name: "PMCEID0_EL0",
            encoding: (3, 3, 9, 12, 6),
            fields: &[("idhi", 63, 32), ("id", 31, 0)],
            later: &[],
        },
        Arch {
            name: "PMCEID1_EL0",
            encoding: (3, 3, 9, 12, 7),
            fields: &[("idhi", 63, 32), ("id", 31, 0)],
            later: &[],
        },
        Arch {
            name: "PMUSERENR_EL0",
            encoding: (3, 3, 9, 14, 0),
            fields: &[("er", 3, 3), ("cr", 2, 2), ("sw", 1, 1), ("en", 0, 0)],
            later: &[
                ("tid", 6, 6, "FEAT_PMUv3p9"),
                ("ir", 5, 5, "FEAT_PMUv3_ICNTR"),
                ("uen", 4, 4, "FEAT_PMUv3p9"),
            ],
        },
        Arch {
            name: "PMMIR_EL1",
            encoding: (3, 0, 9, 14, 6),
            fields: &[
                ("thwidth", 23, 20),
                ("bus_width", 19, 16),
                ("bus_slots", 15, 8),
                ("slots", 7, 0),
            ],
            later: &[
                ("sme", 28, 28, "FEAT_SME (PMUv3 for SME)"),
                ("edge", 27, 24, "FEAT_PMUv3_EDGE"),
            ],
        },
        // No fields of their own (the selected register's): sysreg.h's encodings.
        Arch {
            name: "PMXEVTYPER_EL0",
            encoding: (3, 3, 9, 13, 1),
            fields: &[("value", 63, 0)],
            later: &[],
        },
        Arch {
            name: "PMXEVCNTR_EL0",
            encoding: (3, 3, 9, 13, 2),
            fields: &[("value", 63, 0)],
            later: &[],
        },
    ]
}

/// The N1's unit (taken by the V1), described at Armv8.2: no FEAT_PMUv3p5 (32-bit event
/// counters, no PMCR_EL0.LP), no FEAT_SEL2 (no SH), no FEAT_PMUv3p4 (no PMMIR_EL1).
fn n1_unit() -> Vec<Arch> {
    let mut regs = v2_unit();
    regs.retain(|r| r.name != "PMMIR_EL1");
    for r in &mut regs {
        let fields = r.fields.iter().copied();
        match r.name {
            "PMCR_EL0" => {
                r.fields = Vec::leak(fields.filter(|f| f.0 != "lp").collect());
                r.later = &[
                    ("fzs", 32, 32, "FEAT_SPEv1p2"),
                    ("fzo", 9, 9, "FEAT_PMUv3p7"),
                    ("lp", 7, 7, "FEAT_PMUv3p5"),
                ];
            }
            "PMEVTYPER{n}_EL0" | "PMCCFILTR_EL0" => {
                r.fields = Vec::leak(fields.filter(|f| f.0 != "sh").collect());
                let mut later = r.later.to_vec();
                later.push(("sh", 24, 24, "FEAT_SEL2"));
                r.later = Vec::leak(later);
            }
            "PMEVCNTR{n}_EL0" | "PMXEVCNTR_EL0" => {
                let name = r.fields[0].0;
                r.fields = Vec::leak(vec![(name, 31, 0)]);
                r.later = &[("(high half)", 63, 32, "FEAT_PMUv3p5")];
            }
            _ => {}
        }
    }
    regs
}

fn register(p: &ProcessorInfo, name: &str) -> &'static RegisterInfo {
    p.units
        .iter()
        .flat_map(|u| u.registers.iter())
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("{}: the spec has no {name}", p.id))
}

/// Every register of `arch` in `p`'s spec at its encoding, every field at its bits, every later
/// field's bits reserved, and no field the sources do not give.
fn check(p: &ProcessorInfo, arch: &[Arch]) -> usize {
    let mut checked = 0;
    for a in arch {
        let r = register(p, a.name);
        let (op0, op1, crn, crm, op2) = a.encoding;
        let first = r.known_addresses().iter().find(|x| x.index == 0);
        assert_eq!(
            first.map(|x| x.location),
            Some(Location::SysReg(SysRegEncoding::new(
                op0, op1, crn, crm, op2
            ))),
            "{}: {}'s encoding",
            p.id,
            a.name
        );
        for &(name, msb, lsb) in a.fields {
            let f = r
                .field(name)
                .unwrap_or_else(|| panic!("{}: {} has no field {name}", p.id, a.name));
            assert_eq!((f.msb, f.lsb), (msb, lsb), "{}: {}.{name}", p.id, a.name);
            assert_ne!(f.access, Access::Rsv, "{}: {}.{name}", p.id, a.name);
            checked += 1;
        }
        for &(name, msb, lsb, feature) in a.later {
            let bits = (lsb..=msb).fold(0u64, |m, b| m | 1 << b);
            assert_eq!(
                r.reserved_mask & bits,
                bits,
                "{}: {}.{name} ({feature}) is later than this unit and must stay reserved",
                p.id,
                a.name
            );
        }
        for f in r.fields.iter().filter(|f| f.access != Access::Rsv) {
            assert!(
                a.fields.iter().any(|&(name, _, _)| name == f.name),
                "{}: {}.{} is in no source",
                p.id,
                a.name,
                f.name
            );
        }
    }
    checked
}

#[test]
fn the_pmuv3_registers_match_the_architecture_field_by_field() {
    let v2 = check(&pmu_regs::neoverse_v2::PROCESSOR, &v2_unit());
    let n1 = check(&pmu_regs::neoverse_n1::PROCESSOR, &n1_unit());
    // Every field of every register of both units was compared.
    assert_eq!((v2, n1), (56, 49));
    // PMCR_EL0.N (15:11) is the unit's counter count, the structure's `counter-count`.
    for p in [
        &pmu_regs::neoverse_v2::PROCESSOR,
        &pmu_regs::neoverse_n1::PROCESSOR,
    ] {
        let n = register(p, "PMCR_EL0").role(pmu_regs::Role::CounterCount);
        assert_eq!(n.map(|f| (f.msb, f.lsb)), Some((15, 11)), "{}", p.id);
    }
}

/// The processors that take a unit (units-from) have its registers as they are.
#[test]
fn the_cores_that_take_a_unit_have_the_same_registers() {
    for id in ["neoverse-n2", "neoverse-v3", "neoverse-n3"] {
        let p = pmu_regs::PROCESSORS.iter().find(|p| p.id == id).unwrap();
        check(p, &v2_unit());
    }
    let v1 = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == "neoverse-v1")
        .unwrap();
    check(v1, &n1_unit());
}
