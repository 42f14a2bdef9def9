//! Event constants in the generated crate, for the uncore units (a unit's own `Event` type) and
//! the rows of every event table (`EVENT_INFOS`), which the core lists (`core_events.rs`) share.
//!
//! An event constant holds what `with_event` programs (event select, umask, ...) and its row
//! in the unit's `EVENT_INFOS`. The table, with names, counters and filters, is metadata: it
//! is built with the `metadata` feature only, so a crate user who programs events without
//! introspecting them does not compile it.

use std::fmt::Write;

use super::rust::lit;
use crate::model::pmu::Role;
use crate::model::*;
use crate::naming::rust::{aux_msr_ident, enum_ident, int_type};
use crate::naming::snake_case;
use crate::naming::wrap::doc;

/// `#[cfg(feature = "metadata")]`: what an item that only tools need is built behind.
pub const METADATA: &str = "#[cfg(feature = \"metadata\")]";

/// `#[cfg(feature = "experimental-events")]`: what an experimental event's constant and rows are
/// built behind (Intel's experimental lists hold thousands of events; a crate user who does
/// not want them does not compile them).
pub const EXPERIMENTAL: &str = "#[cfg(feature = \"experimental-events\")]";

/// An event's row in its table (`EVENT_ROWS` or `EXPERIMENTAL_ROWS`): `ev(name, event
/// select, umask)` and a builder for each other setting it has, where `counters` and `ht_off`
/// are the table's (the counters most of its rows have: a row names its own with `.on(..)`).
/// The row is the only place the event's facts are written: its constant, `Event::ALL` and
/// `EVENT_INFOS` are decoded from it.
pub fn event_row(e: &Event, counters: u32, ht_off: u32) -> String {
    let (s, m) = (e.settings, e.masks);
    let mut row = format!("ev({}, {:#04x}, {:#04x})", lit(&e.name), e.code, e.umask);
    let mut set = |on: bool, builder: String| {
        if on {
            row.push_str(&builder);
        }
    };
    set(e.counters != counters, format!(".on({:#b})", e.counters));
    set(
        e.counters_ht_off != ht_off,
        format!(".ht_off({:#b})", e.counters_ht_off),
    );
    set(e.ext_sel, ".ext_sel()".into());
    set(
        !e.filters.is_empty(),
        format!(".filters({})", lit(&e.filters)),
    );
    set(s.threshold != 0, format!(".threshold({})", s.threshold));
    set(s.invert, ".invert()".into());
    set(s.edge, ".edge()".into());
    set(s.any_thread, ".any_thread()".into());
    set(m.umask_ext != 0, format!(".umask_ext({:#x})", m.umask_ext));
    set(m.port_mask != 0, format!(".port_mask({:#x})", m.port_mask));
    set(m.fc_mask != 0, format!(".fc_mask({:#x})", m.fc_mask));
    if let Some(a) = &e.aux {
        set(
            true,
            format!(".aux({}, {:#x})", aux_msr_ident(&a.register), a.value),
        );
    }
    row
}

/// The value most of `events` have (the first of those tied), 0 for none: a table's
/// counters, written once for it.
fn most_common(events: &[&Event], value: impl Fn(&Event) -> u32) -> u32 {
    let mut counts: Vec<(u32, usize)> = Vec::new();
    for e in events {
        let v = value(e);
        match counts.iter_mut().find(|(x, _)| *x == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    counts
        .iter()
        .find(|(_, n)| *n == best)
        .map_or(0, |(v, _)| *v)
}

/// The rows of the events of `events` that are (or are not) experimental, after the table's
/// `counters` and `ht_off` (`, 0b1111, 0;`), for `event_table!`.
fn table_rows(events: &[Event], experimental: bool) -> String {
    let mine: Vec<&Event> = events
        .iter()
        .filter(|e| e.experimental == experimental)
        .collect();
    let counters = most_common(&mine, |e| e.counters);
    let ht_off = most_common(&mine, |e| e.counters_ht_off);
    let mut out = format!(" {counters:#b}, {ht_off:#b};\n");
    for e in mine {
        let _ = writeln!(out, "    {} = {},", e.ident, event_row(e, counters, ht_off));
    }
    out
}

/// The first `impl Event` of a list or unit, with `after` (its items besides the event
/// constants, which [`rows_and_table`] makes from the rows).
pub fn event_consts(after: &str, out: &mut String) {
    let _ = writeln!(out, "impl Event {{\n{after}}}");
}

/// The event table (`EVENT_ROWS`, `EXPERIMENTAL_ROWS` and `ROW_COUNT`; the auxiliary MSRs its
/// rows name), and the metadata table `EVENT_INFOS` decoded from it.
pub fn rows_and_table(events: &[Event], out: &mut String) {
    let mut aux: Vec<&AuxMsr> = Vec::new();
    for a in events.iter().filter_map(|e| e.aux.as_ref()) {
        if !aux.iter().any(|b| b.register == a.register) {
            aux.push(a);
        }
    }
    for a in aux {
        let _ = writeln!(
            out,
            "/// `{}`, as the rows that need it name it (each with its value).\nconst {}: AuxMsr = AuxMsr {{ register: {}, address: {:#x}, value: 0 }};",
            a.register,
            aux_msr_ident(&a.register),
            lit(&a.register),
            a.address
        );
    }
    // Each table and its events' constants, from the rows (`event_table!` in
    // templates/core_events.rs): the name and settings written once.
    let _ = write!(
        out,
        "event_table! {{\n    /// The events, row n for `Event::row(n)`: `ev(name, event select, umask)` and what else each\n    /// sets. The counters that may count them (bit n: counter n) and those without\n    /// Hyper-Threading are the table's, the two numbers before the rows, unless a row\n    /// gives its own (`.on(..)`, `.ht_off(..)`).\n    EVENT_ROWS, EventRowNumber, 0, \"\",{}}}\n",
        table_rows(events, false)
    );
    if events.iter().any(|e| e.experimental) {
        let _ = write!(
            out,
            "{EXPERIMENTAL}\nevent_table! {{\n    /// The experimental events, numbered after `EVENT_ROWS`: from the vendor's experimental\n    /// lists, whose counts it has not validated; built with the `experimental-events` feature.\n    EXPERIMENTAL_ROWS, ExperimentalRowNumber, EVENT_ROWS.len(), \" (experimental)\",{}}}\n#[cfg(not(feature = \"experimental-events\"))]\nconst EXPERIMENTAL_ROWS: &[EventRow] = &[];\n",
            table_rows(events, true)
        );
    } else {
        out.push_str("/// No experimental events.\nconst EXPERIMENTAL_ROWS: &[EventRow] = &[];\n");
    }
    // The facts, decoded in chunks of at most CHUNK rows (one constant each: see
    // `event_infos` in templates/core_events.rs).
    let mut chunks = String::new();
    for (experimental, table) in [(false, "EVENT_ROWS"), (true, "EXPERIMENTAL_ROWS")] {
        let n = events
            .iter()
            .filter(|e| e.experimental == experimental)
            .count();
        let gate = if experimental {
            format!("    {EXPERIMENTAL}\n")
        } else {
            String::new()
        };
        for from in (0..n).step_by(CHUNK) {
            let len = CHUNK.min(n - from);
            let _ = writeln!(
                chunks,
                "{gate}    &event_infos::<{len}>({table}, {from}, {experimental}),"
            );
        }
    }
    let _ = writeln!(
        out,
        "/// The rows built.\nconst ROW_COUNT: usize = EVENT_ROWS.len() + EXPERIMENTAL_ROWS.len();\n\n/// The facts of the rows, {CHUNK} a chunk.\n{METADATA}\nconst EVENT_INFO_CHUNKS: &[&[EventInfo]] = &[\n{chunks}];\n/// The facts of `Event::ALL`, row for row.\n{METADATA}\nconst EVENT_INFOS: &[&EventInfo] = &event_info_refs::<ROW_COUNT>(EVENT_INFO_CHUNKS);"
    );
}

/// The most rows of one chunk of `EVENT_INFOS`' facts.
const CHUNK: usize = 64;

/// The uses the event tables need (inside the module that holds them).
pub const ROW_USES: &str = "#[allow(unused_imports)]\nuse crate::core_events::{event_table, EventRow};\n#[cfg(feature = \"metadata\")]\nuse crate::core_events::{event_info_refs, event_infos};\n";

/// The integer type of the unit's widest counter-control field `name`, as its accessors take
/// it: `u8` up to 8 bits, `u16` above (an event select of several bit ranges, AMD's 12 and 14
/// bits).
fn control_int(unit: &Unit, name: &str) -> &'static str {
    let width = unit
        .registers
        .iter()
        .flat_map(|r| r.fields.iter())
        .filter(|f| f.name.as_ref() == name)
        .map(|f| f.width())
        .max()
        .unwrap_or(8);
    int_of(width)
}

/// The integer type of the unit's widest unit-mask field ([`Register::umask_field`]).
fn umask_int(unit: &Unit) -> &'static str {
    let width = unit
        .registers
        .iter()
        .filter_map(Register::umask_field)
        .map(|f| f.width())
        .max()
        .unwrap_or(8);
    int_of(width)
}

/// `u8` up to 8 bits, else `u16`.
fn int_of(width: u32) -> &'static str {
    if width <= 8 {
        "u8"
    } else {
        "u16"
    }
}

/// The mask roles (Intel's UMaskExt, PortMask, FCMask) some counter control of `unit` has:
/// each with the `Event` field that holds its value, the field's integer type, and what the
/// docs call it.
fn mask_roles(unit: &Unit) -> Vec<(Role, &'static str, &'static str, &'static str)> {
    [
        (Role::UmaskExt, "umask_ext", "unit-mask extension"),
        (Role::PortMask, "port_mask", "port mask"),
        (Role::FcMask, "fc_mask", "traffic-class mask"),
    ]
    .into_iter()
    .filter_map(|(role, name, what)| {
        let width = unit
            .registers
            .iter()
            .flat_map(|r| r.fields.iter())
            .filter(|f| f.role.as_ref().is_some_and(|x| x.role == role))
            .map(|f| f.width())
            .max()?;
        Some((role, name, int_type(width), what))
    })
    .collect()
}

/// `r.<field>` as the type `ty` of the unit's `Event` field, from the row's type `row_ty`.
fn from_row_field(field: &str, row_ty: &str, ty: &str) -> String {
    if row_ty == ty {
        format!("r.{field}")
    } else {
        format!("r.{field} as {ty}")
    }
}

/// The unit's `Event` type, its constants and its table.
fn event_type_text(unit: &Unit, out: &mut String) {
    let (code, umask) = (control_int(unit, "ev_sel"), umask_int(unit));
    let masks = mask_roles(unit);
    let mask_fields: String = masks
        .iter()
        .map(|(_, name, ty, what)| format!("    /// Its {what} (0: none).\n    {name}: {ty},\n"))
        .collect();
    let row_types = [
        ("umask_ext", "u32"),
        ("port_mask", "u16"),
        ("fc_mask", "u8"),
    ];
    let mask_values: String = masks
        .iter()
        .map(|(_, name, ty, _)| {
            let row_ty = row_types
                .iter()
                .find(|(n, _)| n == name)
                .map_or("u32", |x| x.1);
            format!("{name}: {}, ", from_row_field(name, row_ty, ty))
        })
        .collect();
    out.push_str(ROW_USES);
    let _ = write!(out, "\n/// An event of this unit. Only this unit's counter controls take it (`with_event`), so\n/// an event of one unit cannot be programmed into another's counter. Each constant is a row\n/// of the unit's event table, which gives its event select, umask and the counters that may\n/// count it.\n#[derive(Debug, Clone, Copy, PartialEq, Eq)]\n#[cfg_attr(not(feature = \"metadata\"), allow(dead_code))]\npub struct Event {{\n    code: {code},\n    umask: {umask},\n    ext_sel: bool,\n{mask_fields}    /// Its row in `EVENT_INFOS`.\n    row: u16,\n}}\n\n");
    let after = format!(
        "\n    /// Every event of the unit.\n    pub const ALL: &'static [Event] = &{{\n        let mut all = [Event::row(0); ROW_COUNT];\n        let mut i = 0;\n        while i < ROW_COUNT {{\n            all[i] = Event::row(i as u16);\n            i += 1;\n        }}\n        all\n    }};\n\n    /// The event of row `n` of the unit's table.\n    const fn row(n: u16) -> Event {{\n        let r = crate::core_events::event_row(EVENT_ROWS, EXPERIMENTAL_ROWS, n);\n        Event {{ code: {}, umask: {}, ext_sel: r.ext_sel, {mask_values}row: n }}\n    }}\n\n    /// Event select.\n    pub const fn code(self) -> {code} {{\n        self.code\n    }}\n\n    /// Unit mask.\n    pub const fn umask(self) -> {umask} {{\n        self.umask\n    }}\n\n    /// Whether it needs the event-select extension bit.\n    pub const fn ext_sel(self) -> bool {{\n        self.ext_sel\n    }}\n",
        from_row_field("code", "u16", code),
        from_row_field("umask", "u16", umask),
    );
    event_consts(&after, out);
    let _ = writeln!(
        out,
        "\n{METADATA}\nimpl Event {{\n    /// The event's facts.\n    pub const fn info(self) -> &'static EventInfo {{\n        EVENT_INFOS[self.row as usize]\n    }}\n\n    /// Whether counter `n` may count it.\n    pub const fn can_count_on(self, n: u32) -> bool {{\n        self.info().can_count_on(n)\n    }}\n}}\n"
    );
    rows_and_table(&unit.events, out);
}

/// The counter controls of a unit (registers with an `ev_sel` field), each with what
/// programming an event sets in it and the builder chain that does it, starting from `on`.
fn event_controls<'u>(unit: &'u Unit, on: &str) -> Vec<(&'u Register, String, String)> {
    let has = |r: &Register, name: &str| r.fields.iter().any(|f| f.name.as_ref() == name);
    let mut out = Vec::new();
    for r in unit.registers.iter().filter(|r| has(r, "ev_sel")) {
        let (ext, umask) = (has(r, "ev_sel_ext"), r.umask_field());
        let what = match (ext, umask.is_some()) {
            (true, true) => "its event select, umask and extension bit",
            (false, true) => "its event select and umask",
            (true, false) => "its event select and extension bit (this box has no unit mask; the events it takes have umask 0)",
            (false, false) => "its event select (this box has no unit mask)",
        };
        // The event's code and umask (the unit's `Event` types) as the setters take them: cast where the
        // field's type differs (the validator keeps every value within its field).
        let arg = |field: &str, value: &str, ty: &str| {
            let width = r
                .fields
                .iter()
                .find(|f| f.name.as_ref() == field)
                .map_or(8, |f| f.width());
            let wanted = int_type(width);
            if wanted == ty {
                format!("event.{value}")
            } else {
                format!("event.{value} as {wanted}")
            }
        };
        let mut body = format!(
            "{on}.with_ev_sel({})",
            arg("ev_sel", "code", control_int(unit, "ev_sel"))
        );
        if let Some(field) = umask {
            let value = arg(field.name.as_ref(), "umask", umask_int(unit));
            // A unit mask with named values (the AMD UMC's read/write mask) takes its enum.
            let value = if field.has_enum() {
                format!("{}::from_bits({value})", enum_ident(r, field))
            } else {
                value
            };
            body.push_str(&format!(".with_{}({value})", field.name.as_ref()));
        }
        if ext {
            body.push_str(".with_ev_sel_ext(event.ext_sel)");
        }
        // The masks (UMaskExt, PortMask, FCMask) go into the fields playing their roles; the
        // validator keeps an event's masks at 0 where the controls lack the role.
        let mut what = what.to_string();
        for (role, name, ty, label) in mask_roles(unit) {
            if let Some(f) = r
                .fields
                .iter()
                .find(|f| f.role.as_ref().is_some_and(|x| x.role == role))
            {
                body.push_str(&format!(
                    ".with_{}({})",
                    f.name,
                    arg(f.name.as_ref(), name, ty)
                ));
                what.push_str(&format!("; its {label}"));
            }
        }
        out.push((r, what, body));
    }
    out
}

/// `#[cfg(feature = "events")]`: what a unit's (uncore) events are built behind, so that a
/// user who programs registers by value does not compile thousands of event constants.
pub const EVENTS: &str = "#[cfg(feature = \"events\")]";

/// `text` (a unit's events: `Event`, its impls, `EVENT_INFOS` and the controls' methods) in a
/// module built with the `events` feature, `Event` re-exported and the table visible to the
/// unit's metadata static.
fn behind_events_feature(text: &str, out: &mut String) {
    let text = text.replace("\nconst EVENT_INFOS", "\npub(super) const EVENT_INFOS");
    let _ = write!(
        out,
        "/// The unit's events (the `events` feature), re-exported: [`Event`].\n{EVENTS}\nmod unit_events {{\nuse super::*;\n{text}}}\n{EVENTS}\npub use unit_events::Event;\n#[cfg(all(feature = \"events\", feature = \"metadata\"))]\nuse unit_events::EVENT_INFOS;\n\n"
    );
}

/// The unit's events: a constant per event, and `with_event` on every counter control (a
/// register with an `ev_sel` field), behind the `events` feature.
pub fn unit_events_text(unit: &Unit, out: &mut String) {
    let mut text = String::new();
    unit_events_items(unit, &mut text);
    behind_events_feature(&text, out);
}

fn unit_events_items(unit: &Unit, out: &mut String) {
    event_type_text(unit, out);
    for (r, what, body) in event_controls(unit, "self") {
        let _ = writeln!(out, "\nimpl {} {{", r.type_name);
        doc(
            out,
            "    ",
            &format!("This value set to count `event`: {what}."),
        );
        let _ = writeln!(
            out,
            "    #[inline]\n    pub const fn with_event(self, event: Event) -> Self {{\n        {body}\n    }}\n}}"
        );
    }
    out.push('\n');
}

/// Whether two units' `Event` types are written alike (the same events, rows and fields):
/// a `units-from` processor whose list for a unit is its source's re-exports that `Event`.
pub fn same_event_type(a: &Unit, b: &Unit) -> bool {
    let (mut x, mut y) = (String::new(), String::new());
    event_type_text(a, &mut x);
    event_type_text(b, &mut y);
    !a.events.is_empty() && x == y
}

/// The events of a unit whose counter controls another processor's module defines
/// (`units-from`): that module's `with_event` takes that processor's events, so these
/// program a control the other way round, `Event::X.program(ctl)`, one method per control.
pub fn shared_unit_events_text(unit: &Unit, out: &mut String) {
    let mut text = String::new();
    shared_unit_events_items(unit, &mut text);
    behind_events_feature(&text, out);
}

fn shared_unit_events_items(unit: &Unit, out: &mut String) {
    event_type_text(unit, out);
    let controls = event_controls(unit, "ctl");
    let single = controls.len() == 1;
    out.push_str("\nimpl Event {\n");
    for (r, what, body) in controls {
        let ty = &r.type_name;
        let name = if single {
            "program".to_string()
        } else {
            format!("program_{}", snake_case(ty))
        };
        doc(
            out,
            "    ",
            &format!("`ctl` set to count this event: {what}. (`{ty}::with_event` takes the events of the processor that defines `{ty}`.)"),
        );
        let _ = writeln!(
            out,
            "    #[inline]\n    pub const fn {name}(self, ctl: {ty}) -> {ty} {{\n        let event = self;\n        {body}\n    }}"
        );
    }
    out.push_str("}\n\n");
}
