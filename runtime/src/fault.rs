//! A backend wrapper that fails the Nth read or write with a chosen OS error, for testing that
//! every path reports the failure precisely and leaves nothing half-programmed.
//!
//! ```
//! use pmu_runtime::fault::{Fault, Faulty, When};
//! use pmu_runtime::sim::Sim;
//! use pmu_runtime::MsrAccess;
//!
//! let sim = Sim::new(Default::default());
//! let faulty = Faulty::new(&sim, When::Write(1), Fault::Eio);
//! assert!(faulty.write_msr(0, 0xC90, 1).is_err()); // the first write fails
//! assert!(faulty.write_msr(0, 0xC90, 1).is_ok());  // later ones pass through
//! ```

use std::io;
use std::sync::Mutex;

use crate::access::{
    AccessError, BackendError, BackendResult, Bdf, MmioAccess, MsrAccess, Op, PciAccess,
    RegisterSpace, SpaceError, Target, UncoreSummary,
};
use crate::error::UsageError;
use crate::ownership::{Lease, Ownership, Pmu};

/// Which access fails (1-based, counted per kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// The nth read.
    Read(usize),
    /// The nth write.
    Write(usize),
    /// Every write from the nth on (so that undoing a failure fails too).
    WritesFrom(usize),
    /// No access: a pass-through.
    Never,
}

/// How it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `EIO`: the MSR driver's answer to a #GP.
    Eio,
    /// `EACCES`: no permission.
    Eacces,
    /// `ENOENT`: the device file is gone.
    Enoent,
    /// A transfer that moved fewer bytes than asked.
    Short,
}

impl Fault {
    /// Every kind, for tests that try them all.
    pub const ALL: [Fault; 4] = [Fault::Eio, Fault::Eacces, Fault::Enoent, Fault::Short];

    /// The fault as a register space's error: the OS error, saying which access failed.
    fn space_error(self, op: Op, space: &str, address: u64) -> SpaceError {
        let code = match self {
            Fault::Eio => 5,
            Fault::Eacces => 13,
            Fault::Enoent => 2,
            Fault::Short => {
                return format!("{op} of {space} register {address:#x}: a short transfer").into()
            }
        };
        let os = io::Error::from_raw_os_error(code);
        io::Error::new(
            os.kind(),
            format!("{op} of {space} register {address:#x}: {os}"),
        )
        .into()
    }

    fn error(self, op: Op, target: Target) -> BackendError {
        // The file the real backend would have used, so messages read as they would on a
        // machine; the fault itself is announced where it is requested.
        let path = match target {
            Target::Msr { cpu, .. } => format!("/dev/cpu/{cpu}/msr"),
            Target::Pci { bdf, .. } => format!("/sys/bus/pci/devices/{bdf}/config"),
            Target::Mmio { .. } => "/dev/mem".to_string(),
        };
        let os = |code| {
            BackendError::from_io(
                op,
                target,
                path.clone().into(),
                io::Error::from_raw_os_error(code),
            )
        };
        match self {
            Fault::Eio => os(5),
            Fault::Eacces => os(13),
            Fault::Enoent => os(2),
            Fault::Short => {
                // MSRs move 8 bytes at a time, PCI config space 4.
                let wanted = match target {
                    Target::Msr { .. } => 8,
                    Target::Pci { .. } => 4,
                    Target::Mmio { .. } => 8,
                };
                BackendError::access(op, target, AccessError::Short { done: 3, wanted })
            }
        }
    }
}

/// Parses `read:N:KIND`, `write:N:KIND` or `writes-from:N:KIND`, KIND one of `eio`,
/// `eacces`, `enoent`, `short` (the `pmu --sim-fault` syntax).
pub fn parse(text: &str) -> std::result::Result<(When, Fault), UsageError> {
    let bad = || UsageError::BadValue {
        text: text.to_string(),
        expected: "read:N:KIND, write:N:KIND or writes-from:N:KIND with N >= 1 and KIND one of \
                   eio, eacces, enoent, short (e.g. write:3:eio)"
            .into(),
    };
    let mut parts = text.split(':');
    let (Some(op), Some(n), Some(kind), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let n: usize = n.parse().ok().filter(|&n| n >= 1).ok_or_else(bad)?;
    let when = match op {
        "read" => When::Read(n),
        "write" => When::Write(n),
        "writes-from" => When::WritesFrom(n),
        _ => return Err(bad()),
    };
    let fault = match kind {
        "eio" => Fault::Eio,
        "eacces" => Fault::Eacces,
        "enoent" => Fault::Enoent,
        "short" => Fault::Short,
        _ => return Err(bad()),
    };
    Ok((when, fault))
}

/// `inner` with one access made to fail.
pub struct Faulty<B> {
    inner: B,
    when: When,
    fault: Fault,
    counts: Mutex<(usize, usize)>,
}

impl<B> Faulty<B> {
    /// Wraps `inner` so that the access `when` fails with `fault`.
    pub fn new(inner: B, when: When, fault: Fault) -> Self {
        Self {
            inner,
            when,
            fault,
            counts: Mutex::new((0, 0)),
        }
    }

    /// Counts an access; true if this is the one to fail.
    fn trips(&self, op: Op) -> bool {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        match op {
            Op::Read => {
                c.0 += 1;
                self.when == When::Read(c.0)
            }
            Op::Write => {
                c.1 += 1;
                match self.when {
                    When::Write(n) => n == c.1,
                    When::WritesFrom(n) => c.1 >= n,
                    When::Read(_) | When::Never => false,
                }
            }
        }
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// The wrapped backend, mutably.
    pub fn inner_mut(&mut self) -> &mut B {
        &mut self.inner
    }

    /// The wrapped backend, unwrapped.
    pub fn into_inner(self) -> B {
        self.inner
    }

    /// (reads, writes) seen so far.
    pub fn counts(&self) -> (usize, usize) {
        *self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<B: MsrAccess> MsrAccess for Faulty<B> {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        if self.trips(Op::Read) {
            return Err(self.fault.error(Op::Read, Target::Msr { cpu, address }));
        }
        self.inner.read_msr(cpu, address)
    }

    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        if self.trips(Op::Write) {
            return Err(self.fault.error(Op::Write, Target::Msr { cpu, address }));
        }
        self.inner.write_msr(cpu, address, value)
    }
}

impl<B: PciAccess> PciAccess for Faulty<B> {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        if self.trips(Op::Read) {
            return Err(self.fault.error(Op::Read, Target::Pci { bdf, offset }));
        }
        self.inner.read_dword(bdf, offset)
    }

    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        if self.trips(Op::Write) {
            return Err(self.fault.error(Op::Write, Target::Pci { bdf, offset }));
        }
        self.inner.write_dword(bdf, offset, value)
    }
}

impl<B: MmioAccess> MmioAccess for Faulty<B> {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        if self.trips(Op::Read) {
            return Err(self.fault.error(Op::Read, Target::Mmio { address }));
        }
        self.inner.read_mmio(address, width)
    }

    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        if self.trips(Op::Write) {
            return Err(self.fault.error(Op::Write, Target::Mmio { address }));
        }
        self.inner.write_mmio(address, width, value)
    }
}

/// A register space of a backend's own fails with the OS error of the fault, its own error
/// type being the space's: an injected fault is an `io::Error`.
impl<B: RegisterSpace> RegisterSpace for Faulty<B> {
    fn space(&self) -> &'static str {
        self.inner.space()
    }

    fn read_register(&self, place: u32, address: u64) -> std::result::Result<u64, SpaceError> {
        if self.trips(Op::Read) {
            return Err(self
                .fault
                .space_error(Op::Read, self.inner.space(), address));
        }
        self.inner.read_register(place, address)
    }

    fn write_register(
        &self,
        place: u32,
        address: u64,
        value: u64,
    ) -> std::result::Result<(), SpaceError> {
        if self.trips(Op::Write) {
            return Err(self
                .fault
                .space_error(Op::Write, self.inner.space(), address));
        }
        self.inner.write_register(place, address, value)
    }
}

impl<B: UncoreSummary> UncoreSummary for Faulty<B> {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        self.inner.global_pmi(socket)
    }
    fn hidden_bit(&self, socket: usize, bit: &pmu_regs::BitRef) -> Option<bool> {
        self.inner.hidden_bit(socket, bit)
    }
    fn acknowledge_pmi(&self, socket: usize) {
        self.inner.acknowledge_pmi(socket)
    }
}

impl<B: Ownership> Ownership for Faulty<B> {
    fn claim(&self, pmu: &Pmu) -> crate::error::Result<Lease> {
        self.inner.claim(pmu)
    }
    fn takes_over(&self) -> bool {
        self.inner.takes_over()
    }
}
