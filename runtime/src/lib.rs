//! Runtime support for the registers of [`pmu_regs`]: backends that reach them and a
//! simulated PMU that behaves like them.
//!
//! - [`MsrAccess`] / [`PciAccess`] / [`MmioAccess`]: the raw interfaces, 64-bit MSRs by CPU,
//!   32-bit PCI config dwords by device, memory-mapped registers by physical address; a
//!   backend's own register space is an [`access::RegisterSpace`]. [`MsrAccessExt::on_cpu`] and [`PciAccessExt::on_device`] give
//!   typed access with the generated register types: `read`, `write` (refuses read-only
//!   registers and reserved bits before anything is written) and `modify` (never writes
//!   reserved bits back).
//! - [`msr::MsrDev`]: `/dev/cpu/N/msr`. [`pci::PciSysfs`]: `/sys/bus/pci/devices/<BDF>/config`,
//!   with discovery of each socket's uncore devices. Both roots are configurable.
//! - [`access::Topology`]: which CPU serves each socket's uncore MSRs;
//!   [`access::UncoreDevices`]: where each socket's uncore PCI devices are.
//! - [`sim::Sim`]: the simulated PMU. [`fault::Faulty`]: fails a chosen access, for tests.
//! - [`sampling`]: the guides' procedures: configure, poll, sample after N events, walk the
//!   overflow hierarchy, re-arm, on any processor whose spec declares the structure; box
//!   freeze, resets and packet filters; architectural counters.
//! - [`boxes`]: every box of a processor, from the structure its spec declares, and the one
//!   encoder of an event selection into a counter's control value.
//! - [`counters`]: counting on any box through that structure, beneath sampling, sessions
//!   and the simulated perf driver.
//! - [`perf`]: Linux perf as a backend: counting through the kernel's PMU drivers.
//!   [`sim_perf`]: a kernel perf driver over the simulator, behind the same syscall trait.
//! - [`lookup`]: registers by name. [`codec`]: values to named fields and back.
//! - [`machine::Machine`]: what reaches the registers, behind the open seam
//!   [`machine::MachineBackend`] (the hardware's file trees under a configurable root, the
//!   simulator, or a backend registered with [`machine::Machine::with_backend`]), and where
//!   on it a register instance lives (`--cpu`, `--socket`, `--device`).
//! - [`ownership`]: one session per PMU, checked in-process and across processes.
//! - [`session`]: counting sessions, what `pmu watch` and `pmu serve` run: a selection of
//!   boxes and events over a backend (registers, perf, the simulator), opened, read per
//!   interval and put back.
//! - [`discovery`]: the uncore discovery table (Sapphire Rapids on): located through PCI,
//!   read through memory-mapped access, checked, and joined with the spec's boxes.
//!   [`table_format`]: the table's bytes, which the reader and the simulator both use.
//! - [`apmt`]: the ACPI APMT table (the CoreSight PMUs of an Arm SoC), read from its bytes
//!   and checked. [`cspmu`]: the CoreSight PMUs it lists, identified by their PMIIDR and
//!   counted on with everything put back. [`soc`]: which SoC an Arm machine is, by its SMCCC
//!   SOC_ID.
//! - `perfmon` (feature `perfmon`): event descriptions from Intel's perfmon JSON files, and
//!   what an event sets beyond its code and umask, as `pmu list --events` shows them.
//! - [`detect`]: what this machine has, as data: the processor `/proc/cpuinfo` describes,
//!   the specs that describe it, and how its discovery tables agree with the spec.
//! - [`quirks`]: the hardware quirks the spec records (a power-on freeze that global
//!   initialisation lifts, counters that saturate), which counting applies unless told not to.
//! - `check`: the parts of `pmu check`, the conformance run for a real machine (first:
//!   what else holds the counters).
//! - [`error`]: errors typed by layer (backend, usage, sampling).
//!
//! Layers depend one way: [`access`] (traits, [`Bdf`], topology, uncore devices, backend
//! errors) <- [`boxes`]/[`lookup`]/[`codec`]/[`table_format`]/[`quirks`] <- backends ([`msr`], [`pci`],
//! [`mmio`], [`sim`], [`fault`]) <- [`counters`] (which owns [`counters::delta`]) and
//! [`discovery`] <- [`sampling`] <- [`machine`] (and [`perf`] beside it) <- [`session`] <-
//! [`metrics`] <- `export` and `check` <- the `pmu` binary. The simulator imports neither [`discovery`]
//! nor [`ownership`], and the session reaches no simulator (its workload is the machine's:
//! [`machine::Workload`]). `runtime/tests/layers.rs` checks it, and that no module folder
//! has an import cycle and no type name is defined twice.
//!
//! ```
//! use pmu_regs::arch::core::{Ia32PerfEvtSel, IA32_PERFEVTSEL};
//! use pmu_runtime::{sim::Sim, MsrAccessExt};
//!
//! let sim = Sim::new(Default::default());
//! let cpu = sim.on_cpu(1);
//! cpu.write(IA32_PERFEVTSEL[0], Ia32PerfEvtSel::RESET.with_ev_sel(0x3c).with_usr(true).with_en(true))?;
//! let sel = cpu.modify(IA32_PERFEVTSEL[0], |s| s.with_os(true))?;
//! assert!(sel.os() && sel.usr());
//! // Raw bits that set a reserved bit are refused before anything reaches the backend.
//! assert!(cpu.write_raw(IA32_PERFEVTSEL[0], 1 << 40).is_err());
//! # Ok::<(), pmu_runtime::BackendError>(())
//! ```

// Functions read in one sitting: at most 80 lines (clippy.toml), with no `allow`.
#![warn(clippy::too_many_lines)]

pub mod access;
pub mod apmt;
pub mod bounded;
pub mod boxes;
pub mod check;
pub mod cmn;
pub mod codec;
pub mod constants;
pub mod counters;
pub mod cpuid;
pub mod cspmu;
pub mod detect;
pub mod discovery;
pub mod error;
#[cfg(feature = "export")]
pub mod export;
pub mod fault;
pub mod identify;
pub mod lookup;
pub mod machine;
pub mod metrics;
pub mod midr;
pub mod mmio;
pub mod msr;
pub mod out_file;
pub mod ownership;
pub mod part;
pub mod pci;
pub mod perf;
#[cfg(feature = "perfmon")]
pub mod perfmon;
pub mod quirks;
#[cfg(feature = "json")]
pub mod report;
pub mod sampling;
#[cfg(target_os = "linux")]
pub mod session;
pub mod sim;
pub mod sim_perf;
pub mod soc;
#[cfg(target_os = "linux")]
pub mod stat;
pub mod table_format;
pub mod table_placed;
/// Sockets and their CPUs: in the access layer ([`access::Topology`]), kept here by its old name.
pub use access::topology;

pub use access::{
    read_by_info, write_by_info, Bdf, MmioAccess, MsrAccess, MsrAccessExt, OnCpu, OnDevice,
    PciAccess, PciAccessExt, Site, UncoreSummary,
};
pub use error::{AccessError, BackendError, Error, Op, Result, SamplingError, Target, UsageError};
