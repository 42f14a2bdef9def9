//! `pmu watch`: program counters, print their counts every interval, and put everything back
//! as it was on exit (including Ctrl-C).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use pmu_regs::{Location, Scope, PROCESSORS};
use pmu_runtime::boxes::{Boxes, PmuBox};
use pmu_runtime::codec::parse_number;
use pmu_runtime::machine::Machine;
use pmu_runtime::sampling::counting::Counting;
use pmu_runtime::sampling::delta;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::sim::UncoreEvent;
use pmu_runtime::{Error, UsageError};
use serde_json::json;

use crate::{Failure, PlaceArgs};

#[derive(Args)]
pub struct WatchArgs {
    /// The box: an instance (C3, CH2, HA, P0), a unit with the instance's position (CBO3,
    /// IMC2, QPI1) or a one-box unit (PCU, CORE); prefix the processor where two share the
    /// name (xeon-7500:C3). `pmu list --summary` lists the units.
    #[arg(long)]
    unit: String,
    /// An event for the next free counter: `ev_sel=0x..`, optionally followed by `,umask=0x..`,
    /// `,thresh=N`, `,invert=1`, `,edge=1`, `,ext=1` (the event-select extension bit).
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
}

/// One parsed `--event`.
#[derive(Debug, Clone, Copy, Default)]
struct Spec {
    ev_sel: u8,
    umask: Option<u8>,
    thresh: Option<u8>,
    invert: Option<bool>,
    edge: Option<bool>,
    ext: Option<bool>,
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
            "ext" => spec.ext = Some(flag(k, v)?),
            other => {
                return Err(UsageError::BadValue {
                    text: other.to_string(),
                    expected: "one of ev_sel, umask, thresh, invert, edge, ext in --event".into(),
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

/// The box `--unit` names: an instance (`C3`, `CH2`, `HA`), a unit with the instance's
/// position (`CBO3`, `IMC2`), or a single-instance unit (`PCU`, `CORE`); a name two
/// processors share takes the processor as a prefix (`xeon-7500:C3`).
fn find_box(unit: &str) -> Result<(&'static Boxes, &'static PmuBox), UsageError> {
    let (prefix, name) = match unit.split_once(':') {
        Some((p, n)) => (Some(p), n),
        None => (None, unit),
    };
    let found: Vec<(&'static Boxes, &'static PmuBox)> = PROCESSORS
        .iter()
        .filter(|p| prefix.is_none_or(|x| p.id.eq_ignore_ascii_case(x)))
        .map(|p| Boxes::of(p))
        .filter_map(|b| b.find(name).map(|x| (b, x)))
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(UsageError::BadValue {
            text: unit.to_string(),
            expected: format!(
                "a box: {}",
                PROCESSORS
                    .iter()
                    .map(|p| format!("{} ({})", p.id, Boxes::of(p).names().join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }),
        several => Err(UsageError::BadValue {
            text: unit.to_string(),
            expected: format!(
                "one box; several processors have it, so prefix one: {}",
                several
                    .iter()
                    .map(|(b, _)| format!("{}:{name}", b.processor.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// The counters being watched.
struct Watched<'a> {
    counting: Counting<'a, Machine>,
    counters: Vec<u32>,
    cpu: u32,
    socket: usize,
}

impl<'a> Watched<'a> {
    fn program(
        machine: &'a Machine,
        boxes: &'static Boxes,
        pmu_box: &'static PmuBox,
        args: &WatchArgs,
        specs: &[Spec],
    ) -> Result<Self, Error> {
        let socket = args.place.socket.unwrap_or(0);
        let cpu = match (args.place.cpu, pmu_box.scope()) {
            (Some(c), _) => c,
            (None, Scope::Cpu) if args.place.socket.is_none() => 0,
            (None, _) => machine.cpu_for_socket(socket)?,
        };
        let in_pci = pmu_box
            .counters
            .iter()
            .any(|c| matches!(c.counter.addr.location, Location::Pci { .. }));
        let devices = if in_pci {
            Some(machine.devices(boxes.processor)?)
        } else {
            None
        };
        let mut counting = Counting::open(machine, boxes, pmu_box, cpu, socket as usize, devices)?;
        let sels: Vec<EventSelect> = specs
            .iter()
            .map(|s| EventSelect {
                ev_sel: s.ev_sel,
                umask: s.umask,
                thresh: s.thresh,
                invert: s.invert,
                edge_detect: s.edge,
                event_ext: s.ext,
            })
            .collect();
        let counters = counting.program(&sels)?;
        Ok(Watched {
            counting,
            counters,
            cpu,
            socket: socket as usize,
        })
    }

    fn names(&self) -> Result<Vec<String>, Error> {
        self.counters
            .iter()
            .map(|n| Ok(self.counting.counter_name(*n)?.to_string()))
            .collect()
    }

    fn read(&self) -> Result<Vec<u64>, Error> {
        self.counters
            .iter()
            .map(|n| self.counting.read_counter(*n))
            .collect()
    }

    fn widths(&self) -> Result<Vec<u32>, Error> {
        self.counters
            .iter()
            .map(|n| self.counting.counter_width(*n))
            .collect()
    }

    /// With `--sim`, feeds each watched event a deterministic number of events.
    fn simulate(&self, machine: &Machine, specs: &[Spec], interval: u64) -> Result<(), Error> {
        let Some(sim) = machine.sim() else {
            return Ok(());
        };
        let pmu_box = self.counting.pmu_box();
        for s in specs {
            let count = 1000 * (s.text_index as u64 + 1) + 37 * interval;
            match pmu_box.scope() {
                Scope::Cpu => sim.inject_core(self.cpu, s.ev_sel, s.umask.unwrap_or(0), count)?,
                Scope::Socket => sim.inject_uncore(
                    self.socket,
                    UncoreEvent {
                        instance: pmu_box.instance,
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
    let specs: Vec<Spec> = args
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| parse_event(e, i))
        .collect::<Result<_, _>>()?;
    let (boxes, pmu_box) = find_box(&args.unit)?;
    let machine = args.place.machine_for(boxes.processor)?;
    let watched = Watched::program(&machine, boxes, pmu_box, args, &specs)?;

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        // A second watch in the same process (tests) cannot install a handler again; the
        // first one's flag is not this one, so Ctrl-C then ends the process, which is fine.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }

    let result = watch_loop(&machine, &watched, args, &specs, &stop, json_out);
    // Disable what was enabled, whatever happened, and report both failures if both fail.
    match (result, watched.counting.close()) {
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
    let names = watched.names()?;
    let widths = watched.widths()?;
    let mut previous = watched.read()?;
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
        watched.simulate(machine, specs, report)?;
        let now = watched.read()?;
        // Time is simulated (interval x report) with --sim, so output is reproducible.
        let t = if machine.sim().is_some() {
            args.interval * report as f64
        } else {
            start.elapsed().as_secs_f64()
        };
        let mut counts = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let d = delta(previous[i], now[i], widths[i]);
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
