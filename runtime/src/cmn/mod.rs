//! The Arm CMN mesh's node configuration (CMN-700): where the mesh lists its own nodes.
//!
//! A CMN's configuration window (one memory resource the firmware gives, 16 KiB per node)
//! starts with the root configuration node; its child pointers lead to the crosspoints (XPs),
//! and each crosspoint's to the device nodes on its ports (HN-F, RN-D, SBSX, the DTC...). The
//! layouts are the spec's (`spec/arm-cmn-700/`, the crate's `pmu_regs::arm_cmn_700`); this
//! module only walks them:
//!
//! - [`walk`]: a window, through [`MmioAccess`](crate::access::MmioAccess), to a [`CmnMesh`]
//!   of [`CmnNode`]s (type, node id, logical id, offset), as Linux's `arm_cmn_discover` walks
//!   it;
//! - [`MeshImage`]: a window held in memory (raw bytes, or built from a [`MeshLayout`]),
//!   which tests corrupt and the simulator (`sim::cmn`) counts in;
//! - [`count_cycles`]: the DTC's cycle counter around a piece of work, and [`count_event`]: a
//!   named node event ([`MeshEvent`], the spec's `<node-events>`) through its crosspoint's
//!   DTM and a DTC global counter, every register each changes put back.
//!
//! Every way a configuration can be wrong (a child pointer outside the window or unaligned, a
//! pointer back to a node already visited, an absurd child count, a crosspoint that is not
//! one, a device node of a type no CMN-700 has) is a [`CmnError`]; the walk reads nothing
//! outside the window and never panics on any bytes.
//!
//! On a real machine the kernel's `arm_cmn` driver owns the mesh's PMU: user space has no
//! raw path to it (it would need the window mapped through `/dev/mem`, racing the driver),
//! and counts through perf's `arm_cmn_0`.

mod count;
mod error;
mod events;
mod image;
mod walk;
mod window;

pub use count::{count_cycles, count_event, CycleCount};
pub use error::CmnError;
pub use events::{all_events, MeshEvent, NODE_EVENTS};
pub use image::{MeshImage, MeshLayout, PlacedDevice, NODE_REGION};
pub use walk::{walk, MAX_CHILDREN_PER_XP, MAX_XPS};

use pmu_regs::arm_cmn_700::node::NodeInfoLayout;
use pmu_regs::Layout;

/// Node types the walk needs by number (Linux's `enum cmn_node_type`; the spec's
/// `NODE_INFO.node_type` values name them all).
pub struct NodeType;

impl NodeType {
    /// Not a node.
    pub const INVALID: u16 = 0x0000;
    /// The root configuration node.
    pub const CFG: u16 = 0x0002;
    /// The debug and trace controller (global counters).
    pub const DTC: u16 = 0x0003;
    /// A crosspoint.
    pub const XP: u16 = 0x0006;
}

/// The spec's name of node type `t` (`hnf`, `xp`...), if the spec knows it.
pub fn node_type_name(t: u16) -> Option<&'static str> {
    NodeInfoLayout::FIELDS
        .iter()
        .find(|f| f.name == "node_type")
        .and_then(|f| f.values.iter().find(|v| v.value == u64::from(t)))
        .map(|v| v.name)
}

/// One node the walk found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmnNode {
    /// Offset of the node's region from the start of the window.
    pub offset: u64,
    /// `NODE_INFO.node_type`.
    pub node_type: u16,
    /// `NODE_INFO.node_id`: its place in the mesh.
    pub node_id: u16,
    /// `NODE_INFO.logical_id`: its number among the nodes of its type.
    pub logical_id: u16,
    /// The offset of the node whose child it is (none for the root).
    pub parent: Option<u64>,
}

impl CmnNode {
    /// The node's type by the spec's name (`hnf`), or its number when the spec has none.
    pub fn type_name(&self) -> String {
        node_type_name(self.node_type).map_or_else(
            || format!("{:#06x}", self.node_type),
            std::string::ToString::to_string,
        )
    }
}

/// A child pointer with the external bit: a node outside the mesh proper, listed, never read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExternalChild {
    /// The crosspoint (or root) whose child it is.
    pub parent: u64,
    /// The offset the pointer gives.
    pub offset: u64,
}

/// A walked mesh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmnMesh {
    /// The part number from the root's peripheral ids (0x43C CMN-700).
    pub part: u16,
    /// The revision (CMN-700: 0 r0p0, 1 r1p0, 2 r2p0).
    pub revision: u8,
    /// The root configuration node.
    pub root: CmnNode,
    /// The crosspoints, in the root's order.
    pub xps: Vec<CmnNode>,
    /// The device nodes, crosspoint by crosspoint in each one's order.
    pub devices: Vec<CmnNode>,
    /// The external children, not read.
    pub external: Vec<ExternalChild>,
}

impl CmnMesh {
    /// The device nodes of type `t`.
    pub fn of_type(&self, t: u16) -> impl Iterator<Item = &CmnNode> {
        self.devices.iter().filter(move |n| n.node_type == t)
    }
}
