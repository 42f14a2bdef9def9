//! `pmu watch`: program counters, print their counts every interval, and put everything back
//! as it was on exit (including Ctrl-C).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use pmu_runtime::codec::parse_number;
use pmu_runtime::machine::Machine;
use pmu_runtime::sampling::delta;
use pmu_runtime::sampling::e5::{E5Box, E5EventSelect};
use pmu_runtime::sampling::rolled_back;
use pmu_runtime::sampling::uncore::{EventSelect, Uncore, UncoreCounter};
use pmu_runtime::sim::{PciEvent, UncoreEvent};
use pmu_runtime::{Error, UsageError};
use serde_json::json;

use crate::{Failure, PlaceArgs};

#[derive(Args)]
pub struct WatchArgs {
    /// The box: a Xeon 7500 box (U, W, S0, S1, B0, B1, C0-C7, M0, M1, R) or an E5-2600 box
    /// (HA, P0, P1).
    #[arg(long, required_unless_present = "pmu")]
    unit: Option<String>,
    /// An event for the next free counter: `ev_sel=0x..`, optionally followed by `,umask=0x..`,
    /// `,thresh=N`, `,invert=1`, `,edge=1`.
    /// Repeat for more counters.
    #[arg(long = "event", required = true)]
    events: Vec<String>,
    /// Seconds between reports.
    #[arg(long, default_value_t = 1.0)]
    interval: f64,
    /// Stop after this many reports (default: until Ctrl-C).
    #[arg(long)]
    count: Option<u64>,
    #[command(flatten)]
    place: PlaceArgs,
    #[command(flatten)]
    perf: crate::perf_cli::PerfWatchArgs,
}

/// One parsed `--event`.
#[derive(Debug, Clone, Copy, Default)]
struct Spec {
    ev_sel: u8,
    umask: Option<u8>,
    thresh: Option<u8>,
    invert: Option<bool>,
    edge: Option<bool>,
    text_index: usize,
}

fn byte(key: &str, v: &str) -> Result<u8, UsageError> {
    let n = parse_number(v)?;
    u8::try_from(n).map_err(|_| UsageError::BadValue {
        text: format!("{key}={v}"),
        expected: format!("{key} from 0 to 0xff"),
    })
}

fn flag(key: &str, v: &str) -> Result<bool, UsageError> {
    match v {
        "0" | "false" => Ok(false),
        "1" | "true" => Ok(true),
        _ => Err(UsageError::BadValue {
            text: format!("{key}={v}"),
            expected: format!("{key}=0 or {key}=1"),
        }),
    }
}

fn parse_event(text: &str, text_index: usize) -> Result<Spec, UsageError> {
    let mut spec = Spec {
        text_index,
        ..Spec::default()
    };
    let mut has_sel = false;
    for part in text.split(',') {
        let (k, v) = part.split_once('=').ok_or_else(|| UsageError::BadValue {
            text: part.to_string(),
            expected: "key=value in --event, e.g. ev_sel=0x01,umask=0x04".into(),
        })?;
        match k.trim() {
            "ev_sel" | "event" => {
                spec.ev_sel = byte(k, v)?;
                has_sel = true;
            }
            "umask" => spec.umask = Some(byte(k, v)?),
            "thresh" => spec.thresh = Some(byte(k, v)?),
            "invert" => spec.invert = Some(flag(k, v)?),
            "edge" => spec.edge = Some(flag(k, v)?),
            other => {
                return Err(UsageError::BadValue {
                    text: other.to_string(),
                    expected: "one of ev_sel, umask, thresh, invert, edge in --event".into(),
                })
            }
        }
    }
    if !has_sel {
        return Err(UsageError::BadValue {
            text: text.to_string(),
            expected: "an ev_sel=... in every --event".into(),
        });
    }
    Ok(spec)
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
    fn program(machine: &'a Machine, args: &WatchArgs, specs: &[Spec]) -> Result<Self, Error> {
        let unit = args
            .unit
            .as_deref()
            .unwrap_or_default()
            .to_ascii_uppercase();
        let socket = args.place.socket.unwrap_or(0);
        if let Some(instance) = UNCORE_BOXES.iter().copied().find(|b| *b == unit) {
            let cpu = match args.place.cpu {
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
                    text: args.unit.clone().unwrap_or_default(),
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
                        ev_sel_ext: false,
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

/// `1234567` -> `1,234,567`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Runs `pmu watch`. Output goes to stdout as it happens; the returned text is empty.
pub fn run(args: &WatchArgs, json_out: bool) -> Result<String, Failure> {
    if !(args.interval >= 0.0 && args.interval.is_finite()) {
        return Err(UsageError::BadValue {
            text: args.interval.to_string(),
            expected: "--interval in seconds, 0 or more".into(),
        }
        .into());
    }
    let perf = crate::perf_cli::watch(&crate::perf_cli::WatchRequest {
        unit: args.unit.as_deref(),
        events: &args.events,
        perf: &args.perf,
        root: args.place.root.as_deref(),
        sim: args.place.sim,
        socket: args.place.socket,
        cpu: args.place.cpu,
        interval: args.interval,
        count: args.count,
        json: json_out,
    })?;
    if let Some(out) = perf {
        return Ok(out);
    }
    let specs: Vec<Spec> = args
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| parse_event(e, i))
        .collect::<Result<_, _>>()?;
    let machine = args.place.machine()?;
    let watched = Watched::program(&machine, args, &specs)?;

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        // A second watch in the same process (tests) cannot install a handler again; the
        // first one's flag is not this one, so Ctrl-C then ends the process, which is fine.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }

    let result = watch_loop(&machine, &watched, args, &specs, &stop, json_out);
    // Disable what was enabled, whatever happened, and report both failures if both fail.
    match (result, watched.restore()) {
        (result, Ok(())) => result.map(|()| String::new()),
        (Err(failure), Err(cleanup)) => Err(Error::Cleanup {
            error: Box::new(failure.error),
            cleanup: Box::new(cleanup),
        }
        .into()),
        (Ok(()), Err(e)) => Err(Error::RestoreFailed(Box::new(e)).into()),
    }
}

fn watch_loop(
    machine: &Machine,
    watched: &Watched<'_>,
    args: &WatchArgs,
    specs: &[Spec],
    stop: &AtomicBool,
    json_out: bool,
) -> Result<(), Failure> {
    let names = watched.names(specs.len());
    let socket = args.place.socket.unwrap_or(0) as usize;
    let mut previous = watched.read(specs.len())?;
    let start = Instant::now();
    let period = Duration::from_secs_f64(args.interval);
    // Fixed columns, so every interval lines up with the header (as `perf stat -I` does).
    let counter_w = names.iter().map(String::len).max().unwrap_or(7).max(7);
    let event_w = args
        .events
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(5)
        .max(5);
    if !json_out {
        println!(
            "{:>10}  {:<counter_w$}  {:<event_w$}  {:>15}",
            "# time", "counter", "event", "count"
        );
    }
    let mut report = 0u64;
    while args.count.is_none_or(|c| report < c) && !stop.load(Ordering::SeqCst) {
        report += 1;
        // Sleep in short steps so Ctrl-C is noticed promptly.
        let deadline = Instant::now() + period;
        while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
            std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
        }
        watched.simulate(machine, socket, specs, report)?;
        let now = watched.read(specs.len())?;
        // Time is simulated (interval x report) with --sim, so output is reproducible.
        let t = if machine.sim().is_some() {
            args.interval * report as f64
        } else {
            start.elapsed().as_secs_f64()
        };
        let mut counts = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let d = delta(previous[i], now[i], 48);
            let event = &args.events[spec.text_index];
            if json_out {
                counts.push(json!({"counter": names[i], "event": event, "count": d}));
            } else {
                println!(
                    "{t:>10.3}  {:<counter_w$}  {event:<event_w$}  {:>15}",
                    names[i],
                    thousands(d)
                );
            }
        }
        if json_out {
            println!("{}", json!({"time": t, "counts": counts}));
        }
        previous = now;
    }
    Ok(())
}
