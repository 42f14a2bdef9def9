//! The spec's contents as `pmu list` lists them: registers with their addresses, a summary
//! per unit, events with the counters that may count them and their settings, and derived
//! metrics; each as an aligned table or JSON, filtered by processor, unit and [`Pattern`].

use std::path::Path;

use pmu_regs::metrics::for_processor;
use pmu_regs::{Addresses, CounterInfo, EventInfo, Location, RegisterInfo, PROCESSORS};
use serde_json::{json, Value};

use crate::cmn::MeshEvent;
use crate::error::UsageError;
use crate::lookup::{
    matches, matching_units, nothing_selected, processor_named, selected_units, Pattern,
};
use crate::machine::Machine;
use crate::perf::{EventSources, PerfNames, SpecNames};
use crate::perfmon::{counter_bits as bits, settings_text, Descriptions};
use crate::report::register::{location_json, location_text, ranges_json};

/// What the listing says in place of the address of a register the discovery table places
/// (`<from-table>`): it has none of its own.
pub const TABLE_PLACED: &str = "placed by the discovery table";
use crate::report::table::TextTable;

/// A register as `pmu list` lists it: processor, unit, the register, the instance's name,
/// its address (or why it is unknown).
type Listed = (
    &'static str,
    &'static str,
    &'static RegisterInfo,
    &'static str,
    Option<Location>,
    Option<&'static str>,
);

/// A register's JSON object in `pmu list --json`.
fn register_json((pid, unit, r, name, loc, unknown): &Listed) -> Value {
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
    let fields = r.fields.iter().map(|f| {
        let mut j = json!({"name": f.name, "lsb": f.lsb, "msb": f.msb, "access": f.access.as_str(), "reset": f.reset, "reset_hex": format!("{:#x}", f.reset)});
        if !f.split.is_empty() {
            j["ranges"] = ranges_json(f.split);
        }
        j
    });
    m.insert("fields".into(), Value::Array(fields.collect()));
    Value::Object(m)
}

/// `pmu list`: the registers of the processors and units selected (all where none is
/// named), each instance with its address, those `pattern` matches where it is given.
pub fn registers(
    processor: Option<&str>,
    unit: Option<&str>,
    pattern: Option<&Pattern>,
    json_out: bool,
) -> Result<String, UsageError> {
    let mut rows: Vec<Listed> = Vec::new();
    for (pid, u) in selected_units(processor, unit)? {
        for r in u.registers {
            match r.addresses {
                Addresses::Known(addrs) => {
                    for a in addrs {
                        rows.push((pid, u.name, *r, a.name, Some(a.location), None));
                    }
                }
                Addresses::Unknown(reason) => {
                    rows.push((pid, u.name, *r, r.name, None, Some(reason)))
                }
                Addresses::FromTable(_) => {
                    rows.push((pid, u.name, *r, r.name, None, Some(TABLE_PLACED)))
                }
            }
        }
    }
    if let Some(pattern) = pattern {
        rows.retain(|(_, _, r, name, _, _)| pattern.matches_any(&[name, r.name, r.description]));
    }
    if json_out {
        let items: Vec<Value> = rows.iter().map(register_json).collect();
        return Ok(crate::report::pretty_json(items));
    }
    let mut t =
        TextTable::new(&["REGISTER", "PROCESSOR", "UNIT", "ADDRESS", "WIDTH"]).right_align(&[4]);
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

/// A row of `list --summary`: processor, unit, layouts, registers, events, boxes.
pub type SummaryRow<'a> = (&'a str, &'a str, usize, usize, usize, String);

/// `pmu list --summary`: registers (layouts and instances) and events per unit.
pub fn summary(
    processor: Option<&str>,
    unit: Option<&str>,
    json_out: bool,
) -> Result<String, UsageError> {
    // Per processor: its units, then its own core event list, whose registers are the core
    // PMU's unit (`architectural` CORE) and so counted there, not here (0 layouts).
    let mut rows: Vec<SummaryRow<'_>> = Vec::new();
    // Which rows are a processor's core event list (by index), for the JSON.
    let mut core_rows: Vec<usize> = Vec::new();
    // Which rows are a processor with nothing to list (by index), for the JSON.
    let mut empty_rows: Vec<usize> = Vec::new();
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
                // The event list's, the kernel's event of each free-running counter, and a
                // mesh node type's events (`<node-events>`).
                u.events.len()
                    + u.pmu.map_or(0, |m| {
                        m.counters.iter().filter(|c| c.perf_event.is_some()).count()
                    })
                    + node_events(pid, u.name),
                box_rule(u),
            ));
        }
        if let Some(core) = p.core_events {
            if matches(processor, &[p.id, p.module]) && matches(unit, &[core.unit]) {
                core_rows.push(rows.len());
                rows.push((p.id, core.unit, 0, 0, core.events.len(), "-".into()));
            }
        }
        // A processor with neither units nor a core event list of its own (Diamond Rapids,
        // whose uncore only its discovery tables place) still has its row, with nothing in it.
        if p.units.is_empty()
            && p.core_events.is_none()
            && unit.is_none()
            && matches(processor, &[p.id, p.module])
        {
            empty_rows.push(rows.len());
            rows.push((p.id, "-", 0, 0, 0, "-".into()));
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
                if empty_rows.contains(&n) {
                    // A processor of the spec with no unit and no core event list.
                    v["no_units"] = json!(true);
                }
                v
            })
            .collect();
        return Ok(crate::report::pretty_json(items));
    }
    Ok(summary_table(&rows))
}

/// How many mesh node events (`<node-events>`, selected through a node's event-select
/// register) unit `unit` of `processor` gives.
fn node_events(processor: &str, unit: &str) -> usize {
    crate::cmn::NODE_EVENTS
        .iter()
        .filter(|n| n.select.processor == processor && n.select.unit == unit)
        .map(|n| n.events.len())
        .sum()
}

/// The summary's rows as a table, with a total row.
pub fn summary_table(rows: &[SummaryRow<'_>]) -> String {
    let mut t = TextTable::new(&[
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
pub fn box_rule(u: &pmu_regs::UnitInfo) -> String {
    let listed = u.instances.len();
    match u.pmu.and_then(|m| m.box_count).map(|b| b.rule) {
        None => listed.to_string(),
        Some(pmu_regs::BoxCountRule::SetBits(bits)) => {
            let fields: Vec<&str> = bits.iter().map(|b| b.qualified).collect();
            format!("{listed}:{}", fields.join("+"))
        }
        Some(pmu_regs::BoxCountRule::Value(b)) => format!("{listed}:={}", b.qualified),
        Some(pmu_regs::BoxCountRule::ValueMap(b, _)) => format!("{listed}:map({})", b.qualified),
        Some(pmu_regs::BoxCountRule::CpuidSetBits { active, .. }) => format!("{listed}:{active}"),
        Some(pmu_regs::BoxCountRule::CoresPerSocket) => format!("{listed}:cores"),
        Some(pmu_regs::BoxCountRule::Listed) => format!("{listed}:listed"),
        Some(pmu_regs::BoxCountRule::Devices) => format!("{listed}:devices"),
        Some(pmu_regs::BoxCountRule::Discovery) => format!("{listed}:discovery"),
    }
}

/// One event list `list --events` shows: (processor, unit, events).
pub type EventList = (&'static str, &'static str, &'static [&'static EventInfo]);

/// The event lists `list --events` shows: (processor, unit, events), every unit's own and
/// every processor's own core list (for the unit of its core PMU), in the model's order.
pub fn event_lists(
    processor: Option<&str>,
    unit: Option<&str>,
) -> Result<Vec<EventList>, UsageError> {
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

/// `pmu list --events`: the events of `lists` (see [`event_lists`]) whose name or description
/// `pattern` matches, as a table or JSON, with their descriptions from Intel's event list
/// where `descriptions` are given. A pattern that matches no event is refused, as every
/// list refuses a selection that matches nothing (a usage error, exit status 2).
pub fn events(
    lists: &[EventList],
    descriptions: Option<&Descriptions>,
    pattern: Option<&Pattern>,
    json_out: bool,
) -> Result<String, UsageError> {
    let describe = |p: &str, u: &str, e: &EventInfo| -> Option<String> {
        descriptions.and_then(|d| d.of(p, u, e)).map(str::to_string)
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
            let counters = free_running(pid, unit)
                .into_iter()
                .filter(|c| {
                    pattern.is_none_or(|p| p.matches_any(&[c.perf_event.map_or("", |e| e.name)]))
                })
                .collect();
            (pid, unit, kept, counters)
        })
        .collect();
    // The mesh node events of the units listed (`<node-events>`), by name.
    let nodes: Vec<MeshEvent> = crate::cmn::all_events()
        .filter(|m| {
            lists
                .iter()
                .any(|l| l.0 == m.processor() && l.1 == m.node.select.unit)
        })
        .filter(|m| pattern.is_none_or(|p| p.matches_any(&[m.event.name])))
        .collect();
    if pattern.is_some()
        && nodes.is_empty()
        && lists
            .iter()
            .all(|(_, _, e, c)| e.is_empty() && c.is_empty())
    {
        return Err(UsageError::Refused(
            "no event name or description matches the pattern; `*` and `?` glob, a pattern \
             without them matches anywhere (`pmu list --events cas`), and `pmu list --events` \
             lists them all"
                .into(),
        ));
    }
    if json_out {
        return Ok(events_json(&lists, &nodes, &describe));
    }
    let describe = descriptions.is_some().then_some(&describe as &Describe);
    Ok(events_table(&lists, &nodes, describe))
}

/// One unit's events as listed: processor id, unit, the events kept, and the kernel's
/// events of its free-running counters kept.
type UnitEvents<'a> = (
    &'a str,
    &'a str,
    Vec<&'static EventInfo>,
    Vec<&'static CounterInfo>,
);

/// The free-running counters of unit `unit` of processor `pid` that the kernel's perf driver
/// publishes an event for (`uncore_imc_free_running/data_read/`): counted by `list --summary`
/// beside the unit's event list, and listed by `list --events` after it.
fn free_running(pid: &str, unit: &str) -> Vec<&'static CounterInfo> {
    PROCESSORS
        .iter()
        .filter(|p| p.id == pid)
        .flat_map(|p| p.units.iter())
        .filter(|u| u.name == unit)
        .filter_map(|u| u.pmu)
        .flat_map(|m| m.counters.iter())
        .filter(|c| c.perf_event.is_some())
        .collect()
}

/// The description of an event of a unit of a processor, from a perfmon file.
type Describe<'a> = dyn Fn(&str, &str, &EventInfo) -> Option<String> + 'a;

/// `lists` as a JSON array, one object per event.
fn events_json(lists: &[UnitEvents], nodes: &[MeshEvent], describe: &Describe) -> String {
    let items: Vec<Value> = lists
        .iter()
        .flat_map(|(pid, unit, events, counters)| {
            let free = counters.iter().filter_map(move |c| {
                let e = c.perf_event?;
                Some(json!({"name": e.name, "processor": pid, "unit": unit, "code": 0xff, "code_hex": "0xff", "umask": e.umask, "umask_hex": format!("{:#04x}", e.umask), "counters": [c.number], "free_running": true, "scale": e.scale, "scale_unit": e.unit, "description": c.event}))
            });
            events.iter().map(move |e| {
                let counters = bits(e.counters);
                let ht_off = (e.counters_ht_off != 0).then(|| bits(e.counters_ht_off));
                json!({"name": e.name, "processor": pid, "unit": unit, "code": e.code, "code_hex": format!("{:#04x}", e.code), "umask": e.umask, "umask_hex": format!("{:#04x}", e.umask), "ext_sel": e.ext_sel, "counters": counters, "counters_ht_off": ht_off, "filters": e.filters, "threshold": e.threshold, "invert": e.invert, "edge": e.edge, "any_thread": e.any_thread, "umask_ext": e.umask_ext, "port_mask": e.port_mask, "fc_mask": e.fc_mask, "experimental": e.experimental, "aux_msr": e.aux.map(|a| json!({"register": a.register, "address": a.address, "value": a.value})), "description": describe(pid, unit, e)})
            })
            .chain(free)
        })
        .chain(nodes.iter().map(|m| {
            json!({"name": m.event.name, "processor": m.processor(), "unit": m.node.select.unit, "node_type": m.node.node_type, "event_id": m.event.id, "filter": m.event.filter, "occupid": m.event.occupid, "perf_terms": m.terms(), "mesh_node_event": true})
        }))
        .collect();
    crate::report::pretty_json(items)
}

/// `lists` as a table: a SETTINGS column where some event has settings, STATUS where some is
/// experimental, DESCRIPTION with `describe` (a perfmon file).
fn events_table(lists: &[UnitEvents], nodes: &[MeshEvent], describe: Option<&Describe>) -> String {
    // Several processors' lists share unit and event names: each row then names its own.
    let mut processors: Vec<&str> = lists
        .iter()
        .filter(|(_, _, e, c)| !e.is_empty() || !c.is_empty())
        .map(|l| l.0)
        .collect();
    processors.dedup();
    let any =
        |f: &dyn Fn(&EventInfo) -> bool| lists.iter().any(|(_, _, es, _)| es.iter().any(|e| f(e)));
    let with_settings = any(&|e| !settings_text(e).is_empty());
    // A free-running counter's row says so in STATUS.
    let with_status =
        any(&|e| e.experimental) || lists.iter().any(|l| !l.3.is_empty()) || !nodes.is_empty();
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
    for (pid, unit, events, counters) in lists {
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
        for c in counters {
            t.row(free_running_row(
                c,
                &shown,
                with_settings,
                describe.is_some(),
            ));
        }
        for m in nodes
            .iter()
            .filter(|m| m.processor() == *pid && m.node.select.unit == *unit)
        {
            t.row(node_event_row(m, &shown, with_settings, describe.is_some()));
        }
    }
    t.render()
}

/// A mesh node event's row: its event id as CODE, the DTM's four local counters (slot n feeds
/// counter n), the select field its filter goes into, `node 0xT` (the node type) in STATUS.
fn node_event_row(m: &MeshEvent, shown: &str, settings: bool, described: bool) -> Vec<String> {
    let mut row = vec![
        m.event.name.into(),
        shown.to_string(),
        format!("{:#04x}", m.event.id),
        String::new(),
        "0-3".into(),
        m.event.filter.unwrap_or_default().into(),
    ];
    if settings {
        row.push(match m.event.filter {
            Some(_) => format!("occupid={:#x}", m.event.occupid),
            None => String::new(),
        });
    }
    row.push(format!("node {:#x}", m.node.node_type));
    if described {
        row.push(String::new());
    }
    row
}

/// A free-running counter's row: the kernel's event name (event select 0xff and the umask
/// that picks the counter, as the kernel's driver encodes it), its counter, `free-running`
/// in STATUS, and what it counts as the description.
fn free_running_row(c: &CounterInfo, shown: &str, settings: bool, described: bool) -> Vec<String> {
    let e = c.perf_event.expect("listed for its perf event");
    let mut row = vec![
        e.name.into(),
        shown.to_string(),
        "0xff".into(),
        format!("{:#04x}", e.umask),
        c.number.to_string(),
        String::new(),
    ];
    if settings {
        row.push(String::new());
    }
    row.push("free-running".into());
    if described {
        row.push(c.event.unwrap_or_default().into());
    }
    row
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
        let more = crate::machine::ranges(&bits(e.counters_ht_off));
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

/// `pmu list --metrics`: every metric of the processors (or of one), with its unit, level,
/// scope, groups and description.
pub fn metrics(
    processor: Option<&str>,
    pattern: Option<&Pattern>,
    json_out: bool,
) -> Result<String, UsageError> {
    let only = processor_named(processor)?;
    let mut rows = Vec::new();
    for p in PROCESSORS.iter().filter(|p| only.is_none_or(|o| o == p.id)) {
        for m in for_processor(p.id) {
            // Like `perf list PATTERN`: the name, category, groups or description.
            let texts: Vec<&str> = [m.name, m.category, m.description]
                .into_iter()
                .chain(m.groups.iter().copied())
                .collect();
            if pattern.is_none_or(|pat| pat.matches_any(&texts)) {
                rows.push((p.id, m));
            }
        }
    }
    if rows.is_empty() {
        return Err(UsageError::Refused(match pattern {
            Some(_) => "no metric matches the pattern; `pmu list --metrics` lists them all".into(),
            None => format!(
                "{} has no metrics; `pmu list --metrics` lists every processor's",
                processor.unwrap_or("the spec")
            ),
        }));
    }
    if json_out {
        let items: Vec<_> = rows
            .iter()
            .map(|(p, m)| {
                json!({"processor": p, "metric": m.name, "unit": m.unit, "category": m.category,
                       "groups": m.groups, "level": m.level, "parent": m.parent,
                       "scope": m.scope.as_str(), "description": m.description,
                       "formula": m.formula,
                       "events": m.events.iter().map(|e| e.name).collect::<Vec<_>>()})
            })
            .collect();
        return Ok(crate::report::pretty_json(items));
    }
    let mut t = TextTable::new(&[
        "PROCESSOR",
        "METRIC",
        "UNIT",
        "LEVEL",
        "SCOPE",
        "GROUPS",
        "DESCRIPTION",
    ]);
    for (p, m) in &rows {
        t.row(vec![
            p.to_string(),
            m.name.to_string(),
            m.unit.to_string(),
            m.level.to_string(),
            m.scope.as_str().to_string(),
            m.groups.join(";"),
            if m.description.is_empty() {
                format!("= {}", crate::metrics::spelled_out(m))
            } else {
                m.description.to_string()
            },
        ]);
    }
    Ok(t.render())
}

/// `pmu list --backends`: for every box, its kernel PMU and whether perf (the PMUs of `s`) or
/// the raw backends reach it on the machine under `base`, and so which `--backend auto` uses.
pub fn backends(base: &Path, s: &EventSources, json_out: bool) -> String {
    let msr_dev = base.join("dev/cpu/0/msr").exists();
    let machine = Machine::hardware(base);
    let mut rows = Vec::new();
    for p in PROCESSORS {
        let pci_found = machine.devices(p).is_ok();
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
        return crate::report::pretty_json(items);
    }
    let mut t = TextTable::new(&[
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
    t.render()
}
