//! The perf syscall layer behind a trait: open a group of events of one PMU type on a CPU,
//! enable and disable it, read its values with the time it was enabled and running.
//!
//! [`counting::BoxGroup`](super::counting::BoxGroup) and the sessions above it speak only to
//! [`PerfLayer`]. The real layer is [`syscall::Syscalls`](super::syscall::Syscalls)
//! (`perf_event_open` through perf-event2); `pmu_runtime::sim_perf::SimPerf` is a kernel driver
//! over the simulated PMU, so that the same events injected into the simulator reach the perf
//! path and the raw path alike.

use std::io;
use std::time::Duration;

/// What `perf_event_open` is given for one event: `perf_event_attr`'s type, config words and
/// privilege filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventAttr {
    /// `perf_event_attr.type`: the PMU's `type` file.
    pub type_: u32,
    /// `[config, config1, config2]`.
    pub config: [u64; 3],
    /// Do not count user mode (the core PMU's `k` modifier).
    pub exclude_user: bool,
    /// Do not count the kernel (the core PMU's `u` modifier).
    pub exclude_kernel: bool,
}

/// A group's values, read at once: one count per event, in opening order, and the group's
/// times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupValues {
    /// The count of each event since the group was opened.
    pub counts: Vec<u64>,
    /// How long the group has been enabled.
    pub time_enabled: Duration,
    /// How long it has been on the hardware.
    pub time_running: Duration,
}

/// Why a group could not be opened.
#[derive(Debug)]
pub struct OpenError {
    /// The event that failed (its position in the group).
    pub index: usize,
    /// Whether that event opens on its own: the group, not the event, did not fit.
    pub fits_alone: bool,
    /// The error the kernel gave.
    pub source: io::Error,
}

/// Opens groups of events: `perf_event_open` or a stand-in for it.
pub trait PerfLayer: Send + Sync {
    /// Opens `events` (the first is the leader; all of one PMU) as one group, disabled, on
    /// `cpu` for every process (`None`: this process, on any CPU).
    fn open_group<'l>(
        &'l self,
        cpu: Option<u32>,
        events: &[EventAttr],
    ) -> Result<Box<dyn OpenGroup + 'l>, OpenError>;
}

/// An open group. Dropping it closes its events.
pub trait OpenGroup: Send {
    /// Starts counting.
    fn enable(&mut self) -> io::Result<()>;
    /// Stops counting.
    fn disable(&mut self) -> io::Result<()>;
    /// Reads every event of the group at once.
    fn read(&mut self) -> io::Result<GroupValues>;
}
