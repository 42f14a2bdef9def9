//! The discovery-table reader against tables built in memory: a well-formed table, and each
//! way one can be corrupt (a bad unit count, an address off by a stride, a truncated table, a
//! capability list that loops, an absurd size ...), each a typed error, never a panic or a read
//! outside the table. A proptest feeds it byte soup.

use pmu_runtime::discovery::{
    locate, read_table, AccessKind, DiscoveryError, MemoryTable, TableAddress, TableBox,
    MAX_TABLE_BYTES,
};
use pmu_runtime::Bdf;
use proptest::prelude::*;

const BASE: u64 = 0xFE00_0000;
const DEVICE: Bdf = Bdf::new(0x7e, 0, 1);

/// Two MSR boxes (CHA-like: box control, controls 2 past it, counters 8 past it, 0x10 apart)
/// and one PCI box.
fn boxes() -> Vec<TableBox> {
    let cha = |id: u16| TableBox {
        box_type: 0,
        box_id: id,
        access: AccessKind::Msr,
        box_control: 0x2000 + 0x10 * u64::from(id),
        ctl_offset: 2,
        ctr_offset: 8,
        counters: 4,
        width: 48,
    };
    let pci = TableBox {
        box_type: 8,
        box_id: 0,
        access: AccessKind::Pci,
        // bus 0x7e, device 2, function 1, offset 0x318
        box_control: (0x7e << 20) | (((2 << 3) | 1) << 12) | 0x318,
        ctl_offset: 0x40,
        ctr_offset: 0x08,
        counters: 4,
        width: 48,
    };
    vec![cha(0), cha(1), pci]
}

fn table() -> MemoryTable {
    MemoryTable::build(BASE, DEVICE, 0x2FF0, &boxes())
}

/// The table a well-formed device locates.
fn read(t: &MemoryTable) -> Result<pmu_runtime::discovery::DiscoveredTable, DiscoveryError> {
    let found = locate(t, DEVICE)?;
    assert_eq!(found.len(), 1);
    read_table(t, found[0].address)
}

#[test]
fn a_well_formed_table_yields_every_box() {
    let t = table();
    let found = locate(&t, DEVICE).unwrap();
    assert_eq!(
        (found[0].capability, found[0].bar, found[0].address),
        (0x100, 0x10, BASE)
    );
    let table = read(&t).unwrap();
    assert_eq!(table.global.max_units, 3);
    assert_eq!(table.global.stride, 32);
    assert_eq!(table.global.control, 0x2FF0);
    assert_eq!(table.boxes.len(), 3);
    let cha1 = table.find(0, 1).unwrap();
    assert_eq!(cha1.box_control, TableAddress::Msr(0x2010));
    assert_eq!(cha1.first_control, TableAddress::Msr(0x2012));
    assert_eq!(cha1.first_counter, TableAddress::Msr(0x2018));
    assert_eq!((cha1.counters, cha1.width), (4, 48));
    let upi = table.find(8, 0).unwrap();
    assert_eq!(
        upi.box_control,
        TableAddress::Pci {
            domain: 0,
            bus: 0x7e,
            device: 2,
            function: 1,
            offset: 0x318
        }
    );
    assert_eq!(
        upi.first_control,
        TableAddress::Pci {
            domain: 0,
            bus: 0x7e,
            device: 2,
            function: 1,
            offset: 0x358
        }
    );
    assert!(table.skipped.is_empty());
}

#[test]
fn empty_entries_are_skipped_with_the_reason() {
    let mut t = table();
    // Entry 1 (the second CHA) all zero, as unused slots are.
    for q in 0..3 {
        t.set_qword(2 * 32 + 8 * q, 0);
    }
    let table = read(&t).unwrap();
    assert_eq!(table.boxes.len(), 2);
    assert_eq!(table.skipped.len(), 1);
    assert_eq!(table.skipped[0].entry, 1);
    assert!(table.skipped[0].reason.contains("empty"));
}

#[test]
fn a_unit_count_beyond_the_table_is_a_truncated_table() {
    let mut t = table();
    // max_units (bits 25:16 of the first qword) says 9; only 3 entries exist.
    let q = t.qword(0);
    t.set_qword(0, (q & !(0x3FF << 16)) | (9 << 16));
    match read(&t) {
        Err(DiscoveryError::Truncated {
            entry: 3, of: 9, ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_unit_count_of_zero_is_refused() {
    let mut t = table();
    let q = t.qword(0);
    t.set_qword(0, q & !(0x3FF << 16));
    assert!(matches!(read(&t), Err(DiscoveryError::NoUnits { .. })));
}

#[test]
fn a_truncated_table_is_an_error_naming_the_entry() {
    let mut t = table();
    t.bytes.truncate(3 * 32 + 16); // entry 2 loses its last qword
    let e = read(&t).unwrap_err();
    assert!(
        matches!(
            e,
            DiscoveryError::Truncated {
                entry: 2,
                of: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("ends before entry 2 of the 3"),
        "{e}"
    );
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn an_address_off_by_a_stride_lands_on_another_box_and_neither_is_used() {
    let mut t = table();
    // CHA 0's box control moved one box stride on, onto CHA 1's.
    t.set_qword(32 + 8, 0x2010);
    match read(&t) {
        Err(DiscoveryError::SharedAddress { address, entries }) => {
            assert_eq!((address, entries), (TableAddress::Msr(0x2010), (0, 1)));
        }
        other => panic!("{other:?}"),
    }
}

/// CHA 0's registers run from its box control 0x2000 to its last counter, 0x2008 + 3; CHA 1
/// moved to 0x2008 does not share its box control but lies inside that range: one of the two
/// is off (programming one would write the other), and neither is used.
#[test]
fn boxes_whose_registers_overlap_are_refused() {
    let mut t = table();
    t.set_qword(2 * 32 + 8, 0x2008);
    match read(&t) {
        Err(DiscoveryError::OverlappingBoxes { entries, addresses }) => {
            assert_eq!(entries, (0, 1));
            assert_eq!(
                addresses,
                (TableAddress::Msr(0x2000), TableAddress::Msr(0x2008))
            );
        }
        other => panic!("{other:?}"),
    }
    // One register past CHA 0's last counter (0x200B) is clear of it.
    let mut t = table();
    t.set_qword(2 * 32 + 8, 0x200C);
    assert_eq!(read(&t).unwrap().boxes.len(), 3);
}

#[test]
fn one_box_listed_twice_is_refused() {
    let mut t = table();
    // CHA 1 claims id 0.
    let q3 = t.qword(2 * 32 + 16);
    t.set_qword(2 * 32 + 16, q3 & !(0xFFFF << 16));
    assert!(matches!(
        read(&t),
        Err(DiscoveryError::DuplicateBox {
            box_type: 0,
            box_id: 0,
            entries: (0, 1)
        })
    ));
}

#[test]
fn a_capability_list_that_loops_is_refused() {
    let mut t = table();
    // The discovery capability's next pointer at itself.
    let header = t.config[0x100 / 4];
    t.set_dword(0x100, (header & 0xF_FFFF) | (0x100 << 20));
    assert!(matches!(
        locate(&t, DEVICE),
        Err(DiscoveryError::CapabilityLoop { at: 0x100, .. })
    ));
    // A longer loop: another capability at 0x200 pointing back.
    t.set_dword(0x100, (header & 0xF_FFFF) | (0x200 << 20));
    t.set_dword(0x200, 0x0001 | (0x100 << 20));
    assert!(matches!(
        locate(&t, DEVICE),
        Err(DiscoveryError::CapabilityLoop { at: 0x100, .. })
    ));
}

#[test]
fn a_capability_pointer_outside_the_extended_space_is_refused() {
    let mut t = table();
    let header = t.config[0x100 / 4];
    t.set_dword(0x100, (header & 0xF_FFFF) | (0x42 << 20));
    assert!(matches!(
        locate(&t, DEVICE),
        Err(DiscoveryError::BadCapabilityPointer { next: 0x42, .. })
    ));
}

#[test]
fn an_absurd_size_is_refused_before_any_entry_is_read() {
    let mut t = table();
    // stride 255 qwords, 1023 units: 2 MiB.
    t.set_qword(0, (1023 << 16) | (255 << 8) | 1);
    match read(&t) {
        Err(DiscoveryError::TooLarge { bytes, limit }) => {
            assert_eq!((bytes, limit), (1024 * 255 * 8, MAX_TABLE_BYTES));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_stride_smaller_than_an_entry_is_refused() {
    let mut t = table();
    let q = t.qword(0);
    t.set_qword(0, (q & !(0xFF << 8)) | (2 << 8));
    assert!(matches!(
        read(&t),
        Err(DiscoveryError::BadStride { stride: 16 })
    ));
}

#[test]
fn an_empty_global_state_is_no_table() {
    let mut t = table();
    t.set_qword(8, u64::MAX);
    assert!(matches!(read(&t), Err(DiscoveryError::EmptyGlobal { .. })));
}

#[test]
fn a_table_located_other_than_by_a_bar_or_an_io_bar_is_refused() {
    let mut t = table();
    t.set_dword(0x10C, 0x8); // an offset into the BAR
    assert!(matches!(
        locate(&t, DEVICE),
        Err(DiscoveryError::BadTableLocation { value: 8, .. })
    ));
    let mut t = table();
    t.set_dword(0x10, 0x1001); // an I/O BAR
    assert!(matches!(
        locate(&t, DEVICE),
        Err(DiscoveryError::BadBar { offset: 0x10, .. })
    ));
}

/// A BAR that holds 0 (the firmware left it unassigned) locates no table: refused, naming
/// the BAR, before anything at address 0 is read.
#[test]
fn a_zero_bar_is_refused() {
    let mut t = table();
    t.set_dword(0x10, 0);
    t.set_dword(0x14, 0);
    match locate(&t, DEVICE) {
        Err(
            e @ DiscoveryError::BadBar {
                offset: 0x10,
                value: 0,
                ..
            },
        ) => {
            assert!(e.to_string().contains("not a memory address"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_device_without_the_capability_says_so() {
    let mut t = table();
    t.set_dword(0x108, 2); // another DVSEC id: telemetry, not performance monitoring
    let e = locate(&t, DEVICE).unwrap_err();
    assert!(matches!(e, DiscoveryError::NoCapability { .. }), "{e:?}");
    assert!(
        e.to_string().contains("no uncore discovery capability"),
        "{e}"
    );
}

#[test]
fn a_pci_address_beyond_the_encoding_and_an_msr_past_32_bits_are_refused() {
    let mut t = table();
    t.set_qword(3 * 32 + 8, 1 << 40); // the PCI box
    assert!(matches!(
        read(&t),
        Err(DiscoveryError::BadAddress { entry: 2, .. })
    ));
    let mut t = table();
    t.set_qword(32 + 8, 1 << 33); // an MSR box
    assert!(matches!(
        read(&t),
        Err(DiscoveryError::BadAddress { entry: 0, .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any bytes at all: a table or an error, never a panic or a read outside the bytes (the
    /// memory backend refuses those, which would surface as an error, not a wrong box).
    #[test]
    fn byte_soup_yields_a_table_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let t = MemoryTable::from_bytes(BASE, DEVICE, bytes);
        if let Ok(table) = read_table(&t, BASE) {
            prop_assert!(table.boxes.len() + table.skipped.len() == usize::from(table.global.max_units));
            prop_assert!((1 + u64::from(table.global.max_units)) * table.global.stride <= t.bytes.len() as u64 + 8 * 3);
        }
    }

    /// A well-formed table with random qwords written over it: the same.
    #[test]
    fn corrupted_qwords_yield_a_table_or_an_error(edits in proptest::collection::vec((0u64..16, any::<u64>()), 1..6)) {
        let mut t = table();
        for (q, v) in edits {
            t.set_qword(q * 8, v);
        }
        let _ = read_table(&t, BASE);
    }

    /// Random configuration dwords: locate finds a table or refuses, never loops forever.
    #[test]
    fn corrupted_configuration_space_yields_a_location_or_an_error(edits in proptest::collection::vec((0x40usize..0x140, any::<u32>()), 1..8)) {
        let mut t = table();
        for (d, v) in edits {
            t.config[d] = v;
        }
        let _ = locate(&t, DEVICE);
    }
}

#[test]
fn a_table_that_could_not_be_read_is_named_with_its_socket_and_device() {
    use pmu_runtime::part::{joined_tables, readable_tables, JoinedTable};
    let processor = &pmu_regs::sapphire_rapids::PROCESSOR;
    let machine = pmu_runtime::machine::Machine::simulating(processor);
    let boxes = pmu_runtime::boxes::Boxes::of(processor);
    let read = readable_tables(joined_tables(&machine, boxes)).expect("the simulated table");
    assert_eq!(read.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [0]);
    let mut tables = joined_tables(&machine, boxes);
    tables.push(JoinedTable {
        socket: 1,
        device: Bdf::new(0xfe, 0, 1),
        joined: Err(DiscoveryError::NoUnits { address: 0x1000 }),
    });
    let e = readable_tables(tables).expect_err("socket 1's table was not read");
    assert_eq!(
        e.to_string(),
        "socket 1 (device 0000:fe:00.1): the discovery table at 0x1000 declares no unit entries"
    );
}
