//! Zen 4 and Zen 5 memory controllers as Linux reads them: how many a socket has active and
//! how many counters each gets come from CPUID 0x80000022, not from a fixed twelve by four.
//!
//! Linux arch/x86/events/amd/uncore.c: amd_uncore_umc_ctx_scan takes ECX of leaf 0x80000022
//! as the active-controller mask and EBX bits 21:16 (perf_event.h, union
//! cpuid_0x80000022_ebx, num_umc_pmc) as the number of UMC counters; amd_uncore_umc_ctx_init
//! makes one amd_umc_N PMU per set bit of the mask, numbered in order over the active
//! controllers, each with num_umc_pmc / hweight32(mask) counters, the l-th at MSR
//! 0xC0010800 + l x counters x 2. The CPUID values below are written by hand.

use std::time::Duration;

use pmu_runtime::machine::Machine;
use pmu_runtime::part::box_count;
use pmu_runtime::session::{Clock, Options, Pace, Selection, Session, SessionBackend};
use pmu_runtime::sim::SimConfig;

/// CPUID 0x80000022 ECX and EBX[21:16] as the spec's `<box-count>` names them.
const ACTIVE: &str = "80000022H.ECX[31:0]";
const COUNTERS: &str = "80000022H.EBX[21:16]";

fn zen(id: &str) -> &'static pmu_regs::ProcessorInfo {
    pmu_regs::PROCESSORS.iter().find(|p| p.id == id).unwrap()
}

/// A simulated part whose CPUID 0x80000022 says `cpuid` (hand-written values by bits).
fn part(id: &str, cpuid: &'static [(&'static str, u32)]) -> Machine {
    Machine::simulated(SimConfig {
        cpuid_counts: cpuid,
        ..SimConfig::of(zen(id))
    })
}

fn umc_pmu(id: &str) -> &'static pmu_regs::PmuInfo {
    zen(id)
        .units
        .iter()
        .find(|u| u.name == "UMC")
        .and_then(|u| u.pmu)
        .unwrap()
}

/// Opens, reads once and closes a session counting umc_cas_cmd.rd on `unit`.
fn count(machine: &Machine, id: &'static str, unit: &str) -> pmu_runtime::Result<u64> {
    let selection = Selection::of_named_boxes(&[unit], &["event=umc_cas_cmd.rd"], Some(id), None)?;
    let backend = SessionBackend::Registers(machine);
    // A steady pace, not a workload: whether the box counts is the question here.
    let options = Options {
        clock: Clock::Steps(Duration::from_millis(10)),
        pace: Pace::Steady(10_000),
        ..Options::default()
    };
    let mut session = Session::open(&backend, &selection, options)?;
    let delta = session.interval()?.counts[0].delta;
    session.close()?;
    Ok(delta)
}

#[test]
fn the_simulated_part_answers_cpuid_with_every_listed_controller() {
    for id in ["amd-zen4", "amd-zen5"] {
        let machine = Machine::simulating(zen(id));
        let leaf = machine.cpuid(0x8000_0022).unwrap();
        // Twelve controllers active (bits 11:0 of ECX), 12 x 4 = 48 counters in EBX[21:16],
        // beside the core's 6 counters (EBX[3:0]).
        assert_eq!(leaf[2], 0xFFF, "{id}");
        assert_eq!(leaf[1] >> 16 & 0x3F, 48, "{id}");
        assert_eq!(leaf[1] & 0xF, 6, "{id}");
        let read = box_count(&machine, umc_pmu(id), 0).unwrap().unwrap();
        assert_eq!(read.present_count(), 12, "{id}");
        assert!(count(&machine, id, "UMC11").unwrap() > 0, "{id}");
    }
}

#[test]
fn a_part_with_eight_active_controllers_has_umc0_to_umc7_whatever_their_bits() {
    // Eight controllers active, not the lowest eight: bits 0-3 and 6-9 (0x3CF); 32 counters
    // together, 4 each.
    static CPUID: [(&str, u32); 2] = [(ACTIVE, 0x3CF), (COUNTERS, 32)];
    for id in ["amd-zen4", "amd-zen5"] {
        let machine = part(id, &CPUID);
        let read = box_count(&machine, umc_pmu(id), 0).unwrap().unwrap();
        assert_eq!(read.present_count(), 8, "{id}: {read:?}");
        assert!(read.read.contains("0x3cf"), "{id}: {}", read.read);
        // The kernel's amd_umc_0 to amd_umc_7: the first eight boxes, counted.
        for unit in ["UMC0", "UMC7"] {
            assert!(count(&machine, id, unit).unwrap() > 0, "{id} {unit}");
        }
        // A ninth is refused by name, before anything is written.
        let (_, writes) = machine.access_counts();
        let e = count(&machine, id, "UMC8").unwrap_err().to_string();
        assert!(
            e.contains("UMC8") && e.contains("UMC0 to UMC7"),
            "{id}: {e}"
        );
        assert!(e.contains("80000022H.ECX"), "{id}: {e}");
        assert_eq!(
            machine.access_counts().1,
            writes,
            "{id}: written before refusing"
        );
    }
}

#[test]
fn a_part_whose_controllers_have_other_than_four_counters_is_refused_saying_why() {
    // Eight controllers, 16 counters together: two each, so amd_umc_1's first control is
    // 0xC0010800 + 1 x 2 x 2 = 0xC0010804, where the spec has UMC0's third.
    static CPUID: [(&str, u32); 2] = [(ACTIVE, 0xFF), (COUNTERS, 16)];
    let machine = part("amd-zen4", &CPUID);
    let (_, writes) = machine.access_counts();
    let e = count(&machine, "amd-zen4", "UMC0").unwrap_err().to_string();
    assert!(e.contains("2 each") && e.contains("4 each"), "{e}");
    assert!(e.contains("--backend perf"), "{e}");
    assert_eq!(machine.access_counts().1, writes);
    // A zero mask is a leaf that enumerates nothing (no PerfMonV2, or not this vendor's
    // CPUID), as for every `count-cpuid`: the part does not say, and the spec's twelve stand.
    static NONE: [(&str, u32); 2] = [(ACTIVE, 0), (COUNTERS, 0)];
    let machine = part("amd-zen4", &NONE);
    assert!(box_count(&machine, umc_pmu("amd-zen4"), 0)
        .unwrap()
        .is_none());
}

#[test]
fn a_directory_tree_without_cpuid_keeps_every_listed_controller() {
    // Not the host's root: no CPUID to ask, so the part does not say and the spec's twelve
    // stand.
    let root = tempfile::tempdir().unwrap();
    let machine = Machine::hardware(root.path());
    assert_eq!(machine.cpuid(0x8000_0022), None);
    assert!(box_count(&machine, umc_pmu("amd-zen4"), 0)
        .unwrap()
        .is_none());
}
