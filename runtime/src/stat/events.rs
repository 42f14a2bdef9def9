//! The events `pmu stat` counts: a `-e` list in perf's event language, or perf's default
//! set.

use crate::perf::error::PerfError;
use crate::perf::layer::EventAttr;
use crate::perf::syntax::{generic, parse_lists, TYPE_HARDWARE, TYPE_SOFTWARE};
use crate::perf::sysfs::EventSources;

/// What an event is to the comments: perf derives them from a few generic events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventRole {
    /// `cpu-clock` or `task-clock`: nanoseconds, printed in msec, `CPUs utilized`.
    Clock,
    /// `cycles`: `GHz` over the clock.
    Cycles,
    /// `instructions`: `insn per cycle`.
    Instructions,
    /// `branches`: a rate, and the base of `branch-misses`.
    Branches,
    /// `branch-misses`: `% of all branches`.
    BranchMisses,
    /// Anything else: a rate (`/sec`) over the clock.
    Other,
}

impl EventRole {
    /// The role of an event of `perf_event_attr` `type_` and `config`.
    pub fn of(type_: u32, config: u64) -> Self {
        match (type_, config) {
            (TYPE_SOFTWARE, 0 | 1) => EventRole::Clock,
            (TYPE_HARDWARE, 0) => EventRole::Cycles,
            (TYPE_HARDWARE, 1) => EventRole::Instructions,
            (TYPE_HARDWARE, 4) => EventRole::Branches,
            (TYPE_HARDWARE, 5) => EventRole::BranchMisses,
            _ => EventRole::Other,
        }
    }
}

/// One event to count, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatEvent {
    /// The name perf prints: the event as written (`page-faults:u`, `msr/tsc/`).
    pub name: String,
    /// What `perf_event_open` is given.
    pub attr: EventAttr,
    /// What the comments make of it.
    pub role: EventRole,
}

/// perf's default events (tools/perf/builtin-stat.c, `default_attrs0` and
/// `default_attrs1` of perf 6.1): the clock, three software events and four hardware
/// events. Counting the whole system, perf's clock is `cpu-clock` instead of `task-clock`
/// (what `perf stat -a` prints). Where the machine lacks an event (a virtual machine
/// without a core PMU) its row reads `<not supported>`.
pub const DEFAULT_EVENTS: [&str; 8] = [
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "cycles",
    "instructions",
    "branches",
    "branch-misses",
];

/// [`DEFAULT_EVENTS`] as counted on `system_wide` or per task.
pub fn default_events(system_wide: bool) -> Vec<StatEvent> {
    DEFAULT_EVENTS
        .iter()
        .map(|&name| {
            let name = if system_wide && name == "task-clock" {
                "cpu-clock"
            } else {
                name
            };
            let g = generic(name).expect("the default events are generic events");
            StatEvent {
                name: name.to_string(),
                attr: EventAttr {
                    type_: g.type_,
                    config: [g.config, 0, 0],
                    exclude_user: false,
                    exclude_kernel: false,
                },
                role: EventRole::of(g.type_, g.config),
            }
        })
        .collect()
}

/// The events of `lists` (each as `perf stat -e` takes it: `task-clock,page-faults`,
/// `msr/tsc/`, `cycles:u`), resolved against the PMUs `sources` describes. A name no PMU
/// lists is an error with the nearest names.
pub fn parse_events(lists: &[&str], sources: &EventSources) -> Result<Vec<StatEvent>, PerfError> {
    let mut out = Vec::new();
    for (text, spec) in parse_lists(lists)? {
        let (pmu, ev) = spec.resolve(sources)?;
        // A software event's role is by its config whichever way it was named
        // (`software/config=1/`, `task-clock`).
        let role = if pmu.type_ == TYPE_SOFTWARE || pmu.name == "hardware" {
            EventRole::of(pmu.type_, ev.config[0])
        } else {
            EventRole::Other
        };
        out.push(StatEvent {
            name: text,
            attr: EventAttr {
                type_: pmu.type_,
                config: ev.config,
                exclude_user: ev.modifier == Some('k'),
                exclude_kernel: ev.modifier == Some('u'),
            },
            role,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_set_swaps_the_clock_system_wide() {
        let per_task: Vec<String> = default_events(false).into_iter().map(|e| e.name).collect();
        assert_eq!(per_task[0], "task-clock");
        let system: Vec<StatEvent> = default_events(true);
        assert_eq!(system[0].name, "cpu-clock");
        // PERF_COUNT_SW_CPU_CLOCK is 0, PERF_COUNT_HW_BRANCH_MISSES 5 (perf_event.h).
        assert_eq!(system[0].attr.config[0], 0);
        assert_eq!(system[7].attr.config[0], 5);
        assert_eq!(system[7].role, EventRole::BranchMisses);
    }
}
