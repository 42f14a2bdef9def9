//! The conformance run on the simulator (`pmu check --sim`): what a run on a real machine
//! checks, against a simulated part whose events are known exactly, so that every check has
//! an exact expectation and a fault injected into the machine ([`crate::fault`]) shows up
//! as a failed check naming the access that failed.
//!
//! For the machine's processor: every discovery table is read and joined with the spec
//! (every box must match or be corrected by the spec); where the part holds the PCI bus of
//! each box (`<stack-bus>`), every socket's must be valid ([`super::buses`]); one box of every unit with a general
//! counter is counted through its registers for three intervals of [`STEP`] while the
//! simulator runs every event steadily at [`RATE`] a second, so each interval must count
//! exactly `RATE x STEP` = 10,000 events; a unit whose counters saturate (`<saturation>`)
//! is counted again from a counter found 1,000 below its top, where each interval must still
//! count 10,000 (without the runtime's handling the first counts 999 and the rest 0); each
//! such box whose box control can reset its counters must clear them ([`super::reset`]); and
//! every register a session touched must read afterwards what it read before (put-back).

use std::time::Duration;

use pmu_regs::{CounterKind, Scope};

use super::outcome::{CheckReport, CheckRow};
use super::raw_vs_perf::{steady_deltas, PerfFault, Steady};
use crate::boxes::{Boxes, PmuBox, Reg};
use crate::discovery::Joined;
use crate::error::{Result, UsageError};
use crate::machine::{Machine, Resolved, Where};
use crate::part::{joined_domains, joined_tables};
use crate::quirks::{global_inits, saturation_bit, Quirks};
use crate::session::SessionBackend;

/// Events a second, every event, while a box is counted.
pub const RATE: u64 = 1_000_000;
/// The interval the counts are read at, on the simulator's stepped clock.
pub const STEP: Duration = Duration::from_millis(10);
/// Intervals counted per box.
pub const INTERVALS: usize = 3;
/// How far below its top a saturating counter is found by the saturation check.
pub const BELOW_TOP: u64 = 1_000;
/// The event select counted: an event code every box's select field holds.
const EVENT: u16 = 0x10;

/// What `pmu check --sim --inject-fault` asks for: a register access that fails (the
/// machine's, [`Machine::with_fault`]), a perf group read that fails ([`PerfFault`]), or a
/// box of the part that does not count (`broken:BOX`, [`crate::sim::SimConfig::broken`]) or
/// does not reset (`no-reset:BOX`, [`crate::sim::SimConfig::no_reset`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injected {
    /// `read:N:KIND`, `write:N:KIND`, `writes-from:N:KIND`.
    Registers(crate::fault::When, crate::fault::Fault),
    /// `perf-read:N:KIND`.
    Perf(PerfFault),
    /// `broken:BOX`: the box (its instance name as the spec spells it) never counts.
    Broken(&'static str),
    /// `no-reset:BOX`: the box's reset-counters control leaves its counters as they are
    /// ([`crate::sim::SimConfig::no_reset`]).
    NoReset(&'static str),
}

/// The box of `processor` that `name` names (any case), for the fault `text` of kind `kind`;
/// a usage error naming some boxes the processor has otherwise.
fn named_box(
    processor: &'static pmu_regs::ProcessorInfo,
    text: &str,
    kind: &str,
    name: &str,
) -> Result<&'static str> {
    let boxes = Boxes::of(processor);
    match boxes
        .boxes
        .iter()
        .find(|b| b.instance.eq_ignore_ascii_case(name))
    {
        Some(b) => Ok(b.instance),
        None => {
            let some: Vec<&str> = boxes.boxes.iter().take(6).map(|b| b.instance).collect();
            Err(UsageError::BadValue {
                text: text.to_string(),
                expected: format!(
                    "{kind}:BOX with BOX one of the {} boxes of {} ({}, ...)",
                    boxes.boxes.len(),
                    processor.id,
                    some.join(", ")
                ),
            }
            .into())
        }
    }
}

impl Injected {
    /// Parses `text` for a simulated `processor` (whose boxes `broken:BOX` and
    /// `no-reset:BOX` name).
    pub fn parse(processor: &'static pmu_regs::ProcessorInfo, text: &str) -> Result<Self> {
        if let Some(name) = text.strip_prefix("broken:") {
            return Ok(Injected::Broken(named_box(
                processor, text, "broken", name,
            )?));
        }
        if let Some(name) = text.strip_prefix("no-reset:") {
            return Ok(Injected::NoReset(named_box(
                processor, text, "no-reset", name,
            )?));
        }
        if let Some(perf) = PerfFault::parse(text) {
            return Ok(Injected::Perf(perf?));
        }
        let (when, fault) = crate::fault::parse(text).map_err(|_| UsageError::BadValue {
            text: text.to_string(),
            expected: "read:N:KIND, write:N:KIND or writes-from:N:KIND (a register access), \
                       perf-read:N:KIND (a perf group read), with N >= 1 and KIND one of eio, \
                       eacces, enoent, short; or broken:BOX or no-reset:BOX (a box that does \
                       not count, or does not reset: e.g. write:3:eio, broken:CHA0)"
                .into(),
        })?;
        Ok(Injected::Registers(when, fault))
    }

    /// The simulated machine of `processor` with this fault, and the perf path's fault.
    pub fn machine(
        injected: Option<Self>,
        processor: &'static pmu_regs::ProcessorInfo,
    ) -> (Machine, Option<PerfFault>) {
        let config = crate::sim::SimConfig::of(processor);
        match injected {
            None => (Machine::simulated(config), None),
            Some(Injected::Registers(when, fault)) => {
                (Machine::simulated(config).with_fault(when, fault), None)
            }
            Some(Injected::Perf(p)) => (Machine::simulated(config), Some(p)),
            Some(Injected::Broken(name)) => {
                let broken: &'static [&'static str] = Box::leak(Box::new([name]));
                let config = crate::sim::SimConfig { broken, ..config };
                (Machine::simulated(config), None)
            }
            Some(Injected::NoReset(name)) => {
                let no_reset: &'static [&'static str] = Box::leak(Box::new([name]));
                let config = crate::sim::SimConfig { no_reset, ..config };
                (Machine::simulated(config), None)
            }
        }
    }
}

/// The simulated machine of `processor` a command (`pmu watch`, `pmu serve`, `pmu read` with
/// `--sim --inject-fault TEXT`) runs on: a box that does not count (`broken:BOX`, which a
/// session reports by name) or does not reset (`no-reset:BOX`), else a register fault as
/// [`crate::fault::parse`] reads it (perf group faults are `pmu check`'s only).
pub fn session_machine(processor: &'static pmu_regs::ProcessorInfo, text: &str) -> Result<Machine> {
    if text.starts_with("broken:") || text.starts_with("no-reset:") {
        let injected = Injected::parse(processor, text)?;
        return Ok(Injected::machine(Some(injected), processor).0);
    }
    let (when, fault) = crate::fault::parse(text)?;
    Ok(Machine::simulating(processor).with_fault(when, fault))
}

/// The conformance run on `machine`, which must be simulated, handling the quirks `quirks`
/// says (a run with them off shows what the part does without the runtime's corrections).
pub fn on_simulator(machine: &Machine, quirks: Quirks) -> Result<CheckReport> {
    on_simulator_with(machine, quirks, None)
}

/// [`on_simulator`], with the perf path failing as `perf_fault` says (a fault in the
/// registers is the machine's own: [`Machine::with_fault`]); each box counted through the
/// registers is counted again through the simulated kernel's perf PMU
/// ([`super::raw_vs_perf`]).
pub fn on_simulator_with(
    machine: &Machine,
    quirks: Quirks,
    perf_fault: Option<PerfFault>,
) -> Result<CheckReport> {
    let sim = machine.sim().ok_or_else(|| UsageError::BadValue {
        text: "a machine that is not simulated".into(),
        expected: "a simulated machine (Machine::simulating)".into(),
    })?;
    let config = sim.config();
    let boxes = Boxes::of(config.processor);
    let mut rows = vec![CheckRow::note(
        "processor",
        format!(
            "simulated {}: {} sockets of {} CPUs",
            config.processor.id, config.sockets, config.cpus_per_socket
        ),
    )];
    rows.extend(discovery(machine, boxes));
    rows.extend(super::buses::rows(machine, boxes, None));
    rows.extend(through_perf_only(boxes));
    rows.extend(firmware_placed(boxes));
    let faulted: Vec<&str> = config
        .broken
        .iter()
        .chain(config.no_reset)
        .copied()
        .collect();
    let counted = counted_boxes(boxes, &faulted);
    let touched: Vec<(Reg, Where)> = counted
        .iter()
        .flat_map(|b| registers_of(machine, boxes, b))
        .collect();
    let before = snapshot(machine, &touched);
    for &b in &counted {
        rows.push(count(machine, boxes, b, None, quirks));
        if let (Some(_), Some(c)) = (saturation_bit(b), general(b)) {
            let found = c.info.max() - BELOW_TOP;
            rows.push(count(machine, boxes, b, Some(found), quirks));
        }
        rows.extend(reset_row(machine, boxes, b));
    }
    if !touched.is_empty() {
        rows.push(put_back(machine, &touched, before));
    }
    // After put-back: what the simulated kernel's driver leaves is its own state.
    let steady = steady();
    // Boxes only perf reaches (Arm's system registers) are counted through it alone.
    let mut through_perf = counted.clone();
    through_perf.extend(perf_only_boxes(boxes));
    rows.extend(super::raw_vs_perf::rows(
        machine,
        (boxes, &through_perf),
        &steady,
        quirks,
        perf_fault,
    ));
    Ok(CheckReport {
        target: format!("the simulated {}", config.processor.id),
        rows,
    })
}

/// A row per discovery table the part publishes: every box matches the spec, or the spec
/// corrects the table for it.
pub(super) fn discovery(machine: &Machine, boxes: &'static Boxes) -> Vec<CheckRow> {
    let expected = "every box matches the spec".to_string();
    let mut rows: Vec<CheckRow> = joined_tables(machine, boxes)
        .into_iter()
        .map(|t| {
            let name = format!("discovery socket {}", t.socket);
            match t.joined {
                Ok(j) => judge_join(name, expected.clone(), &j),
                Err(e) => {
                    CheckRow::failed(name, expected.clone(), format!("device {}: {e}", t.device))
                }
            }
        })
        .collect();
    // A processor with several discovery domains (Diamond Rapids): each domain's tables.
    rows.extend(
        joined_domains(boxes.processor, machine)
            .into_iter()
            .map(|d| {
                let name = format!("discovery {} {}", d.domain.id, d.index);
                match d.joined {
                    Ok(j) => judge_join(name, expected.clone(), &j),
                    Err(e) => CheckRow::failed(name, expected.clone(), e.to_string()),
                }
            }),
    );
    rows
}

fn judge_join(name: String, expected: String, j: &Joined) -> CheckRow {
    let bad: Vec<String> = j
        .boxes
        .iter()
        .filter(|b| !b.status.is_trusted())
        .map(|b| format!("{} {}", b.name(), b.status.as_str()))
        .collect();
    let measured = format!("{} of {} match", j.boxes.len() - bad.len(), j.boxes.len());
    let mut row = CheckRow::judged(name, expected, measured, bad.is_empty());
    row.note = bad.join(", ");
    row
}

/// A note per unit of system registers: the simulator does not model them, and on a machine
/// only perf reaches them.
fn through_perf_only(boxes: &'static Boxes) -> Vec<CheckRow> {
    let mut units: Vec<&'static str> = Vec::new();
    for b in boxes.boxes.iter().filter(|b| b.through_perf_only()) {
        if !units.contains(&b.unit.name) {
            units.push(b.unit.name);
        }
    }
    units
        .into_iter()
        .map(|u| {
            let note = "system registers: no register rows, counted through the simulated \
                        kernel's perf PMU only (the perf row)";
            CheckRow::note(format!("perf-only {u}"), note.to_string())
        })
        .collect()
}

/// A note per unit whose page a firmware table places (a CoreSight PMU): the simulated
/// machine has no such page; `crate::cspmu` counts it on its own simulated APMT.
fn firmware_placed(boxes: &'static Boxes) -> Vec<CheckRow> {
    let mut units: Vec<&'static str> = Vec::new();
    for b in boxes.boxes.iter().filter(|b| b.placed_by_firmware()) {
        if !units.contains(&b.unit.name) {
            units.push(b.unit.name);
        }
    }
    units
        .into_iter()
        .map(|u| {
            let note = "a CoreSight PMU the APMT places: no register rows here; counted on \
                        its own simulated page (pmu_runtime::cspmu)";
            CheckRow::note(format!("apmt-placed {u}"), note.to_string())
        })
        .collect()
}

/// The first box of every unit whose counters only perf reaches that has a general counter.
fn perf_only_boxes(boxes: &'static Boxes) -> Vec<&'static PmuBox> {
    let mut out: Vec<&'static PmuBox> = Vec::new();
    for b in boxes.boxes.iter().filter(|b| b.through_perf_only()) {
        if general(b).is_some() && !out.iter().any(|o| std::ptr::eq(o.unit, b.unit)) {
            out.push(b);
        }
    }
    out
}

/// The first box of every unit that has a general counter and registers the simulator models,
/// and every such box a fault profile names (`faulted`: `broken:BOX`, `no-reset:BOX`), so a
/// fault on any box is found and named.
fn counted_boxes(boxes: &'static Boxes, faulted: &[&str]) -> Vec<&'static PmuBox> {
    let mut out: Vec<&'static PmuBox> = Vec::new();
    let modelled = |b: &&PmuBox| !b.through_perf_only() && !b.placed_by_firmware();
    for b in boxes.boxes.iter().filter(modelled) {
        let named = faulted.iter().any(|f| f.eq_ignore_ascii_case(b.instance));
        let first = !out.iter().any(|o| std::ptr::eq(o.unit, b.unit));
        if general(b).is_some() && (first || named) {
            out.push(b);
        }
    }
    out
}

/// The box's first general counter.
fn general(b: &PmuBox) -> Option<&crate::boxes::Counter> {
    b.counters
        .iter()
        .find(|c| c.info.kind == CounterKind::General && c.control.is_some())
}

/// Counts [`EVENT`] on box `b` of socket 0 for [`INTERVALS`] intervals; with `found`, from its
/// first general counter set to that value first (the saturation check).
fn count(
    machine: &Machine,
    boxes: &'static Boxes,
    b: &'static PmuBox,
    found: Option<u64>,
    quirks: Quirks,
) -> CheckRow {
    let expected = per_interval();
    let name = match found {
        None => format!("count {}", b.instance),
        Some(v) => format!("saturation {} from {v:#x}", b.instance),
    };
    let expected_text = expected_text();
    match deltas(machine, boxes, b, found, quirks) {
        Ok(d) => {
            let measured = d.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            let mut row = CheckRow::judged(
                name,
                expected_text,
                measured,
                d.iter().all(|&x| x == expected),
            );
            row.note = super::outcome::broken(b.instance, &d, expected);
            row
        }
        Err(e) => CheckRow::failed(name, expected_text, e),
    }
}

/// The reset row of box `b` on socket 0 ([`super::reset`]), where its box control has a
/// reset-counters field and it has a general counter.
fn reset_row(machine: &Machine, boxes: &'static Boxes, b: &'static PmuBox) -> Option<CheckRow> {
    let (control, field) = b.box_field(pmu_regs::Role::ResetCounters)?;
    let counter = general(b)?.counter;
    let at = socket0(b);
    let target = (|| -> Result<super::reset::ResetTarget> {
        let counters = registers_of(machine, boxes, b)
            .into_iter()
            .filter(|(r, _)| {
                b.counters
                    .iter()
                    .any(|c| std::ptr::eq(c.counter.addr, r.addr))
            })
            .map(|(r, w)| resolved(machine, r, &w))
            .collect::<Result<Vec<_>>>()?;
        Ok(super::reset::ResetTarget {
            instance: b.instance,
            control: resolved(machine, control, &at)?,
            field,
            counter: resolved(machine, counter, &at)?,
            counters,
        })
    })();
    Some(match target {
        Ok(t) => super::reset::row(machine, &t),
        Err(e) => CheckRow::failed(format!("reset {}", b.instance), "0".into(), e.to_string()),
    })
}

/// The pace every box is counted at, through its registers and through perf.
fn steady() -> Steady {
    Steady {
        rate: RATE,
        step: STEP,
        intervals: INTERVALS,
        event: EVENT,
        expected: expected_text(),
    }
}

/// What each interval must count: [`RATE`] events a second for one [`STEP`].
fn per_interval() -> u64 {
    RATE * STEP.as_millis() as u64 / 1000
}

/// The expectation as the rows write it: `10000 x 3 (1000000/s x 10 ms)`.
fn expected_text() -> String {
    format!(
        "{} x {INTERVALS} ({RATE}/s x {} ms)",
        per_interval(),
        STEP.as_millis()
    )
}

/// Each interval's count of box `b`'s first event.
fn deltas(
    machine: &Machine,
    boxes: &'static Boxes,
    b: &'static PmuBox,
    found: Option<u64>,
    quirks: Quirks,
) -> std::result::Result<Vec<u64>, String> {
    if let (Some(v), Some(c)) = (found, general(b)) {
        // The counter as a session would find it, and as it was again afterwards.
        let text = |e: crate::Error| e.to_string();
        let reg = resolved(machine, c.counter, &socket0(b)).map_err(text)?;
        let was = machine.read(&reg).map_err(text)?;
        machine.write(&reg, v).map_err(text)?;
        let counted = session_deltas(machine, boxes, b, quirks).map_err(text);
        let back = machine.read(&reg).map_err(text);
        machine.write(&reg, was).map_err(text)?;
        return match back? {
            left if left != v => Err(format!(
                "{} read {left:#x} after the session, not the {v:#x} it found: not put back",
                c.counter.name()
            )),
            _ => counted,
        };
    }
    session_deltas(machine, boxes, b, quirks).map_err(|e| e.to_string())
}

/// Each interval's count of [`EVENT`] on box `b`, through a session of its own.
fn session_deltas(
    machine: &Machine,
    boxes: &'static Boxes,
    b: &'static PmuBox,
    quirks: Quirks,
) -> Result<Vec<u64>> {
    let backend = SessionBackend::Registers(machine);
    steady_deltas(&backend, (boxes, b), &steady(), quirks)
}

/// Where box `b`'s registers are on socket 0.
fn socket0(b: &PmuBox) -> Where {
    match b.scope() {
        Scope::Cpu | Scope::L3 => Where {
            cpu: Some(0),
            ..Where::default()
        },
        Scope::Socket => Where {
            socket: Some(0),
            ..Where::default()
        },
    }
}

/// The registers a session on box `b` writes, with where they are:
/// the controls and counters of the counters the part has (as many general ones as CPUID
/// says, where the spec gives them a `count-cpuid`), its box-level controls, and the
/// processor's `<global-init>` registers.
fn registers_of(machine: &Machine, boxes: &'static Boxes, b: &'static PmuBox) -> Vec<(Reg, Where)> {
    let at = socket0(b);
    let on_part = general(b)
        .and_then(|g| {
            g.control
                .and_then(|r| r.info.count_cpuid)
                .or(g.counter.info.count_cpuid)
        })
        .and_then(|bits| machine.cpuid_count(bits))
        .map_or(usize::MAX, |n| n as usize);
    let general_number = |c: &crate::boxes::Counter| {
        b.counters
            .iter()
            .filter(|o| o.info.kind == CounterKind::General && o.number() < c.number())
            .count()
    };
    // A core's fixed counter i (numbered 32 + i) is there where CPUID leaf 0AH says
    // (Clearwater Forest's 4-6 only on its cores); an uncore box's fixed counters always are.
    let fixed_on_part = |c: &crate::boxes::Counter| {
        let leaf = (b.scope() == Scope::Cpu)
            .then(|| machine.cpuid(0x0A))
            .flatten()
            .map(crate::cpuid::Cpuid0A::from);
        leaf.is_none_or(|l| l.fixed_counter(c.number().saturating_sub(32)))
    };
    let own = b
        .counters
        .iter()
        .filter(|c| match c.info.kind {
            CounterKind::FreeRunning => false,
            CounterKind::General => general_number(c) < on_part,
            CounterKind::Fixed => fixed_on_part(c),
        })
        .flat_map(|c| c.control.into_iter().chain([c.counter]))
        .chain(b.controls.iter().copied());
    let global = global_inits(boxes).into_iter().map(|(r, _)| r);
    own.chain(global).map(|r| (r, at)).collect()
}

/// Register `r` where `at` says, on `machine` (by its layout and address, not its name: a
/// processor built only for a test has no name the lookup knows).
fn resolved(machine: &Machine, r: Reg, at: &Where) -> Result<Resolved> {
    Ok(Resolved {
        info: r.info,
        address: r.addr,
        place: machine.place(r.info, r.addr, at)?,
    })
}

/// What each of `registers` reads, or the first read that failed.
fn snapshot(machine: &Machine, registers: &[(Reg, Where)]) -> Result<Vec<u64>> {
    registers
        .iter()
        .map(|(r, at)| machine.read(&resolved(machine, *r, at)?))
        .collect()
}

/// The put-back check: every register a session wrote reads what it read before the run.
fn put_back(machine: &Machine, registers: &[(Reg, Where)], before: Result<Vec<u64>>) -> CheckRow {
    let name = "put-back";
    let expected = format!("{} registers as found", registers.len());
    let read = before.and_then(|b| Ok((b, snapshot(machine, registers)?)));
    match read {
        Ok((before, after)) => {
            let changed: Vec<String> = registers
                .iter()
                .zip(before.iter().zip(&after))
                .filter(|(_, (b, a))| b != a)
                .map(|((r, _), (b, a))| format!("{} {b:#x} -> {a:#x}", r.name()))
                .collect();
            let measured = format!("{} changed", changed.len());
            let mut row = CheckRow::judged(name, expected, measured, changed.is_empty());
            row.note = changed.join(", ");
            row
        }
        Err(e) => CheckRow::failed(name, expected, e.to_string()),
    }
}
