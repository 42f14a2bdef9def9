//! The sampling layer's error: what the guides' procedures refuse, and who holds a PMU.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// A sampling procedure refused.
#[derive(Debug)]
pub enum SamplingError {
    /// A sample interval outside what the counter can count.
    BadInterval {
        /// The interval asked for.
        n: u64,
        /// The largest allowed.
        max: u64,
    },
    /// The counters are not frozen by a PMI, so there is no sample to read.
    NotFrozen {
        /// What was found.
        reason: String,
    },
    /// A counter (or the PMI) is already used by someone else.
    InUse {
        /// The resource (`IA32_PMC2`, `IA32_FIXED_CTR1`, `the PMI`).
        counter: String,
        /// Who holds it, as IA32_PERF_GLOBAL_INUSE reports.
        holder: String,
    },
    /// A value a legacy (sign-extending) counter write cannot produce.
    NotRepresentable {
        /// The counter.
        counter: String,
        /// The value.
        value: u64,
        /// Counter width.
        width: u32,
    },
    /// Another session owns the PMU.
    Owned {
        /// The PMU (`the Xeon 7500 uncore of socket 0`).
        pmu: String,
        /// Who holds it (`process 4242 (pmu watch --unit C3)`).
        holder: String,
    },
    /// A counter's control is already enabled: someone else counts with it, or a session was
    /// killed before it put it back.
    Enabled {
        /// The control register (`C3_MSR_PMON_EVT_SEL0`), the first found enabled.
        register: &'static str,
        /// Its value.
        value: u64,
        /// Every other control of the same PMU found enabled, with its value: after a crash
        /// all of them are left, and each must be seen to.
        others: Vec<(&'static str, u64)>,
        /// The PMU they belong to (`the core PMU of CPU 2`), where the caller knows it.
        pmu: Option<String>,
    },
    /// A lock file, or its directory, that another user could have replaced with a link.
    UnsafeLock {
        /// The lock file.
        path: PathBuf,
        /// What is wrong and what to do.
        problem: String,
    },
    /// The lock file that makes ownership exclusive across processes could not be used.
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl fmt::Display for SamplingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SamplingError::BadInterval { n, max } => write!(f, "a sample interval of {n} events cannot be counted; choose 1 to {max}"),
            SamplingError::NotFrozen { reason } => write!(f, "no frozen sample to read: {reason}"),
            SamplingError::InUse { counter, holder } => write!(f, "{counter} is already in use ({holder}); leave it to its owner, or force the takeover"),
            SamplingError::NotRepresentable { counter, value, width } => write!(f, "{value:#x} cannot be written to {counter}: without full-width writes (IA32_PERF_CAPABILITIES.FW_WRITE) a write stores the sign extension of bits 31:0, which cannot produce this {width}-bit value; write a value whose bits {}:31 are all equal, or use the full-width alias (IA32_A_PMCx) where FW_WRITE is 1", width - 1),
            SamplingError::Owned { pmu, holder } => write!(f, "{pmu} is in use by {holder}; wait until that session ends (or stop it), then try again"),
            SamplingError::Enabled { register, value, others, pmu } => {
                write!(f, "{register} is already enabled ({value:#x})")?;
                for (r, v) in others {
                    write!(f, ", {r} is already enabled ({v:#x})")?;
                }
                if let Some(pmu) = pmu {
                    write!(f, " on {pmu}")?;
                }
                if others.is_empty() {
                    return write!(f, ": another tool is counting with it, or a session was killed before it put it back; leave it to its owner, clear it (`pmu write {register} 0`), or take it over with --force (it is saved and put back at exit)");
                }
                let clear: Vec<String> = std::iter::once(register).chain(others.iter().map(|(r, _)| r)).map(|r| format!("`pmu write {r} 0`")).collect();
                write!(f, ": another tool is counting with them, or a session was killed before it put them back; leave them to their owner, clear them ({}), or take them over with --force (they are saved and put back at exit)", clear.join(", "))
            }
            SamplingError::UnsafeLock { path, problem } => write!(f, "refusing the lock file {}: {problem}", path.display()),
            SamplingError::Lock { path, source } => write!(f, "cannot use the lock file {} that keeps two sessions off one PMU ({source}); make its directory writable, or choose another runtime directory", path.display()),
        }
    }
}

impl std::error::Error for SamplingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SamplingError::Lock { source, .. } => Some(source),
            _ => None,
        }
    }
}
