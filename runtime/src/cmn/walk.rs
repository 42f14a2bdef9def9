//! The walk itself: root, crosspoints, device nodes, each read only after its place in the
//! window is checked.

use std::collections::HashSet;

use pmu_regs::arm_cmn_700::cfg::{
    CfgmPeriphId01, CfgmPeriphId23, CFGM_PERIPH_ID_01, CFGM_PERIPH_ID_23,
};
use pmu_regs::arm_cmn_700::child::{ChildPointer, CHILD_POINTER};
use pmu_regs::arm_cmn_700::node::{ChildInfo, NodeInfo, CHILD_INFO, NODE_INFO};
use pmu_regs::TableOffset;

use super::window::Window;
use super::{node_type_name, CmnError, CmnMesh, CmnNode, ExternalChild, NodeType};
use crate::access::MmioAccess;

/// The most crosspoints a CMN mesh has: Linux's CMN_MAX_XPS (a 12 x 12 mesh).
pub const MAX_XPS: u16 = 144;

/// The most children the reader accepts under one crosspoint. Linux sets no limit; a
/// crosspoint has at most six device ports of a few devices each, with their RN-SAM and MPAM
/// nodes, far below this, so more is a corrupt child count.
pub const MAX_CHILDREN_PER_XP: u16 = 64;

/// The bytes of a node's region the walk reads: node info at 0, child info at 0x80.
const NODE_HEAD: u64 = 0x88;

impl<M: MmioAccess + ?Sized> Window<'_, M> {
    /// A table register of the node at `node`.
    fn reg<R>(&self, node: u64, reg: TableOffset<R>) -> Result<u64, CmnError> {
        self.read(node + u64::from(reg.offset()))
    }

    /// The node at `offset`: its info and its children's count and pointer offset.
    fn node(
        &self,
        what: impl FnOnce() -> String,
        offset: u64,
        parent: Option<u64>,
    ) -> Result<(CmnNode, ChildInfo), CmnError> {
        self.place(what, offset, NODE_HEAD)?;
        let info = NodeInfo::from_bits(self.reg(offset, NODE_INFO)?);
        let children = ChildInfo::from_bits(self.reg(offset, CHILD_INFO)?);
        let node = CmnNode {
            offset,
            node_type: info.node_type(),
            node_id: info.node_id(),
            logical_id: info.logical_id(),
            parent,
        };
        Ok((node, children))
    }

    /// The child pointers of the node at `node`, each placed, at most `max`.
    fn pointers(
        &self,
        node: u64,
        children: ChildInfo,
        max: u16,
    ) -> Result<Vec<ChildPointer>, CmnError> {
        let count = children.child_count();
        if count > max {
            return Err(CmnError::TooManyChildren { node, count, max });
        }
        let first = node + u64::from(children.child_ptr_offset());
        (0..u64::from(count))
            .map(|i| {
                let at = first + i * 8 + u64::from(CHILD_POINTER.offset());
                let what = || format!("child pointer {i} of the node at {node:#x}");
                self.place(what, at, 8)?;
                Ok(ChildPointer::from_bits(self.read(at)?))
            })
            .collect()
    }
}

/// Walks the CMN configuration window of `size` bytes at physical address `base` from the
/// root node at offset `root` (0 on CMN-700; the firmware's root-node offset on CMN-600):
/// the root, then each crosspoint it lists, then each crosspoint's device nodes. External
/// children are listed, never read (as Linux leaves them). Every read is inside the window;
/// anything wrong is a [`CmnError`].
pub fn walk(
    mmio: &(impl MmioAccess + ?Sized),
    base: u64,
    size: u64,
    root: u64,
) -> Result<CmnMesh, CmnError> {
    if size < NODE_HEAD {
        return Err(CmnError::WindowTooSmall { size });
    }
    let window = Window { mmio, base, size };
    let (root_node, children) = window.node(|| "the root node".into(), root, None)?;
    if root_node.node_type != NodeType::CFG {
        return Err(CmnError::RootNotCfg {
            offset: root,
            found: root_node.node_type,
        });
    }
    let id01 = CfgmPeriphId01::from_bits(window.reg(root, CFGM_PERIPH_ID_01)?);
    let id23 = CfgmPeriphId23::from_bits(window.reg(root, CFGM_PERIPH_ID_23)?);
    let mut mesh = CmnMesh {
        part: u16::from(id01.part_0()) | (u16::from(id01.part_1()) << 8),
        revision: id23.revision(),
        root: root_node,
        xps: Vec::new(),
        devices: Vec::new(),
        external: Vec::new(),
    };
    let mut seen = HashSet::from([root]);
    for pointer in window.pointers(root, children, MAX_XPS)? {
        if let Some(xp) = visit(&window, &mut seen, &mut mesh, root, pointer)? {
            walk_xp(&window, &mut seen, &mut mesh, xp)?;
        }
    }
    Ok(mesh)
}

/// The node a child pointer of `parent` leads to, if it is internal, checked not to have
/// been visited; an external one is listed in `mesh.external`.
fn visit<M: MmioAccess + ?Sized>(
    window: &Window<'_, M>,
    seen: &mut HashSet<u64>,
    mesh: &mut CmnMesh,
    parent: u64,
    pointer: ChildPointer,
) -> Result<Option<(CmnNode, ChildInfo)>, CmnError> {
    let offset = u64::from(pointer.address_offset());
    if pointer.external() {
        mesh.external.push(ExternalChild { parent, offset });
        return Ok(None);
    }
    if !seen.insert(offset) {
        return Err(CmnError::Cycle { parent, offset });
    }
    let what = || format!("the child of the node at {parent:#x}");
    window.node(what, offset, Some(parent)).map(Some)
}

/// One crosspoint and its device nodes.
fn walk_xp<M: MmioAccess + ?Sized>(
    window: &Window<'_, M>,
    seen: &mut HashSet<u64>,
    mesh: &mut CmnMesh,
    (xp, children): (CmnNode, ChildInfo),
) -> Result<(), CmnError> {
    if xp.node_type != NodeType::XP {
        return Err(CmnError::WrongLevel {
            offset: xp.offset,
            found: xp.node_type,
            expected: "a crosspoint (0x0006)",
        });
    }
    let at = xp.offset;
    mesh.xps.push(xp);
    for pointer in window.pointers(at, children, MAX_CHILDREN_PER_XP)? {
        let Some((device, _)) = visit(window, seen, mesh, at, pointer)? else {
            continue;
        };
        let t = device.node_type;
        if t == NodeType::XP || t == NodeType::CFG {
            return Err(CmnError::WrongLevel {
                offset: device.offset,
                found: t,
                expected: "a device node (not a crosspoint or the root)",
            });
        }
        if t == NodeType::INVALID || node_type_name(t).is_none() {
            return Err(CmnError::UnknownNodeType {
                offset: device.offset,
                found: t,
            });
        }
        mesh.devices.push(device);
    }
    Ok(())
}
