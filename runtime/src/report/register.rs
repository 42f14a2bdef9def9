//! A register value as the `pmu` command shows it (`decode`, `encode`, `read`, `write`): its
//! decoded fields as a table or JSON, the line naming it and where it is, the event it
//! selects. A program that decodes a value prints the same with these.

use pmu_regs::{Location, RegisterInfo};
use serde_json::{json, Value};

use crate::codec::{event_of, Decoded};
use crate::lookup::FoundRegister;
use crate::report::table::TextTable;

/// `v` in hex with `0x`, zero-padded to the digits of a `width`-bit register (`0x0000500f01`).
pub fn hex(v: u64, width: u32) -> String {
    format!("{v:#0w$x}", w = (width / 4) as usize + 2)
}

/// Where a register instance is, as `pmu list` shows it (`MSR 0xC10`, `PCI 0x3c46 (dev 16 fn 0)
/// offset 0xD8`).
pub fn location_text(loc: &Location) -> String {
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
        Location::SysReg(e) => format!("system register {e}"),
    }
}

/// Where a register instance is, as the members of its JSON object (`address`, `address_hex`,
/// and a PCI device's or a memory-mapped window's own numbers); `address: null` for none.
pub fn location_json(loc: Option<&Location>) -> serde_json::Map<String, Value> {
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
            m.extend(offset_json((*offset).into()));
            m.insert("device_id".into(), json!(device_id));
            m.insert("device".into(), json!(device));
            m.insert("function".into(), json!(function));
        }
        Some(Location::Mmio {
            controller,
            channel,
            offset,
        }) => {
            m.extend(offset_json((*offset).into()));
            m.insert("controller".into(), json!(controller));
            m.insert("channel".into(), json!(channel));
        }
        Some(Location::SysReg(e)) => {
            // Linux's sys_reg() value as the address, with the encoding's own numbers.
            let a = e.linux_encoding();
            m.insert("address".into(), json!(a));
            m.insert("address_hex".into(), json!(format!("{a:#x}")));
            m.insert("sysreg".into(), json!(e.to_string()));
            for (k, v) in [
                ("op0", e.op0),
                ("op1", e.op1),
                ("crn", e.crn),
                ("crm", e.crm),
                ("op2", e.op2),
            ] {
                m.insert(k.into(), json!(v));
            }
        }
        None => {
            m.insert("address".into(), Value::Null);
        }
    }
    m
}

/// An offset in a device or window as JSON members: `address` (and its hex) and `offset`.
fn offset_json(offset: u64) -> serde_json::Map<String, Value> {
    let m = json!({"address": offset, "address_hex": format!("{offset:#x}"), "offset": offset});
    m.as_object().cloned().unwrap_or_default()
}

/// A decoded value's fields as a table (bits, field, access, value, meaning), followed by a
/// warning for each kind of bit set that should not be (reserved, beyond the width, ignored).
pub fn decoded_table(d: &Decoded) -> String {
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
pub fn ranges_json(ranges: &[(u32, u32)]) -> Value {
    ranges
        .iter()
        .map(|&(msb, lsb)| json!({"msb": msb, "lsb": lsb}))
        .collect()
}

/// "bit 50 (rsv), bits 62:61 (rsv)".
pub fn reserved_fields(info: &RegisterInfo, bits: u64) -> String {
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

/// A decoded value as a pretty-printed JSON object: the register, the value, every field,
/// the reserved and ignored bits set, the event it selects (see [`crate::codec::event_of`]),
/// and the members of `extra`.
pub fn decoded_json(
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
    crate::report::pretty_json(m)
}

/// The line that heads a decoded value: `NAME = VALUE (WIDTH-bit, LOCATION)`.
pub fn header(found: &FoundRegister, value: u64) -> String {
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

/// `event: NAME` where the value selects a listed event (see [`crate::codec::event_of`]),
/// marked where the event is experimental; empty otherwise, and for an all-zero value.
pub fn event_line(d: &Decoded, core: Option<&str>, aux: Option<pmu_regs::AuxMsr>) -> String {
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

/// The auxiliary MSR an encoded event needs besides the control, and its value, as a line
/// of `encode`'s output (empty where it needs none).
pub fn aux_line(aux: Option<pmu_regs::AuxMsr>) -> String {
    aux.map(|a| {
        format!(
            "aux MSR: {} ({:#x}) = {:#x} (program it too: the event counts nothing meaningful without it)\n",
            a.register, a.address, a.value
        )
    })
    .unwrap_or_default()
}
