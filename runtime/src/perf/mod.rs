//! Linux perf as a backend: counting uncore and core events through the kernel's own PMU
//! drivers, without root (CAP_PERFMON or a permissive `perf_event_paranoid` suffices) and
//! without fighting those drivers for the registers.
//!
//! - [`sysfs`]: a PMU's `type`, `format/*`, `cpumask` and `events/*` under a configurable root.
//! - [`format`](mod@format): the format files' syntax (`config:0-7`, `config1:0-31`, `config:0-7,21`).
//! - [`names`]: which kernel PMU counts which of our boxes (`uncore_cbox_3`, `cpu`), and the
//!   drivers' formats.
//! - [`encode`]: a control-register value (our fields) to `config`/`config1`/`config2` and
//!   the event string `perf` accepts; refuses what the PMU's format cannot express.
//! - [`generic`](mod@generic): the kernel's generic events by `type` and `config`.
//! - [`syntax`]: perf's own event language (`msr/tsc/`, `cycles:u`, `cpu-clock`), so a
//!   `perf stat -e` list can be pasted.
//! - [`layer`]: the syscalls behind a trait ([`PerfLayer`]): [`syscall`] is the kernel's;
//!   `sim_perf::SimPerf` a kernel driver over the simulator, for tests.
//! - [`counting`]: one group per box on the CPU its `cpumask` names, read with the time
//!   enabled and running (multiplexing shows).
//!
//! - [`task`]: one event counted for tasks rather than a box, as `perf stat` counts: the
//!   commands this process starts (inherited, enabled on their exec), a running task, or
//!   every task on a CPU.
//!
//! Counting is all it does: sampling on overflow with a PMI needs the raw backends.
//!
//! ```no_run
//! use pmu_runtime::perf::{counting::BoxGroup, encode, sysfs::EventSources};
//!
//! let msr = EventSources::default().pmu("msr", "the msr PMU (arch/x86/events/msr.c)")?;
//! let tsc = encode::from_terms(&msr, "tsc")?;
//! assert_eq!(tsc.to_string(), "msr/event=0x0/");
//! let mut group = BoxGroup::open(&msr, Some(0), &[tsc])?;
//! group.enable()?;
//! let counts = group.read()?;
//! println!("{} cycles of the TSC, multiplexed: {}", counts[0].count, counts[0].multiplexed());
//! # Ok::<(), pmu_runtime::perf::PerfError>(())
//! ```

#[cfg(target_os = "linux")]
pub mod cgroup;
pub mod counting;
pub mod encode;
pub mod error;
pub mod format;
pub mod generic;
pub mod layer;
pub mod mesh;
pub mod names;
#[cfg(target_os = "linux")]
pub mod session;
pub mod syntax;
#[cfg(target_os = "linux")]
pub mod syscall;
pub mod sysfs;
#[cfg(target_os = "linux")]
pub mod task;

pub use encode::PerfEvent;
pub use error::{FormatWayOut, PerfError};
pub use layer::PerfLayer;
pub use names::{PerfNames, PmuName, SpecNames};
pub use syntax::EventSpec;
pub use sysfs::{EventSources, KernelPmu};
