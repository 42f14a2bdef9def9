//! A simulated PMU that behaves as the guides describe, behind the same [`MsrAccess`] and
//! [`PciAccess`] traits as the real backends, so every test and demo runs without hardware.
//!
//! It models one processor's uncore at a time ([`SimConfig::processor`]: MSR and PCI boxes
//! alike, per socket), driven by the structure its spec declares (see [`crate::boxes`]), and
//! the architectural counters of every logical CPU. What a register does on a write comes
//! from the generated metadata: reserved bits fault as `#GP` (reported as
//! [`AccessError::Rejected`], the MSR driver's `EIO`), ignored bits read back as zero,
//! read-only fields keep their value, write-only fields act and read as zero.
//!
//! Events are injected explicitly ([`Sim::inject_uncore`], [`Sim::inject_filtered`],
//! [`Sim::inject_core`]); counters advance only when enabled at every level, wrap at their
//! width, and raise PMIs that [`Sim::pmis`] records with the number of the injected event
//! that caused them. Everything is deterministic. A workload runs streams of events at a
//! rate ([`Sim::start_stream`]), advanced by the clock of whoever counts ([`Sim::advance`]):
//! what a counting session on the simulator sees happen.
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
pub mod cmn;
pub mod counting;
pub mod cspmu;
pub mod domains;
mod mmio;
mod part;
pub mod pmuv3;
mod quirks;
mod regs;
mod running;
pub mod table_placed;
mod uncore;
mod workload;
pub mod workloads;

use std::sync::{Mutex, MutexGuard, OnceLock};

use pmu_regs::{BitRef, Location, ProcessorInfo};

pub use crate::cpuid::Cpuid0A;
pub use arch::{ArchConfig, SimTopdown, SLOTS_EVENT};
pub use running::ResolvedWorkload;
pub use uncore::{UncoreEvent, FIXED_EVENT};
pub use workload::{Rate, Stream, StreamId, StreamMasks, StreamTarget, SLOTS_PER_EVENT};
pub use workloads::{
    default_workload, workload, workload_named, NamedWorkload, DEFAULT_WORKLOAD, WORKLOADS,
};

/// An event for a box in PCI space: the same as any box's.
pub type PciEvent = UncoreEvent;

/// Where the simulated part's discovery table is (a physical address).
pub const DISCOVERY_TABLE: u64 = 0xFE00_0000;
/// The simulated part's discovery device (socket 0's).
pub const DISCOVERY_DEVICE: Bdf = Bdf::new(0x7e, 0, 1);

/// A packet header as a box's match/mask filters see it: `word0` is compared with the first
/// filter, `word1` with the second (build them with the generated match layouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpiPacket {
    /// Compared under the first filter's mask with its match value.
    pub word0: u32,
    /// Compared under the second filter's mask.
    pub word1: u32,
}

use crate::access::{
    place_of, AccessError, BackendError, BackendResult, Bdf, MmioAccess, MsrAccess, Op, PciAccess,
    Site, Target, Topology, UncoreDevices, UncoreSummary,
};
use crate::boxes::Boxes;
use crate::error::{Error, Result, UsageError};
use crate::table_format::{self, MemoryTable};
use regs::{Home, Index, Reg};

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
#[derive(Debug, Clone, Copy)]
pub struct SimConfig {
    /// The processor whose uncore is simulated (one at a time: the Xeon 7500's and the
    /// E5-2600's MSR boxes share MSR numbers).
    pub processor: &'static ProcessorInfo,
    /// Sockets (packages).
    pub sockets: u32,
    /// Logical CPUs per socket; CPU numbers run socket by socket.
    pub cpus_per_socket: u32,
    /// Events a box keeps counting between a PMI and the global freeze (the Xeon 7500
    /// guide's "wrap and continue to collect events").
    pub freeze_skew: u64,
    /// The architectural PMU of every CPU.
    pub arch: ArchConfig,
    /// Logical CPUs sharing one L3 cache (one AMD core complex), consecutive within a socket;
    /// 0: the whole socket shares one. Each L3 has its own state for the boxes of a
    /// `scope="l3"` unit.
    pub cpus_per_l3: u32,
    /// The part: how many boxes of each unit whose count is read from the part (its spec's
    /// `<box-count>`) this one has, by unit name (`&[("CHA", 18)]`). The simulator answers
    /// as the part would: the capability register's bits, the socket's cores, or the PCI
    /// devices of the first boxes only. A unit not named has every box its spec lists.
    pub part: &'static [(&'static str, u32)],
    /// The part's CPUID counts, by the spec's `count-cpuid` bits (`&[("80000022H.EBX[3:0]",
    /// 4)]`: a Zen 4 part with four core counters). The simulator reports each leaf a
    /// register's `count-cpuid` names, every count the register's `count` unless given here.
    /// Leaf 0AH is [`Self::arch`]'s.
    pub cpuid_counts: &'static [(&'static str, u32)],
    /// Boxes that do not count, by instance name (`&["CHA0"]`): a fault profile a test turns
    /// on, as a part whose box is broken would behave. Their registers read and write as
    /// usual, but their counters never move, whatever is enabled.
    pub broken: &'static [&'static str],
    /// Boxes whose counters do not reset, by instance name (`&["CHA0"]`): a fault profile a
    /// test turns on. Writing their box control's reset-counters field (the role
    /// `ResetCounters`) leaves every counter's value in place, where the guides say it clears
    /// them to 0; everything else about the box is as usual.
    pub no_reset: &'static [&'static str],
}

impl PartialEq for SimConfig {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.processor, other.processor)
            && (
                self.sockets,
                self.cpus_per_socket,
                self.cpus_per_l3,
                self.freeze_skew,
                self.arch,
                self.part,
                self.cpuid_counts,
                self.broken,
                self.no_reset,
            ) == (
                other.sockets,
                other.cpus_per_socket,
                other.cpus_per_l3,
                other.freeze_skew,
                other.arch,
                other.part,
                other.cpuid_counts,
                other.broken,
                other.no_reset,
            )
    }
}

impl Eq for SimConfig {}

impl SimConfig {
    /// The default machine with `processor`'s uncore.
    pub fn of(processor: &'static ProcessorInfo) -> Self {
        Self {
            processor,
            arch: ArchConfig::of(processor),
            ..Self::default()
        }
    }
}

impl Default for SimConfig {
    /// Two sockets of two CPUs with the uncore of the first processor [`pmu_regs::PROCESSORS`]
    /// lists that has a global level (the oldest uncore the spec describes); each CPU has an
    /// L3 of its own (two core complexes per socket, for the processors whose L3 counters are
    /// per L3).
    fn default() -> Self {
        Self {
            processor: default_processor(),
            sockets: 2,
            cpus_per_socket: 2,
            cpus_per_l3: 1,
            freeze_skew: 0,
            arch: ArchConfig::default(),
            part: &[],
            cpuid_counts: &[],
            broken: &[],
            no_reset: &[],
        }
    }
}

/// The processor of [`SimConfig::default`]: the first one with a global level, chosen from
/// the spec's list by what it has rather than by name (the architectural PMU, which every
/// build has, when no processor with an uncore is built in).
fn default_processor() -> &'static ProcessorInfo {
    pmu_regs::PROCESSORS
        .iter()
        .copied()
        .find(|p| p.global.is_some())
        .unwrap_or(&pmu_regs::arch::PROCESSOR)
}

/// Where a PMI came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PmiSource {
    /// An uncore counter.
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

struct SimState {
    uncore: Vec<uncore::SocketState>,
    /// Per logical CPU: the boxes of the simulated processor's own `scope="cpu"` units.
    cores: Vec<uncore::SocketState>,
    /// Per L3, at the index of its lowest CPU: the boxes of `scope="l3"` units.
    l3s: Vec<uncore::SocketState>,
    cpus: Vec<arch::CpuState>,
    /// Per logical CPU: its Arm core PMU's system registers (see [`pmuv3`]).
    pmuv3: Vec<pmuv3::Pmuv3State>,
    journal: Journal,
}

/// The simulated PMU. Share it between threads by reference: all methods take `&self`.
pub struct Sim {
    config: SimConfig,
    index: Index,
    uncore: uncore::Model,
    /// The box of the simulated processor's own per-CPU unit that core events go to (`CPU`),
    /// when it has one; otherwise they go to the architectural model.
    core_box: Option<&'static str>,
    /// The processor's Arm PMU system registers, by encoding (none for x86 parts).
    sysregs: pmuv3::Pmuv3Regs,
    state: Mutex<SimState>,
    /// The memory-mapped windows: where each controller's base is, and what is at each address.
    windows: mmio::Windows,
    /// What the machine layer keeps per simulator, in a type the simulator does not know:
    /// its in-process PMU claims (`machine::simulated`).
    claims: OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// Streams of events that run while something counts (see [`workload`]).
    workload: Mutex<workload::Streams>,
    /// The uncore discovery table the part publishes (built from the spec), which tests may
    /// replace with a corrupted or disagreeing one.
    discovery: Mutex<Option<MemoryTable>>,
    /// The tables of the part's discovery domains (Diamond Rapids' IMH and CBB), if it has any.
    domains: Option<domains::SimDomains>,
}

/// Every architectural register at each of its addresses, listed once.
fn arch_regs() -> &'static [Reg] {
    static ARCH: OnceLock<Vec<Reg>> = OnceLock::new();
    ARCH.get_or_init(|| {
        pmu_regs::arch::PROCESSOR
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
}

/// The architectural register of layout `type_name` and array index `index`.
pub(crate) fn arch_reg(type_name: &str, index: u32) -> Option<Reg> {
    arch_regs()
        .iter()
        .find(|r| r.info.type_name == type_name && r.addr.index == index)
        .copied()
}

/// The architectural register at MSR `address`, if any.
fn arch_reg_at(address: u32) -> Option<Reg> {
    arch_regs()
        .iter()
        .find(|r| r.addr.location == pmu_regs::Location::Msr(address))
        .copied()
}

/// `processor`'s boxes with those the discovery table places where a simulated part of
/// `sockets` sockets puts them ([`table_placed::places`]).
pub(crate) fn placed_boxes(processor: &'static ProcessorInfo, sockets: u32) -> &'static Boxes {
    let spec = Boxes::of(processor);
    let buses: Vec<u8> = (0..sockets.max(1)).map(sim_bus).collect();
    crate::table_placed::placed_on(spec, &table_placed::places(spec, &buses))
}

/// The uncore bus of socket `s` in the simulator (as firmware numbers them on these parts).
fn sim_bus(s: u32) -> u8 {
    (0x3f + 0x40 * s).min(0xff) as u8
}

impl Sim {
    /// A simulator with every register at its reset value.
    pub fn new(config: SimConfig) -> Self {
        let mut index = Index::default();
        // The architectural registers always belong to the per-CPU model (added last, so a
        // configuration naming the architectural PMU as its uncore changes nothing).
        index.add_processor(config.processor, None);
        index.add_processor(&pmu_regs::arch::PROCESSOR, Some(Home::Arch));
        // Boxes the table places are modelled where this part's table puts them.
        let boxes = placed_boxes(config.processor, config.sockets);
        index.add_placed(boxes);
        let uncore = uncore::Model::new(boxes, config.broken, config.no_reset);
        // A per-CPU box whose registers the architectural model has not taken over.
        let core_box = boxes
            .boxes
            .iter()
            .filter(|b| b.scope() == pmu_regs::Scope::Cpu)
            .find(|b| {
                b.counters.first().is_some_and(|c| {
                    matches!(index.get(&c.counter.addr.location), Some((_, Home::Cpu)))
                })
            })
            .map(|b| b.instance);
        let sockets = config.sockets.max(1) as usize;
        let cpus = (config.sockets.max(1) * config.cpus_per_socket.max(1)) as usize;
        let mut socket = part::socket_state(&config);
        quirks::power_on(boxes, &mut socket.regs);
        let domains = domains::SimDomains::of(config.processor);
        // One table per domain stands for every die's: its global control holds each socket.
        socket.domain_globals = domains.as_ref().map(|d| d.globals()).unwrap_or_default();
        let sysregs = pmuv3::Pmuv3Regs::of(config.processor);
        let pmuv3 = sysregs.power_on();
        let sim = Self {
            config,
            index,
            uncore,
            windows: mmio::Windows::new(config.processor, sockets).with_placed(boxes, sockets),
            core_box,
            sysregs,
            state: Mutex::new(SimState {
                uncore: (0..sockets as u32)
                    .map(|s| part::with_stack_buses(&config, s, socket.clone()))
                    .collect(),
                cores: vec![Default::default(); cpus],
                l3s: vec![socket; cpus],
                cpus: vec![arch::CpuState::new(config.arch); cpus],
                pmuv3: vec![pmuv3; cpus],
                journal: Journal::default(),
            }),
            claims: OnceLock::new(),
            workload: Mutex::default(),
            discovery: Mutex::new(None),
            domains,
        };
        // The table lists the memory-mapped boxes at the addresses this part's windows give.
        let devices = sim.uncore_devices();
        let mmio = |r: crate::boxes::Reg| match crate::table_placed::site(r.addr, 0) {
            Some(Ok(Site::Mmio(a))) => Some(a),
            Some(_) => None,
            None => match place_of(&sim, &devices, 0, r.info, r.addr) {
                Ok(Site::Mmio(a)) => Some(a),
                _ => None,
            },
        };
        let table =
            table_format::simulated_table_placed(boxes, DISCOVERY_TABLE, DISCOVERY_DEVICE, &mmio);
        // A part with discovery domains has no table behind the generic device: its domains'
        // tables list its boxes.
        if sim.domains.is_none() {
            sim.publish_discovery_table(table);
        }
        sim
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, SimState> {
        // A panic while holding the lock leaves consistent register values behind.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hardware threads per core: 2 where the part has SMT, so the CPUs of a socket are
    /// sibling threads that run the workload in step and a control's any-thread bit counts
    /// both ([`counting`]); 1 on Intel's E-cores (Sierra and Clearwater Forest), found as a
    /// core list with the E-core top-down event `TOPDOWN_FE_BOUND.ALL_P`.
    pub fn threads_per_core(&self) -> u32 {
        let e_core = self
            .config
            .processor
            .core_events
            .is_some_and(|c| c.events.iter().any(|e| e.name == "TOPDOWN_FE_BOUND.ALL_P"));
        if e_core {
            1
        } else {
            2
        }
    }

    /// The simulated machine's topology. Its cores per socket are the part's (see
    /// [`SimConfig::part`]) where a unit's box count is its cores, else one per CPU.
    pub fn topology(&self) -> Topology {
        let per = self.config.cpus_per_socket.max(1);
        let topology = Topology::from_sockets(
            (0..self.config.sockets.max(1)).map(|s| (s, (s * per..(s + 1) * per).collect())),
        )
        .with_cpus_per_l3(self.cpus_per_l3());
        match part::cores_per_socket(&self.config) {
            Some(cores) => topology.with_cores_per_socket(cores),
            None => topology,
        }
    }

    /// The uncore PCI devices of every simulated socket, as discovery would find them (none
    /// for a processor whose boxes are all MSRs).
    pub fn uncore_devices(&self) -> UncoreDevices {
        let buses: Vec<(u16, u8)> = (0..self.config.sockets.max(1))
            .map(|s| (0, sim_bus(s)))
            .collect();
        let mut devices = UncoreDevices::complete(self.config.processor, &buses);
        let absent = part::absent_devices(&self.config);
        for s in &mut devices.sockets {
            s.devices
                .retain(|(id, b)| !absent.contains(&(*id, b.device, b.function)));
        }
        devices
    }

    /// The uncore discovery table this part publishes: the one built from its spec
    /// ([`table_format::simulated_table`], at [`DISCOVERY_TABLE`], located by
    /// [`DISCOVERY_DEVICE`]'s capability) for a processor with discovery types, `None` for
    /// one without, or what [`Sim::publish_discovery_table`] put in its place.
    pub fn discovery_table(&self) -> Option<MemoryTable> {
        self.discovery
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Publishes `table` instead (`None`: no table at all), as a part with a wrong,
    /// corrupted or missing table would: what tests of the discovery join feed sessions.
    pub fn publish_discovery_table(&self, table: Option<MemoryTable>) {
        *self.discovery.lock().unwrap_or_else(|p| p.into_inner()) = table;
    }

    /// The tables of the part's discovery domains, for a part with domains
    /// (`ProcessorInfo::discovery_domains`).
    pub fn domains(&self) -> Option<&domains::SimDomains> {
        self.domains.as_ref()
    }

    /// The value of the domain table's global control at `address`, if one is there.
    fn domain_global(&self, address: u64) -> Option<u32> {
        let st = self.lock();
        let g = st.uncore.first()?.domain_globals.iter();
        g.clone().find(|g| g.address == address).map(|g| g.value)
    }

    /// Writes `value` to the domain table's global control at `address` (on every socket);
    /// `false` where none is there.
    fn set_domain_global(&self, address: u64, value: u32) -> bool {
        let mut st = self.lock();
        let mut found = false;
        for sock in &mut st.uncore {
            for g in sock
                .domain_globals
                .iter_mut()
                .filter(|g| g.address == address)
            {
                g.value = value;
                found = true;
            }
        }
        found
    }

    /// CPUID leaf 0AH of every simulated CPU.
    pub fn cpuid_0a(&self) -> Cpuid0A {
        self.config.arch.cpuid()
    }

    /// CPUID leaf `leaf` of every simulated CPU, as `[EAX, EBX, ECX, EDX]`: leaf 0AH from the
    /// architectural PMU's configuration, any other leaf built from the `count-cpuid` bits of
    /// the processor's registers that name it (each the count [`SimConfig::cpuid_counts`]
    /// gives, or the register's `count`), and the bits a unit's box count is read from
    /// (the simulated part's); `None` for a leaf nothing names.
    pub fn cpuid(&self, leaf: u32) -> Option<[u32; 4]> {
        if leaf == 0x0A {
            let c = self.cpuid_0a();
            return Some([c.eax, c.ebx, c.ecx, c.edx]);
        }
        let mut regs = None;
        let registers = self
            .config
            .processor
            .units
            .iter()
            .flat_map(|u| u.registers.iter());
        for r in registers {
            let Some(text) = r.count_cpuid else { continue };
            let Some(bits) = crate::cpuid::CpuidBits::parse(text).filter(|b| b.leaf == leaf) else {
                continue;
            };
            let count = self
                .config
                .cpuid_counts
                .iter()
                .find(|(t, _)| *t == text)
                .map_or(r.count, |(_, n)| *n);
            regs = Some(bits.insert(regs.unwrap_or([0; 4]), count));
        }
        part::cpuid_box_counts(&self.config, leaf, regs)
    }

    /// CPUs per L3 (the whole socket where the configuration says 0).
    fn cpus_per_l3(&self) -> u32 {
        let per = self.config.cpus_per_socket.max(1);
        match self.config.cpus_per_l3 {
            0 => per,
            n => n.min(per),
        }
    }

    /// The L3 `cpu` shares: the index of its lowest CPU.
    fn l3_of_cpu(&self, cpu: u32) -> Option<usize> {
        let per = self.config.cpus_per_socket.max(1);
        let n = self.cpus_per_l3();
        let socket = self.socket_of_cpu(cpu)? as u32;
        Some((socket * per + (cpu - socket * per) / n * n) as usize)
    }

    /// Whether `instance` is a box of a `scope="l3"` unit.
    fn is_l3_box(&self, instance: &str) -> bool {
        self.uncore
            .boxes
            .boxes
            .iter()
            .any(|b| b.instance.eq_ignore_ascii_case(instance) && b.scope() == pmu_regs::Scope::L3)
    }

    /// Injects `count` events into box `event.instance` of the L3 that `cpu` shares (a box of
    /// a `scope="l3"` unit).
    pub fn inject_l3(&self, cpu: u32, event: UncoreEvent, count: u64) -> Result<()> {
        self.inject_l3_masked(cpu, event, None, count)
    }

    /// [`Self::inject_l3`] of events that put `masks` in their controls' mask fields.
    fn inject_l3_masked(
        &self,
        cpu: u32,
        event: UncoreEvent,
        masks: Option<StreamMasks>,
        count: u64,
    ) -> Result<()> {
        if !self.is_l3_box(event.instance) {
            return Err(self.no_box(event.instance));
        }
        let l3 = self.l3_of_cpu(cpu).ok_or_else(|| self.bad_cpu(cpu))?;
        let mut guard = self.lock();
        let st = &mut *guard;
        let (skew, journal) = (self.config.freeze_skew, &mut st.journal);
        self.uncore.inject(
            l3,
            &mut st.l3s[l3],
            &event,
            masks.as_ref(),
            count,
            skew,
            journal,
        );
        Ok(())
    }

    fn socket_of_cpu(&self, cpu: u32) -> Option<usize> {
        let per = self.config.cpus_per_socket.max(1);
        (cpu < self.config.sockets.max(1) * per).then_some((cpu / per) as usize)
    }

    /// The socket one of whose uncore devices is on `bdf`'s bus (a socket's devices may
    /// span two buses: see [`UncoreDevices::complete`]).
    fn socket_of_bus(&self, bdf: Bdf) -> Option<usize> {
        let on_bus = |s: &crate::access::SocketDevices| {
            s.bus == bdf.bus || s.devices.iter().any(|(_, b)| b.bus == bdf.bus)
        };
        self.uncore_devices().sockets.iter().position(on_bus)
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

    fn no_box(&self, instance: &str) -> Error {
        UsageError::NoSuchBox {
            name: format!("{instance} in the simulated {}", self.config.processor.id),
            available: self.uncore.instances().join(", "),
        }
        .into()
    }

    /// Injects `count` events into box `event.instance` of `socket` (for a box of a
    /// `scope="l3"` unit: of the socket's first L3; [`Self::inject_l3`] chooses the L3).
    pub fn inject_uncore(&self, socket: usize, event: UncoreEvent, count: u64) -> Result<()> {
        self.inject_uncore_masked(socket, event, None, count)
    }

    /// [`Self::inject_uncore`] of events that put `masks` in their controls' mask fields
    /// (Intel's UMaskExt, PortMask, FCMask): only counters whose fields hold the same count
    /// them.
    pub fn inject_uncore_masked(
        &self,
        socket: usize,
        event: UncoreEvent,
        masks: Option<StreamMasks>,
        count: u64,
    ) -> Result<()> {
        if self.is_l3_box(event.instance) {
            let per = self.config.cpus_per_socket.max(1);
            if socket >= self.config.sockets.max(1) as usize {
                return Err(self.bad_socket(socket).into());
            }
            return self.inject_l3_masked(socket as u32 * per, event, masks, count);
        }
        let mut guard = self.lock();
        let st = &mut *guard;
        let sock = st
            .uncore
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        if self.uncore.inject(
            socket,
            sock,
            &event,
            masks.as_ref(),
            count,
            self.config.freeze_skew,
            &mut st.journal,
        ) {
            Ok(())
        } else {
            Err(self.no_box(event.instance))
        }
    }

    /// Injects `count` events into a box in PCI space: the same as [`Self::inject_uncore`].
    pub fn inject_pci(&self, socket: usize, event: PciEvent, count: u64) -> Result<()> {
        self.inject_uncore(socket, event, count)
    }

    /// Sends `count` packets with header `words` through box `instance` of `socket`: the
    /// counters that select its filters' event count those every filter accepts.
    pub fn inject_filtered(
        &self,
        socket: usize,
        instance: &str,
        words: &[u64],
        count: u64,
    ) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let sock = st
            .uncore
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        self.uncore
            .inject_filtered(
                socket,
                sock,
                instance,
                words,
                count,
                self.config.freeze_skew,
                &mut st.journal,
            )
            .ok_or_else(|| {
                UsageError::NoSuchBox {
                    name: format!("{instance} with a packet filter"),
                    available: self.uncore.filtered_instances().join(", "),
                }
                .into()
            })
    }

    /// Sends `count` packets through QPI port `port` (`"P0"`, `"P1"`) of `socket`.
    pub fn inject_qpi_packet(
        &self,
        socket: usize,
        port: &str,
        packet: QpiPacket,
        count: u64,
    ) -> Result<()> {
        self.inject_filtered(
            socket,
            port,
            &[u64::from(packet.word0), u64::from(packet.word1)],
            count,
        )
    }

    /// Raises (or drops) the freeze signal on `socket`: boxes with freeze enabled stop.
    pub fn set_freeze_signal(&self, socket: usize, on: bool) -> Result<()> {
        let mut st = self.lock();
        let sock = st
            .uncore
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        self.uncore.set_freeze_signal(sock, on);
        Ok(())
    }

    /// Whether box `instance` of `socket` is frozen.
    pub fn is_frozen(&self, socket: usize, instance: &str) -> Result<bool> {
        let st = self.lock();
        let sock = st
            .uncore
            .get(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        self.uncore
            .is_frozen(sock, instance)
            .ok_or_else(|| self.no_box(instance))
    }

    /// Uncore counters that wrapped on `socket`: (register, injected event number).
    pub fn pci_overflows(&self, socket: usize) -> Vec<(&'static str, u64)> {
        self.lock()
            .uncore
            .get(socket)
            .map(|s| s.overflows.clone())
            .unwrap_or_default()
    }
    /// Reads the Arm system register `encoding` on `cpu` (`mrs`), as [`pmuv3`] describes; an
    /// encoding the processor has no PMU register at, or an event counter the core does not
    /// implement, is refused (the instruction being UNDEFINED) with an error saying which.
    pub fn read_sysreg(&self, cpu: u32, encoding: pmu_regs::SysRegEncoding) -> Result<u64> {
        let st = self.lock();
        let pmu = st
            .pmuv3
            .get(cpu as usize)
            .ok_or_else(|| self.bad_cpu(cpu))?;
        pmu.read(&self.sysregs, Location::SysReg(encoding))
            .map_err(|why| self.refused_sysreg(encoding, why))
    }

    /// Writes `raw` to the Arm system register `encoding` on `cpu` (`msr`); a read-only
    /// register or a reserved bit set is refused and nothing is written.
    pub fn write_sysreg(
        &self,
        cpu: u32,
        encoding: pmu_regs::SysRegEncoding,
        raw: u64,
    ) -> Result<()> {
        let mut st = self.lock();
        let pmu = st
            .pmuv3
            .get_mut(cpu as usize)
            .ok_or_else(|| self.bad_cpu(cpu))?;
        pmu.write(&self.sysregs, Location::SysReg(encoding), raw)
            .map_err(|why| self.refused_sysreg(encoding, why))
    }

    /// Injects `count` events of Arm event number `event` on `cpu` at `level`: the core
    /// PMU's counters that are enabled and select it count them ([`pmuv3`]); event
    /// [`pmuv3::CPU_CYCLES`] also advances the cycle counter.
    pub fn inject_pmuv3(
        &self,
        cpu: u32,
        event: u16,
        level: pmuv3::ExceptionLevel,
        count: u64,
    ) -> Result<()> {
        let mut st = self.lock();
        let pmu = st
            .pmuv3
            .get_mut(cpu as usize)
            .ok_or_else(|| self.bad_cpu(cpu))?;
        pmu.count(&self.sysregs, event, level, count);
        Ok(())
    }

    /// Injects `count` core events (event select and umask) on `cpu`: into an Arm core's PMU
    /// system registers at EL0 ([`pmuv3`], the umask ignored), into the simulated
    /// processor's own per-CPU box where it has one (see [`Self::core_box`]), else into the
    /// architectural counters.
    pub fn inject_core(&self, cpu: u32, ev_sel: u16, umask: u16, count: u64) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if !self.sysregs.is_empty() {
            // An Arm core: its PMU's event number is the select; a workload runs at EL0.
            let pmu = st
                .pmuv3
                .get_mut(cpu as usize)
                .ok_or_else(|| self.bad_cpu(cpu))?;
            pmu.count(&self.sysregs, ev_sel, pmuv3::ExceptionLevel::El0, count);
            return Ok(());
        }
        if let Some(instance) = self.core_box {
            let state = st
                .cores
                .get_mut(cpu as usize)
                .ok_or_else(|| self.bad_cpu(cpu))?;
            let event = UncoreEvent {
                instance,
                ev_sel,
                umask: Some(umask),
            };
            let (skew, journal) = (self.config.freeze_skew, &mut st.journal);
            self.uncore
                .inject(cpu as usize, state, &event, None, count, skew, journal);
            return Ok(());
        }
        let state = st
            .cpus
            .get_mut(cpu as usize)
            .ok_or_else(|| self.bad_cpu(cpu))?;
        state.inject(cpu, ev_sel, umask, count, &mut st.journal);
        Ok(())
    }

    /// What architectural MSR `address` of `cpu` holds (`None` where it faults).
    fn core_msr(&self, cpu: u32, address: u32) -> Option<u64> {
        let reg = arch_reg_at(address)?;
        self.lock().cpus.get(cpu as usize)?.read(&reg)
    }

    /// The box of the simulated processor's own per-CPU unit (a core PMU described by the
    /// spec's structure, not by the architectural layout), if it has one: what
    /// [`Self::inject_core`] counts into.
    pub fn core_box(&self) -> Option<&'static str> {
        self.core_box
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

    /// Runs `stream` from now on: [`Self::advance`] feeds it its events.
    pub fn start_stream(&self, stream: Stream) -> StreamId {
        let mut w = self.workload.lock().unwrap_or_else(|p| p.into_inner());
        let id = StreamId(w.next);
        w.next += 1;
        w.running.push((id, stream, 0));
        id
    }

    /// Stops the streams `ids`.
    pub fn stop_streams(&self, ids: &[StreamId]) {
        self.workload
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .running
            .retain(|(id, _, _)| !ids.contains(id));
        self.stop_named(ids);
    }

    /// Brings the streams `ids` to time `t` of their clock (time 0: when they started):
    /// each gets the events its rate gives it up to `t` that it has not had yet.
    pub fn advance(&self, ids: &[StreamId], t: std::time::Duration) -> Result<()> {
        self.advance_named(ids, t);
        let mut due = Vec::new();
        {
            let mut w = self.workload.lock().unwrap_or_else(|p| p.into_inner());
            for (id, stream, done) in &mut w.running {
                if !ids.contains(id) {
                    continue;
                }
                let total = stream.rate.events_until(t);
                if total > *done {
                    due.push((*stream, total - *done));
                    *done = total;
                }
            }
        }
        for (s, count) in due {
            match s.target {
                StreamTarget::Core { cpu } => {
                    if s.aux
                        .is_none_or(|a| self.core_msr(cpu, a.address) == Some(a.value))
                    {
                        self.inject_core(cpu, s.ev_sel, s.umask.unwrap_or(0), count)?
                    }
                }
                StreamTarget::L3 { cpu, instance } => self.inject_l3_masked(
                    cpu,
                    UncoreEvent {
                        instance,
                        ev_sel: s.ev_sel,
                        umask: s.umask,
                    },
                    s.masks,
                    count,
                )?,
                StreamTarget::Uncore { socket, instance } => self.inject_uncore_masked(
                    socket,
                    UncoreEvent {
                        instance,
                        ev_sel: s.ev_sel,
                        umask: s.umask,
                    },
                    s.masks,
                    count,
                )?,
            }
        }
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

    /// Whether `socket`'s uncore has raised a PMI not yet handled (on the Xeon 7500,
    /// U_MSR_PMON_GLOBAL_SUMMARY.pmi, which no public source gives an address for).
    pub fn uncore_pmi_pending(&self, socket: usize) -> Result<bool> {
        let st = self.lock();
        st.uncore
            .get(socket)
            .map(|s| s.pmi)
            .ok_or_else(|| self.bad_socket(socket).into())
    }

    /// Clears the PMI state of `socket` (as handling the interrupt does).
    pub fn acknowledge_uncore_pmi(&self, socket: usize) -> Result<()> {
        let mut st = self.lock();
        let sock = st
            .uncore
            .get_mut(socket)
            .ok_or_else(|| self.bad_socket(socket))?;
        self.uncore.acknowledge_pmi(sock);
        Ok(())
    }

    /// The overflow-hierarchy bits set on `socket` in registers no public source gives an
    /// address for (the Xeon 7500 S-box summaries), as `REGISTER.field`.
    pub fn hidden_bits(&self, socket: usize) -> Result<Vec<&'static str>> {
        let st = self.lock();
        st.uncore
            .get(socket)
            .map(|sock| self.uncore.hidden_bits(sock))
            .ok_or_else(|| self.bad_socket(socket).into())
    }

    fn refused_sysreg(&self, encoding: pmu_regs::SysRegEncoding, why: pmuv3::Refused) -> Error {
        UsageError::BadValue {
            text: format!(
                "system register {encoding} on the simulated {}",
                self.config.processor.id
            ),
            expected: why.into(),
        }
        .into()
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
        let (reg, home) = self
            .index
            .get(&Location::Msr(address))
            .ok_or_else(|| Self::rejected(Op::Read, target))?;
        let st = self.lock();
        match home {
            Home::Arch => st.cpus[cpu as usize]
                .read(&reg)
                .ok_or_else(|| Self::rejected(Op::Read, target)),
            Home::Cpu => Ok(self.uncore.read(&st.cores[cpu as usize], &reg)),
            Home::L3 => Ok(self.uncore.read(&st.l3s[self.l3_of(cpu)], &reg)),
            Home::Socket => Ok(self.uncore.read(&st.uncore[socket], &reg)),
        }
    }

    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        let target = Target::Msr { cpu, address };
        let socket = self
            .socket_of_cpu(cpu)
            .ok_or_else(|| Self::no_cpu(Op::Write, cpu, address))?;
        let (reg, home) = self
            .index
            .get(&Location::Msr(address))
            .ok_or_else(|| Self::rejected(Op::Write, target))?;
        let mut st = self.lock();
        let sock = match home {
            Home::Arch => {
                return if st.cpus[cpu as usize].write(&reg, value) {
                    Ok(())
                } else {
                    Err(Self::rejected(Op::Write, target))
                };
            }
            Home::Cpu => &mut st.cores[cpu as usize],
            Home::L3 => &mut st.l3s[self.l3_of(cpu)],
            Home::Socket => &mut st.uncore[socket],
        };
        let old = sock.regs.get(&reg);
        let w =
            regs::write(reg.info, old, value).ok_or_else(|| Self::rejected(Op::Write, target))?;
        sock.regs.put(&reg, w.stored);
        self.uncore.after_write(sock, &reg, value, w.actions);
        Ok(())
    }
}

impl Sim {
    /// The L3 of a CPU already checked to exist.
    fn l3_of(&self, cpu: u32) -> usize {
        self.l3_of_cpu(cpu).unwrap_or(cpu as usize)
    }

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

    /// The simulated device id at `bdf`.
    fn device_id(&self, bdf: Bdf) -> Option<u16> {
        self.uncore_devices()
            .sockets
            .iter()
            .flat_map(|s| s.devices.iter())
            .find(|(_, b)| *b == bdf)
            .map(|(id, _)| *id)
    }

    /// The register a dword belongs to, and whether it is the upper half of a 64-bit one.
    fn pci_reg(&self, bdf: Bdf, offset: u16) -> Option<(Reg, bool)> {
        // A function no spec'd device answers at is a table-placed PCI box's (device id 0).
        let device_id = self.device_id(bdf).unwrap_or(0);
        let at = |off: u16| Location::Pci {
            device_id,
            device: bdf.device,
            function: bdf.function,
            offset: off,
        };
        if let Some((r, _)) = self.index.get(&at(offset)) {
            return Some((r, false));
        }
        let (r, _) = self.index.get(&at(offset.checked_sub(4)?))?;
        (r.info.width == 64).then_some((r, true))
    }
}

impl PciAccess for Sim {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        let target = Target::Pci { bdf, offset };
        let socket = self
            .socket_of_bus(bdf)
            .ok_or_else(|| self.no_device(Op::Read, bdf, offset))?;
        // Unimplemented config space reads as zero, as on hardware; a memory-mapped window's
        // base device publishes its piece of the base.
        let Some((reg, high)) = self.pci_reg(bdf, offset) else {
            let _ = target;
            let base = self.device_id(bdf).and_then(|id| {
                self.windows
                    .dword(socket, id, bdf.device, bdf.function, offset)
            });
            return Ok(base.unwrap_or(0));
        };
        let v = self.uncore.read(&self.lock().uncore[socket], &reg);
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
        let sock = &mut st.uncore[socket];
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
        self.uncore.after_write(sock, &reg, raw, w.actions);
        Ok(())
    }
}

/// The memory-mapped registers: at the addresses their windows' bases (published in the base
/// device's config dwords) give; an access of the wrong width, or where no register is, faults.
impl MmioAccess for Sim {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        // A discovery domain table's global control: 32 bits.
        if let Some(v) = self.domain_global(address).filter(|_| width == 32) {
            return Ok(u64::from(v));
        }
        let (socket, reg) = self.mmio_reg(Op::Read, address, width)?;
        Ok(self.uncore.read(&self.lock().uncore[socket], &reg))
    }

    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        if width == 32 && self.set_domain_global(address, value as u32) {
            return Ok(());
        }
        let (socket, reg) = self.mmio_reg(Op::Write, address, width)?;
        let mut st = self.lock();
        let sock = &mut st.uncore[socket];
        let old = sock.regs.get(&reg);
        let w = regs::write(reg.info, old, value)
            .ok_or_else(|| Self::rejected(Op::Write, Target::Mmio { address }))?;
        sock.regs.put(&reg, w.stored);
        self.uncore.after_write(sock, &reg, value, w.actions);
        Ok(())
    }
}

impl Sim {
    /// The register at `address`, accessed `width` bits wide.
    fn mmio_reg(&self, op: Op, address: u64, width: u32) -> BackendResult<(usize, Reg)> {
        match self.windows.at(address) {
            Some((socket, reg)) if reg.info.width == width => Ok((socket, reg)),
            _ => Err(Self::rejected(op, Target::Mmio { address })),
        }
    }

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

impl Sim {
    /// The slot for what the machine layer keeps per simulator (its PMU claims).
    pub(crate) fn claims(&self) -> &OnceLock<Box<dyn std::any::Any + Send + Sync>> {
        &self.claims
    }
}

impl UncoreSummary for Sim {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        self.uncore_pmi_pending(socket).ok()
    }
    fn hidden_bit(&self, socket: usize, bit: &BitRef) -> Option<bool> {
        let st = self.lock();
        self.uncore.hop_bit(st.uncore.get(socket)?, bit)
    }
    fn acknowledge_pmi(&self, socket: usize) {
        let _ = self.acknowledge_uncore_pmi(socket);
    }
}
