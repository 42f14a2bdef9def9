//! A unit's `<pmu>`: box-level registers, counters, filters, the global level and routes as
//! written, resolved against the unit's own registers. Each part is one pass below; the
//! counters are `counters`', where role fields sit is `placement`'s.

use super::super::{normalize_text, parse_number, Validator};
use super::placement::Parts;
use super::{diag, ListOn, PendingBit, PendingRoute, PendingRoutes, UnitScope};
use crate::model::pmu::*;
use crate::model::{Note, Position, Register};
use crate::parse::pmu::*;
use crate::parse::RawNote;

impl Validator {
    /// A unit's `<pmu>`: resolves the wiring against the unit's registers. Routes are returned
    /// as written, for [`Validator::resolve_routes`].
    pub(in crate::validate) fn unit_pmu(
        &mut self,
        unit: &UnitScope<'_>,
        raw: Option<&RawPmu>,
    ) -> Option<(Pmu, PendingRoutes)> {
        let Some(raw) = raw else {
            self.roles_without_pmu(unit.registers);
            return None;
        };
        let before = self.errors.len();
        let scope = self.pmu_scope(unit, raw);
        let controls = self.register_list(unit, &raw.control, "control");
        let statuses = self.register_list(unit, &raw.status, "status");
        let overflow_clears = self.register_list(unit, &raw.overflow_clear, "overflow-clear");
        let specs = self.counter_specs(unit, raw);
        let wired = self.wire_counters(unit, &specs);
        // A rejected counter declaration leaves its registers unclaimed: checking where the
        // role fields sit would only repeat that error.
        if self.errors.len() > before {
            return None;
        }
        let counters = wired.counters;
        let global = self.global(unit, raw);
        let parts = Parts {
            controls: &controls,
            statuses: &statuses,
            overflow_clears: &overflow_clears,
            counter_controls: &wired.counter_controls,
            counter_regs: &wired.counter_regs,
            global: global.as_ref(),
        };
        let numbers: Vec<u32> = counters.iter().map(|c| c.number).collect();
        self.role_placement(unit, &parts, &numbers);
        self.shared_controls(unit, &counters);
        self.bitmap_coverage(unit, raw.at, &parts, &counters);
        self.overflow_seen_once(unit, raw.at, &parts, &counters);
        let (filters, routes) = self.filters_and_routes(unit, raw, &numbers);
        let perf = self.perf_pmus(unit, raw, &numbers, &counters);
        let box_count = raw
            .box_count
            .as_ref()
            .and_then(|b| self.box_count_as_written(unit, b));
        let socket_bus = raw
            .socket_bus
            .as_ref()
            .and_then(|b| self.socket_bus_as_written(unit, b));
        let stack_bus = raw
            .stack_bus
            .as_ref()
            .and_then(|b| self.stack_bus_as_written(unit, b));
        let discovery_count = self.pmu_discovery_count(unit, raw);
        let discovery_broken = self.pmu_discovery_broken(unit, raw);
        let (saturation, global_init, clock_event) = self.pmu_quirks(unit, raw, &counters);
        if self.errors.len() > before {
            return None;
        }
        Some((
            Pmu {
                scope,
                discovery_type: self.pmu_discovery_type(unit, raw),
                controls,
                statuses,
                overflow_clears,
                counters,
                filters,
                routes: Vec::new(),
                global,
                perf,
                box_count: None,
                socket_bus: None,
                stack_bus: None,
                discovery_ignored: self.pmu_discovery_ignored(unit, raw),
                discovery_count,
                discovery_broken,
                saturation,
                global_init,
                clock_event,
                notes: raw.note.iter().map(note).collect(),
            },
            PendingRoutes {
                at: Position::of(unit.ctx.file, unit.path, raw.at),
                routes,
                box_count,
                socket_bus,
                stack_bus,
            },
        ))
    }

    /// A unit's filters, and its overflow routes as written.
    fn filters_and_routes(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawPmu,
        numbers: &[u32],
    ) -> (Vec<Filter>, Vec<PendingRoute>) {
        let filters = raw
            .filter
            .iter()
            .filter_map(|fl| self.filter(unit, fl, numbers))
            .collect();
        let routes = raw
            .route
            .iter()
            .filter_map(|r| self.route_as_written(unit, r, numbers))
            .collect();
        (filters, routes)
    }

    /// A role field (or a count-default) in a unit without `<pmu>`: the structure it belongs
    /// to is missing.
    fn roles_without_pmu(&mut self, registers: &[Register]) {
        if let Some((r, f)) = registers.iter().find_map(|r| {
            r.fields
                .iter()
                .find(|f| f.role.is_some() || f.count_default.is_some())
                .map(|f| (r, f))
        }) {
            self.push(diag(
                &r.at,
                format!(
                    "register {}: field `{}` has {}, but the unit has no <pmu>",
                    r.name,
                    f.name,
                    if f.role.is_some() {
                        "a role"
                    } else {
                        "a count-default"
                    }
                ),
                "describe the unit's structure in a <pmu> element after its registers",
            ));
        }
    }

    /// `discovery-type`: the table's 16-bit box type.
    fn pmu_discovery_type(&mut self, unit: &UnitScope<'_>, raw: &RawPmu) -> Option<u16> {
        self.table_placed_needs_type(unit, raw);
        let text = raw.discovery_type.as_deref()?;
        match parse_number(text).and_then(|v| u16::try_from(v).ok()) {
            Some(v) => Some(v),
            None => {
                self.push(unit.ctx.error(
                    raw.at,
                    format!("<pmu> discovery-type `{text}` is not a number from 0 to 0xFFFF"),
                    "give the box type the discovery table lists for this unit (Linux's uncore_snbep.c names them, e.g. SPR_UNCORE_CHA 0)",
                ));
                None
            }
        }
    }

    /// `<discovery-ignored>`: only on a unit with a discovery type, with a declared source
    /// and a description of what is wrong with the table's entries.
    fn pmu_discovery_ignored(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawPmu,
    ) -> Option<DiscoveryIgnored> {
        let ignored = raw.discovery_ignored.as_ref()?;
        self.needs_discovery_type(
            unit,
            raw,
            ignored.at,
            "discovery-ignored",
            "give the <pmu> the discovery-type whose table entries are ignored, or remove <discovery-ignored>",
        )?;
        let description = self.quirk_text(
            unit,
            ignored.at,
            &ignored.source,
            &ignored.text,
            "discovery-ignored",
            "say in the element's text what is wrong with the table's entries and who ignores them",
        )?;
        Some(DiscoveryIgnored {
            source: ignored.source.clone(),
            description,
        })
    }

    fn pmu_scope(&mut self, unit: &UnitScope<'_>, raw: &RawPmu) -> Scope {
        match Scope::parse(&raw.scope) {
            Some(scope) => scope,
            None => {
                self.push(unit.ctx.error(
                    raw.at,
                    format!("<pmu> scope `{}` is not socket, cpu or l3", raw.scope),
                    "uncore boxes are per socket (or per L3 cache, l3), the core PMU per cpu",
                ));
                Scope::Socket
            }
        }
    }

    /// The index of the unit's register `name`, which the `<pmu>` names as its `what`.
    pub(super) fn find_register(
        &mut self,
        unit: &UnitScope<'_>,
        at: usize,
        name: &str,
        what: &str,
    ) -> Option<usize> {
        let found = unit.registers.iter().position(|r| r.name == name);
        if found.is_none() {
            let names: Vec<&str> = unit.registers.iter().map(|r| r.name.as_str()).collect();
            self.push(unit.ctx.error(
                at,
                format!("<pmu> {what} names unknown register `{name}`"),
                &format!(
                    "name a register of this unit as written in its name attribute: {}",
                    names.join(", ")
                ),
            ));
        }
        found
    }

    /// `<control>`, `<status>` or `<overflow-clear>` elements: the registers they name.
    fn register_list(
        &mut self,
        unit: &UnitScope<'_>,
        items: &[RawRegisterName],
        what: &str,
    ) -> Vec<usize> {
        items
            .iter()
            .filter_map(|i| self.find_register(unit, i.at, &i.register, what))
            .collect()
    }

    /// `<global>`: the processor-wide control, status and overflow-clear, in a unit of one
    /// instance.
    fn global(&mut self, unit: &UnitScope<'_>, raw: &RawPmu) -> Option<Global> {
        let g = raw.global.as_ref()?;
        if unit.instances.len() != 1 {
            self.push(unit.ctx.error(
                g.at,
                format!(
                    "a <global> level in a unit with {} instances",
                    unit.instances.len()
                ),
                "the global level is one set of registers: declare it in a unit with one instance",
            ));
        }
        let control = self.find_register(unit, g.at, &g.control, "global control");
        let status = self.find_register(unit, g.at, &g.status, "global status");
        let overflow_clear = match &g.overflow_clear {
            Some(n) => Some(self.find_register(unit, g.at, n, "global overflow-clear")?),
            None => None,
        };
        Some(Global {
            control: control?,
            status: status?,
            overflow_clear,
        })
    }

    /// A `<filter>`: its register and mask, the event it applies to, and the counters.
    fn filter(&mut self, unit: &UnitScope<'_>, fl: &RawFilter, numbers: &[u32]) -> Option<Filter> {
        let ctx = unit.ctx;
        let register = self.find_register(unit, fl.at, &fl.register, "filter")?;
        let mask = match &fl.mask {
            Some(m) => Some(self.find_register(unit, fl.at, m, "filter mask")?),
            None => None,
        };
        let event = match fl.event.as_deref().map(parse_number) {
            None => None,
            Some(Some(e)) if e <= 0xFF => Some(e as u8),
            Some(_) => {
                self.push(ctx.error(
                    fl.at,
                    format!(
                        "filter event `{}` is not an event select",
                        fl.event.as_deref().unwrap_or_default()
                    ),
                    "write the event code, e.g. event=\"0x38\"",
                ));
                return None;
            }
        };
        let event_ext = match fl.event_ext.as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(o) => {
                self.push(ctx.error(
                    fl.at,
                    format!("event-ext `{o}` is not 0 or 1"),
                    "write event-ext=\"1\" when the event needs the extension bit",
                ));
                return None;
            }
        };
        let on = (ListOn::Filter, fl.at);
        let counters = self.counter_list(ctx, on, fl.counters.as_deref(), numbers)?;
        if fl.description.trim().is_empty() {
            self.push(ctx.error(
                fl.at,
                "a <filter> says what it filters",
                "write a sentence inside the element",
            ));
        }
        Some(Filter {
            register,
            mask,
            event,
            event_ext,
            counters,
            description: normalize_text(&fl.description),
        })
    }

    /// A `<route>` as written: its instances and counters, its hops or why they are unknown.
    /// The hops are resolved once every unit of the processor is known.
    fn route_as_written(
        &mut self,
        unit: &UnitScope<'_>,
        r: &RawRoute,
        numbers: &[u32],
    ) -> Option<PendingRoute> {
        let ctx = unit.ctx;
        let on = (ListOn::Route, r.at);
        let instances = self.instance_list(unit, on, r.instances.as_deref());
        let counters = self.counter_list(ctx, on, r.counters.as_deref(), numbers)?;
        match (&r.unknown, r.bit.is_empty()) {
            (None, true) => self.push(ctx.error(
                r.at,
                "a <route> has no <bit>",
                "list the status bits above the box, bottom to top, or say with unknown=\"..\" why no source gives them",
            )),
            (Some(_), false) => self.push(ctx.error(
                r.at,
                "a <route> declared unknown lists <bit>s",
                "drop the unknown attribute where the hops are known, or the <bit>s where they are not",
            )),
            (Some(why), true) if why.trim().is_empty() => self.push(ctx.error(
                r.at,
                "a <route> declared unknown does not say why",
                "say in unknown=\"..\" which sources were read and what they lack",
            )),
            _ => {}
        }
        let pos = |at: usize| Position::of(ctx.file, unit.path, at);
        Some(PendingRoute {
            at: pos(r.at),
            instances,
            counters,
            unknown: r.unknown.is_some(),
            bits: r
                .bit
                .iter()
                .map(|b| PendingBit {
                    at: pos(b.at),
                    register: b.register.clone(),
                    field: b.field.clone(),
                    clear: b.clear.clone(),
                })
                .collect(),
        })
    }
}

fn note(n: &RawNote) -> Note {
    Note {
        kind: n.kind.clone(),
        title: n.title.clone(),
        text: normalize_text(&n.text),
    }
}
