//! Running the measured command (or waiting) while the counters count: one run, or `-r N`
//! runs gathered into means and spreads, with a report every interval if asked.

use std::io;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::perf::counting::{classify, EventReading};
use crate::perf::layer::EventAttr;
use crate::perf::task::{TaskCounter, TaskScope};

use super::aggr::{aggregate, groups, RowPlace, StatAggr};
use super::events::StatEvent;
use super::rows::{rows, EventTotals, Spread, StatRow};
use super::StatError;

/// What the counters follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatScope {
    /// The command and the tasks it starts (perf's default with a command).
    Command,
    /// Running tasks by process id (`-p`).
    Tasks(Vec<u32>),
    /// Every task on these CPUs (`-a`: every online CPU; `-C`).
    Cpus(Vec<u32>),
}

/// A measurement to make.
#[derive(Debug, Clone)]
pub struct StatPlan {
    /// The events.
    pub events: Vec<StatEvent>,
    /// Whom they count.
    pub scope: StatScope,
    /// The command and its arguments; empty: count until stopped (or the tasks of
    /// [`StatScope::Tasks`] end, or `interval_count` intervals pass).
    pub command: Vec<String>,
    /// How many times to run the command (`-r`); at least 1.
    pub repeat: u32,
    /// Report every interval (`-I`).
    pub interval: Option<Duration>,
    /// Stop after this many intervals (`--interval-count`).
    pub interval_count: Option<u64>,
    /// Counts of several CPUs summed, per CPU or per socket (the last two need
    /// [`StatScope::Cpus`]).
    pub aggr: StatAggr,
    /// Start counting this long after the command starts (`-D`); the elapsed time runs from
    /// then, as perf's.
    pub delay: Option<Duration>,
}

impl StatPlan {
    /// Count `events` over one run of `command` and the tasks it starts, summed, as
    /// `perf stat -e EVENTS -- COMMAND` does: no repeat, no interval, no delay.
    pub fn command<S: Into<String>>(
        events: Vec<StatEvent>,
        command: impl IntoIterator<Item = S>,
    ) -> StatPlan {
        StatPlan {
            events,
            scope: StatScope::Command,
            command: command.into_iter().map(Into::into).collect(),
            repeat: 1,
            interval: None,
            interval_count: None,
            aggr: StatAggr::default(),
            delay: None,
        }
    }
}

/// The rows of one interval.
#[derive(Debug, Clone)]
pub struct IntervalRows {
    /// Seconds since counting began, at the end of the interval.
    pub seconds: f64,
    /// The interval's rows.
    pub rows: Vec<StatRow>,
}

/// What a measurement found.
#[derive(Debug, Clone)]
pub struct StatOutcome {
    /// The events as counted: an event `perf_event_paranoid` kept from the kernel is
    /// counted in user mode only and named with `:u`, as perf does.
    pub events: Vec<StatEvent>,
    /// The places counts are shown for (one, [`RowPlace::All`], unless per CPU or socket).
    pub places: Vec<RowPlace>,
    /// For each place, each event's totals over the runs (`None`: the machine cannot
    /// count it).
    pub totals: Vec<Vec<Option<EventTotals>>>,
    /// How the places were gathered.
    pub aggr: StatAggr,
    /// The wall time of the runs, in nanoseconds.
    pub elapsed_ns: Spread,
    /// The command's user and system CPU time, with one run of a command counted alone
    /// (not with -a, -C or -p, as perf).
    pub user_sys: Option<(Duration, Duration)>,
    /// The last run's exit status as a shell reports it (128 + the signal for a command a
    /// signal ended); 0 without a command.
    pub exit_code: i32,
}

impl StatOutcome {
    /// The rows, as perf prints them after the runs.
    pub fn rows(&self) -> Vec<StatRow> {
        let per_place = self
            .places
            .iter()
            .zip(&self.totals)
            .map(|(&p, t)| rows(&self.events, t, self.elapsed_ns.mean(), p))
            .collect();
        in_perfs_order(per_place, self.aggr)
    }
}

/// Rows of several places in perf's order: event by event with every CPU (`-A`), place by
/// place otherwise.
fn in_perfs_order(per_place: Vec<Vec<StatRow>>, aggr: StatAggr) -> Vec<StatRow> {
    if aggr != StatAggr::PerCpu {
        return per_place.into_iter().flatten().collect();
    }
    let events = per_place.first().map_or(0, Vec::len);
    (0..events)
        .flat_map(|e| per_place.iter().map(move |rows| rows[e].clone()))
        .collect()
}

/// Whether an open failure means the machine cannot count the event (perf's
/// `<not supported>`): no such PMU or event (`ENOENT`, `ENODEV`), or not here
/// (`EOPNOTSUPP`).
fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(2 | 19 | 95))
}

fn denied(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(1 | 13))
}

fn targets(scope: &StatScope, delayed: bool) -> Vec<TaskScope> {
    match scope {
        StatScope::Command => vec![TaskScope::Children { at_exec: !delayed }],
        StatScope::Tasks(p) => p.iter().map(|&p| TaskScope::Task(p)).collect(),
        StatScope::Cpus(c) => c.iter().map(|&c| TaskScope::Cpu(c)).collect(),
    }
}

/// The directory of `ev`'s cgroup (`-G`), opened; counting in a cgroup needs CPUs (`-a`,
/// `-C`), as perf's.
fn cgroup_of(ev: &StatEvent, scope: &StatScope) -> Result<Option<std::fs::File>, StatError> {
    let Some(name) = &ev.cgroup else {
        return Ok(None);
    };
    if !matches!(scope, StatScope::Cpus(_)) {
        return Err(StatError::Usage(
            "-G counts a cgroup's tasks on CPUs: add -a (every CPU) or -C CPUS, as perf \
             requires"
                .into(),
        ));
    }
    crate::perf::cgroup::open(name)
        .map(Some)
        .map_err(|m| StatError::Usage(format!("-G: {m}")))
}

/// One event's counters on every target, or `None` where the machine cannot count it.
type Opened = Vec<Option<Vec<TaskCounter>>>;

/// Opens every event on every target. An event the kernel keeps from the kernel's mode
/// (`perf_event_paranoid`) is retried in user mode and renamed `NAME:u`, as perf retries.
/// On an error, every counter opened so far is closed (dropped).
fn open_all(
    events: &mut [StatEvent],
    scope: &StatScope,
    delayed: bool,
) -> Result<Opened, StatError> {
    let targets = targets(scope, delayed);
    let mut opened = Vec::new();
    for ev in events.iter_mut() {
        let mut counters = Vec::new();
        let mut supported = true;
        let cgroup = cgroup_of(ev, scope)?;
        for &t in &targets {
            let open = |attr: &EventAttr| match (&cgroup, t) {
                (Some(dir), TaskScope::Cpu(cpu)) => TaskCounter::open_in_cgroup(attr, dir, cpu),
                _ => TaskCounter::open(attr, t),
            };
            let c = match open(&ev.attr) {
                Err(e) if denied(&e) && !ev.attr.exclude_kernel => {
                    let user = EventAttr {
                        exclude_kernel: true,
                        ..ev.attr
                    };
                    // Refused in user mode too: the first refusal, under the event's name.
                    open(&user)
                        .inspect(|_| {
                            ev.attr = user;
                            ev.name.push_str(":u");
                        })
                        .map_err(|_| e)
                }
                other => other,
            };
            match c {
                Ok(c) => counters.push(c),
                Err(e) if unsupported(&e) => {
                    supported = false;
                    break;
                }
                Err(e) => {
                    let cpu = match t {
                        TaskScope::Cpu(c) => Some(c),
                        _ => None,
                    };
                    return Err(StatError::Open(classify(e, &ev.name, "perf", cpu, 0)));
                }
            }
        }
        opened.push(supported.then_some(counters));
    }
    Ok(opened)
}

/// Each event's reading on each of its targets.
fn read_all(opened: &mut Opened) -> Result<Vec<Option<Vec<EventReading>>>, StatError> {
    opened
        .iter_mut()
        .map(|o| {
            o.as_mut()
                .map(|cs| {
                    cs.iter_mut()
                        .map(|c| c.read().map_err(StatError::Read))
                        .collect::<Result<Vec<_>, _>>()
                })
                .transpose()
        })
        .collect()
}

/// The exit status as a shell reports it.
pub(super) fn shell_status(s: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code()
        .or_else(|| s.signal().map(|sig| 128 + sig))
        .unwrap_or(1)
}

fn children_times() -> (Duration, Duration) {
    use nix::sys::resource::{getrusage, UsageWho};
    let d = |t: nix::sys::time::TimeVal| {
        Duration::new(
            u64::try_from(t.tv_sec()).unwrap_or(0),
            u32::try_from(t.tv_usec()).unwrap_or(0) * 1000,
        )
    };
    getrusage(UsageWho::RUSAGE_CHILDREN)
        .map(|u| (d(u.user_time()), d(u.system_time())))
        .unwrap_or_default()
}

/// Whether the measurement is over: the command ended (its status), every task of `-p`
/// is gone, or `stop` was set (a command keeps running then: Ctrl-C reaches it on its own).
fn ended(
    child: &mut Option<Child>,
    scope: &StatScope,
    stop: &AtomicBool,
) -> Result<Option<i32>, StatError> {
    if let Some(c) = child {
        return Ok(c.try_wait().map_err(StatError::Read)?.map(shell_status));
    }
    if let StatScope::Tasks(pids) = scope {
        let alive = pids.iter().any(|&p| running(p));
        if !alive {
            return Ok(Some(0));
        }
    }
    Ok(stop.load(Ordering::SeqCst).then_some(0))
}

/// Whether process `pid` exists and has not exited (a zombie, exited but not yet reaped by
/// its parent, counts as ended).
fn running(pid: u32) -> bool {
    let exists = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
    // /proc/PID/stat: `PID (COMM) STATE ...`; the command name may hold spaces and parentheses.
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    exists && !zombie
}

/// Starts the command with this process's terminal (stdin, stdout, stderr); SIGTERM is
/// passed on to it from then ([`super::signals`]).
fn spawn(command: &[String]) -> Result<Child, StatError> {
    let child = super::signals::spawn_unblocked(Command::new(&command[0]).args(&command[1..]))
        .map_err(|source| StatError::Spawn {
            command: command[0].clone(),
            source,
        })?;
    super::signals::counting(Some(child.id()));
    Ok(child)
}

/// How often a running command is looked at between interval reports.
const POLL: Duration = Duration::from_millis(2);

/// Waits for the end (see [`ended`]), reporting every interval: the command's status.
fn wait_loop(
    plan: &StatPlan,
    run: &mut OneRun<'_>,
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalRows),
) -> Result<i32, StatError> {
    let Some(interval) = plan.interval else {
        if let Some(c) = run.child.as_mut() {
            // A blocking wait: the elapsed time is the command's, not a polling step's.
            return c.wait().map(shell_status).map_err(StatError::Read);
        }
        loop {
            if let Some(code) = ended(&mut run.child, &plan.scope, stop)? {
                return Ok(code);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let mut previous = std::mem::take(&mut run.first_reading);
    let mut n: u32 = 0;
    loop {
        let deadline = run.start + interval * (n + 1);
        let end = loop {
            if let Some(code) = ended(&mut run.child, &plan.scope, stop)? {
                break Some(code);
            }
            let now = Instant::now();
            if now >= deadline {
                break None;
            }
            std::thread::sleep((deadline - now).min(POLL));
        };
        let now = read_all(&mut run.opened)?;
        let (a, b) = (
            aggregate(&now, run.groups),
            aggregate(&previous, run.groups),
        );
        let per_place = run
            .groups
            .iter()
            .zip(a.iter().zip(&b))
            .map(|((place, _), (now, before))| {
                let totals: Vec<Option<EventTotals>> = now
                    .iter()
                    .zip(before)
                    .map(|(r, p)| {
                        r.zip(*p).map(|(r, p)| {
                            let mut t = EventTotals::default();
                            t.add(&r.since(&p));
                            t
                        })
                    })
                    .collect();
                rows(run.events, &totals, interval.as_nanos() as f64, *place)
            })
            .collect();
        on_interval(&IntervalRows {
            seconds: run.start.elapsed().as_secs_f64(),
            rows: in_perfs_order(per_place, plan.aggr),
        });
        previous = now;
        n += 1;
        if let Some(code) = end {
            return Ok(code);
        }
        if plan.interval_count.is_some_and(|c| u64::from(n) >= c) {
            return Ok(finish_early(&mut run.child));
        }
    }
}

/// Ends a command still running when the intervals asked for are over (SIGTERM, as perf
/// does), and gives its status.
fn finish_early(child: &mut Option<Child>) -> i32 {
    let Some(c) = child else { return 0 };
    if let Some(pid) = i32::try_from(c.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    c.wait().map_or(1, shell_status)
}

/// One run in progress.
struct OneRun<'e> {
    events: &'e [StatEvent],
    groups: &'e [(RowPlace, Vec<usize>)],
    opened: Opened,
    child: Option<Child>,
    start: Instant,
    /// The counts when `start` was taken, before the command was started: the first
    /// interval's base, so that the time a fork and exec take is inside the interval.
    first_reading: Vec<Option<Vec<EventReading>>>,
}

/// One run's readings, wall time, CPU times and status.
type RunResult = (
    Vec<Vec<Option<EventReading>>>,
    Duration,
    (Duration, Duration),
    i32,
);

fn run_once(
    plan: &StatPlan,
    events: &mut [StatEvent],
    groups: &[(RowPlace, Vec<usize>)],
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalRows),
) -> Result<RunResult, StatError> {
    let mut opened = open_all(events, &plan.scope, plan.delay.is_some())?;
    let before = children_times();
    let spawn_command = || -> Result<Option<Child>, StatError> {
        if plan.command.is_empty() {
            Ok(None)
        } else {
            spawn(&plan.command).map(Some)
        }
    };
    // With -D the command starts first and counting after the delay, and the elapsed time,
    // as perf's, runs from then. Otherwise counting starts first and the command after the
    // first reading, so the time a fork and exec take is inside the first interval.
    let mut child = None;
    if let Some(d) = plan.delay {
        child = spawn_command()?;
        std::thread::sleep(d);
    }
    if plan.scope != StatScope::Command || plan.delay.is_some() {
        for c in opened.iter_mut().flatten().flatten() {
            c.enable().map_err(StatError::Read)?;
        }
    }
    let first_reading = read_all(&mut opened)?;
    let start = Instant::now();
    if plan.delay.is_none() {
        child = spawn_command()?;
    }
    let mut run = OneRun {
        events,
        groups,
        opened,
        child,
        start,
        first_reading,
    };
    let code = wait_loop(plan, &mut run, stop, on_interval);
    let elapsed = start.elapsed();
    super::signals::counting(None);
    // A failure while the command runs still waits for it, so that it is not left behind.
    if let (Err(_), Some(c)) = (&code, run.child.as_mut()) {
        let _ = c.wait();
    }
    let code = code?;
    let readings = aggregate(&read_all(&mut run.opened)?, groups);
    drop(run);
    let after = children_times();
    let times = (
        after.0.saturating_sub(before.0),
        after.1.saturating_sub(before.1),
    );
    Ok((readings, elapsed, times, code))
}

/// The places `plan`'s counts are shown for, each with the targets it sums.
fn places(plan: &StatPlan) -> Result<Vec<(RowPlace, Vec<usize>)>, StatError> {
    let (cpus, targets) = match &plan.scope {
        StatScope::Cpus(c) => (c.as_slice(), c.len()),
        StatScope::Tasks(p) => (&[][..], p.len()),
        StatScope::Command => (&[][..], 1),
    };
    if plan.aggr != StatAggr::Global && cpus.is_empty() {
        return Err(StatError::Usage(
            "-A and --per-socket show CPUs' counts: count CPUs too (-a, or -C CPUS), as perf \
             requires"
                .into(),
        ));
    }
    groups(plan.aggr, cpus, targets).map_err(StatError::Read)
}

/// Makes the measurement `plan` describes: opens the counters, runs the command (`repeat`
/// times) or waits, calls `on_interval` every interval, and closes every counter whatever
/// happens. `stop` ends a measurement without a command (the caller sets it on Ctrl-C).
pub fn measure(
    plan: &StatPlan,
    stop: &AtomicBool,
    mut on_interval: impl FnMut(&IntervalRows),
) -> Result<StatOutcome, StatError> {
    if plan.command.is_empty() && plan.scope == StatScope::Command {
        return Err(StatError::Usage(
            "no command to count: give one after `--`, or count the system (-a), CPUs (-C) \
             or a process (-p)"
                .into(),
        ));
    }
    if plan.repeat == 0 || (plan.repeat > 1 && plan.command.is_empty()) {
        return Err(StatError::Usage(
            "-r N repeats a command: give N of at least 1, and a command after `--`".into(),
        ));
    }
    let groups = places(plan)?;
    let mut events = plan.events.clone();
    let mut totals: Vec<Vec<Option<EventTotals>>> = vec![vec![None; events.len()]; groups.len()];
    let mut elapsed_ns = Spread::default();
    let mut last = ((Duration::ZERO, Duration::ZERO), 0);
    for _ in 0..plan.repeat {
        let (readings, elapsed, times, code) =
            run_once(plan, &mut events, &groups, stop, &mut on_interval)?;
        for (t, r) in totals.iter_mut().flatten().zip(readings.iter().flatten()) {
            if let Some(r) = r {
                t.get_or_insert_with(EventTotals::default).add(r);
            }
        }
        elapsed_ns.add(elapsed.as_nanos() as f64);
        last = (times, code);
        // SIGTERM, passed on to the command, ends the repeats too (perf dies of it).
        if super::signals::terminated() {
            break;
        }
    }
    Ok(StatOutcome {
        events,
        places: groups.into_iter().map(|(p, _)| p).collect(),
        totals,
        aggr: plan.aggr,
        elapsed_ns,
        // As perf: only for one run with no other target than the command (its
        // `target__none`); with -a, -C or -p the times would not be the counted tasks'.
        user_sys: (plan.repeat == 1 && plan.scope == StatScope::Command).then_some(last.0),
        exit_code: last.1,
    })
}

/// Every online CPU (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> Result<Vec<u32>, StatError> {
    let path = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(path).map_err(StatError::Read)?;
    crate::perf::format::parse_cpu_list(&text)
        .map_err(|e| StatError::Read(io::Error::other(format!("{path}: {e}"))))
}

/// The scope perf's options ask for: `-C CPUS`, `-p PIDS` (comma-separated), `-a`, or
/// without any of them the command, or the whole system if there is none (as perf does).
/// Also whether it is the whole system (perf's header then says `system wide`).
pub fn scope_of(
    all_cpus: bool,
    cpus: Option<&str>,
    pids: Option<&str>,
    has_command: bool,
) -> Result<(StatScope, bool), StatError> {
    if let Some(list) = cpus {
        let cpus = crate::perf::format::parse_cpu_list(list)
            .map_err(|e| StatError::Usage(format!("-C {list}: {e}; write e.g. 0-3,8")))?;
        if cpus.is_empty() {
            return Err(StatError::Usage(format!("-C {list}: no CPU named")));
        }
        return Ok((StatScope::Cpus(cpus), false));
    }
    if let Some(list) = pids {
        let pids = list
            .split(',')
            .map(|p| p.trim().parse::<u32>())
            .collect::<Result<Vec<u32>, _>>()
            .map_err(|_| {
                StatError::Usage(format!("-p {list}: a process id is a number (-p 42,43)"))
            })?;
        return Ok((StatScope::Tasks(pids), false));
    }
    if all_cpus || !has_command {
        return Ok((StatScope::Cpus(online_cpus()?), true));
    }
    Ok((StatScope::Command, false))
}
