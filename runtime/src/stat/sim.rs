//! `pmu stat --sim`: a metric plan counted on a simulated machine for a command's lifetime.
//! The command runs for real (with this process's terminal); the simulated processor runs a
//! named workload ([`crate::machine::WORKLOADS`]) meanwhile, on the wall clock, so that a
//! metric's value is the workload's whatever the command's length.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pmu_regs::metrics::Constants;
use pmu_regs::ProcessorInfo;

use crate::constants::PartConstants;
use crate::machine::{Machine, NamedWorkload};
use crate::metrics::Plan;
use crate::perf::sysfs::EventSources;
use crate::session::{
    Clock, Interval, Options, Pace, Route, SeriesInfo, Session, SessionBackend, Sockets, TURN,
};

use super::StatError;

/// What a plan counted on the simulator over a command's run.
#[derive(Debug, Clone)]
pub struct SimCounts {
    /// The simulated processor.
    pub processor: &'static ProcessorInfo,
    /// What it ran.
    pub workload: &'static NamedWorkload,
    /// What each counted series is.
    pub series: Vec<SeriesInfo>,
    /// The counts over the command's run.
    pub interval: Interval,
    /// The part's constants (sockets, CPUs, TSC frequency), with the run's length.
    pub constants: Constants,
    /// The command's exit status as a shell reports it (128 + the signal that ended it).
    pub exit_code: i32,
    /// The reading's end, since counting began (the command's length for one reading).
    pub ends_at: Duration,
}

/// A session error as a measurement's.
fn session_error(e: crate::Error) -> StatError {
    match e {
        crate::Error::Usage(u) => StatError::Usage(u.to_string()),
        other => StatError::Read(std::io::Error::other(other.to_string())),
    }
}

/// Counts `plan` on every socket (and, for core events, every CPU) of a simulator of
/// `processor` running `workload` for as long as `command` runs (without a command, until
/// `stop` is set: the caller sets it on Ctrl-C). The simulated machine's counts do not
/// depend on the command, so the session first opens once to refuse what cannot be counted
/// before the command starts, and counts after it ended on the simulator's own clock for the
/// time it took: one reading of exactly that length, each turn (more events than counters)
/// ending on time, the same values as `watch --sim`. Everything programmed is put back
/// whatever happens.
pub fn count_on_sim(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    plan: &Plan,
    command: &[String],
    stop: &AtomicBool,
) -> Result<SimCounts, StatError> {
    let mut readings = count_on_sim_every(processor, workload, plan, command, stop, None)?;
    Ok(readings.pop().expect("one reading at least"))
}

/// The readings' lengths over `length`: one of it all (`every` `None`), or as many whole
/// `every` as fit and the rest (perf's last, partial interval), each as (length, how many).
fn steps(length: Duration, every: Option<Duration>) -> Vec<(Duration, u32)> {
    let Some(every) = every.filter(|e| !e.is_zero()) else {
        return vec![(length, 1)];
    };
    let whole = u32::try_from(length.as_nanos() / every.as_nanos()).unwrap_or(u32::MAX);
    let rest = length.saturating_sub(every * whole);
    let mut out = Vec::new();
    if whole > 0 {
        out.push((every, whole));
    }
    if rest >= Duration::from_micros(1) || out.is_empty() {
        out.push((rest.max(Duration::from_micros(1)), 1));
    }
    out
}

/// As [`count_on_sim`], with a reading every `every` of the command's run (`pmu stat --sim
/// -I`), the last one the rest; `None`: one reading. Each reading's
/// [`SimCounts::ends_at`] is its end since counting began.
pub fn count_on_sim_every(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    plan: &Plan,
    command: &[String],
    stop: &AtomicBool,
    every: Option<Duration>,
) -> Result<Vec<SimCounts>, StatError> {
    let machine = Machine::simulating(processor);
    let part = PartConstants::read(&machine, processor, &PathBuf::from("/"));
    let selection = plan
        .selection()
        .map_err(|e| StatError::Usage(e.to_string()))?
        .on(Sockets::All)
        .on_every_cpu(true);
    let backend = SessionBackend::new(&machine, Route::Raw, EventSources::default());
    let options = |length: Duration| Options {
        clock: Clock::Steps(length),
        pace: Pace::Workload(workload),
        topdown: !plan.topdown.is_empty(),
        // Every turn gets its share of even a short command.
        turn: TURN.min(length / 16).max(Duration::from_micros(1)),
        ..Options::default()
    };
    Session::open(&backend, &selection, options(TURN))
        .and_then(Session::close)
        .map_err(session_error)?;
    let started = Instant::now();
    let status = run(command, stop)?;
    let length = started.elapsed().max(Duration::from_micros(1));
    let mut out = Vec::new();
    let mut ends_at = Duration::ZERO;
    for (step, n) in steps(length, every) {
        let mut session =
            Session::open(&backend, &selection, options(step)).map_err(session_error)?;
        let readings = session
            .start()
            .and_then(|()| {
                (0..n)
                    .map(|_| session.interval())
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(session_error);
        let series = session.series().to_vec();
        let closed = session.close().map_err(session_error);
        let readings = readings?;
        closed?;
        for interval in readings {
            ends_at += step;
            out.push(SimCounts {
                processor,
                workload,
                series: series.clone(),
                constants: Constants {
                    duration_seconds: Some(interval.seconds),
                    ..part.constants()
                },
                interval,
                exit_code: status,
                ends_at,
            });
        }
    }
    Ok(out)
}

/// Runs `command` to its end (none: waits for `stop`): its status as a shell reports it.
fn run(command: &[String], stop: &AtomicBool) -> Result<i32, StatError> {
    if command.is_empty() {
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
        return Ok(0);
    }
    let mut child = super::signals::spawn_unblocked(Command::new(&command[0]).args(&command[1..]))
        .map_err(|source| StatError::Spawn {
            command: command[0].clone(),
            source,
        })?;
    super::signals::counting(Some(child.id()));
    let status = child.wait().map_err(StatError::Read);
    super::signals::counting(None);
    Ok(super::run::shell_status(status?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_whole_then_the_rest() {
        let ms = Duration::from_millis;
        assert_eq!(steps(ms(350), Some(ms(100))), [(ms(100), 3), (ms(50), 1)]);
        assert_eq!(steps(ms(300), Some(ms(100))), [(ms(100), 3)]);
        assert_eq!(steps(ms(30), Some(ms(100))), [(ms(30), 1)]);
        assert_eq!(steps(ms(30), None), [(ms(30), 1)]);
    }
}
