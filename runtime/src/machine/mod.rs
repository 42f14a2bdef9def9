//! The machine a tool works on, whatever reaches its registers (real hardware under a
//! configurable root, the simulator, or any backend registered through the open seam
//! [`MachineBackend`]), and where on it a register instance lives. Command lines parse
//! `--cpu`, `--socket` and `--device` into a [`Where`]; everything after that is here.
//!
//! ```
//! use pmu_runtime::machine::{Machine, Where};
//! use pmu_runtime::sim::SimConfig;
//!
//! let machine = Machine::simulated(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR));
//! let reg = machine.resolve("HA_PCI_PMON_CTR0", &Where { socket: Some(1), ..Where::default() })?;
//! machine.write(&reg, 0x1_0000_0002)?;           // both dwords, or neither
//! assert_eq!(machine.read(&reg)?, 0x1_0000_0002);
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

use std::path::PathBuf;

use pmu_regs::{AddressInfo, Addresses, Location, ProcessorInfo, RegisterInfo, PROCESSORS};

use crate::access::{
    check_by_info, read_by_info, write_by_info, BackendError, BackendResult, Bdf, MmioAccess,
    MsrAccess, PciAccess, RegisterSpace, Site, Topology, UncoreDevices, UncoreSummary,
};
use crate::error::{Result, UsageError};
use crate::fault::{Fault, Faulty, When};
use crate::lookup;
use crate::ownership::{Lease, Ownership, Pmu};
use crate::sim::{Sim, SimConfig};

mod hardware;
mod seam;
mod simulated;

pub use crate::sim::workloads::list_workloads;
pub use crate::sim::{
    default_workload, workload_named, NamedWorkload, DEFAULT_WORKLOAD, WORKLOADS,
};
pub use crate::sim::{Rate, StreamId, SLOTS_PER_EVENT};
pub use hardware::FileTrees;
use seam::Seam;
pub use seam::{DiscoveryTables, MachineBackend, TableAccess, Workload};

/// Where the user asked a register to be reached: all optional, as on a command line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Where {
    /// The logical CPU, for an MSR.
    pub cpu: Option<u32>,
    /// The socket: a CPU of it for an MSR, its uncore device for a PCI register.
    pub socket: Option<u32>,
    /// The PCI device, for a PCI register.
    pub device: Option<Bdf>,
}

/// A register instance and the place it is reached at on this machine.
#[derive(Debug, Clone, Copy)]
pub struct Resolved {
    /// The register's layout.
    pub info: &'static RegisterInfo,
    /// The instance.
    pub address: &'static AddressInfo,
    /// The CPU or device it is reached through.
    pub place: Site,
}

/// What reaches the registers (a [`MachineBackend`]: the hardware's file trees, the
/// simulator, or one registered with [`Machine::with_backend`]), behind a fault injector
/// that passes every access through unless [`Machine::with_fault`] names one to fail.
pub struct Machine {
    backend: Faulty<Seam>,
    /// Whether sessions take counters they find enabled ([`Machine::taking_over`]).
    take_over: bool,
}

impl Machine {
    /// A machine whose registers `backend` reaches: how a backend is registered.
    pub fn with_backend(backend: impl MachineBackend) -> Self {
        Machine {
            backend: Faulty::new(Seam(Box::new(backend)), When::Never, Fault::Eio),
            take_over: false,
        }
    }

    /// The hardware under `root` (`/` for the real one): `root/dev/cpu/N/msr`,
    /// `root/sys/bus/pci/devices`, `root/dev/mem` (memory-mapped registers),
    /// `root/sys/devices/system/cpu`. Sessions lock PMUs in
    /// [`crate::ownership::default_runtime_dir`] for the real root, else in
    /// `root/run/pmu-regs`.
    pub fn hardware(root: impl Into<PathBuf>) -> Self {
        Self::with_backend(FileTrees::under(&root.into()))
    }

    /// How many elements of a register array the part implements, as the CPUID bits its
    /// spec's `count-cpuid` names say (`0AH.EAX[15:8]`: an Intel core has 8 general counters
    /// without Hyper-Threading and 4 with it; `80000022H.EBX[3:0]`: AMD's PerfMonV2 core
    /// counters): the simulator's, or on the real machine (root `/`) this processor's. `None`
    /// elsewhere (a directory tree), for a leaf the processor lacks, or a count of zero (a leaf
    /// that enumerates nothing).
    pub fn cpuid_count(&self, count_cpuid: &str) -> Option<u32> {
        let bits = crate::cpuid::CpuidBits::parse(count_cpuid)?;
        let regs = self.cpuid(bits.leaf)?;
        Some(bits.extract(regs)).filter(|&n| n > 0)
    }

    /// CPUID leaf `leaf` (sub-leaf 0) as `[EAX, EBX, ECX, EDX]`: the simulator's, or on the
    /// real machine (root `/`) this processor's. `None` elsewhere (a directory tree has no
    /// CPUID) and for a leaf the processor lacks.
    pub fn cpuid(&self, leaf: u32) -> Option<[u32; 4]> {
        self.registered().cpuid(leaf)
    }

    /// A fresh simulated machine.
    pub fn simulated(config: SimConfig) -> Self {
        Self::with_backend(Sim::new(config))
    }

    /// A fresh simulator of the default simulated machine ([`SimConfig::default`]): what a
    /// message about the simulated machine's CPUs and sockets describes.
    pub fn simulating_default() -> Self {
        Self::simulated(SimConfig::default())
    }

    /// A fresh simulator of `processor`, on the default simulated machine (two sockets of
    /// two CPUs).
    pub fn simulating(processor: &'static ProcessorInfo) -> Self {
        Self::simulated(SimConfig::of(processor))
    }

    /// Sessions lock PMUs in `dir` (hardware only; the simulator's claims are in-process).
    pub fn with_runtime_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.backend.inner_mut().0.lock_in(dir.into());
        self
    }

    /// Makes the access `when` fail with `fault` (see [`crate::fault`]).
    pub fn with_fault(self, when: When, fault: Fault) -> Self {
        Machine {
            backend: Faulty::new(self.backend.into_inner(), when, fault),
            take_over: self.take_over,
        }
    }

    /// Register accesses so far, (reads, writes): MSRs, PCI dwords, memory-mapped registers
    /// and the backend's own space, each counted once (a 64-bit PCI register is two or more
    /// dword accesses). What benchmarks measure a
    /// session's cost in.
    pub fn access_counts(&self) -> (usize, usize) {
        self.backend.counts()
    }

    /// Sessions on this machine take counters they find already enabled (left by a killed
    /// session, or another tool's), saving them and putting them back at the end, instead of
    /// refusing them (see [`crate::ownership::check_idle`]). What `--force` asks for.
    pub fn taking_over(mut self, yes: bool) -> Self {
        self.take_over = yes;
        self
    }

    fn registered(&self) -> &dyn MachineBackend {
        self.backend.inner().0.as_ref()
    }

    /// The registered backend, when it is a `B`.
    pub fn backend<B: MachineBackend>(&self) -> Option<&B> {
        self.registered().as_any().downcast_ref()
    }

    /// The simulator, when this machine is simulated.
    pub fn sim(&self) -> Option<&Sim> {
        self.backend()
    }

    /// What runs on this machine between readings when its time is its own (the
    /// simulator's workload): see [`Workload`]. `None` on hardware.
    pub fn workload(&self) -> Option<&dyn Workload> {
        self.registered().workload()
    }

    /// The register space of the backend's own, behind the fault injector (its accesses
    /// count in [`Self::access_counts`] and can be made to fail): `None` when it has none.
    pub fn register_space(&self) -> Option<&dyn RegisterSpace> {
        self.registered()
            .register_space()
            .map(|_| &self.backend as &dyn RegisterSpace)
    }

    /// Sockets and their CPUs.
    pub fn topology(&self) -> Result<Topology> {
        self.registered().topology()
    }

    /// The CPU to reach `socket`'s uncore MSRs through.
    pub fn cpu_for_socket(&self, socket: u32) -> Result<u32> {
        Ok(self.topology()?.cpu_for_socket(socket)?)
    }

    /// The uncore PCI devices of `processor`, by socket.
    pub fn devices(&self, processor: &'static ProcessorInfo) -> Result<UncoreDevices> {
        self.registered().devices(processor)
    }

    /// The uncore discovery tables this part publishes, each with its device, read (or why
    /// not): on hardware, those of every discovery device under `sys/bus/pci/devices`, read
    /// from physical memory (`dev/mem`); on the simulator, the one it publishes
    /// ([`Sim::discovery_table`]). None where the part has no discovery device (every part
    /// before Sapphire Rapids, and virtual machines).
    pub fn discovery_tables(&self) -> DiscoveryTables {
        self.registered().discovery_tables(self)
    }

    /// Where `addr` (an instance of `info`) is reached, from what the user gave: `--cpu` or
    /// `--socket` for an MSR (default CPU 0), `--device` or `--socket` for a PCI register
    /// (default socket 0).
    pub fn place(
        &self,
        info: &'static RegisterInfo,
        addr: &'static AddressInfo,
        at: &Where,
    ) -> Result<Site> {
        match addr.location {
            Location::Msr(_) => {
                if at.device.is_some() {
                    return Err(UsageError::BadValue {
                        text: "--device".into(),
                        expected: format!("--cpu or --socket: {} is an MSR", addr.name),
                    }
                    .into());
                }
                let cpu = match (at.cpu, at.socket) {
                    (Some(c), _) => c,
                    (None, Some(s)) => self.cpu_for_socket(s)?,
                    (None, None) => 0,
                };
                Ok(Site::Cpu(cpu))
            }
            Location::Pci {
                device_id,
                device,
                function,
                ..
            } => {
                if at.cpu.is_some() {
                    return Err(UsageError::BadValue {
                        text: "--cpu".into(),
                        expected: format!("--device or --socket: {} is a PCI register", addr.name),
                    }
                    .into());
                }
                if let Some(bdf) = at.device {
                    return Ok(Site::Device(bdf));
                }
                let socket = at.socket.unwrap_or(0) as usize;
                let processor = PROCESSORS
                    .iter()
                    .copied()
                    .find(|p| p.id == info.processor)
                    .expect("every register's processor is in the metadata");
                let devices = self.devices(processor)?;
                Ok(Site::Device(
                    devices.bdf_at(socket, device_id, device, function, addr.name)?,
                ))
            }
            Location::Mmio { .. } => {
                if at.cpu.is_some() || at.device.is_some() {
                    return Err(UsageError::BadValue {
                        text: if at.cpu.is_some() { "--cpu" } else { "--device" }.into(),
                        expected: format!(
                            "--socket: {} is memory-mapped (its address comes from the socket's PCI config space)",
                            addr.name
                        ),
                    }
                    .into());
                }
                let socket = at.socket.unwrap_or(0) as usize;
                let processor = PROCESSORS
                    .iter()
                    .copied()
                    .find(|p| p.id == info.processor)
                    .expect("every register's processor is in the metadata");
                let devices = self.devices(processor)?;
                Ok(crate::access::place_of(self, &devices, socket, info, addr)?)
            }
            Location::Table(_) => Err(UsageError::BadValue {
                text: addr.name.into(),
                expected: "an MSR or PCI register: this one is at an offset in the uncore \
                           discovery table, which `pmu discover` reads"
                    .into(),
            }
            .into()),
            Location::SysReg(_) => Err(UsageError::BadValue {
                text: addr.name.into(),
                expected: crate::access::SYSREG_NOT_RAW.into(),
            }
            .into()),
        }
    }

    /// Finds a register instance by name (see [`lookup::find`]) and where it is reached.
    /// A layout name without an instance, or a register no source gives an address for, is
    /// refused.
    pub fn resolve(&self, name: &str, at: &Where) -> Result<Resolved> {
        let found = lookup::find(name)?;
        let address = match (found.address, found.info.addresses) {
            (Some(a), _) => a,
            (None, Addresses::Unknown(reason)) => {
                return Err(BackendError::AddressUnknown {
                    register: found.info.name,
                    reason,
                }
                .into())
            }
            (None, Addresses::Known(addrs)) => {
                return Err(UsageError::needs_instance(name, addrs).into())
            }
            (None, Addresses::FromTable(_)) => {
                return Err(BackendError::TablePlaced {
                    register: found.info.name,
                }
                .into())
            }
        };
        Ok(Resolved {
            info: found.info,
            address,
            place: self.place(found.info, address, at)?,
        })
    }

    /// Refuses a CPU or socket this machine does not have, naming those it has, before
    /// anything is programmed; `None` is not checked. (Without it, perf counted a PMU with no
    /// cpumask on CPU 0 and labelled it with the socket asked for.)
    pub fn check_place(&self, cpu: Option<u32>, socket: Option<u32>) -> Result<()> {
        if cpu.is_none() && socket.is_none() {
            return Ok(());
        }
        let topology = self.topology()?;
        let cpus = topology.cpus();
        let missing = match (cpu, socket) {
            (Some(c), _) if !cpus.iter().any(|&(n, _)| n == c) => format!("CPU {c}"),
            (_, Some(s)) if !cpus.iter().any(|&(_, n)| n == s) => format!("socket {s}"),
            _ => return Ok(()),
        };
        let available = topology
            .sockets()
            .map(|s| {
                let on: Vec<u32> = cpus.iter().filter(|c| c.1 == s).map(|c| c.0).collect();
                let plural = if on.len() == 1 { "" } else { "s" };
                format!("socket {s} (CPU{plural} {})", ranges(&on))
            })
            .collect::<Vec<_>>()
            .join(", ");
        Err(UsageError::NoSuchPlace {
            place: missing,
            available,
        }
        .into())
    }

    /// Reads a resolved register (a 64-bit PCI register tear-free).
    pub fn read(&self, reg: &Resolved) -> Result<u64> {
        Ok(read_by_info(self, reg.info, reg.address, reg.place)?)
    }

    /// Refuses, before anything is written, what [`Self::write`] would refuse: a read-only
    /// register, a value too wide, reserved bits.
    pub fn check(&self, reg: &Resolved, raw: u64) -> Result<()> {
        Ok(check_by_info(reg.info, reg.address, reg.place, raw)?)
    }

    /// Writes a resolved register after the same checks as the typed API; a 64-bit PCI
    /// register is written low dword first and the low dword put back if the high one fails,
    /// so a failure never leaves half a value behind.
    pub fn write(&self, reg: &Resolved, raw: u64) -> Result<()> {
        Ok(write_by_info(self, reg.info, reg.address, reg.place, raw)?)
    }
}

/// Ascending numbers as ranges: `0-3,8,10-11` (how messages and tables write lists of CPUs
/// and counters).
pub fn ranges(numbers: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let start = numbers[i];
        while i + 1 < numbers.len() && numbers[i + 1] == numbers[i] + 1 {
            i += 1;
        }
        out.push(if numbers[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", numbers[i])
        });
        i += 1;
    }
    out.join(",")
}

// Every access goes through the fault injector.
impl MsrAccess for Machine {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        self.backend.read_msr(cpu, address)
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        self.backend.write_msr(cpu, address, value)
    }
}

impl PciAccess for Machine {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        self.backend.read_dword(bdf, offset)
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        self.backend.write_dword(bdf, offset, value)
    }
}

impl MmioAccess for Machine {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        self.backend.read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        self.backend.write_mmio(address, width, value)
    }
}

impl UncoreSummary for Machine {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        self.backend.global_pmi(socket)
    }
    fn hidden_bit(&self, socket: usize, bit: &pmu_regs::BitRef) -> Option<bool> {
        self.backend.hidden_bit(socket, bit)
    }
    fn acknowledge_pmi(&self, socket: usize) {
        self.backend.acknowledge_pmi(socket)
    }
}

impl Ownership for Machine {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        self.backend.claim(pmu)
    }
    fn takes_over(&self) -> bool {
        self.take_over
    }
}
