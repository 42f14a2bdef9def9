//! The APMT reader against tables built here byte by byte from Linux's `struct acpi_apmt_node`
//! (include/acpi/actbl2.h, packed: length u16 at 0, flags u8 at 2, type u8 at 3, id at 4,
//! inst_primary at 8, inst_secondary at 16, base_address0 at 20, base_address1 at 28,
//! ovflw_irq at 36, reserved at 40, ovflw_irq_flags at 44, proc_affinity at 48, impl_id at 52)
//! behind the 36-byte ACPI header: a well-formed table, and each way one can be corrupt, each
//! a typed error. A proptest feeds it byte soup and damaged tables: never a panic.

use pmu_runtime::apmt::{parse, read_file, Affinity, ApmtError};
use proptest::prelude::*;

/// One node as Linux's struct lays it out.
struct Node {
    length: u16,
    flags: u8,
    node_type: u8,
    id: u32,
    primary: u64,
    secondary: u32,
    base0: u64,
    base1: u64,
    irq: u32,
    irq_flags: u32,
    affinity: u32,
    impl_id: u32,
}

fn node(id: u32, affinity: u32) -> Node {
    Node {
        length: 56,
        flags: 0b101, // dual page, atomic
        node_type: 3, // ACPI device
        id,
        primary: 0x3039_3030_564E, // an _HID's bytes
        secondary: id,
        base0: 0x1000_2000_0000 + u64::from(id) * 0x2_0000,
        base1: 0x1000_2001_0000 + u64::from(id) * 0x2_0000,
        irq: 0x180 + id,
        irq_flags: 1,
        affinity,
        impl_id: 0,
    }
}

fn node_bytes(n: &Node) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(n.length.to_le_bytes());
    b.push(n.flags);
    b.push(n.node_type);
    b.extend(n.id.to_le_bytes());
    b.extend(n.primary.to_le_bytes());
    b.extend(n.secondary.to_le_bytes());
    b.extend(n.base0.to_le_bytes());
    b.extend(n.base1.to_le_bytes());
    b.extend(n.irq.to_le_bytes());
    b.extend(0u32.to_le_bytes());
    b.extend(n.irq_flags.to_le_bytes());
    b.extend(n.affinity.to_le_bytes());
    b.extend(n.impl_id.to_le_bytes());
    b.resize(usize::from(n.length).max(56), 0);
    b
}

/// The ACPI header (signature, length, revision 0, checksum, OEM fields) and the nodes, with
/// the checksum byte (offset 9) set so that every byte adds up to 0.
fn table(nodes: &[Node]) -> Vec<u8> {
    let mut t = b"APMT".to_vec();
    t.extend([0; 4]);
    t.push(0); // revision
    t.push(0); // checksum, fixed below
    t.extend(b"NVIDIA");
    t.extend(b"TH500   ");
    t.extend(1u32.to_le_bytes());
    t.extend(b"NVDA");
    t.extend(1u32.to_le_bytes());
    assert_eq!(t.len(), 36);
    for n in nodes {
        t.extend(node_bytes(n));
    }
    let len = u32::try_from(t.len()).unwrap();
    t[4..8].copy_from_slice(&len.to_le_bytes());
    fix_checksum(&mut t);
    t
}

fn fix_checksum(t: &mut [u8]) {
    t[9] = 0;
    let sum = t.iter().fold(0u8, |s, b| s.wrapping_add(*b));
    t[9] = 0u8.wrapping_sub(sum);
}

#[test]
fn a_well_formed_table_gives_every_node_as_written() {
    let t = parse(&table(&[node(0, 0), node(1, 1)])).unwrap();
    assert_eq!(t.nodes.len(), 2);
    let n = &t.nodes[1];
    assert_eq!(n.offset, 36 + 56);
    assert_eq!(n.id, 1);
    assert_eq!(n.type_name(), Some("acpi_device"));
    assert_eq!(n.instance_primary, 0x3039_3030_564E);
    assert_eq!(n.base0, 0x1000_2002_0000);
    assert_eq!(n.base1, Some(0x1000_2003_0000));
    assert!(n.atomic64);
    assert_eq!(n.overflow_irq, 0x181);
    assert!(n.overflow_edge);
    assert_eq!(n.affinity, Affinity::Processor(1));
}

#[test]
fn without_the_dual_page_flag_there_is_no_page_1_and_the_container_flag_names_one() {
    let mut n = node(7, 0x10);
    n.flags = 0b010;
    n.irq_flags = 0;
    n.node_type = 9;
    let t = parse(&table(&[n])).unwrap();
    let n = &t.nodes[0];
    assert_eq!(n.base1, None);
    assert!(!n.atomic64 && !n.overflow_edge);
    assert_eq!(n.affinity, Affinity::Container(0x10));
    assert_eq!(n.type_name(), None, "type 9 is not one DEN0117 1.0 defines");
}

#[test]
fn a_longer_node_is_stepped_over_by_its_own_length() {
    let mut long = node(0, 0);
    long.length = 64;
    let t = parse(&table(&[long, node(1, 0)])).unwrap();
    assert_eq!(t.nodes[1].offset, 36 + 64);
    assert_eq!(t.nodes[1].id, 1);
}

#[test]
fn an_empty_table_has_no_nodes() {
    assert!(parse(&table(&[])).unwrap().nodes.is_empty());
}

#[test]
fn a_short_table_and_another_signature_are_refused() {
    let t = table(&[node(0, 0)]);
    assert!(matches!(
        parse(&t[..20]),
        Err(ApmtError::TooShort { bytes: 20 })
    ));
    let mut other = t.clone();
    other[..4].copy_from_slice(b"IORT");
    fix_checksum(&mut other);
    let e = parse(&other).unwrap_err();
    assert!(matches!(e, ApmtError::BadSignature { found } if &found == b"IORT"));
    assert!(e.to_string().contains("another ACPI table"), "{e}");
}

#[test]
fn a_truncated_table_or_trailing_bytes_are_a_length_mismatch() {
    let t = table(&[node(0, 0), node(1, 1)]);
    let cut = &t[..t.len() - 10];
    assert!(matches!(
        parse(cut),
        Err(ApmtError::LengthMismatch {
            declared: 148,
            actual: 138
        })
    ));
    let mut more = t.clone();
    more.push(0);
    assert!(matches!(
        parse(&more),
        Err(ApmtError::LengthMismatch { .. })
    ));
}

#[test]
fn a_flipped_byte_is_a_bad_checksum() {
    let mut t = table(&[node(0, 0)]);
    t[36 + 20] ^= 0x40;
    let e = parse(&t).unwrap_err();
    assert!(matches!(e, ApmtError::BadChecksum { sum: 0x40 }), "{e:?}");
}

#[test]
fn a_node_running_past_the_end_is_refused() {
    let mut n = node(0, 0);
    n.length = 56;
    let mut t = table(&[n]);
    // Declare 64 bytes in a table that holds 56 of the node.
    t[36..38].copy_from_slice(&64u16.to_le_bytes());
    fix_checksum(&mut t);
    let e = parse(&t).unwrap_err();
    assert!(
        matches!(
            e,
            ApmtError::NodePastEnd {
                node: 0,
                offset: 36,
                length: 64,
                table_length: 92
            }
        ),
        "{e:?}"
    );
    // Two bytes after the last node: not even a node's length fits.
    let mut t = table(&[node(0, 0)]);
    t.extend([0, 0]);
    let len = u32::try_from(t.len()).unwrap();
    t[4..8].copy_from_slice(&len.to_le_bytes());
    fix_checksum(&mut t);
    assert!(matches!(
        parse(&t),
        Err(ApmtError::NodePastEnd {
            node: 1,
            offset: 92,
            length: 0,
            ..
        })
    ));
}

#[test]
fn a_node_shorter_than_the_layout_is_refused_and_a_zero_length_cannot_loop() {
    for bad in [0u16, 4, 55] {
        let mut t = table(&[node(0, 0)]);
        t[36..38].copy_from_slice(&bad.to_le_bytes());
        fix_checksum(&mut t);
        let e = parse(&t).unwrap_err();
        assert!(
            matches!(e, ApmtError::BadNodeLength { node: 0, offset: 36, length } if length == bad),
            "{e:?}"
        );
    }
}

#[test]
fn two_nodes_with_one_id_are_refused() {
    let e = parse(&table(&[node(3, 0), node(4, 0), node(3, 1)])).unwrap_err();
    assert!(
        matches!(
            e,
            ApmtError::DuplicateId {
                id: 3,
                first: 0,
                second: 2
            }
        ),
        "{e:?}"
    );
}

#[test]
fn the_file_reader_reads_a_copy_and_names_a_missing_file() {
    let dir = std::env::temp_dir().join(format!("apmt-reader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("APMT");
    std::fs::write(&path, table(&[node(0, 0)])).unwrap();
    assert_eq!(read_file(&path).unwrap().nodes.len(), 1);
    let e = read_file(&dir.join("missing")).unwrap_err();
    assert!(matches!(e, ApmtError::Read { .. }));
    assert!(
        e.to_string().contains("/sys/firmware/acpi/tables/APMT"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn byte_soup_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn a_damaged_table_with_a_right_header_never_panics(
        nodes in 0usize..4,
        damage in proptest::collection::vec((0usize..300, any::<u8>()), 0..8),
    ) {
        let list: Vec<Node> = (0..nodes).map(|i| node(i as u32, 0)).collect();
        let mut t = table(&list);
        for (at, v) in damage {
            if at >= 36 && at < t.len() {
                t[at] = v;
            }
        }
        fix_checksum(&mut t);
        if let Ok(read) = parse(&t) {
            for n in &read.nodes {
                prop_assert!(n.offset + usize::from(n.length) <= t.len());
                prop_assert!(usize::from(n.length) >= 56);
            }
        }
    }
}
