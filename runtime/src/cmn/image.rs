//! A CMN configuration window held in memory: raw bytes served through [`MmioAccess`], or a
//! small mesh built from a [`MeshLayout`] with the spec's layouts.

use std::sync::Mutex;

use pmu_regs::arm_cmn_700::cfg::{
    CfgmPeriphId01, CfgmPeriphId23, CFGM_PERIPH_ID_01, CFGM_PERIPH_ID_23,
};
use pmu_regs::arm_cmn_700::child::ChildPointer;
use pmu_regs::arm_cmn_700::dtm::DTM_UNIT_INFO;
use pmu_regs::arm_cmn_700::node::{ChildInfo, NodeInfo, CHILD_INFO, NODE_INFO};

use super::NodeType;
use crate::access::{AccessError, BackendError, BackendResult, MmioAccess, Op, Target};

/// The size of one node's configuration region (16 KiB: the PMU page at 0x2000 inside it).
pub const NODE_REGION: u64 = 0x4000;

/// Where a node's child pointers start in the built images (any offset past the child info
/// would do; the reader takes it from CHILD_INFO).
const POINTERS_AT: u64 = 0x100;

/// A window's bytes at a physical address. Reads and writes of 32 or 64 aligned bits inside
/// it succeed; anything else is refused as a real mapping would fail it.
#[derive(Debug)]
pub struct MeshImage {
    base: u64,
    bytes: Mutex<Vec<u8>>,
}

impl MeshImage {
    /// `bytes` served at physical address `base`.
    pub fn from_bytes(base: u64, bytes: Vec<u8>) -> Self {
        Self {
            base,
            bytes: Mutex::new(bytes),
        }
    }

    /// The physical address of the window's first byte.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The window's size in bytes.
    pub fn size(&self) -> u64 {
        self.lock().len() as u64
    }

    /// A copy of the bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The byte range of `width` bits at `address`, if aligned and inside.
    fn range(&self, address: u64, width: u32, len: usize) -> Option<std::ops::Range<usize>> {
        let n = u64::from(width / 8);
        let start = address.checked_sub(self.base)?;
        let end = start.checked_add(n)?;
        let ok = (width == 32 || width == 64) && start % n == 0 && end <= len as u64;
        ok.then_some(start as usize..end as usize)
    }
}

impl MmioAccess for MeshImage {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        let bytes = self.lock();
        let range = self.range(address, width, bytes.len()).ok_or_else(|| {
            BackendError::access(
                Op::Read,
                Target::Mmio { address },
                AccessError::Short {
                    done: 0,
                    wanted: (width / 8) as usize,
                },
            )
        })?;
        let mut raw = [0u8; 8];
        raw[..range.len()].copy_from_slice(&bytes[range]);
        Ok(u64::from_le_bytes(raw))
    }

    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        let mut bytes = self.lock();
        let len = bytes.len();
        let range = self.range(address, width, len).ok_or_else(|| {
            BackendError::access(
                Op::Write,
                Target::Mmio { address },
                AccessError::Short {
                    done: 0,
                    wanted: (width / 8) as usize,
                },
            )
        })?;
        let n = range.len();
        bytes[range].copy_from_slice(&value.to_le_bytes()[..n]);
        Ok(())
    }
}

/// A device node placed on a crosspoint's port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacedDevice {
    /// The crosspoint's index, row by row (x + y * mesh_x).
    pub xp: u16,
    /// The crosspoint's device port (0 or 1).
    pub port: u16,
    /// The device on that port (0 or 1).
    pub dev: u16,
    /// Its node type.
    pub node_type: u16,
    /// Its logical id.
    pub logical_id: u16,
}

/// A small mesh to build an image of: its dimensions, its device nodes, and the crosspoints
/// that list an external child (an RN-SAM, which the walk must not read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeshLayout {
    /// Crosspoints in X (at least 1; 0 is taken as 1 for node ids).
    pub mesh_x: u16,
    /// Crosspoints in Y (at least 1; 0 is taken as 1 for node ids).
    pub mesh_y: u16,
    /// The device nodes.
    pub devices: Vec<PlacedDevice>,
    /// Crosspoints (by index) with one external child.
    pub external: Vec<u16>,
}

impl MeshLayout {
    /// A 2 x 2 mesh: an HN-F on port 0 of every crosspoint (logical ids 0 to 3), the DTC on
    /// port 1 of XP 0, an RN-D on port 1 of XP 1, an SBSX on port 1 of XP 2, and an external
    /// RN-SAM under XP 3.
    pub fn small() -> Self {
        let dev = |xp, port, node_type, logical_id| PlacedDevice {
            xp,
            port,
            dev: 0,
            node_type,
            logical_id,
        };
        let mut devices: Vec<PlacedDevice> = (0..4).map(|i| dev(i, 0, 0x0005, i)).collect();
        devices.extend([
            dev(0, 1, NodeType::DTC, 0),
            dev(1, 1, 0x000D, 0),
            dev(2, 1, 0x0007, 0),
        ]);
        Self {
            mesh_x: 2,
            mesh_y: 2,
            devices,
            external: vec![3],
        }
    }

    /// Crosspoints in the mesh.
    pub fn xp_count(&self) -> u16 {
        self.mesh_x * self.mesh_y
    }

    /// The node id of crosspoint `index`: X above Y above 3 device bits, each coordinate as
    /// wide as Linux's `arm_cmn_xyidbits` (fls((mesh_x - 1) | (mesh_y - 1) | 2)).
    pub fn xp_node_id(&self, index: u16) -> u16 {
        let (mx, my) = (self.mesh_x.max(1), self.mesh_y.max(1));
        let bits = 16 - ((mx - 1) | (my - 1) | 2).leading_zeros();
        let (x, y) = (index % mx, index / mx);
        (x << (3 + bits)) | (y << 3)
    }

    /// The node id of a device: its crosspoint's, with the port at bit 2 and the device below.
    pub fn device_node_id(&self, d: &PlacedDevice) -> u16 {
        self.xp_node_id(d.xp) | (d.port << 2) | d.dev
    }

    /// The region offset of crosspoint `index` (the root's region is 0).
    pub fn xp_offset(&self, index: u16) -> u64 {
        NODE_REGION * (1 + u64::from(index))
    }

    /// The region offset of device `i` of [`Self::devices`].
    pub fn device_offset(&self, i: usize) -> u64 {
        NODE_REGION * (1 + u64::from(self.xp_count()) + i as u64)
    }

    /// The image: a CMN-700 r2p0 (part 0x43C) at `base`, one 16 KiB region per node, the
    /// root first, then the crosspoints, then the devices.
    pub fn build(&self, base: u64) -> MeshImage {
        let size = self.device_offset(self.devices.len());
        let image = MeshImage::from_bytes(base, vec![0; size as usize]);
        let put = |offset: u64, value: u64| {
            image
                .write_mmio(base + offset, 64, value)
                .expect("inside the image")
        };
        let info = |t: u16, id: u16, logical: u16| {
            let raw = NodeInfo::NODE_TYPE_BITS.set(0, t.into());
            let raw = NodeInfo::NODE_ID_BITS.set(raw, id.into());
            NodeInfo::LOGICAL_ID_BITS.set(raw, logical.into())
        };
        let children = |at: u64, pointers: &[u64]| {
            let raw = ChildInfo::CHILD_COUNT_BITS.set(0, pointers.len() as u64);
            put(
                at + u64::from(CHILD_INFO.offset()),
                ChildInfo::CHILD_PTR_OFFSET_BITS.set(raw, POINTERS_AT),
            );
            for (i, p) in pointers.iter().enumerate() {
                put(at + POINTERS_AT + 8 * i as u64, *p);
            }
        };
        put(u64::from(NODE_INFO.offset()), info(NodeType::CFG, 0, 0));
        put(
            u64::from(CFGM_PERIPH_ID_01.offset()),
            CfgmPeriphId01::PART_1_BITS.set(CfgmPeriphId01::PART_0_BITS.set(0, 0x3C), 0x4),
        );
        put(
            u64::from(CFGM_PERIPH_ID_23.offset()),
            CfgmPeriphId23::REVISION_BITS.set(0, 2),
        );
        let xps: Vec<u64> = (0..self.xp_count()).map(|i| self.xp_offset(i)).collect();
        children(0, &xps);
        for i in 0..self.xp_count() {
            let at = self.xp_offset(i);
            put(
                at + u64::from(NODE_INFO.offset()),
                info(NodeType::XP, self.xp_node_id(i), i),
            );
            put(at + u64::from(DTM_UNIT_INFO.offset()), 0);
            let mut pointers: Vec<u64> = (0..self.devices.len())
                .filter(|&d| self.devices[d].xp == i)
                .map(|d| self.device_offset(d))
                .collect();
            if self.external.contains(&i) {
                // Far outside the window: reading it would fail, so the walk must not.
                pointers.push(ChildPointer::EXTERNAL_BITS.set(0x3FFF_C000, 1));
            }
            children(at, &pointers);
        }
        for (i, d) in self.devices.iter().enumerate() {
            put(
                self.device_offset(i) + u64::from(NODE_INFO.offset()),
                info(d.node_type, self.device_node_id(d), d.logical_id),
            );
        }
        image
    }
}
