//! `pmu list --events`: each unit's events, with the counters that may count them, their
//! settings, and descriptions from Intel's perfmon files.

use pmu_regs::{EventInfo, PROCESSORS};
use pmu_runtime::perfmon::{counter_bits as bits, settings_text, Descriptions, PerfmonError};
use serde_json::{json, Value};

use crate::detect::processor_named;
use crate::failure::Out;
use crate::pattern::Pattern;
use crate::pattern::{matches, selected_units};
use crate::Failure;
use pmu_runtime::report::table::TextTable;

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
        .transpose()
        .map_err(failure)?;
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

/// A perfmon file's error as a failure: naming the wrong processor is a usage error.
fn failure(e: PerfmonError) -> Failure {
    if e.is_usage() {
        Failure::usage(e.to_string())
    } else {
        Failure::operation(e.to_string())
    }
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
