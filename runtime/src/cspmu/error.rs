//! What can go wrong finding or counting on a CoreSight PMU, each with what to do next.

use std::fmt;

use crate::access::BackendError;
use crate::apmt::ApmtError;

/// Why a CoreSight PMU could not be found or counted on. Everything counting checks is
/// checked before the first write; a failure after it puts back what was written.
#[derive(Debug)]
pub enum CspmuError {
    /// The APMT that should list the PMUs is refused.
    Apmt(ApmtError),
    /// Reading a PMU register failed.
    Read {
        /// The physical address read.
        address: u64,
        /// The backend's error.
        source: BackendError,
    },
    /// Writing a PMU register failed.
    Write {
        /// The physical address written.
        address: u64,
        /// The backend's error.
        source: BackendError,
    },
    /// More events than the PMU has free event counters.
    TooManyEvents {
        /// Events asked for.
        asked: usize,
        /// Event counters free (implemented and not enabled by someone else).
        free: usize,
    },
    /// Cycles were asked for, but PMCFGR.CC says there is no cycle counter, or it is enabled
    /// already (someone else counts with it).
    NoCycleCounter {
        /// Whether it exists but is in use.
        busy: bool,
    },
    /// Counting failed and putting the registers back failed too.
    PutBack {
        /// What stopped the counting.
        error: Box<CspmuError>,
        /// What stopped the putting back.
        undo: Box<CspmuError>,
    },
}

impl fmt::Display for CspmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CspmuError::Apmt(_) => write!(
                f,
                "the APMT is refused, so no CoreSight PMU is believed: check the table (/sys/firmware/acpi/tables/APMT)"
            ),
            CspmuError::Read { address, .. } => {
                write!(f, "reading the PMU register at {address:#x} failed")
            }
            CspmuError::Write { address, .. } => {
                write!(f, "writing the PMU register at {address:#x} failed")
            }
            CspmuError::TooManyEvents { asked, free } => write!(
                f,
                "{asked} events asked for, but the PMU has {free} free event counters: count fewer at once"
            ),
            CspmuError::NoCycleCounter { busy: false } => write!(
                f,
                "the PMU has no cycle counter (PMCFGR.CC is 0): count an event instead"
            ),
            CspmuError::NoCycleCounter { busy: true } => write!(
                f,
                "the cycle counter is enabled already (someone else counts with it): stop that first"
            ),
            CspmuError::PutBack { .. } => write!(
                f,
                "counting failed, and putting the PMU's registers back failed too: its state is unknown, reset it"
            ),
        }
    }
}

impl std::error::Error for CspmuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CspmuError::Apmt(e) => Some(e),
            CspmuError::Read { source, .. } | CspmuError::Write { source, .. } => Some(source),
            CspmuError::PutBack { error, .. } => Some(error.as_ref()),
            CspmuError::TooManyEvents { .. } | CspmuError::NoCycleCounter { .. } => None,
        }
    }
}

impl From<ApmtError> for CspmuError {
    fn from(e: ApmtError) -> Self {
        CspmuError::Apmt(e)
    }
}
