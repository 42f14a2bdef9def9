//! What a session reaches counters through: a [`SessionBackend`] value, chosen once, never a
//! name compared along the way. A new register backend is registered with the machine
//! ([`crate::machine::MachineBackend`]) and needs nothing here; a way to reach counters that
//! is not registers (another kernel driver) is a new variant here and a new arm where a box
//! is opened.

use std::time::Duration;

use crate::boxes::EventSelect;
use crate::error::Error;
use crate::machine::Machine;
use crate::perf::encode::{free_running_terms, from_control, from_terms, with_aux};
use crate::perf::layer::PerfLayer;
use crate::perf::syscall::Syscalls;
use crate::perf::{EventSources, KernelPmu, PerfEvent, PerfNames, SpecNames};

use super::selection::BoxEvents;
use super::Clock;

/// Which way boxes are reached, as a user chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Route {
    /// Through the kernel's PMU where it has the box's, the registers otherwise.
    #[default]
    Auto,
    /// Through the kernel's PMU only.
    Perf,
    /// Through the registers only.
    Raw,
}

/// What counts a series: the label its rows carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// This machine's registers (`/dev/cpu/N/msr`, PCI configuration space).
    Registers,
    /// The simulated PMU's registers.
    Simulator,
    /// The kernel's perf PMU driver.
    Perf,
}

impl BackendKind {
    /// `raw`, `sim` or `perf`: how `pmu watch` and the exporter label a series.
    pub fn label(self) -> &'static str {
        match self {
            BackendKind::Registers => "raw",
            BackendKind::Simulator => "sim",
            BackendKind::Perf => "perf",
        }
    }
}

/// The kernel's perf PMUs, as a session reaches them.
pub struct PerfBackend<'m> {
    /// The machine: its topology, and its registers for the boxes perf does not reach.
    pub machine: &'m Machine,
    /// The PMUs (`/sys/bus/event_source/devices`, under a root).
    pub sources: EventSources,
    /// The syscalls: the kernel's, or a stand-in such as `sim_perf::SimPerf`.
    pub layer: &'m dyn PerfLayer,
    /// Whether a box whose PMU the kernel lacks is counted through the registers instead
    /// (`auto`) rather than refused (`perf`).
    pub fallback: bool,
}

/// How a session reaches its counters.
pub enum SessionBackend<'m> {
    /// Programming the registers: hardware under a root, the simulator, or any backend
    /// registered with the machine (one with a workload, the simulator's, the session runs
    /// on its clock).
    Registers(&'m Machine),
    /// The kernel's perf PMUs.
    Perf(PerfBackend<'m>),
}

impl<'m> SessionBackend<'m> {
    /// The backend `route` names on `machine`, with the kernel's PMUs in `sources` and the
    /// real `perf_event_open`. A machine whose time is its own (the simulator) has no kernel
    /// PMUs: it is always reached through its registers.
    pub fn new(machine: &'m Machine, route: Route, sources: EventSources) -> Self {
        if machine.workload().is_some() || route == Route::Raw {
            return SessionBackend::Registers(machine);
        }
        SessionBackend::Perf(PerfBackend {
            machine,
            sources,
            layer: &Syscalls,
            fallback: route == Route::Auto,
        })
    }

    /// The machine under it.
    pub fn machine(&self) -> &'m Machine {
        match self {
            SessionBackend::Registers(m) => m,
            SessionBackend::Perf(p) => p.machine,
        }
    }

    /// The clock that makes this backend's counts what they should be for a reading every
    /// `period`: the wall clock on hardware; on a backend whose time is its own (the
    /// simulator's workload), steps of exactly `period`, so its output is the same on every
    /// run.
    pub fn clock(&self, period: Duration) -> Clock {
        if self.machine().workload().is_some() {
            Clock::Steps(period)
        } else {
            Clock::Wall
        }
    }

    /// What a box programmed through the registers is labelled.
    pub(super) fn register_kind(&self) -> BackendKind {
        if self.machine().workload().is_some() {
            BackendKind::Simulator
        } else {
            BackendKind::Registers
        }
    }
}

/// A perf group to open for a box: the kernel PMU, its events, and per event its index
/// among the selection's events and the counter register it stands for.
pub(super) type PerfPlan = (KernelPmu, Vec<PerfEvent>, Vec<(usize, &'static str)>);

/// The perf groups that count `planned`'s events, by kernel PMU (a box split over two PMUs,
/// the Xeon 7500 R-box, has two). A box with more events than general counters gets a
/// group per counters' worth of events, which the kernel counts in turns (multiplexing) and
/// scales; so does an event that needs an auxiliary MSR with another value than an earlier
/// event of its group (the kernel schedules a group at once, and the register holds one
/// value). `None` where `fallback` lets the registers count a box the kernel has no PMU for.
pub(super) fn perf_events(
    sources: &EventSources,
    planned: &BoxEvents,
    fallback: bool,
) -> Result<Option<Vec<PerfPlan>>, Error> {
    let pmu_box = planned.pmu_box;
    let processor = planned.boxes.processor.id;
    let assigned = pmu_box.assign(&planned.events)?;
    let mut groups: Vec<PerfPlan> = Vec::new();
    // The group (by kernel PMU and turn) each entry of `groups` is: a box's events beyond
    // its general counters make further groups, which the kernel counts in turns.
    let mut keys: Vec<(&str, usize)> = Vec::new();
    let general = pmu_box
        .counters
        .iter()
        .filter(|c| c.info.kind == pmu_regs::CounterKind::General && c.control.is_some())
        .count()
        .max(1);
    // The turn general events are joining, and its events so far.
    let (mut joining, mut in_turn) = (0, Vec::new());
    for (i, (sel, c)) in planned.events.iter().zip(assigned).enumerate() {
        let turn = if c.control.is_some() {
            let with: Vec<&EventSelect> = in_turn.iter().copied().chain([sel]).collect();
            if in_turn.len() == general || !crate::counters::aux_agree(&with) {
                joining += 1;
                in_turn.clear();
            }
            in_turn.push(sel);
            joining
        } else {
            0
        };
        let name = match SpecNames.lookup(
            processor,
            pmu_box.unit.name,
            pmu_box.instance,
            Some(c.number()),
        ) {
            Ok(name) => name,
            // A box whose kernel PMU the spec does not name is counted raw.
            Err(_) if fallback => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if !sources.has(name.pmu) && fallback {
            return Ok(None);
        }
        let at = match keys.iter().position(|&k| k == (name.pmu, turn)) {
            Some(at) => at,
            None => {
                keys.push((name.pmu, turn));
                groups.push((
                    sources.pmu(name.pmu, &name.driver_name())?,
                    Vec::new(),
                    Vec::new(),
                ));
                groups.len() - 1
            }
        };
        let (pmu, events, counters) = &mut groups[at];
        let event = perf_event(c, sel, pmu, &name)?;
        events.push(event);
        counters.push((i, c.counter.name()));
    }
    Ok(Some(groups))
}

/// The perf event that counts `sel` on counter `c` of kernel PMU `pmu` (`name`: the
/// kernel's names of the box and counter): the control value translated through the
/// PMU's format files, or a free-running counter's event by its terms; the auxiliary MSR
/// goes in the term the kernel programs it from (`offcore_rsp`).
fn perf_event(
    c: &crate::boxes::Counter,
    sel: &EventSelect,
    pmu: &KernelPmu,
    name: &crate::perf::PmuName,
) -> Result<PerfEvent, Error> {
    let mut event = match (c.control, c.info.perf_event) {
        (Some(control), _) => from_control(
            control.info,
            c.control_value(sel, false)?,
            &pmu.name,
            &pmu.formats,
            Some(name.kernel_counter(c.number())),
        )?,
        (None, Some(p)) => from_terms(pmu, &free_running_terms(&p))?,
        (None, None) => {
            return Err(crate::error::UsageError::UnsupportedField {
                register: c.counter.name(),
                field: "perf event (the spec gives this free-running counter none)",
            }
            .into())
        }
    };
    if let Some(aux) = sel.aux {
        with_aux(&mut event, &pmu.formats, name.driver, aux)?;
    }
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boxes::Boxes;

    /// Skylake-SP's core event `name` as a session selects it, auxiliary MSR included.
    fn skx(name: &str) -> EventSelect {
        let e = pmu_regs::skylake_sp::core::Event::ALL
            .iter()
            .map(|e| e.info())
            .find(|e| e.name == name)
            .unwrap();
        EventSelect {
            umask: Some(e.umask),
            aux: e.aux,
            ..EventSelect::event(e.code)
        }
    }

    /// The kernel schedules a group at once, and an auxiliary MSR holds one value: two
    /// offcore events that need MSR_OFFCORE_RSP_0 with different values go in different
    /// groups, which the kernel counts in turns, each carrying its value in `config1`.
    #[test]
    fn events_that_disagree_on_an_auxiliary_msr_go_in_separate_groups() {
        let tree = tempfile::tempdir().unwrap();
        let cpu = tree.path().join("cpu");
        std::fs::create_dir_all(cpu.join("format")).unwrap();
        std::fs::write(cpu.join("type"), "4\n").unwrap();
        for (f, spec) in [
            ("event", "config:0-7"),
            ("umask", "config:8-15"),
            ("edge", "config:18"),
            ("pc", "config:19"),
            ("any", "config:21"),
            ("inv", "config:23"),
            ("cmask", "config:24-31"),
            ("offcore_rsp", "config1:0-63"),
            ("ldlat", "config1:0-15"),
            ("frontend", "config1:0-23"),
        ] {
            std::fs::write(cpu.join("format").join(f), format!("{spec}\n")).unwrap();
        }
        let boxes = Boxes::of(&pmu_regs::arch::PROCESSOR);
        let core = boxes.boxes.iter().find(|b| b.unit.name == "CORE").unwrap();
        let planned = BoxEvents {
            boxes,
            pmu_box: core,
            events: vec![
                skx("OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE"),
                skx("INST_RETIRED.ANY_P"),
                skx("OFFCORE_RESPONSE.DEMAND_RFO.ANY_RESPONSE"),
            ],
        };
        let sources = EventSources::with_root(tree.path());
        let groups = perf_events(&sources, &planned, false).unwrap().unwrap();
        let config1: Vec<Vec<u64>> = groups
            .iter()
            .map(|(_, events, _)| events.iter().map(|e| e.config[1]).collect())
            .collect();
        assert_eq!(config1, vec![vec![0x10001, 0], vec![0x10002]]);
        // Events that agree share a group.
        let planned = BoxEvents {
            events: vec![planned.events[0], planned.events[1]],
            ..planned
        };
        let groups = perf_events(&sources, &planned, false).unwrap().unwrap();
        assert_eq!(groups.len(), 1);
    }
}
