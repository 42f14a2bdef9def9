//! Core event lists in the generated crate: the events of a core PMU unit (scope `cpu`), and
//! each processor's own list for its core PMU (`processors.xml`'s `core-pmu`), both through
//! plain code over `CoreEvent` of `templates/core_events.rs`. A core PMU unit's counter control
//! gets one `with_event` that takes an event of any list, since every processor counts its
//! core events with the same architectural controls.

use std::fmt::Write;

use super::events::{event_consts, rows_and_table, METADATA, ROW_USES};
use super::rust::{lit, HEADER};
use crate::model::pmu::{Role, Scope};
use crate::model::*;
use crate::naming::rust::{field_ident, int_type};

/// Whether `unit` lists its events as a core event list: a core PMU's unit.
pub fn is_core_unit(unit: &Unit) -> bool {
    // A core PMU whose event select is wider than `CoreEvent`'s 8 bits (AMD's 12-bit PERF_CTL
    // select, two bit ranges) has an event type of its own, as an uncore unit does.
    let narrow = unit.registers.iter().all(|r| {
        r.fields
            .iter()
            .filter(|f| f.role.as_ref().is_some_and(|x| x.role == Role::Event))
            .all(|f| f.width() <= 8)
    });
    narrow && unit.pmu.as_ref().is_some_and(|p| p.scope == Scope::Cpu)
}

/// The roles `with_event` sets, in the macro's order, with the value type each setter takes.
const SETTERS: [(Role, &str); 6] = [
    (Role::Event, "u16"),
    (Role::Umask, "u8"),
    (Role::Threshold, "u8"),
    (Role::Invert, "bool"),
    (Role::Edge, "bool"),
    (Role::AnyThread, "bool"),
];

/// The `CoreEvent` value each of [`SETTERS`] takes, in the same order.
const SETTER_VALUES: [&str; 6] = ["code", "umask", "threshold", "invert", "edge", "any_thread"];

/// The type and setters (`with_a`, `with_b`, ..) of a counter control that has every role of [`SETTERS`]
/// as a plain integer or bit field; `None` for any other register.
fn control_setters(reg: &Register) -> Option<(String, Vec<String>)> {
    let mut setters = Vec::new();
    for (role, ty) in SETTERS {
        let f = reg
            .fields
            .iter()
            .find(|f| f.role.as_ref().is_some_and(|r| r.role == role))?;
        let wanted = int_type(f.width());
        let plain = f.repeat.is_none()
            && !f.has_enum()
            && match ty {
                "bool" => f.width() == 1,
                // An event select may be wider than a byte (AMD's 12 bits over two ranges).
                "u16" => f.width() > 1 && f.width() <= 16,
                _ => f.width() > 1 && f.width() <= 8,
            };
        if !plain || !f.access.is_writable() {
            return None;
        }
        // The event's value as the setter takes it; the validator keeps it within the field.
        let value = format!("event.{}", SETTER_VALUES[setters.len()]);
        let arg = if ty == "bool" || wanted == ty {
            value
        } else {
            format!("{value} as {wanted}")
        };
        setters.push(format!("with_{}({arg})", field_ident(f)));
    }
    Some((reg.type_name.clone(), setters))
}

/// A core event list as plain code: `List`, `Event` (= `CoreEvent<List>`) with a constant
/// per event (`Event::row(n)`), `ALL`, the table of rows they are decoded from and the
/// metadata table `EVENT_INFOS`; and `with_event` on each control in `controls` (`Type {
/// with_event_select, with_umask, with_threshold, with_invert, with_edge, with_any }`).
fn list_text(controls: &[(String, Vec<String>)], events: &[Event], out: &mut String) {
    out.push_str(ROW_USES);
    out.push_str("\n/// Marks this module's event list: its events are [`Event`]s, `CoreEvent<List>`.\npub enum List {}\n\n/// An event of this list. Any core event list's events go into the core PMU's counter\n/// control (`with_event`); an uncore event does not compile there. Each constant is a row\n/// of the list's event table, which gives its event select, umask, settings and the\n/// counters that may count it (bit n: counter n).\npub type Event = CoreEvent<List>;\n\n");
    let after = "    /// Every event of the list.\n    pub const ALL: &'static [Event] = &Event::from_rows::<ROW_COUNT>(EVENT_ROWS, EXPERIMENTAL_ROWS);\n\n    /// The event of row `n` of the list's table.\n    const fn row(n: u16) -> Event {\n        Event::from_row(EVENT_ROWS, EXPERIMENTAL_ROWS, n)\n    }\n";
    event_consts(after, out);
    let _ = writeln!(
        out,
        "\n{METADATA}\nimpl crate::core_events::EventList for List {{\n    const EVENT_INFOS: &'static [&'static EventInfo] = EVENT_INFOS;\n}}\n"
    );
    rows_and_table(events, out);
    out.push('\n');
    for (ty, s) in controls {
        let _ = writeln!(
            out,
            "impl {ty} {{\n    /// This value set to count `event`, an event of any core event list: its event\n    /// select and umask, and the counter mask, invert, edge-detect and any-thread\n    /// settings the list gives it (each set, to 0 where the event has none).\n    #[inline]\n    pub const fn with_event<L>(self, event: CoreEvent<L>) -> Self {{\n        self.{}.{}.{}.{}.{}\n            .{}\n    }}\n}}\n",
            s[0], s[1], s[2], s[3], s[4], s[5]
        );
    }
}

/// A core PMU unit's events, and `with_event` on its counter controls.
pub fn unit_events_text(unit: &Unit, out: &mut String) {
    let controls: Vec<_> = unit.registers.iter().filter_map(control_setters).collect();
    list_text(&controls, &unit.events, out);
}

/// `src/<processor>/core.rs`: the processor's own core event list, if it has one.
pub fn processor_core_module(proc: &Processor) -> Option<String> {
    let core = proc.core_events.as_ref()?;
    let mut out = String::from(HEADER);
    // The auxiliary MSR type, where an event of the list needs one.
    let aux = if core.events.iter().any(|e| e.aux.is_some()) {
        "use crate::support::AuxMsr;\n"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "//! Core events of `{}` ({} events, from Intel's event list), counted by the\n//! `{}` PMU's {} unit: the `with_event` of its counter control takes them.\n{aux}use crate::core_events::CoreEvent;\n{METADATA}\nuse crate::core_events::CoreEventsInfo;\n{METADATA}\nuse crate::support::EventInfo;\n",
        proc.id,
        core.events.len(),
        core.processor,
        core.unit,
    );
    list_text(&[], &core.events, &mut out);
    let _ = writeln!(
        out,
        "/// This processor's core event list.\n{METADATA}\npub static EVENTS: CoreEventsInfo = CoreEventsInfo {{\n    processor: {},\n    unit: {},\n    events: EVENT_INFOS,\n}};",
        lit(&core.processor),
        lit(&core.unit)
    );
    Some(out)
}
