//! Events files (`<processor>/events/<unit>.xml`): each event checked against what its
//! unit's counter controls can take.

use std::collections::HashSet;

use super::*;

/// What a unit's counter controls (registers with `ev_sel` and `umask`) can take.
#[derive(Debug, Clone, Copy)]
pub struct EventCapacity {
    /// Largest event select every control takes.
    pub sel_max: u64,
    /// Largest umask every control takes.
    pub umask_max: u64,
    /// Number of counters.
    pub counters: u32,
    /// Every control has the event-select extension bit.
    pub has_ext: bool,
}

impl EventCapacity {
    /// The capacity of `unit`, or `None` if it has no counter control.
    pub fn of(unit: &Unit) -> Option<Self> {
        // A counter control has an event select; a unit mask where the box has one (the
        // PCU's controls have an occupancy select instead).
        let controls: Vec<&Register> = unit
            .registers
            .iter()
            .filter(|r| r.fields.iter().any(|f| f.name.as_ref() == "ev_sel"))
            .collect();
        if controls.is_empty() {
            return None;
        }
        let field_max = |name: &str| {
            controls
                .iter()
                .map(|r| {
                    r.fields
                        .iter()
                        .find(|f| f.name.as_ref() == name)
                        .map_or(0, |f| f.max())
                })
                .min()
                .unwrap_or(0)
        };
        Some(Self {
            sel_max: field_max("ev_sel"),
            umask_max: field_max("umask"),
            counters: controls.iter().map(|r| r.count).max().unwrap_or(1),
            has_ext: controls
                .iter()
                .all(|r| r.fields.iter().any(|f| f.name.as_ref() == "ev_sel_ext")),
        })
    }

    /// Why an event with these facts cannot be counted by the unit, if it cannot.
    pub fn refuse(&self, code: u64, umask: u64, counters: u32, ext: bool) -> Option<String> {
        if code > self.sel_max {
            Some(format!(
                "code {code:#x} does not fit the unit's event select (max {:#x})",
                self.sel_max
            ))
        } else if umask > self.umask_max {
            Some(format!(
                "umask {umask:#x} does not fit the unit's umask (max {:#x})",
                self.umask_max
            ))
        } else if counters == 0 || counters >> self.counters != 0 {
            Some(format!("its counters are not all below {}", self.counters))
        } else if ext && !self.has_ext {
            Some(
                "it needs the event-select extension bit, which this unit's controls do not have"
                    .into(),
            )
        } else {
            None
        }
    }
}

impl Validator {
    /// Checks an events file against its unit and adds its events to the unit.
    pub(crate) fn events(&mut self, file: &SourceFile, raw: &RawEvents, ctx: &mut SpecContext) {
        let err = |at: usize, msg: String, help: &str| file.error_at(at, msg).help(help);
        if !ctx.catalogue.public.contains_key(&raw.source) {
            self.push(err(
                raw.at,
                format!("unknown source `{}`", raw.source),
                "public sources are declared in processors.xml",
            ));
            return;
        }
        let Some(processor) = ctx.processors.iter_mut().find(|p| p.id == raw.processor) else {
            self.push(err(
                raw.at,
                format!("events for unknown processor `{}`", raw.processor),
                "use a processor id from processors.xml",
            ));
            return;
        };
        let units: Vec<String> = processor.units.iter().map(|u| u.name.clone()).collect();
        let Some(unit) = processor.units.iter_mut().find(|u| {
            u.name.eq_ignore_ascii_case(&raw.unit) || u.module.eq_ignore_ascii_case(&raw.unit)
        }) else {
            self.push(err(
                raw.at,
                format!(
                    "events for unknown unit `{}` of {}",
                    raw.unit, raw.processor
                ),
                &format!("the processor's units are: {}", units.join(", ")),
            ));
            return;
        };
        let Some(caps) = EventCapacity::of(unit) else {
            self.push(err(
                raw.at,
                format!(
                    "unit `{}` has no control register with an ev_sel field to take events",
                    unit.name
                ),
                "add the unit's counter control registers first",
            ));
            return;
        };
        let EventCapacity {
            sel_max,
            umask_max,
            counters,
            has_ext,
        } = caps;
        let mut names: HashSet<String> = unit.events.iter().map(|e| e.name.clone()).collect();
        let mut idents: HashSet<String> = unit.events.iter().map(|e| e.ident.clone()).collect();
        for e in &raw.event {
            let ctx_msg = |m: String| format!("event {}: {m}", e.name);
            let code = parse_number(&e.code).filter(|c| *c <= sel_max);
            let umask = parse_number(&e.umask).filter(|u| *u <= umask_max);
            let mask = parse_counters(&e.counters);
            let ext = match e.ext_sel.as_deref() {
                None | Some("0") => false,
                Some("1") => true,
                Some(other) => {
                    self.push(err(
                        e.at,
                        ctx_msg(format!("ext-sel `{other}` is not 0 or 1")),
                        "write ext-sel=\"1\" when the event needs the event-select extension bit",
                    ));
                    continue;
                }
            };
            let ident = event_ident(&e.name);
            let problem = if code.is_none() {
                Some((
                    format!(
                        "code `{}` does not fit the unit's event select (max {sel_max:#x})",
                        e.code
                    ),
                    "check the event code",
                ))
            } else if umask.is_none() {
                Some((
                    format!(
                        "umask `{}` does not fit the unit's umask (max {umask_max:#x})",
                        e.umask
                    ),
                    "check the unit mask",
                ))
            } else if mask.is_none_or(|m| m >> counters != 0) {
                Some((
                    format!(
                        "counters `{}` are not a list of counters below {counters}",
                        e.counters
                    ),
                    "write e.g. counters=\"0,1\" or \"0-3\"",
                ))
            } else if ext && !has_ext {
                Some((
                    "needs the event-select extension bit, which this unit's controls do not have"
                        .to_string(),
                    "check the unit, or the ext-sel attribute",
                ))
            } else if !names.insert(e.name.clone()) {
                Some((
                    "is listed twice".to_string(),
                    "each event appears once per unit",
                ))
            } else if !idents.insert(ident.clone()) {
                Some((
                    format!("its constant name {ident} clashes with another event's"),
                    "rename one of the events",
                ))
            } else {
                None
            };
            if let Some((msg, help)) = problem {
                self.push(err(e.at, ctx_msg(msg), help));
                continue;
            }
            unit.events.push(Event {
                name: e.name.clone(),
                ident,
                code: code.unwrap_or(0) as u8,
                umask: umask.unwrap_or(0) as u8,
                ext_sel: ext,
                counters: mask.unwrap_or(0),
                filters: e.filters.clone().unwrap_or_default(),
                source: raw.source.clone(),
            });
        }
    }
}
