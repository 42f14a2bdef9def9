//! A unit's Rust module, written as plain code: per register a type alias over `Reg32`/`Reg64`,
//! an empty layout enum with the masks as literals, one `const fn` getter and `with_` builder
//! per field, and typed address constants; behind the `metadata` feature, the field table and
//! the metadata static.
//!
//! Everything the compiler would otherwise compute per register (masks, reset value, access
//! kinds, descriptions) is computed here and written as a literal, and what every register
//! shares (`RESET`, `from_bits`, `Debug`, `Register`, `Clone`, ...) is written once in
//! `templates/support.rs`, generic over the layout. That keeps the generated crate cheap to
//! compile (BENCHMARKS.md) while the source reads on its own.

use std::fmt::Write;

use super::events::METADATA;
use super::rust::{lit, prose, HEADER};
use crate::model::*;
use crate::naming::rust::{
    accessor_type, enum_ident, field_bits_ident, field_ident, info_ident, int_type, notes_ident,
    values_const_ident, variant_ident,
};
use crate::naming::wrap::{comment, doc, doc_item};
use crate::naming::{constant_case, normalize_text};

/// A hex literal for a reset value, mask or address.
fn hex(v: u64) -> String {
    format!("{v:#x}")
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

/// The field's enum, when its values name every value, or (with the `metadata` feature) its
/// partial value list.
fn values_text(reg: &Register, f: &Field, out: &mut String) {
    if !f.has_enum() {
        let _ = writeln!(
            out,
            "/// Named values of `{}.{}`.\n{METADATA}\nconst {}: &[ValueInfo] = &[\n{}];\n",
            reg.name,
            f.name,
            values_const_ident(reg, f),
            value_infos(&f.values)
        );
        return;
    }
    let ty = enum_ident(reg, f);
    doc(
        out,
        "",
        &format!("Values of `{}.{}` ({}).", reg.name, f.name, f.bits_phrase()),
    );
    let _ = writeln!(
        out,
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n#[repr(u8)]\npub enum {ty} {{"
    );
    for v in &f.values {
        doc(out, "    ", &v.description);
        let _ = writeln!(out, "    {} = {},", variant_ident(&v.name), v.value);
    }
    let _ = writeln!(
        out,
        "}}\n\nimpl {ty} {{\n    /// The values with their names and meanings, for tools.\n    {METADATA}\n    pub const VALUES: &'static [ValueInfo] = &[\n{}    ];\n",
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
}

fn value_infos(values: &[EnumValue]) -> String {
    values
        .iter()
        .map(|v| {
            format!(
                "        ValueInfo {{ value: {}, name: {}, description: {} }},\n",
                v.value,
                lit(&v.name),
                lit(&normalize_text(&v.description))
            )
        })
        .collect()
}

/// The position constant of a field (`WEvtSel::THRESH_BITS`): with the field's `FieldInfo` row,
/// the only item that states where the field lies; its accessors read it. The constants'
/// doc lines are the register's bit table in its rustdoc.
fn position_text(f: &Field, out: &mut String) {
    let (ty, value) = match (&f.repeat, &f.split) {
        (Some(rep), _) => (
            "BitArray",
            format!(
                "BitArray::new({}, {}, {})",
                f.lsb, rep.element_width, rep.max_count
            ),
        ),
        (None, Some(_)) => ("BitRanges", format!("BitRanges({})", ranges_literal(f))),
        (None, None) => ("BitRange", format!("BitRange::new({}, {})", f.msb, f.lsb)),
    };
    let elements = match &f.repeat {
        Some(rep) => format!(", {} elements of {} bits", rep.max_count, rep.element_width),
        None => String::new(),
    };
    doc(
        out,
        "    ",
        &format!(
            "`{}`: {}{elements} ({}, reset {}).",
            f.name,
            f.bits_phrase(),
            f.access.as_str(),
            hex(f.reset)
        ),
    );
    let _ = writeln!(
        out,
        "    pub const {}: {ty} = {value};",
        field_bits_ident(f)
    );
}

/// `[`Self::THRESH_BITS`]`: the link from an accessor's doc to where its field lies.
fn position_link(f: &Field) -> String {
    format!("[`Self::{}`]", field_bits_ident(f))
}

/// A field's getter, `with_` builder and, for a value type wider than the field,
/// `try_with_`: each one documented line, reading the field's position from its layout.
fn accessors_text(reg: &Register, f: &Field, out: &mut String) {
    let text = normalize_text(&prose(f.shown_description()));
    if let Some(rep) = &f.repeat {
        element_accessors_text(f, rep, &text, out);
        return;
    }
    if f.access.is_readable() {
        getter_text(reg, f, &text, out);
    }
    if f.access.is_writable() {
        builders_text(reg, f, out);
    }
}

/// The getter and builder of a bit array's element `n`.
fn element_accessors_text(f: &Field, rep: &Repeat, text: &str, out: &mut String) {
    let (id, ty) = (field_ident(f), int_or_bool(rep.element_width));
    let at = format!("Self::{}", field_bits_ident(f));
    let link = position_link(f);
    let n = rep.max_count;
    if f.access.is_readable() {
        let get = if ty == "bool" {
            format!("{at}.is_set(self.raw64(), n)")
        } else {
            format!("{at}.get(self.raw64(), n) as {ty}")
        };
        doc(
            out,
            "    ",
            &format!(
                "Element `n` of `{}` ({link}): {text} Panics if `n` is {n} or more.",
                f.name
            ),
        );
        let _ = writeln!(
            out,
            "    #[inline] pub const fn {id}(self, n: u32) -> {ty} {{ {get} }}"
        );
    }
    if f.access.is_writable() {
        doc(
            out,
            "    ",
            &format!(
                "This value with element `n` of `{}` set to `v`. Panics if `n` is {n} or more.",
                f.name
            ),
        );
        let _ = writeln!(
            out,
            "    #[inline] pub const fn with_{id}(self, n: u32, v: {ty}) -> Self {{ self.with_raw64({at}.set(self.raw64(), n, v as u64)) }}"
        );
    }
}

/// `bool` for one bit, else the narrowest integer.
fn int_or_bool(width: u32) -> &'static str {
    if width == 1 {
        "bool"
    } else {
        int_type(width)
    }
}

/// A plain field's getter.
fn getter_text(reg: &Register, f: &Field, text: &str, out: &mut String) {
    let (id, ty) = (field_ident(f), accessor_type(reg, f));
    let at = format!("Self::{}", field_bits_ident(f));
    let read = format!("{at}.get(self.raw64())");
    let get = if f.has_enum() {
        format!("{ty}::from_bits({read} as u8)")
    } else if ty == "bool" {
        format!("{at}.is_set(self.raw64())")
    } else if ty == "u64" {
        read
    } else {
        format!("{read} as {ty}")
    };
    doc(
        out,
        "    ",
        &format!("`{}` ({}): {text}", f.name, position_link(f)),
    );
    let _ = writeln!(
        out,
        "    #[inline] pub const fn {id}(self) -> {ty} {{ {get} }}"
    );
}

/// A plain field's `with_` builder, and `try_with_` where the value type is wider than the
/// field.
fn builders_text(reg: &Register, f: &Field, out: &mut String) {
    let (id, ty) = (field_ident(f), accessor_type(reg, f));
    let v = widen(f, "v");
    let at = format!("Self::{}", field_bits_ident(f));
    // A value type wider than the field (`int_name`) can hold values that do not fit.
    let narrow = !f.has_enum() && !matches!(f.width(), 1 | 8 | 16 | 32 | 64);
    let panics = if narrow {
        format!(
            " Panics if `v` does not fit in the field (a compile error in const context); `try_with_{id}` returns an error instead."
        )
    } else {
        String::new()
    };
    doc(
        out,
        "    ",
        &format!("This value with `{}` set to `v`.{panics}", f.name),
    );
    let _ = writeln!(
        out,
        "    #[inline] pub const fn with_{id}(self, v: {ty}) -> Self {{ self.with_raw64({at}.set(self.raw64(), {v})) }}"
    );
    if narrow {
        doc(
            out,
            "    ",
            &format!(
                "This value with `{}` set to `v`, or an error if `v` does not fit in the field.",
                f.name,
            ),
        );
        let _ = writeln!(
            out,
            "    #[inline] pub const fn try_with_{id}(self, v: {ty}) -> Result<Self, FieldTooWide> {{ self.try_with_raw64({at}.try_set(self.raw64(), {v}, {}Layout::NAME, {})) }}",
            reg.type_name,
            lit(&f.name)
        );
    }
}

/// A split field's ranges as the support functions take them: `&[(35, 32), (7, 0)]`.
fn ranges_literal(f: &Field) -> String {
    let ranges: Vec<String> = f
        .ranges()
        .iter()
        .map(|r| format!("({}, {})", r.msb, r.lsb))
        .collect();
    format!("&[{}]", ranges.join(", "))
}

/// One field's metadata: a row that names what it sets and leaves the rest to
/// `FieldInfo::EMPTY` (reset 0, no values, repeat, role or counters), its description on a
/// line of its own.
fn field_info(reg: &Register, f: &Field) -> String {
    let ident = if f.access.is_placeholder() {
        f.name.to_string()
    } else {
        field_ident(f)
    };
    let mut set = vec![
        format!("name: {}", lit(&f.name)),
        format!("ident: {}", lit(&ident)),
        format!("lsb: {}", f.lsb),
        format!("msb: {}", f.msb),
        format!("access: Access::{}", f.access.variant()),
    ];
    if f.is_split() {
        set.insert(4, format!("split: {}", ranges_literal(f)));
    }
    if f.reset != 0 {
        set.push(format!("reset: {}", hex(f.reset)));
    }
    if !f.values.is_empty() && !f.access.is_placeholder() {
        set.push(if f.has_enum() {
            format!("values: {}::VALUES", enum_ident(reg, f))
        } else {
            format!("values: {}", values_const_ident(reg, f))
        });
    }
    if let Some(r) = &f.repeat {
        set.push(format!(
            "repeat: Some(RepeatInfo {{ element_width: {}, max_count: {}, count_cpuid: {} }})",
            r.element_width,
            r.max_count,
            opt_lit(r.count_cpuid.as_deref())
        ));
    }
    if let Some(r) = &f.role {
        set.push(format!("role: Some(Role::{})", r.role.variant()));
        if !r.counters.is_empty() {
            let counters: Vec<String> = r.counters.iter().map(u32::to_string).collect();
            set.push(format!("counters: &[{}]", counters.join(", ")));
        }
    }
    match f.count_default {
        Some(CountDefault::AllOnes) => {
            set.push("count_default: Some(CountDefault::AllOnes)".into())
        }
        Some(CountDefault::Value(v)) => set.push(format!(
            "count_default: Some(CountDefault::Value({}))",
            hex(v)
        )),
        None => {}
    }
    let description = normalize_text(f.shown_description());
    // Most rows set only these five and are called what they name: a constructor says so
    // (and for a reserved field without a description, one that knows what its access means).
    if set.len() == 5 && *ident == *f.name && !f.is_split() {
        let (name, access) = (lit(&f.name), f.access.variant());
        return if f.description.is_empty() {
            format!(
                "        FieldInfo::reserved({name}, {}, {}, Access::{access}),\n",
                f.lsb, f.msb
            )
        } else {
            format!(
                "        FieldInfo::row({name}, {}, {}, Access::{access},\n            {}),\n",
                f.lsb,
                f.msb,
                lit(&description)
            )
        };
    }
    let rest = if description.is_empty() {
        " ".to_string()
    } else {
        format!("\n            description: {}, ", lit(&description))
    };
    format!(
        "        FieldInfo {{ {},{rest}..FieldInfo::EMPTY }},\n",
        set.join(", ")
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
        Location::Mmio {
            controller,
            channel,
            offset,
        } => format!(
            "MmioRegister::new(&MMIO_WINDOW, {controller}, {channel}, 0x{offset:X}, {})",
            lit(name)
        ),
        Location::Table(o) => format!("TableOffset::new(0x{o:02X}, {})", lit(name)),
        Location::SysReg(e) => format!("SysReg::new({}, {})", sysreg_encoding(e), lit(name)),
    }
}

/// The unit's `MMIO_WINDOW` constant: how its windows' base is assembled.
fn mmio_window_text(w: &MmioWindow, out: &mut String) {
    let parts: Vec<String> = w
        .parts
        .iter()
        .map(|p| {
            format!(
                "        MmioBasePart {{ offset: 0x{:03X}, controller_stride: 0x{:X}, lsb: {}, msb: {}, shift: {} }},\n",
                p.offset, p.controller_stride, p.lsb, p.msb, p.shift
            )
        })
        .collect();
    out.push_str(
        "/// Where this unit's memory-mapped registers are: the window of each controller and\n",
    );
    out.push_str(
        "/// channel, and the PCI config registers its physical base is assembled from.\n///\n",
    );
    comment(out, "///", &prose(&w.description));
    let _ = writeln!(
        out,
        "pub const MMIO_WINDOW: MmioWindow = MmioWindow {{\n    device_id: 0x{:04X},\n    device: {},\n    function: {},\n    parts: &[\n{}    ],\n    offset: 0x{:X},\n    channel_stride: 0x{:X},\n    size: 0x{:X},\n    controllers: {},\n    channels: {},\n}};\n",
        w.device_id,
        w.device,
        w.function,
        parts.concat(),
        w.offset,
        w.channel_stride,
        w.size,
        w.controllers,
        w.channels,
    );
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
        Location::Mmio {
            controller,
            channel,
            offset,
        } => format!(
            "Location::Mmio {{ controller: {controller}, channel: {channel}, offset: 0x{offset:X} }}"
        ),
        Location::Table(o) => format!("Location::Table(0x{o:02X})"),
        Location::SysReg(e) => format!("Location::SysReg({})", sysreg_encoding(e)),
    }
}

/// A system register's encoding as the crate's constructor (op0, op1, CRn, CRm, op2).
fn sysreg_encoding(e: &crate::model::sysreg::Encoding) -> String {
    format!(
        "SysRegEncoding::new({}, {}, {}, {}, {})",
        e.op0, e.op1, e.crn, e.crm, e.op2
    )
}

/// One register: its enums and value lists, the value type and its layout, accessors,
/// addresses and metadata.
fn register_text(proc: &Processor, unit: &Unit, reg: &Register, out: &mut String) {
    for f in reg
        .fields
        .iter()
        .filter(|f| !f.values.is_empty() && !f.access.is_placeholder())
    {
        values_text(reg, f, out);
    }
    type_text(proc, unit, reg, out);
    layout_text(reg, out);
    let (mut positions, mut fns) = (String::new(), String::new());
    for f in reg.fields.iter().filter(|f| !f.access.is_placeholder()) {
        position_text(f, &mut positions);
        accessors_text(reg, f, &mut fns);
    }
    if !fns.is_empty() {
        let _ = writeln!(out, "impl {} {{\n{positions}{fns}}}\n", reg.type_name);
    }
    let address_infos = addresses_text(unit, reg, out);
    let compact = compact_addresses(unit, reg, out);
    info_static_text(proc, unit, reg, &address_infos, compact.as_deref(), out);
}

/// The citations of the unit's registers' sources, each once, in order of first use.
fn unit_sources(unit: &Unit) -> Vec<String> {
    let mut table: Vec<String> = Vec::new();
    for c in unit
        .registers
        .iter()
        .flat_map(|r| r.sources.iter().map(|s| s.citation()))
    {
        if !table.contains(&c) {
            table.push(c);
        }
    }
    table
}

/// The unit's instance names, which [`compact_addresses`]' rows name (with `metadata`).
fn instance_names_text(unit: &Unit, out: &mut String) {
    let names: Vec<String> = unit.instances.iter().map(|i| lit(&i.name)).collect();
    let _ = writeln!(
        out,
        "{METADATA}\n#[allow(dead_code)]\nconst INSTANCE_NAMES: [&str; {}] = [{}];\n",
        names.len(),
        names.join(", ")
    );
    let sources: Vec<String> = unit_sources(unit)
        .iter()
        .map(|c| format!("    {},\n", lit(c)))
        .collect();
    let _ = writeln!(
        out,
        "/// The sources the registers' metadata cites (`RegisterInfo::sources`), each once.\n{METADATA}\n#[allow(dead_code)]\nconst SOURCES: [&str; {}] = [\n{}];\n",
        sources.len(),
        sources.concat()
    );
}

/// The metadata's address rows read from the typed addresses by a `const fn` (each name and
/// address written once, in the typed constant), when the rows are exactly those constants in
/// instance and index order and cite one source: writes the rows' static and returns the
/// expression naming it, or `None` (the rows are then written out).
fn compact_addresses(unit: &Unit, reg: &Register, out: &mut String) -> Option<String> {
    let Addresses::Known(addrs) = &reg.addresses else {
        return None;
    };
    let source = &addrs.first()?.source;
    let space = match reg.space {
        Space::Msr => "msr",
        Space::Pci => "pci",
        _ => return None,
    };
    let count = reg.count.max(1) as usize;
    for ii in 0..unit.instances.len() {
        let mine: Vec<_> = addrs.iter().filter(|a| a.instance == ii).collect();
        let in_order = mine.iter().enumerate().all(|(n, a)| a.index as usize == n);
        if mine.len() != count || !in_order || mine.iter().any(|a| &a.source != source) {
            return None;
        }
    }
    let table = match &*unit.instances {
        [inst] => format!("[{}]", reg.instance_name(inst)),
        [] => return None,
        _ => reg.generic_name(),
    };
    let (table, ctor) = if reg.count > 1 {
        (table, format!("{space}_arrays"))
    } else {
        (table, format!("{space}s"))
    };
    let name = format!("{}_ADDRESSES", info_ident(reg));
    let _ = writeln!(
        out,
        "{METADATA}\nstatic {name}: [AddressInfo; {}] = AddressInfo::{ctor}(&{table}, &INSTANCE_NAMES, {});\n",
        addrs.len(),
        lit(source)
    );
    Some(format!("&{name}"))
}

/// The register's type, documented as the guide describes the register.
fn type_text(proc: &Processor, unit: &Unit, reg: &Register, out: &mut String) {
    let ty = &reg.type_name;
    let value = if reg.width == 32 { "Reg32" } else { "Reg64" };
    let count = if reg.count > 1 {
        format!(", {} per instance", reg.count)
    } else {
        String::new()
    };
    let in_macro = notes_in_macro(proc, reg);
    let mut docs = String::new();
    doc(&mut docs, "", &prose(&reg.description));
    docs.push_str("///\n");
    doc(
        &mut docs,
        "",
        &format!(
            "`{}`: {}-bit {} register of the {} unit ({}){count}. Fields, masks and sources: [`{ty}Layout`].",
            reg.name,
            reg.width,
            constant_case(reg.space.as_str()),
            unit.name,
            proc.id
        ),
    );
    for n in reg.notes.iter().filter(|_| !in_macro) {
        docs.push_str("///\n");
        let title = normalize_text(&prose(&n.title));
        doc(
            &mut docs,
            "",
            &format!("**{title}** ({}): {}", n.kind, prose(&n.text)),
        );
    }
    if let Addresses::Unknown { reason } = &reg.addresses {
        docs.push_str("///\n");
        doc(
            &mut docs,
            "",
            &format!("**Address unknown:** {}", prose(reason)),
        );
    }
    if let Addresses::FromTable(t) = &reg.addresses {
        docs.push_str("///\n");
        doc(&mut docs, "", &table_placed_text(t));
    }
    if in_macro {
        // Each note once: `noted!` makes it a paragraph of the type's docs and a `NoteInfo`.
        let rows: String = reg
            .notes
            .iter()
            .map(|n| {
                format!(
                    "        ({}, {}, {}),\n",
                    lit(&n.kind),
                    lit(&n.title),
                    lit(&n.text)
                )
            })
            .collect();
        let indented: String = docs.lines().map(|l| format!("    {l}\n")).collect();
        let _ = writeln!(
            out,
            "noted! {{\n    {} = [\n{rows}    ];\n{indented}    pub type {ty} = {value}<{ty}Layout>;\n}}\n",
            notes_ident(reg)
        );
    } else {
        out.push_str(&docs);
        let _ = writeln!(out, "pub type {ty} = {value}<{ty}Layout>;\n");
    }
}

/// Whether the register's notes are written once, through `noted!` (its module's own type,
/// and notes whose text reads the same as Markdown as it does as plain text).
fn notes_in_macro(proc: &Processor, reg: &Register) -> bool {
    let plain = |s: &str| prose(s) == s && normalize_text(s) == s && !s.contains('\n');
    proc.units_from.is_none()
        && !reg.notes.is_empty()
        && reg
            .notes
            .iter()
            .all(|n| plain(&n.title) && plain(&n.text) && plain(&n.kind))
}

/// The layout: the masks as literals, and with the `metadata` feature the field table.
fn layout_text(reg: &Register, out: &mut String) {
    let ty = &reg.type_name;
    doc(
        out,
        "",
        &format!(
            "The layout of [`{ty}`] (`{}`): its fields, masks and metadata.",
            reg.name
        ),
    );
    out.push_str("///\n/// Sources:\n");
    for s in &reg.sources {
        doc_item(out, "", &prose(&s.citation()));
    }
    let _ = writeln!(
        out,
        "pub enum {ty}Layout {{}}\n\nimpl Layout for {ty}Layout {{\n    const NAME: &'static str = {};\n    const RESET: u64 = {};\n    const RESERVED_MASK: u64 = {};\n    const IGNORED_MASK: u64 = {};\n    const WRITABLE_MASK: u64 = {};\n    {METADATA}\n    const INFO: &'static RegisterInfo = &{};\n    {METADATA}\n    const FIELDS: &'static [FieldInfo] = &[\n{}    ];\n}}\n",
        lit(&reg.name),
        hex(reg.reset),
        hex(reg.reserved_mask()),
        hex(reg.ignored_mask()),
        hex(reg.writable_mask()),
        info_ident(reg),
        reg.fields.iter().map(|f| field_info(reg, f)).collect::<String>(),
    );
}

/// The typed addresses: a constant for the instance of a unit with one, an array in
/// instance order for a unit with several; returns the metadata's `AddressInfo` rows.
fn addresses_text(unit: &Unit, reg: &Register, out: &mut String) -> String {
    let Addresses::Known(addrs) = &reg.addresses else {
        return String::new();
    };
    let ty = &reg.type_name;
    let addr_ty = match reg.space {
        Space::Msr => format!("Msr<{ty}>"),
        Space::Pci => format!("PciRegister<{ty}>"),
        Space::Mmio => format!("MmioRegister<{ty}>"),
        Space::Table => format!("TableOffset<{ty}>"),
        Space::SysReg => format!("SysReg<{ty}>"),
    };
    let one_ty = if reg.count > 1 {
        format!("[{addr_ty}; {}]", reg.count)
    } else {
        addr_ty
    };
    // One instance: a constant of its own name. Several: one array in instance order (its
    // elements name themselves: `name()`), not a constant per instance beside it.
    let values: Vec<String> = unit
        .instances
        .iter()
        .enumerate()
        .map(|(ii, _)| {
            let ctors: Vec<String> = addrs
                .iter()
                .filter(|a| a.instance == ii)
                .map(|a| location_ctor(&a.location, &reg.address_name(unit, a)))
                .collect();
            if reg.count > 1 {
                format!("[{}]", ctors.join(", "))
            } else {
                ctors.concat()
            }
        })
        .collect();
    if let [(inst, value)] = &*unit.instances.iter().zip(&values).collect::<Vec<_>>() {
        let _ = writeln!(
            out,
            "/// `{}` of instance {}.\npub const {}: {one_ty} = {value};",
            reg.name,
            inst.name,
            reg.instance_name(inst),
        );
    } else if !values.is_empty() {
        let names: Vec<&str> = unit.instances.iter().map(|i| i.name.as_str()).collect();
        let _ = writeln!(
            out,
            "/// `{}` of every instance, in instance order ({}).\npub const {}: [{one_ty}; {}] = [\n{}];",
            reg.name,
            names.join(", "),
            reg.generic_name(),
            unit.instances.len(),
            values.iter().map(|v| format!("    {v},\n")).collect::<String>()
        );
    }
    out.push('\n');
    address_infos(unit, reg)
}

/// The metadata's `AddressInfo` rows of a register, one per instance and index.
fn address_infos(unit: &Unit, reg: &Register) -> String {
    let Addresses::Known(addrs) = &reg.addresses else {
        return String::new();
    };
    let mut infos = String::new();
    let by_instance =
        (0..unit.instances.len()).flat_map(|ii| addrs.iter().filter(move |a| a.instance == ii));
    for a in by_instance {
        let (name, instance) = (
            lit(&reg.address_name(unit, a)),
            lit(&unit.instances[a.instance].name),
        );
        // The two spaces of nearly every row have a shorthand of their own.
        let (ctor, location) = match &a.location {
            Location::Msr(m) => ("msr", msr_hex(*m)),
            Location::Pci {
                device_id,
                device,
                function,
                offset,
            } => (
                "pci",
                format!("(0x{device_id:04X}, {device}, {function}, 0x{offset:03X})"),
            ),
            other => ("new", location_info(other)),
        };
        let _ = writeln!(
            infos,
            "        AddressInfo::{ctor}({name}, {instance}, {}, {location}, {}),",
            a.index,
            lit(&a.source)
        );
    }
    infos
}

/// The public names a unit module defines for its registers: value enums, types, layouts
/// and typed addresses. A module sharing the unit re-exports exactly these.
fn register_names(unit: &Unit) -> Vec<String> {
    let mut names = Vec::new();
    for reg in &unit.registers {
        let enums = reg
            .fields
            .iter()
            .filter(|f| !f.values.is_empty() && !f.access.is_placeholder() && f.has_enum());
        names.extend(enums.map(|f| enum_ident(reg, f)));
        names.push(reg.type_name.clone());
        names.push(format!("{}Layout", reg.type_name));
        if let Addresses::Known(_) = reg.addresses {
            if let [one] = &*unit.instances {
                names.push(reg.instance_name(one));
            } else {
                names.push(reg.generic_name());
            }
        }
    }
    names
}

/// The register's metadata static (with the `metadata` feature).
fn info_static_text(
    proc: &Processor,
    unit: &Unit,
    reg: &Register,
    address_infos: &str,
    compact: Option<&str>,
    out: &mut String,
) {
    // A processor taking its units from another refers to these from its `pmu` module.
    let vis = if proc.units_from.is_some() {
        "pub(crate) "
    } else {
        ""
    };
    let layout = format!("{}Layout", reg.type_name);
    let addresses = match &reg.addresses {
        Addresses::Known(_) => match compact {
            Some(rows) => format!("Addresses::Known({rows})"),
            None => format!("Addresses::Known(&[\n{address_infos}    ])"),
        },
        Addresses::Unknown { reason } => format!("Addresses::Unknown({})", lit(reason)),
        Addresses::FromTable(t) => format!(
            "Addresses::FromTable(TablePlacement {{ place: TablePlace::{:?}, stride: {}, source: {} }})",
            t.place,
            t.stride,
            lit(&t.source)
        ),
    };
    // Each citation is written once, in the module's `SOURCES` (`instance_names_text`).
    let table = unit_sources(unit);
    let sources: Vec<String> = reg
        .sources
        .iter()
        .map(|s| {
            let c = s.citation();
            let i = table.iter().position(|t| *t == c).unwrap_or_default();
            format!("SOURCES[{i}]")
        })
        .collect();
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
    let notes = if notes_in_macro(proc, reg) {
        notes_ident(reg)
    } else if notes.is_empty() {
        "&[]".to_string()
    } else {
        format!("&[\n{notes}    ]")
    };
    let _ = writeln!(
        out,
        "{METADATA}\n{vis}static {}: RegisterInfo = RegisterInfo {{\n    processor: {}, unit: {}, name: {layout}::NAME, type_name: {},\n    width: {}, space: Space::{}, count: {}, count_cpuid: {},\n    reset: {layout}::RESET, reserved_mask: {layout}::RESERVED_MASK, ignored_mask: {layout}::IGNORED_MASK, writable_mask: {layout}::WRITABLE_MASK,\n    description: {},\n    sources: &[{}],\n    addresses: {addresses},\n    fields: {layout}::FIELDS,\n    notes: {notes},\n}};\n",
        info_ident(reg),
        lit(&proc.id),
        lit(&unit.name),
        lit(&reg.type_name),
        reg.width,
        match reg.space {
            Space::Msr => "Msr",
            Space::Pci => "Pci",
            Space::Mmio => "Mmio",
            Space::Table => "Table",
            Space::SysReg => "SysReg",
        },
        reg.count,
        opt_lit(reg.count_cpuid.as_deref()),
        lit(&normalize_text(&reg.description)),
        sources.join(", "),
    );
}

/// What a table-placed register's docs say of its place (Rust docs, C comment, Markdown).
pub fn table_placed_text(t: &TablePlacement) -> String {
    let at = match t.place {
        TablePlace::BoxControl => "at the box control address its box's discovery table entry gives",
        TablePlace::CounterControl => "at the box control plus the counter-control offset its box's discovery table entry gives",
        TablePlace::Counter => "at the box control plus the counter offset its box's discovery table entry gives",
    };
    let stride = if t.stride == 0 {
        String::new()
    } else {
        format!(
            ", element n {} on (registers for an MSR, bytes otherwise)",
            t.stride
        )
    };
    format!(
        "**Placed by the discovery table:** no fixed address; {at}{stride} ({}).",
        t.source
    )
}

/// Emits one unit's module: its registers, events and metadata (`spec` holds the processor a
/// `units-from` processor takes the unit from).
pub fn unit_module_text(spec: &Spec, proc: &Processor, unit: &Unit) -> String {
    if let Some(from) = &proc.units_from {
        let taken = spec
            .processors
            .iter()
            .find(|p| p.id == from.id)
            .and_then(|p| p.units.iter().find(|u| u.module == unit.module));
        return shared_unit_module_text(proc, from, unit, taken);
    }
    let mut out = String::from(HEADER);
    let instances: Vec<&str> = unit.instances.iter().map(|i| i.name.as_str()).collect();
    comment(
        &mut out,
        "//!",
        &format!("{} ({}).", prose(&unit.title), prose(&proc.name)),
    );
    let description = prose(&unit.description);
    let instances = format!("Instances: {}.", instances.join(", "));
    for paragraph in description.split("\n\n").chain([instances.as_str()]) {
        out.push_str("//!\n");
        comment(&mut out, "//!", paragraph);
    }
    // What each register's items are is said once, in the crate's docs (lib_header.rs).
    out.push_str("use crate::support::*;\n#[cfg(feature = \"metadata\")]\n#[allow(unused_imports)]\nuse crate::structure::Role;\n");
    let core = super::core_events::is_core_unit(unit);
    if core {
        out.push_str("use crate::core_events::CoreEvent;\n");
    }
    out.push('\n');
    if let Some(w) = &unit.mmio_window {
        mmio_window_text(w, &mut out);
    }
    instance_names_text(unit, &mut out);
    for reg in &unit.registers {
        register_text(proc, unit, reg, &mut out);
    }
    let events = if core {
        super::core_events::unit_events_text(unit, &mut out);
        "EVENT_INFOS"
    } else if unit.events.is_empty() {
        "&[]"
    } else {
        super::events::unit_events_text(unit, &mut out);
        GATED_EVENTS
    };
    unit_static_text(proc, unit, events, &mut out);
    if let Some(n) = &unit.node_events {
        node_events_text(unit, n, &mut out);
    }
    out
}

/// A unit's `<node-events>` as its `NODE_EVENTS` static (with the `metadata` feature).
fn node_events_text(unit: &Unit, n: &NodeEvents, out: &mut String) {
    let select = unit
        .registers
        .iter()
        .find(|r| r.name == n.select)
        .expect("the validator resolved the select");
    let slots: Vec<String> = n.slots.iter().map(|s| lit(s)).collect();
    let events: Vec<String> = n
        .events
        .iter()
        .map(|e| {
            let filter = e
                .filter
                .as_deref()
                .map_or("None".into(), |f| format!("Some({})", lit(f)));
            format!(
                "        NodeEventInfo {{ name: {}, id: {:#x}, filter: {filter}, occupid: {} }},\n",
                lit(&e.name),
                e.id,
                e.occupid
            )
        })
        .collect();
    let input = match n.input {
        NodeInput::Device => "Device",
        NodeInput::Crosspoint => "Crosspoint",
    };
    let _ = write!(
        out,
        "/// The events these nodes offer their crosspoint's DTM.\n{METADATA}\npub static NODE_EVENTS: NodeEventsInfo = NodeEventsInfo {{\n    node_type: {:#x},\n    select: &{},\n    slots: &[{}],\n    input: NodeInput::{input},\n    pmu: {},\n    driver: &super::pmu::{},\n    source: {},\n    events: &[\n{}    ],\n}};\n",
        n.node_type,
        info_ident(select),
        slots.join(", "),
        lit(&n.pmu),
        crate::naming::rust::perf_driver_ident(&n.driver.id),
        lit(&n.source),
        events.concat(),
    );
}

/// The module of a unit a processor takes from another (`units-from`): the other's register
/// types, layouts and addresses re-exported (one type, one layout), then what is this
/// processor's own: its events (the other's `Event` re-exported when the list is the same),
/// and the metadata that names it.
fn shared_unit_module_text(
    proc: &Processor,
    from: &ProcessorRef,
    unit: &Unit,
    taken: Option<&Unit>,
) -> String {
    let mut out = String::from(HEADER);
    comment(
        &mut out,
        "//!",
        &format!("{} ({}).", prose(&unit.title), prose(&proc.name)),
    );
    let source = format!("crate::{}::{}", from.module, unit.module);
    let shared = format!(
        "{} takes this unit from {} (`units-from` in `spec/processors.xml`): its register types, layouts and typed addresses are those of [`{source}`], re-exported here, so one type means one layout. This module adds what is {}'s own: its events and the metadata that names it.",
        proc.id, from.id, proc.id
    );
    let description = prose(&unit.description);
    for paragraph in description.split("\n\n").chain([shared.as_str()]) {
        out.push_str("//!\n");
        comment(&mut out, "//!", paragraph);
    }
    out.push_str("#[allow(unused_imports)]\nuse crate::support::*;\n");
    let mut names = register_names(unit);
    // A memory-mapped unit's window is shared too (its typed addresses name it).
    if unit.mmio_window.is_some() {
        names.push("MMIO_WINDOW".to_string());
    }
    let _ = writeln!(
        out,
        "pub use {source}::{{\n    {},\n}};\n",
        names.join(",\n    ")
    );
    for reg in &unit.registers {
        shared_info_static_text(proc, reg, &mut out);
    }
    let same_events = taken.is_some_and(|s| super::events::same_event_type(unit, s));
    let events = if same_events {
        // The same list: the same `Event` type, so the shared controls' `with_event` takes it,
        // and `UNIT.events` is the other's (below).
        doc(
            &mut out,
            "",
            &format!(
                "The unit's events (the `events` feature): {}'s list is {}'s, so its `Event` is [`{source}::Event`], re-exported.",
                proc.id, from.id
            ),
        );
        let _ = writeln!(
            out,
            "#[cfg(feature = \"events\")]\npub use {source}::Event;\n"
        );
        ""
    } else if unit.events.is_empty() {
        "&[]"
    } else {
        super::events::shared_unit_events_text(unit, &mut out);
        GATED_EVENTS
    };
    shared_unit_static_text(proc, from, unit, events, &mut out);
    out
}

/// The metadata static of a register a processor takes from another (`units-from`): the
/// other's `RegisterInfo` (the shared layout's `INFO`) with this processor's id, so its
/// description, sources, addresses and notes are written once, in the other's module.
fn shared_info_static_text(proc: &Processor, reg: &Register, out: &mut String) {
    let _ = writeln!(
        out,
        "{METADATA}\npub(crate) static {}: RegisterInfo = RegisterInfo {{ processor: {}, ..*{}Layout::INFO }};\n",
        info_ident(reg),
        lit(&proc.id),
        reg.type_name
    );
}

/// The metadata static of a unit a processor takes from another (`units-from`): its own
/// id, registers, events and PMU structure; its name, title, description, instances and
/// window are the other's `UNIT`'s, and so are its events when `events` is empty (the same
/// list).
fn shared_unit_static_text(
    proc: &Processor,
    from: &ProcessorRef,
    unit: &Unit,
    events: &str,
    out: &mut String,
) {
    let infos: Vec<String> = unit
        .registers
        .iter()
        .map(|r| format!("        &{},\n", info_ident(r)))
        .collect();
    let pmu = super::structure::unit_pmu_ref(unit);
    let events = match events {
        "" => String::new(),
        GATED_EVENTS => format!("#[cfg(feature = \"events\")]\n    events: {events},\n    "),
        _ => format!("events: {events},\n    "),
    };
    let _ = write!(
        out,
        "/// Metadata of this unit and its registers.\n{METADATA}\npub static UNIT: UnitInfo = UnitInfo {{\n    processor: {},\n    registers: &[\n{}    ],\n    {events}pmu: {pmu},\n    ..crate::{}::{}::UNIT\n}};\n",
        lit(&proc.id),
        infos.concat(),
        from.module,
        unit.module,
    );
}

/// `UnitInfo::events` of a unit whose events are behind the `events` feature: its table with
/// the feature, none without.
const GATED_EVENTS: &str = "EVENT_INFOS,\n    #[cfg(not(feature = \"events\"))]\n    events: &[]";

/// The unit's metadata static (with the `metadata` feature).
fn unit_static_text(proc: &Processor, unit: &Unit, events: &str, out: &mut String) {
    let instances: Vec<String> = unit.instances.iter().map(|i| lit(&i.name)).collect();
    let infos: Vec<String> = unit
        .registers
        .iter()
        .map(|r| format!("        &{},\n", info_ident(r)))
        .collect();
    let pmu = super::structure::unit_pmu_ref(unit);
    let _ = write!(
        out,
        "/// Metadata of this unit and its registers.\n{METADATA}\npub static UNIT: UnitInfo = UnitInfo {{\n    processor: {},\n    name: {},\n    module: {},\n    title: {},\n    description: {},\n    instances: &[{}],\n    registers: &[\n{}    ],\n    {}events: {events},\n    pmu: {pmu},\n    mmio_window: {},\n}};\n",
        lit(&proc.id),
        lit(&unit.name),
        lit(&unit.module),
        lit(&unit.title),
        lit(&unit.description),
        instances.join(", "),
        infos.concat(),
        if events == GATED_EVENTS {
            "#[cfg(feature = \"events\")]\n    "
        } else {
            ""
        },
        if unit.mmio_window.is_some() {
            "Some(&MMIO_WINDOW)"
        } else {
            "None"
        }
    );
}
