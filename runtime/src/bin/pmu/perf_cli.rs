//! The perf backend in the `pmu` command: `encode --perf`, `watch --backend perf|raw|auto`
//! (and `--pmu` for any kernel PMU), `list --backends`. The counting itself is
//! `pmu_runtime::perf::session`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use pmu_regs::{Location, ProcessorInfo, RegisterInfo, PROCESSORS};
use pmu_runtime::codec;
use pmu_runtime::lookup;
use pmu_runtime::pci::PciSysfs;
use pmu_runtime::perf::encode::{from_control, from_terms};
use pmu_runtime::perf::session::{IntervalCount, Session};
use pmu_runtime::perf::{EventSources, PerfEvent, PerfNames, Pmu, SpecNames};
use pmu_runtime::{Error, UsageError};
use serde_json::json;

use crate::table::Table;
use crate::Failure;

/// Which way `watch` reaches the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum Backend {
    /// Through the kernel's PMU (perf_event_open), where it exists; otherwise raw.
    #[default]
    Auto,
    /// Through the kernel's PMU only (counting; no root needed with CAP_PERFMON).
    Perf,
    /// Programming the registers directly (/dev/cpu/N/msr, PCI config space).
    Raw,
}

/// `watch`'s perf options.
#[derive(Args, Clone, Default)]
pub struct PerfWatchArgs {
    /// How to reach the counters: perf (the kernel's PMU driver), raw (the registers), or
    /// auto (perf where the kernel has the box's PMU, raw otherwise).
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Count events of this kernel PMU (msr, software, uncore_ha, ...) instead of one of our
    /// units; --event then takes the PMU's event names or format terms (tsc, event=0x3c).
    #[arg(long, conflicts_with = "unit")]
    pub pmu: Option<String>,
}

/// The sysfs PMU directory under `root` (`/` by default).
pub fn sources(root: Option<&Path>) -> EventSources {
    let root = root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    EventSources::with_root(root.join("sys/bus/event_source/devices"))
}

/// `pmu encode REGISTER fields... --perf`: the perf event string of a counter control value.
/// The PMU's format comes from sysfs when the kernel has the PMU, from the driver's format
/// (as the kernel would write it) otherwise.
pub fn encode(
    register: &str,
    fields: &[String],
    root: Option<&Path>,
    json_out: bool,
) -> Result<String, Failure> {
    let found = lookup::find(register)?;
    let info = found.info;
    let Some(addr) = found.address else {
        let instances: Vec<&str> = info
            .known_addresses()
            .iter()
            .map(|a| a.name)
            .take(6)
            .collect();
        return Err(UsageError::NeedsInstance {
            name: register.to_string(),
            instances: instances.join(", "),
        }
        .into());
    };
    let assignments = codec::parse_assignments(fields)?;
    let raw = codec::encode(info, info.reset, &assignments)?;
    let name = SpecNames
        .lookup(info.processor, info.unit, addr.instance, Some(addr.index))
        .map_err(Error::from)?;
    let s = sources(root);
    let formats = if s.has(name.pmu) {
        s.pmu(name.pmu, name.driver).map_err(Error::from)?.formats
    } else {
        name.driver_formats()
    };
    let ev = from_control(
        info,
        raw,
        name.pmu,
        &formats,
        Some(name.kernel_counter(addr.index)),
    )
    .map_err(Error::from)?;
    if json_out {
        return Ok(format!(
            "{}\n",
            json!({"register": addr.name, "value": raw, "pmu": ev.pmu, "event": ev.to_string(),
                   "config": ev.config[0], "config1": ev.config[1], "config2": ev.config[2]})
        ));
    }
    Ok(format!("{ev}\n"))
}

/// The box `unit` names for `watch`: a processor, unit and instance of the spec.
fn find_box(
    unit: &str,
) -> Option<(
    &'static ProcessorInfo,
    &'static pmu_regs::UnitInfo,
    &'static str,
)> {
    for p in PROCESSORS {
        for u in p.units {
            if let Some(i) = u.instances.iter().find(|i| i.eq_ignore_ascii_case(unit)) {
                return Some((p, u, i));
            }
        }
    }
    None
}

/// The control register of counter `n` of box `instance`.
fn control(u: &pmu_regs::UnitInfo, instance: &str, n: u32) -> Option<&'static RegisterInfo> {
    u.registers.iter().copied().find(|r| {
        (r.field("ev_sel").is_some() || r.field("inc_sel").is_some())
            && r.known_addresses()
                .iter()
                .any(|a| a.instance == instance && a.index == n)
    })
}

/// What `watch` was asked for, as far as the perf path needs it.
pub struct WatchRequest<'a> {
    pub unit: Option<&'a str>,
    pub events: &'a [String],
    pub perf: &'a PerfWatchArgs,
    pub root: Option<&'a Path>,
    pub sim: bool,
    pub socket: Option<u32>,
    pub cpu: Option<u32>,
    pub interval: f64,
    pub count: Option<u64>,
    pub json: bool,
}

/// Runs `watch` through perf where the backend choice says so. `Ok(None)`: use the raw
/// backends.
pub fn watch(r: &WatchRequest<'_>) -> Result<Option<String>, Failure> {
    let (unit, events, perf) = (r.unit, r.events, r.perf);
    if perf.backend == Backend::Raw || (r.sim && perf.pmu.is_none()) {
        if perf.pmu.is_some() {
            return Err(UsageError::BadValue {
                text: "--pmu with --backend raw".into(),
                expected: "--backend perf or auto: a kernel PMU is counted through perf".into(),
            }
            .into());
        }
        return Ok(None);
    }
    let s = sources(r.root);
    let (pmu, selected) = if let Some(name) = &perf.pmu {
        let pmu = s
            .pmu(name, "a kernel driver this machine does not have")
            .map_err(Error::from)?;
        let selected = events
            .iter()
            .map(|e| from_terms(&pmu, e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::from)?;
        (pmu, selected)
    } else {
        let unit = unit.unwrap_or_default();
        let Some((p, u, instance)) = find_box(unit) else {
            if perf.backend == Backend::Auto {
                return Ok(None); // the raw path reports the unknown box
            }
            return Err(UsageError::BadValue {
                text: unit.to_string(),
                expected: "a box of the spec (HA, C3, P0, CPU, ...)".into(),
            }
            .into());
        };
        let name = SpecNames
            .lookup(p.id, u.name, instance, Some(0))
            .map_err(Error::from)?;
        if perf.backend == Backend::Auto && !s.has(name.pmu) {
            return Ok(None);
        }
        let pmu = s.pmu(name.pmu, name.driver).map_err(Error::from)?;
        let mut selected = Vec::new();
        for (n, text) in events.iter().enumerate() {
            let n = n as u32;
            let info = control(u, instance, n).ok_or_else(|| UsageError::NoSuchCounter {
                counter: format!("{instance} counter {n}"),
                available: format!(
                    "{} counters",
                    (0..64)
                        .take_while(|&k| control(u, instance, k).is_some())
                        .count()
                ),
            })?;
            let pairs: Vec<(String, String)> =
                codec::parse_assignments(&text.split(',').map(str::to_string).collect::<Vec<_>>())?
                    .into_iter()
                    .map(|(k, v)| {
                        // `event=0x..` is the event select, as in the raw watch.
                        let numeric = codec::parse_number(&v).is_ok();
                        if k.eq_ignore_ascii_case("event") && numeric {
                            ("ev_sel".to_string(), v)
                        } else {
                            (k, v)
                        }
                    })
                    .collect();
            let raw = codec::encode(info, info.reset, &pairs)?;
            let ev = from_control(
                info,
                raw,
                &pmu.name,
                &pmu.formats,
                Some(name.kernel_counter(n)),
            )
            .map_err(Error::from)?;
            selected.push(ev);
        }
        (pmu, selected)
    };
    run(&pmu, &selected, r).map(Some)
}

fn run(pmu: &Pmu, events: &[PerfEvent], r: &WatchRequest<'_>) -> Result<String, Failure> {
    let json_out = r.json;
    let cpus = match r.cpu {
        Some(c) => vec![Some(c)],
        None => Session::cpus(pmu, r.socket, 0).map_err(Error::from)?,
    };
    let mut session = Session::start(pmu, &cpus, events).map_err(Error::from)?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let event_w = events
        .iter()
        .map(|e| e.to_string().len())
        .max()
        .unwrap_or(5)
        .max(5);
    if !json_out {
        println!(
            "{:>10}  {:>4}  {:<event_w$}  {:>15}  {:>8}",
            "# time", "cpu", "event", "count", "running"
        );
    }
    let report = |t: f64, counts: &[IntervalCount]| {
        if json_out {
            let items: Vec<_> = counts
                .iter()
                .map(|c| {
                    json!({"pmu": c.pmu, "cpu": c.cpu, "event": c.event, "count": c.reading.count,
                           "time_enabled_ns": c.reading.time_enabled.as_nanos() as u64,
                           "time_running_ns": c.reading.time_running.as_nanos() as u64,
                           "multiplexed": c.reading.multiplexed(), "scaled": c.reading.scaled()})
                })
                .collect();
            println!("{}", json!({"time": t, "backend": "perf", "counts": items}));
            return;
        }
        for c in counts {
            let running = if c.reading.time_enabled.is_zero() {
                "-".to_string()
            } else {
                format!(
                    "{:.2}%",
                    100.0 * c.reading.time_running.as_secs_f64()
                        / c.reading.time_enabled.as_secs_f64()
                )
            };
            println!(
                "{t:>10.3}  {:>4}  {:<event_w$}  {:>15}  {:>8}",
                c.cpu.map_or("-".into(), |c| c.to_string()),
                c.event,
                c.reading
                    .scaled()
                    .map_or("<not counted>".into(), |n| n.to_string()),
                running
            );
        }
    };
    session
        .run(Duration::from_secs_f64(r.interval), r.count, &stop, report)
        .map_err(Error::from)?;
    Ok(String::new())
}

/// `pmu list --backends`: for every box, its kernel PMU and whether perf or the raw backends
/// reach it on this machine.
pub fn list_backends(root: Option<&Path>, json_out: bool) -> Result<String, Failure> {
    let base = root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let s = sources(root);
    let msr_dev = base.join("dev/cpu/0/msr").exists();
    let pci = PciSysfs::with_root(base.join("sys/bus/pci/devices"));
    let mut rows = Vec::new();
    for p in PROCESSORS {
        let pci_found = pci.discover(p).is_ok();
        for u in p.units {
            let space = u
                .registers
                .iter()
                .find_map(|r| r.known_addresses().first().map(|a| a.location));
            let raw = match space {
                Some(Location::Msr(_)) if msr_dev => "yes",
                Some(Location::Pci { .. }) if pci_found => "yes",
                _ => "no",
            };
            for i in u.instances {
                let names: Vec<String> = SpecNames
                    .all()
                    .into_iter()
                    .filter(|n| n.processor == p.id && n.unit == u.name && n.instance == *i)
                    .map(|n| n.pmu.to_string())
                    .collect();
                let perf = !names.is_empty() && names.iter().all(|n| s.has(n));
                let backend = match (perf, raw) {
                    (true, _) => "perf",
                    (false, "yes") => "raw",
                    _ => "none",
                };
                rows.push((p.id, u.name, *i, names.join(" "), perf, raw, backend));
            }
        }
    }
    if json_out {
        let items: Vec<_> = rows
            .iter()
            .map(|(p, u, i, n, perf, raw, b)| json!({"processor": p, "unit": u, "instance": i, "perf_pmu": n, "perf": perf, "raw": *raw == "yes", "auto": b}))
            .collect();
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&items).expect("JSON values serialise")
        ));
    }
    let mut t = Table::new(&[
        "PROCESSOR",
        "UNIT",
        "BOX",
        "PERF PMU",
        "PERF",
        "RAW",
        "AUTO",
    ]);
    for (p, u, i, n, perf, raw, b) in rows {
        t.row(vec![
            p.into(),
            u.into(),
            i.into(),
            n,
            if perf { "yes" } else { "no" }.into(),
            raw.into(),
            b.into(),
        ]);
    }
    Ok(t.render())
}
