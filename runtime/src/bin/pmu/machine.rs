//! The machine a command works on: real hardware (under a configurable root) or the simulator,
//! and where on it a register instance lives.

use std::path::PathBuf;

use pmu_regs::{AddressInfo, Location, RegisterInfo, PROCESSORS};
use pmu_runtime::fault::{self, Fault, Faulty, When};
use pmu_runtime::msr::MsrDev;
use pmu_runtime::pci::{Bdf, PciSysfs, UncoreDevices};
use pmu_runtime::sampling::uncore::UncoreSummary;
use pmu_runtime::sim::{Sim, SimConfig};
use pmu_runtime::topology::Topology;
use pmu_runtime::{Error, MsrAccess, PciAccess, Place, Result};

use crate::PlaceArgs;

/// Hardware backends or the simulator, behind a fault injector that passes every access
/// through unless `--inject-fault` names one to fail.
pub struct Machine {
    backend: Faulty<Backend>,
}

/// Hardware backends, or the simulator.
enum Backend {
    Hardware {
        msr: MsrDev,
        pci: PciSysfs,
        sys: PathBuf,
    },
    Sim(Box<Sim>),
}

impl Machine {
    pub fn new(args: &PlaceArgs) -> Result<Self> {
        let (when, fault) = match &args.inject_fault {
            Some(text) => fault::parse(text)?,
            None => (When::Never, Fault::Eio),
        };
        let backend = if args.sim {
            Backend::Sim(Box::new(Sim::new(SimConfig::default())))
        } else {
            let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
            Backend::Hardware {
                msr: MsrDev::with_root(root.join("dev/cpu")),
                pci: PciSysfs::with_root(root.join("sys/bus/pci/devices")),
                sys: root.join("sys"),
            }
        };
        Ok(Machine {
            backend: Faulty::new(backend, when, fault),
        })
    }

    pub fn sim(&self) -> Option<&Sim> {
        self.backend.inner().sim()
    }

    pub fn topology(&self) -> Result<Topology> {
        match self.backend.inner() {
            Backend::Hardware { sys, .. } => Topology::read(sys),
            Backend::Sim(s) => Ok(s.topology()),
        }
    }

    pub fn devices(&self, processor: &str) -> Result<UncoreDevices> {
        let info = PROCESSORS
            .iter()
            .copied()
            .find(|p| p.id == processor)
            .ok_or_else(|| Error::Sim(format!("unknown processor {processor}")))?;
        match self.backend.inner() {
            Backend::Hardware { pci, .. } => pci.discover(info),
            Backend::Sim(s) => Ok(s.uncore_devices()),
        }
    }

    /// Where `addr` lives, from --cpu/--socket/--device.
    pub fn place(
        &self,
        info: &RegisterInfo,
        addr: &AddressInfo,
        args: &PlaceArgs,
    ) -> Result<Place> {
        match addr.location {
            Location::Msr(_) => {
                if args.device.is_some() {
                    return Err(Error::BadValue {
                        text: "--device".into(),
                        expected: format!("--cpu or --socket: {} is an MSR", addr.name),
                    });
                }
                let cpu = match (args.cpu, args.socket) {
                    (Some(c), _) => c,
                    (None, Some(s)) => self.topology()?.cpu_for_socket(s)?,
                    (None, None) => 0,
                };
                Ok(Place::Cpu(cpu))
            }
            Location::Pci {
                device_id,
                device,
                function,
                ..
            } => {
                if args.cpu.is_some() {
                    return Err(Error::BadValue {
                        text: "--cpu".into(),
                        expected: format!("--device or --socket: {} is a PCI register", addr.name),
                    });
                }
                if let Some(d) = &args.device {
                    let bdf: Bdf =
                        d.parse()
                            .map_err(|e: pmu_runtime::pci::BadBdf| Error::BadValue {
                                text: d.clone(),
                                expected: e.to_string(),
                            })?;
                    return Ok(Place::Device(bdf));
                }
                let socket = args.socket.unwrap_or(0) as usize;
                let devices = self.devices(info.processor)?;
                Ok(Place::Device(
                    devices.bdf_at(socket, device_id, device, function, addr.name)?,
                ))
            }
        }
    }
}

impl MsrAccess for Backend {
    fn read_msr(&self, cpu: u32, address: u32) -> Result<u64> {
        match self {
            Backend::Hardware { msr, .. } => msr.read_msr(cpu, address),
            Backend::Sim(s) => s.read_msr(cpu, address),
        }
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> Result<()> {
        match self {
            Backend::Hardware { msr, .. } => msr.write_msr(cpu, address, value),
            Backend::Sim(s) => s.write_msr(cpu, address, value),
        }
    }
}

impl PciAccess for Backend {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> Result<u32> {
        match self {
            Backend::Hardware { pci, .. } => pci.read_dword(bdf, offset),
            Backend::Sim(s) => s.read_dword(bdf, offset),
        }
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> Result<()> {
        match self {
            Backend::Hardware { pci, .. } => pci.write_dword(bdf, offset, value),
            Backend::Sim(s) => s.write_dword(bdf, offset, value),
        }
    }
}

impl Backend {
    fn sim(&self) -> Option<&Sim> {
        match self {
            Backend::Sim(s) => Some(s),
            Backend::Hardware { .. } => None,
        }
    }
}

impl UncoreSummary for Backend {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        self.sim().and_then(|s| s.global_pmi(socket))
    }
    fn s_summary(&self, socket: usize, s: u8) -> Option<Vec<&'static str>> {
        self.sim()
            .and_then(|sim| UncoreSummary::s_summary(sim, socket, s))
    }
    fn acknowledge_pmi(&self, socket: usize) {
        if let Some(s) = self.sim() {
            UncoreSummary::acknowledge_pmi(s, socket)
        }
    }
}

// Every access goes through the fault injector.
impl MsrAccess for Machine {
    fn read_msr(&self, cpu: u32, address: u32) -> Result<u64> {
        self.backend.read_msr(cpu, address)
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> Result<()> {
        self.backend.write_msr(cpu, address, value)
    }
}

impl PciAccess for Machine {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> Result<u32> {
        self.backend.read_dword(bdf, offset)
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> Result<()> {
        self.backend.write_dword(bdf, offset, value)
    }
}

impl UncoreSummary for Machine {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        self.backend.global_pmi(socket)
    }
    fn s_summary(&self, socket: usize, s: u8) -> Option<Vec<&'static str>> {
        self.backend.s_summary(socket, s)
    }
    fn acknowledge_pmi(&self, socket: usize) {
        self.backend.acknowledge_pmi(socket)
    }
}
