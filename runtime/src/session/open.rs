//! Opening a session: everything is checked and decided first ([`Session::check`]: which
//! boxes go through perf and their events encoded, which sockets, and that the CPU and
//! socket asked for exist), then every register box is claimed and its counters found idle
//! (not enabled by another tool or a killed session, unless the machine takes them over),
//! then every box is programmed; a failure part way puts back what was already programmed.

use std::time::Instant;

use pmu_regs::Scope;

use crate::boxes::{CountedBox, EventSelect, PmuBox};
use crate::counters::Counting;
use crate::error::{Result, UsageError};
use crate::machine::Machine;
use crate::ownership::Ownership;
use crate::perf::counting::BoxGroup;
use crate::perf::layer::PerfLayer;
use crate::perf::session::CountingLoop;
use crate::perf::{EventSpec, KernelPmu, PerfEvent};

pub use crate::machine::SLOTS_PER_EVENT;

use super::backend::{perf_events, PerfPlan};
use super::selection::{BoxEvents, Counted};
use super::turns::Turns;
use super::{
    BackendKind, Group, Options, PerfSeries, Selection, SeriesInfo, Session, SessionBackend,
    SimulatedPerfBox, Sockets,
};

/// A register box claimed (not yet programmed) through `cpu` on `socket`.
struct Claimed<'s, 'm> {
    planned: &'s BoxEvents,
    counting: Counting<'m, Machine>,
    cpu: u32,
    socket: u32,
}

/// What [`Session::check`] decided: per box, its perf groups (`None`: the registers), and
/// the sockets the register boxes are programmed on.
struct Checked {
    through_perf: Vec<Option<Vec<PerfPlan>>>,
    sockets: Vec<u32>,
    /// What the part's discovery tables say against the spec of boxes programmed anyway.
    warnings: Vec<String>,
}

impl<'m> Session<'m> {
    /// Opens `selection` on `backend`: checks everything, then programs every box on every
    /// socket it selects. A box another session holds, or whose counter is already enabled
    /// ([`crate::ownership::check_idle`]), is refused before anything is written. Nothing
    /// stays programmed if any box fails: the ones before it are put back, and a failure of
    /// that is reported with the first error.
    pub fn open(
        backend: &SessionBackend<'m>,
        selection: &Selection,
        options: Options,
    ) -> Result<Self> {
        let machine = backend.machine();
        // Boxes the discovery table places are placed from the part's table first.
        let (placed, inits) = super::placed::place(machine, selection);
        let selection = placed.as_ref().unwrap_or(selection);
        let mut session = Session {
            machine,
            groups: Vec::new(),
            perf: Vec::new(),
            perf_sim_boxes: Vec::new(),
            perf_index: Vec::new(),
            series: Vec::new(),
            options,
            streams: Vec::new(),
            opened: Instant::now(),
            reads: 0,
            last: None,
            totals: Vec::new(),
            turned_at: std::time::Duration::ZERO,
            turns_begun: false,
            topdown: None,
            warnings: Vec::new(),
            domain_inits: Vec::new(),
        };
        let checked = Self::check(backend, selection, &options)?;
        // A domain table frozen at power-on is thawed once the selection is checked (nothing
        // is written for a selection the check refuses) and before anything is programmed;
        // dropping the session on any error below puts it back.
        if options.quirks.global_init {
            session.init_domains(&inits)?;
        }
        session.warnings.clone_from(&checked.warnings);
        if let Counted::Perf(specs) = &selection.counted {
            if options.topdown {
                return Err(UsageError::BadValue {
                    text: "perf".into(),
                    expected: "the registers backend: the top-down registers (fixed counter 3, \
                               IA32_PERF_METRICS) are read through the MSRs, not perf"
                        .into(),
                }
                .into());
            }
            session.open_perf_events(backend, specs, selection)?;
            return Ok(session);
        }
        if let Err(e) = session.program(backend, selection, &checked) {
            return Err(session.undo(e));
        }
        if options.topdown {
            if let Err(e) = session.open_topdown() {
                return Err(session.undo(e));
            }
        }
        session.run_workload();
        Ok(session)
    }

    /// Writes each domain table's `global_init` value to its global control (32 bits,
    /// memory-mapped, as Linux's `uncore_mmio_global_init` does), each saved first so that
    /// [`Self::restore`] puts it back.
    fn init_domains(&mut self, inits: &[super::placed::DomainInit]) -> Result<()> {
        use crate::access::MmioAccess;
        for d in inits {
            let found = self.machine.read_mmio(d.address, 32)? as u32;
            self.machine.write_mmio(d.address, 32, u64::from(d.value))?;
            self.domain_inits.push((*d, found));
        }
        Ok(())
    }

    /// Enables the top-down registers on every CPU whose core counters are programmed.
    fn open_topdown(&mut self) -> Result<()> {
        let cpus = topdown_cpus(
            self.groups
                .iter()
                .map(|g| (g.counting.pmu_box(), g.cpu, g.socket)),
        );
        if cpus.is_empty() {
            return Err(UsageError::BadValue {
                text: "top-down".into(),
                expected: "a selection that counts on the core (CORE): the top-down registers \
                           are per CPU"
                    .into(),
            }
            .into());
        }
        let force = self.machine.takes_over();
        self.topdown = Some(super::topdown::Topdown::open(self.machine, &cpus, force)?);
        Ok(())
    }

    /// Everything decided before the first write: the selection holds together, which boxes
    /// go through perf (their events encoded, so a perf refusal leaves the registers
    /// untouched), and the sockets. Checks of the machine itself belong here too: a CPU or
    /// socket the machine lacks is refused, naming those it has, and a box the part's
    /// discovery table does not show as the spec does ([`super::discovered`]).
    fn check(
        backend: &SessionBackend<'m>,
        selection: &Selection,
        options: &Options,
    ) -> Result<Checked> {
        selection.check()?;
        let mut through_perf = Vec::new();
        for planned in selection.boxes() {
            through_perf.push(match backend {
                SessionBackend::Registers(_) => None,
                SessionBackend::Perf(p) => perf_events(&p.sources, planned, p.fallback)?,
            });
        }
        let all_perf = through_perf.iter().all(Option::is_some);
        // The machine's topology places register boxes, a CPU given and a kernel PMU named
        // (`msr` has no cpumask); a box's perf PMU is placed by its cpumask, which refuses a
        // socket it lacks.
        let by_name = matches!(selection.counted, Counted::Perf(_));
        if !all_perf || by_name || selection.cpu.is_some() {
            let socket = match selection.sockets {
                Sockets::One(s) => Some(s),
                Sockets::All => None,
            };
            backend.machine().check_place(selection.cpu, socket)?;
        }
        let sockets: Vec<u32> = match (selection.sockets, all_perf) {
            (Sockets::One(s), _) => vec![s],
            // Every box through perf: the sockets are those of the PMUs' cpumasks.
            (Sockets::All, true) => Vec::new(),
            (Sockets::All, false) => backend.machine().topology()?.sockets().collect(),
        };
        let registers = selection
            .boxes()
            .iter()
            .zip(&through_perf)
            .filter(|(_, p)| p.is_none())
            .map(|(b, _)| b);
        boxes_on_part(backend.machine(), registers.clone(), &sockets)?;
        // What the part's discovery tables say of the boxes programmed through the registers
        // (a box counted through perf is the kernel's, which built its PMU from the table).
        let warnings =
            super::discovered::check(backend.machine(), registers, options.allow_mismatch)?;
        Ok(Checked {
            through_perf,
            sockets,
            warnings,
        })
    }

    /// Opens the perf groups, then programs the register boxes socket by socket.
    fn program(
        &mut self,
        backend: &SessionBackend<'m>,
        selection: &Selection,
        checked: &Checked,
    ) -> Result<()> {
        let boxes = selection.boxes();
        if let SessionBackend::Perf(p) = backend {
            for (planned, perf) in boxes.iter().zip(&checked.through_perf) {
                for (pmu, events, counters) in perf.iter().flatten() {
                    self.open_box_groups(p.layer, planned, pmu, events, counters, selection)?;
                }
            }
        }
        // Every register box is claimed and found idle before the first is programmed, so
        // a box refused (held, or enabled by someone else) leaves every register untouched.
        let mut claimed: Vec<Claimed<'_, 'm>> = Vec::new();
        for &socket in &checked.sockets {
            for (planned, _) in boxes
                .iter()
                .zip(&checked.through_perf)
                .filter(|(_, p)| p.is_none())
            {
                for (cpu, socket) in self.places(planned, socket, selection)? {
                    let counting = self.claim_box(&claimed, planned, cpu, socket)?;
                    claimed.push(Claimed {
                        planned,
                        counting,
                        cpu,
                        socket,
                    });
                }
            }
        }
        for c in &claimed {
            // Events beyond the part's counters take turns on all of them.
            let numbers: Vec<u32> = c
                .counting
                .general_counters()
                .iter()
                .map(|g| g.number())
                .collect();
            let events = &c.planned.events;
            if super::turns::needs_turns(events, &numbers) {
                c.counting
                    .check_free(&vec![EventSelect::event(0); numbers.len()])?;
                // Events that need one auxiliary MSR with different values are in
                // different turns: only the registers and values are checked.
                for e in events {
                    c.counting.check_aux(std::slice::from_ref(e))?;
                }
            } else {
                c.counting.check_free(events)?;
            }
        }
        if self.options.topdown {
            // The top-down registers too, before the first write.
            let cpus = topdown_cpus(claimed.iter().map(|c| (c.planned.pmu_box, c.cpu, c.socket)));
            super::topdown::Topdown::check_all(self.machine, &cpus, self.machine.takes_over())?;
        }
        let kind = backend.register_kind();
        for c in claimed {
            self.program_box(c, selection, kind)?;
        }
        Ok(())
    }

    /// Events in perf's language, through perf: every event is looked up before the first
    /// is opened; a run of events of one PMU is opened as one group, so the counts keep the
    /// order they were given in.
    fn open_perf_events(
        &mut self,
        backend: &SessionBackend<'m>,
        specs: &[EventSpec],
        selection: &Selection,
    ) -> Result<()> {
        let SessionBackend::Perf(p) = backend else {
            return Err(UsageError::BadValue {
                text: format!(
                    "perf events ({}) through the registers",
                    selection.events.join(",")
                ),
                expected: "a perf backend: perf's events are counted through the kernel".into(),
            }
            .into());
        };
        let resolved = specs
            .iter()
            .map(|s| s.resolve(&p.sources))
            .collect::<Result<Vec<_>, _>>()?;
        let mut at = 0;
        while at < resolved.len() {
            let pmu = &resolved[at].0;
            let run = resolved[at..]
                .iter()
                .take_while(|(other, _)| other.name == pmu.name)
                .count();
            let events: Vec<PerfEvent> = resolved[at..at + run]
                .iter()
                .map(|(_, e)| e.clone())
                .collect();
            let planned: Vec<SeriesInfo> = (at..at + run)
                .map(|i| {
                    let label = resolved[i].1.to_string();
                    perf_series("kernel", &pmu.name, &pmu.name, label, selection, i)
                })
                .collect();
            self.open_perf(p.layer, pmu, &events, &planned, selection)
                .map_err(|e| self.undo(e))?;
            at += run;
        }
        Ok(())
    }

    /// Opens one box's events of one kernel PMU on each CPU the selection asks for.
    fn open_box_groups(
        &mut self,
        layer: &'m dyn PerfLayer,
        planned: &BoxEvents,
        pmu: &KernelPmu,
        events: &[PerfEvent],
        counters: &[(usize, &'static str)],
        selection: &Selection,
    ) -> Result<()> {
        let series: Vec<SeriesInfo> = counters
            .iter()
            .map(|&(i, counter)| {
                let pmu_box = planned.pmu_box;
                let (unit, instance) = (pmu_box.unit.name, pmu_box.instance);
                let processor = planned.boxes.processor.id;
                perf_series(processor, unit, instance, counter.to_string(), selection, i)
            })
            .collect();
        let opened = self.perf.len();
        self.open_perf(layer, pmu, events, &series, selection)?;
        if self.machine.workload().is_some() {
            // Each group opened is this box on one CPU: the workload's events go there.
            let sels: Vec<_> = counters.iter().map(|&(i, _)| planned.events[i]).collect();
            let cpus: Vec<u32> = self.perf[opened..]
                .iter()
                .filter_map(BoxGroup::cpu)
                .collect();
            for cpu in cpus {
                let socket = self.machine.topology()?.socket_of(cpu).unwrap_or(0);
                self.perf_sim_boxes.push(SimulatedPerfBox {
                    pmu_box: planned.pmu_box,
                    cpu,
                    socket,
                    sels: sels.clone(),
                });
            }
        }
        Ok(())
    }

    /// Opens `events` of `pmu` as one group on each CPU: `--cpu`'s, or the one its cpumask
    /// names for each selected socket.
    fn open_perf(
        &mut self,
        layer: &'m dyn PerfLayer,
        pmu: &KernelPmu,
        events: &[PerfEvent],
        planned: &[SeriesInfo],
        selection: &Selection,
    ) -> Result<()> {
        for (socket, cpu) in self.perf_places(pmu, selection)? {
            let mut group = BoxGroup::open_on(layer, pmu, cpu, events)?;
            group.enable()?;
            let g = self.perf.len();
            self.perf.push(group);
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
        }
        Ok(())
    }

    /// The (socket, CPU) pairs a kernel PMU's group is opened on: `--cpu`'s (labelled with
    /// its own socket), the one its cpumask names for each selected socket, or, for a PMU
    /// without a cpumask (`msr`), a CPU of the socket asked for, or every online CPU with
    /// [`Selection::every_cpu`]; a PMU with one CPU per L3 cache in its cpumask (`amd_l3`) is
    /// opened on each of those CPUs of the selected sockets.
    fn perf_places(
        &self,
        pmu: &KernelPmu,
        selection: &Selection,
    ) -> Result<Vec<(u32, Option<u32>)>> {
        let per_cpu = pmu.cpumask.is_empty();
        let fallback = selection.cpu.unwrap_or(0);
        // A cpumask naming more CPUs than the machine has sockets names one CPU per smaller
        // domain (amd_l3: one per L3 cache): each is opened, labelled with its CPU's socket.
        if let (None, Ok(topology)) = (selection.cpu, self.machine.topology()) {
            if pmu.cpumask.len() > topology.sockets().count() {
                return Ok(pmu
                    .cpumask
                    .iter()
                    .filter_map(|&c| Some((topology.socket_of(c)?, Some(c))))
                    .filter(|&(s, _)| match selection.sockets {
                        Sockets::All => true,
                        Sockets::One(one) => s == one,
                    })
                    .collect());
            }
        }
        Ok(match (selection.sockets, selection.cpu) {
            (Sockets::All, _) if per_cpu && selection.every_cpu => self
                .machine
                .topology()?
                .cpus()
                .into_iter()
                .map(|(cpu, socket)| (socket, Some(cpu)))
                .collect(),
            (Sockets::All, _) => CountingLoop::cpus(pmu, None, fallback)?
                .into_iter()
                .enumerate()
                .map(|(s, c)| (s as u32, c))
                .collect(),
            (Sockets::One(s), Some(c)) => {
                let socket = self.machine.topology()?.socket_of(c).unwrap_or(s);
                vec![(socket, Some(c))]
            }
            (Sockets::One(s), None) if per_cpu => {
                vec![(s, Some(self.machine.cpu_for_socket(s)?))]
            }
            (Sockets::One(s), None) => CountingLoop::cpus(pmu, Some(s), fallback)?
                .into_iter()
                .map(|c| (s, c))
                .collect(),
        })
    }

    /// The (CPU, socket) pairs a register box is reached through on `socket`: `--cpu`'s
    /// (the box is then that CPU's socket's: labelled, and claimed, as such; for a per-L3 box,
    /// the L3 that CPU shares, through its lowest CPU), each of the socket's CPUs for a
    /// per-CPU box with [`Selection::every_cpu`], one CPU per L3 cache of the socket for a
    /// per-L3 box, or one of its CPUs.
    fn places(
        &self,
        planned: &BoxEvents,
        socket: u32,
        selection: &Selection,
    ) -> Result<Vec<(u32, u32)>> {
        let topology = self.machine.topology()?;
        let scope = planned.pmu_box.scope();
        Ok(match selection.cpu {
            Some(c) if scope == Scope::L3 => vec![(
                topology.l3_of(c).unwrap_or(c),
                topology.socket_of(c).unwrap_or(socket),
            )],
            Some(c) => vec![(c, topology.socket_of(c).unwrap_or(socket))],
            None if selection.every_cpu && scope == Scope::Cpu => topology
                .cpus()
                .into_iter()
                .filter(|&(_, s)| s == socket)
                .collect(),
            None if scope == Scope::L3 => topology
                .l3_cpus(socket)
                .into_iter()
                .map(|c| (c, socket))
                .collect(),
            None => vec![(self.machine.cpu_for_socket(socket)?, socket)],
        })
    }

    /// Claims `planned` through `cpu` on `socket`, sharing the claim of a box `claimed`
    /// already holds under the same PMU.
    fn claim_box(
        &self,
        claimed: &[Claimed<'_, 'm>],
        planned: &BoxEvents,
        cpu: u32,
        socket: u32,
    ) -> Result<Counting<'m, Machine>> {
        let devices = if planned.in_pci() {
            Some(self.machine.devices(planned.boxes.processor)?)
        } else {
            None
        };
        let pmu_box = planned.pmu_box;
        let shared = claimed
            .iter()
            .find(|c| c.counting.shares_pmu(pmu_box, cpu, socket as usize));
        let mut counting = match shared {
            Some(c) => c
                .counting
                .open_beside(pmu_box, cpu, socket as usize, devices),
            None => Counting::open(
                self.machine,
                planned.boxes,
                pmu_box,
                cpu,
                socket as usize,
                devices,
            ),
        }?;
        counting.set_quirks(self.options.quirks);
        if let Some(n) = self.counters_on_part(pmu_box) {
            counting.limit_general(n);
        }
        Ok(counting)
    }

    /// Programs one claimed box through the registers, and adds its series.
    fn program_box(
        &mut self,
        claimed: Claimed<'_, 'm>,
        selection: &Selection,
        backend: BackendKind,
    ) -> Result<()> {
        let Claimed {
            planned,
            mut counting,
            cpu,
            socket,
        } = claimed;
        let pmu_box = planned.pmu_box;
        // More events than counters: every turn's control values are made before the first
        // write, and the first turn is programmed.
        let turns = Turns::plan(&counting, &planned.events)?;
        let counters = match &turns {
            Some(t) => {
                // Every turn's auxiliary MSRs are saved now; each turn writes its own.
                counting.claim_aux(&planned.events)?;
                counting.program(&t.first_turn(&planned.events))?
            }
            None => counting.program(&planned.events)?,
        };
        let on = |i: usize| match &turns {
            Some(t) => t.counter_of(i),
            None => counters[i],
        };
        for i in 0..planned.events.len() {
            let n = on(i);
            self.series.push(SeriesInfo {
                processor: planned.boxes.processor.id,
                socket,
                unit: pmu_box.unit.name.to_string(),
                instance: pmu_box.instance.to_string(),
                counter: counting.counter_name(n)?.to_string(),
                event: selection.events[i].clone(),
                event_index: i,
                backend,
                // Counted in turns, a series is a 64-bit sum the session keeps.
                width: match turns {
                    Some(_) => 64,
                    None => counting.counter_width(n)?,
                },
                perf: None,
                cpu: (pmu_box.scope() != Scope::Socket).then_some(cpu),
            });
            self.perf_index.push(None);
        }
        self.groups.push(Group {
            counting,
            counters,
            sels: planned.events.clone(),
            cpu,
            socket,
            turns,
        });
        Ok(())
    }

    /// How many of `pmu_box`'s general counters the part has, where it may have fewer than
    /// the spec lists: where the spec gives their registers a `count-cpuid`, what CPUID says
    /// (Intel's architectural PMU: 4 per logical CPU with Hyper-Threading on, 8 without, in
    /// leaf 0AH; AMD's PerfMonV2 core and Data Fabric counters in leaf 80000022H).
    fn counters_on_part(&self, pmu_box: &PmuBox) -> Option<usize> {
        let general = pmu_box
            .counters
            .iter()
            .find(|c| c.info.kind == pmu_regs::CounterKind::General)?;
        let count_cpuid = general
            .control
            .and_then(|r| r.info.count_cpuid)
            .or(general.counter.info.count_cpuid)?;
        self.machine.cpuid_count(count_cpuid).map(|n| n as usize)
    }

    /// On a machine whose time is its own (the simulator): starts its workload, each
    /// selected event happening in every box counted at the rate the session's pace gives it.
    fn run_workload(&mut self) {
        let Some(workload) = self.machine.workload() else {
            return;
        };
        let raw = self.groups.iter().map(|g| CountedBox {
            pmu_box: g.counting.pmu_box(),
            cpu: g.cpu,
            socket: g.socket,
            events: &g.sels,
        });
        let perf = self.perf_sim_boxes.iter().map(|b| CountedBox {
            pmu_box: b.pmu_box,
            cpu: b.cpu,
            socket: b.socket,
            events: &b.sels,
        });
        let counted: Vec<CountedBox> = raw.chain(perf).collect();
        let topdown: Vec<u32> = self
            .topdown
            .iter()
            .flat_map(|t| t.cpus())
            .map(|(cpu, _)| cpu)
            .collect();
        let pace = self.options.pace;
        if let crate::session::Pace::Workload(named) = pace {
            if let Some(streams) = workload.run_named(named) {
                self.streams = streams;
                return;
            }
        }
        self.streams = workload.run(&counted, &|i| pace.rate(i), &topdown);
    }
}

/// The (CPU, socket) pairs of the per-CPU boxes among `boxes` (box, CPU, socket), each once:
/// where the top-down registers are read.
fn topdown_cpus<'a>(boxes: impl Iterator<Item = (&'a PmuBox, u32, u32)>) -> Vec<(u32, u32)> {
    let mut cpus: Vec<(u32, u32)> = boxes
        .filter(|(b, _, _)| b.scope() == Scope::Cpu)
        .map(|(_, cpu, socket)| (cpu, socket))
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// The series of event `i` of `selection` counted through perf, before it is opened: the
/// socket, the CPU and the perf event string are filled in per group by `open_perf`.
fn perf_series(
    processor: &'static str,
    unit: &str,
    instance: &str,
    counter: String,
    selection: &Selection,
    i: usize,
) -> SeriesInfo {
    SeriesInfo {
        processor,
        socket: 0,
        unit: unit.to_string(),
        instance: instance.to_string(),
        counter,
        event: selection.events[i].clone(),
        event_index: i,
        backend: BackendKind::Perf,
        width: 64,
        perf: None,
        cpu: None,
    }
}

/// Refuses, by name, a register box the part does not have on a socket it is to be
/// programmed on: the unit's box count is read from the part as its spec says
/// ([`crate::part::box_count`]), once per unit and socket.
fn boxes_on_part<'a>(
    machine: &Machine,
    boxes: impl Iterator<Item = &'a BoxEvents> + Clone,
    sockets: &[u32],
) -> Result<()> {
    for &socket in sockets {
        let mut read: Vec<(&str, Option<crate::part::BoxCount>)> = Vec::new();
        for planned in boxes.clone() {
            let pmu_box = planned.pmu_box;
            let unit = pmu_box.unit.name;
            let count = match read.iter().find(|(u, _)| *u == unit) {
                Some((_, c)) => c.clone(),
                None => {
                    let c = crate::part::box_count(machine, pmu_box.pmu, socket)?;
                    read.push((unit, c.clone()));
                    c
                }
            };
            let Some(count) = count else { continue };
            if !count.has(pmu_box.position as u32) {
                return Err(UsageError::NoSuchBox {
                    name: format!("{} on this part", pmu_box.instance),
                    available: format!(
                        "{}: this part has {} {unit} box(es), read from the part ({}; {} [{}])",
                        count.present(pmu_box.unit),
                        count.present_count(),
                        count.read,
                        count.rule,
                        count.source
                    ),
                }
                .into());
            }
        }
    }
    Ok(())
}
