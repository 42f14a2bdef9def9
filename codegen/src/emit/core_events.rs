//! Core event lists in the generated crate: the events of a core PMU unit (scope `cpu`), and
//! each processor's own list for its core PMU (`processors.xml`'s `core-pmu`), both through
//! the `core_events!` macro of `templates/core_events.rs`. A core PMU unit's counter control
//! gets one `with_event` that takes an event of any list, since every processor counts its
//! core events with the same architectural controls.

use std::fmt::Write;

use proc_macro2::Literal;

use super::rust::{field_ident, HEADER};
use crate::model::pmu::{Role, Scope};
use crate::model::*;

/// Whether `unit` lists its events through `core_events!`: a core PMU's unit.
pub fn is_core_unit(unit: &Unit) -> bool {
    unit.pmu.as_ref().is_some_and(|p| p.scope == Scope::Cpu)
}

/// The roles `with_event` sets, in the macro's order, with the value type each setter takes.
const SETTERS: [(Role, &str); 6] = [
    (Role::Event, "u8"),
    (Role::Umask, "u8"),
    (Role::Threshold, "u8"),
    (Role::Invert, "bool"),
    (Role::Edge, "bool"),
    (Role::AnyThread, "bool"),
];

/// `Type { with_a, with_b, .. }` for a counter control that has every role of [`SETTERS`]
/// as a plain integer or bit field; `None` for any other register.
fn control_setters(reg: &Register) -> Option<String> {
    let mut setters = Vec::new();
    for (role, ty) in SETTERS {
        let f = reg
            .fields
            .iter()
            .find(|f| f.role.as_ref().is_some_and(|r| r.role == role))?;
        let plain = f.repeat.is_none()
            && !f.has_enum()
            && match ty {
                "bool" => f.width() == 1,
                _ => f.width() > 1 && f.width() <= 8,
            };
        if !plain || !f.access.is_writable() {
            return None;
        }
        setters.push(format!("with_{}", field_ident(f)));
    }
    Some(format!("{} {{ {} }}", reg.type_name, setters.join(", ")))
}

/// `core_events!([controls], [events]);`
fn macro_text(controls: &[String], events: &[Event], out: &mut String) {
    let _ = writeln!(out, "core_events!([{}], [", controls.join(", "));
    for e in events {
        let s = e.settings;
        let _ = writeln!(
            out,
            "    {} = {} {:#04x} {:#04x} {:#b} {} {} {} {},",
            e.ident,
            Literal::string(&e.name),
            e.code,
            e.umask,
            e.counters,
            s.threshold,
            s.invert,
            s.edge,
            s.any_thread
        );
    }
    let _ = writeln!(out, "]);\n");
}

/// A core PMU unit's events, and `with_event` on its counter controls.
pub fn unit_events_text(unit: &Unit, out: &mut String) {
    let controls: Vec<String> = unit.registers.iter().filter_map(control_setters).collect();
    macro_text(&controls, &unit.events, out);
}

/// `src/<processor>/core.rs`: the processor's own core event list, if it has one.
pub fn processor_core_module(proc: &Processor) -> Option<String> {
    let core = proc.core_events.as_ref()?;
    let mut out = String::from(HEADER);
    let _ = writeln!(
        out,
        "//! Core events of `{}` ({} events, from Intel's event list), counted by the\n//! `{}` PMU's {} unit: the `with_event` of its counter control takes them.\nuse crate::core_events::CoreEventsInfo;\n",
        proc.id,
        core.events.len(),
        core.processor,
        core.unit,
    );
    macro_text(&[], &core.events, &mut out);
    let _ = writeln!(
        out,
        "/// This processor's core event list.\npub static EVENTS: CoreEventsInfo = CoreEventsInfo {{\n    processor: {},\n    unit: {},\n    events: EVENT_INFOS,\n}};",
        Literal::string(&core.processor),
        Literal::string(&core.unit)
    );
    Some(out)
}
