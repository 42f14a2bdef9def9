//! The CMN-700 node walk (`pmu_runtime::cmn`) on mesh images: a well-formed 2 x 2 mesh is
//! found node by node, each corruption is refused with its typed error, and no bytes make the
//! walk panic or read outside the window. The simulated mesh's DTC counts cycles and is put
//! back. Expected values are Linux's drivers/perf/arm-cmn.c constants and node-id formula,
//! worked by hand for a 2 x 2 mesh.

use std::sync::atomic::{AtomicBool, Ordering};

use pmu_runtime::access::{BackendResult, MmioAccess};
use pmu_runtime::cmn::{
    count_cycles, count_event, walk, CmnError, CmnMesh, ExternalChild, MeshEvent, MeshImage,
    MeshLayout, NODE_REGION,
};
use pmu_runtime::sim::cmn::SimCmn;
use proptest::prelude::*;

const BASE: u64 = 0x5000_0000;

/// Linux's enum cmn_node_type.
const CFG: u16 = 0x0002;
const DTC: u16 = 0x0003;
const HNF: u16 = 0x0005;
const XP: u16 = 0x0006;
const SBSX: u16 = 0x0007;
const RND: u16 = 0x000D;

fn image() -> MeshImage {
    MeshLayout::small().build(BASE)
}

fn walked(m: &MeshImage) -> Result<CmnMesh, CmnError> {
    walk(m, m.base(), m.size(), 0)
}

fn put(m: &MeshImage, offset: u64, value: u64) {
    m.write_mmio(BASE + offset, 64, value).unwrap();
}

/// Region offsets in the small layout: root 0, XP i at 0x4000 * (1 + i), devices after the
/// four XPs in the layout's order (four HN-Fs, the DTC, the RN-D, the SBSX).
fn xp(i: u64) -> u64 {
    NODE_REGION * (1 + i)
}
fn device(i: u64) -> u64 {
    NODE_REGION * (5 + i)
}

#[test]
fn the_small_mesh_is_walked_root_crosspoints_devices() {
    let mesh = walked(&image()).unwrap();
    // CMN-700 is part 0x43C (arm-cmn.c PART_CMN700), r2p0 is revision 2.
    assert_eq!((mesh.part, mesh.revision), (0x43C, 2));
    assert_eq!(mesh.root.node_type, CFG);
    // A 2 x 2 mesh has fls(1 | 1 | 2) = 2 bits of X and of Y, X above Y above 3 bits: XP
    // (x, y) is x << 5 | y << 3; the XPs are numbered row by row.
    let xps: Vec<(u16, u16, u16, u64)> = mesh
        .xps
        .iter()
        .map(|n| (n.node_type, n.node_id, n.logical_id, n.offset))
        .collect();
    assert_eq!(
        xps,
        [
            (XP, 0x00, 0, xp(0)),
            (XP, 0x20, 1, xp(1)),
            (XP, 0x08, 2, xp(2)),
            (XP, 0x28, 3, xp(3)),
        ]
    );
    // A device's id is its XP's, port at bit 2, device below.
    let devices: Vec<(u16, u16, u16, Option<u64>)> = mesh
        .devices
        .iter()
        .map(|n| (n.node_type, n.node_id, n.logical_id, n.parent))
        .collect();
    assert_eq!(
        devices,
        [
            (HNF, 0x00, 0, Some(xp(0))),
            (DTC, 0x04, 0, Some(xp(0))),
            (HNF, 0x20, 1, Some(xp(1))),
            (RND, 0x24, 0, Some(xp(1))),
            (HNF, 0x08, 2, Some(xp(2))),
            (SBSX, 0x0C, 0, Some(xp(2))),
            (HNF, 0x28, 3, Some(xp(3))),
        ]
    );
    assert_eq!(mesh.of_type(HNF).count(), 4);
    assert_eq!(mesh.devices[1].type_name(), "dtc");
    // The external RN-SAM is listed, never read: its offset is far outside the window.
    assert_eq!(
        mesh.external,
        [ExternalChild {
            parent: xp(3),
            offset: 0x3FFF_C000
        }]
    );
}

#[test]
fn a_root_that_is_not_the_configuration_node_is_refused() {
    let m = image();
    put(&m, 0, u64::from(HNF));
    assert!(matches!(
        walked(&m),
        Err(CmnError::RootNotCfg {
            offset: 0,
            found: HNF
        })
    ));
    // A root offset that is the wrong node (an XP) is the same error.
    let m = image();
    let err = walk(&m, BASE, m.size(), xp(0)).unwrap_err();
    assert!(
        matches!(err, CmnError::RootNotCfg { found: XP, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("root offset"), "{err}");
}

#[test]
fn a_window_too_small_for_a_node_is_refused() {
    let m = MeshImage::from_bytes(BASE, vec![0; 0x80]);
    assert!(matches!(
        walked(&m),
        Err(CmnError::WindowTooSmall { size: 0x80 })
    ));
}

/// The root's child pointers are at 0x100 (CHILD_INFO.child_ptr_offset in the built image);
/// an XP's at 0x100 in its region.
#[test]
fn a_child_pointer_outside_the_window_is_refused_before_any_read() {
    let m = image();
    put(&m, 0x100 + 8, 0x3FFF_0000);
    let err = walked(&m).unwrap_err();
    assert!(
        matches!(
            err,
            CmnError::OutsideWindow {
                offset: 0x3FFF_0000,
                ..
            }
        ),
        "{err}"
    );
    // Unaligned is refused the same way.
    let m = image();
    put(&m, 0x100 + 8, xp(1) + 4);
    assert!(matches!(walked(&m), Err(CmnError::OutsideWindow { .. })));
    // A pointer list running past the window's end: the root's child pointer offset moved to
    // the last bytes.
    let m = MeshImage::from_bytes(BASE, image().bytes()[..0x108].to_vec());
    let err = walked(&m).unwrap_err();
    assert!(matches!(err, CmnError::OutsideWindow { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("child pointer 1 of the node at 0x0"),
        "{err}"
    );
}

#[test]
fn a_pointer_back_to_a_visited_node_is_a_cycle() {
    // XP 3's first child (its HN-F) replaced by the root.
    let m = image();
    put(&m, xp(3) + 0x100, 0);
    assert!(matches!(
        walked(&m),
        Err(CmnError::Cycle { parent, offset: 0 }) if parent == xp(3)
    ));
    // The root listing XP 0 twice.
    let m = image();
    put(&m, 0x100 + 8, xp(0));
    assert!(matches!(walked(&m), Err(CmnError::Cycle { parent: 0, offset }) if offset == xp(0)));
    // XP 1 listing XP 2's HN-F (two parents for one node).
    let m = image();
    put(&m, xp(1) + 0x100, device(4));
    assert!(matches!(walked(&m), Err(CmnError::Cycle { .. })));
}

#[test]
fn absurd_child_counts_are_refused() {
    // 145 crosspoints: Linux's CMN_MAX_XPS is 144 (12 x 12).
    let m = image();
    put(&m, 0x80, (0x100 << 16) | 145);
    assert!(matches!(
        walked(&m),
        Err(CmnError::TooManyChildren {
            node: 0,
            count: 145,
            max: 144
        })
    ));
    // 0xFFFF children under one XP.
    let m = image();
    put(&m, xp(0) + 0x80, (0x100 << 16) | 0xFFFF);
    assert!(matches!(
        walked(&m),
        Err(CmnError::TooManyChildren { count: 0xFFFF, .. })
    ));
}

#[test]
fn nodes_at_the_wrong_level_or_of_unknown_type_are_refused() {
    // The root's second child is an HN-F.
    let m = image();
    put(&m, 0x100 + 8, device(0) + NODE_REGION * 2);
    assert!(matches!(
        walked(&m),
        Err(CmnError::WrongLevel { found: HNF, .. })
    ));
    // A device node that says it is a crosspoint.
    let m = image();
    put(&m, device(0), u64::from(XP));
    assert!(matches!(
        walked(&m),
        Err(CmnError::WrongLevel { found: XP, .. })
    ));
    // A device node of type 0x0042, which no CMN has (Linux: "invalid device node type").
    let m = image();
    put(&m, device(0), 0x0042);
    let err = walked(&m).unwrap_err();
    assert!(
        matches!(err, CmnError::UnknownNodeType { found: 0x42, .. }),
        "{err}"
    );
    // Type 0 (CMN_TYPE_INVALID) too.
    let m = image();
    put(&m, device(6), 0);
    assert!(matches!(
        walked(&m),
        Err(CmnError::UnknownNodeType { found: 0, .. })
    ));
}

/// A window that records any read outside it (the walk must check before it reads).
struct Fenced {
    image: MeshImage,
    strayed: AtomicBool,
}

impl MmioAccess for Fenced {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        let end = address.saturating_add(u64::from(width / 8));
        if address < self.image.base() || end > self.image.base() + self.image.size() {
            self.strayed.store(true, Ordering::SeqCst);
        }
        self.image.read_mmio(address, width)
    }
    fn write_mmio(&self, _: u64, _: u32, _: u64) -> BackendResult<()> {
        self.strayed.store(true, Ordering::SeqCst);
        Ok(())
    }
}

fn fenced_walk(bytes: Vec<u8>) -> (Result<CmnMesh, CmnError>, bool) {
    let f = Fenced {
        image: MeshImage::from_bytes(BASE, bytes),
        strayed: AtomicBool::new(false),
    };
    let r = walk(&f, BASE, f.image.size(), 0);
    (r, f.strayed.load(Ordering::SeqCst))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any bytes: a mesh or an error, never a panic, a read outside the window or a write.
    #[test]
    fn byte_soup_yields_a_mesh_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..0x400)) {
        let (r, strayed) = fenced_walk(bytes);
        prop_assert!(!strayed);
        let read_failed = matches!(r, Err(CmnError::Read { .. }));
        prop_assert!(!read_failed);
    }

    /// The small mesh with random qwords written over its node heads and pointer lists: the
    /// same, and a mesh found has every node inside the window.
    #[test]
    fn corrupted_qwords_yield_a_mesh_or_an_error(
        edits in proptest::collection::vec((0u64..12, prop_oneof![Just(0u64), Just(0x80), Just(0x100), Just(0x108)], any::<u64>()), 1..6),
    ) {
        let mut bytes = image().bytes();
        for (region, at, value) in edits {
            let o = (region * NODE_REGION + at) as usize;
            bytes[o..o + 8].copy_from_slice(&value.to_le_bytes());
        }
        let size = bytes.len() as u64;
        let (r, strayed) = fenced_walk(bytes);
        prop_assert!(!strayed);
        if let Ok(mesh) = r {
            prop_assert!(mesh.xps.iter().chain(&mesh.devices).all(|n| n.offset + 0x88 <= size));
        }
    }
}

#[test]
fn the_simulated_dtc_counts_cycles_and_is_put_back() {
    let sim = SimCmn::new(MeshLayout::small(), BASE);
    let mesh = walk(&sim, sim.base(), sim.size(), 0).unwrap();
    let dtc = *mesh.of_type(DTC).next().unwrap();
    let before = sim.bytes();
    // Nothing counts while the DTC is disabled.
    sim.advance(500).unwrap();
    assert_eq!(sim.bytes(), before);
    let counted = count_cycles(&sim, sim.base(), &dtc, || sim.advance(12_345).unwrap()).unwrap();
    assert_eq!(counted.cycles, 12_345);
    assert_eq!(
        sim.bytes(),
        before,
        "every register the count changed is put back"
    );
    // Counting on a node that is not the DTC is refused, nothing written.
    let hnf = *mesh.of_type(HNF).next().unwrap();
    assert!(count_cycles(&sim, sim.base(), &hnf, || ()).is_err());
    assert_eq!(sim.bytes(), before);
}

/// The 40-bit cycle counter (Linux: CMN_CC_INIT 0x80_0000_0000 is its top bit) wraps and sets
/// DT_PMOVSR bit 8 (CMN_DT_NUM_COUNTERS); writing it to DT_PMOVSR_CLR clears it.
#[test]
fn the_simulated_cycle_counter_wraps_at_40_bits_into_the_overflow_status() {
    let sim = SimCmn::new(MeshLayout::small(), BASE);
    let dtc = BASE + device(4);
    sim.write_mmio(dtc + 0x2040, 64, (1 << 40) - 10).unwrap();
    sim.write_mmio(dtc + 0x2100, 64, 1).unwrap();
    sim.write_mmio(dtc + 0xA00, 64, 1).unwrap();
    sim.advance(25).unwrap();
    assert_eq!(sim.read_mmio(dtc + 0x2040, 64).unwrap(), 15);
    assert_eq!(sim.read_mmio(dtc + 0x2118, 64).unwrap(), 1 << 8);
    sim.write_mmio(dtc + 0x2120, 64, 0x1FF).unwrap();
    assert_eq!(sim.read_mmio(dtc + 0x2118, 64).unwrap(), 0);
    // The node info is read-only.
    assert!(sim.write_mmio(dtc, 64, u64::from(HNF)).is_err());
}

/// hnf_cache_miss is HN-F event 0x01 (arm-cmn.c's CMN_EVENT_HNF(CMN_ANY, cache_miss, 0x01)).
/// 70,000 misses overflow the 16-bit local counter once: the local counter holds
/// 70,000 - 65,536 = 4,464 and global counter A one carry, which the kernel reads back as
/// 4,464 + (1 << 16) = 70,000.
#[test]
fn an_hnf_event_counts_through_the_dtm_and_a_global_counter_and_is_put_back() {
    let sim = SimCmn::new(MeshLayout::small(), BASE);
    let mesh = walk(&sim, sim.base(), sim.size(), 0).unwrap();
    let hnf0 = *mesh.of_type(HNF).next().unwrap();
    let before = sim.bytes();
    let mut seen = None;
    let miss = MeshEvent::named("arm-cmn-700:hnf_cache_miss").unwrap();
    let n = count_event(&sim, sim.base(), &mesh, &hnf0, &miss, || {
        sim.inject(0, 0x01, 70_000).unwrap();
        // Another event of the same node, and the same event on another HN-F (under XP 1):
        // neither reaches XP 0's counter 0.
        sim.inject(0, 0x03, 500).unwrap();
        sim.inject(1, 0x01, 900).unwrap();
        seen = Some((
            sim.read_mmio(BASE + xp(0) + 0x2220, 64).unwrap() & 0xFFFF,
            sim.read_mmio(BASE + device(4) + 0x2000, 32).unwrap(),
        ));
    })
    .unwrap();
    assert_eq!(seen, Some((4_464, 1)));
    assert_eq!(n, 70_000);
    assert_eq!(
        sim.bytes(),
        before,
        "every register the count changed is put back"
    );
    // With nothing programmed, events count nowhere.
    sim.inject(0, 0x01, 10).unwrap();
    assert_eq!(sim.bytes(), before);
    // Only an HN-F's events are counted this way.
    let dtc = *mesh.of_type(DTC).next().unwrap();
    assert!(count_event(&sim, sim.base(), &mesh, &dtc, &miss, || ()).is_err());
}

/// Named events count by their own ids, and an event with a filter sets it while it counts:
/// hnf_qos_pocq_occupancy_read is HN-F event 0x0f with occupid 1 in OCCUP1_ID (bits 34:32 of
/// the event select; arm-cmn.c's _CMN_EVENT_HNF(CMN_ANY, qos_pocq_occupancy_read, 0x0f, 1,
/// SEL_OCCUP1ID)), hnf_sf_hit event 0x06. 1,234 and 65,536 + 7 = 65,543 injected are read back;
/// the window is byte for byte as before each count.
#[test]
fn named_hnf_events_count_with_their_filters_and_are_put_back() {
    let sim = SimCmn::new(MeshLayout::small(), BASE);
    let mesh = walk(&sim, sim.base(), sim.size(), 0).unwrap();
    let hnf0 = *mesh.of_type(HNF).next().unwrap();
    let before = sim.bytes();
    let occupancy = MeshEvent::named("hnf_qos_pocq_occupancy_read").unwrap();
    let mut select = 0;
    let n = count_event(&sim, sim.base(), &mesh, &hnf0, &occupancy, || {
        select = sim.read_mmio(BASE + hnf0.offset + 0x2000, 64).unwrap();
        sim.inject(0, 0x0f, 1_234).unwrap();
        sim.inject(0, 0x06, 99).unwrap();
    })
    .unwrap();
    assert_eq!((n, select & 0xFF, (select >> 32) & 7), (1_234, 0x0f, 1));
    assert_eq!(sim.bytes(), before);
    let hit = MeshEvent::named("arm-cmn-700:hnf_sf_hit").unwrap();
    let n = count_event(&sim, sim.base(), &mesh, &hnf0, &hit, || {
        sim.inject(0, 0x06, 65_543).unwrap();
        sim.inject(0, 0x0f, 5).unwrap();
    })
    .unwrap();
    assert_eq!(n, 65_543);
    assert_eq!(sim.bytes(), before);
    // An SBSX event counts on the SBSX (device 6, under XP 2): sbsx_wr_req is its event 0x02
    // (CMN_EVENT_SBSX(CMN_ANY, wr_req, 0x02)); the HN-F's event 0x02 does not reach it.
    let sbsx = *mesh.of_type(0x0007).next().unwrap();
    let writes = MeshEvent::named("sbsx_wr_req").unwrap();
    let n = count_event(&sim, sim.base(), &mesh, &sbsx, &writes, || {
        sim.inject(6, 0x02, 3_000).unwrap();
        sim.inject(0, 0x02, 40).unwrap();
    })
    .unwrap();
    assert_eq!(n, 3_000);
    assert_eq!(sim.bytes(), before);
    assert!(count_event(&sim, sim.base(), &mesh, &hnf0, &writes, || ()).is_err());
    // Names are the kernel's: another processor's prefix or an unknown name finds nothing.
    assert!(MeshEvent::named("neoverse-v2:hnf_sf_hit").is_none());
    assert!(MeshEvent::named("hnf_no_such_event").is_none());
}
