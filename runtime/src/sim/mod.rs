//! A simulated PMU that behaves as the guides describe, behind the same [`MsrAccess`] and
//! [`PciAccess`] traits as the real backends, so every test and demo runs without hardware.
//!
//! It models the Xeon 7500 uncore (MSRs, per socket), the Xeon E5-2600 Home Agent and QPI
//! boxes (PCI config space, per socket) and the architectural counters (MSRs, per logical
//! CPU). What a register does on a write comes from the generated metadata: reserved bits
//! fault as `#GP` (reported as [`AccessError::Rejected`], the MSR driver's `EIO`), ignored
//! bits read back as zero, read-only fields keep their value, write-only fields act and read
//! as zero.
//!
//! Events are injected explicitly ([`Sim::inject_uncore`], [`Sim::inject_pci`],
//! [`Sim::inject_qpi_packet`], [`Sim::inject_core`]); counters advance only when enabled at
//! every level, wrap with a carry out of bit 47, and raise PMIs that [`Sim::pmis`] records
//! with the number of the injected event that caused them. Everything is deterministic.
//!
//! ```
//! use pmu_regs::xeon_7500::{ubox, wbox};
//! use pmu_runtime::sim::{Sim, UncoreEvent};
//! use pmu_runtime::MsrAccessExt;
//!
//! let sim = Sim::new(Default::default());
//! let cpu = sim.on_cpu(0);
//! cpu.write(wbox::W_MSR_PMON_EVT_SEL[0], wbox::WEvtSel::RESET.with_ev_sel(0x02).with_en(true))?;
//! cpu.write(wbox::W_MSR_PMON_GLOBAL_CTL, wbox::WGlobalCtl::RESET.with_ctr_en(0b0001))?;
//! cpu.write(ubox::U_MSR_PMON_GLOBAL_CTL, ubox::UGlobalCtl::RESET.with_en_all(true))?;
//! sim.inject_uncore(0, UncoreEvent { instance: "W", ev_sel: 0x02, umask: None }, 1000)?;
//! assert_eq!(cpu.read(wbox::W_MSR_PMON_CTR[0])?.event_count(), 1000);
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

mod arch;
mod nhmex;
mod regs;
mod snbep;

use std::sync::{Mutex, MutexGuard, OnceLock};

use pmu_regs::Location;

pub use crate::cpuid::Cpuid0A;
pub use arch::ArchConfig;
pub use nhmex::UncoreEvent;
pub use snbep::{PciEvent, QpiPacket, CTO_COUNT};

use crate::access::{
    AccessError, BackendError, Bdf, MsrAccess, Op, PciAccess, Result as BackendResult, Target,
    UncoreSummary,
};
use crate::catalog::processor;
use crate::error::{Result, UsageError};
use crate::ownership::{Lease, Ownership, Pmu, Registry};
use crate::pci::UncoreDevices;
use crate::topology::Topology;
use regs::{Index, Reg};

/// 2^48: uncore counters are 48 bits wide.
pub(crate) const COUNTER_MODULUS_48: u64 = 1 << 48;

/// The running number of injected events (1-based once any was injected).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Seq(pub u64);

/// What the models record as events are injected: the event count and the PMIs raised.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    pub seq: Seq,
    pub pmis: Vec<PmiRecord>,
}

/// How the simulated machine is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimConfig {
    /// Sockets (packages).
    pub sockets: u32,
    /// Logical CPUs per socket; CPU numbers run socket by socket.
    pub cpus_per_socket: u32,
    /// Events a Xeon 7500 box keeps counting between a PMI and the U-box's freeze (the
    /// guide's "wrap and continue to collect events").
    pub freeze_skew: u64,
    /// The architectural PMU of every CPU.
    pub arch: ArchConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            sockets: 2,
            cpus_per_socket: 2,
            freeze_skew: 0,
            arch: ArchConfig::default(),
        }
    }
}

/// Where a PMI came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PmiSource {
    /// A Xeon 7500 uncore counter.
    Uncore {
        /// Socket.
        socket: usize,
        /// Box instance (`"C3"`).
        instance: &'static str,
        /// Counter register (`"C3_MSR_PMON_CTR0"`).
        counter: &'static str,
    },
    /// An architectural counter.
    Core {
        /// Logical CPU.
        cpu: u32,
        /// Counter register (`"IA32_PMC1"`).
        counter: String,
    },
}

/// A PMI the simulator raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmiRecord {
    /// The number of the injected event that caused it (1-based, counted over the whole
    /// simulator).
    pub event: u64,
    /// The counter that overflowed.
    pub source: PmiSource,
    /// The core the interrupt is delivered to (U_MSR_PMON_GLOBAL_CTL.pmi_core_sel, or the
    /// CPU itself for core counters).
    pub core: Option<u32>,
}

struct State {
    nhm: Vec<nhmex::SocketState>,
    snb: Vec<snbep::SocketState>,
    cpus: Vec<arch::CpuState>,
    journal: Journal,
}

/// The simulated PMU. Share it between threads by reference: all methods take `&self`.
pub struct Sim {
    config: SimConfig,
    index: Index,
    nhm: nhmex::Model,
    snb: snbep::Model,
    state: Mutex<State>,
    owners: Registry,
}

/// The architectural register of layout `type_name` and array index `index`.
pub(crate) fn arch_reg(type_name: &str, index: u32) -> Option<Reg> {
    static ARCH: OnceLock<Vec<Reg>> = OnceLock::new();
    ARCH.get_or_init(|| {
        processor("architectural")
            .units
            .iter()
            .flat_map(|u| u.registers.iter().copied())
            .flat_map(|info| {
                info.known_addresses()
                    .iter()
                    .map(move |addr| Reg { info, addr })
            })
            .collect()
    })
    .iter()
    .find(|r| r.info.type_name == type_name && r.addr.index == index)
    .copied()
}

/// The uncore bus of socket `s` in the simulator (as firmware numbers them on these parts).
fn sim_bus(s: u32) -> u8 {
    (0x3f + 0x40 * s).min(0xff) as u8
}

impl Sim {
    /// A simulator with every register at its reset value.
    pub fn new(config: SimConfig) -> Self {
        let mut index = Index::default();
        // One simulated machine has the Xeon 7500 uncore's MSRs and the E5-2600's PCI boxes
        // (their MSR numbers overlap, so the E5-2600's MSR boxes are not simulated).
        index.add_processor(processor("xeon-7500"), None);
        index.add_processor(processor("architectural"), None);
        index.add_processor(processor("xeon-e5-2600"), Some(pmu_regs::Space::Pci));
        let nhm = nhmex::Model::new();
        let snb = snbep::Model::new(processor("xeon-e5-2600"), &index);
        let sockets = config.sockets.max(1) as usize;
        let cpus = (config.sockets.max(1) * config.cpus_per_socket.max(1)) as usize;
        Self {
            config,
            index,
            nhm,
            snb,
            state: Mutex::new(State {
                nhm: vec![Default::default(); sockets],
                snb: vec![Default::default(); sockets],
                cpus: vec![arch::CpuState::new(config.arch); cpus],
                journal: Journal::default(),
            }),
            owners: Registry::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent register values behind.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The simulated machine's topology.
    pub fn topology(&self) -> Topology {
        let per = self.config.cpus_per_socket.max(1);
        Topology::from_sockets(
            (0..self.config.sockets.max(1)).map(|s| (s, (s * per..(s + 1) * per).collect())),
        )
    }

    /// The E5-2600 uncore devices of every simulated socket, as discovery would find them.
    pub fn uncore_devices(&self) -> UncoreDevices {
        let buses: Vec<(u16, u8)> = (0..self.config.sockets.max(1))
            .map(|s| (0, sim_bus(s)))
            .collect();
        UncoreDevices::complete(processor("xeon-e5-2600"), &buses)
    }

    /// CPUID leaf 0AH of every simulated CPU.
    pub fn cpuid_0a(&self) -> Cpuid0A {
        self.config.arch.cpuid()
    }

    fn socket_of_cpu(&self, cpu: u32) -> Option<usize> {
        let per = self.config.cpus_per_socket.max(1);
        (cpu < self.config.sockets.max(1) * per).then_some((cpu / per) as usize)
    }

    fn socket_of_bus(&self, bdf: Bdf) -> Option<usize> {
        (0..self.config.sockets.max(1))
            .find(|s| sim_bus(*s) == bdf.bus)
            .map(|s| s as usize)
    }

    fn bad_socket(&self, socket: usize) -> UsageError {
        UsageError::NoSuchPlace {
            place: format!("socket {socket} in the simulator"),
            available: format!("sockets 0-{}", self.config.sockets.max(1) - 1),
        }
    }

    fn bad_cpu(&self, cpu: u32) -> UsageError {
        let cpus = self.config.sockets.max(1) * self.config.cpus_per_socket.max(1);
        UsageError::NoSuchPlace {
            place: format!("CPU {cpu} in the simulator"),
            available: format!("CPUs 0-{}", cpus - 1),
        }
    }

    /// Injects `count` events into a Xeon 7500 box of `socket`.
    pub fn inject_uncore(&self, socket: usize, event: UncoreEvent, count: u64) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let sock = st
            .nhm
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        if self.nhm.inject(
            socket,
            sock,
            &event,
            count,
            self.config.freeze_skew,
            &mut st.journal,
        ) {
            Ok(())
        } else {
            Err(UsageError::NoSuchBox {
                name: format!("{} in the simulated Xeon 7500", event.instance),
                available: self.nhm.instances().collect::<Vec<_>>().join(", "),
            }
            .into())
        }
    }

    /// Injects `count` events into an E5-2600 box (`HA`, `P0`, `P1`) of `socket`.
    pub fn inject_pci(&self, socket: usize, event: PciEvent, count: u64) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let sock = st
            .snb
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        if self.snb.inject(sock, &event, count, &mut st.journal.seq) {
            Ok(())
        } else {
            Err(UsageError::NoSuchBox {
                name: format!("{} in the simulated E5-2600", event.instance),
                available: self.snb.instances().join(", "),
            }
            .into())
        }
    }

    /// Sends `count` packets through QPI port `port` (`"P0"`, `"P1"`) of `socket`.
    pub fn inject_qpi_packet(
        &self,
        socket: usize,
        port: &str,
        packet: QpiPacket,
        count: u64,
    ) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let sock = st
            .snb
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        if self
            .snb
            .inject_packet(sock, port, packet, count, &mut st.journal.seq)
        {
            Ok(())
        } else {
            Err(UsageError::NoSuchBox {
                name: format!("{port} with a packet filter"),
                available: self.snb.filtered_instances().join(", "),
            }
            .into())
        }
    }

    /// Raises (or drops) the E5-2600 freeze signal on `socket`: boxes with `frz_en` stop.
    pub fn set_freeze_signal(&self, socket: usize, on: bool) -> Result<()> {
        let mut st = self.lock();
        let sock = st
            .snb
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        self.snb.set_freeze_signal(sock, on);
        Ok(())
    }

    /// Whether E5-2600 box `instance` of `socket` is frozen.
    pub fn is_frozen(&self, socket: usize, instance: &str) -> Result<bool> {
        let st = self.lock();
        let sock = st.snb.get(socket).ok_or_else(|| self.bad_socket(socket))?;
        self.snb.is_frozen(sock, instance).ok_or_else(|| {
            UsageError::NoSuchBox {
                name: format!("{instance} in the simulated E5-2600"),
                available: self.snb.instances().join(", "),
            }
            .into()
        })
    }

    /// E5-2600 counters that wrapped on `socket`: (register, injected event number).
    pub fn pci_overflows(&self, socket: usize) -> Vec<(&'static str, u64)> {
        self.lock()
            .snb
            .get(socket)
            .map(|s| s.overflows.clone())
            .unwrap_or_default()
    }

    /// Injects `count` architectural events (event select and umask) on `cpu`.
    pub fn inject_core(&self, cpu: u32, ev_sel: u8, umask: u8, count: u64) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let state = st
            .cpus
            .get_mut(cpu as usize)
            .ok_or_else(|| self.bad_cpu(cpu))?;
        state.inject(cpu, ev_sel, umask, count, &mut st.journal);
        Ok(())
    }

    /// Injects `count` events into fixed counter `i` of `cpu` (0: instructions retired,
    /// 1: core cycles, 2: reference cycles).
    pub fn inject_fixed(&self, cpu: u32, i: u32, count: u64) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let state = st
            .cpus
            .get_mut(cpu as usize)
            .ok_or_else(|| self.bad_cpu(cpu))?;
        state.inject_fixed(cpu, i, count, &mut st.journal);
        Ok(())
    }

    /// Every PMI raised so far, in order.
    pub fn pmis(&self) -> Vec<PmiRecord> {
        self.lock().journal.pmis.clone()
    }

    /// Events injected so far.
    pub fn events_injected(&self) -> u64 {
        self.lock().journal.seq.0
    }

    /// U_MSR_PMON_GLOBAL_SUMMARY.pmi of `socket`: the U-box received a PMI. No public source
    /// gives this register's address or bit, so the simulator exposes the state directly.
    pub fn uncore_pmi_pending(&self, socket: usize) -> Result<bool> {
        let st = self.lock();
        st.nhm
            .get(socket)
            .map(|s| s.pmi)
            .ok_or_else(|| self.bad_socket(socket).into())
    }

    /// Clears the PMI state of `socket` (as handling the interrupt does).
    pub fn acknowledge_uncore_pmi(&self, socket: usize) -> Result<()> {
        let mut st = self.lock();
        let sock = st
            .nhm
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        self.nhm.acknowledge_pmi(sock);
        Ok(())
    }

    /// The fields set in S{s}_MSR_PMON_SUMMARY of `socket` (no public source gives its MSR
    /// number, so it is not reachable through [`MsrAccess`]).
    pub fn s_summary(&self, socket: usize, s: u8) -> Result<Vec<&'static str>> {
        let st = self.lock();
        st.nhm
            .get(socket)
            .map(|sock| self.nhm.summary(sock, s))
            .ok_or_else(|| self.bad_socket(socket).into())
    }

    fn rejected(op: Op, target: Target) -> BackendError {
        BackendError::access(op, target, AccessError::Rejected)
    }
}

impl MsrAccess for Sim {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        let target = Target::Msr { cpu, address };
        let socket = self
            .socket_of_cpu(cpu)
            .ok_or_else(|| Self::no_cpu(Op::Read, cpu, address))?;
        let reg = self
            .index
            .get(&Location::Msr(address))
            .ok_or_else(|| Self::rejected(Op::Read, target))?;
        let st = self.lock();
        if reg.info.processor == "architectural" {
            return st.cpus[cpu as usize]
                .read(&reg)
                .ok_or_else(|| Self::rejected(Op::Read, target));
        }
        Ok(self.nhm.read(&st.nhm[socket], &reg))
    }

    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        let target = Target::Msr { cpu, address };
        let socket = self
            .socket_of_cpu(cpu)
            .ok_or_else(|| Self::no_cpu(Op::Write, cpu, address))?;
        let reg = self
            .index
            .get(&Location::Msr(address))
            .ok_or_else(|| Self::rejected(Op::Write, target))?;
        let mut st = self.lock();
        if reg.info.processor == "architectural" {
            return if st.cpus[cpu as usize].write(&reg, value) {
                Ok(())
            } else {
                Err(Self::rejected(Op::Write, target))
            };
        }
        let sock = &mut st.nhm[socket];
        let old = sock.regs.get(&reg);
        let w =
            regs::write(reg.info, old, value).ok_or_else(|| Self::rejected(Op::Write, target))?;
        sock.regs.put(&reg, w.stored);
        self.nhm.after_write(sock, &reg, w.actions);
        Ok(())
    }
}

impl Sim {
    fn no_cpu(op: Op, cpu: u32, address: u32) -> BackendError {
        // What the msr driver says for a CPU that does not exist: no device file.
        BackendError::access(
            op,
            Target::Msr { cpu, address },
            AccessError::NoMsrDevice {
                path: format!("<sim>/dev/cpu/{cpu}/msr").into(),
            },
        )
    }

    /// The register a dword belongs to, and whether it is the upper half of a 64-bit one.
    fn pci_reg(&self, bdf: Bdf, offset: u16) -> Option<(Reg, bool)> {
        let devices = self.uncore_devices();
        let device_id = devices
            .sockets
            .iter()
            .flat_map(|s| s.devices.iter())
            .find(|(_, b)| *b == bdf)
            .map(|(id, _)| *id)?;
        let at = |off: u16| Location::Pci {
            device_id,
            device: bdf.device,
            function: bdf.function,
            offset: off,
        };
        if let Some(r) = self.index.get(&at(offset)) {
            return Some((r, false));
        }
        let r = self.index.get(&at(offset.checked_sub(4)?))?;
        (r.info.width == 64).then_some((r, true))
    }
}

impl PciAccess for Sim {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        let target = Target::Pci { bdf, offset };
        let socket = self
            .socket_of_bus(bdf)
            .ok_or_else(|| self.no_device(Op::Read, bdf, offset))?;
        // Unimplemented config space reads as zero, as on hardware.
        let Some((reg, high)) = self.pci_reg(bdf, offset) else {
            let _ = target;
            return Ok(0);
        };
        let v = self.lock().snb[socket].regs.get(&reg);
        Ok(if high { (v >> 32) as u32 } else { v as u32 })
    }

    fn write_dword(&self, bdf: Bdf, offset: u16, value: u32) -> BackendResult<()> {
        let target = Target::Pci { bdf, offset };
        let socket = self
            .socket_of_bus(bdf)
            .ok_or_else(|| self.no_device(Op::Write, bdf, offset))?;
        let Some((reg, high)) = self.pci_reg(bdf, offset) else {
            return Ok(()); // writes to unimplemented config space are dropped
        };
        let mut st = self.lock();
        let sock = &mut st.snb[socket];
        let old = sock.regs.get(&reg);
        let raw = if high {
            (old & 0xFFFF_FFFF) | u64::from(value) << 32
        } else if reg.info.width == 64 {
            (old & !0xFFFF_FFFF) | u64::from(value)
        } else {
            u64::from(value)
        };
        let w = regs::write(reg.info, old, raw).ok_or_else(|| Self::rejected(Op::Write, target))?;
        sock.regs.put(&reg, w.stored);
        self.snb.after_write(sock, &reg, raw);
        Ok(())
    }
}

impl Sim {
    fn no_device(&self, op: Op, bdf: Bdf, offset: u16) -> BackendError {
        BackendError::access(
            op,
            Target::Pci { bdf, offset },
            AccessError::NoPciDevice {
                path: format!("<sim>/sys/bus/pci/devices/{bdf}/config").into(),
            },
        )
    }
}

impl Ownership for Sim {
    /// Claims are in-process: one simulator, one registry.
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        self.owners.claim(pmu)
    }
}

impl UncoreSummary for Sim {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        self.uncore_pmi_pending(socket).ok()
    }
    fn s_summary(&self, socket: usize, s: u8) -> Option<Vec<&'static str>> {
        Sim::s_summary(self, socket, s).ok()
    }
    fn acknowledge_pmi(&self, socket: usize) {
        let _ = self.acknowledge_uncore_pmi(socket);
    }
}
