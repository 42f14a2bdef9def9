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
//! [`Targets::program`] then programs every selected box on every selected socket, raw
//! (the registers, through a [`Machine`]: hardware or `--sim`) or through the kernel's perf
//! PMU ([`Backend`]: `auto` takes perf where the kernel has the box's PMU), and
//! [`Targets::read`] reads one value per counter ([`Targets::series`] says which). A failure
//! while programming puts back what was already programmed; [`Targets::close`] (or dropping
//! the value) puts back everything.
//!
//! ```text
//! let selection = Selection::from_line("IMC2 event=UNC_M_CAS_COUNT.RD", Sockets::All)?;
//! let plan = selection.resolve()?;
//! let machine = place.machine_for(plan.processor())?;
//! let reach = Reach { machine: &machine, perf: perf_cli::sources(root) };
//! let targets = Targets::program(&reach, &plan)?;
//! let values = targets.read();       // one Option<Reading> per series
//! targets.inject(0, 1000)?;          // --sim: 1000 events of the first --event, every box
//! targets.close()?;                  // every register as it was
//! ```

use std::sync::Mutex;

use pmu_regs::{CounterKind, Location, Scope, PROCESSORS};
use pmu_runtime::boxes::{Boxes, PmuBox};
use pmu_runtime::machine::Machine;
use pmu_runtime::perf::counting::BoxGroup;
use pmu_runtime::perf::encode::{from_control, from_terms};
use pmu_runtime::perf::session::Session;
use pmu_runtime::perf::{EventSources, PerfEvent, PerfNames, Pmu, SpecNames};
use pmu_runtime::sampling::counting::Counting;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::sim::UncoreEvent;
use pmu_runtime::{Error, UsageError};

pub use crate::perf_cli::Backend;
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
        }))
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
    /// The processor whose boxes these are (what `--sim` must simulate); for a kernel PMU
    /// (`--pmu`), the first processor of the spec, whose registers are not touched.
    pub fn processor(&self) -> &'static pmu_regs::ProcessorInfo {
        self.boxes
            .first()
            .map_or(PROCESSORS[0], |b| b.boxes.processor)
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
    /// The processor's id (`xeon-e5-2600`); `kernel` for a kernel PMU counted by name
    /// (`--pmu`).
    pub processor: &'static str,
    /// The socket.
    pub socket: u32,
    /// The unit (box kind) as the spec names it (`IMC`), or the kernel PMU's name.
    pub unit: String,
    /// The box instance (`CH2`), or the kernel PMU's name.
    pub instance: String,
    /// The counter register's name (`MC_CH2_PCI_PMON_CTR0`); for a kernel PMU counted by
    /// name, the perf event string (`msr/event=0x0/`).
    pub counter: String,
    /// The event as the user gave it (`event=UNC_M_CAS_COUNT.RD`).
    pub event: String,
    /// Which of the selection's events it is (its position among `--event`s).
    pub event_index: usize,
    /// The backend counting it: `raw` (registers on this machine), `sim` (the simulator) or
    /// `perf` (the kernel's PMU driver).
    pub backend: &'static str,
    /// The counter's width in bits: readings wrap at 2^width (64 through perf, which
    /// accumulates in the kernel).
    pub width: u32,
    /// Through perf: the kernel PMU, the CPU the event is opened on, and the event string
    /// (`uncore_ha/event=0x1,umask=0x3/`).
    pub perf: Option<PerfSeries>,
}

/// Where a series counts through perf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfSeries {
    /// The kernel PMU (`uncore_imc_2`).
    pub pmu: String,
    /// The CPU the group is opened on.
    pub cpu: Option<u32>,
    /// The event as perf writes it.
    pub event: String,
}

/// One counter's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The counter's value (raw counters: the counting bits; they wrap at 2^width). Through
    /// perf, the count since opening, scaled to the whole enabled time where the kernel
    /// multiplexed it (as `perf stat` scales).
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

/// What a [`Targets`] set reaches the counters through.
pub struct Reach<'m> {
    /// The registers: hardware (under a root) or the simulator.
    pub machine: &'m Machine,
    /// The kernel's perf PMUs (`/sys/bus/event_source/devices`, under a root).
    pub perf: EventSources,
}

/// The programmed counters of a [`Plan`]: every selected box on every selected socket.
/// Dropping it puts every register back (best effort) and closes every perf event;
/// [`Targets::close`] does the same and reports a failure.
pub struct Targets<'m> {
    machine: &'m Machine,
    groups: Vec<Group<'m>>,
    /// Perf groups (one per kernel PMU and CPU); read needs `&mut`, hence the lock.
    perf: Mutex<Vec<BoxGroup>>,
    /// Per series: `None` for raw, or the perf group and member it reads.
    perf_index: Vec<Option<(usize, usize)>>,
    series: Vec<SeriesInfo>,
}

impl<'m> Targets<'m> {
    /// Programs every box of `plan` on every socket it selects, through `machine` (hardware
    /// or `--sim`). Nothing stays programmed if any box fails: the ones before it are put
    /// back, and a failure of that is reported with the first error.
    pub fn program(reach: &Reach<'m>, plan: &Plan) -> Result<Targets<'m>, Error> {
        let machine = reach.machine;
        let mut targets = Targets {
            machine,
            groups: Vec::new(),
            perf: Mutex::new(Vec::new()),
            perf_index: Vec::new(),
            series: Vec::new(),
        };
        let selection = &plan.selection;
        let simulated = machine.sim().is_some();
        if let Some(name) = &selection.kernel_pmu {
            let pmu = reach
                .perf
                .pmu(name, "a kernel driver this machine does not have")?;
            let events = selection
                .events
                .iter()
                .map(|e| from_terms(&pmu, e))
                .collect::<Result<Vec<_>, _>>()?;
            let series = |i: usize, ev: &PerfEvent| SeriesInfo {
                processor: "kernel",
                socket: 0,
                unit: pmu.name.clone(),
                instance: pmu.name.clone(),
                counter: ev.to_string(),
                event: selection.events[i].clone(),
                event_index: i,
                backend: "perf",
                width: 64,
                perf: None,
            };
            let planned: Vec<SeriesInfo> = events
                .iter()
                .enumerate()
                .map(|(i, e)| series(i, e))
                .collect();
            targets.open_perf(&pmu, &events, planned, selection, 0)?;
            return Ok(targets);
        }
        // Which boxes go through perf: decided (and their events encoded) before anything
        // is programmed, so a perf refusal leaves the registers untouched.
        let mut through_perf = Vec::new();
        for planned in &plan.boxes {
            through_perf.push(if simulated || selection.backend == Backend::Raw {
                None
            } else {
                perf_events(&reach.perf, planned, selection.backend)?
            });
        }
        let sockets: Vec<u32> = match (selection.sockets, through_perf.iter().all(Option::is_some))
        {
            (Sockets::One(s), _) => vec![s],
            // Every box through perf: the sockets are those of the PMUs' cpumasks.
            (Sockets::All, true) => Vec::new(),
            (Sockets::All, false) => machine.topology()?.sockets().collect(),
        };
        let backend = if simulated { "sim" } else { "raw" };
        for (planned, perf) in plan.boxes.iter().zip(&through_perf) {
            let Some(groups) = perf else { continue };
            for (pmu, events, counters) in groups {
                let planned_series: Vec<SeriesInfo> = events
                    .iter()
                    .zip(counters)
                    .map(|(_, &(i, counter))| SeriesInfo {
                        processor: planned.boxes.processor.id,
                        socket: 0,
                        unit: planned.pmu_box.unit.name.to_string(),
                        instance: planned.pmu_box.instance.to_string(),
                        counter: counter.to_string(),
                        event: selection.events[i].clone(),
                        event_index: i,
                        backend: "perf",
                        width: 64,
                        perf: None,
                    })
                    .collect();
                let result = match selection.sockets {
                    Sockets::One(s) => targets.open_perf(pmu, events, planned_series, selection, s),
                    Sockets::All => targets.open_perf_all(pmu, events, planned_series, selection),
                };
                if let Err(e) = result {
                    return Err(targets.undo(e));
                }
            }
        }
        for &socket in &sockets {
            for (planned, _) in plan
                .boxes
                .iter()
                .zip(&through_perf)
                .filter(|(_, p)| p.is_none())
            {
                let result = targets.program_box(planned, socket, selection.cpu);
                if let Err(e) = result {
                    return Err(targets.undo(e));
                }
                let g = targets.groups.last().expect("just programmed");
                let mut new = Vec::new();
                for (i, &n) in g.counters.iter().enumerate() {
                    new.push(SeriesInfo {
                        processor: planned.boxes.processor.id,
                        socket,
                        unit: planned.pmu_box.unit.name.to_string(),
                        instance: planned.pmu_box.instance.to_string(),
                        counter: g.counting.counter_name(n)?.to_string(),
                        event: selection.events[i].clone(),
                        event_index: i,
                        backend,
                        width: g.counting.counter_width(n)?,
                        perf: None,
                    });
                }
                targets.perf_index.extend(new.iter().map(|_| None));
                targets.series.extend(new);
            }
        }
        Ok(targets)
    }

    /// Puts back what was programmed after `e`, reporting both if that fails too.
    fn undo(&mut self, e: Error) -> Error {
        match self.restore() {
            Ok(()) => e,
            Err(cleanup) => Error::Cleanup {
                error: Box::new(e),
                cleanup: Box::new(cleanup),
            },
        }
    }

    /// Opens `events` of `pmu` as one group on each of its CPUs (one per socket).
    fn open_perf_all(
        &mut self,
        pmu: &Pmu,
        events: &[PerfEvent],
        planned: Vec<SeriesInfo>,
        selection: &Selection,
    ) -> Result<(), Error> {
        let cpus = Session::cpus(pmu, None, selection.cpu.unwrap_or(0))?;
        for (socket, cpu) in cpus.into_iter().enumerate() {
            self.open_group(pmu, events, &planned, socket as u32, cpu)?;
        }
        Ok(())
    }

    /// Opens `events` of `pmu` as one group on the CPU of `socket` its cpumask names.
    fn open_perf(
        &mut self,
        pmu: &Pmu,
        events: &[PerfEvent],
        planned: Vec<SeriesInfo>,
        selection: &Selection,
        socket: u32,
    ) -> Result<(), Error> {
        let fallback = selection.cpu.unwrap_or(0);
        let cpus = match selection.cpu {
            Some(c) => vec![Some(c)],
            None => Session::cpus(pmu, Some(socket), fallback)?,
        };
        for cpu in cpus {
            self.open_group(pmu, events, &planned, socket, cpu)?;
        }
        Ok(())
    }

    fn open_group(
        &mut self,
        pmu: &Pmu,
        events: &[PerfEvent],
        planned: &[SeriesInfo],
        socket: u32,
        cpu: Option<u32>,
    ) -> Result<(), Error> {
        let mut group = BoxGroup::open(pmu, cpu, events)?;
        group.enable()?;
        let groups = self.perf.get_mut().unwrap_or_else(|p| p.into_inner());
        let g = groups.len();
        groups.push(group);
        for (member, (s, ev)) in planned.iter().zip(events).enumerate() {
            self.series.push(SeriesInfo {
                socket,
                perf: Some(PerfSeries {
                    pmu: pmu.name.clone(),
                    cpu,
                    event: ev.to_string(),
                }),
                ..s.clone()
            });
            self.perf_index.push(Some((g, member)));
        }
        Ok(())
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
        let (raw, perf) = self.read_boxes();
        self.assemble(
            raw.into_iter().map(Result::ok).collect(),
            perf.into_iter().map(Result::ok).collect(),
        )
    }

    /// Like [`Self::read`], but the first failure is returned: what `watch` reports.
    pub fn read_all(&self) -> Result<Vec<Reading>, Error> {
        let (raw, perf) = self.read_boxes();
        let raw = raw
            .into_iter()
            .map(|r| r.map(Some))
            .collect::<Result<_, _>>()?;
        let perf = perf
            .into_iter()
            .map(|r| r.map(Some))
            .collect::<Result<_, _>>()?;
        Ok(self
            .assemble(raw, perf)
            .into_iter()
            .map(|r| r.expect("every box was read"))
            .collect())
    }

    /// Reads each box (raw) and each group (perf) once, all its counters together.
    #[allow(clippy::type_complexity)]
    fn read_boxes(
        &self,
    ) -> (
        Vec<Result<Vec<Reading>, Error>>,
        Vec<Result<Vec<Reading>, Error>>,
    ) {
        let raw = self
            .groups
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
                    .collect()
            })
            .collect();
        let perf = self
            .perf
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter_mut()
            .map(|g| {
                Ok(g.read()?
                    .into_iter()
                    .map(|r| Reading {
                        value: r.scaled().unwrap_or(0),
                        running_ratio: Some(if r.time_enabled.is_zero() {
                            0.0
                        } else {
                            r.time_running.as_secs_f64() / r.time_enabled.as_secs_f64()
                        }),
                    })
                    .collect())
            })
            .collect();
        (raw, perf)
    }

    /// The readings of boxes and groups (`None` where one failed) in series order.
    fn assemble(
        &self,
        raw: Vec<Option<Vec<Reading>>>,
        perf: Vec<Option<Vec<Reading>>>,
    ) -> Vec<Option<Reading>> {
        let (mut box_no, mut member) = (0, 0);
        let mut out = Vec::with_capacity(self.series.len());
        for index in &self.perf_index {
            out.push(match index {
                Some((g, m)) => perf[*g].as_ref().map(|v| v[*m]),
                None => {
                    let r = raw[box_no].as_ref().map(|v| v[member]);
                    member += 1;
                    if member == self.groups[box_no].counters.len() {
                        (box_no, member) = (box_no + 1, 0);
                    }
                    r
                }
            });
        }
        out
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

    /// Puts back every box, last first, and closes every perf event; every box is tried, the
    /// first failure returned.
    fn restore(&mut self) -> Result<(), Error> {
        self.perf
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
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

/// The perf groups that count `planned`'s events, by kernel PMU (a box split over two PMUs,
/// the Xeon 7500 R-box, has two): each PMU with its events and, per event, its index among
/// the selection's events and the counter register it stands for. `None` where `auto`
/// falls back to the registers because the kernel has no PMU for the box.
#[allow(clippy::type_complexity)]
fn perf_events(
    sources: &EventSources,
    planned: &PlannedBox,
    backend: Backend,
) -> Result<Option<Vec<(Pmu, Vec<PerfEvent>, Vec<(usize, &'static str)>)>>, Error> {
    let pmu_box = planned.pmu_box;
    let processor = planned.boxes.processor.id;
    let general: Vec<_> = pmu_box
        .counters
        .iter()
        .filter(|c| c.info.kind == CounterKind::General && c.control.is_some())
        .collect();
    let mut groups: Vec<(Pmu, Vec<PerfEvent>, Vec<(usize, &'static str)>)> = Vec::new();
    for (i, sel) in planned.sels.iter().enumerate() {
        let c = general[i];
        let name = SpecNames.lookup(
            processor,
            pmu_box.unit.name,
            pmu_box.instance,
            Some(c.number()),
        )?;
        if !sources.has(name.pmu) && backend == Backend::Auto {
            return Ok(None);
        }
        let at = match groups.iter().position(|(p, _, _)| p.name == name.pmu) {
            Some(at) => at,
            None => {
                groups.push((sources.pmu(name.pmu, name.driver)?, Vec::new(), Vec::new()));
                groups.len() - 1
            }
        };
        let control = c.control.expect("general counters have a control").info;
        let raw = Counting::<Machine>::control_value(c, sel)?;
        let (pmu, events, counters) = &mut groups[at];
        events.push(from_control(
            control,
            raw,
            &pmu.name,
            &pmu.formats,
            Some(name.kernel_counter(c.number())),
        )?);
        counters.push((i, c.counter.name()));
    }
    Ok(Some(groups))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmu_runtime::machine::Where;
    use pmu_runtime::sim::SimConfig;

    fn line(text: &str, sockets: Sockets) -> Selection {
        Selection::from_line(text, sockets)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .expect("a selection")
    }

    /// A register's value on the simulator (socket 0).
    fn peek(machine: &Machine, name: &str) -> u64 {
        let at = Where {
            socket: Some(0),
            ..Where::default()
        };
        machine.read(&machine.resolve(name, &at).unwrap()).unwrap()
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
        assert!(err.to_string().contains("CH2/IMC2"), "{err}");
    }

    #[test]
    fn every_box_on_every_socket_counts_injected_events_and_is_put_back() {
        let plan = line(
            "IMC2 event=UNC_M_CAS_COUNT.RD ev_sel=0x04,umask=0x0c",
            Sockets::All,
        )
        .resolve()
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.processor().id, "xeon-e5-2600");
        let machine = Machine::simulated(SimConfig::of(plan.processor()));
        let before = peek(&machine, "MC_CH2_PCI_PMON_CTL0");
        let reach = Reach {
            machine: &machine,
            perf: EventSources::with_root("/nonexistent"),
        };
        let targets = Targets::program(&reach, &plan).unwrap();
        let series = targets.series();
        let sockets = machine.topology().unwrap().sockets().count();
        assert_eq!(series.len(), 2 * sockets);
        assert_eq!(
            series[1],
            SeriesInfo {
                processor: "xeon-e5-2600",
                socket: 0,
                unit: "IMC".into(),
                instance: "CH2".into(),
                counter: "MC_CH2_PCI_PMON_CTR1".into(),
                event: "ev_sel=0x04,umask=0x0c".into(),
                event_index: 1,
                backend: "sim",
                width: 48,
                perf: None,
            }
        );
        assert_ne!(peek(&machine, "MC_CH2_PCI_PMON_CTL0"), before, "programmed");
        let start = targets.read();
        targets.inject(0, 1000).unwrap();
        targets.inject(1, 7).unwrap();
        let now = targets.read();
        for ((s, a), b) in series.iter().zip(&start).zip(&now) {
            let (a, b) = (a.unwrap(), b.unwrap());
            assert_eq!(b.running_ratio, None);
            let expected = if s.event_index == 0 { 1000 } else { 7 };
            assert_eq!(b.value - a.value, expected, "{s:?}");
        }
        targets.close().unwrap();
        assert_eq!(peek(&machine, "MC_CH2_PCI_PMON_CTL0"), before, "put back");
    }

    #[test]
    fn dropping_the_set_puts_the_registers_back_and_a_failed_read_is_none() {
        let plan = line("xeon-7500:C3 ev_sel=0x01", Sockets::One(0))
            .resolve()
            .unwrap_or_else(|e| panic!("{e}"));
        let machine = Machine::simulated(SimConfig::of(plan.processor()));
        let before = peek(&machine, "C3_MSR_PMON_EVT_SEL0");
        let reach = Reach {
            machine: &machine,
            perf: EventSources::with_root("/nonexistent"),
        };
        {
            let targets = Targets::program(&reach, &plan).unwrap();
            assert_ne!(peek(&machine, "C3_MSR_PMON_EVT_SEL0"), before);
            assert!(targets.read()[0].is_some());
        }
        assert_eq!(
            peek(&machine, "C3_MSR_PMON_EVT_SEL0"),
            before,
            "put back on drop"
        );
        // A box whose read fails reads as None, not as an error for the whole set: fail
        // each read in turn until the first one after programming.
        let failed_read = (1..100).any(|n| {
            let faulty = Machine::simulated(SimConfig::of(plan.processor())).with_fault(
                pmu_runtime::fault::When::Read(n),
                pmu_runtime::fault::Fault::Eio,
            );
            let reach = Reach {
                machine: &faulty,
                perf: EventSources::with_root("/nonexistent"),
            };
            let Ok(targets) = Targets::program(&reach, &plan) else {
                return false;
            };
            let first = targets.read();
            first == vec![None] && targets.read()[0].is_some()
        });
        assert!(failed_read);
    }
}
