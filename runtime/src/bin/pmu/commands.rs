//! `list`, `decode`, `encode`, `read` and `write`.

use pmu_regs::{AddressInfo, Addresses, EventInfo, Location, RegisterInfo, Role, PROCESSORS};
use pmu_runtime::boxes::Boxes;
use pmu_runtime::codec::{self, Decoded};
use pmu_runtime::lookup::{self, FoundRegister as Found};
use pmu_runtime::machine::{Machine, Resolved};
use pmu_runtime::ownership::{Lease, Ownership, Pmu};
use pmu_runtime::topology::Topology;
use pmu_runtime::{BackendError, Place, UsageError};
use serde_json::{json, Value};

use crate::pattern::Pattern;
use crate::table::Table;
use crate::{detect, grammar, warn, Failure, PlaceArgs, ValueArgs};

type Out = Result<String, Failure>;

fn hex(v: u64, width: u32) -> String {
    format!("{v:#0w$x}", w = (width / 4) as usize + 2)
}

fn location_text(loc: &Location) -> String {
    match loc {
        Location::Msr(a) => format!("MSR {a:#X}"),
        Location::Pci {
            device_id,
            device,
            function,
            offset,
        } => format!("PCI {device_id:#06X} (dev {device} fn {function}) offset {offset:#X}")
            .replace("0X", "0x"),
        Location::Mmio {
            controller,
            channel,
            offset,
        } => format!("MMIO controller {controller} channel {channel} offset {offset:#x}"),
        Location::Table(o) => format!("table offset {o:#X}").replace("0X", "0x"),
    }
}

fn location_json(loc: Option<&Location>) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    match loc {
        Some(Location::Msr(a) | Location::Table(a)) => {
            m.insert("address".into(), json!(a));
            m.insert("address_hex".into(), json!(format!("{a:#x}")));
        }
        Some(Location::Pci {
            device_id,
            device,
            function,
            offset,
        }) => {
            m.insert("address".into(), json!(offset));
            m.insert("address_hex".into(), json!(format!("{offset:#x}")));
            m.insert("offset".into(), json!(offset));
            m.insert("device_id".into(), json!(device_id));
            m.insert("device".into(), json!(device));
            m.insert("function".into(), json!(function));
        }
        Some(Location::Mmio {
            controller,
            channel,
            offset,
        }) => {
            m.insert("address".into(), json!(offset));
            m.insert("address_hex".into(), json!(format!("{offset:#x}")));
            m.insert("offset".into(), json!(offset));
            m.insert("controller".into(), json!(controller));
            m.insert("channel".into(), json!(channel));
        }
        None => {
            m.insert("address".into(), Value::Null);
        }
    }
    m
}

fn matches(want: Option<&str>, names: &[&str]) -> bool {
    want.is_none_or(|w| names.iter().any(|n| n.eq_ignore_ascii_case(w)))
}

/// `pmu list`.
pub fn list(
    processor: Option<&str>,
    unit: Option<&str>,
    pattern: Option<&Pattern>,
    json_out: bool,
) -> Out {
    let mut rows = Vec::new();
    let mut units_seen = 0;
    for p in PROCESSORS
        .iter()
        .filter(|p| matches(processor, &[p.id, p.module]))
    {
        for u in p
            .units
            .iter()
            .filter(|u| matches(unit, &[u.name, u.module]))
        {
            units_seen += 1;
            for r in u.registers {
                match r.addresses {
                    Addresses::Known(addrs) => {
                        for a in addrs {
                            rows.push((p.id, u.name, *r, a.name, Some(a.location), None));
                        }
                    }
                    Addresses::Unknown(reason) => {
                        rows.push((p.id, u.name, *r, r.name, None, Some(reason)))
                    }
                }
            }
        }
    }
    if units_seen == 0 {
        return Err(nothing_selected(processor, unit));
    }
    if let Some(pattern) = pattern {
        rows.retain(|(_, _, r, name, _, _)| pattern.matches_any(&[name, r.name, r.description]));
    }
    if json_out {
        let items: Vec<Value> = rows
            .iter()
            .map(|(pid, unit, r, name, loc, unknown)| {
                let mut m = serde_json::Map::new();
                m.insert("name".into(), json!(name));
                m.insert("processor".into(), json!(pid));
                m.insert("unit".into(), json!(unit));
                m.insert("space".into(), json!(r.space.as_str()));
                m.extend(location_json(loc.as_ref()));
                if let Some(reason) = unknown {
                    m.insert("address_unknown".into(), json!(reason));
                }
                m.insert("width".into(), json!(r.width));
                m.insert(
                    "fields".into(),
                    Value::Array(
                        r.fields
                            .iter()
                            .map(|f| {
                                let mut j = json!({"name": f.name, "lsb": f.lsb, "msb": f.msb, "access": f.access.as_str(), "reset": f.reset, "reset_hex": format!("{:#x}", f.reset)});
                                if !f.split.is_empty() {
                                    j["ranges"] = ranges_json(f.split);
                                }
                                j
                            })
                            .collect(),
                    ),
                );
                Value::Object(m)
            })
            .collect();
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(items)).expect("JSON values serialise")
        ));
    }
    let mut t =
        Table::new(&["REGISTER", "PROCESSOR", "UNIT", "ADDRESS", "WIDTH"]).right_align(&[4]);
    for (pid, unit, r, name, loc, _) in &rows {
        t.row(vec![
            name.to_string(),
            pid.to_string(),
            unit.to_string(),
            loc.as_ref().map_or("unknown".into(), location_text),
            r.width.to_string(),
        ]);
    }
    Ok(t.render())
}

/// Why `--processor`/`--unit` selected nothing, naming only what was asked about.
fn nothing_selected(processor: Option<&str>, unit: Option<&str>) -> Failure {
    let Some(p) = PROCESSORS
        .iter()
        .find(|p| processor.is_none_or(|w| matches(Some(w), &[p.id, p.module])))
    else {
        return pmu_runtime::lookup::unknown_processor(processor.unwrap_or_default()).into();
    };
    let unit = unit.unwrap_or_default();
    let owners: Vec<&str> = PROCESSORS
        .iter()
        .filter(|q| {
            q.units
                .iter()
                .any(|u| matches(Some(unit), &[u.name, u.module]))
        })
        .map(|q| q.id)
        .collect();
    match processor {
        Some(_) => {
            let units: Vec<&str> = p.units.iter().map(|u| u.name).collect();
            let elsewhere = if owners.is_empty() {
                String::new()
            } else {
                format!(" ({unit} is a unit of {})", owners.join(", "))
            };
            Failure::usage(format!(
                "{} has no unit {unit}{elsewhere}; its units are {}",
                p.id,
                units.join(", ")
            ))
        }
        None => Failure::usage(format!(
            "there is no unit {unit}; `pmu list --summary` shows every processor's units"
        )),
    }
}

/// The units `list` selects, or a usage error naming what exists.
fn selected_units(
    processor: Option<&str>,
    unit: Option<&str>,
) -> Result<Vec<(&'static str, &'static pmu_regs::UnitInfo)>, Failure> {
    let units = matching_units(processor, unit);
    if units.is_empty() {
        return Err(nothing_selected(processor, unit));
    }
    Ok(units)
}

/// The units the filters select, in processor order; none is not an error here.
fn matching_units(
    processor: Option<&str>,
    unit: Option<&str>,
) -> Vec<(&'static str, &'static pmu_regs::UnitInfo)> {
    PROCESSORS
        .iter()
        .filter(|p| matches(processor, &[p.id, p.module]))
        .flat_map(|p| {
            p.units
                .iter()
                .filter(|u| matches(unit, &[u.name, u.module]))
                .map(move |u| (p.id, *u))
        })
        .collect()
}

/// Event descriptions from an Intel perfmon JSON file: by name, and by (code, umask) for
/// the architectural events, whose names in the spec are the SDM's.
struct Descriptions {
    /// The processor the list describes: its descriptions go to its events only, since
    /// processors share event names (`UNC_H_REQUESTS.READS` on E5-2600 v2, v3 and v4).
    processor: &'static str,
    by_name: std::collections::HashMap<String, String>,
    by_code: std::collections::HashMap<(u64, u64), String>,
}

/// The processor Intel's perfmon file `path` describes: the one whose code name its file
/// name starts with (`haswellx_uncore.json`: Haswell-X, `ivytown_core.json`: IvyTown), which
/// `named` (`--processor`) must agree with; `named` alone for a renamed file.
fn perfmon_processor(
    path: &std::path::Path,
    named: Option<&'static str>,
) -> Result<&'static str, Failure> {
    let squash = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let file = path.file_name().map_or(String::new(), |f| {
        let f = f.to_string_lossy();
        squash(f.split('_').next().unwrap_or_default())
    });
    let by_file = PROCESSORS
        .iter()
        .find(|p| p.code_names.iter().any(|c| squash(c) == file))
        .map(|p| p.id);
    match (by_file, named) {
        (Some(f), Some(n)) if f != n => Err(Failure::usage(format!(
            "{} is the event list of {f}, not of {n}: its descriptions would describe another \
             processor's events of the same names; give {n}'s own list, or --processor {f}",
            path.display()
        ))),
        (Some(p), _) | (None, Some(p)) => Ok(p),
        (None, None) => Err(Failure::usage(format!(
            "cannot tell which processor {} describes (Intel names its files after the code \
             name: {}); give --processor",
            path.display(),
            perfmon_file_example()
        ))),
    }
}

/// A perfmon file name the code-name match accepts, for the message that explains it: the
/// first code name of the last processor with Intel's identity and an event list
/// (`{code name}_uncore.json`, squashed and lower case as Intel writes them).
fn perfmon_file_example() -> String {
    PROCESSORS
        .iter()
        .rev()
        .filter(|p| {
            p.identity
                .is_some_and(|i| i.vendor == pmu_regs::Vendor::Intel)
        })
        .filter(|p| p.units.iter().any(|u| !u.events.is_empty()))
        .find_map(|p| p.code_names.first())
        .map(|c| {
            let name: String = c.chars().filter(char::is_ascii_alphanumeric).collect();
            format!("{}_uncore.json", name.to_ascii_lowercase())
        })
        .unwrap_or_default()
}

impl Descriptions {
    fn read(path: &std::path::Path, processor: Option<&'static str>) -> Result<Self, Failure> {
        let processor = perfmon_processor(path, processor)?;
        let limit = pmu_runtime::bounded::MAX_EVENT_LIST_BYTES;
        let text = pmu_runtime::bounded::read_text(path, limit).map_err(|e| {
            Failure::operation(format!(
                "cannot read {e}; give the path of one of Intel's perfmon JSON files"
            ))
        })?;
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            Failure::operation(format!(
                "{} is not an Intel perfmon event list (JSON): {e}",
                path.display()
            ))
        })?;
        let events = v.get("Events").unwrap_or(&v).as_array().ok_or_else(|| {
            Failure::operation(format!(
                "{} has no \"Events\" array: it is not an Intel perfmon event list",
                path.display()
            ))
        })?;
        let mut d = Descriptions {
            processor,
            by_name: Default::default(),
            by_code: Default::default(),
        };
        let num = |e: &Value, k: &str| {
            e.get(k).and_then(Value::as_str).and_then(|s| {
                u64::from_str_radix(s.trim_start_matches("0x").split(',').next()?, 16).ok()
            })
        };
        for e in events {
            let (Some(name), Some(text)) = (
                e.get("EventName").and_then(Value::as_str),
                e.get("BriefDescription").and_then(Value::as_str),
            ) else {
                continue;
            };
            d.by_name
                .insert(name.to_ascii_uppercase(), text.to_string());
            if let (Some(c), Some(u)) = (num(e, "EventCode"), num(e, "UMask")) {
                d.by_code.entry((c, u)).or_insert_with(|| text.to_string());
            }
        }
        Ok(d)
    }

    /// The description of event `e` of `unit` in processor `processor`'s lists, if this is
    /// that processor's file.
    fn of(&self, processor: &str, unit: &str, e: &pmu_regs::EventInfo) -> Option<&str> {
        // The architectural events are every processor's: its file describes them too.
        let core_of = |id: &str| {
            PROCESSORS
                .iter()
                .find(|p| p.id == id)
                .and_then(|p| p.core_events)
                .map(|c| c.processor)
        };
        if processor != self.processor && core_of(self.processor) != Some(processor) {
            return None;
        }
        self.by_name
            .get(&e.name.to_ascii_uppercase())
            .or_else(|| {
                (unit == "CORE")
                    .then(|| self.by_code.get(&(u64::from(e.code), u64::from(e.umask))))
                    .flatten()
            })
            .map(String::as_str)
    }
}

/// The processor `--processor` names (by id or module), or `None` when none is given.
pub fn processor_named(name: Option<&str>) -> Result<Option<&'static str>, Failure> {
    let Some(name) = name else { return Ok(None) };
    PROCESSORS
        .iter()
        .find(|p| matches(Some(name), &[p.id, p.module]))
        .map(|p| Some(p.id))
        .ok_or_else(|| pmu_runtime::lookup::unknown_processor(name).into())
}

/// One event list `list --events` shows: (processor, unit, events).
type EventList = (&'static str, &'static str, &'static [&'static EventInfo]);

/// The event lists `list --events` shows: (processor, unit, events), every unit's own and
/// every processor's own core list (for the unit of its core PMU), in the model's order.
fn selected_event_lists(
    processor: Option<&str>,
    unit: Option<&str>,
) -> Result<Vec<EventList>, Failure> {
    let mut lists = Vec::new();
    for p in PROCESSORS
        .iter()
        .filter(|p| matches(processor, &[p.id, p.module]))
    {
        for u in p
            .units
            .iter()
            .filter(|u| matches(unit, &[u.name, u.module]))
        {
            lists.push((p.id, u.name, u.events));
        }
        if let Some(c) = p.core_events {
            // The core PMU's unit, by its name or module (`CORE`, `core`).
            let module = PROCESSORS
                .iter()
                .filter(|q| q.id == c.processor)
                .flat_map(|q| q.units.iter())
                .find(|u| u.name == c.unit)
                .map_or(c.unit, |u| u.module);
            if matches(unit, &[c.unit, module]) {
                lists.push((p.id, c.unit, c.events));
            }
        }
    }
    if lists.is_empty() {
        // The error names what exists.
        selected_units(processor, unit)?;
    }
    Ok(lists)
}

/// The set bits of a counter mask, ascending.
fn bits(mask: u32) -> Vec<u32> {
    (0..32).filter(|n| mask >> n & 1 != 0).collect()
}

/// What an event sets beyond its select and umask (`cmask=4 inv edge any`; an uncore event's
/// `umask_ext=0xc001fe`, `port_mask=0x1 fc_mask=0x7`), or "".
fn settings_text(e: &EventInfo) -> String {
    let mut parts = Vec::new();
    if e.threshold != 0 {
        parts.push(format!("cmask={}", e.threshold));
    }
    for (set, name) in [(e.invert, "inv"), (e.edge, "edge"), (e.any_thread, "any")] {
        if set {
            parts.push(name.to_string());
        }
    }
    for (value, name) in [
        (e.umask_ext, "umask_ext"),
        (u32::from(e.port_mask), "port_mask"),
        (u32::from(e.fc_mask), "fc_mask"),
    ] {
        if value != 0 {
            parts.push(format!("{name}={value:#x}"));
        }
    }
    // The auxiliary MSR, as `encode` prints it (`MSR_OFFCORE_RSP_0=0x10001`).
    if let Some(a) = e.aux {
        parts.push(format!("{}={:#x}", a.register, a.value));
    }
    parts.join(" ")
}

/// `pmu list --events`: every unit's events, the architectural ones included, and every
/// processor's own core events, with Intel's descriptions when `perfmon` names Intel's
/// event list.
pub fn list_events(
    processor: Option<&str>,
    unit: Option<&str>,
    perfmon: Option<&std::path::Path>,
    pattern: Option<&Pattern>,
    json_out: bool,
) -> Out {
    let lists = selected_event_lists(processor, unit)?;
    let named = processor_named(processor)?;
    let descriptions = perfmon
        .map(|path| Descriptions::read(path, named))
        .transpose()?;
    let describe = |p: &str, u: &str, e: &pmu_regs::EventInfo| {
        descriptions.as_ref().and_then(|d| d.of(p, u, e))
    };
    // With a pattern, only the events whose name or description it matches.
    let lists: Vec<(&str, &str, Vec<&EventInfo>)> = lists
        .iter()
        .map(|&(pid, unit, events)| {
            let kept = events
                .iter()
                .copied()
                .filter(|e| {
                    pattern.is_none_or(|p| {
                        p.matches_any(&[e.name, describe(pid, unit, e).unwrap_or("")])
                    })
                })
                .collect();
            (pid, unit, kept)
        })
        .collect();
    // Several processors' lists share unit and event names: each row then names its own.
    let mut processors: Vec<&str> = lists
        .iter()
        .filter(|(_, _, e)| !e.is_empty())
        .map(|l| l.0)
        .collect();
    processors.dedup();
    if json_out {
        let items: Vec<Value> = lists
            .iter()
            .flat_map(|(pid, unit, events)| {
                events.iter().map(move |e| {
                    let counters = bits(e.counters);
                    let ht_off = (e.counters_ht_off != 0).then(|| bits(e.counters_ht_off));
                    json!({"name": e.name, "processor": pid, "unit": unit, "code": e.code, "code_hex": format!("{:#04x}", e.code), "umask": e.umask, "umask_hex": format!("{:#04x}", e.umask), "ext_sel": e.ext_sel, "counters": counters, "counters_ht_off": ht_off, "filters": e.filters, "threshold": e.threshold, "invert": e.invert, "edge": e.edge, "any_thread": e.any_thread, "umask_ext": e.umask_ext, "port_mask": e.port_mask, "fc_mask": e.fc_mask, "experimental": e.experimental, "aux_msr": e.aux.map(|a| json!({"register": a.register, "address": a.address, "value": a.value})), "description": describe(pid, unit, e)})
                })
            })
            .collect();
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(items)).expect("JSON values serialise")
        ));
    }
    let with_settings = lists
        .iter()
        .any(|(_, _, events)| events.iter().any(|e| !settings_text(e).is_empty()));
    // A STATUS column where some event comes from an experimental list.
    let with_status = lists
        .iter()
        .any(|(_, _, events)| events.iter().any(|e| e.experimental));
    let mut header = vec!["EVENT", "UNIT", "CODE", "UMASK", "COUNTERS", "FILTERS"];
    if with_settings {
        header.push("SETTINGS");
    }
    if with_status {
        header.push("STATUS");
    }
    if descriptions.is_some() {
        header.push("DESCRIPTION");
    }
    let mut t = Table::new(&header);
    for (pid, unit, events) in &lists {
        // A processor's own core list reads as `xeon-e5-2600:CORE`: the unit is another
        // processor's (the architectural one), and the lists share names; so does every row
        // where several processors are listed.
        let shown = if processors.len() <= 1
            && PROCESSORS
                .iter()
                .any(|p| p.id == *pid && p.units.iter().any(|u| u.name == *unit))
        {
            unit.to_string()
        } else {
            format!("{pid}:{unit}")
        };
        for e in events.iter() {
            let mut counters: String = bits(e.counters)
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(",");
            if e.counters_ht_off != 0 {
                // More counters on a core running one hardware thread (Intel's CounterHTOff).
                let more = pmu_runtime::machine::ranges(&bits(e.counters_ht_off));
                counters.push_str(&format!(" (HT off: {more})"));
            }
            let code = if e.ext_sel {
                format!("{:#04x}+ext", e.code)
            } else {
                format!("{:#04x}", e.code)
            };
            let mut row = vec![
                e.name.into(),
                shown.clone(),
                code,
                format!("{:#04x}", e.umask),
                counters,
                e.filters.into(),
            ];
            if with_settings {
                row.push(settings_text(e));
            }
            if with_status {
                row.push(if e.experimental { "experimental" } else { "" }.into());
            }
            if descriptions.is_some() {
                row.push(describe(pid, unit, e).unwrap_or("").to_string());
            }
            t.row(row);
        }
    }
    Ok(t.render())
}

/// `pmu list PATTERN`: the registers, then the events, whose names or descriptions the
/// pattern matches (as `perf list PATTERN`); refused when nothing does.
pub fn search(
    processor: Option<&str>,
    unit: Option<&str>,
    pattern: &Pattern,
    text: &str,
    json_out: bool,
) -> Out {
    let registers = list(processor, unit, Some(pattern), json_out)?;
    let events = list_events(processor, unit, None, Some(pattern), json_out)?;
    let empty = |out: &str| {
        if json_out {
            out.trim() == "[]"
        } else {
            out.lines().count() <= 1
        }
    };
    match (empty(&registers), empty(&events)) {
        (true, true) => Err(Failure::operation(format!(
            "no register or event name matches {text}; `*` and `?` glob, and a pattern without \
             them matches anywhere in a name (pmu list cas)"
        ))),
        (false, true) => Ok(registers),
        (true, false) => Ok(events),
        (false, false) if json_out => Ok(format!(
            "{{\"registers\": {}, \"events\": {}}}\n",
            registers.trim(),
            events.trim()
        )),
        (false, false) => Ok(format!("{registers}\n{events}")),
    }
}

/// A row of `list --summary`: processor, unit, layouts, registers, events, boxes.
type SummaryRow<'a> = (&'a str, &'a str, usize, usize, usize, String);

/// `pmu list --summary`: registers (layouts and instances) and events per unit.
pub fn list_summary(processor: Option<&str>, unit: Option<&str>, json_out: bool) -> Out {
    // Per processor: its units, then its own core event list, whose registers are the core
    // PMU's unit (`architectural` CORE) and so counted there, not here (0 layouts).
    let mut rows: Vec<SummaryRow<'_>> = Vec::new();
    // Which rows are a processor's core event list (by index), for the JSON.
    let mut core_rows: Vec<usize> = Vec::new();
    let units = matching_units(processor, unit);
    for p in PROCESSORS.iter() {
        for &(pid, u) in units.iter().filter(|(pid, _)| *pid == p.id) {
            let instances: usize = u
                .registers
                .iter()
                .map(|r| r.known_addresses().len().max(1))
                .sum();
            rows.push((
                pid,
                u.name,
                u.registers.len(),
                instances,
                // The event list's, and the kernel's event of each free-running counter.
                u.events.len()
                    + u.pmu.map_or(0, |m| {
                        m.counters.iter().filter(|c| c.perf_event.is_some()).count()
                    }),
                box_rule(u),
            ));
        }
        if let Some(core) = p.core_events {
            if matches(processor, &[p.id, p.module]) && matches(unit, &[core.unit]) {
                core_rows.push(rows.len());
                rows.push((p.id, core.unit, 0, 0, core.events.len(), "-".into()));
            }
        }
    }
    if rows.is_empty() {
        return Err(nothing_selected(processor, unit));
    }
    if json_out {
        let items: Vec<Value> = rows
            .iter()
            .enumerate()
            .map(|(n, (p, u, l, i, e, b))| {
                let mut v = json!({"processor": p, "unit": u, "layouts": l, "registers": i, "events": e, "boxes": b});
                if core_rows.contains(&n) {
                    // The events of the processor's own list for the core PMU's unit.
                    v["core_events"] = json!(true);
                }
                v
            })
            .collect();
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(items)).expect("JSON values serialise")
        ));
    }
    Ok(summary_table(&rows))
}

/// The summary's rows as a table, with a total row.
fn summary_table(rows: &[SummaryRow<'_>]) -> String {
    let mut t = Table::new(&[
        "PROCESSOR",
        "UNIT",
        "LAYOUTS",
        "REGISTERS",
        "EVENTS",
        "BOXES",
    ])
    .right_align(&[2, 3, 4]);
    let (mut tl, mut ti, mut te) = (0, 0, 0);
    for (p, u, l, i, e, b) in rows {
        t.row(vec![
            p.to_string(),
            u.to_string(),
            l.to_string(),
            i.to_string(),
            e.to_string(),
            b.clone(),
        ]);
        tl += l;
        ti += i;
        te += e;
    }
    t.row(vec![
        "total".into(),
        String::new(),
        tl.to_string(),
        ti.to_string(),
        te.to_string(),
        String::new(),
    ]);
    t.render()
}

/// A unit's box count rule for the summary, one word: the boxes its spec lists (`28`), and
/// what tells which a part has (`28:CAPID6.cha_en`: up to 28, the set bits of that field;
/// `60:=UNC_CBO_CONFIG.num_cbo`: up to 60, that field's value; `4:map(PCU_CAPID4.chop)`:
/// 4 or what that field's value maps to; `22:cores`: up to 22, one per core; `6:devices`:
/// those whose PCI devices are found; `6:discovery`: those the discovery table lists;
/// `1:listed`: every part has all).
fn box_rule(u: &pmu_regs::UnitInfo) -> String {
    let listed = u.instances.len();
    match u.pmu.and_then(|m| m.box_count).map(|b| b.rule) {
        None => listed.to_string(),
        Some(pmu_regs::BoxCountRule::SetBits(bits)) => {
            let fields: Vec<&str> = bits.iter().map(|b| b.qualified).collect();
            format!("{listed}:{}", fields.join("+"))
        }
        Some(pmu_regs::BoxCountRule::Value(b)) => format!("{listed}:={}", b.qualified),
        Some(pmu_regs::BoxCountRule::ValueMap(b, _)) => format!("{listed}:map({})", b.qualified),
        Some(pmu_regs::BoxCountRule::CoresPerSocket) => format!("{listed}:cores"),
        Some(pmu_regs::BoxCountRule::Listed) => format!("{listed}:listed"),
        Some(pmu_regs::BoxCountRule::Devices) => format!("{listed}:devices"),
        Some(pmu_regs::BoxCountRule::Discovery) => format!("{listed}:discovery"),
    }
}

fn decoded_table(d: &Decoded) -> String {
    let mut t = Table::new(&["BITS", "FIELD", "ACCESS", "VALUE", "MEANING"]);
    for f in &d.fields {
        let bits = f.bits_text();
        let meaning = match (f.meaning, f.meaning_description) {
            (Some(n), Some(d)) => format!("{n}: {d}"),
            _ => String::new(),
        };
        t.row(vec![
            bits,
            f.name.clone(),
            f.access.as_str().into(),
            format!("{:#x}", f.value),
            meaning,
        ]);
    }
    let mut out = t.render();
    let info = d.register;
    if d.reserved_set != 0 {
        out.push_str(&format!(
            "!!! RESERVED BITS SET: {:#x} ({}). They must be written as zero; this value cannot be written as it is.\n",
            d.reserved_set,
            reserved_fields(info, d.reserved_set)
        ));
    }
    if d.beyond_width != 0 {
        out.push_str(&format!(
            "!!! BITS ABOVE THE {}-BIT REGISTER SET: {:#x}.\n",
            info.width, d.beyond_width
        ));
    }
    if d.ignored_set != 0 {
        out.push_str(&format!(
            "note: ignored bits set: {:#x} (hardware reads them as zero)\n",
            d.ignored_set
        ));
    }
    out
}

/// A field's bit ranges, most significant first, as JSON: `[{"msb": 35, "lsb": 32}, ...]`.
fn ranges_json(ranges: &[(u32, u32)]) -> Value {
    ranges
        .iter()
        .map(|&(msb, lsb)| json!({"msb": msb, "lsb": lsb}))
        .collect()
}

/// "bit 50 (rsv), bits 62:61 (rsv)".
fn reserved_fields(info: &RegisterInfo, bits: u64) -> String {
    info.fields
        .iter()
        .filter(|f| f.access.is_reserved() && f.mask() & bits != 0)
        .map(|f| {
            if f.msb == f.lsb {
                format!("bit {} ({})", f.lsb, f.access.as_str())
            } else {
                format!("bits {}:{} ({})", f.msb, f.lsb, f.access.as_str())
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn decoded_json(
    d: &Decoded,
    extra: serde_json::Map<String, Value>,
    core: Option<&str>,
    aux: Option<pmu_regs::AuxMsr>,
) -> String {
    let mut m = serde_json::Map::new();
    m.insert("register".into(), json!(d.register.name));
    m.insert("value".into(), json!(d.raw));
    m.insert("value_hex".into(), json!(hex(d.raw, d.register.width)));
    m.insert(
        "fields".into(),
        Value::Array(
            d.fields
                .iter()
                .map(|f| {
                    let mut j = json!({"name": f.name, "msb": f.msb, "lsb": f.lsb, "access": f.access.as_str(), "value": f.value, "value_hex": format!("{:#x}", f.value), "meaning": f.meaning});
                    // A field of several bit ranges lists them all; msb and lsb are its lowest.
                    if !f.split.is_empty() {
                        j["ranges"] = ranges_json(f.split);
                    }
                    j
                })
                .collect(),
        ),
    );
    m.insert("reserved_bits_set".into(), json!(d.reserved_set));
    m.insert(
        "reserved_bits_set_hex".into(),
        json!(format!("{:#x}", d.reserved_set)),
    );
    m.insert("ignored_bits_set".into(), json!(d.ignored_set));
    m.insert(
        "ignored_bits_set_hex".into(),
        json!(format!("{:#x}", d.ignored_set)),
    );
    let event = event_of(d, core, aux);
    m.insert("event".into(), json!(event.map(|e| e.name)));
    if event.is_some_and(|e| e.experimental) {
        m.insert("experimental".into(), json!(true));
    }
    m.extend(extra);
    format!(
        "{}\n",
        serde_json::to_string_pretty(&Value::Object(m)).expect("JSON values serialise")
    )
}

fn header(found: &Found, value: u64) -> String {
    let info = found.info;
    let name = found.address.map_or(info.name, |a| a.name);
    let place = found
        .address
        .map(|a| format!(", {}", location_text(&a.location)))
        .unwrap_or_default();
    format!(
        "{name} = {} ({}-bit{place})\n",
        hex(value, info.width),
        info.width
    )
}

/// The event a control value selects, by its event list (`UNC_H_REQUESTS.READS`; for a
/// core PMU's control, processor `core`'s own list first): select, umask, extension bit, the
/// counter mask, invert, edge and any-thread bits and the uncore masks (unit-mask extension,
/// port and traffic-class masks) the event sets must all match, and so must its auxiliary
/// MSR: `aux` where the caller knows it (`encode event=NAME`), none otherwise, so a control
/// that many offcore events share is not named as the first of them.
fn event_of(
    d: &Decoded,
    core: Option<&str>,
    aux: Option<pmu_regs::AuxMsr>,
) -> Option<&'static EventInfo> {
    let info = d.register;
    let sel = info.role(Role::Event)?.extract(d.raw);
    let get = |role: Role| info.role(role).map(|f| f.extract(d.raw));
    codec::events_for(info, core).into_iter().find(|e| {
        u64::from(e.code) == sel
            && get(Role::Umask).is_none_or(|u| u == u64::from(e.umask))
            && get(Role::EventExt).is_none_or(|x| x == u64::from(e.ext_sel))
            && get(Role::Threshold).is_none_or(|x| x == u64::from(e.threshold))
            && get(Role::Invert).is_none_or(|x| x == u64::from(e.invert))
            && get(Role::Edge).is_none_or(|x| x == u64::from(e.edge))
            && get(Role::AnyThread).is_none_or(|x| x == u64::from(e.any_thread))
            && get(Role::UmaskExt).is_none_or(|x| x == u64::from(e.umask_ext))
            && get(Role::PortMask).is_none_or(|x| x == u64::from(e.port_mask))
            && get(Role::FcMask).is_none_or(|x| x == u64::from(e.fc_mask))
            && e.aux == aux
    })
}

fn event_line(d: &Decoded, core: Option<&str>, aux: Option<pmu_regs::AuxMsr>) -> String {
    // A control that is all zero selects nothing yet, whatever event 0 may be.
    (d.raw != 0)
        .then(|| event_of(d, core, aux))
        .flatten()
        .map(|e| {
            let experimental = if e.experimental {
                " (experimental: from Intel's experimental list, whose counts Intel has not validated)"
            } else {
                ""
            };
            format!("event: {}{experimental}\n", e.name)
        })
        .unwrap_or_default()
}

/// A register by name, by MSR number (`0x186`), or, for a name two processors share, the
/// one this machine has (`detected`).
pub fn resolve(register: &str, detected: Option<&str>) -> Result<Found, Failure> {
    let name = register.trim();
    if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        let address = u32::from_str_radix(hex, 16)
            .map_err(|_| Failure::usage(format!("`{register}` is not an MSR number (0x186)")))?;
        let found: Vec<Found> = PROCESSORS
            .iter()
            .flat_map(|p| p.units.iter())
            .flat_map(|u| u.registers.iter().copied())
            .flat_map(|info| {
                info.known_addresses()
                    .iter()
                    .filter(move |a| a.location == Location::Msr(address))
                    .map(move |a| Found {
                        info,
                        address: Some(a),
                    })
            })
            .collect();
        let here: Vec<Found> = found
            .iter()
            .copied()
            .filter(|f| detected.is_none_or(|p| f.info.processor == p))
            .collect();
        return match (found.len(), here.len()) {
            (0, _) => Err(Failure::usage(format!(
                "no register in the specs is at MSR {address:#X}; `pmu list` shows every register \
                 and its address (pmu reads only registers it can decode)"
            ))),
            (1, _) => Ok(found[0]),
            (_, 1) => Ok(here[0]),
            _ => Err(Failure::usage(format!(
                "MSR {address:#X} is {}; name one of them",
                found
                    .iter()
                    .map(|f| format!(
                        "{}:{}",
                        f.info.processor,
                        f.address.map_or(f.info.name, |a| a.name)
                    ))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ))),
        };
    }
    if let (Some(p), false) = (detected, name.contains(':')) {
        if let Ok(f) = lookup::find(&format!("{p}:{name}")) {
            return Ok(f);
        }
    }
    Ok(lookup::find(name)?)
}

/// Value-only output: one field (by name or bit range) or the whole value, bare hex (as
/// rdmsr prints it) or decimal.
fn value_only(d: &Decoded, show: &ValueArgs) -> Result<String, Failure> {
    let value = match &show.field {
        None => d.raw,
        Some(f) => {
            let range = f
                .split_once(':')
                .map_or(Some((f.as_str(), f.as_str())), Some);
            let bits = range.and_then(|(m, l)| {
                Some((m.trim().parse::<u32>().ok()?, l.trim().parse::<u32>().ok()?))
            });
            match bits {
                Some((msb, lsb)) if msb >= lsb && msb < d.register.width => {
                    let width = msb - lsb + 1;
                    let mask = if width >= 64 {
                        u64::MAX
                    } else {
                        (1 << width) - 1
                    };
                    (d.raw >> lsb) & mask
                }
                Some(_) => {
                    return Err(Failure::usage(format!(
                        "-f {f}: give MSB:LSB with MSB >= LSB, inside the {}-bit register",
                        d.register.width
                    )))
                }
                None => match d
                    .fields
                    .iter()
                    .find(|x| x.name.eq_ignore_ascii_case(f.trim()))
                {
                    Some(x) => x.value,
                    None => {
                        return Err(Failure::usage(format!(
                            "{} has no field {f}; its fields are {}, or give bits as MSB:LSB",
                            d.register.name,
                            d.fields
                                .iter()
                                .map(|x| x.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )))
                    }
                },
            }
        }
    };
    Ok(if show.decimal {
        value.to_string()
    } else {
        format!("{value:x}")
    })
}

/// `pmu decode`.
pub fn decode(register: &str, value: &str, show: &ValueArgs, json_out: bool) -> Out {
    let found = resolve(register, None)?;
    let raw = grammar::number(value)?;
    let d = codec::decode(found.info, raw);
    if show.wanted() {
        return Ok(format!("{}\n", value_only(&d, show)?));
    }
    if json_out {
        return Ok(decoded_json(&d, Default::default(), None, None));
    }
    if d.reserved_set != 0 {
        warn(&format!(
            "{}: reserved bits {:#x} are set",
            register.trim(),
            d.reserved_set
        ));
    }
    Ok(format!(
        "{}{}{}",
        header(&found, raw),
        event_line(&d, None, None),
        decoded_table(&d)
    ))
}

/// Says on stderr, once per event and run, that `event=NAME` names an experimental event
/// (from Intel's experimental list): it is programmed like any other, and its counts may be
/// wrong. Standard output stays the value alone, for scripts.
pub fn note_if_experimental(info: &RegisterInfo, name: &str, core: Option<&str>) {
    static SAID: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let Some(e) = codec::named_event(info, name, core).filter(|e| e.experimental) else {
        return;
    };
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if !said.contains(&e.name) {
        said.push(e.name);
        use std::io::Write;
        // As `warn`: a closed stderr is no reason to fail.
        let _ = writeln!(
            std::io::stderr(),
            "note: {} is experimental: it comes from Intel's experimental event list, whose counts Intel has not validated",
            e.name
        );
    }
}

/// `pmu encode`. `event=NAME` may name a core event of `processor` (by default, the
/// processor /proc/cpuinfo under `root` names). With `show`, only the value (or a field).
pub fn encode(
    register: &str,
    fields: &[String],
    (processor, root): (Option<&str>, Option<&std::path::Path>),
    show: &ValueArgs,
    json_out: bool,
) -> Out {
    let core = match processor_named(processor)? {
        Some(p) => Some(p),
        None => detect::detected(false, root),
    };
    // The named (or detected) processor also picks among registers several processors share.
    let found = resolve(register, core)?;
    let assignments = grammar::assignments(found.info, fields)?;
    let raw = codec::encode_for(found.info, found.info.reset, &assignments, core)?;
    for (key, value) in &assignments {
        if key == "event" {
            note_if_experimental(found.info, value, core);
        }
    }
    let aux = codec::aux_for(found.info, &assignments, core);
    let d = codec::decode(found.info, raw);
    // The value alone (`-x`, `-d`, `-f`), for `wrmsr -p0 0x186 $(pmu encode ... -x)`.
    if show.wanted() {
        return Ok(format!("{}\n", value_only(&d, show)?));
    }
    if json_out {
        let mut extra = serde_json::Map::new();
        if let Some(a) = aux {
            extra.insert(
                "aux_msr".into(),
                json!({"register": a.register, "address": a.address,
                       "address_hex": format!("{:#x}", a.address), "value": a.value,
                       "value_hex": format!("{:#x}", a.value)}),
            );
        }
        return Ok(decoded_json(&d, extra, core, aux));
    }
    Ok(format!(
        "{}{}{}{}",
        header(&found, raw),
        event_line(&d, core, aux),
        aux_line(aux),
        decoded_table(&d)
    ))
}

/// The auxiliary MSR an encoded event needs besides the control, and its value, as a line
/// of `encode`'s output (empty where it needs none).
fn aux_line(aux: Option<pmu_regs::AuxMsr>) -> String {
    aux.map(|a| {
        format!(
            "aux MSR: {} ({:#x}) = {:#x} (program it too: the event counts nothing meaningful without it)\n",
            a.register, a.address, a.value
        )
    })
    .unwrap_or_default()
}

/// A register instance with an address, or why there is none.
fn instance(
    register: &str,
    args: &PlaceArgs,
) -> Result<(&'static RegisterInfo, &'static AddressInfo, Found), Failure> {
    let cpu = (!args.sim)
        .then(|| detect::read(args.root.as_deref()))
        .flatten();
    let found = resolve(register, cpu.as_ref().and_then(|c| c.uncore_spec()))?;
    if !args.sim {
        detect::check(args.root.as_deref(), register.trim(), found.info.processor)?;
    }
    let name = found.address.map_or(found.info.name, |a| a.name);
    match found.info.space {
        pmu_regs::Space::Pci if args.cpu.is_some() => {
            return Err(Failure::usage(format!(
                "--cpu does not apply to {name}: it is in PCI configuration space; choose it \
                 with --socket or --device"
            )))
        }
        pmu_regs::Space::Msr if args.device.is_some() => {
            return Err(Failure::usage(format!(
                "--device does not apply to {name}: it is an MSR; choose it with --cpu or \
                 --socket"
            )))
        }
        _ => {}
    }
    match (found.address, found.info.addresses) {
        (Some(a), _) => Ok((found.info, a, found)),
        (None, Addresses::Unknown(reason)) => Err(BackendError::AddressUnknown {
            register: found.info.name,
            reason,
        }
        .into()),
        (None, Addresses::Known(addrs)) => {
            let mut names: Vec<&str> = addrs.iter().map(|a| a.name).take(6).collect();
            if addrs.len() > 6 {
                names.push("...");
            }
            Err(UsageError::NeedsInstance {
                name: register.trim().to_string(),
                instances: names.join(", "),
            }
            .into())
        }
    }
}

fn place_text(place: Place) -> String {
    match place {
        Place::Cpu(c) => format!("CPU {c}"),
        Place::Device(b) => format!("device {b}"),
        Place::Mmio(a) => format!("address {a:#x}"),
    }
}

fn place_json(place: Place) -> Value {
    match place {
        Place::Cpu(c) => json!({"cpu": c}),
        Place::Device(b) => json!({"device": b.to_string()}),
        Place::Mmio(a) => json!({"physical_address": format!("{a:#x}")}),
    }
}

/// The processor a register belongs to (what `--sim` simulates).
fn processor_of(info: &RegisterInfo) -> &'static pmu_regs::ProcessorInfo {
    PROCESSORS
        .iter()
        .copied()
        .find(|p| p.id == info.processor)
        .expect("every register's processor is in the metadata")
}

/// The machine `args` name for `info`'s processor, refusing a --cpu or --socket it does not
/// have, as `watch` does (where the topology can be read: a tree without one is still reached
/// by CPU number). The simulator refuses them itself, in its own words.
fn machine_at(args: &PlaceArgs, info: &RegisterInfo) -> Result<Machine, Failure> {
    let machine = args.machine_for(processor_of(info))?;
    if !args.sim && machine.topology().is_ok() {
        machine.check_place(args.cpu, args.socket)?;
    }
    Ok(machine)
}

/// `pmu read`.
pub fn read(register: &str, all: bool, show: &ValueArgs, args: &PlaceArgs, json_out: bool) -> Out {
    let (info, addr, found) = instance(register, args)?;
    let machine = machine_at(args, info)?;
    if all {
        return read_all(&machine, info, addr, show, args, json_out);
    }
    let place = machine.place(info, addr, &args.at()?)?;
    let raw = machine.read(&Resolved {
        info,
        address: addr,
        place,
    })?;
    let d = codec::decode(info, raw);
    if show.wanted() {
        return Ok(format!("{}\n", value_only(&d, show)?));
    }
    if json_out {
        let mut extra = serde_json::Map::new();
        extra.insert("instance".into(), json!(addr.name));
        extra.insert("place".into(), place_json(place));
        return Ok(decoded_json(&d, extra, None, None));
    }
    let head = header(&found, raw);
    Ok(format!(
        "{} on {}\n{}{}",
        head.trim_end(),
        place_text(place),
        event_line(&d, None, None),
        decoded_table(&d)
    ))
}

/// Every place `read -a` reads `info` at: each CPU for a core register, each socket for an
/// uncore one.
fn everywhere(topology: &Topology, info: &RegisterInfo, args: &PlaceArgs) -> Vec<PlaceArgs> {
    if info.unit == "CORE" {
        let cpus = topology.cpus().into_iter();
        cpus.map(|(cpu, _)| PlaceArgs {
            cpu: Some(cpu),
            ..args.clone()
        })
        .collect()
    } else {
        let sockets = topology.sockets();
        sockets
            .map(|s| PlaceArgs {
                socket: Some(s),
                ..args.clone()
            })
            .collect()
    }
}

/// `pmu read -a`: a core register on every CPU, an uncore register on every socket.
fn read_all(
    machine: &Machine,
    info: &'static RegisterInfo,
    addr: &'static AddressInfo,
    show: &ValueArgs,
    args: &PlaceArgs,
    json_out: bool,
) -> Out {
    let topology = machine.topology()?;
    let wheres = everywhere(&topology, info, args);
    let mut lines = String::new();
    let mut items = Vec::new();
    let mut t = Table::new(&["SOCKET", "PLACE", "VALUE", "FIELDS SET"]);
    for w in &wheres {
        let place = machine.place(info, addr, &w.at()?)?;
        let raw = machine.read(&Resolved {
            info,
            address: addr,
            place,
        })?;
        let d = codec::decode(info, raw);
        let socket = match place {
            Place::Cpu(c) => topology.socket_of(c),
            Place::Device(_) | Place::Mmio(_) => w.socket,
        };
        if show.wanted() {
            lines.push_str(&value_only(&d, show)?);
            lines.push('\n');
        } else if json_out {
            let mut extra = serde_json::Map::new();
            extra.insert("instance".into(), json!(addr.name));
            extra.insert("place".into(), place_json(place));
            extra.insert("socket".into(), json!(socket));
            items.push(
                serde_json::from_str::<Value>(&decoded_json(&d, extra, None, None))
                    .expect("valid JSON"),
            );
        } else {
            let set: Vec<String> = d
                .fields
                .iter()
                .filter(|f| f.value != 0)
                .map(|f| format!("{}={:#x}", f.name, f.value))
                .collect();
            t.row(vec![
                socket.map_or("?".into(), |s| s.to_string()),
                place_text(place),
                hex(raw, info.width),
                set.join(" "),
            ]);
        }
    }
    if show.wanted() {
        return Ok(lines);
    }
    if json_out {
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(items)).expect("JSON values serialise")
        ));
    }
    Ok(format!(
        "{} ({})\n{}",
        addr.name,
        location_text(&addr.location),
        t.render()
    ))
}

/// `pmu write`: refused, before anything is written, when a session holds the register's
/// box (its exit would put its own value back over this one); the register is read back.
pub fn write(
    register: &str,
    values: &[String],
    dry_run: bool,
    args: &PlaceArgs,
    json_out: bool,
) -> Out {
    let (info, addr, found) = instance(register, args)?;
    let whole = whole_value(addr, values)?;
    if info.writable_mask == 0 {
        return Err(Failure::usage(format!(
            "{} is read-only: none of its fields can be written",
            addr.name
        )));
    }
    let machine = machine_at(args, info)?;
    let place = machine.place(info, addr, &args.at()?)?;
    let reg = Resolved {
        info,
        address: addr,
        place,
    };
    let (old, new) = match whole {
        Some(v) => (None, v),
        None => {
            let assignments = grammar::assignments(info, values)?;
            let current = machine.read(&reg)?;
            // Reserved bits read back are never written back.
            let base = current & !info.reserved_mask;
            (Some(current), codec::encode(info, base, &assignments)?)
        }
    };
    // Refused here, before anything is written, for the same reasons the write would be.
    machine.check(&reg, new)?;
    let d = codec::decode(info, new);
    let back = if dry_run {
        None
    } else {
        let _lease = claim_for_write(&machine, &reg, args)?;
        machine.write(&reg, new)?;
        Some(machine.read(&reg)?)
    };
    let differs = back.and_then(|b| read_back_differs(info, new, b));
    if let Some(text) = &differs {
        warn(text);
    }
    if json_out {
        let mut extra = serde_json::Map::new();
        extra.insert("instance".into(), json!(addr.name));
        extra.insert("place".into(), place_json(place));
        extra.insert("previous".into(), json!(old));
        extra.insert("previous_hex".into(), json!(old.map(|o| format!("{o:#x}"))));
        extra.insert("written".into(), json!(!dry_run));
        extra.insert("read_back".into(), json!(back));
        extra.insert("read_back_differs".into(), json!(differs.is_some()));
        return Ok(decoded_json(&d, extra, None, None));
    }
    let verb = if dry_run { "would write" } else { "wrote" };
    let head = header(&found, new);
    let was = old
        .map(|o| format!(" (was {})", hex(o, info.width)))
        .unwrap_or_default();
    Ok(format!(
        "{verb} {} on {}{was}\n{}",
        head.trim_end(),
        place_text(place),
        decoded_table(&d)
    ))
}

/// The one whole value among `values`, `None` for field=value pairs, or a usage error for a
/// mixture.
fn whole_value(addr: &AddressInfo, values: &[String]) -> Result<Option<u64>, Failure> {
    let bare: Vec<&String> = values.iter().filter(|v| !v.contains('=')).collect();
    match (values, bare.as_slice()) {
        ([v], [_]) => Ok(Some(grammar::number(v)?)),
        (_, []) => Ok(None),
        _ => Err(Failure::usage(format!(
            "give one whole value (write {} 0x400001) or field=value pairs (ev_sel=0x02 \
             en=1), not {}",
            addr.name,
            values.join(" ")
        ))),
    }
}

/// Claims, for the length of the write, the PMU a counting session on `reg`'s box would
/// hold: a write under a running `watch` is refused naming it. Registers of no box are
/// written without a claim.
fn claim_for_write(
    machine: &Machine,
    reg: &Resolved,
    args: &PlaceArgs,
) -> Result<Option<Lease>, Failure> {
    let processor = processor_of(reg.info);
    let (cpu, socket) = match reg.place {
        Place::Cpu(c) => {
            let topology = machine.topology().ok();
            (c, topology.and_then(|t| t.socket_of(c)).or(args.socket))
        }
        Place::Device(bdf) => {
            let devices = machine.devices(processor).ok();
            let on_bus = devices.and_then(|d| {
                d.sockets
                    .iter()
                    .position(|s| s.segment == bdf.segment && s.bus == bdf.bus)
            });
            (0, on_bus.map(|s| s as u32).or(args.socket))
        }
        Place::Mmio(_) => (0, args.socket),
    };
    let socket = socket.unwrap_or(0) as usize;
    match Pmu::of_register(Boxes::of(processor), reg.address, cpu, socket) {
        Some(pmu) => Ok(Some(machine.claim(&pmu)?)),
        None => Ok(None),
    }
}

/// What to say when `back`, read after writing `wrote`, differs in the bits that hold what
/// is written (read/write fields the hardware does not change by itself).
fn read_back_differs(info: &RegisterInfo, wrote: u64, back: u64) -> Option<String> {
    let stable: u64 = info
        .fields
        .iter()
        .filter(|f| f.access == pmu_regs::Access::Rw)
        .fold(0, |m, f| m | f.mask());
    let bits = (wrote ^ back) & stable;
    if bits == 0 {
        return None;
    }
    let fields: Vec<&str> = info
        .fields
        .iter()
        .filter(|f| f.mask() & bits != 0)
        .map(|f| f.name)
        .collect();
    Some(format!(
        "read {} back after writing {}: bits {bits:#x} ({}) did not take; the hardware may not \
         implement them, or something else changed them",
        hex(back, info.width),
        hex(wrote, info.width),
        fields.join(", ")
    ))
}
