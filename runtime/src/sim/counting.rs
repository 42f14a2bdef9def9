//! What a counter counts from its control value, as Intel's SDM (Vol. 3B, 20.2 "Architectural
//! Performance Monitoring", IA32_PERFEVTSELx: USR, OS, E, ANY, INV, CMASK) and AMD's PPRs
//! (Core::X86::Msr::PERF_CTL: CntMask, Inv, Edge, OsUserMode) describe it, over a workload
//! that says how many events happen in each cycle ([`CyclePattern`]).
//!
//! - Counter mask 0: each cycle adds the number of events in it.
//! - Counter mask `c` > 0: each cycle adds 1 where the cycle's events are at least `c`
//!   (invert set: fewer than `c`). Invert with counter mask 0 is ignored, as on hardware
//!   (the comparison it inverts is only made with a non-zero mask).
//! - Edge detect: 1 at each cycle where that condition becomes true after a cycle where it
//!   was false (a rising edge); with counter mask 0 the condition is "at least one event".
//! - USR and OS: a cycle counts only in the modes selected; neither selected counts nothing.
//! - Any-thread: the cycle's events are those of both hardware threads of the core. The
//!   simulated sibling runs the same workload half a period ([`SIBLING_LAG`]) behind, so a
//!   cycle holds this thread's events plus the sibling's of that moment: every total doubles,
//!   while a counter mask sees the two threads' events together as a core would (two
//!   recoveries at different times are twice the cycles with a recovery; a thread alone
//!   counts differently from both).
//!
//! A workload's time is cycles of the simulated clock. Every pattern is periodic with
//! [`PERIOD`] cycles, the first [`CyclePattern::kernel`] of each period in kernel mode: the
//! count up to cycle `n` is a function of `n` alone, so however a span is cut into readings,
//! the readings add up to the same total.

/// Cycles in one period of every workload pattern.
pub const PERIOD: u64 = 1000;

/// How many cycles of its period the simulated sibling thread is behind (any-thread).
pub const SIBLING_LAG: u64 = PERIOD / 2;

/// `cycles` consecutive cycles with `per_cycle` events each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Events in each of these cycles (of one hardware thread).
    pub per_cycle: u8,
    /// How many cycles.
    pub cycles: u16,
}

/// Shorthand for a [`Run`].
pub const fn run(per_cycle: u8, cycles: u16) -> Run {
    Run { per_cycle, cycles }
}

/// One event's cycles: the runs of one period in order ([`PERIOD`] cycles in all), and how
/// many of the period's first cycles are kernel mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CyclePattern {
    /// The runs, in order, repeated every period.
    pub runs: &'static [Run],
    /// Cycles at the start of each period spent in kernel mode (the rest: user mode).
    pub kernel: u64,
    /// Cycles at the start of each period the thread runs: a core counter counts nothing
    /// while its thread is halted (an inverted counter mask included), as on hardware; an
    /// any-thread counter counts while either thread runs. [`PERIOD`]: never halted (every
    /// uncore clock).
    pub unhalted: u64,
}

/// What a counter's control selects beyond the event: the fields this module interprets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filter {
    /// Counter mask (Intel's CMASK, AMD's CntMask; 0: count events).
    pub cmask: u8,
    /// Invert the counter-mask comparison.
    pub invert: bool,
    /// Count rising edges of the counter-mask condition.
    pub edge: bool,
    /// Count in user mode.
    pub user: bool,
    /// Count in kernel mode.
    pub kernel: bool,
    /// Count both hardware threads' events.
    pub any_thread: bool,
}

impl Filter {
    /// Every event in every mode of this thread: what an uncore counter (which has no mode
    /// filter) counts with no counter mask.
    pub const ALL: Filter = Filter {
        cmask: 0,
        invert: false,
        edge: false,
        user: true,
        kernel: true,
        any_thread: false,
    };

    /// What one cycle with `events` events adds without edge detect.
    fn per_cycle(&self, events: u64) -> u64 {
        if self.cmask == 0 {
            events
        } else {
            u64::from(self.condition(events))
        }
    }

    /// Whether the counter-mask condition holds in a cycle with `events` events (counter
    /// mask 0, for edge detect: at least one event; invert inverts only a comparison that
    /// is made).
    fn condition(&self, events: u64) -> bool {
        let inv = self.invert && self.cmask != 0;
        (events >= u64::from(self.cmask.max(1))) != inv
    }
}

impl CyclePattern {
    /// The events of run `r` in one cycle as the counter sees them.
    fn events(&self, r: &Run) -> u64 {
        u64::from(r.per_cycle)
    }

    /// Events in cycle `c` (< [`PERIOD`]) of one thread.
    fn at(&self, c: u64) -> u8 {
        let mut start = 0;
        for r in self.runs {
            start += u64::from(r.cycles);
            if c < start {
                return r.per_cycle;
            }
        }
        0
    }

    /// The runs a counter with `f` sees: with any-thread, each cycle's events of this thread
    /// and of the sibling, [`SIBLING_LAG`] cycles behind.
    fn runs_seen(&self, f: &Filter) -> std::borrow::Cow<'static, [Run]> {
        if !f.any_thread {
            return std::borrow::Cow::Borrowed(self.runs);
        }
        let mut cuts: Vec<u64> = vec![0];
        let mut start = 0;
        for r in self.runs {
            cuts.push(start);
            cuts.push((start + PERIOD - SIBLING_LAG) % PERIOD);
            start += u64::from(r.cycles);
        }
        cuts.sort_unstable();
        cuts.dedup();
        let runs = cuts
            .iter()
            .zip(cuts.iter().skip(1).chain([&PERIOD]))
            .map(|(&a, &b)| {
                let both = self
                    .at(a)
                    .saturating_add(self.at((a + SIBLING_LAG) % PERIOD));
                run(both, (b - a) as u16)
            })
            .collect();
        std::borrow::Cow::Owned(runs)
    }

    /// Cycles of `[a, b)` (within one period) that the filter's modes let count.
    fn counted_cycles(&self, a: u64, b: u64, f: &Filter) -> u64 {
        let u = self.unhalted.min(PERIOD);
        let mut total = self.moded(a.min(u), b.min(u), f);
        if f.any_thread && u < PERIOD {
            // The sibling runs [SIBLING_LAG, SIBLING_LAG + u): the part of it this thread
            // does not (u <= SIBLING_LAG: all of it; else from u on).
            let from = SIBLING_LAG.max(u);
            let to = (SIBLING_LAG + u).min(PERIOD);
            if from < to {
                total += self.moded(a.clamp(from, to), b.clamp(from, to), f);
            }
        }
        total
    }

    /// Cycles of `[a, b)` in the filter's modes (`a <= b`).
    fn moded(&self, a: u64, b: u64, f: &Filter) -> u64 {
        let k = self.kernel.min(PERIOD);
        let kernel = b.min(k).saturating_sub(a.min(k));
        let user = (b - a) - kernel;
        u64::from(f.kernel) * kernel + u64::from(f.user) * user
    }

    /// What the counter counts in the first `limit` cycles of a period (`limit` <=
    /// [`PERIOD`]).
    fn prefix(&self, f: &Filter, limit: u64) -> u64 {
        let runs = self.runs_seen(f);
        let last = runs.last().map_or(0, |r| self.events(r));
        let mut before = f.condition(last);
        let mut start = 0u64;
        let mut total = 0u64;
        for r in runs.iter() {
            if start >= limit {
                break;
            }
            let end = (start + u64::from(r.cycles)).min(limit);
            let ev = self.events(r);
            if r.cycles > 0 {
                if f.edge {
                    let now = f.condition(ev);
                    if now && !before {
                        total += self.counted_cycles(start, start + 1, f);
                    }
                    before = now;
                } else {
                    total += f.per_cycle(ev) * self.counted_cycles(start, end, f);
                }
            }
            start += u64::from(r.cycles);
        }
        total
    }

    /// What a counter with filter `f` counts from cycle 0 to cycle `n` of the clock.
    pub fn count_until(&self, f: &Filter, n: u64) -> u64 {
        let whole = n / PERIOD;
        whole.saturating_mul(self.prefix(f, PERIOD)) + self.prefix(f, n % PERIOD)
    }

    /// The cycles the runs cover (a valid pattern: [`PERIOD`]).
    pub fn period(&self) -> u64 {
        self.runs.iter().map(|r| u64::from(r.cycles)).sum()
    }
}

/// Cycles of a `mhz` clock from time 0 to `t`.
pub fn cycles_at(mhz: u64, t: std::time::Duration) -> u64 {
    let c = t.as_nanos() * u128::from(mhz) / 1000;
    u64::try_from(c).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    // One period: 100 cycles of 0 events, 300 of 2, 100 of 0, 400 of 1, 100 of 4; the first
    // 200 cycles are kernel mode. By hand: events 0*100 + 2*300 + 0*100 + 1*400 + 4*100 =
    // 1400 per period; kernel cycles are [0,200): 100 of 0 and 100 of 2, so 200 kernel events
    // and 1200 user events.
    const RUNS: &[Run] = &[
        run(0, 100),
        run(2, 300),
        run(0, 100),
        run(1, 400),
        run(4, 100),
    ];
    const P: CyclePattern = CyclePattern {
        runs: RUNS,
        kernel: 200,
        unhalted: PERIOD,
    };

    fn f(cmask: u8, invert: bool, edge: bool) -> Filter {
        Filter {
            cmask,
            invert,
            edge,
            ..Filter::ALL
        }
    }

    #[test]
    fn events_cmask_invert_and_edge_as_counted_by_hand() {
        assert_eq!(P.period(), PERIOD);
        assert_eq!(P.count_until(&Filter::ALL, PERIOD), 1400);
        // cmask 1: cycles with >= 1 event: 300 + 400 + 100 = 800; inverted: 200.
        assert_eq!(P.count_until(&f(1, false, false), PERIOD), 800);
        assert_eq!(P.count_until(&f(1, true, false), PERIOD), 200);
        // cmask 2: 300 + 100 = 400; inverted 600.
        assert_eq!(P.count_until(&f(2, false, false), PERIOD), 400);
        assert_eq!(P.count_until(&f(2, true, false), PERIOD), 600);
        // Rising edges of (>= 1): 0->2 at cycle 100, 0->1 at cycle 500; the period's last
        // run (4) precedes its first (0): no edge at cycle 0. Two per period.
        assert_eq!(P.count_until(&f(1, false, true), PERIOD), 2);
        // (>= 2): 0->2 at 100, 1->4 at 900: two. Inverted (< 2): 2->0 at 400 and 4->0 at 0
        // (cyclic; 0->1 keeps it true): two.
        assert_eq!(P.count_until(&f(2, false, true), PERIOD), 2);
        assert_eq!(P.count_until(&f(2, true, true), PERIOD), 2);
        // Invert without a counter mask is ignored.
        assert_eq!(P.count_until(&f(0, true, false), PERIOD), 1400);
        // Partial period: the first 450 cycles: 2 * 300 events; edges: one (at 100).
        assert_eq!(P.count_until(&Filter::ALL, 450), 600);
        assert_eq!(P.count_until(&f(1, false, true), 450), 1);
        // 3 periods and 450 cycles.
        assert_eq!(P.count_until(&Filter::ALL, 3450), 3 * 1400 + 600);
    }

    #[test]
    fn identities_hold() {
        for n in [0, 1, 99, 100, 101, 999, 1000, 12_345] {
            for c in 1..=8 {
                let ge = P.count_until(&f(c, false, false), n);
                let lt = P.count_until(&f(c, true, false), n);
                assert_eq!(ge + lt, n, "cmask {c} at {n}");
                assert!(P.count_until(&f(c, false, true), n) <= ge);
            }
            let user = Filter {
                kernel: false,
                ..Filter::ALL
            };
            let os = Filter {
                user: false,
                ..Filter::ALL
            };
            assert_eq!(
                P.count_until(&user, n) + P.count_until(&os, n),
                P.count_until(&Filter::ALL, n)
            );
        }
    }

    #[test]
    fn privilege_and_any_thread_by_hand() {
        let user = Filter {
            kernel: false,
            ..Filter::ALL
        };
        let os = Filter {
            user: false,
            ..Filter::ALL
        };
        let none = Filter {
            user: false,
            kernel: false,
            ..Filter::ALL
        };
        assert_eq!(P.count_until(&user, PERIOD), 1200);
        assert_eq!(P.count_until(&os, PERIOD), 200);
        assert_eq!(P.count_until(&none, PERIOD), 0);
        // Any-thread: both threads, 2 x 1400. The sibling is 500 cycles behind: in cycle c it
        // has this thread's events of cycle c + 500: [0,400) 1, [400,500) 4, [500,600) 0,
        // [600,900) 2, [900,1000) 0; with this thread's, [0,100) 1, [100,400) 3, [400,500)
        // 4, [500,600) 1, [600,900) 3, [900,1000) 4: with cmask 3, 300 + 100 + 300 + 100.
        let any = Filter {
            any_thread: true,
            ..Filter::ALL
        };
        assert_eq!(P.count_until(&any, PERIOD), 2800);
        let any3 = Filter { cmask: 3, ..any };
        assert_eq!(P.count_until(&any3, PERIOD), 800);
        // A 2.5 GHz clock for 1 ms: 2.5 million cycles.
        assert_eq!(
            cycles_at(2500, std::time::Duration::from_millis(1)),
            2_500_000
        );
    }

    #[test]
    fn a_halted_thread_counts_nothing_and_any_thread_counts_while_either_runs() {
        // Runs [0,100) 2, [100,200) 0, [200,300) 1, then halted from cycle 300.
        const R: &[Run] = &[run(2, 100), run(0, 100), run(1, 100), run(0, 700)];
        let p = CyclePattern {
            runs: R,
            kernel: 0,
            unhalted: 300,
        };
        assert_eq!(p.count_until(&Filter::ALL, PERIOD), 300);
        // Cycles with no event while running: [100,200) only, not the 700 halted ones.
        assert_eq!(p.count_until(&f(1, true, false), PERIOD), 100);
        // The sibling, 500 cycles behind, runs [500,800) with 2, 0, 1 a cycle there; either
        // runs in [0,300) and [500,800): no event in [100,200) and [600,700).
        let any = |cmask, invert| Filter {
            cmask,
            invert,
            any_thread: true,
            ..Filter::ALL
        };
        assert_eq!(p.count_until(&any(0, false), PERIOD), 600);
        assert_eq!(p.count_until(&any(1, true), PERIOD), 200);
    }
}
