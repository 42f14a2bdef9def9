//! What `perf stat` prints for each event: the count (with its unit), the derived comment
//! (`CPUs utilized`, `/sec`, `GHz`, `insn per cycle`, `of all branches`) and, over several
//! runs, the spread; computed from the counts as perf's `stat-shadow.c` does.

use crate::perf::counting::EventReading;

use super::aggr::RowPlace;
use super::events::{EventRole, StatEvent};

/// A running mean and variance (Welford's method, as perf's `update_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spread {
    n: u32,
    mean: f64,
    m2: f64,
}

impl Spread {
    /// Adds one run's value.
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / f64::from(self.n);
        self.m2 += delta * (x - self.mean);
    }

    /// The number of values.
    pub fn runs(&self) -> u32 {
        self.n
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The standard deviation of the mean (the sample variance over n, square-rooted), as
    /// perf's `stddev_stats`; 0 with fewer than two values.
    pub fn stddev_of_mean(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let variance = self.m2 / f64::from(self.n - 1);
        (variance / f64::from(self.n)).sqrt()
    }

    /// [`Spread::stddev_of_mean`] as a percentage of the mean (perf's `( +- x.xx% )`);
    /// 0 for a zero mean.
    pub fn percent(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            100.0 * self.stddev_of_mean() / self.mean
        }
    }
}

/// One event's counts over the runs: the scaled count and the times, each as a [`Spread`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EventTotals {
    /// The count, scaled for multiplexing as perf scales it.
    pub count: Spread,
    /// Nanoseconds enabled.
    pub enabled: Spread,
    /// Nanoseconds running.
    pub running: Spread,
}

impl EventTotals {
    /// Adds one run's (or interval's) reading.
    pub fn add(&mut self, r: &EventReading) {
        let scaled = r.scaled().unwrap_or(0);
        self.count.add(scaled as f64);
        self.enabled.add(r.time_enabled.as_nanos() as f64);
        self.running.add(r.time_running.as_nanos() as f64);
    }
}

/// An event's value as perf shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum RowValue {
    /// A count: the (mean) value in the row's unit.
    Counted(f64),
    /// The machine cannot count the event (`<not supported>`).
    NotSupported,
    /// The event never ran in this period (`<not counted>`).
    NotCounted,
}

/// A derived comment: `0.006 CPUs utilized`, `65.757 K/sec`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    /// The value.
    pub value: f64,
    /// The value as perf prints it in its text layout (8 columns).
    pub text: String,
    /// Its unit (`CPUs utilized`, `K/sec`, `GHz`, `insn per cycle`, `of all branches`).
    pub unit: String,
}

/// One row of `perf stat`'s output.
#[derive(Debug, Clone, PartialEq)]
pub struct StatRow {
    /// What it counts: everything, a CPU or a socket.
    pub place: RowPlace,
    /// The event as written (`task-clock`, `page-faults:u`, `msr/tsc/`).
    pub event: String,
    /// What the comments make of it.
    pub role: EventRole,
    /// Where any event is limited to a cgroup (`-G`), this one's (empty: every task);
    /// `None` without `-G`.
    pub cgroup: Option<String>,
    /// The value.
    pub value: RowValue,
    /// The unit (`msec` for the clocks, empty otherwise).
    pub unit: &'static str,
    /// Nanoseconds the event ran (perf's `event-runtime`).
    pub runtime_ns: u64,
    /// The share of the enabled time it ran, in percent (100 unless multiplexed).
    pub running_percent: f64,
    /// The derived comment, if perf prints one for it here.
    pub comment: Option<Comment>,
    /// Over several runs, the spread of the count in percent of its mean.
    pub spread: Option<f64>,
}

/// perf's `convert_unit_double`: a rate with K, M or G.
fn rate(per_sec: f64) -> (f64, String) {
    for (limit, prefix) in [(1e9, "G"), (1e6, "M"), (1e3, "K")] {
        if per_sec > limit {
            return (per_sec / limit, format!("{prefix}/sec"));
        }
    }
    (per_sec, "/sec".into())
}

fn comment(value: f64, text: String, unit: impl Into<String>) -> Option<Comment> {
    Some(Comment {
        value,
        text,
        unit: unit.into(),
    })
}

/// The first counted mean of `role` among `events`/`totals` limited to `cgroup` (as perf
/// derives a comment from the events of the same cgroup).
fn mean_of(
    events: &[StatEvent],
    totals: &[Option<EventTotals>],
    role: EventRole,
    cgroup: Option<&str>,
) -> Option<f64> {
    events
        .iter()
        .zip(totals)
        .filter(|(e, _)| e.cgroup.as_deref() == cgroup)
        .find(|(e, t)| e.role == role && t.is_some_and(|t| t.running.mean() > 0.0))
        .and_then(|(_, t)| t.map(|t| t.count.mean()))
}

/// The comment perf derives for an event of `role` counting `count`, given the clock's
/// nanoseconds and the period's (the command's wall time, or the interval).
fn derive(
    role: EventRole,
    count: f64,
    clock_ns: Option<f64>,
    period_ns: f64,
    (cycles, branches): (Option<f64>, Option<f64>),
) -> Option<Comment> {
    match role {
        EventRole::Clock if period_ns > 0.0 => {
            let v = count / period_ns;
            comment(v, format!("{v:8.3}"), "CPUs utilized")
        }
        EventRole::Cycles => clock_ns.filter(|&c| c > 0.0).and_then(|c| {
            let v = count / c;
            comment(v, format!("{v:8.3}"), "GHz")
        }),
        EventRole::Instructions => cycles.filter(|&c| c > 0.0).and_then(|c| {
            let v = count / c;
            comment(v, format!("{v:7.2} "), "insn per cycle")
        }),
        EventRole::BranchMisses => branches.filter(|&b| b > 0.0).and_then(|b| {
            let v = 100.0 * count / b;
            comment(v, format!("{v:7.2}%"), "of all branches")
        }),
        EventRole::Branches | EventRole::Other => clock_ns.map(|c| {
            let per_sec = if c > 0.0 { 1e9 * count / c } else { 0.0 };
            let (v, unit) = rate(per_sec);
            Comment {
                value: v,
                text: format!("{v:8.3}"),
                unit,
            }
        }),
        EventRole::Clock => None,
    }
}

/// The rows of `events` with their totals (`None`: not supported) at `place`, over a
/// period of `period_ns` (the mean wall time of the runs, or the interval), as perf prints
/// them.
pub fn rows(
    events: &[StatEvent],
    totals: &[Option<EventTotals>],
    period_ns: f64,
    place: RowPlace,
) -> Vec<StatRow> {
    let with_cgroups = events.iter().any(|e| e.cgroup.is_some());
    let runs = totals
        .iter()
        .flatten()
        .map(|t| t.count.runs())
        .max()
        .unwrap_or(1);
    events
        .iter()
        .zip(totals)
        .map(|(e, t)| {
            let unit = if e.role == EventRole::Clock {
                "msec"
            } else {
                ""
            };
            let cgroup = with_cgroups.then(|| e.cgroup.clone().unwrap_or_default());
            let Some(t) = t else {
                return StatRow {
                    place,
                    event: e.name.clone(),
                    role: e.role,
                    cgroup,
                    value: RowValue::NotSupported,
                    unit: "",
                    runtime_ns: 0,
                    running_percent: 100.0,
                    comment: None,
                    spread: (runs > 1).then_some(0.0),
                };
            };
            let count = t.count.mean();
            let counted = t.running.mean() > 0.0;
            let shown = if e.role == EventRole::Clock {
                count / 1e6
            } else {
                count
            };
            let mean = |role| mean_of(events, totals, role, e.cgroup.as_deref());
            let (clock, cycles) = (mean(EventRole::Clock), mean(EventRole::Cycles));
            let branches = mean(EventRole::Branches);
            StatRow {
                place,
                event: e.name.clone(),
                role: e.role,
                cgroup,
                value: if counted {
                    RowValue::Counted(shown)
                } else {
                    RowValue::NotCounted
                },
                unit,
                runtime_ns: t.running.mean().round() as u64,
                running_percent: if t.enabled.mean() > 0.0 {
                    100.0 * t.running.mean() / t.enabled.mean()
                } else {
                    100.0
                },
                comment: counted
                    .then(|| derive(e.role, count, clock, period_ns, (cycles, branches)))
                    .flatten(),
                spread: (t.count.runs() > 1).then(|| t.count.percent()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_the_standard_error_in_percent() {
        // 10, 12, 14: mean 12, sample variance 4, standard error sqrt(4/3) = 1.1547,
        // 9.62% of the mean (worked by hand).
        let mut s = Spread::default();
        for x in [10.0, 12.0, 14.0] {
            s.add(x);
        }
        assert_eq!(s.mean(), 12.0);
        assert!((s.stddev_of_mean() - 1.154_700_5).abs() < 1e-6);
        assert!((s.percent() - 9.622_504).abs() < 1e-5);
        let mut one = Spread::default();
        one.add(5.0);
        assert_eq!(one.percent(), 0.0);
    }

    #[test]
    fn rates_take_perfs_prefixes() {
        // perf's convert_unit_double: strictly above 1e3, 1e6, 1e9.
        assert_eq!(rate(865.2).1, "/sec");
        assert_eq!(rate(1000.0).1, "/sec");
        let (v, u) = rate(65_757.0);
        assert_eq!((u.as_str(), (v * 1000.0).round()), ("K/sec", 65_757.0));
        assert_eq!(rate(2.5e6).1, "M/sec");
        assert_eq!(rate(3.1e9).1, "G/sec");
    }

    #[test]
    fn hardware_comments_are_perfs_ratios() {
        // 2e9 cycles in 1e9 ns of task-clock: 2 GHz; 3e9 instructions: 1.5 insn per cycle;
        // 5e6 misses of 2e8 branches: 2.5%.
        let c = derive(EventRole::Cycles, 2e9, Some(1e9), 1e9, (None, None)).unwrap();
        assert_eq!((c.text.as_str(), c.unit.as_str()), ("   2.000", "GHz"));
        let i = derive(
            EventRole::Instructions,
            3e9,
            Some(1e9),
            1e9,
            (Some(2e9), None),
        )
        .unwrap();
        assert_eq!(i.text, "   1.50 ");
        let b = derive(EventRole::BranchMisses, 5e6, None, 1e9, (None, Some(2e8))).unwrap();
        assert_eq!(
            (b.text.as_str(), b.unit.as_str()),
            ("   2.50%", "of all branches")
        );
        // Without cycles, no insn per cycle; without a clock, no rate.
        assert!(derive(EventRole::Instructions, 3e9, Some(1e9), 1e9, (None, None)).is_none());
        assert!(derive(EventRole::Other, 7.0, None, 1e9, (None, None)).is_none());
    }
}
