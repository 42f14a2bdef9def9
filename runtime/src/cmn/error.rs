//! What can be wrong with a CMN mesh's node configuration, each with what to do next.

use std::fmt;

use crate::access::BackendError;

/// Why a CMN configuration window could not be walked. The walk only reads, so no error leaves
/// anything to undo.
#[derive(Debug)]
pub enum CmnError {
    /// The window is too small to hold even the root's node and child info.
    WindowTooSmall {
        /// The window's size in bytes.
        size: u64,
    },
    /// Reading a register failed.
    Read {
        /// The offset read, from the start of the window.
        offset: u64,
        /// The backend's error.
        source: BackendError,
    },
    /// Writing a register failed (counting on a DTC: what was written before is put back).
    Write {
        /// The offset written, from the start of the window.
        offset: u64,
        /// The backend's error.
        source: BackendError,
    },
    /// The node at the root offset is not the configuration node (type 0x0002).
    RootNotCfg {
        /// The root's offset.
        offset: u64,
        /// The node type found there.
        found: u16,
    },
    /// A node region, or the list of a node's child pointers, lies (partly) outside the
    /// window, or is not 8-byte aligned.
    OutsideWindow {
        /// What was to be read ("child pointer 3 of the XP at 0x4000").
        what: String,
        /// Its offset from the start of the window.
        offset: u64,
        /// The window's size.
        size: u64,
    },
    /// A node declares more children than any CMN has.
    TooManyChildren {
        /// The node's offset.
        node: u64,
        /// The count it declares.
        count: u16,
        /// The most the reader accepts at that level.
        max: u16,
    },
    /// A child pointer leads to a node already visited (the root, a crosspoint or another
    /// device node): the tree loops or two pointers share a node.
    Cycle {
        /// The node whose child pointer it is.
        parent: u64,
        /// The offset visited twice.
        offset: u64,
    },
    /// A child of the root is not a crosspoint, or a crosspoint's child is a crosspoint or
    /// the configuration node.
    WrongLevel {
        /// The child's offset.
        offset: u64,
        /// Its node type.
        found: u16,
        /// What the level needs ("a crosspoint (0x0006)").
        expected: &'static str,
    },
    /// A crosspoint's (internal) child has a node type the spec does not know: Linux's driver
    /// refuses such a mesh ("invalid device node type").
    UnknownNodeType {
        /// The child's offset.
        offset: u64,
        /// Its node type.
        found: u16,
    },
}

impl fmt::Display for CmnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let check = "check the window's base and size (the firmware's CMN resource) and that the root offset is the configuration node's";
        match self {
            Self::WindowTooSmall { size } => write!(
                f,
                "the CMN configuration window of {size:#x} bytes cannot hold a node (0x88 bytes at least): {check}"
            ),
            Self::Read { offset, source } => {
                write!(f, "reading the CMN configuration at offset {offset:#x} failed: {source}")
            }
            Self::Write { offset, source } => {
                write!(f, "writing the CMN configuration at offset {offset:#x} failed: {source}")
            }
            Self::RootNotCfg { offset, found } => write!(
                f,
                "the node at {offset:#x} has type {found:#06x}, not the configuration node (0x0002): {check}"
            ),
            Self::OutsideWindow { what, offset, size } => write!(
                f,
                "{what} at {offset:#x} is not an aligned place inside the {size:#x}-byte window: the configuration is corrupt, or the window is not the whole CMN region"
            ),
            Self::TooManyChildren { node, count, max } => write!(
                f,
                "the node at {node:#x} declares {count} children, more than any CMN has ({max}): the configuration is corrupt"
            ),
            Self::Cycle { parent, offset } => write!(
                f,
                "a child pointer of the node at {parent:#x} leads back to the node at {offset:#x}, already visited: the configuration loops"
            ),
            Self::WrongLevel { offset, found, expected } => write!(
                f,
                "the node at {offset:#x} has type {found:#06x} where the tree needs {expected}: the configuration is corrupt"
            ),
            Self::UnknownNodeType { offset, found } => write!(
                f,
                "the node at {offset:#x} has type {found:#06x}, which no CMN-700 node has (spec/arm-cmn-700/node.xml); Linux's arm_cmn refuses such a mesh too"
            ),
        }
    }
}

impl std::error::Error for CmnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Read { source, .. } | Self::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}
