//! What a session reaches counters through: a [`Backend`] value, chosen once, never a name
//! compared along the way. A new way to reach counters (memory-mapped registers, another
//! vendor's driver) is a new variant here and a new arm where a box is opened.

use std::time::Duration;

use crate::error::Error;
use crate::machine::Machine;
use crate::perf::encode::{free_running_terms, from_control, from_terms, with_aux};
use crate::perf::layer::PerfLayer;
use crate::perf::syscall::Syscalls;
use crate::perf::{EventSources, PerfEvent, PerfNames, Pmu, SpecNames};

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
pub enum Backend<'m> {
    /// Programming the registers: hardware under a root, or the simulator (whose workload
    /// the session then runs on its clock).
    Registers(&'m Machine),
    /// The kernel's perf PMUs.
    Perf(PerfBackend<'m>),
}

impl<'m> Backend<'m> {
    /// The backend `route` names on `machine`, with the kernel's PMUs in `sources` and the
    /// real `perf_event_open`. A simulated machine has no kernel PMUs: it is always reached
    /// through its registers.
    pub fn new(machine: &'m Machine, route: Route, sources: EventSources) -> Self {
        if machine.sim().is_some() || route == Route::Raw {
            return Backend::Registers(machine);
        }
        Backend::Perf(PerfBackend {
            machine,
            sources,
            layer: &Syscalls,
            fallback: route == Route::Auto,
        })
    }

    /// The machine under it.
    pub fn machine(&self) -> &'m Machine {
        match self {
            Backend::Registers(m) => m,
            Backend::Perf(p) => p.machine,
        }
    }

    /// The clock that makes this backend's counts what they should be for a reading every
    /// `period`: the wall clock on hardware; on the simulator, whose time is its own, steps
    /// of exactly `period`, so its output is the same on every run.
    pub fn clock(&self, period: Duration) -> Clock {
        if self.machine().sim().is_some() {
            Clock::Steps(period)
        } else {
            Clock::Wall
        }
    }

    /// What a box programmed through the registers is labelled.
    pub(super) fn register_kind(&self) -> BackendKind {
        if self.machine().sim().is_some() {
            BackendKind::Simulator
        } else {
            BackendKind::Registers
        }
    }
}

/// A perf group to open for a box: the kernel PMU, its events, and per event its index
/// among the selection's events and the counter register it stands for.
pub(super) type PerfPlan = (Pmu, Vec<PerfEvent>, Vec<(usize, &'static str)>);

/// The perf groups that count `planned`'s events, by kernel PMU (a box split over two PMUs,
/// the Xeon 7500 R-box, has two). A box with more events than general counters gets a
/// group per counters' worth of events, which the kernel counts in turns (multiplexing) and
/// scales. `None` where `fallback` lets the registers count a box the kernel has no PMU for.
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
    let mut on_general = 0;
    for (i, (sel, c)) in planned.events.iter().zip(assigned).enumerate() {
        let turn = if c.control.is_some() {
            on_general += 1;
            (on_general - 1) / general
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
        let mut event = match (c.control, c.info.perf_event) {
            (Some(control), _) => from_control(
                control.info,
                c.control_value(sel, false)?,
                &pmu.name,
                &pmu.formats,
                Some(name.kernel_counter(c.number())),
            )?,
            // A free-running counter is the kernel's event of its own, by its terms.
            (None, Some(p)) => from_terms(pmu, &free_running_terms(&p))?,
            (None, None) => {
                return Err(crate::error::UsageError::UnsupportedField {
                    register: c.counter.name(),
                    field: "perf event (the spec gives this free-running counter none)",
                }
                .into())
            }
        };
        // The auxiliary MSR goes in the term the kernel programs it from (`offcore_rsp`).
        if let Some(aux) = sel.aux {
            with_aux(&mut event, &pmu.formats, name.driver, aux)?;
        }
        events.push(event);
        counters.push((i, c.counter.name()));
    }
    Ok(Some(groups))
}
