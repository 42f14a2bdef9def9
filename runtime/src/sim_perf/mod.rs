//! A kernel perf driver over the simulated PMU: a [`PerfLayer`] that does what Linux's uncore
//! and core drivers do with an event, on a [`Sim`] instead of hardware.
//!
//! It knows the PMUs of a sysfs tree ([`EventSources`]): each one's `type` and `format/*`,
//! and, from the spec's names ([`SpecNames`]), the box of the simulated processor it counts.
//! Opening a group on a CPU decodes each event's `config` words through that PMU's format
//! files into the box's counter control ([`to_control`]) and claims the box of the CPU's
//! socket (the CPU's own core PMU for `cpu`); enabling programs the box's next counters as
//! the driver would (a core event's auxiliary MSR from its `config1` term, as the kernel's
//! extra registers do; control, box enable, global enable); reading accumulates each counter's
//! increments in 64 bits, across its wrap, as the kernel does. Events injected into the
//! simulator are then counted by the perf path exactly as by the raw one, which is what the
//! tests compare. Time enabled is the wall time since enabling, and a group always runs (the
//! simulated driver does not multiplex).

mod arm;

use std::io;
use std::time::{Duration, Instant};

use pmu_regs::{AuxMsr, CounterKind, FormatTarget, Role};

use crate::boxes::{Boxes, EventSelect, PmuBox};
use crate::counters::Counting;
use crate::perf::encode::{names_register, to_control};
use crate::perf::layer::{EventAttr, GroupValues, OpenError, OpenGroup, PerfLayer};
use crate::perf::{EventSources, KernelPmu, PerfError, PerfNames, PmuName, SpecNames};
use crate::sim::Sim;

/// `EINVAL` and `ENOENT`, as the kernel answers an event it refuses and a PMU type it lacks.
const EINVAL: i32 = 22;
const ENOENT: i32 = 2;

/// A PMU of the tree that counts a box of the simulated processor.
#[derive(Debug)]
struct Driven {
    pmu: KernelPmu,
    name: PmuName,
    boxes: &'static Boxes,
    pmu_box: &'static PmuBox,
}

/// The simulated kernel driver: the PMUs of a sysfs tree, counting on a [`Sim`].
pub struct SimPerf<'s> {
    sim: &'s Sim,
    pmus: Vec<Driven>,
}

impl std::fmt::Debug for SimPerf<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.pmus.iter().map(|d| d.pmu.name.as_str()).collect();
        f.debug_struct("SimPerf").field("pmus", &names).finish()
    }
}

impl<'s> SimPerf<'s> {
    /// The driver for every PMU of `sources` that the spec names for a box of `sim`'s
    /// processor, or for the architectural core PMU (`cpu`). Other PMUs are left alone: a
    /// group opened on them fails as on a kernel without them.
    pub fn new(sim: &'s Sim, sources: &EventSources) -> Result<Self, PerfError> {
        let processors = [sim.config().processor, &pmu_regs::arch::PROCESSOR];
        let mut pmus = Vec::new();
        for name in SpecNames.all() {
            let Some(p) = processors.iter().find(|p| p.id == name.processor) else {
                continue;
            };
            // The architectural PMU's `cpu` only where the processor has no `cpu` of its own
            // (AMD's core PMU is `cpu` too, and a name is one kernel PMU).
            let own = |n: &PmuName| n.processor == processors[0].id && n.pmu == name.pmu;
            if !sources.has(name.pmu)
                || (p.id != processors[0].id && SpecNames.all().iter().any(own))
            {
                continue;
            }
            // A box the discovery table places is where the simulated part's table lists it,
            // as the kernel's driver, built from that table, would program it.
            let boxes = crate::sim::placed_boxes(p, sim.config().sockets);
            let Some(pmu_box) = boxes.find(name.instance) else {
                continue;
            };
            pmus.push(Driven {
                pmu: sources.pmu(name.pmu, &name.driver_name())?,
                name,
                boxes,
                pmu_box,
            });
        }
        Ok(SimPerf { sim, pmus })
    }

    /// The kernel PMUs it drives, by name.
    pub fn pmus(&self) -> Vec<&str> {
        self.pmus.iter().map(|d| d.pmu.name.as_str()).collect()
    }
}

fn refused(index: usize, why: impl std::fmt::Display) -> OpenError {
    OpenError {
        index,
        fits_alone: false,
        source: io::Error::new(
            io::Error::from_raw_os_error(EINVAL).kind(),
            format!("the simulated driver refused it: {why}"),
        ),
    }
}

/// The free-running counter of `d` that `ev` selects as the kernel's free-running drivers
/// do: its `event` term the shared select 0xff ([`crate::boxes::FIXED_EVENT`]) and its `umask` the one the
/// spec gives a free-running counter of the PMU. `None` for any other event.
fn free_running(d: &Driven, ev: &EventAttr) -> Option<u32> {
    let term = |name| d.pmu.format(name).map(|f| f.extract(&ev.config));
    let sel = EventSelect {
        umask: Some(u16::try_from(term("umask")?).ok()?),
        ..EventSelect::event(u16::try_from(term("event")?).ok()?)
    };
    let c = d.pmu_box.free_running(&sel)?;
    d.name.counters.contains(&c.number()).then_some(c.number())
}

/// The auxiliary MSRs event `ev` (control value `raw`) sets on the core PMU `d` of
/// `processor`, as the kernel's extra registers do: each term of the driver's format that
/// maps onto a register (`offcore_rsp`, `ldlat`, `frontend`) and is set, into the register
/// the processor's events of the same event select name (Intel pairs 0xB7 with
/// MSR_OFFCORE_RSP_0 and 0xBB with MSR_OFFCORE_RSP_1); a term no such event names is not the
/// event's, and the kernel ignores it too. Uncore PMUs' register terms are their box
/// filters, which this driver leaves alone.
fn aux_of(
    d: &Driven,
    processor: &str,
    ev: &EventAttr,
    control: &'static pmu_regs::RegisterInfo,
    raw: u64,
) -> Vec<AuxMsr> {
    if d.pmu_box.scope() != pmu_regs::Scope::Cpu {
        return Vec::new();
    }
    let code = control.role(Role::Event).map_or(0, |f| f.extract(raw));
    let events = crate::codec::events_for(control, Some(processor));
    let mut aux = Vec::new();
    for f in d.name.driver.formats {
        let FormatTarget::Register(template) = f.target else {
            continue;
        };
        let value = d.pmu.format(f.name).map_or(0, |t| t.extract(&ev.config));
        if value == 0 {
            continue;
        }
        // The terms share config1: a term is this event's where its events name the register.
        let named = events
            .iter()
            .filter_map(|e| e.aux.filter(|_| u64::from(e.code) == code));
        if let Some(a) = named
            .into_iter()
            .find(|a| names_register(template, a.register))
        {
            aux.push(AuxMsr { value, ..a });
        }
    }
    aux
}

/// `ev`'s config words without a core event's auxiliary MSR terms, which go to their
/// registers ([`aux_of`]) rather than the counter control.
fn control_words(d: &Driven, ev: &EventAttr) -> [u64; 3] {
    let mut words = ev.config;
    if d.pmu_box.scope() == pmu_regs::Scope::Cpu {
        for f in d.name.driver.formats {
            if let (FormatTarget::Register(_), Some(t)) = (f.target, d.pmu.format(f.name)) {
                t.place(0, &mut words);
            }
        }
    }
    words
}

/// The counter and control value of each event of a group on `d`, as the driver programs
/// them: its config decoded through the PMU's format files, enabled, in the privilege levels
/// the event asks for. A free-running counter has no control: `None`, nothing to program.
fn controls(d: &Driven, events: &[EventAttr]) -> Result<Vec<(u32, Option<u64>)>, OpenError> {
    // The kernel hands out the PMU's counters in its order; a counter select in the
    // format (the Xeon 7500 B-box) picks one.
    let counter_format = d.pmu.format("counter");
    // The general counters, in the PMU's order (the fixed counter takes only its own
    // event, 0xff, which a group of selected events does not use).
    let general: Vec<u32> = d
        .name
        .counters
        .iter()
        .copied()
        .filter(|&n| {
            d.pmu_box
                .counter(n)
                .is_some_and(|c| c.info.kind == CounterKind::General)
        })
        .collect();
    let mut controls = Vec::new();
    for (i, ev) in events.iter().enumerate() {
        if let Some(number) = free_running(d, ev) {
            if controls.iter().any(|&(n, _)| n == number) {
                return Err(refused(i, format!("counter {number} is taken twice")));
            }
            controls.push((number, None));
            continue;
        }
        // The general counters in order, after those earlier events took.
        let k = match counter_format {
            Some(f) => f.extract(&ev.config) as usize,
            None => controls.iter().filter(|(_, raw)| raw.is_some()).count(),
        };
        let Some(&number) = general.get(k) else {
            return Err(OpenError {
                index: i,
                fits_alone: i > 0,
                source: io::Error::from_raw_os_error(EINVAL),
            });
        };
        let Some(c) = d.pmu_box.counter(number).filter(|c| c.control.is_some()) else {
            return Err(refused(i, format!("counter {number} has no control")));
        };
        let control = c.control.expect("filtered").info;
        let mut raw = to_control(control, &control_words(d, ev), &d.pmu.name, &d.pmu.formats)
            .map_err(|e| refused(i, e))?;
        let mut set = |role, on: bool| {
            if let Some(bits) = c.control_bits(role) {
                raw = bits.insert(control.name, raw, u64::from(on)).unwrap_or(raw);
            }
        };
        set(Role::Enable, true);
        set(Role::User, !ev.exclude_user);
        set(Role::Kernel, !ev.exclude_kernel);
        controls.push((number, Some(raw)));
    }
    Ok(controls)
}

impl PerfLayer for SimPerf<'_> {
    fn open_group<'l>(
        &'l self,
        cpu: Option<u32>,
        events: &[EventAttr],
    ) -> Result<Box<dyn OpenGroup + 'l>, OpenError> {
        let Some(first) = events.first() else {
            return Err(refused(0, "an empty group"));
        };
        let Some(d) = self.pmus.iter().find(|d| d.pmu.type_ == first.type_) else {
            return Err(OpenError {
                index: 0,
                fits_alone: false,
                source: io::Error::from_raw_os_error(ENOENT),
            });
        };
        if let Some(i) = events.iter().position(|e| e.type_ != first.type_) {
            return Err(refused(i, "a group of one PMU only"));
        }
        // Uncore and core counting here are per CPU, for every process.
        let Some(cpu) = cpu else {
            return Err(refused(0, "a CPU is needed (the driver counts per CPU)"));
        };
        // An uncore event counts the box of the CPU's socket; a core event the CPU's own.
        let socket = self
            .sim
            .topology()
            .socket_of(cpu)
            .ok_or_else(|| refused(0, format!("no CPU {cpu} in the simulator")))?;
        // Arm's core PMU: system registers, which its own driver programs.
        if d.pmu_box.through_perf_only() {
            let group = arm::SysRegGroup::open(
                self.sim,
                (d.pmu_box, &d.pmu, d.name.counters),
                cpu,
                events,
            )?;
            return Ok(Box::new(group));
        }
        let controls = controls(d, events)?;
        let mut aux = Vec::new();
        for (ev, &(n, raw)) in events.iter().zip(&controls) {
            let control = d.pmu_box.counter(n).and_then(|c| c.control);
            if let (Some(raw), Some(control)) = (raw, control) {
                let processor = self.sim.config().processor.id;
                aux.extend(
                    aux_of(d, processor, ev, control.info, raw)
                        .into_iter()
                        .map(|a| EventSelect {
                            aux: Some(a),
                            ..EventSelect::event(0)
                        }),
                );
            }
        }
        // The kernel schedules a group at once: its events' auxiliary MSRs must agree.
        if !crate::counters::aux_agree(&aux.iter().collect::<Vec<_>>()) {
            return Err(refused(
                0,
                "two events of the group need one auxiliary MSR with different values",
            ));
        }
        let devices = Some(self.sim.uncore_devices());
        let counting = Counting::open(self.sim, d.boxes, d.pmu_box, cpu, socket as usize, devices)
            .map_err(|e| OpenError {
                index: 0,
                fits_alone: false,
                source: io::Error::new(io::ErrorKind::ResourceBusy, e.to_string()),
            })?;
        Ok(Box::new(SimGroup {
            counting,
            controls,
            aux,
            programmed: false,
            last: Vec::new(),
            totals: vec![0; events.len()],
            enabled: EnabledTime::default(),
        }))
    }
}

/// A group on the simulator: the box's counting session and each event's 64-bit total.
struct SimGroup<'s> {
    counting: Counting<'s, Sim>,
    /// Each event's counter and the control programmed for it (none: free-running).
    controls: Vec<(u32, Option<u64>)>,
    /// The auxiliary MSRs the events set, one selection each.
    aux: Vec<EventSelect>,
    programmed: bool,
    /// The counter values at the last read while enabled.
    last: Vec<u64>,
    totals: Vec<u64>,
    enabled: EnabledTime,
}

/// How long a group has been enabled: the kernel's `time_enabled`, and its `time_running`
/// too, since the simulated driver never multiplexes.
#[derive(Default)]
struct EnabledTime {
    since: Option<Instant>,
    before: Duration,
}

impl EnabledTime {
    fn is_running(&self) -> bool {
        self.since.is_some()
    }

    fn start(&mut self) {
        self.since = Some(Instant::now());
    }

    fn stop(&mut self) {
        if let Some(at) = self.since.take() {
            self.before += at.elapsed();
        }
    }

    /// `counts` read with the time enabled so far.
    fn values(&self, counts: Vec<u64>) -> GroupValues {
        let t = self.before + self.since.map_or(Duration::ZERO, |a| a.elapsed());
        GroupValues {
            counts,
            time_enabled: t,
            time_running: t,
        }
    }
}

fn io_err(e: crate::Error) -> io::Error {
    io::Error::other(e.to_string())
}

impl SimGroup<'_> {
    /// Adds each counter's increments since the last read to its total, across its wrap.
    fn accumulate(&mut self) -> io::Result<()> {
        if !self.enabled.is_running() {
            return Ok(());
        }
        for (k, &(n, _)) in self.controls.iter().enumerate() {
            let now = self.counting.read_counter(n).map_err(io_err)?;
            let width = self.counting.counter_width(n).map_err(io_err)?;
            let wrap = if width >= 64 { 0 } else { 1u64 << width };
            let delta = now.wrapping_sub(self.last[k]).wrapping_add(wrap) & wrap.wrapping_sub(1);
            self.totals[k] = self.totals[k].wrapping_add(delta);
            self.last[k] = now;
        }
        Ok(())
    }
}

impl OpenGroup for SimGroup<'_> {
    fn enable(&mut self) -> io::Result<()> {
        if self.enabled.is_running() {
            return Ok(());
        }
        if !self.programmed {
            // Free-running counters always count: only the others are programmed.
            let programmed: Vec<(u32, u64)> = self
                .controls
                .iter()
                .filter_map(|&(n, raw)| Some((n, raw?)))
                .collect();
            self.counting.program_aux(&self.aux).map_err(io_err)?;
            if !programmed.is_empty() {
                self.counting
                    .program_controls(&programmed)
                    .map_err(io_err)?;
            }
            self.programmed = true;
        }
        self.last = self
            .controls
            .iter()
            .map(|&(n, _)| self.counting.read_counter(n))
            .collect::<crate::Result<_>>()
            .map_err(io_err)?;
        self.enabled.start();
        Ok(())
    }

    fn disable(&mut self) -> io::Result<()> {
        self.accumulate()?;
        self.enabled.stop();
        // The counters run on; what they count while disabled is not added.
        Ok(())
    }

    fn read(&mut self) -> io::Result<GroupValues> {
        self.accumulate()?;
        Ok(self.enabled.values(self.totals.clone()))
    }
}

/// Writes, under `dir` (standing for `/sys/bus/event_source/devices`), the kernel PMUs the
/// spec says Linux registers for `processor`'s boxes, as a kernel publishes them: each a
/// directory with its `type` (numbered from 20 here), its driver's `format/*` files, and, for
/// an uncore PMU, the `cpumask` of one CPU per socket (`0,2`). [`SimPerf::new`] over
/// [`EventSources::with_root`]`(dir)` then drives every one on the simulator: the simulated
/// kernel of a simulated part, for a program (such as `pmu check --sim`) that has no
/// tree of its own.
pub fn write_kernel_tree(
    processor: &'static pmu_regs::ProcessorInfo,
    dir: &std::path::Path,
    cpumask: &str,
) -> io::Result<()> {
    let mut written: Vec<&'static str> = Vec::new();
    for name in SpecNames.all() {
        if name.processor != processor.id || written.contains(&name.pmu) {
            continue;
        }
        let d = dir.join(name.pmu);
        std::fs::create_dir_all(d.join("format"))?;
        std::fs::write(d.join("type"), format!("{}\n", 20 + written.len()))?;
        for f in name.driver.formats {
            std::fs::write(d.join("format").join(f.name), format!("{}\n", f.config))?;
        }
        if name.pmu != "cpu" {
            std::fs::write(d.join("cpumask"), format!("{cpumask}\n"))?;
        }
        written.push(name.pmu);
    }
    Ok(())
}
