//! A named workload ([`super::workloads`]) running on the whole simulated machine: its
//! events resolved, by name, to the encodings the simulated processor's lists give them,
//! and every CPU and box counting what its controls select as the clock advances.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use pmu_regs::{EventInfo, ProcessorInfo, Scope};

use super::counting::{cycles_at, CyclePattern};
use super::workloads::NamedWorkload;
use super::{Sim, StreamId};

/// A workload's patterns by what each event is: the unit that counts it (`CORE` for the
/// architectural counters) and its event select and unit mask.
#[derive(Debug)]
pub struct ResolvedWorkload {
    workload: &'static NamedWorkload,
    core: HashMap<(u16, u16), CyclePattern>,
    uncore: HashMap<(&'static str, u16, u16), CyclePattern>,
    slots_per_cycle: u64,
}

/// The pipeline slots a core of `processor` issues (or dispatches) each cycle: what
/// TOPDOWN.SLOTS counts a cycle and the top-down formulas divide by. Read from the spec's
/// data: the counter mask of Intel's "cycles with no uop delivered" event (all the slots
/// undelivered: 4 up to Cascade Lake, 5 on Ice Lake, 6 from Sapphire Rapids on), else the
/// one AMD's front-end latency metric puts on its no-ops event (the dispatch width: 6 on
/// Zen 4, 8 on Zen 5), else 4.
pub fn slots_per_cycle(processor: &ProcessorInfo) -> u64 {
    let intel = processor
        .core_events
        .into_iter()
        .flat_map(|c| c.events.iter())
        .find(|e| e.name == "IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE")
        .map(|e| e.threshold);
    let amd = || {
        pmu_regs::metrics::for_processor(processor.id)
            .iter()
            .flat_map(|m| m.events.iter())
            .find(|e| e.name == "de_no_dispatch_per_slot.no_ops_from_frontend" && e.threshold > 0)
            .map(|e| e.threshold)
    };
    intel.or_else(amd).map_or(4, u64::from)
}

/// An event's plain encoding: one its list gives no counter mask, invert, edge or any-thread
/// (those the counter's control adds, and the simulator applies).
fn plain(e: &EventInfo) -> bool {
    e.threshold == 0 && !e.invert && !e.edge && !e.any_thread
}

/// `p` with each cycle that has an event holding at least `c`: the cycles a condition with
/// counter mask `c` holds (a cycle the workload gives more keeps them). Built once per
/// workload and processor ([`ResolvedWorkload::of`]).
fn scaled(p: CyclePattern, c: u8) -> CyclePattern {
    let runs: Vec<super::counting::Run> = p
        .runs
        .iter()
        .map(|r| {
            let n = if r.per_cycle > 0 {
                r.per_cycle.max(c)
            } else {
                0
            };
            super::counting::run(n, r.cycles)
        })
        .collect();
    CyclePattern {
        runs: Box::leak(runs.into_boxed_slice()),
        kernel: p.kernel,
        unhalted: p.unhalted,
    }
}

impl ResolvedWorkload {
    /// `workload` on `processor`, resolved once per process.
    pub fn of(workload: &'static NamedWorkload, processor: &'static ProcessorInfo) -> Arc<Self> {
        type Cache = std::sync::Mutex<HashMap<(&'static str, &'static str), Arc<ResolvedWorkload>>>;
        static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
        let mut cache = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        cache
            .entry((workload.name, processor.id))
            .or_insert_with(|| Arc::new(ResolvedWorkload::new(workload, processor)))
            .clone()
    }

    /// `workload`'s events as `processor`'s lists encode them.
    pub fn new(workload: &'static NamedWorkload, processor: &'static ProcessorInfo) -> Self {
        let mut core = HashMap::new();
        let mut uncore = HashMap::new();
        let width = format!("@{}:", slots_per_cycle(processor));
        let named = |e: &EventInfo| {
            let find = |prefix: &str| {
                workload.events.iter().find(|(n, _)| {
                    n.strip_prefix(prefix)
                        .is_some_and(|n| n.eq_ignore_ascii_case(e.name))
                })
            };
            // The entry for this core's width first, then the plain one.
            find(&width)
                .or_else(|| find(""))
                .map(|(_, runs)| workload.pattern(runs))
        };
        let core_lists = processor
            .core_events
            .into_iter()
            .chain(pmu_regs::arch::PROCESSOR.core_events);
        for e in core_lists.flat_map(|c| c.events.iter()) {
            if let Some(p) = named(e).filter(|_| plain(e)) {
                core.entry((e.code, e.umask)).or_insert(p);
            }
        }
        // Names whose lists give them a counter mask name the cycles their condition holds
        // (with edge detect: their rising edges count); `raw:NAME` gives the encoding's own
        // events in each cycle, where the list gives NAME a counter mask.
        let masked: Vec<_> = processor
            .core_events
            .into_iter()
            .flat_map(|c| c.events.iter())
            .filter(|e| e.threshold > 0 && !e.invert && !e.any_thread)
            .collect();
        for e in &masked {
            let raw = workload.events.iter().find(|(n, _)| {
                n.strip_prefix("raw:")
                    .is_some_and(|n| n.eq_ignore_ascii_case(e.name))
            });
            if let Some((_, runs)) = raw {
                core.entry((e.code, e.umask))
                    .or_insert(workload.pattern(runs));
            }
        }
        for e in masked {
            if let Some(p) = named(e) {
                core.entry((e.code, e.umask))
                    .or_insert_with(|| scaled(p, e.threshold));
            }
        }
        for u in processor.units {
            for e in u.events.iter().filter(|e| plain(e)) {
                if let Some(p) = named(e) {
                    let p = CyclePattern {
                        unhalted: super::counting::PERIOD,
                        ..p
                    };
                    uncore.entry((u.name, e.code, e.umask)).or_insert(p);
                }
            }
        }
        ResolvedWorkload {
            workload,
            core,
            uncore,
            slots_per_cycle: slots_per_cycle(processor),
        }
    }

    /// The pipeline slots a core issues each cycle (found from the processor's event lists when the machine is built).
    pub fn slots_per_cycle(&self) -> u64 {
        self.slots_per_cycle
    }

    /// The workload.
    pub fn workload(&self) -> &'static NamedWorkload {
        self.workload
    }

    /// What an architectural counter selecting `code` and `umask` sees.
    pub fn core(&self, code: u16, umask: u16) -> CyclePattern {
        self.core
            .get(&(code, umask))
            .copied()
            .unwrap_or_else(|| self.workload.pattern(self.workload.default))
    }

    /// What a counter of `unit` selecting `code` and `umask` sees.
    pub fn uncore(&self, unit: &'static str, code: u16, umask: u16) -> CyclePattern {
        self.uncore
            .get(&(unit, code, umask))
            .copied()
            .unwrap_or_else(|| self.workload.uncore_pattern(self.workload.default))
    }

    /// A box clock's ticks: one every cycle.
    pub fn clock(&self) -> CyclePattern {
        const TICKS: &[super::counting::Run] = &[super::counting::run(1, 1000)];
        self.workload.uncore_pattern(TICKS)
    }
}

/// A named workload started on the simulator, and the time it has been brought to. The
/// machine runs it once however many sessions started it: each session's clock starts at
/// its own opening, so each id keeps the workload's time when it joined, and a session
/// bringing its clock to `t` brings the workload to that offset plus `t` (never back).
#[derive(Debug)]
pub(super) struct Running {
    /// The ids it was started under, each with the workload's time when it was.
    pub ids: Vec<(StreamId, Duration)>,
    pub resolved: Arc<ResolvedWorkload>,
    pub at: Duration,
}

impl Sim {
    /// Starts the named workload `workload` on the whole machine: from now on every CPU's
    /// counters and every box count, as [`Self::advance`] brings the clock on, what their
    /// controls select of it. Started again while it runs (another session on the same
    /// machine), it joins what runs: events happen once.
    pub fn run_named(&self, workload: &'static NamedWorkload) -> StreamId {
        let resolved = ResolvedWorkload::of(workload, self.config.processor);
        let mut w = self.workload.lock().unwrap_or_else(|p| p.into_inner());
        let id = StreamId(w.next);
        w.next += 1;
        match w
            .named
            .iter_mut()
            .find(|r| std::ptr::eq(r.resolved.workload(), workload))
        {
            Some(r) => {
                let at = r.at;
                r.ids.push((id, at));
            }
            None => w.named.push(Running {
                ids: vec![(id, Duration::ZERO)],
                resolved,
                at: Duration::ZERO,
            }),
        }
        id
    }

    /// Brings the named workloads among `ids` to time `t` of those ids' clocks.
    pub(super) fn advance_named(&self, ids: &[StreamId], t: Duration) {
        let due: Vec<(Arc<ResolvedWorkload>, Duration, Duration)> = {
            let mut w = self.workload.lock().unwrap_or_else(|p| p.into_inner());
            w.named
                .iter_mut()
                .filter_map(|r| {
                    let to = r
                        .ids
                        .iter()
                        .filter(|(id, _)| ids.contains(id))
                        .map(|(_, offset)| *offset + t)
                        .max()?;
                    (to > r.at).then(|| (r.resolved.clone(), std::mem::replace(&mut r.at, to), to))
                })
                .collect()
        };
        for (resolved, from, to) in due {
            self.count_span(&resolved, from, to);
        }
    }

    /// Stops the named workloads' ids among `ids`; a workload no id runs any more stops.
    pub(super) fn stop_named(&self, ids: &[StreamId]) {
        let mut w = self.workload.lock().unwrap_or_else(|p| p.into_inner());
        for r in &mut w.named {
            r.ids.retain(|(id, _)| !ids.contains(id));
        }
        w.named.retain(|r| !r.ids.is_empty());
    }

    /// Every CPU and box counts the workload from `from` to `to`.
    fn count_span(&self, w: &ResolvedWorkload, from: Duration, to: Duration) {
        let core = (
            cycles_at(w.workload().core_mhz, from),
            cycles_at(w.workload().core_mhz, to),
        );
        let uncore = (
            cycles_at(w.workload().uncore_mhz, from),
            cycles_at(w.workload().uncore_mhz, to),
        );
        let skew = self.config.freeze_skew;
        let l3s: Vec<usize> = (0..self.lock().cpus.len() as u32)
            .filter_map(|cpu| self.l3_of_cpu(cpu))
            .collect();
        let mut guard = self.lock();
        let st = &mut *guard;
        for (cpu, state) in st.cpus.iter_mut().enumerate() {
            state.run_workload(cpu as u32, w, core, &mut st.journal);
        }
        if self.core_box.is_some() {
            for (cpu, state) in st.cores.iter_mut().enumerate() {
                self.uncore
                    .run_workload(Scope::Cpu, cpu, state, w, core, skew, &mut st.journal);
            }
        }
        let mut seen = Vec::new();
        for l3 in l3s {
            if !seen.contains(&l3) {
                seen.push(l3);
                self.uncore.run_workload(
                    Scope::L3,
                    l3,
                    &mut st.l3s[l3],
                    w,
                    uncore,
                    skew,
                    &mut st.journal,
                );
            }
        }
        for (socket, state) in st.uncore.iter_mut().enumerate() {
            self.uncore.run_workload(
                Scope::Socket,
                socket,
                state,
                w,
                uncore,
                skew,
                &mut st.journal,
            );
        }
    }
}
