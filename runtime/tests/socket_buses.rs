//! Which socket owns each uncore PCI bus, read from the part as the processor's
//! `<socket-bus>` says (the U-box's node id and node map), against sysfs trees the tests
//! build: no bus order is assumed, a socket's devices may span several buses, and a map that
//! does not name one owner per bus is refused with what was read.

use pmu_runtime::pci::PciSysfs;
use pmu_runtime::BackendError;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::{pci_tree, poke};
#[path = "support/spec.rs"]
mod spec;
use spec::processor;

/// Writes a U-box's node id and node map (slot n: package n's node id) into its config.
fn ubox(tree: &tempfile::TempDir, bdf: &str, node_at: u64, map_at: u64, node: u64, map: &[u64]) {
    let config = tree.path().join(bdf).join("config");
    let packed = map.iter().enumerate().fold(0, |m, (i, n)| m | n << (3 * i));
    poke(&config, node_at, node);
    poke(&config, map_at, packed);
}

/// A two-socket Skylake-SP whose firmware gave package 1 the low buses: the U-box (8086:2014
/// at 8.0) of bus 0x00 has node 1, that of bus 0x80 node 0, and the map puts node 0 in
/// package 0's slot. Each socket's M2M (8086:2066, also at 8.0) and PCU capability function
/// (8086:2083 at 1e.3) sit on higher buses of their own, which belong with the U-box below.
fn skylake_sp_packages_swapped() -> tempfile::TempDir {
    let tree = pci_tree(&[
        ("0000:00:08.0", 0x8086, 0x2014),
        ("0000:17:1e.3", 0x8086, 0x2083),
        ("0000:3a:08.0", 0x8086, 0x2066),
        ("0000:80:08.0", 0x8086, 0x2014),
        ("0000:85:1e.3", 0x8086, 0x2083),
        ("0000:ae:08.0", 0x8086, 0x2066),
    ]);
    ubox(&tree, "0000:00:08.0", 0xC0, 0xD4, 1, &[0, 1]);
    ubox(&tree, "0000:80:08.0", 0xC0, 0xD4, 0, &[0, 1]);
    tree
}

#[test]
fn skylake_sp_sockets_follow_the_node_map_not_the_bus_order() {
    use pmu_regs::skylake_sp::m2m::M2M_PCI_PMON_BOX_CTL;
    use pmu_regs::skylake_sp::pcu::CAPID6;
    let tree = skylake_sp_packages_swapped();
    let found = PciSysfs::with_root(tree.path())
        .discover(processor("skylake-sp"))
        .unwrap();
    let summary: Vec<_> = found
        .sockets
        .iter()
        .map(|s| (s.package, s.bus, s.devices.len()))
        .collect();
    assert_eq!(summary, vec![(Some(0), 0x80, 3), (Some(1), 0x00, 3)]);
    let at = |socket, reg| found.bdf(socket, reg).unwrap().to_string();
    assert_eq!(at(0, M2M_PCI_PMON_BOX_CTL[0]), "0000:ae:08.0");
    assert_eq!(at(1, M2M_PCI_PMON_BOX_CTL[0]), "0000:3a:08.0");
    assert_eq!(found.bdf(0, CAPID6).unwrap().to_string(), "0000:85:1e.3");
    assert_eq!(found.bdf(1, CAPID6).unwrap().to_string(), "0000:17:1e.3");
}

#[test]
fn ice_lake_sp_capability_bus_goes_with_the_u_box_bus_below_it() {
    use pmu_regs::ice_lake_sp::m2m::M2M_PCI_PMON_BOX_CTL;
    // The boot logs' layout: U-box and M2M on 7e and fe, the PCU functions on 7f and ff;
    // here package 1 is on 7e/7f.
    let tree = pci_tree(&[
        ("0000:7e:00.0", 0x8086, 0x3450),
        ("0000:7e:0c.0", 0x8086, 0x344a),
        ("0000:fe:00.0", 0x8086, 0x3450),
        ("0000:fe:0c.0", 0x8086, 0x344a),
    ]);
    ubox(&tree, "0000:7e:00.0", 0xC0, 0xD4, 5, &[2, 5]);
    ubox(&tree, "0000:fe:00.0", 0xC0, 0xD4, 2, &[2, 5]);
    let found = PciSysfs::with_root(tree.path())
        .discover(processor("ice-lake-sp"))
        .unwrap();
    assert_eq!(found.sockets[0].bus, 0xfe);
    assert_eq!(
        found.bdf(1, M2M_PCI_PMON_BOX_CTL[0]).unwrap().to_string(),
        "0000:7e:0c.0"
    );
}

fn bus_owner_problem(err: BackendError) -> (String, String) {
    match err {
        BackendError::BusOwner { bus, problem } => (bus, problem),
        other => panic!("expected a bus-owner error, got {other}"),
    }
}

#[test]
fn a_node_id_in_no_slot_of_the_map_is_refused_with_what_was_read() {
    let tree = skylake_sp_packages_swapped();
    ubox(&tree, "0000:80:08.0", 0xC0, 0xD4, 3, &[0, 1]);
    let err = PciSysfs::with_root(tree.path())
        .discover(processor("skylake-sp"))
        .unwrap_err();
    let message = err.to_string();
    let (bus, problem) = bus_owner_problem(err);
    assert_eq!(bus, "0000:80");
    assert!(problem.contains("node id 3"), "{problem}");
    assert!(problem.contains("0x00000008"), "{problem}");
    assert!(message.contains("setpci"), "{message}");
}

#[test]
fn two_buses_naming_one_package_are_refused() {
    let tree = skylake_sp_packages_swapped();
    ubox(&tree, "0000:80:08.0", 0xC0, 0xD4, 1, &[0, 1]);
    let (bus, problem) = bus_owner_problem(
        PciSysfs::with_root(tree.path())
            .discover(processor("skylake-sp"))
            .unwrap_err(),
    );
    assert_eq!(bus, "0000:80");
    assert!(problem.contains("package 1"), "{problem}");
    assert!(problem.contains("0000:00"), "{problem}");
}

#[test]
fn a_bus_below_every_u_box_has_no_owner() {
    // Move socket 1's M2M from bus 0x3a to bus 0x01, between no U-box below it and the
    // U-box of bus 0x00... so first move that U-box up to bus 0x05.
    let tree = skylake_sp_packages_swapped();
    let rename = |from: &str, to: &str| {
        std::fs::rename(tree.path().join(from), tree.path().join(to)).unwrap();
    };
    rename("0000:00:08.0", "0000:05:08.0");
    rename("0000:3a:08.0", "0000:01:08.0");
    let (bus, problem) = bus_owner_problem(
        PciSysfs::with_root(tree.path())
            .discover(processor("skylake-sp"))
            .unwrap_err(),
    );
    assert_eq!(bus, "0000:01");
    assert!(problem.contains("no lower bus"), "{problem}");
}

#[test]
fn e5_devices_off_the_u_box_bus_are_refused() {
    // E5-2600: every uncore device of a socket is on its U-box's bus (other-buses="none").
    let tree = pci_tree(&[
        ("0000:3f:0b.0", 0x8086, 0x3ce0),
        ("0000:3f:0e.1", 0x8086, 0x3c46),
        ("0000:7e:0e.1", 0x8086, 0x3c46),
    ]);
    ubox(&tree, "0000:3f:0b.0", 0x40, 0x54, 0, &[0]);
    let (bus, problem) = bus_owner_problem(
        PciSysfs::with_root(tree.path())
            .discover(processor("xeon-e5-2600"))
            .unwrap_err(),
    );
    assert_eq!(bus, "0000:7e");
    assert!(problem.contains("8086:3ce0 (dev 11 fn 0)"), "{problem}");
}

#[test]
fn several_buses_without_any_u_box_are_refused_not_guessed() {
    let tree = pci_tree(&[
        ("0000:3f:0e.1", 0x8086, 0x3c46),
        ("0000:7f:0e.1", 0x8086, 0x3c46),
    ]);
    let (_, problem) = bus_owner_problem(
        PciSysfs::with_root(tree.path())
            .discover(processor("xeon-e5-2600"))
            .unwrap_err(),
    );
    assert!(problem.contains("on 2 buses but none has"), "{problem}");
    // One bus alone needs no owner: it is the only socket.
    let one = pci_tree(&[("0000:3f:0e.1", 0x8086, 0x3c46)]);
    let found = PciSysfs::with_root(one.path())
        .discover(processor("xeon-e5-2600"))
        .unwrap();
    assert_eq!(found.sockets.len(), 1);
}
