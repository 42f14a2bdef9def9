//! How a register value is shown, by `decode`, `encode`, `read` and `write`: the decoded
//! fields as a table or JSON, a value alone (`-f`, `-x`, `-d`), the register found by name.

use pmu_regs::{EventInfo, Location, RegisterInfo, Role, PROCESSORS};
use pmu_runtime::codec::{self, Decoded};
use pmu_runtime::lookup::{self, FoundRegister};
use serde_json::{json, Value};

use crate::table::TextTable;
use crate::{Failure, ValueArgs};

pub(crate) fn hex(v: u64, width: u32) -> String {
    format!("{v:#0w$x}", w = (width / 4) as usize + 2)
}

pub(crate) fn location_text(loc: &Location) -> String {
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

pub(crate) fn location_json(loc: Option<&Location>) -> serde_json::Map<String, Value> {
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

pub(crate) fn decoded_table(d: &Decoded) -> String {
    let mut t = TextTable::new(&["BITS", "FIELD", "ACCESS", "VALUE", "MEANING"]);
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
pub(crate) fn ranges_json(ranges: &[(u32, u32)]) -> Value {
    ranges
        .iter()
        .map(|&(msb, lsb)| json!({"msb": msb, "lsb": lsb}))
        .collect()
}

/// "bit 50 (rsv), bits 62:61 (rsv)".
pub(crate) fn reserved_fields(info: &RegisterInfo, bits: u64) -> String {
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

pub(crate) fn decoded_json(
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

pub(crate) fn header(found: &FoundRegister, value: u64) -> String {
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
pub(crate) fn event_of(
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

pub(crate) fn event_line(d: &Decoded, core: Option<&str>, aux: Option<pmu_regs::AuxMsr>) -> String {
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
pub fn resolve(register: &str, detected: Option<&str>) -> Result<FoundRegister, Failure> {
    let name = register.trim();
    if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        let address = u32::from_str_radix(hex, 16)
            .map_err(|_| Failure::usage(format!("`{register}` is not an MSR number (0x186)")))?;
        let found: Vec<FoundRegister> = PROCESSORS
            .iter()
            .flat_map(|p| p.units.iter())
            .flat_map(|u| u.registers.iter().copied())
            .flat_map(|info| {
                info.known_addresses()
                    .iter()
                    .filter(move |a| a.location == Location::Msr(address))
                    .map(move |a| FoundRegister {
                        info,
                        address: Some(a),
                    })
            })
            .collect();
        let here: Vec<FoundRegister> = found
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
pub(crate) fn value_only(d: &Decoded, show: &ValueArgs) -> Result<String, Failure> {
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

/// The auxiliary MSR an encoded event needs besides the control, and its value, as a line
/// of `encode`'s output (empty where it needs none).
pub(crate) fn aux_line(aux: Option<pmu_regs::AuxMsr>) -> String {
    aux.map(|a| {
        format!(
            "aux MSR: {} ({:#x}) = {:#x} (program it too: the event counts nothing meaningful without it)\n",
            a.register, a.address, a.value
        )
    })
    .unwrap_or_default()
}
