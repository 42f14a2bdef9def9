//! Counting through `perf_event_open`: one group per box on the CPU its `cpumask` names, read
//! with the time the group was enabled and running, so that multiplexing shows.
//!
//! The syscalls go through a [`PerfLayer`]: [`Syscalls`] (the kernel) by default, or any
//! stand-in ([`BoxGroup::open_on`]).

use std::fs;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::encode::PerfEvent;
use super::error::PerfError;
use super::layer::{EventAttr, OpenGroup, PerfLayer};
use super::syscall::Syscalls;
use super::sysfs::KernelPmu;

/// One reading of one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventReading {
    /// The count since the group was opened.
    pub count: u64,
    /// How long the group has been enabled.
    pub time_enabled: Duration,
    /// How long it has actually been on the hardware. Less than `time_enabled` means the
    /// kernel multiplexed it with other events.
    pub time_running: Duration,
}

impl EventReading {
    /// Whether the event shared its counter with others (time running < time enabled).
    pub fn multiplexed(&self) -> bool {
        self.time_running < self.time_enabled
    }

    /// The count scaled up to the whole enabled time, as `perf stat` reports a multiplexed
    /// count; `None` if the event never ran.
    pub fn scaled(&self) -> Option<u64> {
        if self.time_running.is_zero() {
            return None;
        }
        if !self.multiplexed() {
            return Some(self.count);
        }
        let scaled =
            u128::from(self.count) * self.time_enabled.as_nanos() / self.time_running.as_nanos();
        Some(u64::try_from(scaled).unwrap_or(u64::MAX))
    }

    /// The change since `earlier`, with the times of this interval.
    pub fn since(&self, earlier: &EventReading) -> EventReading {
        EventReading {
            count: self.count.wrapping_sub(earlier.count),
            time_enabled: self.time_enabled.saturating_sub(earlier.time_enabled),
            time_running: self.time_running.saturating_sub(earlier.time_running),
        }
    }
}

/// Where `/proc/sys/kernel/perf_event_paranoid` is, for the permission error.
const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// The current `perf_event_paranoid`, if readable.
pub fn paranoid() -> Option<i32> {
    fs::read_to_string(PathBuf::from(PARANOID))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Classifies a `perf_event_open` failure of `event` on `pmu`.
pub fn classify(
    e: io::Error,
    event: &str,
    pmu: &str,
    cpu: Option<u32>,
    opened: usize,
) -> PerfError {
    let event = event.to_string();
    let pmu = pmu.to_string();
    let no_pmu = matches!(
        e.raw_os_error(),
        Some(libc_errno::ENOENT) | Some(libc_errno::EOPNOTSUPP)
    );
    if no_pmu && pmu == "hardware" {
        // A generic hardware event (`cycles`) needs a core PMU; virtual machines often have none.
        return PerfError::NoHardwareEvents { event, source: e };
    }
    match e.raw_os_error() {
        Some(libc_errno::EACCES) | Some(libc_errno::EPERM) => PerfError::NoPermission {
            event,
            cpu,
            paranoid: paranoid(),
            source: e,
        },
        Some(libc_errno::EBUSY) => PerfError::Busy {
            event,
            pmu,
            source: e,
        },
        Some(libc_errno::ENOSPC) => PerfError::TooManyEvents {
            event,
            pmu,
            opened,
            source: e,
        },
        _ => PerfError::Rejected {
            event,
            pmu,
            source: e,
        },
    }
}

/// The errno values `perf_event_open` reports (x86-64 and every other Linux architecture
/// this crate builds for share them).
mod libc_errno {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const EOPNOTSUPP: i32 = 95;
    pub const EBUSY: i32 = 16;
    pub const EACCES: i32 = 13;
    #[cfg(test)]
    pub const EINVAL: i32 = 22;
    pub const ENOSPC: i32 = 28;
}

/// The counters of one box on one CPU, opened as one group: the kernel schedules a group
/// onto the hardware all at once or not at all, so its counts cover the same time.
pub struct BoxGroup<'l> {
    pmu: String,
    cpu: Option<u32>,
    labels: Vec<String>,
    group: Box<dyn OpenGroup + 'l>,
}

impl std::fmt::Debug for BoxGroup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxGroup")
            .field("pmu", &self.pmu)
            .field("cpu", &self.cpu)
            .field("events", &self.labels)
            .finish()
    }
}

/// What `perf_event_open` is given for `ev` of `pmu`.
fn attr(pmu: &KernelPmu, ev: &PerfEvent) -> EventAttr {
    EventAttr {
        type_: pmu.type_,
        config: ev.config,
        exclude_kernel: ev.modifier == Some('u'),
        exclude_user: ev.modifier == Some('k'),
    }
}

impl BoxGroup<'static> {
    /// Opens `events` of `pmu` as one group on `cpu` (`None`: this process, on any CPU),
    /// disabled, through `perf_event_open`. A failure names the event and the box; an event
    /// the box accepts alone but not beside the others is reported as too many events for
    /// the box.
    pub fn open(
        pmu: &KernelPmu,
        cpu: Option<u32>,
        events: &[PerfEvent],
    ) -> Result<Self, PerfError> {
        BoxGroup::open_on(&Syscalls, pmu, cpu, events)
    }
}

impl<'l> BoxGroup<'l> {
    /// [`BoxGroup::open`] through `layer`.
    pub fn open_on(
        layer: &'l dyn PerfLayer,
        pmu: &KernelPmu,
        cpu: Option<u32>,
        events: &[PerfEvent],
    ) -> Result<Self, PerfError> {
        if events.is_empty() {
            return Err(PerfError::NoPmuName {
                what: format!("a group of {}", pmu.name),
                reason: "no event was given".into(),
            });
        }
        let attrs: Vec<EventAttr> = events.iter().map(|e| attr(pmu, e)).collect();
        let group = layer.open_group(cpu, &attrs).map_err(|e| {
            let event = events
                .get(e.index)
                .map_or_else(String::new, |ev| ev.to_string());
            if e.fits_alone {
                PerfError::TooManyEvents {
                    event,
                    pmu: pmu.name.clone(),
                    opened: e.index,
                    source: e.source,
                }
            } else {
                classify(e.source, &event, &pmu.name, cpu, e.index)
            }
        })?;
        Ok(BoxGroup {
            pmu: pmu.name.clone(),
            cpu,
            labels: events.iter().map(ToString::to_string).collect(),
            group,
        })
    }

    /// The PMU.
    pub fn pmu(&self) -> &str {
        &self.pmu
    }

    /// The CPU the group counts on.
    pub fn cpu(&self) -> Option<u32> {
        self.cpu
    }

    /// The events, as perf strings, in reading order.
    pub fn events(&self) -> &[String] {
        &self.labels
    }

    fn io(&self, op: &'static str) -> impl FnOnce(io::Error) -> PerfError {
        let event = self.labels[0].clone();
        move |source| PerfError::Io { op, event, source }
    }

    /// Starts counting.
    pub fn enable(&mut self) -> Result<(), PerfError> {
        let err = self.io("enable");
        self.group.enable().map_err(err)
    }

    /// Stops counting (closing the group, by dropping it, also stops it).
    pub fn disable(&mut self) -> Result<(), PerfError> {
        let err = self.io("disable");
        self.group.disable().map_err(err)
    }

    /// Reads every event of the group at once.
    pub fn read(&mut self) -> Result<Vec<EventReading>, PerfError> {
        let err = self.io("read");
        let v = self.group.read().map_err(err)?;
        if v.counts.len() != self.labels.len() {
            return Err(self.io("read")(io::Error::other(
                "the group read did not include every event",
            )));
        }
        Ok(v.counts
            .iter()
            .map(|&count| EventReading {
                count,
                time_enabled: v.time_enabled,
                time_running: v.time_running,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(errno: i32) -> io::Error {
        io::Error::from_raw_os_error(errno)
    }

    #[test]
    fn open_failures_say_what_to_do() {
        let e = classify(
            os(libc_errno::EACCES),
            "uncore_ha/event=0x1/",
            "uncore_ha",
            Some(0),
            0,
        );
        let msg = e.to_string();
        assert!(
            msg.contains("perf_event_paranoid is")
                || msg.contains("perf_event_paranoid could not be read"),
            "{msg}"
        );
        assert!(
            msg.contains("CAP_PERFMON") && msg.contains("on CPU 0"),
            "{msg}"
        );
        let e = classify(os(libc_errno::EPERM), "x", "uncore_ha", None, 0);
        assert!(matches!(e, PerfError::NoPermission { .. }));
        let msg = classify(
            os(libc_errno::EBUSY),
            "uncore_cbox_3/event=0x34/",
            "uncore_cbox_3",
            Some(0),
            1,
        )
        .to_string();
        assert!(
            msg.contains("uncore_cbox_3/event=0x34/") && msg.contains("busy"),
            "{msg}"
        );
        let msg = classify(
            os(libc_errno::ENOSPC),
            "uncore_ha/event=0x2/",
            "uncore_ha",
            Some(0),
            4,
        )
        .to_string();
        assert!(
            msg.contains("does not fit in uncore_ha beside the 4 event(s)"),
            "{msg}"
        );
        let e = classify(os(libc_errno::EINVAL), "e", "p", Some(0), 0);
        assert!(matches!(e, PerfError::Rejected { .. }));
    }

    #[test]
    fn multiplexed_counts_scale_like_perf_stat() {
        let r = EventReading {
            count: 100,
            time_enabled: Duration::from_millis(40),
            time_running: Duration::from_millis(10),
        };
        assert!(r.multiplexed());
        assert_eq!(r.scaled(), Some(400));
        let never = EventReading {
            time_running: Duration::ZERO,
            ..r
        };
        assert_eq!(never.scaled(), None);
        let later = EventReading {
            count: 150,
            time_enabled: Duration::from_millis(60),
            time_running: Duration::from_millis(30),
        };
        assert_eq!(
            later.since(&r),
            EventReading {
                count: 50,
                time_enabled: Duration::from_millis(20),
                time_running: Duration::from_millis(20),
            }
        );
    }
}
