//! A failed command, and the exit status it gets.

/// A failed command: usage errors (a name or value the user got wrong) exit 2, operation
/// failures 1.
pub enum Failure {
    /// A runtime error, as the library reports it.
    Runtime(pmu_runtime::Error),
    /// The command line asked for something that cannot be done as asked.
    Usage(String),
    /// The operation failed.
    Operation(String),
}

impl Failure {
    /// A usage error (exit 2) with this message.
    pub fn usage(message: String) -> Self {
        Failure::Usage(message)
    }

    /// An operation failure (exit 1) with this message.
    pub fn operation(message: String) -> Self {
        Failure::Operation(message)
    }

    /// This failure, and putting back what had been changed failed too.
    pub fn with_cleanup(self, cleanup: pmu_runtime::Error) -> Self {
        match self {
            Failure::Runtime(error) => Failure::Runtime(pmu_runtime::Error::Cleanup {
                error: Box::new(error),
                cleanup: Box::new(cleanup),
            }),
            other => Failure::Operation(format!(
                "{other}; putting the registers back also failed: {cleanup}; check them with \
                 `pmu read` before counting again"
            )),
        }
    }

    /// The exit status: 2 for a usage error, 1 for a failed operation.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Operation(_) => 1,
            Failure::Runtime(e) if e.is_usage() => 2,
            // An event perf cannot name or read (`-e cpu-clok`) is the caller's, as an
            // unknown `event=` is.
            Failure::Runtime(pmu_runtime::Error::Driver(d))
                if d.downcast_ref::<pmu_runtime::perf::PerfError>()
                    .is_some_and(pmu_runtime::perf::PerfError::is_usage) =>
            {
                2
            }
            Failure::Runtime(_) => 1,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Runtime(e) => e.fmt(f),
            Failure::Usage(m) | Failure::Operation(m) => f.write_str(m),
        }
    }
}

impl<E: Into<pmu_runtime::Error>> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure::Runtime(error.into())
    }
}

pub(crate) type Out = Result<String, Failure>;
