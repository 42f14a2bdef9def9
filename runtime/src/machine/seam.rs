//! The open seam between [`Machine`](super::Machine) and what reaches registers:
//! [`MachineBackend`]. A backend is one module implementing the access traits and this trait,
//! registered with one call, [`Machine::with_backend`](super::Machine::with_backend); nothing
//! above it matches on which backend it is. The hardware's file trees
//! ([`super::hardware::FileTrees`]) and the simulator ([`super::simulated`]) are two such
//! modules.

use std::any::Any;
use std::path::PathBuf;
use std::time::Duration;

use pmu_regs::ProcessorInfo;

use crate::access::{
    BackendResult, Bdf, MmioAccess, MsrAccess, PciAccess, RegisterSpace, SpaceError, Topology,
    UncoreDevices, UncoreSummary,
};
use crate::boxes::CountedBox;
use crate::discovery::{DiscoveredTable, DiscoveryError};
use crate::error::Result;
use crate::ownership::{Lease, Ownership, Pmu};
use crate::sim::{Rate, StreamId};

/// The discovery tables a backend publishes, each with its device, read (or why not).
pub type DiscoveryTables = Vec<(Bdf, std::result::Result<DiscoveredTable, DiscoveryError>)>;

/// What a [`Machine`](super::Machine) reaches registers through: the raw access traits (a
/// backend without one of the spaces refuses its accesses), the PMU claims, and what the
/// machine says about itself. Object-safe: the machine holds a `Box<dyn MachineBackend>`.
pub trait MachineBackend:
    MsrAccess + PciAccess + MmioAccess + UncoreSummary + Ownership + Any + Send + Sync
{
    /// Sockets and their CPUs.
    fn topology(&self) -> Result<Topology>;

    /// The uncore PCI devices of `processor`, by socket.
    fn devices(&self, processor: &'static ProcessorInfo) -> Result<UncoreDevices>;

    /// The uncore discovery tables the part publishes; `registers` is the machine itself
    /// (this backend behind the fault injector), for a backend that reads the tables out of
    /// its own registers. None by default.
    fn discovery_tables(&self, registers: &dyn TableAccess) -> DiscoveryTables {
        let _ = registers;
        Vec::new()
    }

    /// CPUID leaf `leaf` (sub-leaf 0) as `[EAX, EBX, ECX, EDX]`, where the backend can ask.
    fn cpuid(&self, leaf: u32) -> Option<[u32; 4]> {
        let _ = leaf;
        None
    }

    /// Sessions lock PMUs in `dir` (a backend whose claims are in-process ignores it).
    fn lock_in(&mut self, dir: PathBuf) {
        let _ = dir;
    }

    /// What happens on this machine between readings, for a backend whose time is its own
    /// (the simulator): sessions then read on a clock of exact steps and run the workload
    /// by it. `None` (the default): real time, nothing to run.
    fn workload(&self) -> Option<&dyn Workload> {
        None
    }

    /// A register space of the backend's own, beyond MSRs, PCI and memory-mapped registers
    /// (a system register space addressed by an encoding). `None` by default.
    fn register_space(&self) -> Option<&dyn RegisterSpace> {
        None
    }

    /// The backend as [`Any`], so a caller that knows its type can reach it
    /// ([`Machine::backend`](super::Machine::backend)).
    fn as_any(&self) -> &dyn Any;
}

/// The register access a discovery table is read through: PCI configuration space (its
/// device's capability) and memory-mapped access (the table).
pub trait TableAccess: PciAccess + MmioAccess {}
impl<T: PciAccess + MmioAccess + ?Sized> TableAccess for T {}

/// What a backend whose time is its own runs while a session counts it: each counted
/// event happening at a rate, advanced by the session's clock.
pub trait Workload {
    /// Starts every event of `counted` happening, event `i` of a box at `rate(i)`, and the
    /// top-down slots event on each of `topdown_cpus`; returns what was started.
    fn run(
        &self,
        counted: &[CountedBox<'_>],
        rate: &dyn Fn(usize) -> Rate,
        topdown_cpus: &[u32],
    ) -> Vec<StreamId>;

    /// Starts the named workload `workload` on the whole machine: every counter counts what
    /// its control selects of it. `None` (the default): this backend runs only
    /// [`Workload::run`]'s streams.
    fn run_named(
        &self,
        _workload: &'static crate::machine::NamedWorkload,
    ) -> Option<Vec<StreamId>> {
        None
    }

    /// Brings `running` to time `to` of the session's clock (0: when it started).
    fn advance(&self, running: &[StreamId], to: Duration) -> Result<()>;

    /// Stops `running`.
    fn stop(&self, running: &[StreamId]);
}

/// The registered backend behind the fault injector: forwards every trait to it.
pub(super) struct Seam(pub(super) Box<dyn MachineBackend>);

impl MsrAccess for Seam {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        self.0.read_msr(cpu, address)
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        self.0.write_msr(cpu, address, value)
    }
}

impl PciAccess for Seam {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        self.0.read_dword(bdf, offset)
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        self.0.write_dword(bdf, offset, value)
    }
}

impl MmioAccess for Seam {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        self.0.read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        self.0.write_mmio(address, width, value)
    }
}

impl UncoreSummary for Seam {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        self.0.global_pmi(socket)
    }
    fn hidden_bit(&self, socket: usize, bit: &pmu_regs::BitRef) -> Option<bool> {
        self.0.hidden_bit(socket, bit)
    }
    fn acknowledge_pmi(&self, socket: usize) {
        self.0.acknowledge_pmi(socket)
    }
}

impl Ownership for Seam {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        self.0.claim(pmu)
    }
}

impl RegisterSpace for Seam {
    fn space(&self) -> &'static str {
        self.0.register_space().map_or("none", |s| s.space())
    }
    fn read_register(&self, place: u32, address: u64) -> std::result::Result<u64, SpaceError> {
        match self.0.register_space() {
            Some(s) => s.read_register(place, address),
            None => Err(no_space()),
        }
    }
    fn write_register(
        &self,
        place: u32,
        address: u64,
        value: u64,
    ) -> std::result::Result<(), SpaceError> {
        match self.0.register_space() {
            Some(s) => s.write_register(place, address, value),
            None => Err(no_space()),
        }
    }
}

fn no_space() -> SpaceError {
    "this machine's backend has no register space of its own: its registers are MSRs, PCI \
     and memory-mapped registers"
        .into()
}
