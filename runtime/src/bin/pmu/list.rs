//! `pmu list`: registers, a pattern search over registers and events, and a summary per unit.

use pmu_regs::{Addresses, Location, RegisterInfo, PROCESSORS};
use serde_json::{json, Value};

use crate::failure::Out;
use crate::list_events::list_events;
use crate::pattern::{matches, matching_units, nothing_selected, Pattern};
use crate::show::{location_json, location_text, ranges_json};
use crate::table::TextTable;
use crate::Failure;

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

/// `pmu list`.
pub fn list(
    processor: Option<&str>,
    unit: Option<&str>,
    pattern: Option<&Pattern>,
    json_out: bool,
) -> Out {
    let mut rows: Vec<Listed> = Vec::new();
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
        let items: Vec<Value> = rows.iter().map(register_json).collect();
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(items)).expect("JSON values serialise")
        ));
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
pub(crate) type SummaryRow<'a> = (&'a str, &'a str, usize, usize, usize, String);

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
pub(crate) fn summary_table(rows: &[SummaryRow<'_>]) -> String {
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
pub(crate) fn box_rule(u: &pmu_regs::UnitInfo) -> String {
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
