//! `list`, `decode`, `encode`, `read` and `write`.

use pmu_regs::{Addresses, Location, RegisterInfo, PROCESSORS};
use pmu_runtime::codec::{self, Decoded};
use pmu_runtime::lookup::{self, Found};
use pmu_runtime::machine::Resolved;
use pmu_runtime::{Place, UsageError};
use serde_json::{json, Value};

use crate::table::Table;
use crate::{Failure, PlaceArgs};

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
        } => format!("PCI 8086:{device_id:04x} {device:02x}.{function} +{offset:#X}"),
    }
}

fn location_json(loc: Option<&Location>) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    match loc {
        Some(Location::Msr(a)) => {
            m.insert("address".into(), json!(a));
        }
        Some(Location::Pci {
            device_id,
            device,
            function,
            offset,
        }) => {
            m.insert("address".into(), json!(offset));
            m.insert("offset".into(), json!(offset));
            m.insert("device_id".into(), json!(device_id));
            m.insert("device".into(), json!(device));
            m.insert("function".into(), json!(function));
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
pub fn list(processor: Option<&str>, unit: Option<&str>, json_out: bool) -> Out {
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
        let processors: Vec<&str> = PROCESSORS.iter().map(|p| p.id).collect();
        let units: Vec<&str> = PROCESSORS
            .iter()
            .flat_map(|p| p.units.iter().map(|u| u.name))
            .collect();
        return Err(UsageError::BadValue {
            text: format!(
                "{}{}",
                processor.unwrap_or(""),
                unit.map(|u| format!(" {u}")).unwrap_or_default()
            )
            .trim()
            .to_string(),
            expected: format!(
                "a processor ({}) and unit ({})",
                processors.join(", "),
                units.join(", ")
            ),
        }
        .into());
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
                            .map(|f| json!({"name": f.name, "lsb": f.lsb, "msb": f.msb, "access": f.access.as_str(), "reset": f.reset}))
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

/// The units `list` selects, or a usage error naming what exists.
fn selected_units(
    processor: Option<&str>,
    unit: Option<&str>,
) -> Result<Vec<(&'static str, &'static pmu_regs::UnitInfo)>, Failure> {
    let units: Vec<_> = PROCESSORS
        .iter()
        .filter(|p| matches(processor, &[p.id, p.module]))
        .flat_map(|p| {
            p.units
                .iter()
                .filter(|u| matches(unit, &[u.name, u.module]))
                .map(move |u| (p.id, *u))
        })
        .collect();
    if units.is_empty() {
        let processors: Vec<&str> = PROCESSORS.iter().map(|p| p.id).collect();
        let all: Vec<&str> = PROCESSORS
            .iter()
            .flat_map(|p| p.units.iter().map(|u| u.name))
            .collect();
        return Err(UsageError::BadValue {
            text: format!("{} {}", processor.unwrap_or(""), unit.unwrap_or(""))
                .trim()
                .to_string(),
            expected: format!(
                "a processor ({}) and unit ({})",
                processors.join(", "),
                all.join(", ")
            ),
        }
        .into());
    }
    Ok(units)
}

/// `pmu list --events`.
pub fn list_events(processor: Option<&str>, unit: Option<&str>, json_out: bool) -> Out {
    let units = selected_units(processor, unit)?;
    if json_out {
        let items: Vec<Value> = units
            .iter()
            .flat_map(|(pid, u)| {
                u.events.iter().map(move |e| {
                    let counters: Vec<u32> = (0..32).filter(|n| e.can_count_on(*n)).collect();
                    json!({"name": e.name, "processor": pid, "unit": u.name, "code": e.code, "umask": e.umask, "ext_sel": e.ext_sel, "counters": counters, "filters": e.filters})
                })
            })
            .collect();
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(items)).expect("JSON values serialise")
        ));
    }
    let mut t = Table::new(&["EVENT", "UNIT", "CODE", "UMASK", "COUNTERS", "FILTERS"]);
    for (_, u) in &units {
        for e in u.events {
            let counters: Vec<String> = (0..32)
                .filter(|n| e.can_count_on(*n))
                .map(|n| n.to_string())
                .collect();
            let code = if e.ext_sel {
                format!("{:#04x}+ext", e.code)
            } else {
                format!("{:#04x}", e.code)
            };
            t.row(vec![
                e.name.into(),
                u.name.into(),
                code,
                format!("{:#04x}", e.umask),
                counters.join(","),
                e.filters.into(),
            ]);
        }
    }
    Ok(t.render())
}

/// `pmu list --summary`: registers (layouts and instances) and events per unit.
pub fn list_summary(processor: Option<&str>, unit: Option<&str>, json_out: bool) -> Out {
    let units = selected_units(processor, unit)?;
    let rows: Vec<(&str, &str, usize, usize, usize)> = units
        .iter()
        .map(|(pid, u)| {
            let instances: usize = u
                .registers
                .iter()
                .map(|r| r.known_addresses().len().max(1))
                .sum();
            (*pid, u.name, u.registers.len(), instances, u.events.len())
        })
        .collect();
    if json_out {
        let items: Vec<Value> = rows
            .iter()
            .map(|(p, u, l, i, e)| json!({"processor": p, "unit": u, "layouts": l, "registers": i, "events": e}))
            .collect();
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(items)).expect("JSON values serialise")
        ));
    }
    let mut t = Table::new(&["PROCESSOR", "UNIT", "LAYOUTS", "REGISTERS", "EVENTS"])
        .right_align(&[2, 3, 4]);
    let (mut tl, mut ti, mut te) = (0, 0, 0);
    for (p, u, l, i, e) in &rows {
        t.row(vec![
            p.to_string(),
            u.to_string(),
            l.to_string(),
            i.to_string(),
            e.to_string(),
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
    ]);
    Ok(t.render())
}

fn decoded_table(d: &Decoded) -> String {
    let mut t = Table::new(&["BITS", "FIELD", "ACCESS", "VALUE", "MEANING"]);
    for f in &d.fields {
        let bits = if f.msb == f.lsb {
            f.lsb.to_string()
        } else {
            format!("{}:{}", f.msb, f.lsb)
        };
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

fn decoded_json(d: &Decoded, extra: serde_json::Map<String, Value>) -> String {
    let mut m = serde_json::Map::new();
    m.insert("register".into(), json!(d.register.name));
    m.insert("value".into(), json!(d.raw));
    m.insert("value_hex".into(), json!(hex(d.raw, d.register.width)));
    m.insert(
        "fields".into(),
        Value::Array(
            d.fields
                .iter()
                .map(|f| json!({"name": f.name, "msb": f.msb, "lsb": f.lsb, "access": f.access.as_str(), "value": f.value, "meaning": f.meaning}))
                .collect(),
        ),
    );
    m.insert("reserved_bits_set".into(), json!(d.reserved_set));
    m.insert("ignored_bits_set".into(), json!(d.ignored_set));
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

/// `pmu decode`.
pub fn decode(register: &str, value: &str, json_out: bool) -> Out {
    let found = lookup::find(register)?;
    let raw = codec::parse_number(value)?;
    let d = codec::decode(found.info, raw);
    if json_out {
        return Ok(decoded_json(&d, Default::default()));
    }
    if d.reserved_set != 0 {
        eprintln!(
            "pmu: warning: {register}: reserved bits {:#x} are set",
            d.reserved_set
        );
    }
    Ok(format!("{}{}", header(&found, raw), decoded_table(&d)))
}

/// `pmu encode`.
pub fn encode(register: &str, fields: &[String], json_out: bool) -> Out {
    let found = lookup::find(register)?;
    let assignments = codec::parse_assignments(fields)?;
    let raw = codec::encode(found.info, found.info.reset, &assignments)?;
    let d = codec::decode(found.info, raw);
    if json_out {
        return Ok(decoded_json(&d, Default::default()));
    }
    Ok(format!("{}{}", header(&found, raw), decoded_table(&d)))
}

fn place_text(place: Place) -> String {
    match place {
        Place::Cpu(c) => format!("CPU {c}"),
        Place::Device(b) => format!("device {b}"),
    }
}

fn place_json(place: Place) -> Value {
    match place {
        Place::Cpu(c) => json!({"cpu": c}),
        Place::Device(b) => json!({"device": b.to_string()}),
    }
}

/// The header line of a register instance with a value.
fn instance_header(reg: &Resolved, value: u64) -> String {
    header(
        &Found {
            info: reg.info,
            address: Some(reg.address),
        },
        value,
    )
}

/// `pmu read`.
pub fn read(register: &str, args: &PlaceArgs, json_out: bool) -> Out {
    let machine = args.machine()?;
    let reg = machine.resolve(register, &args.at()?)?;
    let raw = machine.read(&reg)?;
    let d = codec::decode(reg.info, raw);
    if json_out {
        let mut extra = serde_json::Map::new();
        extra.insert("instance".into(), json!(reg.address.name));
        extra.insert("place".into(), place_json(reg.place));
        return Ok(decoded_json(&d, extra));
    }
    let head = instance_header(&reg, raw);
    Ok(format!(
        "{} on {}\n{}",
        head.trim_end(),
        place_text(reg.place),
        decoded_table(&d)
    ))
}

/// `pmu write`.
pub fn write(
    register: &str,
    values: &[String],
    dry_run: bool,
    args: &PlaceArgs,
    json_out: bool,
) -> Out {
    // Names and values are checked before the machine is touched.
    let found = lookup::find(register)?;
    let whole = match values {
        [v] if !v.contains('=') => Some(codec::parse_number(v)?),
        _ => None,
    };
    let assignments = match whole {
        Some(_) => Vec::new(),
        None => codec::parse_assignments(values)?,
    };
    if found.info.writable_mask == 0 {
        return Err(UsageError::ReadOnlyField {
            register: found.info.name,
            field: "(every field)",
            access: "read-only",
        }
        .into());
    }
    let machine = args.machine()?;
    let reg = machine.resolve(register, &args.at()?)?;
    let info = reg.info;
    let (old, new) = match whole {
        Some(v) => (None, v),
        None => {
            let current = machine.read(&reg)?;
            // Reserved bits read back are never written back.
            let base = current & !info.reserved_mask;
            (Some(current), codec::encode(info, base, &assignments)?)
        }
    };
    // Refused here, before anything is written, for the same reasons the write would be.
    machine.check(&reg, new)?;
    if !dry_run {
        machine.write(&reg, new)?;
    }
    let d = codec::decode(info, new);
    if json_out {
        let mut extra = serde_json::Map::new();
        extra.insert("instance".into(), json!(reg.address.name));
        extra.insert("place".into(), place_json(reg.place));
        extra.insert("previous".into(), json!(old));
        extra.insert("written".into(), json!(!dry_run));
        return Ok(decoded_json(&d, extra));
    }
    let verb = if dry_run { "would write" } else { "wrote" };
    let head = instance_header(&reg, new);
    let was = old
        .map(|o| format!(" (was {})", hex(o, info.width)))
        .unwrap_or_default();
    Ok(format!(
        "{verb} {} on {}{was}\n{}",
        head.trim_end(),
        place_text(reg.place),
        decoded_table(&d)
    ))
}
