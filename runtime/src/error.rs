//! The one error type of the runtime: every failure names the operation, the register (when
//! known), where it is (CPU and MSR, or PCI device and offset), what went wrong, and what to do.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::pci::Bdf;

/// Reading or writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A read.
    Read,
    /// A write.
    Write,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Write => "write",
        })
    }
}

/// Where an access went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// An MSR on a logical CPU.
    Msr {
        /// Logical CPU number.
        cpu: u32,
        /// MSR number.
        address: u32,
    },
    /// A dword in a PCI device's configuration space.
    Pci {
        /// The device.
        bdf: Bdf,
        /// Byte offset in configuration space.
        offset: u16,
    },
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Msr { cpu, address } => write!(f, "MSR {address:#X} on CPU {cpu}"),
            Target::Pci { bdf, offset } => write!(f, "PCI {bdf} offset {offset:#X}"),
        }
    }
}

/// What went wrong with an access.
#[derive(Debug)]
pub enum AccessError {
    /// The MSR device file does not exist.
    NoMsrDevice {
        /// The path that was opened.
        path: PathBuf,
    },
    /// The PCI device's config file does not exist.
    NoPciDevice {
        /// The path that was opened.
        path: PathBuf,
    },
    /// Opening the device file was not permitted.
    PermissionDenied {
        /// The path that was opened.
        path: PathBuf,
    },
    /// The processor refused the access (`EIO`: `#GP` on `RDMSR`/`WRMSR`).
    Rejected,
    /// Fewer bytes moved than the access needed (past the end of a file).
    Short {
        /// Bytes transferred.
        done: usize,
        /// Bytes wanted.
        wanted: usize,
    },
    /// The value sets bits that must be written as zero; nothing was written.
    ReservedBits {
        /// The value.
        value: u64,
        /// The offending bits.
        bits: u64,
    },
    /// The value does not fit in the register; nothing was written.
    TooWide {
        /// The value.
        value: u64,
        /// Register width in bits.
        width: u32,
    },
    /// The register has no writable field; nothing was written.
    ReadOnly,
    /// A 64-bit value spread over two dwords kept changing while it was read.
    Unstable {
        /// Attempts made.
        reads: usize,
    },
    /// Any other OS error.
    Os,
}

/// A runtime error.
#[derive(Debug)]
pub enum Error {
    /// A register access failed.
    Access {
        /// Read or write.
        op: Op,
        /// Where.
        target: Target,
        /// The register's name, when the access was typed.
        register: Option<&'static str>,
        /// What went wrong.
        kind: AccessError,
        /// The OS error, if there was one.
        source: Option<io::Error>,
    },
    /// No source gives this register's address, so it cannot be accessed.
    AddressUnknown {
        /// The register.
        register: &'static str,
        /// Why the address is unknown.
        reason: &'static str,
    },
    /// None of the uncore PCI devices the spec names was found.
    NoUncoreDevices {
        /// The directory searched.
        root: PathBuf,
        /// What was looked for: "8086:3c46 (HA, dev 14 fn 1)".
        looked_for: Vec<String>,
    },
    /// The register's device was not found on that socket.
    DeviceNotFound {
        /// The register.
        register: &'static str,
        /// Socket index.
        socket: usize,
        /// "8086:3c41 dev 8 fn 2".
        device: String,
    },
    /// The CPU topology could not be read.
    Topology {
        /// The path involved.
        path: PathBuf,
        /// What was wrong.
        problem: String,
    },
    /// A socket has no online CPU.
    NoCpuForSocket {
        /// The socket asked for.
        socket: u32,
        /// Sockets that have online CPUs.
        present: Vec<u32>,
    },
    /// A name matched no register.
    UnknownRegister {
        /// The name given.
        name: String,
        /// Close matches.
        suggestions: Vec<String>,
    },
    /// A register has no field of that name.
    UnknownField {
        /// The register.
        register: &'static str,
        /// The name given.
        field: String,
        /// Close matches.
        suggestions: Vec<String>,
        /// Every field name, for the message.
        fields: String,
    },
    /// The field cannot be written.
    ReadOnlyField {
        /// The register.
        register: &'static str,
        /// The field.
        field: &'static str,
        /// Its access kind.
        access: &'static str,
    },
    /// A value that could not be parsed.
    BadValue {
        /// What was given.
        text: String,
        /// What was expected.
        expected: String,
    },
    /// A register name without an instance where one is needed.
    NeedsInstance {
        /// The name given.
        name: String,
        /// The instances there are.
        instances: String,
    },
    /// A simulator-only operation was given something the simulator does not model.
    Sim(String),
    /// An operation failed, and putting back what it had changed failed too.
    Cleanup {
        /// What failed first.
        error: Box<Error>,
        /// What failed while undoing it.
        cleanup: Box<Error>,
    },
    /// The register has no such field, so the requested setting cannot be made.
    UnsupportedField {
        /// The register.
        register: &'static str,
        /// The setting asked for.
        field: &'static str,
    },
    /// A value does not fit its field.
    FieldTooWide(pmu_regs::FieldTooWide),
    /// No such counter.
    NoSuchCounter {
        /// What was asked for (`C3 counter 9`, `IA32_PMC6`).
        counter: String,
        /// What exists.
        available: String,
    },
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
    /// The perf backend failed.
    Perf(crate::perf::PerfError),
}

impl Error {
    /// An access error without an OS error behind it.
    pub(crate) fn access(op: Op, target: Target, kind: AccessError) -> Self {
        Error::Access {
            op,
            target,
            register: None,
            kind,
            source: None,
        }
    }

    /// Classifies an OS error from opening or transferring.
    pub(crate) fn from_io(op: Op, target: Target, path: PathBuf, e: io::Error) -> Self {
        let kind = match (e.kind(), e.raw_os_error(), target) {
            (io::ErrorKind::NotFound, _, Target::Msr { .. }) => AccessError::NoMsrDevice { path },
            (io::ErrorKind::NotFound, _, Target::Pci { .. }) => AccessError::NoPciDevice { path },
            (io::ErrorKind::PermissionDenied, _, _) => AccessError::PermissionDenied { path },
            (_, Some(5), _) => AccessError::Rejected, // EIO
            _ => AccessError::Os,
        };
        Error::Access {
            op,
            target,
            register: None,
            kind,
            source: Some(e),
        }
    }

    /// Names the register an access error concerns.
    pub fn with_register(mut self, name: &'static str) -> Self {
        if let Error::Access { register, .. } = &mut self {
            register.get_or_insert(name);
        }
        self
    }

    /// The access error kind, if this is an access error.
    pub fn access_kind(&self) -> Option<&AccessError> {
        match self {
            Error::Access { kind, .. } => Some(kind),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Access {
                op,
                target,
                register,
                kind,
                source,
            } => {
                write!(f, "cannot {op} ")?;
                match register {
                    Some(r) => write!(f, "{r} ({target})")?,
                    None => write!(f, "{target}")?,
                }
                f.write_str(": ")?;
                match kind {
                    AccessError::NoMsrDevice { path } => {
                        let cpu = match target {
                            Target::Msr { cpu, .. } => *cpu,
                            Target::Pci { .. } => 0,
                        };
                        write!(f, "{} does not exist; load the msr driver (`modprobe msr`), or check that CPU {cpu} exists and is online", path.display())?
                    }
                    AccessError::NoPciDevice { path } => write!(f, "{} does not exist; the device is not present (virtual machines usually expose no uncore devices), or the bus number is wrong", path.display())?,
                    AccessError::PermissionDenied { path } => write!(f, "permission denied opening {}; run as root, or give the program CAP_SYS_RAWIO (MSRs) and read/write access to the file", path.display())?,
                    AccessError::Rejected => f.write_str("the processor refused the access (EIO, a #GP fault): this register does not exist on this processor, or the value sets bits it does not allow")?,
                    AccessError::Short { done, wanted } => write!(f, "transferred {done} of {wanted} bytes (past the end of the file); the register does not exist at this offset")?,
                    AccessError::ReservedBits { value, bits } => write!(f, "value {value:#x} sets reserved bits {bits:#x}, which must be written as zero; nothing was written (clear them, or start from the register's RESET value)")?,
                    AccessError::TooWide { value, width } => write!(f, "value {value:#x} does not fit in the {width}-bit register; nothing was written (use a value below 2^{width})")?,
                    AccessError::ReadOnly => f.write_str("the register is read-only; nothing was written (use `pmu read` to see it)")?,
                    AccessError::Unstable { reads } => write!(f, "the high dword changed on each of {reads} attempts, so no consistent value could be read; freeze the box (its box control's freeze bit) and read again")?,
                    AccessError::Os => f.write_str("the operating system reported an unexpected error (in parentheses); `dmesg` may show the driver's reason")?,
                }
                if let Some(e) = source {
                    write!(f, " ({e})")?;
                }
                Ok(())
            }
            Error::AddressUnknown { register, reason } => write!(f, "{register} cannot be accessed: its address is unknown ({reason}); the tool does not guess addresses, so read the registers it summarises instead"),
            Error::NoUncoreDevices { root, looked_for } => write!(
                f,
                "no uncore PCI devices found under {}; looked for {}. This machine may not be the processor the registers belong to, or it is a virtual machine that exposes none; pass --root to use another tree",
                root.display(),
                looked_for.join(", ")
            ),
            Error::DeviceNotFound { register, socket, device } => write!(f, "{register}: device {device} was not found on socket {socket}; check that the device is listed by `lspci -d 8086:` and that its socket's uncore bus is visible"),
            Error::NoCpuForSocket { socket, present } => write!(
                f,
                "socket {socket} has no online CPU to reach its uncore MSRs through (sockets present: {}); bring one of its CPUs online or choose another socket",
                present.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
            ),
            Error::Topology { path, problem } => write!(f, "cannot read the CPU topology at {}: {problem}", path.display()),
            Error::UnknownRegister { name, suggestions } => {
                write!(f, "no register is called {name}")?;
                if suggestions.is_empty() {
                    f.write_str("; `pmu list` shows every register")
                } else {
                    write!(f, "; did you mean {}?", suggestions.join(", "))
                }
            }
            Error::Sim(msg) => f.write_str(msg),
            Error::Cleanup { error, cleanup } => write!(f, "{error}; putting the registers back also failed: {cleanup}; check them with `pmu read` before counting again"),
            Error::UnknownField { register, field, suggestions, fields } => {
                write!(f, "{register} has no field {field}")?;
                if suggestions.is_empty() {
                    write!(f, "; its fields are: {fields}")
                } else {
                    write!(f, "; did you mean {}?", suggestions.join(", "))
                }
            }
            Error::ReadOnlyField { register, field, access } => write!(f, "{register}.{field} is {access} (read-only) and cannot be set; leave it out"),
            Error::BadValue { text, expected } => write!(f, "`{text}` is not valid here: expected {expected}"),
            Error::NeedsInstance { name, instances } => write!(f, "{name} names a register layout, not one register; name an instance: {instances}"),
            Error::UnsupportedField { register, field } => write!(f, "{register} has no {field} field; this box cannot take that setting, so leave it out"),
            Error::FieldTooWide(e) => write!(f, "{e}"),
            Error::NoSuchCounter { counter, available } => write!(f, "there is no {counter}; available: {available}"),
            Error::BadInterval { n, max } => write!(f, "a sample interval of {n} events cannot be counted; choose 1 to {max}"),
            Error::NotFrozen { reason } => write!(f, "no frozen sample to read: {reason}"),
            Error::InUse { counter, holder } => write!(f, "{counter} is already in use ({holder}); leave it to its owner, or force the takeover"),
            Error::Perf(e) => e.fmt(f),
            Error::NotRepresentable { counter, value, width } => write!(f, "{value:#x} cannot be written to {counter}: without full-width writes (IA32_PERF_CAPABILITIES.FW_WRITE) a write stores the sign extension of bits 31:0, which cannot produce this {width}-bit value; write a value whose bits {}:31 are all equal, or use the full-width alias (IA32_A_PMCx) where FW_WRITE is 1", width - 1),
        }
    }
}

impl From<crate::perf::PerfError> for Error {
    fn from(e: crate::perf::PerfError) -> Self {
        Error::Perf(e)
    }
}

impl From<pmu_regs::FieldTooWide> for Error {
    fn from(e: pmu_regs::FieldTooWide) -> Self {
        Error::FieldTooWide(e)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Access {
                source: Some(e), ..
            } => Some(e),
            Error::Perf(e) => e.source(),
            _ => None,
        }
    }
}

/// Result with the runtime's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
