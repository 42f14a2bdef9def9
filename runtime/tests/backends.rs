//! The MSR and PCI backends and the topology reader against file trees the tests make: a
//! regular file read with pread at the MSR number behaves like `/dev/cpu/N/msr`, and a
//! directory of `<BDF>/{vendor,device,config}` like sysfs.

use std::fs;

use pmu_regs::arch::core::{IA32_PERF_CAPABILITIES, IA32_PERF_GLOBAL_STATUS};
use pmu_regs::xeon_7500::wbox::{WEvtSel, W_MSR_PMON_EVT_SEL};
use pmu_regs::xeon_e5_2600::ha::{HaCtl, HA_PCI_PMON_BOX_CTL, HA_PCI_PMON_CTL, HA_PCI_PMON_CTR};
use pmu_regs::xeon_e5_2600::qpi::Q_P_PCI_PMON_CTL;
use pmu_regs::PROCESSORS;
use pmu_runtime::msr::MsrDev;
use pmu_runtime::pci::{Bdf, PciSysfs};
use pmu_runtime::topology::Topology;
use pmu_runtime::{AccessError, BackendError, MsrAccess, MsrAccessExt, PciAccess, PciAccessExt};

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::redact;
use fake_machine::{pci_tree, peek, poke};

/// A tree with `/dev/cpu/N/msr` for each CPU: sparse files covering MSRs 0..0x1000.
fn msr_tree(cpus: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for cpu in 0..cpus {
        let d = dir.path().join(cpu.to_string());
        fs::create_dir(&d).unwrap();
        fs::File::create(d.join("msr"))
            .unwrap()
            .set_len(0x1000 + 8)
            .unwrap();
    }
    dir
}

/// The message without the temporary directory's name, for snapshots.
#[test]
fn msr_round_trip_at_the_msr_number() {
    let tree = msr_tree(2);
    let dev = MsrDev::with_root(tree.path());
    let cpu = dev.on_cpu(1);
    let sel = WEvtSel::RESET
        .with_ev_sel(0x12)
        .with_umask(0x0f)
        .with_en(true);
    cpu.write(W_MSR_PMON_EVT_SEL[2], sel).unwrap();
    // The 8 bytes sit at offset 0xC94, little-endian, in CPU 1's file only.
    assert_eq!(peek(&tree.path().join("1/msr"), 0xC94), sel.bits());
    assert_eq!(peek(&tree.path().join("0/msr"), 0xC94), 0);
    assert_eq!(cpu.read(W_MSR_PMON_EVT_SEL[2]).unwrap(), sel);
    assert_eq!(dev.read_msr(1, 0xC94).unwrap(), sel.bits());
}

#[test]
fn modify_never_writes_reserved_bits_back() {
    let tree = msr_tree(1);
    let file = tree.path().join("0/msr");
    // Hardware returned a value with reserved bit 50 and ignored bit 63 set.
    poke(&file, 0xC90, 1 << 50 | 1 << 63 | 0x05);
    let dev = MsrDev::with_root(tree.path());
    let written = dev
        .on_cpu(0)
        .modify(W_MSR_PMON_EVT_SEL[0], |s| s.with_en(true))
        .unwrap();
    assert!(written.en());
    assert_eq!(written.ev_sel(), 0x05);
    let raw = peek(&file, 0xC90);
    assert_eq!(
        raw & WEvtSel::RESERVED_MASK,
        0,
        "a reserved bit was written back"
    );
    assert_eq!(raw, written.bits());
}

#[test]
fn writes_with_reserved_bits_or_to_read_only_registers_are_refused_before_io() {
    let tree = msr_tree(1);
    let file = tree.path().join("0/msr");
    let dev = MsrDev::with_root(tree.path());
    let cpu = dev.on_cpu(0);

    let err = cpu
        .write_raw(W_MSR_PMON_EVT_SEL[0], 1 << 61 | 0x01)
        .unwrap_err();
    assert!(
        matches!(err.access_kind(), Some(AccessError::ReservedBits { bits, .. }) if *bits == 1 << 61)
    );
    assert_eq!(peek(&file, 0xC90), 0, "nothing may be written");
    insta::assert_snapshot!("reserved_bits", err.to_string());

    let err = cpu.write_raw(IA32_PERF_CAPABILITIES, 0).unwrap_err();
    assert!(matches!(err.access_kind(), Some(AccessError::ReadOnly)));
    insta::assert_snapshot!("read_only", err.to_string());
    let err = cpu.write_raw(IA32_PERF_GLOBAL_STATUS, 1).unwrap_err();
    assert!(matches!(err.access_kind(), Some(AccessError::ReadOnly)));
}

#[test]
fn a_missing_device_file_says_to_load_the_module() {
    let tree = msr_tree(1);
    let dev = MsrDev::with_root(tree.path());
    let err = dev.on_cpu(7).read(W_MSR_PMON_EVT_SEL[0]).unwrap_err();
    assert!(matches!(
        err.access_kind(),
        Some(AccessError::NoMsrDevice { .. })
    ));
    insta::assert_snapshot!("no_msr_device", redact(&err.to_string(), tree.path()));
}

#[test]
fn a_read_past_the_end_is_a_short_transfer() {
    let tree = tempfile::tempdir().unwrap();
    fs::create_dir(tree.path().join("0")).unwrap();
    fs::File::create(tree.path().join("0/msr"))
        .unwrap()
        .set_len(0x100)
        .unwrap();
    let dev = MsrDev::with_root(tree.path());
    let err = dev.read_msr(0, 0xC90).unwrap_err();
    assert!(matches!(
        err.access_kind(),
        Some(AccessError::Short { done: 0, wanted: 8 })
    ));
    insta::assert_snapshot!("short_read", err.to_string());
}

#[test]
fn os_errors_are_classified_with_advice() {
    // EACCES and EIO cannot be provoked with files when tests run as root, so the mapping
    // from the OS error to the kind (and its message) is checked directly.
    use pmu_runtime::{Op, Target};
    let target = Target::Msr {
        cpu: 2,
        address: 0x345,
    };
    let denied = BackendError::Access {
        op: Op::Read,
        target,
        register: Some("IA32_PERF_CAPABILITIES"),
        kind: AccessError::PermissionDenied {
            path: "/dev/cpu/2/msr".into(),
        },
        source: Some(std::io::Error::from_raw_os_error(13)),
    };
    insta::assert_snapshot!("permission_denied", denied.to_string());
    let rejected = BackendError::Access {
        op: Op::Write,
        target,
        register: Some("IA32_PERF_CAPABILITIES"),
        kind: AccessError::Rejected,
        source: Some(std::io::Error::from_raw_os_error(5)),
    };
    insta::assert_snapshot!("rejected", rejected.to_string());
}

fn e5() -> &'static pmu_regs::ProcessorInfo {
    PROCESSORS.iter().find(|p| p.id == "xeon-e5-2600").unwrap()
}

#[test]
fn discovery_finds_each_sockets_devices_by_id_from_the_metadata() {
    let tree = pci_tree(&[
        ("0000:7f:0e.1", 0x8086, 0x3c46), // HA, socket 1
        ("0000:3f:0e.1", 0x8086, 0x3c46), // HA, socket 0
        ("0000:3f:08.2", 0x8086, 0x3c41), // QPI port 0
        ("0000:3f:09.2", 0x8086, 0x3c42), // QPI port 1
        ("0000:7f:09.2", 0x8086, 0x3c42),
        ("0000:00:1f.0", 0x8086, 0x1d41), // an Intel device that is not uncore
        ("0000:3f:0e.2", 0x10de, 0x3c46), // right id, wrong vendor
        ("0000:3f:0d.1", 0x8086, 0x3c46), // right id, wrong device number
        ("0000:3f:0b.0", 0x8086, 0x3ce0), // U-box: node 0, package 0
        ("0000:7f:0b.0", 0x8086, 0x3ce0), // U-box: node 1, package 1
    ]);
    for (bdf, node) in [("0000:3f:0b.0", 0u64), ("0000:7f:0b.0", 1)] {
        let config = tree.path().join(bdf).join("config");
        poke(&config, 0x40, node);
        poke(&config, 0x54, 1 << 3); // package 0: node 0, package 1: node 1
    }
    let pci = PciSysfs::with_root(tree.path());
    let found = pci.discover(e5()).unwrap();
    assert_eq!(found.sockets.len(), 2);
    assert_eq!(found.sockets[0].bus, 0x3f);
    assert_eq!(found.sockets[0].devices.len(), 4);
    assert_eq!(
        found.bdf(1, HA_PCI_PMON_BOX_CTL).unwrap(),
        "0000:7f:0e.1".parse().unwrap()
    );
    assert_eq!(
        found.bdf(1, Q_P_PCI_PMON_CTL[1][0]).unwrap(),
        "0000:7f:09.2".parse().unwrap()
    );
    let missing = found
        .bdf(1, pmu_regs::xeon_e5_2600::qpi::Q_P_PCI_PMON_CTL[0][0])
        .unwrap_err();
    insta::assert_snapshot!("device_not_found", missing.to_string());
}

#[test]
fn discovery_falls_back_to_the_config_header() {
    let tree = tempfile::tempdir().unwrap();
    let d = tree.path().join("0000:3f:0e.1");
    fs::create_dir(&d).unwrap();
    let mut config = vec![0u8; 256];
    config[..4].copy_from_slice(&[0x86, 0x80, 0x46, 0x3c]);
    fs::write(d.join("config"), config).unwrap();
    let found = PciSysfs::with_root(tree.path()).discover(e5()).unwrap();
    assert_eq!(
        found.sockets[0].devices,
        vec![(0x3c46, "3f:0e.1".parse().unwrap())]
    );
}

#[test]
fn no_uncore_devices_lists_what_was_looked_for() {
    let tree = pci_tree(&[("0000:00:02.0", 0x8086, 0x0166)]);
    let err = PciSysfs::with_root(tree.path()).discover(e5()).unwrap_err();
    let msg = redact(&err.to_string(), tree.path());
    assert!(msg.contains("8086:3c46 (HA, dev 14 fn 1)"), "{msg}");
    insta::assert_snapshot!("no_uncore_devices", msg);
}

#[test]
fn pci_round_trip_and_48_bit_counter_across_two_dwords() {
    let tree = pci_tree(&[("0000:3f:0e.1", 0x8086, 0x3c46)]);
    let pci = PciSysfs::with_root(tree.path());
    let bdf: Bdf = "0000:3f:0e.1".parse().unwrap();
    let dev = pci.on_device(bdf);
    let ctl = HaCtl::RESET
        .with_ev_sel(0x01)
        .with_umask(0x03)
        .with_en(true);
    dev.write(HA_PCI_PMON_CTL[2], ctl).unwrap();
    assert_eq!(pci.read_dword(bdf, 0xD8 + 8).unwrap(), ctl.bits());
    assert_eq!(dev.read(HA_PCI_PMON_CTL[2]).unwrap(), ctl);
    // A counter value with both halves populated.
    let config = tree.path().join("0000:3f:0e.1/config");
    poke(&config, 0xA8, 0x0000_1234_8765_4321);
    assert_eq!(
        dev.read(HA_PCI_PMON_CTR[1]).unwrap().event_count(),
        0x1234_8765_4321
    );
    // A write is two dwords, low first.
    dev.write_raw(HA_PCI_PMON_CTR[0], 0x0000_ABCD_0000_0001)
        .unwrap();
    assert_eq!(peek(&config, 0xA0), 0x0000_ABCD_0000_0001);
    // Bits 63:48 of a counter are reserved.
    assert!(dev.write_raw(HA_PCI_PMON_CTR[0], 1 << 50).is_err());
}

#[test]
fn a_missing_pci_device_says_so() {
    let tree = pci_tree(&[]);
    let pci = PciSysfs::with_root(tree.path());
    let err = pci
        .on_device("0000:3f:0e.1".parse().unwrap())
        .read(HA_PCI_PMON_BOX_CTL)
        .unwrap_err();
    assert!(matches!(
        err.access_kind(),
        Some(AccessError::NoPciDevice { .. })
    ));
    insta::assert_snapshot!("no_pci_device", redact(&err.to_string(), tree.path()));
}

/// A PCI backend whose counter's high dword changes under the reader a few times.
struct Moving {
    reads: std::sync::Mutex<Vec<u32>>,
}

impl PciAccess for Moving {
    fn read_dword(&self, _: Bdf, _: u16) -> pmu_runtime::access::BackendResult<u32> {
        Ok(self.reads.lock().unwrap().remove(0))
    }
    fn write_dword(&self, _: Bdf, _: u16, _: u32) -> pmu_runtime::access::BackendResult<()> {
        unreachable!("the test only reads")
    }
}

#[test]
fn a_48_bit_read_retries_until_the_high_half_is_stable() {
    // high=1, low=0xFFFF_FFFF, high=2 (a carry happened): retry; low=5, high=2: done.
    let m = Moving {
        reads: std::sync::Mutex::new(vec![1, 0xFFFF_FFFF, 2, 5, 2]),
    };
    let v = m
        .on_device(Bdf::new(0x3f, 14, 1))
        .read_raw(HA_PCI_PMON_CTR[0])
        .unwrap();
    assert_eq!(v, 2 << 32 | 5);
    assert!(m.reads.lock().unwrap().is_empty());
    // Never stable: an error, not a torn value.
    let m = Moving {
        reads: std::sync::Mutex::new((0..100).collect()),
    };
    let err = m
        .on_device(Bdf::new(0x3f, 14, 1))
        .read_raw(HA_PCI_PMON_CTR[0])
        .unwrap_err();
    assert!(matches!(
        err.access_kind(),
        Some(AccessError::Unstable { .. })
    ));
}

#[test]
fn bdf_parses_and_prints_the_sysfs_form() {
    let b: Bdf = "0000:7f:09.2".parse().unwrap();
    assert_eq!(b, Bdf::new(0x7f, 9, 2));
    assert_eq!(b.to_string(), "0000:7f:09.2");
    assert_eq!("7f:09.2".parse::<Bdf>().unwrap(), b);
    for bad in ["", "7f:09", "7f:20.1", "7f:09.8", "zz:09.1", "1:2:3:4.5"] {
        let e = bad.parse::<Bdf>().unwrap_err();
        assert!(e.to_string().contains("bus:device.function"), "{bad}: {e}");
    }
}

#[test]
fn topology_picks_the_lowest_online_cpu_of_each_socket() {
    let sys = tempfile::tempdir().unwrap();
    for (cpu, pkg, online) in [
        (0, 0, None),
        (1, 0, Some("1")),
        (2, 1, Some("0")),
        (3, 1, Some("1")),
    ] {
        let d = sys.path().join(format!("devices/system/cpu/cpu{cpu}"));
        fs::create_dir_all(d.join("topology")).unwrap();
        fs::write(d.join("topology/physical_package_id"), format!("{pkg}\n")).unwrap();
        if let Some(o) = online {
            fs::write(d.join("online"), o).unwrap();
        }
    }
    // Not CPUs.
    fs::create_dir_all(sys.path().join("devices/system/cpu/cpufreq")).unwrap();
    let t = Topology::read(sys.path()).unwrap();
    assert_eq!(t.sockets().collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(t.cpu_for_socket(0).unwrap(), 0);
    assert_eq!(t.cpu_for_socket(1).unwrap(), 3, "CPU 2 is offline");
    assert_eq!(t.socket_of(3), Some(1));
    let err = t.cpu_for_socket(4).unwrap_err();
    insta::assert_snapshot!("socket_without_cpu", err.to_string());
}

/// Which CPUs share an L3 cache comes from `cache/index3/shared_cpu_list` (a level-3 cache;
/// ranges and lists); each L3 is named by its lowest CPU, and without the files a socket counts
/// as one L3.
#[test]
fn topology_reads_which_cpus_share_an_l3() {
    let sys = tempfile::tempdir().unwrap();
    for (cpu, pkg, shared) in [
        (0, 0, Some("0-1,8")),
        (1, 0, Some("0-1,8")),
        (8, 0, Some("0-1,8")),
        (2, 0, Some("2-3")),
        (3, 0, Some("2-3")),
        (4, 1, None),
        (5, 1, None),
    ] {
        let d = sys.path().join(format!("devices/system/cpu/cpu{cpu}"));
        fs::create_dir_all(d.join("topology")).unwrap();
        fs::write(d.join("topology/physical_package_id"), format!("{pkg}\n")).unwrap();
        if let Some(list) = shared {
            fs::create_dir_all(d.join("cache/index3")).unwrap();
            fs::write(d.join("cache/index3/level"), "3\n").unwrap();
            fs::write(d.join("cache/index3/shared_cpu_list"), format!("{list}\n")).unwrap();
        }
    }
    let t = Topology::read(sys.path()).unwrap();
    assert_eq!(t.l3_cpus(0), vec![0, 2]);
    assert_eq!(t.l3_of(8), Some(0));
    assert_eq!(t.l3_of(3), Some(2));
    assert_eq!(t.l3_cpus(1), vec![4], "no cache files: one L3 per socket");
    assert_eq!(t.l3_of(5), Some(4));
}

#[test]
fn a_missing_sysfs_tree_is_a_clear_error() {
    let sys = tempfile::tempdir().unwrap();
    let err = Topology::read(sys.path()).unwrap_err();
    insta::assert_snapshot!("no_topology", redact(&err.to_string(), sys.path()));
}

#[test]
fn sockets_are_ordered_by_the_package_their_node_id_registers_name() {
    // Bus 0x3f belongs to package 1 and bus 0x7f to package 0: the node map's 3-bit slots
    // hold node 1 for package 0 and node 0 for package 1.
    let tree = pci_tree(&[
        ("0000:3f:0e.1", 0x8086, 0x3c46),
        ("0000:7f:0e.1", 0x8086, 0x3c46),
        ("0000:3f:0b.0", 0x8086, 0x3ce0),
        ("0000:7f:0b.0", 0x8086, 0x3ce0),
    ]);
    let (package0_node, package1_node) = (1u64, 0u64);
    let node_map = package0_node | package1_node << 3;
    for (bdf, local_node) in [("0000:3f:0b.0", 0u64), ("0000:7f:0b.0", 1)] {
        let config = tree.path().join(bdf).join("config");
        poke(&config, 0x40, local_node);
        poke(&config, 0x54, node_map);
    }
    let found = PciSysfs::with_root(tree.path()).discover(e5()).unwrap();
    assert_eq!(
        found
            .sockets
            .iter()
            .map(|s| (s.bus, s.package))
            .collect::<Vec<_>>(),
        vec![(0x7f, Some(0)), (0x3f, Some(1))]
    );
    assert_eq!(
        found.bdf(0, HA_PCI_PMON_BOX_CTL).unwrap(),
        "0000:7f:0e.1".parse().unwrap()
    );
}
