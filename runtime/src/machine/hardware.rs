//! The hardware's file trees as a [`MachineBackend`]: `/dev/cpu/N/msr`, sysfs PCI
//! configuration space, `/dev/mem` and the CPU topology, under a root (`/` for the real
//! machine), with PMU claims as lock files.

use std::any::Any;
use std::path::{Path, PathBuf};

use pmu_regs::ProcessorInfo;

use crate::access::{
    BackendResult, Bdf, MmioAccess, MsrAccess, PciAccess, Topology, UncoreDevices, UncoreSummary,
};
use crate::discovery::{find_in_sysfs, read_table};
use crate::error::Result;
use crate::mmio::DevMem;
use crate::msr::MsrDev;
use crate::ownership::{default_runtime_dir, Lease, LockDir, Ownership, Pmu};
use crate::pci::PciSysfs;

use super::seam::{DiscoveryTables, MachineBackend, TableAccess};

/// The hardware under a root.
pub struct FileTrees {
    msr: MsrDev,
    pci: PciSysfs,
    mem: DevMem,
    sys: PathBuf,
    locks: LockDir,
}

impl FileTrees {
    /// The trees under `root`; sessions lock PMUs in [`default_runtime_dir`] for the real
    /// root, else in `root/run/pmu-regs`.
    pub fn under(root: &Path) -> Self {
        let locks = if root == Path::new("/") {
            default_runtime_dir()
        } else {
            root.join("run/pmu-regs")
        };
        FileTrees {
            msr: MsrDev::with_root(root.join("dev/cpu")),
            pci: PciSysfs::with_root(root.join("sys/bus/pci/devices")),
            mem: DevMem::with_path(root.join("dev/mem")),
            sys: root.join("sys"),
            locks: LockDir::new(locks),
        }
    }

    /// Whether these are the real machine's trees (root `/`), whose CPUID is this processor's.
    fn is_host(&self) -> bool {
        self.sys == Path::new("/sys")
    }
}

impl MachineBackend for FileTrees {
    fn topology(&self) -> Result<Topology> {
        Ok(Topology::read(&self.sys)?)
    }

    fn devices(&self, processor: &'static ProcessorInfo) -> Result<UncoreDevices> {
        Ok(self.pci.discover(processor)?)
    }

    /// Those of every discovery device under `sys/bus/pci/devices`, read from physical
    /// memory through the machine.
    fn discovery_tables(&self, registers: &dyn TableAccess) -> DiscoveryTables {
        let devices = self.sys.join("bus/pci/devices");
        find_in_sysfs(&devices, &self.pci)
            .into_iter()
            .flat_map(|(device, located)| match located {
                Ok(tables) => tables
                    .into_iter()
                    .map(|l| (device, read_table(registers, l.address)))
                    .collect(),
                Err(e) => vec![(device, Err(e))],
            })
            .collect()
    }

    fn cpuid(&self, leaf: u32) -> Option<[u32; 4]> {
        if self.is_host() {
            crate::cpuid::host_cpuid(leaf)
        } else {
            None
        }
    }

    fn lock_in(&mut self, dir: PathBuf) {
        self.locks = LockDir::new(dir);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl MsrAccess for FileTrees {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        self.msr.read_msr(cpu, address)
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        self.msr.write_msr(cpu, address, value)
    }
}

impl PciAccess for FileTrees {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        self.pci.read_dword(bdf, offset)
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        self.pci.write_dword(bdf, offset, value)
    }
}

impl MmioAccess for FileTrees {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        self.mem.read_mmio(address, width)
    }
    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        self.mem.write_mmio(address, width, value)
    }
}

/// Real hardware cannot be asked about summary bits no address reaches: every answer is
/// "unknown".
impl UncoreSummary for FileTrees {}

impl Ownership for FileTrees {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        self.locks.claim(pmu)
    }
}
