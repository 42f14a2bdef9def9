//! A counting set: the counters that `watch` (and `serve`) program, read and put back.
//!
//! A [`Selection`] says what to count in the command line's words: boxes by name (`C3`,
//! `CBO3`, `IMC2`, `PCU`, `CORE`, `xeon-7500:C3`), events in `watch --event`'s grammar
//! (`event=NAME`, `ev_sel=0x04,umask=0x03`, named values, the number rule), sockets and the
//! backend. It is made from `watch`'s arguments or from one line of a configuration file
//! ([`Selection::from_line`]), so both read the same grammar. [`Selection::resolve`] checks
//! everything that can be checked without the machine: the boxes exist, each event fits the
//! box's counter controls (found by [`pmu_regs::Role`], never by field name), there are
//! enough counters.
//!
//! [`Targets::program`] then programs every selected box on every selected socket, and
//! [`Targets::read`] reads one value per counter ([`Targets::series`] says which). A failure
//! while programming puts back what was already programmed; [`Targets::close`] (or dropping
//! the value) puts back everything.
//!
//! ```text
//! let selection = Selection::from_line("IMC2 event=UNC_M_CAS_COUNT.RD", Sockets::All)?;
//! let plan = selection.resolve()?;
//! let machine = place.machine_for(plan.processor())?;
//! let mut targets = Targets::program(&machine, &plan)?;
//! let values = targets.read();       // one Option<Reading> per series
//! targets.close()?;                  // every register as it was
//! ```

use pmu_regs::{CounterKind, Location, Scope, PROCESSORS};
use pmu_runtime::boxes::{Boxes, PmuBox};
use pmu_runtime::machine::Machine;
use pmu_runtime::sampling::counting::Counting;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::sim::UncoreEvent;
use pmu_runtime::{Error, UsageError};

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
        }))
    }

    /// Checks the selection against the spec, touching no machine: every box exists (once),
    /// every event reads in the grammar and fits the counter it will be programmed on, and
    /// `--cpu` is given only for MSR boxes.
    pub fn resolve(&self) -> Result<Plan, Failure> {
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
                sels.push(watch_events::parse(control, text)?);
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
struct PlannedBox {
    boxes: &'static Boxes,
    pmu_box: &'static PmuBox,
    in_pci: bool,
    sels: Vec<EventSelect>,
}

/// A [`Selection`] checked against the spec: what [`Targets::program`] programs.
#[derive(Debug)]
pub struct Plan {
    selection: Selection,
    boxes: Vec<PlannedBox>,
}

impl Plan {
    /// The processor whose boxes these are (what `--sim` must simulate).
    pub fn processor(&self) -> &'static pmu_regs::ProcessorInfo {
        self.boxes[0].boxes.processor
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

/// What one counter counts: one series of readings.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesInfo {
    /// The processor's id (`xeon-e5-2600`).
    pub processor: &'static str,
    /// The socket.
    pub socket: u32,
    /// The unit (box kind) as the spec names it (`IMC`).
    pub unit: &'static str,
    /// The box instance (`CH2`).
    pub instance: &'static str,
    /// The counter register's name (`MC_CH2_PCI_PMON_CTR0`).
    pub counter: &'static str,
    /// The event as the user gave it (`event=UNC_M_CAS_COUNT.RD`).
    pub event: String,
    /// Which of the selection's events it is (its position among `--event`s).
    pub event_index: usize,
    /// The backend counting it: `raw` (registers on this machine), `sim` (the simulator) or
    /// `perf` (the kernel's PMU driver).
    pub backend: &'static str,
    /// The counter's width in bits: readings wrap at 2^width.
    pub width: u32,
}

/// One counter's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The counter's value (raw counters: the counting bits; they wrap at 2^width).
    pub value: u64,
    /// The share of the time the counter was counting, where the backend multiplexes
    /// (perf); `None` where it counts all the time.
    pub running_ratio: Option<f64>,
}

/// One box on one socket, programmed.
struct Group<'m> {
    counting: Counting<'m, Machine>,
    counters: Vec<u32>,
    sels: Vec<EventSelect>,
    cpu: u32,
    socket: u32,
}

/// The programmed counters of a [`Plan`]: every selected box on every selected socket.
/// Dropping it puts every register back (best effort); [`Targets::close`] does the same and
/// reports a failure.
pub struct Targets<'m> {
    machine: &'m Machine,
    groups: Vec<Group<'m>>,
    series: Vec<SeriesInfo>,
}

impl<'m> Targets<'m> {
    /// Programs every box of `plan` on every socket it selects, through `machine` (hardware
    /// or `--sim`). Nothing stays programmed if any box fails: the ones before it are put
    /// back, and a failure of that is reported with the first error.
    pub fn program(machine: &'m Machine, plan: &Plan) -> Result<Targets<'m>, Error> {
        let sockets: Vec<u32> = match plan.selection.sockets {
            Sockets::All => machine.topology()?.sockets().collect(),
            Sockets::One(s) => vec![s],
        };
        let mut targets = Targets {
            machine,
            groups: Vec::new(),
            series: Vec::new(),
        };
        let backend = if machine.sim().is_some() {
            "sim"
        } else {
            "raw"
        };
        for &socket in &sockets {
            for planned in &plan.boxes {
                let result = targets.program_box(planned, socket, plan.selection.cpu);
                if let Err(e) = result {
                    return Err(match targets.restore() {
                        Ok(()) => e,
                        Err(cleanup) => Error::Cleanup {
                            error: Box::new(e),
                            cleanup: Box::new(cleanup),
                        },
                    });
                }
                let g = targets.groups.last().expect("just programmed");
                for (i, &n) in g.counters.iter().enumerate() {
                    targets.series.push(SeriesInfo {
                        processor: planned.boxes.processor.id,
                        socket,
                        unit: planned.pmu_box.unit.name,
                        instance: planned.pmu_box.instance,
                        counter: g.counting.counter_name(n)?,
                        event: plan.selection.events[i].clone(),
                        event_index: i,
                        backend,
                        width: g.counting.counter_width(n)?,
                    });
                }
            }
        }
        Ok(targets)
    }

    fn program_box(
        &mut self,
        planned: &PlannedBox,
        socket: u32,
        cpu: Option<u32>,
    ) -> Result<(), Error> {
        let pmu_box = planned.pmu_box;
        let cpu = match (cpu, pmu_box.scope()) {
            (Some(c), _) => c,
            (None, _) => self.machine.cpu_for_socket(socket)?,
        };
        let devices = if planned.in_pci {
            Some(self.machine.devices(planned.boxes.processor)?)
        } else {
            None
        };
        let shared = self
            .groups
            .iter()
            .find(|g| g.counting.shares_pmu(pmu_box, cpu, socket as usize));
        let mut counting = match shared {
            Some(g) => g
                .counting
                .open_beside(pmu_box, cpu, socket as usize, devices)?,
            None => Counting::open(
                self.machine,
                planned.boxes,
                pmu_box,
                cpu,
                socket as usize,
                devices,
            )?,
        };
        let counters = counting.program(&planned.sels)?;
        self.groups.push(Group {
            counting,
            counters,
            sels: planned.sels.clone(),
            cpu,
            socket,
        });
        Ok(())
    }

    /// What each value of [`Self::read`] is, in the same order.
    pub fn series(&self) -> &[SeriesInfo] {
        &self.series
    }

    /// Every counter's value, in [`Self::series`] order; `None` for each counter of a box
    /// whose read failed (the others are still read).
    // What `pmu serve` (issue 15) reads: one box failing must not stop the others.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn read(&self) -> Vec<Option<Reading>> {
        self.try_read()
            .into_iter()
            .flat_map(|r| match r {
                Ok(values) => values.into_iter().map(Some).collect::<Vec<_>>(),
                Err((n, _)) => vec![None; n],
            })
            .collect()
    }

    /// Every box's values, or the box's read error (with its number of counters).
    fn try_read(&self) -> Vec<Result<Vec<Reading>, (usize, Error)>> {
        self.groups
            .iter()
            .map(|g| {
                g.counters
                    .iter()
                    .map(|&n| {
                        g.counting.read_counter(n).map(|value| Reading {
                            value,
                            running_ratio: None,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| (g.counters.len(), e))
            })
            .collect()
    }

    /// Like [`Self::read`], but the first failure is returned: what `watch` reports.
    pub fn read_all(&self) -> Result<Vec<Reading>, Error> {
        let mut out = Vec::new();
        for r in self.try_read() {
            out.extend(r.map_err(|(_, e)| e)?);
        }
        Ok(out)
    }

    /// Under `--sim`, feeds `count` events of the `event_index`-th event of the selection to
    /// every box being counted (each socket's). Does nothing on hardware.
    pub fn inject(&self, event_index: usize, count: u64) -> Result<(), Error> {
        let Some(sim) = self.machine.sim() else {
            return Ok(());
        };
        for g in &self.groups {
            let Some(sel) = g.sels.get(event_index) else {
                continue;
            };
            let pmu_box = g.counting.pmu_box();
            match pmu_box.scope() {
                Scope::Cpu => sim.inject_core(g.cpu, sel.ev_sel, sel.umask.unwrap_or(0), count)?,
                Scope::Socket => sim.inject_uncore(
                    g.socket as usize,
                    UncoreEvent {
                        instance: pmu_box.instance,
                        ev_sel: sel.ev_sel,
                        umask: sel.umask,
                    },
                    count,
                )?,
            }
        }
        Ok(())
    }

    /// Puts back every box, last first; every box is tried, the first failure returned.
    fn restore(&mut self) -> Result<(), Error> {
        let mut first = None;
        while let Some(g) = self.groups.pop() {
            if let Err(e) = g.counting.close() {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Ends counting: puts back every register it changed, counter values included.
    pub fn close(mut self) -> Result<(), Error> {
        self.restore()
    }
}

impl Drop for Targets<'_> {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}
