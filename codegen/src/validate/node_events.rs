//! `<node-events>`: the events a mesh node offers its crosspoint's DTM (an Arm CMN node type's
//! event ids, each written into one of four slots of the node's event select). Checked
//! against the unit's select register, the DTM's four local counters and the perf driver's
//! `type`, `eventid` and `occupid` formats.

use std::collections::HashSet;

use super::*;
use crate::model::pmu::PerfDriver;

/// How many local counters a DTM has, so how many slots a node's event select offers it
/// (Linux's `CMN_DTM_NUM_COUNTERS`).
const DTM_COUNTERS: usize = 4;

/// The perf driver's formats a node event is written in: its node type, its id, its filter.
const FORMATS: [&str; 3] = ["type", "eventid", "occupid"];

impl Validator {
    /// The unit's `<node-events>`, resolved, or `None` (reported) when it is wrong.
    pub(super) fn node_events(
        &mut self,
        ctx: &Ctx<'_>,
        cat: &Catalogue,
        raw: &RawNodeEvents,
        registers: &[Register],
    ) -> Option<NodeEvents> {
        let errors = self.errors.len();
        self.public_source(ctx, cat, raw.at, &raw.source);
        let driver = self.node_driver(ctx, cat, raw);
        let node_type = parse_number(&raw.node_type);
        let type_width = driver.as_ref().map_or(16, |d| format_width(d, "type"));
        if node_type.is_none_or(|t| t >> type_width != 0) {
            self.push(ctx.error(
                raw.at,
                format!("<node-events node-type=\"{}\"> is not a node type that fits the perf format `type` ({type_width} bits)", raw.node_type),
                "give NODE_INFO.node_type's value for these nodes (0x5 for an HN-F)",
            ));
        }
        let input = match raw.input.as_str() {
            "device" => Some(NodeInput::Device),
            "crosspoint" => Some(NodeInput::Crosspoint),
            other => {
                self.push(ctx.error(
                    raw.at,
                    format!("<node-events input=\"{other}\"> is not a DTM input"),
                    "input is device (a node on a crosspoint's port) or crosspoint (the crosspoint's own events)",
                ));
                None
            }
        };
        let select = registers.iter().find(|r| r.name == raw.select);
        let slots = match select {
            Some(reg) => self.node_slots(ctx, raw, reg),
            None => {
                self.push(ctx.error(
                    raw.at,
                    format!(
                        "<node-events select=\"{}\"> names no register of this unit",
                        raw.select
                    ),
                    "name the node's event select register (its PMU_EVENT_SEL)",
                ));
                Vec::new()
            }
        };
        let events = match (select, &driver) {
            (Some(reg), Some(d)) => self.node_event_list(ctx, raw, reg, &slots, d),
            _ => Vec::new(),
        };
        if self.errors.len() > errors {
            return None;
        }
        Some(NodeEvents {
            node_type: node_type? as u16,
            select: raw.select.clone(),
            slots: slots.iter().map(|f| f.name.to_string()).collect(),
            input: input?,
            pmu: raw.pmu.clone(),
            driver: driver?,
            source: raw.source.clone(),
            events,
        })
    }

    /// The perf driver `raw` names, with the formats a node event is written in.
    fn node_driver(
        &mut self,
        ctx: &Ctx<'_>,
        cat: &Catalogue,
        raw: &RawNodeEvents,
    ) -> Option<Arc<PerfDriver>> {
        let Some(driver) = cat.perf_drivers.get(&raw.perf_driver) else {
            self.push(ctx.error(
                raw.at,
                format!(
                    "<node-events> names unknown perf driver `{}`",
                    raw.perf_driver
                ),
                "declare the driver's formats in processors.xml (<perf-driver id=\"...\">)",
            ));
            return None;
        };
        let missing: Vec<&str> = FORMATS
            .into_iter()
            .filter(|n| !driver.formats.iter().any(|f| f.name == *n))
            .collect();
        if !missing.is_empty() {
            self.push(ctx.error(
                raw.at,
                format!("perf driver `{}` has no format {}", driver.id, missing.join(", ")),
                "a node event is written as the driver's type, eventid and occupid formats (Linux's arm_cmn_format_attrs)",
            ));
            return None;
        }
        Some(Arc::clone(driver))
    }

    /// The select's slot fields: one per DTM local counter, each a writable field of one
    /// width.
    fn node_slots<'r>(
        &mut self,
        ctx: &Ctx<'_>,
        raw: &RawNodeEvents,
        select: &'r Register,
    ) -> Vec<&'r Field> {
        let names: Vec<&str> = raw.slots.split_whitespace().collect();
        if names.len() != DTM_COUNTERS {
            self.push(ctx.error(
                raw.at,
                format!(
                    "<node-events> lists {} slots; a DTM has {DTM_COUNTERS} local counters",
                    names.len()
                ),
                "list the select's four event fields, the one local counter n reads first",
            ));
        }
        let mut slots = Vec::new();
        for name in names {
            match select.fields.iter().find(|f| &*f.name == name) {
                Some(f) if f.access == Access::Rw => slots.push(f),
                Some(_) => self.push(ctx.error(
                    raw.at,
                    format!("slot `{name}` of {} is not a read-write field", select.name),
                    "a slot is written with the event id: give the field access rw",
                )),
                None => self.push(ctx.error(
                    raw.at,
                    format!("slot `{name}` is not a field of {}", select.name),
                    "name the select register's event fields",
                )),
            }
        }
        if slots.windows(2).any(|w| w[0].width() != w[1].width()) {
            self.push(ctx.error(
                raw.at,
                format!("the slots of {} are not all one width", select.name),
                "every local counter takes the same event ids: give the slot fields one width",
            ));
        }
        slots
    }

    /// The events: unique names and settings, ids that fit a slot and the perf `eventid`,
    /// filters that are writable fields of the select and values that fit them and `occupid`.
    fn node_event_list(
        &mut self,
        ctx: &Ctx<'_>,
        raw: &RawNodeEvents,
        select: &Register,
        slots: &[&Field],
        driver: &PerfDriver,
    ) -> Vec<NodeEvent> {
        let slot_width = slots.first().map_or(0, |f| f.width());
        let id_width = slot_width.min(format_width(driver, "eventid"));
        let occupid_width = format_width(driver, "occupid");
        let (mut names, mut settings) = (HashSet::new(), HashSet::new());
        let mut events = Vec::new();
        for e in &raw.event {
            let id = parse_number(&e.id).filter(|v| v >> id_width == 0);
            if id.is_none() {
                self.push(ctx.error(
                    e.at,
                    format!("event {}: id `{}` does not fit a slot and the perf format eventid ({id_width} bits)", e.name, e.id),
                    "give the event id the kernel's table gives it",
                ));
            }
            let filter = self.node_filter(ctx, e, select, occupid_width);
            if !names.insert(e.name.as_str()) {
                self.push(ctx.error(
                    e.at,
                    format!("event {} is listed twice", e.name),
                    "give each event once",
                ));
            }
            let (Some(id), Some((filter, occupid))) = (id, filter) else {
                continue;
            };
            if !settings.insert((id, filter.clone(), occupid)) {
                self.push(ctx.error(
                    e.at,
                    format!("event {} has the id and filter of an earlier event", e.name),
                    "two names for one setting: keep one",
                ));
            }
            events.push(NodeEvent {
                name: e.name.clone(),
                id: id as u16,
                filter,
                occupid: occupid as u8,
            });
        }
        events
    }

    /// An event's filter field and value: both or neither, the field a writable field of the
    /// select, the value fitting it and the perf format `occupid`.
    fn node_filter(
        &mut self,
        ctx: &Ctx<'_>,
        e: &RawNodeEvent,
        select: &Register,
        occupid_width: u32,
    ) -> Option<(Option<String>, u64)> {
        let (name, value) = match (&e.filter, &e.occupid) {
            (None, None) => return Some((None, 0)),
            (Some(f), Some(v)) => (f, v),
            _ => {
                self.push(ctx.error(
                    e.at,
                    format!("event {}: filter and occupid go together", e.name),
                    "give the select field the filter is written to and its value, or neither",
                ));
                return None;
            }
        };
        let Some(field) = select
            .fields
            .iter()
            .find(|f| &*f.name == name && f.access == Access::Rw)
        else {
            self.push(ctx.error(
                e.at,
                format!(
                    "event {}: filter `{name}` is not a read-write field of {}",
                    e.name, select.name
                ),
                "name the select's filter field (occup1_id, class_occup_id...)",
            ));
            return None;
        };
        let width = field.width().min(occupid_width);
        match parse_number(value).filter(|v| v >> width == 0) {
            Some(v) => Some((Some(name.clone()), v)),
            None => {
                self.push(ctx.error(
                    e.at,
                    format!("event {}: occupid `{value}` does not fit {name} and the perf format occupid ({width} bits)", e.name),
                    "give the filter value the kernel's table gives the event",
                ));
                None
            }
        }
    }
}

/// The width of `driver`'s format `name` (0 when it has none: nothing fits).
fn format_width(driver: &PerfDriver, name: &str) -> u32 {
    driver
        .formats
        .iter()
        .find(|f| f.name == name)
        .map_or(0, |f| f.width)
}
