//! `pmu list --events`: each unit's events, with the counters that may count them, their
//! settings, and descriptions from Intel's perfmon files.

use pmu_regs::{EventInfo, PROCESSORS};
use serde_json::{json, Value};

use crate::detect::processor_named;
use crate::failure::Out;
use crate::pattern::Pattern;
use crate::pattern::{matches, selected_units};
use crate::show::per_cpu_unit;
use crate::table::TextTable;
use crate::Failure;

/// Event descriptions from an Intel perfmon JSON file: by name, and by (code, umask) for
/// the architectural events, whose names in the spec are the SDM's.
pub(crate) struct Descriptions {
    /// The processor the list describes: its descriptions go to its events only, since
    /// processors share event names (`UNC_H_REQUESTS.READS` on E5-2600 v2, v3 and v4).
    processor: &'static str,
    by_name: std::collections::HashMap<String, String>,
    by_code: std::collections::HashMap<(u64, u64), String>,
}

/// The processor Intel's perfmon file `path` describes: the one whose code name its file
/// name starts with (`haswellx_uncore.json`: Haswell-X, `ivytown_core.json`: IvyTown), which
/// `named` (`--processor`) must agree with; `named` alone for a renamed file.
pub(crate) fn perfmon_processor(
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
pub(crate) fn perfmon_file_example() -> String {
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
                per_cpu_unit(processor, unit)
                    .then(|| self.by_code.get(&(u64::from(e.code), u64::from(e.umask))))
                    .flatten()
            })
            .map(String::as_str)
    }
}

/// One event list `list --events` shows: (processor, unit, events).
pub(crate) type EventList = (&'static str, &'static str, &'static [&'static EventInfo]);

/// The event lists `list --events` shows: (processor, unit, events), every unit's own and
/// every processor's own core list (for the unit of its core PMU), in the model's order.
pub(crate) fn selected_event_lists(
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
pub(crate) fn bits(mask: u32) -> Vec<u32> {
    (0..32).filter(|n| mask >> n & 1 != 0).collect()
}

/// What an event sets beyond its select and umask (`cmask=4 inv edge any`; an uncore event's
/// `umask_ext=0xc001fe`, `port_mask=0x1 fc_mask=0x7`), or "".
pub(crate) fn settings_text(e: &EventInfo) -> String {
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
    let describe = |p: &str, u: &str, e: &EventInfo| -> Option<String> {
        descriptions
            .as_ref()
            .and_then(|d| d.of(p, u, e))
            .map(str::to_string)
    };
    // With a pattern, only the events whose name or description it matches.
    let lists: Vec<UnitEvents> = lists
        .iter()
        .map(|&(pid, unit, events)| {
            let kept = events
                .iter()
                .copied()
                .filter(|e| {
                    pattern.is_none_or(|p| {
                        p.matches_any(&[e.name, &describe(pid, unit, e).unwrap_or_default()])
                    })
                })
                .collect();
            (pid, unit, kept)
        })
        .collect();
    if json_out {
        return Ok(events_json(&lists, &describe));
    }
    let describe = descriptions.is_some().then_some(&describe as &Describe);
    Ok(events_table(&lists, describe))
}

/// One unit's events as listed: processor id, unit, the events kept.
type UnitEvents<'a> = (&'a str, &'a str, Vec<&'static EventInfo>);

/// The description of an event of a unit of a processor, from a perfmon file.
type Describe<'a> = dyn Fn(&str, &str, &EventInfo) -> Option<String> + 'a;

/// `lists` as a JSON array, one object per event.
fn events_json(lists: &[UnitEvents], describe: &Describe) -> String {
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
    format!(
        "{}\n",
        serde_json::to_string_pretty(&Value::Array(items)).expect("JSON values serialise")
    )
}

/// `lists` as a table: a SETTINGS column where some event has settings, STATUS where some is
/// experimental, DESCRIPTION with `describe` (a perfmon file).
fn events_table(lists: &[UnitEvents], describe: Option<&Describe>) -> String {
    // Several processors' lists share unit and event names: each row then names its own.
    let mut processors: Vec<&str> = lists
        .iter()
        .filter(|(_, _, e)| !e.is_empty())
        .map(|l| l.0)
        .collect();
    processors.dedup();
    let any =
        |f: &dyn Fn(&EventInfo) -> bool| lists.iter().any(|(_, _, es)| es.iter().any(|e| f(e)));
    let with_settings = any(&|e| !settings_text(e).is_empty());
    let with_status = any(&|e| e.experimental);
    let mut header = vec!["EVENT", "UNIT", "CODE", "UMASK", "COUNTERS", "FILTERS"];
    for (on, column) in [
        (with_settings, "SETTINGS"),
        (with_status, "STATUS"),
        (describe.is_some(), "DESCRIPTION"),
    ] {
        if on {
            header.push(column);
        }
    }
    let mut t = TextTable::new(&header);
    for (pid, unit, events) in lists {
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
        for e in events {
            let mut row = event_row(e, &shown);
            if with_settings {
                row.push(settings_text(e));
            }
            if with_status {
                row.push(if e.experimental { "experimental" } else { "" }.into());
            }
            if let Some(describe) = describe {
                row.push(describe(pid, unit, e).unwrap_or_default());
            }
            t.row(row);
        }
    }
    t.render()
}

/// An event's row up to its filters: name, unit as `shown`, code, umask, counters.
fn event_row(e: &EventInfo, shown: &str) -> Vec<String> {
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
    vec![
        e.name.into(),
        shown.to_string(),
        code,
        format!("{:#04x}", e.umask),
        counters,
        e.filters.into(),
    ]
}
