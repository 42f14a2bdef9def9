//! `pmu watch`: program counters, print their counts every interval, and put everything back
//! as it was on exit (including Ctrl-C).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::io;
use std::path::PathBuf;

use clap::Args;
use pmu_runtime::machine::Machine;
use pmu_runtime::sampling::delta;
use pmu_runtime::sampling::e5::{E5Box, E5EventSelect};
use pmu_runtime::sampling::rolled_back;
use pmu_runtime::sampling::uncore::{EventSelect, Uncore, UncoreCounter};
use pmu_runtime::sim::{PciEvent, UncoreEvent};
use pmu_runtime::{Error, UsageError};

use crate::output::{Format, Output, Row};
use crate::watch_events;
use crate::{Failure, PlaceArgs};

#[derive(Args)]
pub struct WatchArgs {
    /// The box: a Xeon 7500 box (U, W, S0, S1, B0, B1, C0-C7, M0, M1, R) or an E5-2600 box
    /// (HA, P0, P1). Repeat for more boxes (--unit C0 --unit C1).
    #[arg(long, required = true)]
    pub unit: Vec<String>,
    /// An event for the next free counter of each box, in encode's grammar: event=NAME (from
    /// `pmu list --events`) or ev_sel=N, then optionally ,umask=N ,thresh=N ,invert=lt|ge|0|1
    /// ,edge=1. Repeat for more counters.
    #[arg(long = "event", required = true)]
    events: Vec<String>,
    /// Seconds between reports, from 0.01 to 86400.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    interval: f64,
    /// Stop after this many reports (1 or more; default: until Ctrl-C).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Watch the boxes on every socket (a row per socket), like `perf stat -a`.
    #[arg(short = 'a', long = "all-sockets", conflicts_with_all = ["socket", "cpu", "device"])]
    all_sockets: bool,
    /// Sum each event over the boxes of a socket, like `perf stat --per-socket`.
    #[arg(long)]
    per_socket: bool,
    /// CSV with this separator instead of the table (like `perf stat -x,`): time, socket,
    /// counter, event, count, rate.
    #[arg(
        short = 'x',
        long = "field-separator",
        value_name = "SEP",
        conflicts_with = "json"
    )]
    separator: Option<String>,
    /// Write the report to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// One parsed `--event`, for one box.
#[derive(Debug, Clone, Copy)]
struct Spec {
    ev_sel: u8,
    ev_sel_ext: bool,
    umask: Option<u8>,
    thresh: Option<u8>,
    invert: Option<bool>,
    edge: Option<bool>,
    text_index: usize,
}

fn parse_events(unit: &str, events: &[String]) -> Result<Vec<Spec>, Failure> {
    let Some(info) = watch_events::control_register(unit) else {
        return Err(Failure::usage(format!(
            "there is no box {unit}; watch takes {}, HA, P0 or P1",
            UNCORE_BOXES.join(", ")
        )));
    };
    events
        .iter()
        .enumerate()
        .map(|(text_index, text)| {
            let s = watch_events::parse(info, text)?;
            Ok(Spec {
                ev_sel: s.ev_sel,
                ev_sel_ext: s.ev_sel_ext,
                umask: s.umask,
                thresh: s.thresh,
                invert: s.invert,
                edge: s.edge,
                text_index,
            })
        })
        .collect()
}

/// The counters being watched, on either family.
enum Watched<'a> {
    Uncore {
        uncore: Uncore<'a, Machine>,
        counters: Vec<UncoreCounter>,
        saved: pmu_runtime::sampling::uncore::Saved,
    },
    E5 {
        e5: E5Box<'a, Machine>,
        saved: Vec<(usize, u64)>,
    },
}

/// The processor whose PCI boxes `watch` knows.
static E5_2600: &pmu_regs::ProcessorInfo = &pmu_regs::xeon_e5_2600::PROCESSOR;

const UNCORE_BOXES: [&str; 17] = [
    "U", "W", "S0", "S1", "B0", "B1", "C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "M0", "M1",
    "R",
];

impl<'a> Watched<'a> {
    fn program(
        machine: &'a Machine,
        unit: &str,
        socket: u32,
        cpu: Option<u32>,
        specs: &[Spec],
    ) -> Result<Self, Error> {
        let unit = unit.to_ascii_uppercase();
        if let Some(instance) = UNCORE_BOXES.iter().copied().find(|b| *b == unit) {
            let cpu = match cpu {
                Some(c) => c,
                None => machine.topology()?.cpu_for_socket(socket)?,
            };
            let uncore = Uncore::new(machine, cpu, socket as usize);
            let counters: Vec<UncoreCounter> = (0..specs.len() as u32)
                .map(|i| UncoreCounter::new(instance, i))
                .collect();
            let saved = uncore.save(&counters)?;
            // Never leave the uncore half-programmed: on a failure, put back what was saved
            // (and say so if that fails too).
            let program = || -> Result<(), Error> {
                counters.iter().zip(specs).try_for_each(|(c, s)| {
                    uncore.configure(
                        *c,
                        &EventSelect {
                            ev_sel: s.ev_sel,
                            umask: s.umask,
                            thresh: s.thresh,
                            invert: s.invert,
                            edge_detect: s.edge,
                        },
                    )
                })?;
                uncore.start()
            };
            rolled_back(program, || uncore.restore(&saved))?;
            return Ok(Watched::Uncore {
                uncore,
                counters,
                saved,
            });
        }
        let devices = machine.devices(E5_2600)?;
        let e5 = match unit.as_str() {
            "HA" => E5Box::ha(machine, &devices, socket as usize)?,
            "P0" | "QPI0" => E5Box::qpi(machine, &devices, socket as usize, 0)?,
            "P1" | "QPI1" => E5Box::qpi(machine, &devices, socket as usize, 1)?,
            _ => {
                return Err(UsageError::BadValue {
                    text: unit.clone(),
                    expected: format!("a box: {}, HA, P0 or P1", UNCORE_BOXES.join(", ")),
                }
                .into())
            }
        };
        let indices: Vec<usize> = (0..specs.len()).collect();
        let saved = e5.save(&indices)?;
        let program = || {
            indices.iter().zip(specs).try_for_each(|(&i, s)| {
                e5.configure(
                    i,
                    &E5EventSelect {
                        ev_sel: s.ev_sel,
                        umask: s.umask.unwrap_or(0),
                        thresh: s.thresh.unwrap_or(0),
                        invert: s.invert.unwrap_or(false),
                        edge_det: s.edge.unwrap_or(false),
                        ev_sel_ext: s.ev_sel_ext,
                    },
                )
            })
        };
        rolled_back(program, || e5.restore(&saved))?;
        Ok(Watched::E5 { e5, saved })
    }

    fn names(&self, n: usize) -> Vec<String> {
        match self {
            Watched::Uncore { counters, .. } => counters.iter().map(|c| c.to_string()).collect(),
            Watched::E5 { e5, .. } => (0..n)
                .map(|i| {
                    e5.counter_name(i)
                        .map_or_else(|| format!("{} counter {i}", e5.instance()), str::to_string)
                })
                .collect(),
        }
    }

    fn read(&self, n: usize) -> Result<Vec<u64>, Error> {
        match self {
            Watched::Uncore {
                uncore, counters, ..
            } => counters.iter().map(|c| uncore.read_counter(*c)).collect(),
            Watched::E5 { e5, .. } => (0..n).map(|i| e5.read_counter(i)).collect(),
        }
    }

    fn restore(&self) -> Result<(), Error> {
        match self {
            Watched::Uncore { uncore, saved, .. } => uncore.restore(saved),
            Watched::E5 { e5, saved } => e5.restore(saved),
        }
    }

    /// With `--sim`, feeds each watched event a deterministic number of events.
    fn simulate(
        &self,
        machine: &Machine,
        socket: usize,
        specs: &[Spec],
        interval: u64,
    ) -> Result<(), Error> {
        let Some(sim) = machine.sim() else {
            return Ok(());
        };
        for s in specs {
            let count = 1000 * (s.text_index as u64 + 1) + 37 * interval;
            match self {
                Watched::Uncore { counters, .. } => sim.inject_uncore(
                    socket,
                    UncoreEvent {
                        instance: counters[0].instance,
                        ev_sel: s.ev_sel,
                        umask: s.umask,
                    },
                    count,
                )?,
                Watched::E5 { e5, .. } => sim.inject_pci(
                    socket,
                    PciEvent {
                        instance: e5.instance(),
                        ev_sel: s.ev_sel,
                        umask: s.umask,
                    },
                    count,
                )?,
            }
        }
        Ok(())
    }
}

/// One box on one socket, programmed.
struct Target<'a> {
    socket: u32,
    specs: Vec<Spec>,
    watched: Watched<'a>,
}

/// The longest and shortest interval `watch` accepts, in seconds.
const INTERVAL: (f64, f64) = (0.01, 86400.0);

/// Runs `pmu watch`. Output goes out as it happens; the returned text is empty. Everything
/// the command line can get wrong is refused before the first register is touched.
pub fn run(args: &WatchArgs, json_out: bool) -> Result<String, Failure> {
    if !(INTERVAL.0..=INTERVAL.1).contains(&args.interval) {
        return Err(Failure::usage(format!(
            "--interval {} is out of range: give seconds from {} to {}",
            args.interval, INTERVAL.0, INTERVAL.1
        )));
    }
    let mut specs = Vec::new();
    for unit in &args.unit {
        if args
            .unit
            .iter()
            .filter(|u| u.eq_ignore_ascii_case(unit))
            .count()
            > 1
        {
            return Err(Failure::usage(format!(
                "--unit {unit} is given twice; give each box once"
            )));
        }
        let parsed = parse_events(unit, &args.events)?;
        let info = watch_events::control_register(unit).expect("parse_events found it");
        if watch_events::is_pci(info) && args.place.cpu.is_some() {
            return Err(Failure::usage(format!(
                "--cpu does not apply to {unit}: its registers are in PCI configuration space; \
                 choose it with --socket or --device"
            )));
        }
        specs.push((unit.clone(), parsed));
    }
    let format = match (&args.separator, json_out) {
        (Some(sep), _) if sep.is_empty() => {
            return Err(Failure::usage(
                "-x needs a separator, such as -x, or -x';'".to_string(),
            ))
        }
        (Some(sep), _) => Format::Separated(sep.clone()),
        (None, true) => Format::JsonLines,
        (None, false) => Format::Table {
            counter_w: 18,
            event_w: args
                .events
                .iter()
                .map(String::len)
                .max()
                .unwrap_or(5)
                .max(5),
        },
    };
    let mut out = Output::new(format, args.output.as_deref()).map_err(|e| {
        Failure::operation(format!(
            "cannot write {}: {e}; choose a file in a writable directory",
            args.output
                .as_deref()
                .unwrap_or("stdout".as_ref())
                .display()
        ))
    })?;
    let machine = args.place.machine()?;
    let sockets: Vec<u32> = if args.all_sockets {
        machine.topology()?.sockets().collect()
    } else {
        vec![args.place.socket.unwrap_or(0)]
    };
    let mut targets: Vec<Target> = Vec::new();
    for &socket in &sockets {
        for (unit, specs) in &specs {
            match Watched::program(&machine, unit, socket, args.place.cpu, specs) {
                Ok(watched) => targets.push(Target {
                    socket,
                    specs: specs.clone(),
                    watched,
                }),
                Err(e) => {
                    // This box rolled itself back; put back the ones before it too.
                    return Err(match restore_all(&targets) {
                        Ok(()) => e.into(),
                        Err(cleanup) => Error::Cleanup {
                            error: Box::new(e),
                            cleanup: Box::new(cleanup),
                        }
                        .into(),
                    });
                }
            }
        }
    }

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        // A second watch in the same process (tests) cannot install a handler again; the
        // first one's flag is not this one, so Ctrl-C then ends the process, which is fine.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }

    // A panic from here on unwinds through this guard, which puts the registers back too.
    let guard = RestoreOnPanic(&targets);
    let result = watch_loop(&machine, &targets, args, &stop, &mut out);
    drop(guard);
    // Disable what was enabled, whatever happened, and report both failures if both fail.
    match (result, restore_all(&targets)) {
        (result, Ok(())) => result.map(|()| String::new()),
        (Err(failure), Err(cleanup)) => Err(failure.with_cleanup(cleanup)),
        (Ok(()), Err(e)) => Err(Failure::operation(format!(
            "counting finished, but restoring the registers failed: {e}; check them with `pmu read`"
        ))),
    }
}

/// Puts every target back if dropped while panicking (the normal ways out restore explicitly,
/// to report a failure).
struct RestoreOnPanic<'t, 'a>(&'t [Target<'a>]);

impl Drop for RestoreOnPanic<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = restore_all(self.0);
        }
    }
}

/// Restores every target, last first; the first failure is returned after trying them all.
fn restore_all(targets: &[Target]) -> Result<(), Error> {
    let mut first = None;
    for t in targets.iter().rev() {
        if let Err(e) = t.watched.restore() {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

fn watch_loop(
    machine: &Machine,
    targets: &[Target],
    args: &WatchArgs,
    stop: &AtomicBool,
    out: &mut Output,
) -> Result<(), Failure> {
    let mut previous: Vec<Vec<u64>> = targets
        .iter()
        .map(|t| t.watched.read(t.specs.len()))
        .collect::<Result<_, _>>()?;
    let names: Vec<Vec<String>> = targets
        .iter()
        .map(|t| t.watched.names(t.specs.len()))
        .collect();
    let start = Instant::now();
    let mut last = start;
    let period = Duration::from_secs_f64(args.interval);
    if let Err(e) = out.header() {
        return quiet_if_closed(e);
    }
    let mut report = 0u64;
    while args.count.is_none_or(|c| report < c) && !stop.load(Ordering::SeqCst) {
        report += 1;
        // Sleep in short steps so Ctrl-C is noticed promptly.
        let deadline = Instant::now() + period;
        while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
            std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
        }
        let mut now = Vec::new();
        for t in targets {
            t.watched
                .simulate(machine, t.socket as usize, &t.specs, report)?;
            now.push(t.watched.read(t.specs.len())?);
        }
        // Time is simulated (interval x report) with --sim, so output is reproducible.
        let (t, seconds) = if machine.sim().is_some() {
            (args.interval * report as f64, args.interval)
        } else {
            let s = last.elapsed().as_secs_f64();
            last = Instant::now();
            (start.elapsed().as_secs_f64(), s)
        };
        // (socket, counter label, event index, count), in target order.
        let mut rows: Vec<(u32, String, usize, u64)> = Vec::new();
        for (k, target) in targets.iter().enumerate() {
            for (i, spec) in target.specs.iter().enumerate() {
                let d = delta(previous[k][i], now[k][i], 48);
                let label = if args.per_socket {
                    args.unit.join("+")
                } else {
                    names[k][i].clone()
                };
                match rows
                    .iter_mut()
                    .find(|r| args.per_socket && r.0 == target.socket && r.2 == spec.text_index)
                {
                    Some(r) => r.3 += d,
                    None => rows.push((target.socket, label, spec.text_index, d)),
                }
            }
        }
        let written = rows
            .iter()
            .try_for_each(|(socket, counter, event, count)| {
                out.row(&Row {
                    time: t,
                    socket: *socket,
                    counter,
                    event: &args.events[*event],
                    count: *count,
                    rate: *count as f64 / seconds.max(f64::MIN_POSITIVE),
                })
            })
            .and_then(|()| out.end_interval(t));
        if let Err(e) = written {
            return quiet_if_closed(e);
        }
        previous = now;
    }
    Ok(())
}

/// A reader that went away (`watch ... | head`) ends the watch normally; other write errors
/// are failures.
fn quiet_if_closed(e: io::Error) -> Result<(), Failure> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(Failure::operation(format!("cannot write the report: {e}")))
    }
}
