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
//! let reach = Reach::new(&machine, perf_cli::sources(root));
//! let targets = Targets::program(&reach, &plan)?;
//! let values = targets.read();       // one Option<Reading> per series
//! targets.inject(0, 1000)?;          // --sim: 1000 events of the first --event, every box
//! targets.close()?;                  // every register as it was
//! ```

mod selection;
#[cfg(test)]
mod tests;

use std::sync::Mutex;

use pmu_regs::{CounterKind, Scope};
use pmu_runtime::machine::Machine;
use pmu_runtime::perf::counting::BoxGroup;
use pmu_runtime::perf::encode::{from_control, from_terms};
use pmu_runtime::perf::session::Session;
use pmu_runtime::perf::syscall::Syscalls;
use pmu_runtime::perf::{EventSources, PerfEvent, PerfLayer, PerfNames, Pmu, SpecNames};
use pmu_runtime::sampling::counting::Counting;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::sim::UncoreEvent;
use pmu_runtime::Error;

pub use crate::perf_cli::Backend;
use crate::Failure;
/// One counter's value: the exporter's reading, so `serve` passes reads on as they are.
pub use pmu_runtime::export::Reading;
use selection::PlannedBox;
pub use selection::{find_box, Plan, Selection, Sockets};

/// The shortest and longest counting interval `watch` and `serve` accept, in seconds.
pub const INTERVAL: (f64, f64) = (0.01, 86400.0);

/// Refuses an `--interval` outside [`INTERVAL`] (0 would busy-loop; 1e30 cannot be slept).
pub fn check_interval(seconds: f64) -> Result<(), Failure> {
    if (INTERVAL.0..=INTERVAL.1).contains(&seconds) {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "--interval {seconds} is out of range: give seconds from {} to {}",
            INTERVAL.0, INTERVAL.1
        )))
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
    /// The CPU of a per-CPU PMU's counter (the core PMU; a kernel PMU without a cpumask, such
    /// as `msr`); `None` for an uncore box.
    pub cpu: Option<u32>,
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
    /// The perf syscalls: the kernel's, or the simulated driver ([`crate::perf_cli::reach`]).
    pub layer: &'m dyn PerfLayer,
    /// Whether `layer` counts on the machine's simulator: then boxes go through perf under
    /// `--sim` too, and injected events reach them.
    pub perf_on_sim: bool,
}

impl<'m> Reach<'m> {
    /// The registers of `machine` and the kernel's perf PMUs in `perf`, through the real
    /// `perf_event_open`.
    pub fn new(machine: &'m Machine, perf: EventSources) -> Self {
        Reach {
            machine,
            perf,
            layer: &Syscalls,
            perf_on_sim: false,
        }
    }
}

/// The programmed counters of a [`Plan`]: every selected box on every selected socket.
/// Dropping it puts every register back (best effort) and closes every perf event;
/// [`Targets::close`] does the same and reports a failure.
pub struct Targets<'m> {
    machine: &'m Machine,
    groups: Vec<Group<'m>>,
    /// Perf groups (one per kernel PMU and CPU); read needs `&mut`, hence the lock.
    perf: Mutex<Vec<BoxGroup<'m>>>,
    /// The perf syscalls.
    layer: &'m dyn PerfLayer,
    /// Boxes counted through the simulated perf driver, for [`Self::inject`]: the box, its
    /// CPU and socket, and its events.
    perf_sim_boxes: Vec<(
        &'static pmu_runtime::boxes::PmuBox,
        u32,
        u32,
        Vec<EventSelect>,
    )>,
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
            layer: reach.layer,
            perf_sim_boxes: Vec::new(),
            perf_index: Vec::new(),
            series: Vec::new(),
        };
        let selection = &plan.selection;
        let simulated = machine.sim().is_some() && !reach.perf_on_sim;
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
                cpu: None,
            };
            let planned: Vec<SeriesInfo> = events
                .iter()
                .enumerate()
                .map(|(i, e)| series(i, e))
                .collect();
            match selection.sockets {
                Sockets::One(s) => targets.open_perf(&pmu, &events, planned, selection, s)?,
                Sockets::All => targets.open_perf_all(&pmu, &events, planned, selection)?,
            }
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
                        cpu: None,
                    })
                    .collect();
                let opened = targets.perf.get_mut().map_or(0, |g| g.len());
                let result = match selection.sockets {
                    Sockets::One(s) => targets.open_perf(pmu, events, planned_series, selection, s),
                    Sockets::All => targets.open_perf_all(pmu, events, planned_series, selection),
                };
                if let Err(e) = result {
                    return Err(targets.undo(e));
                }
                if reach.perf_on_sim {
                    // Each group opened is this box on one CPU: injected events go there.
                    let groups = targets.perf.get_mut().unwrap_or_else(|p| p.into_inner());
                    let at: Vec<Option<u32>> = groups[opened..].iter().map(BoxGroup::cpu).collect();
                    let sels: Vec<EventSelect> =
                        counters.iter().map(|&(i, _)| planned.sels[i]).collect();
                    for cpu in at.into_iter().flatten() {
                        let socket = machine.topology()?.socket_of(cpu).unwrap_or(0);
                        targets
                            .perf_sim_boxes
                            .push((planned.pmu_box, cpu, socket, sels.clone()));
                    }
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
                if let Err(e) = targets.program_box(planned, socket, selection) {
                    return Err(targets.undo(e));
                }
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
        if selection.every_cpu && pmu.cpumask.is_empty() {
            // A per-CPU PMU (msr, cpu): every online CPU, as `perf stat -a` counts it.
            for (cpu, socket) in self.machine.topology()?.cpus() {
                self.open_group(pmu, events, &planned, socket, Some(cpu))?;
            }
            return Ok(());
        }
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
        let (cpus, socket) = match selection.cpu {
            // Labelled with the CPU's own socket, as the registers' path labels it.
            Some(c) => (
                vec![Some(c)],
                self.machine.topology()?.socket_of(c).unwrap_or(socket),
            ),
            // A PMU without a cpumask (msr): a CPU of that socket, not CPU 0.
            None if pmu.cpumask.is_empty() => {
                (vec![Some(self.machine.cpu_for_socket(socket)?)], socket)
            }
            None => (Session::cpus(pmu, Some(socket), fallback)?, socket),
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
        let mut group = BoxGroup::open_on(self.layer, pmu, cpu, events)?;
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
                cpu: cpu.filter(|_| pmu.cpumask.is_empty()),
                ..s.clone()
            });
            self.perf_index.push(Some((g, member)));
        }
        Ok(())
    }

    /// Programs one box on one socket through the registers (a per-CPU box on each of the
    /// socket's CPUs with [`Selection::every_cpu`]), and adds its series.
    fn program_box(
        &mut self,
        planned: &PlannedBox,
        socket: u32,
        selection: &Selection,
    ) -> Result<(), Error> {
        // With --cpu, the box is that CPU's socket's: it is labelled, and claimed, as such.
        let places: Vec<(u32, u32)> = match selection.cpu {
            Some(c) => vec![(c, self.machine.topology()?.socket_of(c).unwrap_or(socket))],
            None if selection.every_cpu && planned.pmu_box.scope() == Scope::Cpu => {
                let cpus = self.machine.topology()?.cpus();
                cpus.into_iter().filter(|&(_, s)| s == socket).collect()
            }
            None => vec![(self.machine.cpu_for_socket(socket)?, socket)],
        };
        for (cpu, socket) in places {
            self.program_box_on(planned, cpu, socket, selection)?;
        }
        Ok(())
    }

    /// Programs one box through `cpu` on `socket`, and adds its series.
    fn program_box_on(
        &mut self,
        planned: &PlannedBox,
        cpu: u32,
        socket: u32,
        selection: &Selection,
    ) -> Result<(), Error> {
        let pmu_box = planned.pmu_box;
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
        let backend = if self.machine.sim().is_some() {
            "sim"
        } else {
            "raw"
        };
        for (i, &n) in counters.iter().enumerate() {
            self.series.push(SeriesInfo {
                processor: planned.boxes.processor.id,
                socket,
                unit: pmu_box.unit.name.to_string(),
                instance: pmu_box.instance.to_string(),
                counter: counting.counter_name(n)?.to_string(),
                event: selection.events[i].clone(),
                event_index: i,
                backend,
                width: counting.counter_width(n)?,
                perf: None,
                cpu: (pmu_box.scope() == Scope::Cpu).then_some(cpu),
            });
            self.perf_index.push(None);
        }
        self.groups.push(Group {
            counting,
            counters,
            sels: planned.sels.clone(),
            cpu,
            socket,
        });
        Ok(())
    }

    /// What each value of [`Self::read`] is, in the same order: the boxes counted through
    /// perf first, then those programmed through the registers, each socket by socket.
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
        let raw = self
            .groups
            .iter()
            .map(|g| (g.counting.pmu_box(), g.cpu, g.socket, g.sels.as_slice()));
        let perf = self
            .perf_sim_boxes
            .iter()
            .map(|(b, cpu, socket, sels)| (*b, *cpu, *socket, sels.as_slice()));
        for (pmu_box, cpu, socket, sels) in raw.chain(perf) {
            let Some(sel) = sels.get(event_index) else {
                continue;
            };
            match pmu_box.scope() {
                Scope::Cpu => sim.inject_core(cpu, sel.ev_sel, sel.umask.unwrap_or(0), count)?,
                Scope::Socket => sim.inject_uncore(
                    socket as usize,
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

    /// Closes the set after counting ended with `result`, whatever it was: both failures are
    /// reported if putting back fails too, and a put-back failure after good counting is one.
    pub fn close_after<T>(self, result: Result<T, Failure>) -> Result<T, Failure> {
        match (result, self.close()) {
            (result, Ok(())) => result,
            (Err(failure), Err(cleanup)) => Err(failure.with_cleanup(cleanup)),
            (Ok(_), Err(e)) => Err(Failure::Runtime(Error::RestoreFailed(Box::new(e)))),
        }
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
        let name = match SpecNames.lookup(
            processor,
            pmu_box.unit.name,
            pmu_box.instance,
            Some(c.number()),
        ) {
            Ok(name) => name,
            // `auto`: a box whose kernel PMU the spec does not name is counted raw.
            Err(_) if backend == Backend::Auto => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if !sources.has(name.pmu) && backend == Backend::Auto {
            return Ok(None);
        }
        let at = match groups.iter().position(|(p, _, _)| p.name == name.pmu) {
            Some(at) => at,
            None => {
                groups.push((
                    sources.pmu(name.pmu, &name.driver_name())?,
                    Vec::new(),
                    Vec::new(),
                ));
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
