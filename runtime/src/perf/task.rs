//! One event counted for tasks rather than for a box, as `perf stat` counts: the commands
//! this process starts, one running task, or every task on one CPU.
//!
//! For a command, the counter is opened on this process, disabled, with `inherit` and
//! `enable_on_exec` (`perf_event_open(2)`): a child started afterwards inherits it, the
//! kernel enables the child's copy when the child execs and switches it with the child (and
//! the child's own children) on and off the CPU, and a read of this counter sums the copies.
//! This process itself never execs, so its own copy never counts.

use std::io;
use std::time::Duration;

use perf_event::{Builder, Counter, ReadFormat};

use super::counting::EventReading;
use super::layer::EventAttr;
use super::syscall::Attr;

/// Whom a [`TaskCounter`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskScope {
    /// The commands this process starts after opening the counter, with every task they
    /// start: from their `exec` on (`at_exec`), or from [`TaskCounter::enable`], which
    /// reaches the copies the children inherited (`ioctl` on a parent event acts on its
    /// children's too), for perf's `-D` delay.
    Children {
        /// Enable each child's copy at its `exec`.
        at_exec: bool,
    },
    /// A running task (a process id) and the tasks it starts from now on.
    Task(u32),
    /// Every task while it runs on this CPU.
    Cpu(u32),
}

/// One event's counter for a [`TaskScope`].
#[derive(Debug)]
pub struct TaskCounter {
    counter: Counter,
}

impl TaskCounter {
    /// Opens `ev` for `scope`, disabled (a [`TaskScope::Children`] counter `at_exec` enables
    /// itself in each child at its exec). The error is the kernel's: `ENOENT` or `EOPNOTSUPP` for an
    /// event this machine cannot count, `EACCES` for one `perf_event_paranoid` forbids.
    pub fn open(ev: &EventAttr, scope: TaskScope) -> io::Result<Self> {
        let mut b = counting(ev);
        match scope {
            TaskScope::Children { at_exec } => {
                b.observe_self()
                    .any_cpu()
                    .inherit(true)
                    .enable_on_exec(at_exec);
            }
            TaskScope::Task(pid) => {
                let pid = i32::try_from(pid).map_err(|_| io::Error::other("no such process id"))?;
                b.observe_pid(pid).any_cpu().inherit(true);
            }
            TaskScope::Cpu(cpu) => {
                b.any_pid().one_cpu(cpu as usize);
            }
        }
        Ok(TaskCounter {
            counter: b.build()?,
        })
    }

    /// Opens `ev` on `cpu` for the tasks of one cgroup (perf's `-G`): `cgroup` is the
    /// cgroup's directory, opened ([`super::cgroup::open`]); the kernel counts while a task
    /// of that cgroup runs on the CPU. Disabled, as [`TaskCounter::open`].
    pub fn open_in_cgroup(ev: &EventAttr, cgroup: &std::fs::File, cpu: u32) -> io::Result<Self> {
        let mut b = counting(ev);
        b.observe_cgroup(cgroup).one_cpu(cpu as usize);
        Ok(TaskCounter {
            counter: b.build()?,
        })
    }

    /// Starts counting (a [`TaskScope::Children`] counter `at_exec` needs no call: its copies
    /// start at their exec).
    pub fn enable(&mut self) -> io::Result<()> {
        self.counter.enable()
    }

    /// Stops counting.
    pub fn disable(&mut self) -> io::Result<()> {
        self.counter.disable()
    }

    /// The count so far (with its inherited copies') and the time enabled and running.
    pub fn read(&mut self) -> io::Result<EventReading> {
        let d = self.counter.read_full()?;
        Ok(EventReading {
            count: d.count(),
            time_enabled: d.time_enabled().unwrap_or(Duration::ZERO),
            time_running: d.time_running().unwrap_or(Duration::ZERO),
        })
    }
}

/// What every task counter shares whatever it observes: the event and its privilege filter,
/// disabled until enabled, read with its times enabled and running.
fn counting<'a>(ev: &EventAttr) -> Builder<'a> {
    let mut b = Builder::new(Attr {
        type_: ev.type_,
        config: ev.config,
    });
    b.enabled(false)
        .exclude_kernel(ev.exclude_kernel)
        .exclude_user(ev.exclude_user)
        .exclude_hv(ev.exclude_kernel)
        .read_format(ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING);
    b
}
