//! The real [`PerfLayer`]: `perf_event_open` through the `perf-event2` crate, which opens an
//! event of any PMU type with `config`/`config1`/`config2` on one CPU for every process,
//! builds groups and reads them with `PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
//! TOTAL_TIME_RUNNING`, and keeps the one `unsafe` call out of this crate (which forbids
//! `unsafe`).

use std::io;

use perf_event::events::Event;
use perf_event::{Builder, Counter, ReadFormat};

use super::layer::{EventAttr, GroupValues, OpenError, OpenGroup, PerfLayer};

/// `perf_event_open(2)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Syscalls;

/// `perf_event_attr` type and config words; what `perf_event_open` is given.
#[derive(Debug, Clone, Copy)]
pub(super) struct Attr {
    pub(super) type_: u32,
    pub(super) config: [u64; 3],
}

impl Event for Attr {
    fn update_attrs(self, attr: &mut perf_event_open_sys::bindings::perf_event_attr) {
        attr.type_ = self.type_;
        attr.config = self.config[0];
        attr.config1 = self.config[1];
        attr.config2 = self.config[2];
    }
}

/// `EINVAL`, which uncore drivers answer when a group does not fit the box.
const EINVAL: i32 = 22;

/// A builder for `ev` on `cpu`; a group `member` starts enabled, as `perf stat` opens its
/// members: it then counts whenever its leader does. A member opened disabled waits for
/// `PERF_IOC_FLAG_GROUP`, which Linux 6.18 (this machine's) does not honour for a member of
/// another kernel PMU than the leader's (`cpu-clock` leading `task-clock` or `page-faults`):
/// it stayed off and read 0 with the leader's times.
fn builder(ev: &EventAttr, cpu: Option<u32>, member: bool) -> Builder<'static> {
    let mut b = Builder::new(Attr {
        type_: ev.type_,
        config: ev.config,
    });
    b.enabled(member);
    // Uncore and msr PMUs refuse any exclude bit; only the core PMU's u/k modifier sets one.
    b.exclude_kernel(ev.exclude_kernel)
        .exclude_user(ev.exclude_user)
        .exclude_hv(false)
        .read_format(
            ReadFormat::GROUP
                | ReadFormat::ID
                | ReadFormat::TOTAL_TIME_ENABLED
                | ReadFormat::TOTAL_TIME_RUNNING,
        );
    match cpu {
        // A box (or a whole CPU): every process, on that CPU.
        Some(c) => {
            b.one_cpu(c as usize).any_pid();
        }
        // Without a CPU: this process, wherever it runs.
        None => {
            b.observe_self().any_cpu();
        }
    }
    b
}

/// A group of real perf events: the leader and its members.
struct KernelGroup {
    leader: Counter,
    members: Vec<Counter>,
}

impl PerfLayer for Syscalls {
    fn open_group<'l>(
        &'l self,
        cpu: Option<u32>,
        events: &[EventAttr],
    ) -> Result<Box<dyn OpenGroup + 'l>, OpenError> {
        let Some((first, rest)) = events.split_first() else {
            return Err(OpenError {
                index: 0,
                fits_alone: false,
                source: io::Error::from_raw_os_error(EINVAL),
            });
        };
        let leader = builder(first, cpu, false)
            .build()
            .map_err(|source| OpenError {
                index: 0,
                fits_alone: false,
                source,
            })?;
        let mut group = KernelGroup {
            leader,
            members: Vec::new(),
        };
        for (i, ev) in rest.iter().enumerate() {
            let b = builder(ev, cpu, true);
            match b.build_with_group(&mut group.leader) {
                Ok(c) => group.members.push(c),
                Err(source) => {
                    // The same event opened alone tells a group that does not fit the box
                    // apart from an event the driver refuses.
                    let fits_alone = source.raw_os_error() == Some(EINVAL)
                        && builder(ev, cpu, false).build().is_ok();
                    return Err(OpenError {
                        index: i + 1,
                        fits_alone,
                        source,
                    });
                }
            }
        }
        Ok(Box::new(group))
    }
}

impl OpenGroup for KernelGroup {
    // The leader alone switches the group: its members stay enabled (see `builder`), and a
    // group is on the hardware only while its leader is.
    fn enable(&mut self) -> io::Result<()> {
        self.leader.enable()
    }

    fn disable(&mut self) -> io::Result<()> {
        self.leader.disable()
    }

    fn read(&mut self) -> io::Result<GroupValues> {
        let data = self.leader.read_group()?;
        let counts = std::iter::once(&self.leader)
            .chain(&self.members)
            .map(|c| {
                data.get(c)
                    .map(|e| e.value())
                    .ok_or_else(|| io::Error::other("the group read did not include every event"))
            })
            .collect::<io::Result<Vec<u64>>>()?;
        Ok(GroupValues {
            counts,
            time_enabled: data.time_enabled().unwrap_or_default(),
            time_running: data.time_running().unwrap_or_default(),
        })
    }
}
