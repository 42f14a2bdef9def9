//! The ACPI APMT (Arm Performance Monitoring Table): which CoreSight PMUs an Arm SoC has and
//! where their registers are, read from the table's bytes (`/sys/firmware/acpi/tables/APMT`
//! on a machine, or a copy of it).
//!
//! The layouts are the spec's (`spec/apmt/`, the crate's `pmu_regs::apmt`): the ACPI header
//! (`header`), then nodes (`node`) one after another, each as long as its own length field
//! says, as Linux's `drivers/acpi/arm64/apmt.c` walks them. [`parse`] checks the table before
//! believing any node: the signature, the header's length against the bytes there are, the
//! checksum, every node inside the table and at least one node layout long, the node ids
//! unique. Everything wrong is an [`ApmtError`]; no input panics or reads out of bounds.

mod error;

use std::path::Path;

pub use error::ApmtError;

use pmu_regs::apmt::header::{ApmtLength, ApmtRevisionChecksum, LENGTH, REVISION_CHECKSUM};
use pmu_regs::apmt::node::{
    ApmtImplementationId, ApmtInstancePrimary, ApmtInstanceSecondary, ApmtNodeHeader,
    ApmtNodeHeaderLayout, ApmtNodeId, ApmtOverflowIrq, ApmtOverflowIrqFlags,
    ApmtOverflowIrqFlagsMode, ApmtProcessorAffinity, BASE_ADDRESS0_HI, BASE_ADDRESS0_LO,
    BASE_ADDRESS1_HI, BASE_ADDRESS1_LO, ID, IMPL_ID, INSTANCE_PRIMARY, INSTANCE_SECONDARY,
    NODE_HEADER, OVFLW_IRQ, OVFLW_IRQ_FLAGS, PROC_AFFINITY,
};
use pmu_regs::support::{Layout, TableOffset};

use crate::bounded;

/// The table's signature, "APMT".
pub const SIGNATURE: [u8; 4] = *b"APMT";

/// Bytes in the ACPI header, where the first node starts (`sizeof(struct acpi_table_header)`).
pub const HEADER_BYTES: usize = 36;

/// Bytes in one node of DEN0117 1.0 (`sizeof(struct acpi_apmt_node)`, packed).
pub const NODE_BYTES: usize = 56;

/// The largest table file read: 1 MiB holds over 18,000 nodes; a SoC has tens.
pub const MAX_TABLE_BYTES: u64 = 1 << 20;

/// Where a machine publishes the table.
pub const SYSFS_PATH: &str = "sys/firmware/acpi/tables/APMT";

/// A checked APMT table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApmtTable {
    /// The header's revision.
    pub revision: u8,
    /// The nodes, in table order.
    pub nodes: Vec<ApmtNode>,
}

/// The processor or processor container a PMU is affine to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Affinity {
    /// An ACPI processor UID.
    Processor(u32),
    /// An ACPI processor container UID (the node's affinity flag).
    Container(u32),
}

/// One node: one CoreSight PMU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApmtNode {
    /// Where the node starts, in bytes from the table's start.
    pub offset: usize,
    /// The node's length field.
    pub length: u16,
    /// The node's type (0 memory controller ... 4 cache).
    pub node_type: u8,
    /// The node's unique id.
    pub id: u32,
    /// The primary instance (by type: proximity domain, IORT offset, PCI segment, _HID, cache id).
    pub instance_primary: u64,
    /// The secondary instance.
    pub instance_secondary: u32,
    /// Page 0's physical address.
    pub base0: u64,
    /// Page 1's physical address, with the dual-page flag.
    pub base1: Option<u64>,
    /// Whether 64-bit accesses to the PMU are single-copy atomic.
    pub atomic64: bool,
    /// The overflow interrupt's GSIV (0: none).
    pub overflow_irq: u32,
    /// Whether that interrupt is edge-triggered (else level).
    pub overflow_edge: bool,
    /// What the PMU is affine to.
    pub affinity: Affinity,
    /// The implementation id standing in for a PMIIDR that reads 0.
    pub impl_id: u32,
}

impl ApmtNode {
    /// The name the spec gives the node's type (`memory_controller`, `smmu`, `pcie_root`,
    /// `acpi_device`, `cache`), or `None` for a type DEN0117 1.0 does not define.
    pub fn type_name(&self) -> Option<&'static str> {
        <ApmtNodeHeaderLayout as Layout>::FIELDS
            .iter()
            .find(|f| f.name == "type")
            .and_then(|f| {
                f.values
                    .iter()
                    .find(|v| v.value == u64::from(self.node_type))
            })
            .map(|v| v.name)
    }
}

/// Reads and checks the table in the file `path`.
pub fn read_file(path: &Path) -> Result<ApmtTable, ApmtError> {
    let bytes = bounded::read(path, MAX_TABLE_BYTES).map_err(|source| ApmtError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&bytes)
}

/// Checks and reads a table from its bytes (the whole table, header first).
pub fn parse(bytes: &[u8]) -> Result<ApmtTable, ApmtError> {
    let header = bytes
        .get(..HEADER_BYTES)
        .ok_or(ApmtError::TooShort { bytes: bytes.len() })?;
    let found = [header[0], header[1], header[2], header[3]];
    if found != SIGNATURE {
        return Err(ApmtError::BadSignature { found });
    }
    let declared = ApmtLength::from_bits(word(header, LENGTH.offset())).length();
    if usize::try_from(declared).ok() != Some(bytes.len()) {
        return Err(ApmtError::LengthMismatch {
            declared,
            actual: bytes.len(),
        });
    }
    let sum = bytes.iter().fold(0u8, |s, b| s.wrapping_add(*b));
    if sum != 0 {
        return Err(ApmtError::BadChecksum { sum });
    }
    let revision = ApmtRevisionChecksum::from_bits(word(header, REVISION_CHECKSUM.offset()));
    let nodes = walk(bytes)?;
    Ok(ApmtTable {
        revision: revision.revision(),
        nodes,
    })
}

/// Every node from byte 36 to the table's end, each checked before it is read.
fn walk(bytes: &[u8]) -> Result<Vec<ApmtNode>, ApmtError> {
    let mut nodes: Vec<ApmtNode> = Vec::new();
    let mut offset = HEADER_BYTES;
    while offset < bytes.len() {
        let index = nodes.len();
        let past_end = |length| ApmtError::NodePastEnd {
            node: index,
            offset,
            length,
            table_length: bytes.len(),
        };
        let head = bytes.get(offset..offset + 4).ok_or_else(|| past_end(0))?;
        let length = ApmtNodeHeader::from_bits(word(head, 0)).length();
        if usize::from(length) < NODE_BYTES {
            return Err(ApmtError::BadNodeLength {
                node: index,
                offset,
                length,
            });
        }
        let raw = bytes
            .get(offset..offset + usize::from(length))
            .ok_or_else(|| past_end(length))?;
        let node = read_node(raw, offset);
        if let Some(first) = nodes.iter().position(|n| n.id == node.id) {
            return Err(ApmtError::DuplicateId {
                id: node.id,
                first,
                second: index,
            });
        }
        nodes.push(node);
        offset += usize::from(length);
    }
    Ok(nodes)
}

/// One node's fields; `raw` holds at least [`NODE_BYTES`] bytes.
fn read_node(raw: &[u8], offset: usize) -> ApmtNode {
    let at = |o: u32| word(raw, o);
    let header = ApmtNodeHeader::from_bits(at(NODE_HEADER.offset()));
    let primary = ApmtInstancePrimary::from_bits(
        u64::from(at(INSTANCE_PRIMARY.offset()))
            | u64::from(at(INSTANCE_PRIMARY.offset() + 4)) << 32,
    );
    let flags = ApmtOverflowIrqFlags::from_bits(at(OVFLW_IRQ_FLAGS.offset()));
    let uid = ApmtProcessorAffinity::from_bits(at(PROC_AFFINITY.offset())).uid();
    ApmtNode {
        offset,
        length: header.length(),
        node_type: header.type_(),
        id: ApmtNodeId::from_bits(at(ID.offset())).id(),
        instance_primary: primary.instance(),
        instance_secondary: ApmtInstanceSecondary::from_bits(at(INSTANCE_SECONDARY.offset()))
            .instance(),
        base0: halves(raw, BASE_ADDRESS0_LO, BASE_ADDRESS0_HI),
        base1: header
            .dual_page()
            .then(|| halves(raw, BASE_ADDRESS1_LO, BASE_ADDRESS1_HI)),
        atomic64: header.atomic(),
        overflow_irq: ApmtOverflowIrq::from_bits(at(OVFLW_IRQ.offset())).gsiv(),
        overflow_edge: flags.mode() == ApmtOverflowIrqFlagsMode::Edge,
        affinity: if header.affinity_container() {
            Affinity::Container(uid)
        } else {
            Affinity::Processor(uid)
        },
        impl_id: ApmtImplementationId::from_bits(at(IMPL_ID.offset())).impl_id(),
    }
}

/// A 64-bit address the spec gives as two 32-bit halves.
fn halves<L, H>(raw: &[u8], lo: TableOffset<L>, hi: TableOffset<H>) -> u64 {
    u64::from(word(raw, lo.offset())) | u64::from(word(raw, hi.offset())) << 32
}

/// The little-endian 32-bit word at `offset`; callers have checked that it lies in `bytes`
/// (the header's 36 bytes, a node's 56 or more), and a word past the end reads as 0.
fn word(bytes: &[u8], offset: u32) -> u32 {
    let at = offset as usize;
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}
