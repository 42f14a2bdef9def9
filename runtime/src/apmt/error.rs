//! What can be wrong with an APMT table, each with what to do next.

use std::fmt;
use std::path::PathBuf;

use crate::bounded::BoundedError;

/// Why an APMT table was refused. The reader only reads bytes, so nothing is ever left to undo.
#[derive(Debug)]
pub enum ApmtError {
    /// The table file could not be read (missing, unreadable, too large, too slow).
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: BoundedError,
    },
    /// Fewer bytes than the 36-byte ACPI header.
    TooShort {
        /// The bytes there are.
        bytes: usize,
    },
    /// The first four bytes are not "APMT".
    BadSignature {
        /// The four bytes found.
        found: [u8; 4],
    },
    /// The header's length is not the number of bytes the table has.
    LengthMismatch {
        /// The header's length.
        declared: u32,
        /// The bytes there are.
        actual: usize,
    },
    /// The table's bytes do not add up to 0 modulo 256.
    BadChecksum {
        /// What they add up to.
        sum: u8,
    },
    /// A node's header (its first 4 bytes) or its declared length runs past the table's end.
    NodePastEnd {
        /// The node's index (0-based).
        node: usize,
        /// Where it starts, in bytes from the table's start.
        offset: usize,
        /// Its declared length (0 when not even its length fits).
        length: u16,
        /// The table's length.
        table_length: usize,
    },
    /// A node's length is shorter than the node layout (56 bytes): the walk would not advance,
    /// or the node's fields would overlap the next node.
    BadNodeLength {
        /// The node's index.
        node: usize,
        /// Where it starts.
        offset: usize,
        /// Its declared length.
        length: u16,
    },
    /// Two nodes carry one id, which DEN0117 makes unique in the table.
    DuplicateId {
        /// The id.
        id: u32,
        /// The first node with it.
        first: usize,
        /// The second.
        second: usize,
    },
}

impl fmt::Display for ApmtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { path, source } => write!(
                f,
                "cannot read the APMT table {}: {source}; on an Arm server it is \
                 /sys/firmware/acpi/tables/APMT (readable by root)",
                path.display()
            ),
            Self::TooShort { bytes } => write!(
                f,
                "the APMT table has {bytes} bytes, fewer than the 36 of an ACPI header: \
                 give the whole table (a copy of /sys/firmware/acpi/tables/APMT)"
            ),
            Self::BadSignature { found } => write!(
                f,
                "the table's signature is {:?}, not \"APMT\": this is another ACPI table",
                String::from_utf8_lossy(found)
            ),
            Self::LengthMismatch { declared, actual } => write!(
                f,
                "the APMT header declares {declared} bytes but the table has {actual}: \
                 the copy is truncated or has trailing bytes"
            ),
            Self::BadChecksum { sum } => write!(
                f,
                "the APMT table's bytes add up to {sum:#04x} modulo 256, not 0: \
                 the table is corrupt (or was edited without fixing its checksum)"
            ),
            Self::NodePastEnd {
                node,
                offset,
                length,
                table_length,
            } => write!(
                f,
                "APMT node {node} at byte {offset} (length {length}) runs past the table's \
                 end at byte {table_length}: the table is corrupt"
            ),
            Self::BadNodeLength {
                node,
                offset,
                length,
            } => write!(
                f,
                "APMT node {node} at byte {offset} declares {length} bytes, fewer than the \
                 56 of a node: the table is corrupt"
            ),
            Self::DuplicateId { id, first, second } => write!(
                f,
                "APMT nodes {first} and {second} both have id {id}, which must be unique: \
                 the table is corrupt"
            ),
        }
    }
}

impl std::error::Error for ApmtError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}
