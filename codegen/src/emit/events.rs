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
use crate::naming::rust::{enum_ident, int_type};
use crate::naming::snake_case;
use crate::naming::wrap::doc;

/// `#[cfg(feature = "metadata")]`: what an item that only tools need is built behind.
pub const METADATA: &str = "#[cfg(feature = \"metadata\")]";

/// `#[cfg(feature = "experimental-events")]`: what an experimental event's constant and rows are
/// built behind (Intel's experimental lists hold thousands of events; a crate user who does
/// not want them does not compile them).
pub const EXPERIMENTAL: &str = "#[cfg(feature = \"experimental-events\")]";

/// What goes before an event's constant, `ALL` entry and table row: the experimental gate
/// and a space, or nothing.
pub fn gate(e: &Event) -> String {
    if e.experimental {
        format!("{EXPERIMENTAL} ")
    } else {
        String::new()
    }
}

/// An event's facts as an `EventInfo` literal: the uncore units' and the core lists' events
/// alike. The name, code, umask and counters always; the rest only where it differs from
/// `EventInfo::BASE`, which keeps the tables a third of the size.
pub fn event_info(e: &Event) -> String {
    let (s, m) = (e.settings, e.masks);
    let mut fields = vec![
        format!("name: {}", lit(&e.name)),
        format!("code: {:#04x}", e.code),
        format!("umask: {:#04x}", e.umask),
        format!("counters: {:#b}", e.counters),
    ];
    let mut set = |on: bool, field: String| {
        if on {
            fields.push(field);
        }
    };
    set(
        e.counters_ht_off != 0,
        format!("counters_ht_off: {:#b}", e.counters_ht_off),
    );
    set(e.ext_sel, "ext_sel: true".into());
    set(
        !e.filters.is_empty(),
        format!("filters: {}", lit(&e.filters)),
    );
    set(s.threshold != 0, format!("threshold: {}", s.threshold));
    set(s.invert, "invert: true".into());
    set(s.edge, "edge: true".into());
    set(s.any_thread, "any_thread: true".into());
    set(m.umask_ext != 0, format!("umask_ext: {:#x}", m.umask_ext));
    set(m.port_mask != 0, format!("port_mask: {:#x}", m.port_mask));
    set(m.fc_mask != 0, format!("fc_mask: {:#x}", m.fc_mask));
    set(e.experimental, "experimental: true".into());
    set(
        e.aux.is_some(),
        format!("aux: {}", aux_literal(e.aux.as_ref())),
    );
    format!("EventInfo {{ {}, ..EventInfo::BASE }}", fields.join(", "))
}

/// What an event's doc adds to its counters where a core without Hyper-Threading gives it
/// more (nothing for the others).
pub fn ht_off_note(e: &Event) -> String {
    if e.counters_ht_off == 0 {
        String::new()
    } else {
        format!(" ({:#b} without Hyper-Threading)", e.counters_ht_off)
    }
}

/// The sentence an experimental event's doc ends with (nothing for the others).
pub fn experimental_note(e: &Event) -> &'static str {
    if e.experimental {
        " Experimental: from the vendor's experimental list, whose counts it has not validated."
    } else {
        ""
    }
}

/// An event's auxiliary MSR as a `Option<AuxMsr>` literal.
pub fn aux_literal(aux: Option<&AuxMsr>) -> String {
    match aux {
        None => "None".to_string(),
        Some(a) => format!(
            "Some(AuxMsr {{ register: {}, address: {:#x}, value: {:#x} }})",
            lit(&a.register),
            a.address,
            a.value
        ),
    }
}

/// `Event::ALL`'s entries (one a line, indented for `impl Event`), and the metadata table
/// `EVENT_INFOS` that the events' rows index.
pub fn all_and_table(events: &[Event]) -> (String, String) {
    let all: Vec<String> = events
        .iter()
        .map(|e| format!("{}Event::{}", gate(e), e.ident))
        .collect();
    let mut table = format!(
        "/// The facts of `Event::ALL`, row for row.\n{METADATA}\nconst EVENT_INFOS: &[&EventInfo] = &[\n"
    );
    for e in events {
        let _ = writeln!(table, "    {}&{},", gate(e), event_info(e));
    }
    table.push_str("];\n");
    // One entry a line, as rustfmt writes it: the Ice Lake-SP CHA's was one 76,781-character line.
    let all: String = all.iter().map(|e| format!("\n        {e},")).collect();
    (format!("{all}\n    "), table)
}

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

/// The unit's `Event` type and its constants.
fn event_type_text(unit: &Unit, out: &mut String) {
    let (code, umask) = (control_int(unit, "ev_sel"), umask_int(unit));
    let masks = mask_roles(unit);
    let mask_fields: String = masks
        .iter()
        .map(|(_, name, ty, what)| format!("    /// Its {what} (0: none).\n    {name}: {ty},\n"))
        .collect();
    let _ = write!(out, "/// An event of this unit. Only this unit's counter controls take it (`with_event`), so\n/// an event of one unit cannot be programmed into another's counter. Each constant's doc\n/// gives the counters that may count it (bit n: counter n).\n#[derive(Debug, Clone, Copy, PartialEq, Eq)]\n#[cfg_attr(not(feature = \"metadata\"), allow(dead_code))]\npub struct Event {{\n    code: {code},\n    umask: {umask},\n    ext_sel: bool,\n{mask_fields}    /// Its row in `EVENT_INFOS`.\n    row: u16,\n}}\n\nimpl Event {{\n");
    for (row, e) in unit.events.iter().enumerate() {
        let by_role = e.masks.by_role();
        let value = |role: Role| by_role.iter().find(|(r, _)| *r == role).map_or(0, |x| x.1);
        let set: String = masks
            .iter()
            .filter(|(role, ..)| value(*role) != 0)
            .map(|(role, _, _, what)| format!(", {what} {:#x}", value(*role)))
            .collect();
        doc(
            out,
            "    ",
            &format!(
                "`{}`: event select {:#04x}, umask {:#04x}{set}, counters {:#b}{}.{}",
                e.name,
                e.code,
                e.umask,
                e.counters,
                ht_off_note(e),
                experimental_note(e)
            ),
        );
        if e.experimental {
            let _ = writeln!(out, "    {EXPERIMENTAL}");
        }
        let values: String = masks
            .iter()
            .map(|(role, name, ..)| format!("{name}: {:#x}, ", value(*role)))
            .collect();
        let _ = writeln!(
            out,
            "    pub const {}: Event = Event {{ code: {:#04x}, umask: {:#04x}, ext_sel: {}, {values}row: {row} }};",
            e.ident, e.code, e.umask, e.ext_sel,
        );
    }
    let (all, table) = all_and_table(&unit.events);
    let _ = writeln!(
        out,
        "\n    /// Every event of the unit.\n    pub const ALL: &'static [Event] = &[{all}];\n\n    /// Event select.\n    pub const fn code(self) -> {code} {{\n        self.code\n    }}\n\n    /// Unit mask.\n    pub const fn umask(self) -> {umask} {{\n        self.umask\n    }}\n\n    /// Whether it needs the event-select extension bit.\n    pub const fn ext_sel(self) -> bool {{\n        self.ext_sel\n    }}\n}}\n\n{METADATA}\nimpl Event {{\n    /// The event's facts.\n    pub const fn info(self) -> &'static EventInfo {{\n        EVENT_INFOS[self.row as usize]\n    }}\n\n    /// Whether counter `n` may count it.\n    pub const fn can_count_on(self, n: u32) -> bool {{\n        self.info().can_count_on(n)\n    }}\n}}\n\n{table}"
    );
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
