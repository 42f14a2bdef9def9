//! The backend traits (raw 64-bit MSRs, 32-bit PCI config dwords, memory-mapped registers,
//! and a register space of a backend's own) and the typed layer over them that takes the
//! generated register types and addresses.
//!
//! A typed access is bound to a place first: [`OnCpu`] for MSRs, [`OnDevice`] for PCI
//! registers. Their methods accept only the matching address type, so passing a PCI register
//! where an MSR is expected does not compile.

use pmu_regs::{AddressInfo, Location, Msr, PciRegister, Register, RegisterInfo};

mod bdf;
mod devices;
mod error;
mod space;
mod summary;
pub mod topology;
mod windows;

pub use bdf::{BadBdf, Bdf};
pub use devices::{wanted_devices, SocketDevices, UncoreDevices, INTEL_VENDOR_ID};
pub use error::{AccessError, BackendError, Op, Target};
pub use space::{RegisterSpace, SpaceError};
pub use summary::UncoreSummary;
pub use topology::Topology;
pub use windows::{place_of, register_address, unit_window, window_base};

/// The result of a backend operation.
pub type BackendResult<T, E = BackendError> = std::result::Result<T, E>;

/// Raw MSR access: 64-bit values by CPU and MSR number.
pub trait MsrAccess: Send + Sync {
    /// Reads MSR `address` on logical CPU `cpu`.
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64>;
    /// Writes MSR `address` on logical CPU `cpu`.
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()>;
}

/// Raw PCI configuration-space access: 32-bit dwords by device and offset.
pub trait PciAccess: Send + Sync {
    /// Reads the dword at `offset` (a multiple of 4).
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32>;
    /// Writes the dword at `offset` (a multiple of 4).
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()>;
}

/// Raw memory-mapped register access by physical address: 32- or 64-bit, naturally aligned.
///
/// The uncore's memory-mapped registers (Ice Lake-SP's iMC, the discovery tables from Sapphire
/// Rapids on) sit in windows whose base the part publishes in PCI configuration registers; a
/// backend maps what it is asked for and refuses any other width or a misaligned address.
pub trait MmioAccess: Send + Sync {
    /// Reads `width` bits (32 or 64) at physical address `address`.
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64>;
    /// Writes `width` bits (32 or 64) at physical address `address`.
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()>;
}

impl<T: MmioAccess + ?Sized> MmioAccess for &T {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        (**self).read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        (**self).write_mmio(address, width, value)
    }
}

impl<T: MsrAccess + ?Sized> MsrAccess for &T {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        (**self).read_msr(cpu, address)
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        (**self).write_msr(cpu, address, value)
    }
}

impl<T: PciAccess + ?Sized> PciAccess for &T {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        (**self).read_dword(bdf, offset)
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        (**self).write_dword(bdf, offset, value)
    }
}

/// Checks a raw value before it is written to a register of layout `R`: it must fit, set no
/// reserved bit, and the register must have something writable.
fn check_write<R: Register>(op_target: Target, raw: u64) -> BackendResult<()> {
    check_write_info(R::INFO, op_target, raw)
}

/// [`check_write`] for a register known only by its metadata.
pub(crate) fn check_write_info(
    info: &RegisterInfo,
    op_target: Target,
    raw: u64,
) -> BackendResult<()> {
    // The caller names the register instance (`W_MSR_PMON_EVT_SEL2`), not the layout.
    let refuse = |kind| Err(BackendError::access(Op::Write, op_target, kind));
    if info.writable_mask == 0 {
        return refuse(AccessError::ReadOnly);
    }
    if info.width < 64 && raw >> info.width != 0 {
        return refuse(AccessError::TooWide {
            value: raw,
            width: info.width,
        });
    }
    let bits = raw & info.reserved_mask;
    if bits != 0 {
        return refuse(AccessError::ReservedBits { value: raw, bits });
    }
    Ok(())
}

/// Typed MSR access on one CPU.
#[derive(Clone, Copy)]
pub struct OnCpu<'a, B: MsrAccess + ?Sized> {
    backend: &'a B,
    cpu: u32,
}

impl<'a, B: MsrAccess + ?Sized> OnCpu<'a, B> {
    /// Binds `backend` to logical CPU `cpu`.
    pub fn new(backend: &'a B, cpu: u32) -> Self {
        Self { backend, cpu }
    }

    /// The CPU.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Reads a register. Reserved bits the hardware returns are dropped (see
    /// [`Register::from_raw`]); use [`Self::read_raw`] to see them.
    pub fn read<R: Register>(&self, reg: Msr<R>) -> BackendResult<R> {
        self.read_raw(reg).map(R::from_raw)
    }

    /// Reads a register's raw 64 bits.
    pub fn read_raw<R: Register>(&self, reg: Msr<R>) -> BackendResult<u64> {
        self.backend
            .read_msr(self.cpu, reg.address())
            .map_err(|e| e.with_register(reg.name()))
    }

    /// Writes a register. Refused, before anything is written, if the register is read-only.
    pub fn write<R: Register>(&self, reg: Msr<R>, value: R) -> BackendResult<()> {
        self.write_raw(reg, value.to_raw())
    }

    /// Writes raw bits. Refused, before anything is written, if they set a reserved bit, do not
    /// fit, or the register is read-only.
    pub fn write_raw<R: Register>(&self, reg: Msr<R>, raw: u64) -> BackendResult<()> {
        check_write::<R>(
            Target::Msr {
                cpu: self.cpu,
                address: reg.address(),
            },
            raw,
        )
        .map_err(|e| e.with_register(reg.name()))?;
        self.backend
            .write_msr(self.cpu, reg.address(), raw)
            .map_err(|e| e.with_register(reg.name()))
    }

    /// Read-modify-write. Reserved bits read back are cleared before `f` sees the value, so
    /// they are never written back. Returns the value written.
    pub fn modify<R: Register>(&self, reg: Msr<R>, f: impl FnOnce(R) -> R) -> BackendResult<R> {
        let new = f(self.read(reg)?);
        self.write(reg, new)?;
        Ok(new)
    }
}

/// Typed PCI configuration-space access on one device.
#[derive(Clone, Copy)]
pub struct OnDevice<'a, B: PciAccess + ?Sized> {
    backend: &'a B,
    bdf: Bdf,
}

/// How many times a 64-bit read retries when the high dword changes under it.
const TEAR_RETRIES: usize = 8;

impl<'a, B: PciAccess + ?Sized> OnDevice<'a, B> {
    /// Binds `backend` to device `bdf`.
    pub fn new(backend: &'a B, bdf: Bdf) -> Self {
        Self { backend, bdf }
    }

    /// The device.
    pub fn bdf(&self) -> Bdf {
        self.bdf
    }

    /// Reads a register (reserved bits dropped; see [`Register::from_raw`]).
    pub fn read<R: Register>(&self, reg: PciRegister<R>) -> BackendResult<R> {
        self.read_raw(reg).map(R::from_raw)
    }

    /// Reads a register's raw bits. A 64-bit register (a 48-bit counter in two dwords) is read
    /// high, low, high again, and retried if the high half moved, so a carry between the two
    /// halves cannot produce a torn value.
    pub fn read_raw<R: Register>(&self, reg: PciRegister<R>) -> BackendResult<u64> {
        read_pci_raw(
            self.backend,
            self.bdf,
            reg.offset(),
            R::INFO.width,
            reg.name(),
        )
    }

    /// Writes a register, refusing read-only registers.
    pub fn write<R: Register>(&self, reg: PciRegister<R>, value: R) -> BackendResult<()> {
        self.write_raw(reg, value.to_raw())
    }

    /// Writes raw bits, refusing reserved bits, too-wide values and read-only registers before
    /// anything is written. A 64-bit register is written low dword first.
    pub fn write_raw<R: Register>(&self, reg: PciRegister<R>, raw: u64) -> BackendResult<()> {
        let name = reg.name();
        let off = reg.offset();
        check_write::<R>(
            Target::Pci {
                bdf: self.bdf,
                offset: off,
            },
            raw,
        )
        .map_err(|e| e.with_register(name))?;
        write_pci_dwords(self.backend, self.bdf, off, R::INFO.width, name, raw)
    }

    /// Read-modify-write; reserved bits are never written back. Returns the value written.
    pub fn modify<R: Register>(
        &self,
        reg: PciRegister<R>,
        f: impl FnOnce(R) -> R,
    ) -> BackendResult<R> {
        let new = f(self.read(reg)?);
        self.write(reg, new)?;
        Ok(new)
    }
}

/// Reads a `width`-bit register at `offset`: one dword, or for 64 bits (a 48-bit counter in
/// two dwords) high, low, high again, retried if the high half moved, so that a carry between
/// the halves cannot produce a torn value.
pub(crate) fn read_pci_raw<B: PciAccess + ?Sized>(
    backend: &B,
    bdf: Bdf,
    off: u16,
    width: u32,
    name: &'static str,
) -> BackendResult<u64> {
    let dword = |o: u16| {
        backend
            .read_dword(bdf, o)
            .map_err(|e| e.with_register(name))
    };
    if width == 32 {
        return dword(off).map(u64::from);
    }
    let mut high = dword(off + 4)?;
    for _ in 0..TEAR_RETRIES {
        let low = dword(off)?;
        let again = dword(off + 4)?;
        if again == high {
            return Ok((u64::from(high) << 32) | u64::from(low));
        }
        high = again;
    }
    // Still moving after several tries: a 48-bit counter cannot advance by 2^32 between two
    // reads, so report it rather than return a torn value.
    Err(BackendError::access(
        Op::Read,
        Target::Pci { bdf, offset: off },
        AccessError::Unstable {
            reads: TEAR_RETRIES,
        },
    )
    .with_register(name))
}

/// Writes a 32- or 64-bit PCI register. A 64-bit register (a counter in two dwords) is written
/// low dword first; if the high dword then fails, the low dword is put back as it was, so a
/// failure never leaves half of a new value behind.
pub(crate) fn write_pci_dwords<B: PciAccess + ?Sized>(
    backend: &B,
    bdf: Bdf,
    off: u16,
    width: u32,
    name: &'static str,
    raw: u64,
) -> BackendResult<()> {
    if width == 32 {
        return backend
            .write_dword(bdf, off, raw as u32)
            .map_err(|e| e.with_register(name));
    }
    let old_low = backend
        .read_dword(bdf, off)
        .map_err(|e| e.with_register(name))?;
    backend
        .write_dword(bdf, off, raw as u32)
        .map_err(|e| e.with_register(name))?;
    if let Err(e) = backend.write_dword(bdf, off + 4, (raw >> 32) as u32) {
        let e = e.with_register(name);
        return match backend.write_dword(bdf, off, old_low) {
            Ok(()) => Err(e),
            Err(undo) => Err(BackendError::Unwound {
                error: Box::new(e),
                cleanup: Box::new(undo.with_register(name)),
            }),
        };
    }
    Ok(())
}

/// `backend.on_cpu(3).read(REG)`: binds any MSR backend to a CPU.
pub trait MsrAccessExt: MsrAccess {
    /// Typed access to this backend's MSRs on `cpu`.
    fn on_cpu(&self, cpu: u32) -> OnCpu<'_, Self> {
        OnCpu::new(self, cpu)
    }
}
impl<T: MsrAccess + ?Sized> MsrAccessExt for T {}

/// `backend.on_device(bdf).read(REG)`: binds any PCI backend to a device.
pub trait PciAccessExt: PciAccess {
    /// Typed access to this backend's PCI config space of `bdf`.
    fn on_device(&self, bdf: Bdf) -> OnDevice<'_, Self> {
        OnDevice::new(self, bdf)
    }
}
impl<T: PciAccess + ?Sized> PciAccessExt for T {}

/// Where one register instance is reached on a machine: the CPU for an MSR, the device for a
/// PCI register, the physical address for a memory-mapped one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// Through this logical CPU.
    Cpu(u32),
    /// In this device's configuration space.
    Device(Bdf),
    /// At this physical address (its window's base, read from PCI config space, plus the
    /// register's offset: [`register_address`]).
    Mmio(u64),
}

/// Why no backend reads or writes an Arm system register: `mrs`/`msr` run on the CPU itself,
/// and the kernel lets user space read at most the counters it exposes
/// (`perf_user_access`); the way to them is the kernel's perf PMU (`armv8_pmuv3_0`).
pub const SYSREG_NOT_RAW: &str = "the kernel's perf PMU (it is an Arm system register: only code \
     on the CPU reaches it with mrs/msr, and user space at most reads the counters the kernel \
     exposes; use pmu encode --perf, or watch --backend perf)";

fn place_mismatch(addr: &AddressInfo) -> BackendError {
    BackendError::Misplaced {
        register: addr.name,
        needs: match addr.location {
            Location::Msr(_) => "a CPU (it is an MSR)",
            Location::Pci { .. } => "a PCI device (it is in PCI config space)",
            Location::Mmio { .. } => "a physical address (it is a memory-mapped register)",
            Location::Table(_) => {
                "the discovery reader (it is at an offset in a table found at run time: pmu discover)"
            }
            Location::SysReg(_) => SYSREG_NOT_RAW,
        },
    }
}

/// Reads a register instance known only by its metadata (what tools that take register names
/// use); 64-bit PCI registers are read tear-free, memory-mapped ones in one access.
pub fn read_by_info<B: MsrAccess + PciAccess + MmioAccess + ?Sized>(
    backend: &B,
    info: &RegisterInfo,
    addr: &'static AddressInfo,
    place: Site,
) -> BackendResult<u64> {
    match (addr.location, place) {
        (Location::Msr(a), Site::Cpu(cpu)) => backend
            .read_msr(cpu, a)
            .map_err(|e| e.with_register(addr.name)),
        (Location::Pci { offset, .. }, Site::Device(bdf)) => {
            read_pci_raw(backend, bdf, offset, info.width, addr.name)
        }
        (Location::Mmio { .. }, Site::Mmio(a)) => backend
            .read_mmio(a, info.width)
            .map_err(|e| e.with_register(addr.name)),
        _ => Err(place_mismatch(addr)),
    }
}

/// The checks [`write_by_info`] makes before anything is written (read-only register, value
/// too wide, reserved bits), for tools that refuse a value before touching the machine.
pub fn check_by_info(
    info: &RegisterInfo,
    addr: &'static AddressInfo,
    place: Site,
    raw: u64,
) -> BackendResult<()> {
    let target = match (addr.location, place) {
        (Location::Msr(a), Site::Cpu(cpu)) => Target::Msr { cpu, address: a },
        (Location::Pci { offset, .. }, Site::Device(bdf)) => Target::Pci { bdf, offset },
        (Location::Mmio { .. }, Site::Mmio(address)) => Target::Mmio { address },
        _ => return Err(place_mismatch(addr)),
    };
    check_write_info(info, target, raw).map_err(|e| e.with_register(addr.name))
}

/// Writes a register instance known only by its metadata, with the typed layer's checks
/// (read-only register, value too wide, reserved bits) made before anything is written.
pub fn write_by_info<B: MsrAccess + PciAccess + MmioAccess + ?Sized>(
    backend: &B,
    info: &RegisterInfo,
    addr: &'static AddressInfo,
    place: Site,
    raw: u64,
) -> BackendResult<()> {
    let name = addr.name;
    match (addr.location, place) {
        (Location::Msr(a), Site::Cpu(cpu)) => {
            check_write_info(info, Target::Msr { cpu, address: a }, raw)
                .map_err(|e| e.with_register(name))?;
            backend
                .write_msr(cpu, a, raw)
                .map_err(|e| e.with_register(name))
        }
        (Location::Pci { offset, .. }, Site::Device(bdf)) => {
            check_write_info(info, Target::Pci { bdf, offset }, raw)
                .map_err(|e| e.with_register(name))?;
            // The same two-dword write as the typed layer: never half a value left behind.
            write_pci_dwords(backend, bdf, offset, info.width, name, raw)
        }
        (Location::Mmio { .. }, Site::Mmio(address)) => {
            check_write_info(info, Target::Mmio { address }, raw)
                .map_err(|e| e.with_register(name))?;
            backend
                .write_mmio(address, info.width, raw)
                .map_err(|e| e.with_register(name))
        }
        _ => Err(place_mismatch(addr)),
    }
}
