//! The backend layer's error: an access that failed (where, which register, what the OS or
//! the processor said), and the discovery of where registers live (devices, sockets).

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::Bdf;

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
    /// A memory-mapped register at a physical address.
    Mmio {
        /// Physical address.
        address: u64,
    },
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Msr { cpu, address } => write!(f, "MSR {address:#X} on CPU {cpu}"),
            Target::Pci { bdf, offset } => write!(f, "PCI {bdf} offset {offset:#X}"),
            Target::Mmio { address } => write!(f, "MMIO {address:#X}"),
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
    /// A memory-mapped access of a width other than 32 or 64 bits; nothing was accessed.
    BadWidth {
        /// The width asked for, in bits.
        width: u32,
    },
    /// A memory-mapped access not aligned to its width; nothing was accessed.
    Misaligned {
        /// The access's size in bytes.
        bytes: u32,
    },
    /// The file that maps physical memory (`/dev/mem`) does not exist.
    NoMemDevice {
        /// The path that was opened.
        path: PathBuf,
    },
    /// The kernel refused to map the physical range (`CONFIG_STRICT_DEVMEM`, lockdown).
    MapRefused {
        /// The file mapped.
        path: PathBuf,
    },
    /// Any other OS error.
    Os,
}

/// An error of the backend layer: reaching a register, or finding where it is.
#[derive(Debug)]
pub enum BackendError {
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
    /// A write of two dwords failed half-way, and putting the first dword back failed too.
    Unwound {
        /// What failed first.
        error: Box<BackendError>,
        /// What failed while undoing it.
        cleanup: Box<BackendError>,
    },
    /// A register was addressed through the wrong kind of place (an MSR through a PCI
    /// device, or a PCI register through a CPU).
    Misplaced {
        /// The register instance.
        register: &'static str,
        /// What it needs: "a CPU (it is an MSR)".
        needs: &'static str,
    },
    /// No source gives this register's address, so it cannot be accessed.
    AddressUnknown {
        /// The register.
        register: &'static str,
        /// Why the address is unknown.
        reason: &'static str,
    },
    /// The part's uncore discovery table places this register (the spec's `<from-table>`): it
    /// has no fixed address to read by name.
    TablePlaced {
        /// The register.
        register: &'static str,
    },
    /// None of the uncore PCI devices the spec names was found.
    NoUncoreDevices {
        /// The directory searched.
        root: PathBuf,
        /// What was looked for: "8086:3c46 (HA, dev 14 fn 1)".
        looked_for: Vec<String>,
    },
    /// Which socket owns an uncore PCI bus could not be told from the node-id registers the
    /// spec names (`<socket-bus>`): the map read is inconsistent or a bus has no owner.
    BusOwner {
        /// The bus (`0000:3f`).
        bus: String,
        /// What was read and why it does not name one socket.
        problem: String,
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
}

impl BackendError {
    /// An access error without an OS error behind it.
    pub fn access(op: Op, target: Target, kind: AccessError) -> Self {
        BackendError::Access {
            op,
            target,
            register: None,
            kind,
            source: None,
        }
    }

    /// Classifies an OS error from opening or transferring.
    pub fn from_io(op: Op, target: Target, path: PathBuf, e: io::Error) -> Self {
        let kind = match (e.kind(), e.raw_os_error(), target) {
            (io::ErrorKind::NotFound, _, Target::Msr { .. }) => AccessError::NoMsrDevice { path },
            (io::ErrorKind::NotFound, _, Target::Pci { .. }) => AccessError::NoPciDevice { path },
            (io::ErrorKind::NotFound, _, Target::Mmio { .. }) => AccessError::NoMemDevice { path },
            (io::ErrorKind::PermissionDenied, _, _) => AccessError::PermissionDenied { path },
            (_, Some(5), _) => AccessError::Rejected, // EIO
            _ => AccessError::Os,
        };
        BackendError::Access {
            op,
            target,
            register: None,
            kind,
            source: Some(e),
        }
    }

    /// Names the register an access error concerns.
    pub fn with_register(mut self, name: &'static str) -> Self {
        if let BackendError::Access { register, .. } = &mut self {
            register.get_or_insert(name);
        }
        self
    }

    /// The access error kind, if this is an access error.
    pub fn access_kind(&self) -> Option<&AccessError> {
        match self {
            BackendError::Access { kind, .. } => Some(kind),
            _ => None,
        }
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Access {
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
                            Target::Pci { .. } | Target::Mmio { .. } => 0,
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
                    AccessError::BadWidth { width } => write!(f, "a memory-mapped register is read and written 32 or 64 bits at a time, not {width}; nothing was accessed")?,
                    AccessError::Misaligned { bytes } => write!(f, "the address is not a multiple of {bytes}, the access's size; nothing was accessed (memory-mapped registers are naturally aligned)")?,
                    AccessError::NoMemDevice { path } => write!(f, "{} does not exist; memory-mapped registers are reached through it (a kernel built without CONFIG_DEVMEM has none)", path.display())?,
                    AccessError::MapRefused { path } => write!(f, "the kernel refused to map this range of {}: run as root (CAP_SYS_RAWIO), and check that the kernel is not locked down (/sys/kernel/security/lockdown) and allows the range (CONFIG_STRICT_DEVMEM: boot with iomem=relaxed); `dmesg` names the refusal", path.display())?,
                    AccessError::Os => f.write_str("the operating system reported an unexpected error (in parentheses); `dmesg` may show the driver's reason")?,
                }
                if let Some(e) = source {
                    write!(f, " ({e})")?;
                }
                Ok(())
            }
            BackendError::Unwound { error, cleanup } => write!(f, "{error}; putting the first dword back also failed: {cleanup}; the register may hold half of the new value, so check it with `pmu read` before counting again"),
            BackendError::Misplaced { register, needs } => write!(f, "{register} cannot be reached there: it needs {needs}"),
            BackendError::TablePlaced { register } => write!(f, "{register} has no fixed address: the part's uncore discovery table places it; `pmu discover` shows where on this part, and a session (`pmu watch`) counts its box there"),
            BackendError::AddressUnknown { register, reason } => write!(f, "{register} cannot be accessed: its address is unknown ({reason}); the tool does not guess addresses, so read the registers it summarises instead"),
            BackendError::NoUncoreDevices { root, looked_for } => write!(
                f,
                "no uncore PCI devices found under {}; looked for {}. This machine may not be the processor the registers belong to, or it is a virtual machine that exposes none; pass --root to use another tree",
                root.display(),
                looked_for.join(", ")
            ),
            BackendError::BusOwner { bus, problem } => write!(f, "cannot tell which socket owns PCI bus {bus}: {problem}; check the node-id registers with `setpci -s <bus>:<dev>.<fn> <offset>.L` and, on a machine with more than eight NUMA nodes, use --backend perf, whose kernel driver reads the owner from the firmware's tables"),
            BackendError::DeviceNotFound { register, socket, device } => write!(f, "{register}: device {device} was not found on socket {socket}; check that the device is listed by `lspci -d 8086:` and that its socket's uncore bus is visible"),
            BackendError::NoCpuForSocket { socket, present } => write!(
                f,
                "socket {socket} has no online CPU to reach its uncore MSRs through (sockets present: {}); bring one of its CPUs online or choose another socket",
                present.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
            ),
            BackendError::Topology { path, problem } => write!(f, "cannot read the CPU topology at {}: {problem}", path.display()),
        }
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BackendError::Access {
                source: Some(e), ..
            } => Some(e),
            // The message names both failures; the chain continues with the first one's cause.
            BackendError::Unwound { error, .. } => error.source(),
            _ => None,
        }
    }
}
