//! Events files (`<processor>/events/<unit>.xml`): each event checked against what its
//! unit's counter controls can take.

use std::collections::HashSet;

use super::*;
use crate::model::pmu::Role;

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
    /// Every control array has a `count-cpuid`: the part reports how many of its counters
    /// it has (Intel's architectural PMU: 4 per thread with Hyper-Threading on, 8 without).
    pub counted_by_part: bool,
    /// Largest value every control's `threshold` role takes (0: no threshold).
    pub threshold_max: u64,
    /// Every control has an `invert` role.
    pub has_invert: bool,
    /// Every control has an `edge` role.
    pub has_edge: bool,
    /// Every control has an `any-thread` role.
    pub has_any_thread: bool,
    /// The unit is a core PMU's (`<pmu scope="cpu">`): only its events carry settings, which
    /// the generated crate's `with_event` programs.
    pub takes_settings: bool,
    /// Per mask role (`umask-ext`, `port-mask`, `fc-mask`, the order of
    /// [`EventMasks::by_role`]): the largest value every control's field with the role takes
    /// (0: not every control has one).
    pub mask_max: [u64; 3],
    /// Per mask role: the field's lowest bit, where every control has it, in one range, at
    /// the same place (the importer compares Intel's UMaskExt with the other masks by it).
    pub mask_lsb: [Option<u32>; 3],
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
        let role = |role: Role| {
            controls.iter().map(move |r| {
                r.fields
                    .iter()
                    .find(|f| f.role.as_ref().is_some_and(|x| x.role == role))
            })
        };
        let has_role = |r: Role| role(r).all(|f| f.is_some());
        let masks = EventMasks::default().by_role().map(|(r, _)| r);
        let mask_max = masks.map(|r| role(r).map(|f| f.map_or(0, |f| f.max())).min().unwrap_or(0));
        let mask_lsb = masks.map(|r| {
            let lsbs: Vec<Option<u32>> = role(r)
                .map(|f| f.filter(|f| !f.is_split()).map(|f| f.lsb))
                .collect();
            lsbs.first()
                .copied()
                .flatten()
                .filter(|l| lsbs.iter().all(|x| *x == Some(*l)))
        });
        Some(Self {
            mask_max,
            mask_lsb,
            threshold_max: role(Role::Threshold)
                .map(|f| f.map_or(0, |f| f.max()))
                .min()
                .unwrap_or(0),
            has_invert: has_role(Role::Invert),
            has_edge: has_role(Role::Edge),
            has_any_thread: has_role(Role::AnyThread),
            takes_settings: unit
                .pmu
                .as_ref()
                .is_some_and(|p| p.scope == crate::model::pmu::Scope::Cpu),
            sel_max: field_max("ev_sel"),
            umask_max: controls
                .iter()
                .map(|r| r.umask_field().map_or(0, |f| f.max()))
                .min()
                .unwrap_or(0),
            counters: controls.iter().map(|r| r.count).max().unwrap_or(1),
            has_ext: controls
                .iter()
                .all(|r| r.fields.iter().any(|f| f.name.as_ref() == "ev_sel_ext")),
            counted_by_part: controls.iter().all(|r| r.count_cpuid.is_some()),
        })
    }

    /// Why a unit cannot take an event with these `settings`, if it cannot: each needs the
    /// role that takes it in every counter control.
    pub fn refuse_settings(&self, settings: &EventSettings) -> Option<String> {
        let missing = |name: &str| {
            Some(format!(
                "it sets the {name}, which this unit's counter controls do not have (no field with that role)"
            ))
        };
        if !settings.is_none() && !self.takes_settings {
            Some(
                "it sets a threshold, invert, edge or any-thread bit, which only a core PMU's events (a unit with <pmu scope=\"cpu\">) carry"
                    .into(),
            )
        } else if u64::from(settings.threshold) > self.threshold_max {
            Some(format!(
                "its threshold (counter mask) {} does not fit the unit's threshold (max {})",
                settings.threshold, self.threshold_max
            ))
        } else if settings.invert && !self.has_invert {
            missing("invert bit")
        } else if settings.edge && !self.has_edge {
            missing("edge-detect bit")
        } else if settings.any_thread && !self.has_any_thread {
            missing("any-thread bit")
        } else {
            None
        }
    }

    /// Why a unit cannot take an event that sets these `masks`, if it cannot: each needs the
    /// role that takes it in every counter control, wide enough.
    pub fn refuse_masks(&self, masks: &EventMasks) -> Option<String> {
        masks
            .by_role()
            .iter()
            .zip(self.mask_max)
            .find(|((_, value), max)| value > max)
            .map(|((role, value), max)| {
                let role = role.as_str();
                if max == 0 {
                    format!(
                        "it sets {role} {value:#x}, which this unit's counter controls do not take (no field with the {role} role in every control)"
                    )
                } else {
                    format!("its {role} {value:#x} does not fit the unit's {role} field (max {max:#x})")
                }
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

/// The events of one unit's list so far, by name and by constant name, each given once.
struct Taken {
    names: HashSet<String>,
    idents: HashSet<String>,
}

/// What the events of one file are checked against: their unit's counter controls and
/// registers, and the file's source.
struct UnitOfEvents<'a> {
    caps: &'a EventCapacity,
    candidates: &'a [AuxCandidate],
    source: &'a str,
}

/// An event's flags, settings, masks and auxiliary MSR, each read by its rule.
struct Attributes {
    ext: bool,
    experimental: bool,
    settings: EventSettings,
    masks: EventMasks,
    aux: Option<AuxMsr>,
}

/// The attributes of `e` besides its code, umask and counters, or the first that is
/// written wrong, with what to do.
fn attributes(e: &RawEvent, unit: &UnitOfEvents) -> Result<Attributes, (String, &'static str)> {
    let flag = |name: &str, v: Option<&str>, help: &'static str| match v {
        None | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err((format!("{name} `{other}` is not 0 or 1"), help)),
    };
    let ext = flag(
        "ext-sel",
        e.ext_sel.as_deref(),
        "write ext-sel=\"1\" when the event needs the event-select extension bit",
    )?;
    let experimental = flag(
        "experimental",
        e.experimental.as_deref(),
        "write experimental=\"1\" on an event from a list its vendor calls experimental, or leave it out",
    )?;
    let written = SettingsText {
        threshold: e.threshold.as_deref(),
        invert: e.invert.as_deref(),
        edge: e.edge.as_deref(),
        any_thread: e.any_thread.as_deref(),
    };
    let settings = event_settings(&written).map_err(|msg| {
        let help = "threshold is a number (0-255); invert, edge and any-thread are 0 or 1";
        (msg, help)
    })?;
    let masks = event_masks(e).map_err(|msg| {
        let help = "umask-ext is a number of up to 32 bits, port-mask of 16, fc-mask of 8";
        (msg, help)
    })?;
    let aux = event_aux(e, unit.caps, unit.candidates)?;
    Ok(Attributes {
        ext,
        experimental,
        settings,
        masks,
        aux,
    })
}

/// An event's attributes as parsed, before they are checked against its unit.
struct Parsed {
    code: Option<u64>,
    umask: Option<u64>,
    mask: Option<u32>,
    ext: bool,
    ident: String,
    settings: EventSettings,
    masks: EventMasks,
}

impl Validator {
    /// Checks an events file against its unit and adds its events to the unit.
    pub(crate) fn events(&mut self, file: &SourceFile, raw: &RawEvents, ctx: &mut SpecContext) {
        let Some((unit_name, owner, caps)) = self.events_unit_of(file, raw, ctx) else {
            return;
        };
        let candidates: Vec<AuxCandidate> = ctx
            .processors
            .iter()
            .filter(|p| p.id == owner)
            .flat_map(|p| &p.units)
            .find(|u| u.name == unit_name)
            .map(aux_candidates)
            .unwrap_or_default();
        let processor = ctx
            .processors
            .iter_mut()
            .find(|p| p.id == raw.processor)
            .expect("events_unit found it");
        let target: &mut Vec<Event> = if owner == raw.processor {
            &mut processor
                .units
                .iter_mut()
                .find(|u| u.name == unit_name)
                .expect("events_unit found it")
                .events
        } else {
            &mut processor
                .core_events
                .get_or_insert_with(|| CoreEvents {
                    processor: owner.clone(),
                    unit: unit_name.clone(),
                    events: Vec::new(),
                })
                .events
        };
        let mut taken = Taken {
            names: target.iter().map(|e| e.name.clone()).collect(),
            idents: target.iter().map(|e| e.ident.clone()).collect(),
        };
        for e in &raw.event {
            let unit = UnitOfEvents {
                caps: &caps,
                candidates: &candidates,
                source: &raw.source,
            };
            if let Some(event) = self.event(file, e, &unit, &mut taken) {
                target.push(event);
            }
        }
        // Experimental events after the others (a stable sort keeps each group's order): the
        // generated tables build them behind a feature, and the others' rows stay the same
        // with it or without.
        target.sort_by_key(|e| e.experimental);
    }

    /// The unit an events file is for (its name, owning processor and capacity), from a
    /// declared source; `None` (reported) otherwise.
    fn events_unit_of(
        &mut self,
        file: &SourceFile,
        raw: &RawEvents,
        ctx: &SpecContext,
    ) -> Option<(String, String, EventCapacity)> {
        let err = |at: usize, msg: String, help: &str| file.error_at(at, msg).help(help);
        let file_ctx = Ctx {
            file,
            register: None,
        };
        if !self.public_source(&file_ctx, &ctx.catalogue, raw.at, &raw.source) {
            return None;
        }
        let (unit_name, owner, caps) = match events_unit(&ctx.processors, &raw.processor, &raw.unit)
        {
            Ok(found) => found,
            Err((msg, help)) => {
                self.push(err(raw.at, msg, &help));
                return None;
            }
        };
        let Some(caps) = caps else {
            self.push(err(
                raw.at,
                format!(
                    "unit `{unit_name}` has no control register with an ev_sel field to take events"
                ),
                "add the unit's counter control registers first",
            ));
            return None;
        };
        Some((unit_name, owner, caps))
    }

    /// One event, checked against its unit's controls and the events before it.
    fn event(
        &mut self,
        file: &SourceFile,
        e: &RawEvent,
        unit: &UnitOfEvents,
        taken: &mut Taken,
    ) -> Option<Event> {
        let (caps, source) = (unit.caps, unit.source);
        let err = |msg: String, help: &str| {
            file.error_at(e.at, format!("event {}: {msg}", e.name))
                .help(help)
        };
        let attrs = match attributes(e, unit) {
            Ok(attrs) => attrs,
            Err((msg, help)) => {
                self.push(err(msg, help));
                return None;
            }
        };
        let parsed = Parsed {
            code: parse_number(&e.code).filter(|c| *c <= caps.sel_max.min(0xFFFF)),
            umask: parse_number(&e.umask).filter(|u| *u <= caps.umask_max.min(0xFFFF)),
            mask: parse_counters(&e.counters),
            ext: attrs.ext,
            ident: event_ident(&e.name),
            settings: attrs.settings,
            masks: attrs.masks,
        };
        if let Some((msg, help)) = event_problem(e, &parsed, caps, taken) {
            self.push(err(msg, help));
            return None;
        }
        Some(Event {
            name: e.name.clone(),
            ident: parsed.ident,
            code: parsed.code.and_then(|c| u16::try_from(c).ok()).unwrap_or(0),
            umask: parsed
                .umask
                .and_then(|u| u16::try_from(u).ok())
                .unwrap_or(0),
            ext_sel: parsed.ext,
            counters: parsed.mask.unwrap_or(0),
            counters_ht_off: e
                .counters_ht_off
                .as_deref()
                .and_then(parse_counters)
                .unwrap_or(0),
            filters: e.filters.clone().unwrap_or_default(),
            source: source.to_string(),
            settings: parsed.settings,
            masks: parsed.masks,
            experimental: attrs.experimental,
            aux: attrs.aux,
        })
    }
}

/// Why the unit cannot take an event, or its name is taken (the first reason, with its
/// help); an event that fits takes its name and constant name.
fn event_problem(
    e: &RawEvent,
    parsed: &Parsed,
    caps: &EventCapacity,
    taken: &mut Taken,
) -> Option<(String, &'static str)> {
    let EventCapacity {
        sel_max,
        umask_max,
        counters,
        has_ext,
        ..
    } = *caps;
    if parsed.code.is_none() {
        Some((
            format!(
                "code `{}` does not fit the unit's event select (max {sel_max:#x})",
                e.code
            ),
            "check the event code",
        ))
    } else if parsed.umask.is_none() {
        Some((
            format!(
                "umask `{}` does not fit the unit's umask (max {umask_max:#x})",
                e.umask
            ),
            "check the unit mask",
        ))
    } else if parsed.mask.is_none_or(|m| m >> counters != 0) {
        Some((
            format!(
                "counters `{}` are not a list of counters below {counters}",
                e.counters
            ),
            "write e.g. counters=\"0,1\" or \"0-3\"",
        ))
    } else if let Some(problem) = ht_off_problem(e, parsed.mask.unwrap_or(0), caps) {
        Some(problem)
    } else if parsed.ext && !has_ext {
        Some((
            "needs the event-select extension bit, which this unit's controls do not have"
                .to_string(),
            "check the unit, or the ext-sel attribute",
        ))
    } else if let Some(why) = caps.refuse_settings(&parsed.settings) {
        Some((why, "check the unit, or the event's settings"))
    } else if let Some(why) = caps.refuse_masks(&parsed.masks) {
        Some((
            why,
            "give the unit's counter control the field with that role, or check the event",
        ))
    } else if !taken.names.insert(e.name.clone()) {
        Some((
            "is listed twice".to_string(),
            "each event appears once per unit",
        ))
    } else if !taken.idents.insert(parsed.ident.clone()) {
        Some((
            format!(
                "its constant name {} clashes with another event's",
                parsed.ident
            ),
            "rename one of the events",
        ))
    } else {
        None
    }
}

/// Why an event's `counters-ht-off` (Intel's `CounterHTOff`) cannot stand, if it cannot. It
/// lists the counters a core without Hyper-Threading lets the event count on: every counter
/// of `counters` (`mask`), which must be all those from 0 to its highest (an event its list
/// restricts stays restricted: Intel gives such events the same `CounterHTOff`), and more
/// above them, which the part has only without Hyper-Threading. So the unit's part must say
/// how many counters it has (`count-cpuid`): a tool places the event on those of
/// `counters-ht-off` the part reports, which with Hyper-Threading on are `counters`.
fn ht_off_problem(e: &RawEvent, mask: u32, caps: &EventCapacity) -> Option<(String, &'static str)> {
    let text = e.counters_ht_off.as_deref()?;
    let problem = |msg: String, help| Some((format!("counters-ht-off `{text}`: {msg}"), help));
    let Some(ht_off) = parse_counters(text).filter(|m| m >> caps.counters == 0) else {
        return problem(
            format!("not a list of counters below {}", caps.counters),
            "write e.g. counters-ht-off=\"0-7\"",
        );
    };
    let added = ht_off & !mask;
    if ht_off & mask != mask || added == 0 {
        problem(
            format!("is not every counter of counters `{}` and more", e.counters),
            "list every counter of counters and those a core without Hyper-Threading adds, or leave counters-ht-off out",
        )
    } else if mask & (mask + 1) != 0 {
        // Counters 0..=k: the added ones, outside them, are all above.
        problem(
            format!(
                "adds counters to counters `{}`, which are not every counter from 0 up",
                e.counters
            ),
            "counters-ht-off widens an event free to count on any counter (counters=\"0-3\") to the counters above them (\"0-7\"); a restricted event keeps its counters",
        )
    } else if !caps.counted_by_part {
        problem(
            "the unit's counter controls have no count-cpuid, so nothing says whether a part \
             has the added counters"
                .into(),
            "give the unit's counter arrays a count-cpuid, or leave counters-ht-off out",
        )
    } else {
        None
    }
}

/// The unit an events file of `processor` names as `unit`: one of the processor's own units,
/// or, where `processors.xml` gives the processor a `core-pmu`, a unit of that processor (a
/// processor's core events are counted by the architectural CORE unit's controls). The one
/// place that rule lives. Returns the unit's name, the processor that owns it and what its
/// controls take, or the error and its help.
pub fn events_unit(
    processors: &[Processor],
    processor: &str,
    unit: &str,
) -> Result<(String, String, Option<EventCapacity>), (String, String)> {
    let Some(p) = processors.iter().find(|p| p.id == processor) else {
        return Err((
            format!("events for unknown processor `{processor}`"),
            "use a processor id from processors.xml".into(),
        ));
    };
    let named =
        |u: &&Unit| u.name.eq_ignore_ascii_case(unit) || u.module.eq_ignore_ascii_case(unit);
    let core = p
        .core_pmu
        .as_deref()
        .and_then(|c| processors.iter().find(|q| q.id == c));
    let found = p
        .units
        .iter()
        .find(named)
        .map(|u| (u, p.id.as_str()))
        .or_else(|| core.and_then(|c| c.units.iter().find(named).map(|u| (u, c.id.as_str()))));
    match found {
        Some((u, owner)) => Ok((u.name.clone(), owner.to_string(), EventCapacity::of(u))),
        None => {
            let mut units: Vec<String> = p.units.iter().map(|u| u.name.clone()).collect();
            if let Some(c) = core {
                units.extend(
                    c.units
                        .iter()
                        .map(|u| format!("{} (its core PMU, {})", u.name, c.id)),
                );
            }
            Err((
                format!("events for unknown unit `{unit}` of {processor}"),
                format!("the processor's units are: {}", units.join(", ")),
            ))
        }
    }
}

/// An event's `umask-ext`, `port-mask` and `fc-mask` attributes.
fn event_masks(e: &RawEvent) -> Result<EventMasks, String> {
    fn number<T: TryFrom<u64>>(name: &str, v: &Option<String>) -> Result<T, String> {
        let v = v.as_deref().unwrap_or("0");
        parse_number(v)
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| {
                format!(
                    "{name} `{v}` is not a number of {} bits",
                    8 * std::mem::size_of::<T>()
                )
            })
    }
    Ok(EventMasks {
        umask_ext: number("umask-ext", &e.umask_ext)?,
        port_mask: number("port-mask", &e.port_mask)?,
        fc_mask: number("fc-mask", &e.fc_mask)?,
    })
}

/// A register of a unit an event may name as its auxiliary register (`msr=`): an MSR of a
/// one-instance unit that plays no part in the unit's PMU structure (no field of it has a
/// role), by concrete name, with its address and the bits a value must leave zero.
#[derive(Debug, Clone)]
pub struct AuxCandidate {
    /// Concrete name (`MSR_OFFCORE_RSP_0`).
    pub name: String,
    /// MSR number.
    pub address: u32,
    /// Bits the value must leave zero: reserved bits and bits above the width.
    pub forbidden: u64,
    /// The register plays a part in the PMU structure (a field has a role): not auxiliary.
    pub structural: bool,
}

/// The MSRs of `unit` by concrete name, each with what makes it an auxiliary register or
/// not; empty where the unit has several instances (an event's auxiliary register is a
/// per-CPU register of a core PMU).
pub fn aux_candidates(unit: &Unit) -> Vec<AuxCandidate> {
    if unit.instances.len() != 1 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for r in unit.registers.iter().filter(|r| r.space == Space::Msr) {
        let Addresses::Known(addresses) = &r.addresses else {
            continue;
        };
        let above = if r.width >= 64 {
            0
        } else {
            u64::MAX << r.width
        };
        for a in addresses {
            let Location::Msr(address) = a.location else {
                continue;
            };
            out.push(AuxCandidate {
                name: r.address_name(unit, a),
                address,
                forbidden: r.reserved_mask() | above,
                structural: r.fields.iter().any(|f| f.role.is_some()),
            });
        }
    }
    out
}

/// The auxiliary register an event names and its value, checked against the unit's
/// registers (`candidates`, from [`aux_candidates`]): the register exists, is not one of the
/// PMU's own, and the value sets none of its reserved bits. The one place the rule lives: the
/// validator and the importer use it.
pub fn resolve_aux(
    candidates: &[AuxCandidate],
    register: &str,
    value: u64,
) -> Result<AuxMsr, (String, &'static str)> {
    let Some(c) = candidates.iter().find(|c| c.name == register) else {
        let names: Vec<&str> = candidates
            .iter()
            .filter(|c| !c.structural)
            .map(|c| c.name.as_str())
            .collect();
        return Err((
            format!(
                "msr `{register}` is not a register of the unit (its auxiliary registers: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
            "name a register of the event's unit by its concrete name, or add the register to the unit",
        ));
    };
    if c.structural {
        return Err((
            format!(
                "msr `{register}` plays a part in the unit's PMU structure (a field of it has a role), so an event cannot also program it"
            ),
            "name the auxiliary register the event needs (one whose fields have no role)",
        ));
    }
    if value & c.forbidden != 0 {
        return Err((
            format!(
                "msr-value {value:#x} sets bits {:#x}, which {register} reserves",
                value & c.forbidden
            ),
            "check the value against the register's fields",
        ));
    }
    Ok(AuxMsr {
        register: register.to_string(),
        address: c.address,
        value,
    })
}

/// An event's `msr` and `msr-value` attributes, checked against its unit's registers; `None`
/// where it has neither.
fn event_aux(
    e: &RawEvent,
    caps: &EventCapacity,
    candidates: &[AuxCandidate],
) -> Result<Option<AuxMsr>, (String, &'static str)> {
    let (register, value) = match (&e.msr, &e.msr_value) {
        (None, None) => return Ok(None),
        (Some(r), Some(v)) => (r, v),
        _ => {
            return Err((
                "gives only one of msr and msr-value".to_string(),
                "an auxiliary register is named with msr=\"NAME\" and its value with msr-value=\"0x..\", both or neither",
            ))
        }
    };
    if !caps.takes_settings {
        return Err((
            format!(
                "names the auxiliary register {register}, which only a core PMU's events (a unit with <pmu scope=\"cpu\">) carry"
            ),
            "check the unit, or leave msr and msr-value out",
        ));
    }
    let Some(value) = parse_number(value) else {
        return Err((
            format!("msr-value `{value}` is not a number"),
            "write the value as a decimal or 0x-prefixed hexadecimal number of up to 64 bits",
        ));
    };
    resolve_aux(candidates, register, value).map(Some)
}
