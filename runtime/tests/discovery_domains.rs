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
