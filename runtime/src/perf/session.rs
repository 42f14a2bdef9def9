//! The counting loop: a box's events opened on each CPU its PMU's `cpumask` names (one per
//! socket), read every interval as counts of that interval, with multiplexing reported.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pmu_regs::RegisterInfo;

use super::counting::{BoxGroup, EventReading};
use super::encode::{from_control, PerfEvent};
use super::error::PerfError;
use super::layer::PerfLayer;
use super::names::{PerfNames, PmuName};
use super::syscall::Syscalls;
use super::sysfs::{EventSources, KernelPmu};

/// The PMU of box `instance` (the one covering `counter`, for a box split over several) and
/// our control-register value `raw` (laid out as `info`) as its event. The PMU is read from
/// `sources`; its absence is an error naming the driver.
pub fn box_event(
    sources: &EventSources,
    names: &dyn PerfNames,
    info: &RegisterInfo,
    instance: &str,
    counter: u32,
    raw: u64,
) -> Result<(KernelPmu, PerfEvent, PmuName), PerfError> {
    let name = names.lookup(info.processor, info.unit, instance, Some(counter))?;
    let pmu = sources.pmu(name.pmu, &name.driver_name())?;
    let ev = from_control(
        info,
        raw,
        &pmu.name,
        &pmu.formats,
        Some(name.kernel_counter(counter)),
    )?;
    Ok((pmu, ev, name))
}

/// One event's count over one interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntervalCount {
    /// The PMU (box).
    pub pmu: String,
    /// The CPU it counts on (`None`: this process).
    pub cpu: Option<u32>,
    /// The event string.
    pub event: String,
    /// The interval's count and times.
    pub reading: EventReading,
}

/// Events of one PMU counting on each of its CPUs.
#[derive(Debug)]
pub struct CountingLoop<'l> {
    groups: Vec<BoxGroup<'l>>,
    previous: Vec<Vec<EventReading>>,
}

impl CountingLoop<'static> {
    /// Opens `events` as one group on each CPU of `cpus` (`None`: this process on any CPU),
    /// and enables them. Nothing stays open if any fails.
    pub fn start(
        pmu: &KernelPmu,
        cpus: &[Option<u32>],
        events: &[PerfEvent],
    ) -> Result<Self, PerfError> {
        CountingLoop::start_on(&Syscalls, pmu, cpus, events)
    }
}

impl<'l> CountingLoop<'l> {
    /// [`CountingLoop::start`] through `layer`.
    pub fn start_on(
        layer: &'l dyn PerfLayer,
        pmu: &KernelPmu,
        cpus: &[Option<u32>],
        events: &[PerfEvent],
    ) -> Result<Self, PerfError> {
        let mut groups = Vec::new();
        for &cpu in cpus {
            groups.push(BoxGroup::open_on(layer, pmu, cpu, events)?);
        }
        for g in &mut groups {
            g.enable()?;
        }
        let previous = groups
            .iter_mut()
            .map(BoxGroup::read)
            .collect::<Result<_, _>>()?;
        Ok(CountingLoop { groups, previous })
    }

    /// The CPUs a PMU's events are opened on: those of its `cpumask` (one per socket), or
    /// only `socket`'s; a PMU without a cpumask counts on `fallback`.
    pub fn cpus(
        pmu: &KernelPmu,
        socket: Option<u32>,
        fallback: u32,
    ) -> Result<Vec<Option<u32>>, PerfError> {
        if pmu.cpumask.is_empty() {
            return Ok(vec![Some(fallback)]);
        }
        match socket {
            None => Ok(pmu.cpumask.iter().map(|&c| Some(c)).collect()),
            Some(s) => pmu
                .cpumask
                .get(s as usize)
                .map(|&c| vec![Some(c)])
                .ok_or_else(|| PerfError::NoPmuName {
                    what: format!("socket {s} of {}", pmu.name),
                    reason: format!("its cpumask names {} socket(s)", pmu.cpumask.len()),
                }),
        }
    }

    /// Each event's count since the previous call (or since the start).
    pub fn interval(&mut self) -> Result<Vec<IntervalCount>, PerfError> {
        let mut out = Vec::new();
        for (g, prev) in self.groups.iter_mut().zip(&mut self.previous) {
            let now = g.read()?;
            for ((event, r), p) in g.events().iter().zip(&now).zip(prev.iter()) {
                out.push(IntervalCount {
                    pmu: g.pmu().to_string(),
                    cpu: g.cpu(),
                    event: event.clone(),
                    reading: r.since(p),
                });
            }
            *prev = now;
        }
        Ok(out)
    }

    /// Reports every `interval` (`count` times, or until `stop`), passing the seconds since
    /// the start and the interval's counts to `report`. The counters close when the session
    /// is dropped, whatever happened.
    pub fn run(
        &mut self,
        interval: Duration,
        count: Option<u64>,
        stop: &AtomicBool,
        mut report: impl FnMut(f64, &[IntervalCount]),
    ) -> Result<(), PerfError> {
        let start = Instant::now();
        let mut n = 0;
        while count.is_none_or(|c| n < c) && !stop.load(Ordering::SeqCst) {
            n += 1;
            let deadline = Instant::now() + interval;
            while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
                std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
            }
            let counts = self.interval()?;
            report(start.elapsed().as_secs_f64(), &counts);
        }
        Ok(())
    }
}
