//! What to count: a [`Selection`] in the command line's words, checked against the spec into
//! a [`Plan`] before any machine is touched.

use pmu_regs::{CounterKind, Location, PROCESSORS};
use pmu_runtime::boxes::{Boxes, PmuBox};
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::UsageError;

use super::Backend;
use crate::watch_events;
use crate::Failure;

/// Which sockets to count on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// One socket.
    One(u32),
    /// Every socket of the machine (`-a`).
    All,
}

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
    // `pmu serve`'s configuration file (issue 15) reads its lines with this.
    #[cfg_attr(not(test), allow(dead_code))]
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
        if let Some(pmu) = &self.kernel_pmu {
            return Err(Failure::usage(format!(
                "--pmu {pmu} counts this machine's kernel PMU through perf, which --sim does not \
                 simulate; drop --sim to count it for real, or give --unit boxes to simulate"
            )));
        }
        // Unless the test hook puts a simulated perf driver over the simulator.
        if self.backend == Backend::Perf && !crate::perf_cli::sim_driver_requested() {
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
        if self.kernel_pmu.is_some() {
            if self.backend == Backend::Raw {
                return Err(UsageError::BadValue {
                    text: "--pmu with --backend raw".into(),
                    expected: "--backend perf or auto: a kernel PMU is counted through perf".into(),
                }
                .into());
            }
            return Ok(Plan {
                selection: self.clone(),
                boxes: Vec::new(),
            });
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
            watch_events::check_words(e)?;
        }
        let mut boxes = Vec::new();
        for unit in &self.units {
            let (b, pmu_box) = find_box(unit, self.detected)?;
            // Two names of one box (`CH0` and `IMC0`) would program it twice.
            if let Some((other, _)) = self
                .units
                .iter()
                .zip(&boxes)
                .find(|(_, x): &(&String, &PlannedBox)| std::ptr::eq(x.pmu_box, pmu_box))
            {
                return Err(Failure::usage(format!(
                    "--unit {unit} is box {} of {}, which --unit {other} names already; give \
                     each box once",
                    pmu_box.instance, b.processor.id
                )));
            }
            if let Some(p) = boxes.first().map(|x: &PlannedBox| x.boxes.processor) {
                if p.id != b.processor.id {
                    return Err(Failure::usage(format!(
                        "--unit {unit} is a {} box, but {} is a {} box; watch the boxes of one \
                         processor at a time",
                        b.processor.id, self.units[0], p.id
                    )));
                }
            }
            let in_pci = pmu_box
                .counters
                .iter()
                .any(|c| matches!(c.counter.addr.location, Location::Pci { .. }));
            if in_pci && self.cpu.is_some() {
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
            let mut sels = Vec::new();
            for (i, text) in self.events.iter().enumerate() {
                let Some(c) = general.get(i) else {
                    return Err(UsageError::NoSuchCounter {
                        counter: format!(
                            "free counter for event {} in {}",
                            i + 1,
                            pmu_box.instance
                        ),
                        available: format!("{} general counters", general.len()),
                    }
                    .into());
                };
                let control = c.control.expect("filtered on a control").info;
                sels.push(watch_events::parse(control, text, self.detected)?);
            }
            boxes.push(PlannedBox {
                boxes: b,
                pmu_box,
                in_pci,
                sels,
            });
        }
        Ok(Plan {
            selection: self.clone(),
            boxes,
        })
    }
}

/// One box of a [`Plan`]: where it is and what its counters will count.
#[derive(Debug)]
pub(super) struct PlannedBox {
    pub(super) boxes: &'static Boxes,
    pub(super) pmu_box: &'static PmuBox,
    pub(super) in_pci: bool,
    pub(super) sels: Vec<EventSelect>,
}

/// A [`Selection`] checked against the spec: what
/// [`Targets::program`](super::Targets::program) programs.
#[derive(Debug)]
pub struct Plan {
    pub(super) selection: Selection,
    pub(super) boxes: Vec<PlannedBox>,
}

impl Plan {
    /// The processor whose boxes these are (what `--sim` must simulate); for a kernel PMU
    /// (`--pmu`), the first processor of the spec, whose registers are not touched.
    pub fn processor(&self) -> &'static pmu_regs::ProcessorInfo {
        self.boxes
            .first()
            .map_or(PROCESSORS[0], |b| b.boxes.processor)
    }

    /// The boxes, as (processor id, box instance), in `--unit` order.
    pub fn box_names(&self) -> Vec<(&'static str, &'static str)> {
        self.boxes
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
        } else if self.selection.kernel_pmu.is_none() {
            crate::detect::check_box(root, &self.selection.units.join(", "), self.processor().id)
        } else {
            Ok(())
        }
    }

    /// The selection it was made from.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }
}

/// The box `unit` names: an instance (`C3`, `CH2`, `HA`), a unit with the instance's
/// position (`CBO3`, `IMC2`), or a single-instance unit (`PCU`, `CORE`); a name two
/// processors share takes the processor as a prefix (`xeon-7500:C3`), or means the detected
/// processor's.
pub fn find_box(
    unit: &str,
    detected: Option<&str>,
) -> Result<(&'static Boxes, &'static PmuBox), Failure> {
    let (prefix, name) = match unit.split_once(':') {
        Some((p, n)) => (Some(p), n),
        None => (None, unit),
    };
    let found: Vec<(&'static Boxes, &'static PmuBox)> = PROCESSORS
        .iter()
        .filter(|p| prefix.is_none_or(|x| p.id.eq_ignore_ascii_case(x)))
        .map(|p| Boxes::of(p))
        .filter_map(|b| b.find(name).map(|x| (b, x)))
        .collect();
    let narrowed: Vec<_> = match (found.len(), detected) {
        (2.., Some(d)) => found
            .iter()
            .copied()
            .filter(|(b, _)| b.processor.id == d)
            .collect(),
        _ => found.clone(),
    };
    match (narrowed.as_slice(), found.as_slice()) {
        ([one], _) => Ok(*one),
        (_, []) => Err(UsageError::BadValue {
            text: unit.to_string(),
            expected: format!(
                "a box: {}",
                PROCESSORS
                    .iter()
                    .map(|p| format!("{} ({})", p.id, Boxes::of(p).names().join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }
        .into()),
        (_, several) => Err(UsageError::BadValue {
            text: unit.to_string(),
            expected: format!(
                "one box; several processors have it, so prefix one: {}",
                several
                    .iter()
                    .map(|(b, _)| format!("{}:{name}", b.processor.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
        .into()),
    }
}
