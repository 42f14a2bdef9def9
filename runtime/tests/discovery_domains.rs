//! Several discovery domains (issue 43): Diamond Rapids' IMH table (found through PCI device
//! 0x09A1) and CBB table (at the address MSR 0x710 holds), as the simulator publishes them,
//! found, read and joined each on its own; a damaged table names its domain and leaves the
//! other domain's boxes usable.
//!
//! Expected values come from Linux (tip commits 6daf2c35b835 and 66e2075426f3): the names of
//! `dmr_uncores[]` and the ignore lists `dmr_uncore_imh_units_ignore` (0x13, MSE) and
//! `dmr_uncore_cbb_units_ignore` (0x25, SB2UCIE); the global state's layout from
//! `uncore_discovery.h` (`max_units` is bits 25:16 of its first qword).

use std::process::Command;

use pmu_regs::{DomainPlace, ProcessorInfo, PROCESSORS};
use pmu_runtime::discovery::{join_domains, read_domains, BoxStatus, DiscoveryError, DomainJoined};
use pmu_runtime::machine::Machine;
use pmu_runtime::part::joined_domains;
use pmu_runtime::sim::domains::SimDomains;

/// The types Linux's `dmr_uncores[]` names (uncore_snbep.c).
const LINUX_NAMES: [&str; 21] = [
    "PCU", "UBOX", "IMC", "SCA", "CXLCM", "HAMVF", "CBO", "SANTA", "CNCU", "SNCU", "ULA", "DDA",
    "SBO", "UBR", "PCIE4", "CRS", "CPC", "ITC", "OTC", "CMS", "PCIE6",
];

fn dmr() -> &'static ProcessorInfo {
    PROCESSORS
        .iter()
        .copied()
        .find(|p| p.id == "diamond-rapids")
        .expect("diamond-rapids is in the spec")
}

/// The simulated tables found through the access traits (one socket, one die: CPU 0) and
/// joined.
fn joined(sim: &SimDomains) -> Vec<DomainJoined> {
    join_domains(dmr(), read_domains(dmr(), sim, &sim.devices(), |_| vec![0]))
}

fn domain<'a>(joined: &'a [DomainJoined], id: &str) -> &'a DomainJoined {
    joined
        .iter()
        .find(|d| d.domain.id == id)
        .unwrap_or_else(|| panic!("domain {id}"))
}

/// The spec places the domains where Linux's `dmr_uncore_init` finds them.
#[test]
fn spec_places_both_domains_as_linux_does() {
    let d = dmr().discovery_domains;
    assert_eq!(d.len(), 2);
    assert_eq!(
        (d[0].id, d[0].place, d[0].per_die),
        ("imh", DomainPlace::PciDevice(0x09A1), false)
    );
    assert_eq!(
        (d[1].id, d[1].place, d[1].per_die),
        ("cbb", DomainPlace::Msr(0x710), true)
    );
    assert_eq!(d[0].ignored, &[(0x13, "MSE")]);
    assert_eq!(d[1].ignored, &[(0x25, "SB2UCIE")]);
    let mut names: Vec<&str> = dmr().discovery_types.0.iter().map(|(_, n)| *n).collect();
    let mut linux = LINUX_NAMES.to_vec();
    names.sort_unstable();
    linux.sort_unstable();
    assert_eq!(names, linux);
}

/// Both tables are found through the access traits and every box of each joins: each of
/// Linux's named types appears in exactly one domain, matching, and the ignored types are
/// ignored in their own domain.
#[test]
fn both_domains_join_every_box() {
    let joined = joined_domains(dmr(), &Machine::simulating(dmr()));
    assert_eq!(joined.len(), 2);
    let mut seen = Vec::new();
    for d in &joined {
        let j = d.joined.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert!(j.all_match(), "{}", d.domain.id);
        for b in &j.boxes {
            let (dom, name) = b.named.expect("every simulated box has a named type");
            assert_eq!(dom, d.domain.id);
            match name {
                "MSE" | "SB2UCIE" => assert_eq!(b.status.as_str(), "ignored", "{}", b.name()),
                _ => assert_eq!(b.status, BoxStatus::Matching, "{}", b.name()),
            }
            if b.box_id == 0 {
                seen.push(name);
            }
        }
    }
    assert!(domain(&joined, "imh")
        .joined
        .as_ref()
        .unwrap()
        .boxes
        .iter()
        .any(|b| b.named.unwrap().1 == "MSE"));
    assert!(domain(&joined, "cbb")
        .joined
        .as_ref()
        .unwrap()
        .boxes
        .iter()
        .any(|b| b.named.unwrap().1 == "SB2UCIE"));
    for n in LINUX_NAMES {
        assert_eq!(seen.iter().filter(|s| **s == n).count(), 1, "{n}");
    }
}

/// The CBB table's global state declares more entries than the table holds: the CBB domain
/// is a typed error naming it (truncated at its first missing entry), and every IMH box
/// still joins.
#[test]
fn a_damaged_cbb_table_names_cbb_and_leaves_imh_usable() {
    let mut sim = SimDomains::of(dmr()).unwrap();
    let t = sim.table_mut("cbb").unwrap();
    let entries = (t.bytes.len() / 32 - 1) as u64;
    let q = t.qword(0);
    let declared = entries + 24;
    let max_units = 0x3FF << 16;
    t.set_qword(0, (q & !max_units) | (declared << 16));
    let joined = joined(&sim);
    let imh = domain(&joined, "imh")
        .joined
        .as_ref()
        .expect("the IMH table is read");
    assert!(imh.all_match());
    assert!(imh.boxes.iter().any(|b| b.named.unwrap().1 == "IMC"));
    let err = domain(&joined, "cbb").joined.as_ref().unwrap_err();
    match err {
        DiscoveryError::InDomain { domain, source, .. } => {
            assert_eq!(*domain, "cbb");
            assert!(
                matches!(**source, DiscoveryError::Truncated { entry, of, .. } if entry as u64 == entries && u64::from(of) == declared),
                "{source}"
            );
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().starts_with("discovery domain cbb"), "{err}");
}

/// The IMH device's BAR is an I/O BAR: the IMH domain is the error, and every CBB box joins.
#[test]
fn a_damaged_imh_device_names_imh_and_leaves_cbb_usable() {
    let mut sim = SimDomains::of(dmr()).unwrap();
    let t = sim.table_mut("imh").unwrap();
    // BAR 0 at configuration offset 0x10 (PCI); bit 0 set: an I/O BAR.
    t.config[0x10 / 4] = 0x1;
    t.config[0x14 / 4] = 0;
    let joined = joined(&sim);
    let cbb = domain(&joined, "cbb")
        .joined
        .as_ref()
        .expect("the CBB table is read");
    assert!(cbb.all_match());
    assert!(cbb.boxes.iter().any(|b| b.named.unwrap().1 == "CBO"));
    match domain(&joined, "imh").joined.as_ref().unwrap_err() {
        DiscoveryError::InDomain { domain, source, .. } => {
            assert_eq!(*domain, "imh");
            assert!(
                matches!(**source, DiscoveryError::BadBar { offset: 0x10, .. }),
                "{source}"
            );
        }
        other => panic!("{other}"),
    }
}

/// `pmu discover --sim --processor diamond-rapids --check` prints both domains' boxes and
/// passes.
#[test]
fn cli_discovers_both_domains() {
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args([
            "discover",
            "--sim",
            "--processor",
            "diamond-rapids",
            "--check",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("imh IMC 0"), "{text}");
    assert!(text.contains("cbb CBO 0"), "{text}");
    assert!(
        text.contains("cbb SB2UCIE 0") && text.contains("ignored"),
        "{text}"
    );
    assert!(!text.contains("unknown"), "{text}");
}

/// What a counter selecting an event the simulated workload does not name counts in one
/// 10 ms interval: the workload's default, one event in every 1000 cycles of the 2 GHz
/// uncore clock (`runtime/src/sim/workloads.rs`): 20,000 in 10 ms.
const DEFAULT_IN_10MS: u64 = 20_000;

/// The CBB table's global control: its address, read from the table's global state.
fn cbb_global_control(machine: &Machine) -> u64 {
    let tables = pmu_runtime::part::domain_tables(dmr(), machine);
    let cbb = tables.iter().find(|t| t.domain.id == "cbb").unwrap();
    cbb.table.as_ref().unwrap().global.control
}

/// Every register of box CBO0 as the CBB table places it, and the global control.
fn cbo0_registers(machine: &Machine) -> Vec<pmu_runtime::boxes::Reg> {
    let boxes = pmu_runtime::boxes::Boxes::of(dmr());
    let tables = pmu_runtime::part::domain_tables(dmr(), machine);
    let cbb = tables.iter().find(|t| t.domain.id == "cbb").unwrap();
    let entry = cbb
        .table
        .as_ref()
        .unwrap()
        .boxes
        .iter()
        .find(|b| b.box_type == 31 && b.box_id == 0);
    let at = pmu_runtime::discovery::msr_place(entry.unwrap()).unwrap();
    let placed = pmu_runtime::table_placed::placed_boxes(boxes, &[("CBO0", at)]);
    let b = placed.find("CBO0").unwrap();
    let mut regs = b.controls.clone();
    for c in &b.counters {
        regs.extend(c.control);
        regs.push(c.counter);
    }
    regs
}

/// Counts one raw event (`event=0x01`: Intel publishes no Diamond Rapids event list) on CBO0
/// for 10 ms, with `quirks`; the count, and what the global control held during it.
fn count_cbo0(machine: &Machine, quirks: pmu_runtime::quirks::Quirks) -> (u64, u64) {
    use pmu_runtime::access::MmioAccess;
    use pmu_runtime::sampling::uncore::EventSelect;
    use pmu_runtime::session::{Options, Selection, Session, SessionBackend};
    let boxes = pmu_runtime::boxes::Boxes::of(dmr());
    let cbo = boxes.find("CBO0").unwrap();
    assert!(cbo.table_placed() && cbo.counters.is_empty());
    let backend = SessionBackend::Registers(machine);
    let sel = Selection::of_boxes(&[(boxes, cbo)], &["e"], &[EventSelect::event(0x01)]).unwrap();
    let options = Options {
        clock: backend.clock(std::time::Duration::from_millis(10)),
        quirks,
        ..Options::default()
    };
    let mut session = Session::open(&backend, &sel, options).unwrap();
    let during = machine.read_mmio(cbb_global_control(machine), 32).unwrap();
    let interval = session.interval().unwrap();
    session.close().unwrap();
    (interval.counts[0].delta, during)
}

/// Issue 39's done-when for Diamond Rapids' power-on freeze (Linux tip b575fc0e3357: the CBB
/// domain's global_init writes a 32-bit 0 to the global control each CBB table's global state
/// gives, clearing freeze_all, bit 0, set at power-on; the IMH domain has none). The simulated
/// part powers up frozen; with the handling off CBO0 counts 0, with it on the workload's
/// default pace (20,000 in 10 ms), the global control reads 0 while counting, and every
/// register of the box and the global control are put back.
#[test]
fn diamond_rapids_cbb_powers_up_frozen_and_counts_only_after_global_init() {
    use pmu_runtime::access::MmioAccess;
    use pmu_runtime::quirks::Quirks;
    let cbb = dmr()
        .discovery_domains
        .iter()
        .find(|d| d.id == "cbb")
        .unwrap();
    let imh = dmr()
        .discovery_domains
        .iter()
        .find(|d| d.id == "imh")
        .unwrap();
    assert_eq!((cbb.global_init, imh.global_init), (Some(0), None));
    let machine = Machine::simulating(dmr());
    let sim = machine.sim().unwrap();
    let global = cbb_global_control(&machine);
    assert_eq!(
        sim.read_mmio(global, 32).unwrap(),
        1,
        "freeze_all set at power-on"
    );
    let regs = cbo0_registers(&machine);
    assert_eq!(regs.len(), 9, "a box control, 4 controls and 4 counters");
    let read = |r: &pmu_runtime::boxes::Reg| {
        pmu_runtime::read_by_info(sim, r.info, r.addr, pmu_runtime::Site::Cpu(0)).unwrap()
    };
    let before: Vec<u64> = regs.iter().map(read).collect();
    let off = Quirks {
        global_init: false,
        ..Quirks::ALL
    };
    assert_eq!(count_cbo0(&machine, off), (0, 1), "frozen: counts nothing");
    assert_eq!(count_cbo0(&machine, Quirks::ALL), (DEFAULT_IN_10MS, 0));
    assert_eq!(
        regs.iter().map(read).collect::<Vec<_>>(),
        before,
        "CBO0 put back"
    );
    assert_eq!(
        sim.read_mmio(global, 32).unwrap(),
        1,
        "the global control put back"
    );
}

/// `pmu watch --sim` counts Diamond Rapids' CBO0 with a raw encoding at the workload's
/// default pace (2,000,000 a second), and 0 with `--no-quirk global-init`; `pmu discover`
/// says what the session does to the frozen CBB table.
#[test]
fn cli_counts_cbo_after_global_init_and_says_so() {
    let watch = |extra: &[&str]| {
        let mut args = vec![
            "watch",
            "--sim",
            "--processor",
            "diamond-rapids",
            "--unit",
            "CBO0",
            "--event",
            "event=0x01",
            "--count",
            "1",
            "-x,",
        ];
        args.extend_from_slice(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
            .args(&args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{text}{err}");
        let row = text.lines().last().unwrap_or_default().to_string();
        let cells: Vec<String> = row.split(',').map(str::to_string).collect();
        assert!(cells.contains(&"CBO0_PMON_CTR0".to_string()), "{text}");
        cells
    };
    assert!(watch(&[]).contains(&"2000000".to_string()));
    assert!(watch(&["--no-quirk", "global-init"]).contains(&"0".to_string()));
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["discover", "--sim", "--processor", "diamond-rapids"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("cbb table 0: global control at")
            && text.contains("reads 0x1 (freeze_all set")
            && text.contains("writes 0x0 there before counting"),
        "{text}"
    );
    assert!(!text.contains("imh table 0: global control"), "{text}");
}
