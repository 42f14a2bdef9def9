//! A unit's Rust module, written as plain code: per register a type alias over `Reg32`/`Reg64`,
//! an empty layout enum with the field table and masks as literals, one `const fn` getter and
//! `with_` builder per field, typed address constants and the metadata static.
//!
//! Everything the compiler would otherwise compute per register (masks, reset value, access
//! kinds, descriptions) is computed here and written as a literal, and what every register
//! shares (`RESET`, `from_bits`, `Debug`, `Register`, `Clone`, ...) is written once in
//! `templates/support.rs`, generic over the layout. That keeps the generated crate cheap to
//! compile (BENCHMARKS.md) while the source reads on its own.

use std::fmt::Write;

use super::rust::{enum_ident, field_ident, lit, prose, variant_ident, HEADER};
use crate::model::*;
use crate::validate::snake_case;

/// A hex literal for a reset value, mask or address.
fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// Text as one line: whitespace runs (newlines included) become one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The narrowest unsigned type name that holds `width` bits.
fn int_name(width: u32) -> &'static str {
    match width {
        0..=8 => "u8",
        9..=16 => "u16",
        17..=32 => "u32",
        _ => "u64",
    }
}

/// `SCREAMING_SNAKE` name of a layout's metadata static.
pub fn info_ident(reg: &Register) -> String {
    format!("{}_INFO", snake_case(&reg.type_name).to_ascii_uppercase())
}

/// The name of a field's partial value list constant (values that do not name every value).
fn values_const(reg: &Register, f: &Field) -> String {
    format!(
        "{}_{}_VALUES",
        snake_case(&reg.type_name).to_ascii_uppercase(),
        snake_case(&f.name.replace("{n}", "")).to_ascii_uppercase()
    )
}

/// The value type of a field's accessors: `bool`, the narrowest integer, or its enum.
fn value_type(reg: &Register, f: &Field) -> String {
    if let Some(rep) = &f.repeat {
        return if rep.element_width == 1 {
            "bool".into()
        } else {
            int_name(rep.element_width).into()
        };
    }
    if f.has_enum() {
        return enum_ident(reg, f);
    }
    if f.width() == 1 {
        return "bool".into();
    }
    int_name(f.width()).into()
}

/// A value of the field's type as the `u64` the shared helpers take.
fn widen(f: &Field, v: &str) -> String {
    if f.has_enum() {
        format!("{v}.bits() as u64")
    } else if f.repeat.is_none() && f.width() > 32 {
        v.to_string()
    } else {
        format!("{v} as u64")
    }
}

/// The field's enum, when its values name every value, or its partial value list.
fn values_text(reg: &Register, f: &Field, out: &mut String) {
    if f.has_enum() {
        let ty = enum_ident(reg, f);
        let _ = writeln!(
            out,
            "/// Values of `{}.{}` ({}).\n#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n#[repr(u8)]\npub enum {ty} {{",
            reg.name,
            f.name,
            f.bits_phrase()
        );
        for v in &f.values {
            let _ = writeln!(
                out,
                "    /// {}\n    {} = {},",
                one_line(&v.description),
                variant_ident(&v.name),
                v.value
            );
        }
        let _ = writeln!(
            out,
            "}}\n\nimpl {ty} {{\n    /// The values with their names and meanings, for tools.\n    pub const VALUES: &'static [ValueInfo] = &[\n{}    ];\n",
            value_infos(&f.values)
        );
        // Every value is named, so the last arm only ever sees the last value.
        let (last, rest) = f.values.split_last().expect("an enum has values");
        let arms: String = rest
            .iter()
            .map(|v| format!("{} => Self::{}, ", v.value, variant_ident(&v.name)))
            .collect();
        let _ = writeln!(
            out,
            "    /// The variant for a field value.\n    pub const fn from_bits(v: u8) -> Self {{\n        match v {{ {arms}_ => Self::{} }}\n    }}\n\n    /// The field value.\n    pub const fn bits(self) -> u8 {{\n        self as u8\n    }}\n}}\n",
            variant_ident(&last.name)
        );
    } else {
        let _ = writeln!(
            out,
            "/// Named values of `{}.{}`.\nconst {}: &[ValueInfo] = &[\n{}];\n",
            reg.name,
            f.name,
            values_const(reg, f),
            value_infos(&f.values)
        );
    }
}

fn value_infos(values: &[EnumValue]) -> String {
    values
        .iter()
        .map(|v| {
            format!(
                "        ValueInfo {{ value: {}, name: {}, description: {} }},\n",
                v.value,
                lit(&v.name),
                lit(&one_line(&v.description))
            )
        })
        .collect()
}

/// A field's getter, `with_` builder and, for a value type wider than the field,
/// `try_with_`: each one documented line.
fn accessors_text(reg: &Register, f: &Field, out: &mut String) {
    let id = field_ident(f);
    let ty = value_type(reg, f);
    let (msb, lsb) = (f.msb, f.lsb);
    let summary = format!(
        "`{}` ({}, {}, reset {})",
        f.name,
        f.bits_phrase(),
        f.access.as_str(),
        hex(f.reset)
    );
    let doc = one_line(&prose(f.shown_description()));
    if let Some(rep) = &f.repeat {
        let (ew, n) = (rep.element_width, rep.max_count);
        let read = format!("get_element(self.raw64(), {lsb}, {ew}, {n}, n)");
        let get = if ty == "bool" {
            format!("{read} != 0")
        } else {
            format!("{read} as {ty}")
        };
        if f.access.is_readable() {
            let _ = writeln!(
                out,
                "    /// Element `n` of {summary}: {doc} Panics if `n` is {n} or more.\n    #[inline] pub const fn {id}(self, n: u32) -> {ty} {{ {get} }}"
            );
        }
        if f.access.is_writable() {
            let _ = writeln!(
                out,
                "    /// This value with element `n` of `{}` set to `v`. Panics if `n` is {n} or more.\n    #[inline] pub const fn with_{id}(self, n: u32, v: {ty}) -> Self {{ self.with_raw64(set_element(self.raw64(), {lsb}, {ew}, {n}, n, v as u64)) }}",
                f.name
            );
        }
        return;
    }
    if f.access.is_readable() {
        let read = format!("get_bits(self.raw64(), {msb}, {lsb})");
        let get = if f.has_enum() {
            format!("{ty}::from_bits({read} as u8)")
        } else if ty == "bool" {
            format!("{read} != 0")
        } else if ty == "u64" {
            read
        } else {
            format!("{read} as {ty}")
        };
        let _ = writeln!(
            out,
            "    /// {summary}: {doc}\n    #[inline] pub const fn {id}(self) -> {ty} {{ {get} }}"
        );
    }
    if f.access.is_writable() {
        let v = widen(f, "v");
        // A value type wider than the field (`int_name`) can hold values that do not fit.
        let narrow = !f.has_enum() && !matches!(f.width(), 1 | 8 | 16 | 32 | 64);
        let panics = if narrow {
            format!(
                " Panics if `v` does not fit in {} bits (a compile error in const context); `try_with_{id}` returns an error instead.",
                f.width()
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "    /// This value with `{}` ({}) set to `v`.{panics}\n    #[inline] pub const fn with_{id}(self, v: {ty}) -> Self {{ self.with_raw64(set_bits(self.raw64(), {msb}, {lsb}, {v})) }}",
            f.name,
            f.bits_phrase(),
        );
        if narrow {
            let _ = writeln!(
                out,
                "    /// This value with `{}` set to `v`, or an error if `v` does not fit in {} bits.\n    #[inline] pub const fn try_with_{id}(self, v: {ty}) -> Result<Self, FieldTooWide> {{ match try_set_bits(self.raw64(), {msb}, {lsb}, {v}, {}, {}) {{ Ok(raw) => Ok(self.with_raw64(raw)), Err(e) => Err(e) }} }}",
                f.name,
                f.width(),
                lit(&reg.name),
                lit(&f.name)
            );
        }
    }
}

/// One field's metadata, on one line.
fn field_info(reg: &Register, f: &Field) -> String {
    let ident = if f.access.is_placeholder() {
        f.name.to_string()
    } else {
        field_ident(f)
    };
    let values = if f.values.is_empty() || f.access.is_placeholder() {
        "&[]".to_string()
    } else if f.has_enum() {
        format!("{}::VALUES", enum_ident(reg, f))
    } else {
        values_const(reg, f)
    };
    let repeat = match &f.repeat {
        None => "None".to_string(),
        Some(r) => format!(
            "Some(RepeatInfo {{ element_width: {}, max_count: {}, count_cpuid: {} }})",
            r.element_width,
            r.max_count,
            opt_lit(r.count_cpuid.as_deref())
        ),
    };
    let (role, counters) = match &f.role {
        None => ("None".to_string(), "&[]".to_string()),
        Some(r) => (
            format!("Some(Role::{})", r.role.variant()),
            format!(
                "&[{}]",
                r.counters
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    };
    format!(
        "        FieldInfo {{ name: {}, ident: {}, lsb: {}, msb: {}, access: Access::{}, reset: {}, description: {}, values: {values}, repeat: {repeat}, role: {role}, counters: {counters} }},\n",
        lit(&f.name),
        lit(&ident),
        f.lsb,
        f.msb,
        f.access.variant(),
        hex(f.reset),
        lit(&one_line(f.shown_description()))
    )
}

fn opt_lit(s: Option<&str>) -> String {
    s.map_or("None".into(), |s| format!("Some({})", lit(s)))
}

/// An address as a typed constant's constructor.
fn location_ctor(loc: &Location, name: &str) -> String {
    match loc {
        Location::Msr(m) => format!("Msr::new({}, {})", msr_hex(*m), lit(name)),
        Location::Pci {
            device_id,
            device,
            function,
            offset,
        } => format!(
            "PciRegister::new(0x{device_id:04X}, {device}, {function}, 0x{offset:03X}, {})",
            lit(name)
        ),
    }
}

/// `0xC90`: MSR numbers as the guides print them.
fn msr_hex(m: u32) -> String {
    format!("{m:#X}").replace("0X", "0x")
}

/// An address as metadata.
fn location_info(loc: &Location) -> String {
    match loc {
        Location::Msr(m) => format!("Location::Msr({})", msr_hex(*m)),
        Location::Pci {
            device_id,
            device,
            function,
            offset,
        } => format!(
            "Location::Pci {{ device_id: 0x{device_id:04X}, device: {device}, function: {function}, offset: 0x{offset:03X} }}"
        ),
    }
}

/// One register: its enums and value lists, the value type and its layout, accessors,
/// addresses and metadata.
fn register_text(proc: &Processor, unit: &Unit, reg: &Register, out: &mut String) {
    let ty = &reg.type_name;
    let layout = format!("{ty}Layout");
    let info = info_ident(reg);
    let (value, bits) = if reg.width == 32 {
        ("Reg32", 32)
    } else {
        ("Reg64", 64)
    };
    for f in reg
        .fields
        .iter()
        .filter(|f| !f.values.is_empty() && !f.access.is_placeholder())
    {
        values_text(reg, f, out);
    }

    // The type, documented as the guide describes the register.
    let space = reg.space.as_str().to_ascii_uppercase();
    let count = if reg.count > 1 {
        format!(", {} per instance", reg.count)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "/// {}\n///\n/// `{}`: {bits}-bit {space} register of the {} unit ({}){count}. Fields, masks and sources: [`{layout}`].",
        one_line(&prose(&reg.description)),
        reg.name,
        unit.name,
        proc.id
    );
    for n in &reg.notes {
        let _ = writeln!(
            out,
            "///\n/// **{}** ({}): {}",
            one_line(&prose(&n.title)),
            n.kind,
            one_line(&prose(&n.text))
        );
    }
    if let Addresses::Unknown { reason } = &reg.addresses {
        let _ = writeln!(
            out,
            "///\n/// **Address unknown:** {}",
            one_line(&prose(reason))
        );
    }
    let _ = writeln!(out, "pub type {ty} = {value}<{layout}>;\n");

    // The layout: the facts, as literals.
    let _ = writeln!(
        out,
        "/// The layout of [`{ty}`] (`{}`): its fields, masks and metadata.\n///\n/// Sources:",
        reg.name
    );
    for s in &reg.sources {
        let _ = writeln!(out, "/// - {}", one_line(&prose(&s.citation())));
    }
    let _ = writeln!(
        out,
        "pub enum {layout} {{}}\n\nimpl Layout for {layout} {{\n    const INFO: &'static RegisterInfo = &{info};\n    const FIELDS: &'static [FieldInfo] = &[\n{}    ];\n    const RESET: u64 = {};\n    const RESERVED_MASK: u64 = {};\n    const IGNORED_MASK: u64 = {};\n    const WRITABLE_MASK: u64 = {};\n}}\n",
        reg.fields.iter().map(|f| field_info(reg, f)).collect::<String>(),
        hex(reg.reset),
        hex(reg.reserved_mask()),
        hex(reg.ignored_mask()),
        hex(reg.writable_mask()),
    );

    // The accessors.
    let mut fns = String::new();
    for f in reg.fields.iter().filter(|f| !f.access.is_placeholder()) {
        accessors_text(reg, f, &mut fns);
    }
    if !fns.is_empty() {
        let _ = writeln!(out, "impl {ty} {{\n{fns}}}\n");
    }

    // The addresses: typed constants per instance, and the metadata.
    let addr_ty = match reg.space {
        Space::Msr => format!("Msr<{ty}>"),
        Space::Pci => format!("PciRegister<{ty}>"),
    };
    let one_ty = if reg.count > 1 {
        format!("[{addr_ty}; {}]", reg.count)
    } else {
        addr_ty
    };
    let mut address_infos = String::new();
    if let Addresses::Known(addrs) = &reg.addresses {
        for (ii, inst) in unit.instances.iter().enumerate() {
            let mine: Vec<&Address> = addrs.iter().filter(|a| a.instance == ii).collect();
            let ctors: Vec<String> = mine
                .iter()
                .map(|a| location_ctor(&a.location, &reg.address_name(unit, a)))
                .collect();
            let value = if reg.count > 1 {
                format!("[{}]", ctors.join(", "))
            } else {
                ctors.concat()
            };
            let _ = writeln!(
                out,
                "/// `{}` of instance {}.\npub const {}: {one_ty} = {value};",
                reg.name,
                inst.name,
                reg.instance_name(inst),
            );
            for a in mine {
                let _ = writeln!(
                    address_infos,
                    "        AddressInfo {{ name: {}, instance: {}, index: {}, location: {}, source: {} }},",
                    lit(&reg.address_name(unit, a)),
                    lit(&inst.name),
                    a.index,
                    location_info(&a.location),
                    lit(&a.source)
                );
            }
        }
        if unit.instances.len() > 1 {
            let items: Vec<String> = unit
                .instances
                .iter()
                .map(|i| reg.instance_name(i))
                .collect();
            let _ = writeln!(
                out,
                "/// `{}` of every instance, in instance order.\npub const {}: [{one_ty}; {}] = [{}];",
                reg.name,
                reg.generic_name(),
                unit.instances.len(),
                items.join(", ")
            );
        }
        out.push('\n');
    }
    let addresses = match &reg.addresses {
        Addresses::Known(_) => format!("Addresses::Known(&[\n{address_infos}    ])"),
        Addresses::Unknown { reason } => format!("Addresses::Unknown({})", lit(reason)),
    };
    let sources: Vec<String> = reg.sources.iter().map(|s| lit(&s.citation())).collect();
    let notes: String = reg
        .notes
        .iter()
        .map(|n| {
            format!(
                "        NoteInfo {{ kind: {}, title: {}, text: {} }},\n",
                lit(&n.kind),
                lit(&n.title),
                lit(&n.text)
            )
        })
        .collect();
    let notes = if notes.is_empty() {
        "&[]".to_string()
    } else {
        format!("&[\n{notes}    ]")
    };
    let _ = writeln!(
        out,
        "static {info}: RegisterInfo = RegisterInfo {{\n    processor: {}, unit: {}, name: {}, type_name: {},\n    width: {bits}, space: Space::{}, count: {}, count_cpuid: {},\n    reset: {layout}::RESET, reserved_mask: {layout}::RESERVED_MASK, ignored_mask: {layout}::IGNORED_MASK, writable_mask: {layout}::WRITABLE_MASK,\n    description: {},\n    sources: &[{}],\n    addresses: {addresses},\n    fields: {layout}::FIELDS,\n    notes: {notes},\n}};\n",
        lit(&proc.id),
        lit(&unit.name),
        lit(&reg.name),
        lit(ty),
        match reg.space {
            Space::Msr => "Msr",
            Space::Pci => "Pci",
        },
        reg.count,
        opt_lit(reg.count_cpuid.as_deref()),
        lit(&one_line(&reg.description)),
        sources.join(", "),
    );
}

/// An event's facts as an `EventInfo` literal: the uncore units' and the core lists' events
/// alike.
pub fn event_info(e: &Event) -> String {
    let s = e.settings;
    format!(
        "EventInfo {{ name: {}, code: {:#04x}, umask: {:#04x}, ext_sel: {}, counters: {:#b}, filters: {}, threshold: {}, invert: {}, edge: {}, any_thread: {} }}",
        lit(&e.name),
        e.code,
        e.umask,
        e.ext_sel,
        e.counters,
        lit(&e.filters),
        s.threshold,
        s.invert,
        s.edge,
        s.any_thread
    )
}

/// The unit's events: a constant per event, and `with_event` on every counter control (a
/// register with an `ev_sel` field).
fn events_text(unit: &Unit, out: &mut String) {
    out.push_str("/// An event of this unit. Only this unit's counter controls take it (`with_event`), so\n/// an event of one unit cannot be programmed into another's counter.\n#[derive(Debug, Clone, Copy, PartialEq, Eq)]\npub struct Event(&'static EventInfo);\n\nimpl Event {\n");
    for e in &unit.events {
        let _ = writeln!(
            out,
            "    /// `{}`: event select {:#04x}, umask {:#04x}, counters {:#b} (bit n: counter n).\n    pub const {}: Event = Event(&{});",
            e.name,
            e.code,
            e.umask,
            e.counters,
            e.ident,
            event_info(e)
        );
    }
    let all: Vec<String> = unit
        .events
        .iter()
        .map(|e| format!("Event::{}", e.ident))
        .collect();
    let infos: Vec<String> = unit
        .events
        .iter()
        .map(|e| format!("Event::{}.0", e.ident))
        .collect();
    let _ = writeln!(
        out,
        "\n    /// Every event of the unit.\n    pub const ALL: &'static [Event] = &[{}];\n\n    /// The event's facts.\n    pub const fn info(self) -> &'static EventInfo {{\n        self.0\n    }}\n\n    /// Whether counter `n` may count it.\n    pub const fn can_count_on(self, n: u32) -> bool {{\n        self.0.can_count_on(n)\n    }}\n}}\n\nconst EVENT_INFOS: &[&EventInfo] = &[{}];\n",
        all.join(", "),
        infos.join(", ")
    );
    let has = |r: &Register, name: &str| r.fields.iter().any(|f| f.name.as_ref() == name);
    for r in unit.registers.iter().filter(|r| has(r, "ev_sel")) {
        let (ext, umask) = (has(r, "ev_sel_ext"), has(r, "umask"));
        let (what, body) = match (ext, umask) {
            (true, true) => (
                "its event select, umask and extension bit",
                "self.with_ev_sel(event.0.code).with_umask(event.0.umask).with_ev_sel_ext(event.0.ext_sel)",
            ),
            (false, true) => (
                "its event select and umask",
                "self.with_ev_sel(event.0.code).with_umask(event.0.umask)",
            ),
            (true, false) => (
                "its event select and extension bit (this box has no unit mask; the events it takes have umask 0)",
                "self.with_ev_sel(event.0.code).with_ev_sel_ext(event.0.ext_sel)",
            ),
            (false, false) => (
                "its event select (this box has no unit mask)",
                "self.with_ev_sel(event.0.code)",
            ),
        };
        let _ = writeln!(
            out,
            "impl {} {{\n    /// This value set to count `event`: {what}.\n    #[inline]\n    pub const fn with_event(self, event: Event) -> Self {{\n        {body}\n    }}\n}}\n",
            r.type_name
        );
    }
}

/// Emits one unit's module: its registers, events and metadata.
pub fn unit_module_text(proc: &Processor, unit: &Unit) -> String {
    let mut out = String::from(HEADER);
    let doc = format!(
        "{} ({}).\n\n{}\n\nInstances: {}.",
        prose(&unit.title),
        prose(&proc.name),
        prose(&unit.description),
        unit.instances
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for line in doc.lines() {
        if line.is_empty() {
            out.push_str("//!\n");
        } else {
            let _ = writeln!(out, "//! {line}");
        }
    }
    out.push_str("//!\n//! Per register: `pub type Name = Reg64<NameLayout>` (or `Reg32`), the layout with its\n//! fields and masks, a getter and a `with_` builder per field, the typed addresses of each\n//! instance, and the metadata static. What every register shares is in `support.rs`.\nuse crate::support::*;\n#[allow(unused_imports)]\nuse crate::structure::Role;\n");
    if super::core_events::is_core_unit(unit) {
        out.push_str("use crate::core_events::CoreEvent;\n");
    }
    out.push('\n');
    for reg in &unit.registers {
        register_text(proc, unit, reg, &mut out);
    }
    let events = if super::core_events::is_core_unit(unit) {
        super::core_events::unit_events_text(unit, &mut out);
        "EVENT_INFOS"
    } else if unit.events.is_empty() {
        "&[]"
    } else {
        events_text(unit, &mut out);
        "EVENT_INFOS"
    };
    let instances: Vec<String> = unit.instances.iter().map(|i| lit(&i.name)).collect();
    let infos: Vec<String> = unit
        .registers
        .iter()
        .map(|r| format!("        &{},\n", info_ident(r)))
        .collect();
    let pmu = super::structure::unit_pmu_ref(unit);
    let _ = write!(
        out,
        "/// Metadata of this unit and its registers.\npub static UNIT: UnitInfo = UnitInfo {{\n    processor: {},\n    name: {},\n    module: {},\n    title: {},\n    description: {},\n    instances: &[{}],\n    registers: &[\n{}    ],\n    events: {events},\n    pmu: {pmu},\n}};\n",
        lit(&proc.id),
        lit(&unit.name),
        lit(&unit.module),
        lit(&unit.title),
        lit(&unit.description),
        instances.join(", "),
        infos.concat()
    );
    out
}
