//! The runtime's errors, typed by layer: [`BackendError`] (reaching a register, finding where
//! it is), [`UsageError`] (a name, value or request the caller got wrong) and
//! [`SamplingError`] (what the sampling procedures refuse); a backend above the register
//! access layer (the kernel's perf drivers) reaches it as [`Error::Driver`], its own error
//! boxed, without this layer knowing its type. [`Error`] is any of them, or a failure whose
//! undo failed too. Every message names what went wrong and what to do next;
//! `source()` leads to the operating system's error where there is one.

use std::fmt;

pub use crate::access::{AccessError, BackendError, Op, Target};

mod broken;
mod sampling;
mod usage;

pub use broken::BrokenBox;
pub use sampling::SamplingError;
pub use usage::UsageError;

/// Any runtime error.
#[derive(Debug)]
pub enum Error {
    /// Reaching a register failed, or where it is could not be found.
    Backend(BackendError),
    /// The caller asked for something that does not exist or cannot be done.
    Usage(UsageError),
    /// A sampling procedure refused.
    Sampling(SamplingError),
    /// An operation failed, and putting back what it had changed failed too.
    Cleanup {
        /// What failed first.
        error: Box<Error>,
        /// What failed while undoing it.
        cleanup: Box<Error>,
    },
    /// The operation itself succeeded, but putting the registers back afterwards failed.
    RestoreFailed(Box<Error>),
    /// A backend above the register access layer failed (the kernel's perf drivers): its
    /// own error, which a caller can `downcast_ref` to its type.
    Driver(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// A box does not count: its clock event counted nothing over an interval it was
    /// enabled (the spec's `<clock-event>`); its counts are not shown.
    Broken(Box<BrokenBox>),
}

impl Error {
    /// Names the register an access error concerns.
    pub fn with_register(self, name: &'static str) -> Self {
        match self {
            Error::Backend(e) => Error::Backend(e.with_register(name)),
            e => e,
        }
    }

    /// The access error kind, if this is an access error.
    pub fn access_kind(&self) -> Option<&AccessError> {
        match self {
            Error::Backend(e) => e.access_kind(),
            _ => None,
        }
    }

    /// Whether the caller got something wrong (a command line would exit with a usage status):
    /// a name or request, or a value the register refuses before any access (reserved bits,
    /// too wide, read-only), or a socket the machine does not have. The same mistake gets the
    /// same status whether given as a whole value or as fields.
    pub fn is_usage(&self) -> bool {
        let refused_value = matches!(
            self.access_kind(),
            Some(
                AccessError::ReservedBits { .. }
                    | AccessError::TooWide { .. }
                    | AccessError::ReadOnly
            )
        );
        let no_socket = matches!(self, Error::Backend(BackendError::NoCpuForSocket { .. }));
        matches!(self, Error::Usage(_)) || refused_value || no_socket
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Backend(e) => e.fmt(f),
            Error::Usage(e) => e.fmt(f),
            Error::Sampling(e) => e.fmt(f),
            Error::Driver(e) => e.fmt(f),
            Error::Broken(e) => e.fmt(f),
            Error::Cleanup { error, cleanup } => write!(f, "{error}; putting the registers back also failed: {cleanup}; check them with `pmu read` before counting again"),
            Error::RestoreFailed(e) => write!(f, "counting finished, but restoring the registers failed: {e}; check them with `pmu read`"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // The layers are transparent: their message is this message, so the chain continues
        // with their cause.
        match self {
            Error::Backend(e) => e.source(),
            Error::Usage(e) => e.source(),
            Error::Sampling(e) => e.source(),
            Error::Driver(e) => e.source(),
            Error::Broken(_) => None,
            Error::Cleanup { error, .. } => error.source(),
            Error::RestoreFailed(e) => e.source(),
        }
    }
}

impl From<BackendError> for Error {
    fn from(e: BackendError) -> Self {
        Error::Backend(e)
    }
}

impl From<UsageError> for Error {
    fn from(e: UsageError) -> Self {
        Error::Usage(e)
    }
}

impl From<SamplingError> for Error {
    fn from(e: SamplingError) -> Self {
        Error::Sampling(e)
    }
}

impl From<pmu_regs::FieldTooWide> for Error {
    fn from(e: pmu_regs::FieldTooWide) -> Self {
        Error::Usage(UsageError::FieldTooWide(e))
    }
}

/// Result with the runtime's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
