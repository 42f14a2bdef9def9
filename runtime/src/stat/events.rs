//! The events `pmu stat` counts: a `-e` list in perf's event language, or perf's default
//! set.

use crate::perf::error::PerfError;
use crate::perf::layer::EventAttr;
use crate::perf::syntax::{generic, parse_lists, split_list, TYPE_HARDWARE, TYPE_SOFTWARE};
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
    /// The cgroup it is limited to (`-G`, relative to the cgroup mount point); `None`: every
    /// task.
    pub cgroup: Option<String>,
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
                cgroup: None,
            }
        })
        .collect()
}

/// The events of `lists` (each as `perf stat -e` takes it: `task-clock,page-faults`,
/// `msr/tsc/`, `cycles:u`), resolved against the PMUs `sources` describes. A name no PMU
/// lists is an error with the nearest names.
pub fn parse_events(lists: &[&str], sources: &EventSources) -> Result<Vec<StatEvent>, PerfError> {
    parse_events_for(lists, sources, None)
}

/// perf's `PERF_TYPE_RAW`: a core event by its event-select register's bits.
pub const TYPE_RAW: u32 = 4;

/// The bits of IA32_PERFEVTSELx that perf's raw config of the core PMU takes as they are
/// (Linux arch/x86/events/intel/core.c's format: event 0-7, umask 8-15, edge 18, any 21,
/// inv 23, cmask 24-31); USR, OS, INT and EN are perf's to set.
const RAW_CONFIG_BITS: u64 = 0xFF | 0xFF << 8 | 1 << 18 | 1 << 21 | 1 << 23 | 0xFF << 24;

/// A core event of `processor`'s list by its spec name (`INST_RETIRED.ANY_P`, with perf's
/// `:u` or `:k`), as a raw perf event: the event-select bits its list gives it (event,
/// umask, counter mask, invert, edge). `None` where the list has no such event.
pub fn spec_core_event(text: &str, processor: &str) -> Option<StatEvent> {
    let (name, modifier) = match text.rsplit_once(':') {
        Some((n, m @ ("u" | "k"))) => (n, m.chars().next()),
        _ => (text, None),
    };
    let control = crate::lookup::resolve("IA32_PERFEVTSEL0", Some(processor)).ok()?;
    crate::codec::named_event(control.info, name, Some(processor))?;
    let pairs = [("event".to_string(), name.to_string())];
    let raw = crate::codec::encode_for(control.info, 0, &pairs, Some(processor)).ok()?;
    Some(StatEvent {
        name: text.to_string(),
        attr: EventAttr {
            type_: TYPE_RAW,
            config: [raw & RAW_CONFIG_BITS, 0, 0],
            exclude_user: modifier == Some('k'),
            exclude_kernel: modifier == Some('u'),
        },
        role: EventRole::Other,
        cgroup: None,
    })
}

/// As [`parse_events`], and a name perf does not know may name a core event of
/// `processor`'s list in the spec ([`spec_core_event`]).
pub fn parse_events_for(
    lists: &[&str],
    sources: &EventSources,
    processor: Option<&str>,
) -> Result<Vec<StatEvent>, PerfError> {
    let mut out = Vec::new();
    for list in lists {
        for text in split_list(list)? {
            // perf's names first: looking a name up in the spec's lists costs far more
            // (0.7 s of a debug build, a register lookup whose failure ranks every
            // register's name) than perf's few, and `-e task-clock` is the common case.
            match parse_known(&[&text], sources) {
                Ok(events) => out.extend(events),
                Err(e) => match processor.and_then(|p| spec_core_event(text.trim(), p)) {
                    Some(ev) => out.push(ev),
                    None => return Err(e),
                },
            }
        }
    }
    Ok(out)
}

/// The events of `lists` that perf's language names.
fn parse_known(lists: &[&str], sources: &EventSources) -> Result<Vec<StatEvent>, PerfError> {
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
            cgroup: None,
        });
    }
    Ok(out)
}

/// perf's `-G NAMES` after every `-e`: one name (no comma) limits every event to that
/// cgroup; a list gives the events their cgroups in order (an empty name: every task; events
/// past the list: every task). More names than events is an error, as in perf.
pub fn assign_cgroups(events: &mut [StatEvent], names: &str) -> Result<(), String> {
    let defined = events.len();
    pair_cgroups(events, &[(defined, names)])
}

/// The events of several `-e` lists in order, with the cgroups of the `-G`s among them as
/// [`pair_cgroups`] gives them: `cgroups` holds each `-G`'s names with how many `-e` lists
/// came before it.
pub fn with_cgroups<S: AsRef<str>>(
    lists: Vec<Vec<StatEvent>>,
    cgroups: &[(usize, S)],
) -> Result<Vec<StatEvent>, String> {
    let given: Vec<(usize, &str)> = cgroups
        .iter()
        .map(|(n, g)| (lists.iter().take(*n).map(Vec::len).sum(), g.as_ref()))
        .collect();
    let mut events = lists.concat();
    pair_cgroups(&mut events, &given)?;
    Ok(events)
}

/// perf's `-G` pairing over a command line with several `-e` and `-G` (perf 6.1,
/// tools/perf/util/cgroup.c `parse_cgroups`, checked against the perf binary): `given` holds
/// each `-G`'s names in order, with how many events the `-e` options before it defined. The
/// N-th name of all the `-G`s together goes to the N-th event (an empty name: every task),
/// which must be defined before that `-G`; while only one name has been given, it limits
/// every event defined so far. So `-e a -G g1 -e b -G g2` gives a g1 and b g2, `-e a -G g1 -e
/// b` leaves b on every task, and `-e a,b -G g1 -e c -G g2` gives a g1, b g2 (the second
/// name goes to the second event) and c every task.
pub fn pair_cgroups(events: &mut [StatEvent], given: &[(usize, &str)]) -> Result<(), String> {
    let mut next = 0;
    for &(defined, names) in given {
        let defined = defined.min(events.len());
        if defined == 0 {
            return Err(format!(
                "-G {names} limits events to a cgroup: name them first (-e task-clock -G \
                 NAME), as perf requires"
            ));
        }
        let list: Vec<&str> = names.split(',').collect();
        if next + list.len() > defined {
            return Err(format!(
                "-G {names}: {} cgroups for {} events; give one cgroup for all the events \
                 before it, or at most one for each event in -e's order (an empty name: every \
                 task), each -G after the -e it limits",
                next + list.len(),
                defined
            ));
        }
        for name in list {
            events[next].cgroup = (!name.is_empty()).then(|| name.to_string());
            next += 1;
        }
        if next == 1 {
            let first = events[0].cgroup.clone();
            events[..defined]
                .iter_mut()
                .for_each(|e| e.cgroup.clone_from(&first));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Intel's Sapphire Rapids core list (sapphirerapids_core.json): INST_RETIRED.ANY_P is
    /// EventCode 0xC0 UMask 0x00; UOPS_RETIRED.STALLS is 0xC2 UMask 0x02 with CounterMask 1
    /// and Invert 1 (cmask in bits 24-31, inv bit 23).
    #[test]
    fn a_spec_core_event_is_its_raw_encoding() {
        let ev = spec_core_event("INST_RETIRED.ANY_P", "sapphire-rapids").unwrap();
        assert_eq!((ev.attr.type_, ev.attr.config[0]), (TYPE_RAW, 0xc0));
        let ev = spec_core_event("UOPS_RETIRED.STALLS:u", "sapphire-rapids").unwrap();
        assert_eq!(ev.attr.config[0], 0xc2 | 0x02 << 8 | 1 << 23 | 1 << 24);
        assert!(ev.attr.exclude_kernel && !ev.attr.exclude_user);
        assert_eq!(ev.name, "UOPS_RETIRED.STALLS:u");
        assert!(spec_core_event("NO_SUCH_EVENT", "sapphire-rapids").is_none());
        assert!(spec_core_event("task-clock", "sapphire-rapids").is_none());
    }

    // perf 6.1: `-e task-clock,cpu-clock -G cg` limits both; `-G cg,` the first only;
    // `-e task-clock,page-faults -G a,b,c` is refused.
    #[test]
    fn cgroups_go_to_events_as_perfs() {
        let mut evs = default_events(false);
        evs.truncate(2);
        assign_cgroups(&mut evs, "cg").unwrap();
        assert!(evs.iter().all(|e| e.cgroup.as_deref() == Some("cg")));
        assign_cgroups(&mut evs, "cg,").unwrap();
        assert_eq!(
            (evs[0].cgroup.as_deref(), evs[1].cgroup.as_deref()),
            (Some("cg"), None)
        );
        assert!(assign_cgroups(&mut evs, "a,b,c")
            .unwrap_err()
            .contains("3 cgroups for 2"));
        assert!(assign_cgroups(&mut [], "cg").unwrap_err().contains("-e"));
    }

    // perf 6.1 on this machine (`perf stat -a -x, ... -- sleep 0.01`, the cgroup column):
    // `-e task-clock -G g1 -e page-faults` g1, none; `-e task-clock -G g1 -e page-faults -G
    // g2` g1, g2; `-e task-clock,page-faults -G g1 -e cpu-clock -G g2` g1, g2, none;
    // `-G g1 -e task-clock` and `-e task-clock -G g1 -G g2` refused.
    #[test]
    fn several_cgroup_options_pair_as_perfs() {
        let cgroups = |given: &[(usize, &str)]| {
            let mut evs = default_events(false);
            evs.truncate(3);
            pair_cgroups(&mut evs, given).map(|()| {
                evs.iter()
                    .map(|e| e.cgroup.clone().unwrap_or_default())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(cgroups(&[(1, "g1")]).unwrap(), ["g1", "", ""]);
        assert_eq!(cgroups(&[(1, "g1"), (2, "g2")]).unwrap(), ["g1", "g2", ""]);
        assert_eq!(cgroups(&[(2, "g1"), (3, "g2")]).unwrap(), ["g1", "g2", ""]);
        assert_eq!(cgroups(&[(3, ",g2")]).unwrap(), ["", "g2", ""]);
        assert!(cgroups(&[(0, "g1")])
            .unwrap_err()
            .contains("name them first"));
        assert!(cgroups(&[(1, "g1"), (1, "g2")]).is_err());
    }

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
