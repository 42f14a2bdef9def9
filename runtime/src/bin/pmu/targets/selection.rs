//! What to count: a [`Selection`] in the command line's words, checked against the spec into
//! a [`Plan`] before any machine is touched.

use pmu_regs::CounterKind;
use pmu_runtime::perf::{syntax, EventSpec};
use pmu_runtime::session::{self, find_box, BoxEvents, Counted, Route, Sockets};
use pmu_runtime::UsageError;

use crate::failure::Failure;
use crate::perf_cli::Backend;
use crate::watch_events;

/// What to count, as the user wrote it.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Box names, as given to `--unit`.
    pub units: Vec<String>,
    /// Events, as given to `--event`, in order: the i-th goes to the i-th free general
    /// counter of every box.
    pub events: Vec<String>,
    /// The sockets.
    pub sockets: Sockets,
    /// The CPU to reach MSR boxes through (`--cpu`), instead of one of the socket's.
    pub cpu: Option<u32>,
    /// The processor this machine was detected as, which settles a box name two processors
    /// share (`C3`); `None` on the simulator or where nothing was detected.
    pub detected: Option<&'static str>,
    /// How the counters are reached: the registers, the kernel's perf PMU, or perf where the
    /// kernel has the box's PMU (`auto`). The simulator is always raw.
    pub backend: Backend,
    /// A kernel PMU to count instead of the spec's boxes (`--pmu msr`): `events` are then its
    /// event names or format terms (`tsc`, `event=0x3c`), counted through perf.
    pub kernel_pmu: Option<String>,
    /// With [`Sockets::All`]: count a per-CPU PMU (the core PMU, a kernel PMU without a
    /// cpumask such as `msr`) on every online CPU, as `perf stat -a` does, not on one CPU
    /// per socket.
    pub every_cpu: bool,
}

impl Selection {
    /// One line of a configuration file: a box name, then its events separated by spaces,
    /// in `watch --event`'s grammar (`IMC2 event=UNC_M_CAS_COUNT.RD ev_sel=0x04,umask=0x0c`).
    /// `None` for a blank line or a comment (`#`).
    pub fn from_line(line: &str, sockets: Sockets) -> Result<Option<Selection>, Failure> {
        let line = line.split('#').next().unwrap_or_default().trim();
        let mut words = line.split_whitespace();
        let Some(unit) = words.next() else {
            return Ok(None);
        };
        let events: Vec<String> = words.map(str::to_string).collect();
        if events.is_empty() {
            return Err(Failure::usage(format!(
                "`{line}` names a box but no event; write the box, then its events: {unit} \
                 ev_sel=0x01"
            )));
        }
        Ok(Some(Selection {
            units: vec![unit.to_string()],
            events,
            sockets,
            cpu: None,
            detected: None,
            backend: Backend::Auto,
            kernel_pmu: None,
            every_cpu: false,
        }))
    }

    /// Refuses what the simulator cannot do: it is reached through its registers, so it has
    /// no kernel PMU to count (`--pmu`) and nothing for `--backend perf` to reach.
    pub fn check_simulated(&self) -> Result<(), Failure> {
        if self.kernel_pmu.is_none() && self.units.is_empty() {
            return Err(Failure::usage(format!(
                "--sim simulates the spec's boxes: give --unit (`pmu list --summary`); perf's \
                 events ({}) are counted for real, without --sim",
                self.events.join(",")
            )));
        }
        if let Some(pmu) = &self.kernel_pmu {
            return Err(Failure::usage(format!(
                "--pmu {pmu} counts this machine's kernel PMU through perf, which --sim does not \
                 simulate; drop --sim to count it for real, or give --unit boxes to simulate"
            )));
        }
        if self.backend == Backend::Perf {
            return Err(Failure::usage(
                "--sim simulates the registers, so it is counted raw; drop --backend perf (or \
                 --sim)"
                    .to_string(),
            ));
        }
        Ok(())
    }

    /// Checks the selection against the spec, touching no machine: every box exists (once),
    /// every event reads in the grammar and fits the counter it will be programmed on, and
    /// `--cpu` is given only for MSR boxes.
    pub fn resolve(&self) -> Result<Plan, Failure> {
        if self.kernel_pmu.is_some() || self.units.is_empty() {
            return self.plan_perf();
        }
        for unit in &self.units {
            if self
                .units
                .iter()
                .filter(|u| u.eq_ignore_ascii_case(unit))
                .count()
                > 1
            {
                return Err(Failure::usage(format!(
                    "--unit {unit} is given twice; give each box once"
                )));
            }
        }
        // What can be wrong with an event whatever the box, first.
        for e in &self.events {
            watch_events::check_words(&watch_events::named(e))?;
        }
        let mut boxes: Vec<BoxEvents> = Vec::new();
        for unit in &self.units {
            let planned = self.plan_box(unit, &boxes)?;
            boxes.push(planned);
        }
        Ok(self.plan(Counted::Boxes(boxes)))
    }

    /// Events in perf's language (no `--unit`): `msr/tsc/`, `cpu-clock`, lists of them; with
    /// `--pmu NAME`, each `--event` is that PMU's event names or terms (`tsc`).
    fn plan_perf(&self) -> Result<Plan, Failure> {
        if self.backend == Backend::Raw {
            return Err(UsageError::BadValue {
                text: "perf's events with --backend raw".into(),
                expected: "--backend perf or auto, or --unit boxes to program raw".into(),
            }
            .into());
        }
        let (names, specs) = match &self.kernel_pmu {
            Some(pmu) => {
                let mut specs = Vec::new();
                for e in &self.events {
                    if e.contains('/') {
                        return Err(Failure::usage(format!(
                            "--pmu {pmu} takes its event names or terms (tsc, event=0x3c);                              `{e}` names a PMU itself: drop --pmu, or the slashes"
                        )));
                    }
                    specs.push(EventSpec::Pmu {
                        pmu: pmu.clone(),
                        terms: e.clone(),
                        modifier: None,
                    });
                }
                (self.events.clone(), specs)
            }
            None => {
                let lists: Vec<&str> = self.events.iter().map(String::as_str).collect();
                syntax::parse_lists(&lists)
                    .map_err(|e| self.without_unit(e))?
                    .into_iter()
                    .unzip()
            }
        };
        let mut plan = self.plan(Counted::Perf(specs));
        plan.counting.events = names;
        Ok(plan)
    }

    /// An event that does not read as perf's: where it reads as ours (`ev_sel=0x01`), the
    /// box is what is missing.
    fn without_unit(&self, e: pmu_runtime::perf::PerfError) -> Failure {
        let ours = self
            .events
            .iter()
            .find(|e| e.contains('=') && !e.contains('/'));
        match ours {
            Some(text) => Failure::usage(format!(
                "--event {text} needs a box: give --unit (`pmu list --summary`), or write a \
                 kernel PMU's event as PMU/TERMS/ (cpu/event=0x3c/, msr/tsc/)"
            )),
            None => pmu_runtime::Error::from(e).into(),
        }
    }

    /// Box `unit` with its events parsed for its counters' controls, refusing a box that
    /// `before` (the boxes already planned) names already or that is of another processor.
    fn plan_box(&self, unit: &str, before: &[BoxEvents]) -> Result<BoxEvents, Failure> {
        // Once one `--unit` settled the processor, the others are looked up in it.
        let scope = before
            .first()
            .map(|x| x.boxes.processor.id)
            .or(self.detected);
        let (b, pmu_box) = find_box(unit, scope)?;
        // Two names of one box (`CH0` and `IMC0`) would program it twice.
        if let Some((other, _)) = self
            .units
            .iter()
            .zip(before)
            .find(|(_, x)| std::ptr::eq(x.pmu_box, pmu_box))
        {
            return Err(Failure::usage(format!(
                "--unit {unit} is box {} of {}, which --unit {other} names already; give \
                 each box once",
                pmu_box.instance, b.processor.id
            )));
        }
        if let Some(p) = before.first().map(|x| x.boxes.processor) {
            if p.id != b.processor.id {
                return Err(Failure::usage(format!(
                    "--unit {unit} is a {} box, but {} is a {} box; watch the boxes of one \
                     processor at a time",
                    b.processor.id, self.units[0], p.id
                )));
            }
        }
        let mut planned = BoxEvents {
            boxes: b,
            pmu_box,
            events: Vec::new(),
        };
        if planned.in_pci() && self.cpu.is_some() {
            return Err(Failure::usage(format!(
                "--cpu does not apply to {unit}: its registers are in PCI configuration \
                 space; choose it with --socket or --device"
            )));
        }
        let general: Vec<_> = pmu_box
            .counters
            .iter()
            .filter(|c| c.info.kind == CounterKind::General && c.control.is_some())
            .collect();
        // An event that names a free-running counter takes it; the others go onto the
        // general counters, in turns where there are more of them than counters. Each is
        // checked against the control of a counter it will be on.
        let mut on_general = 0;
        for (i, text) in self.events.iter().enumerate() {
            let text = &*watch_events::named(text);
            if let Some(sel) = watch_events::free_running(pmu_box, text) {
                planned.events.push(sel);
                continue;
            }
            let Some(c) = general.get(on_general % general.len().max(1)) else {
                if pmu_box.counters.iter().all(|c| c.control.is_none()) {
                    return Err(watch_events::no_free_running(pmu_box, text).into());
                }
                return Err(UsageError::NoSuchCounter {
                    counter: format!(
                        "general counter for event {} in {}",
                        i + 1,
                        pmu_box.instance
                    ),
                    available: pmu_box.offers(),
                }
                .into());
            };
            on_general += 1;
            let control = c.control.expect("filtered on a control").info;
            planned
                .events
                .push(watch_events::parse(control, text, self.detected)?);
        }
        Ok(planned)
    }

    /// The plan that counts `counted` as this selection says.
    fn plan(&self, counted: Counted) -> Plan {
        Plan {
            selection: self.clone(),
            counting: session::Selection {
                counted,
                events: self.events.clone(),
                sockets: self.sockets,
                cpu: self.cpu,
                every_cpu: self.every_cpu,
            },
        }
    }

    /// Which way the boxes are reached.
    pub fn route(&self) -> Route {
        match self.backend {
            Backend::Auto => Route::Auto,
            Backend::Perf => Route::Perf,
            Backend::Raw => Route::Raw,
        }
    }
}

/// A [`Selection`] checked against the spec: the library's selection, which a
/// [`pmu_runtime::session::Session`] opens.
#[derive(Debug)]
pub struct Plan {
    selection: Selection,
    counting: session::Selection,
}

impl Plan {
    /// The processor whose boxes these are (what `--sim` must simulate); for a kernel PMU
    /// (`--pmu`), the first processor of the spec, whose registers are not touched.
    pub fn processor(&self) -> &'static pmu_regs::ProcessorInfo {
        self.counting.processor()
    }

    /// The boxes, as (processor id, box instance), in `--unit` order.
    pub fn box_names(&self) -> Vec<(&'static str, &'static str)> {
        self.counting
            .boxes()
            .iter()
            .map(|b| (b.boxes.processor.id, b.pmu_box.instance))
            .collect()
    }

    /// Refuses what the place cannot reach, before anything is touched: under `--sim`, a
    /// kernel PMU or `--backend perf`; on hardware, boxes of another processor than this
    /// machine's (as `read` and `write` refuse registers).
    pub fn check_reach(&self, sim: bool, root: Option<&std::path::Path>) -> Result<(), Failure> {
        if sim {
            self.selection.check_simulated()
        } else if !self.selection.units.is_empty() {
            crate::detect::check_box(root, &self.selection.units.join(", "), self.processor().id)
        } else {
            Ok(())
        }
    }

    /// The selection it was made from.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// What the session counts.
    pub fn counting(&self) -> &session::Selection {
        &self.counting
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, sockets: Sockets) -> Selection {
        Selection::from_line(text, sockets)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .expect("a selection")
    }

    #[test]
    fn a_configuration_line_reads_as_watch_reads_its_arguments() {
        assert!(Selection::from_line("  # a comment", Sockets::All)
            .ok()
            .flatten()
            .is_none());
        assert!(Selection::from_line("", Sockets::All)
            .ok()
            .flatten()
            .is_none());
        let err = Selection::from_line("IMC2", Sockets::All).err().unwrap();
        assert!(err.to_string().contains("no event"), "{err}");
        let s = line(
            "IMC2 event=UNC_M_CAS_COUNT.RD ev_sel=0x04,umask=0x0c # reads, writes",
            Sockets::All,
        );
        assert_eq!(s.units, ["IMC2"]);
        assert_eq!(
            s.events,
            ["event=UNC_M_CAS_COUNT.RD", "ev_sel=0x04,umask=0x0c"]
        );
        // The same checks as watch: a setting watch makes itself, an unknown box.
        let err = line("IMC2 ev_sel=1,en=0", Sockets::All)
            .resolve()
            .err()
            .unwrap();
        assert!(err.to_string().contains("`en` cannot be given"), "{err}");
        let err = line("Q9 ev_sel=1", Sockets::All).resolve().err().unwrap();
        assert!(
            err.to_string()
                .contains("no processor has a box Q9; did you mean C9"),
            "{err}"
        );
        // A line resolves to the library's selection of that box and its events.
        let plan = line(
            "xeon-e5-2600:IMC2 event=UNC_M_CAS_COUNT.RD",
            Sockets::One(1),
        )
        .resolve()
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.box_names(), [("xeon-e5-2600", "CH2")]);
        assert_eq!(plan.counting().sockets, Sockets::One(1));
        assert_eq!(plan.counting().boxes()[0].events[0].ev_sel, 0x04);
    }
}
