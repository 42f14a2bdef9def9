//! A [`Selection`] from names and words, as a command line or a configuration file says what
//! to count: boxes by name (`C3`, `CBO3`, `IMC2`, `PCU`, `CORE`, `xeon-7500:C3`) with events
//! in `--event`'s grammar ([`super::words`]), or a kernel PMU's events by name. Everything that
//! can be checked without a machine is checked here.

use pmu_regs::CounterKind;

use super::selection::{find_box, BoxEvents, Counted, Selection, Sockets};
use super::words;
use crate::boxes::PmuBox;
use crate::error::UsageError;
use crate::perf::EventSpec;

impl Selection {
    /// Boxes named as `pmu watch --unit` takes them, each counting `events` (in `--event`'s
    /// grammar: the i-th on the i-th free general counter of every box, in turns where there
    /// are more events than counters, or on the free-running counter an event names), on
    /// socket 0. `processor` settles a box name two processors share and names the core
    /// events `event=NAME` may use (the detected or named processor); once one box settled
    /// the processor, the others are looked up in it. `cpu`: the CPU MSR boxes are reached
    /// through (refused for a box in PCI configuration space).
    pub fn of_named_boxes(
        units: &[impl AsRef<str>],
        events: &[impl AsRef<str>],
        processor: Option<&'static str>,
        cpu: Option<u32>,
    ) -> Result<Self, UsageError> {
        let units: Vec<&str> = units.iter().map(AsRef::as_ref).collect();
        let events: Vec<&str> = events.iter().map(AsRef::as_ref).collect();
        for unit in &units {
            if units
                .iter()
                .filter(|u| u.eq_ignore_ascii_case(unit))
                .count()
                > 1
            {
                return Err(UsageError::Refused(format!(
                    "--unit {unit} is given twice; give each box once"
                )));
            }
        }
        // What can be wrong with an event whatever the box, first.
        for e in &events {
            words::check_words(&words::named(e))?;
        }
        let mut boxes: Vec<BoxEvents> = Vec::new();
        for unit in &units {
            let planned = named_box(unit, &units, &boxes, processor)?;
            if planned.in_pci() && cpu.is_some() {
                return Err(UsageError::Refused(format!(
                    "--cpu does not apply to {unit}: its registers are in PCI configuration \
                     space; choose it with --socket or --device"
                )));
            }
            boxes.push(with_events(planned, &events, processor)?);
        }
        Ok(Selection {
            counted: Counted::Boxes(boxes),
            events: events.iter().map(|e| e.to_string()).collect(),
            sockets: Sockets::One(0),
            cpu,
            every_cpu: false,
        })
    }

    /// Events of kernel PMU `pmu` (`msr`, `uncore_imc_0`): each its event names or format
    /// terms (`tsc`, `event=0x3c`), counted through perf, on socket 0.
    pub fn of_kernel_pmu(pmu: &str, events: &[impl AsRef<str>]) -> Result<Self, UsageError> {
        let mut specs = Vec::new();
        for e in events.iter().map(AsRef::as_ref) {
            if e.contains('/') {
                return Err(UsageError::Refused(format!(
                    "--pmu {pmu} takes its event names or terms (tsc, event=0x3c); \
                     `{e}` names a PMU itself: drop --pmu, or the slashes"
                )));
            }
            specs.push(EventSpec::Pmu {
                pmu: pmu.to_string(),
                terms: e.to_string(),
                modifier: None,
            });
        }
        Ok(Selection {
            counted: Counted::Perf(specs),
            events: events.iter().map(|e| e.as_ref().to_string()).collect(),
            sockets: Sockets::One(0),
            cpu: None,
            every_cpu: false,
        })
    }

    /// The same selection with MSR boxes (and a kernel PMU without a cpumask) reached through
    /// `cpu`.
    pub fn through(mut self, cpu: Option<u32>) -> Self {
        self.cpu = cpu;
        self
    }

    /// The same selection, with [`Sockets::All`] counting a per-CPU PMU on every online CPU
    /// (`every_cpu`), as `perf stat -a` does, rather than on one CPU per socket.
    pub fn on_every_cpu(mut self, every_cpu: bool) -> Self {
        self.every_cpu = every_cpu;
        self
    }
}

/// One line of a configuration file: a box name, then its events separated by spaces, in
/// `--event`'s grammar (`IMC2 event=UNC_M_CAS_COUNT.RD ev_sel=0x04,umask=0x0c`). `None` for a
/// blank line or a comment (`#`).
pub fn config_line(line: &str) -> Result<Option<(String, Vec<String>)>, UsageError> {
    let line = line.split('#').next().unwrap_or_default().trim();
    let mut parts = line.split_whitespace();
    let Some(unit) = parts.next() else {
        return Ok(None);
    };
    let events: Vec<String> = parts.map(str::to_string).collect();
    if events.is_empty() {
        return Err(UsageError::Refused(format!(
            "`{line}` names a box but no event; write the box, then its events: {unit} \
             ev_sel=0x01"
        )));
    }
    Ok(Some((unit.to_string(), events)))
}

/// Box `unit` (one of `units`, the names given), refusing a box that `before` (the boxes
/// already found) has already or that is of another processor than theirs.
fn named_box(
    unit: &str,
    units: &[&str],
    before: &[BoxEvents],
    processor: Option<&'static str>,
) -> Result<BoxEvents, UsageError> {
    // Once one box settled the processor, the others are looked up in it.
    let scope = before.first().map(|x| x.boxes.processor.id).or(processor);
    let (b, pmu_box) = find_box(unit, scope)?;
    // Two names of one box (`CH0` and `IMC0`) would program it twice.
    if let Some((other, _)) = units
        .iter()
        .zip(before)
        .find(|(_, x)| std::ptr::eq(x.pmu_box, pmu_box))
    {
        return Err(UsageError::Refused(format!(
            "--unit {unit} is box {} of {}, which --unit {other} names already; give \
             each box once",
            pmu_box.instance, b.processor.id
        )));
    }
    if let Some(p) = before.first().map(|x| x.boxes.processor) {
        if p.id != b.processor.id {
            return Err(UsageError::Refused(format!(
                "--unit {unit} is a {} box, but {} is a {} box; watch the boxes of one \
                 processor at a time",
                b.processor.id, units[0], p.id
            )));
        }
    }
    Ok(BoxEvents {
        boxes: b,
        pmu_box,
        events: Vec::new(),
    })
}

/// `planned` with `events` parsed for its counters' controls: an event that names a
/// free-running counter takes it; the others go onto the general counters, in turns where
/// there are more of them than counters, each checked against the control of a counter it
/// will be on.
fn with_events(
    mut planned: BoxEvents,
    events: &[&str],
    core: Option<&str>,
) -> Result<BoxEvents, UsageError> {
    let pmu_box: &PmuBox = planned.pmu_box;
    let general = general_controls(pmu_box);
    let mut on_general = 0;
    for (i, text) in events.iter().enumerate() {
        let text = &*words::named(text);
        if let Some(sel) = words::free_running(pmu_box, text) {
            planned.events.push(sel);
            continue;
        }
        let Some(control) = general.get(on_general % general.len().max(1)).copied() else {
            if pmu_box.counters.iter().all(|c| c.control.is_none()) {
                return Err(words::no_free_running(pmu_box, text));
            }
            return Err(UsageError::NoSuchCounter {
                counter: format!(
                    "general counter for event {} in {}",
                    i + 1,
                    pmu_box.instance
                ),
                available: pmu_box.offers(),
            });
        };
        on_general += 1;
        planned.events.push(words::event(control, text, core)?);
    }
    Ok(planned)
}

/// The layouts of the general counters' controls of `pmu_box`, which `--event` words are
/// read against: its resolved counters', or, for a box the discovery table places and the
/// session has not placed yet, its unit's (the same layouts, without an address).
fn general_controls(pmu_box: &PmuBox) -> Vec<&'static pmu_regs::RegisterInfo> {
    let general = |k: CounterKind| k == CounterKind::General;
    if pmu_box.table_placed() && pmu_box.counters.is_empty() {
        let counters = pmu_box.pmu.counters.iter().filter(|c| general(c.kind));
        return counters
            .filter_map(|c| c.control.map(|r| r.register))
            .collect();
    }
    let counters = pmu_box.counters.iter().filter(|c| general(c.info.kind));
    counters.filter_map(|c| c.control.map(|r| r.info)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_line_reads_as_watch_reads_its_arguments() {
        assert!(config_line("  # a comment").ok().flatten().is_none());
        assert!(config_line("").ok().flatten().is_none());
        let err = config_line("IMC2").err().unwrap();
        assert!(err.to_string().contains("no event"), "{err}");
        let (unit, events) =
            config_line("IMC2 event=UNC_M_CAS_COUNT.RD ev_sel=0x04,umask=0x0c # reads, writes")
                .unwrap()
                .unwrap();
        assert_eq!(unit, "IMC2");
        assert_eq!(
            events,
            ["event=UNC_M_CAS_COUNT.RD", "ev_sel=0x04,umask=0x0c"]
        );
        // The same checks as watch: a setting watch makes itself, an unknown box.
        let err = Selection::of_named_boxes(&["IMC2"], &["ev_sel=1,en=0"], None, None)
            .err()
            .unwrap();
        assert!(err.to_string().contains("`en` cannot be given"), "{err}");
        let err = Selection::of_named_boxes(&["Q9"], &["ev_sel=1"], None, None)
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .contains("no processor has a box Q9; did you mean C9"),
            "{err}"
        );
        // A line gives the library's selection of that box and its events.
        let s = Selection::of_named_boxes(
            &["xeon-e5-2600:IMC2"],
            &["event=UNC_M_CAS_COUNT.RD"],
            None,
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .on(Sockets::One(1));
        assert_eq!(s.boxes()[0].pmu_box.instance, "CH2");
        assert_eq!(s.sockets, Sockets::One(1));
        assert_eq!(s.boxes()[0].events[0].ev_sel, 0x04);
    }
}
