//! A unit's `<pmu>`: box-level registers, counters, filters, the global level and routes as
//! written, resolved against the unit's own registers.

use std::path::Path;
use std::sync::Arc;

use super::super::{is_cpuid_bits, normalize_text, parse_number, Ctx, Validator};
use super::{diag, parse_counter_list, PendingBit, PendingRoute, PendingRoutes};
use crate::model::pmu::*;
use crate::model::{Instance, Note, Position, Register};
use crate::parse::pmu::*;

impl Validator {
    /// A unit's `<pmu>`: resolves the wiring against the unit's registers. Routes are returned
    /// as written, for [`Validator::resolve_routes`].
    #[allow(clippy::too_many_arguments)]
    pub(in crate::validate) fn unit_pmu(
        &mut self,
        ctx: &Ctx<'_>,
        path: &Arc<Path>,
        raw: Option<&RawPmu>,
        registers: &[Register],
        instances: &[Instance],
        known_source: &dyn Fn(&str) -> bool,
        perf_driver: &dyn Fn(&str) -> Option<Arc<PerfDriver>>,
    ) -> Option<(Pmu, PendingRoutes)> {
        let Some(raw) = raw else {
            if let Some((r, f)) = registers
                .iter()
                .find_map(|r| r.fields.iter().find(|f| f.role.is_some()).map(|f| (r, f)))
            {
                self.push(diag(
                    &r.at,
                    format!(
                        "register {}: field `{}` has a role, but the unit has no <pmu>",
                        r.name, f.name
                    ),
                    "describe the unit's structure in a <pmu> element after its registers",
                ));
            }
            return None;
        };
        let before = self.errors.len();
        let pos = |at: usize| Position::of(ctx.file, path, at);
        let scope = match raw.scope.as_str() {
            "socket" => Scope::Socket,
            "cpu" => Scope::Cpu,
            other => {
                self.push(ctx.error(
                    raw.at,
                    format!("<pmu> scope `{other}` is not socket or cpu"),
                    "uncore boxes are per socket, the core PMU per cpu",
                ));
                Scope::Socket
            }
        };
        let find = |v: &mut Validator, at: usize, name: &str, what: &str| -> Option<usize> {
            let found = registers.iter().position(|r| r.name == name);
            if found.is_none() {
                let names: Vec<&str> = registers.iter().map(|r| r.name.as_str()).collect();
                v.push(ctx.error(
                    at,
                    format!("<pmu> {what} names unknown register `{name}`"),
                    &format!(
                        "name a register of this unit as written in its name attribute: {}",
                        names.join(", ")
                    ),
                ));
            }
            found
        };
        let mut list = |items: &[RawRegisterName], what: &str| -> Vec<usize> {
            items
                .iter()
                .filter_map(|i| find(self, i.at, &i.register, what))
                .collect()
        };
        let controls = list(&raw.control, "control");
        let statuses = list(&raw.status, "status");
        let overflow_clears = list(&raw.overflow_clear, "overflow-clear");

        // Counters.
        struct Spec<'s> {
            at: usize,
            first: u32,
            control: Option<&'s str>,
            counter: &'s str,
            alias: Option<&'s str>,
            kind: Option<&'s str>,
            width_cpuid: Option<&'s str>,
            event: Option<&'s str>,
            /// `<counter>`: the one element it names.
            single: Option<u32>,
        }
        let mut specs: Vec<Spec<'_>> = Vec::new();
        for c in &raw.counters {
            let first = match c.first.as_deref().map(parse_number) {
                None => 0,
                Some(Some(n)) if n < 1024 => n as u32,
                Some(_) => {
                    self.push(ctx.error(
                        c.at,
                        format!(
                            "<counters> first `{}` is not a counter number",
                            c.first.as_deref().unwrap_or_default()
                        ),
                        "first is the number of the array's element 0, e.g. first=\"32\"",
                    ));
                    continue;
                }
            };
            specs.push(Spec {
                at: c.at,
                first,
                control: c.control.as_deref(),
                counter: &c.counter,
                alias: c.alias.as_deref(),
                kind: c.kind.as_deref(),
                width_cpuid: c.width_cpuid.as_deref(),
                event: c.event.as_deref(),
                single: None,
            });
        }
        for c in &raw.counter {
            let Some(n) = parse_number(&c.number).filter(|n| *n < 1024) else {
                self.push(ctx.error(
                    c.at,
                    format!("<counter> number `{}` is not a counter number", c.number),
                    "number is the counter's bit in the box's bitmap fields, e.g. number=\"4\"",
                ));
                continue;
            };
            let index = match c.index.as_deref().map(parse_number) {
                None => 0,
                Some(Some(i)) if i < 1024 => i as u32,
                Some(_) => {
                    self.push(ctx.error(
                        c.at,
                        format!(
                            "<counter> index `{}` is not an array index",
                            c.index.as_deref().unwrap_or_default()
                        ),
                        "index is the element of the counter array, e.g. index=\"1\"",
                    ));
                    continue;
                }
            };
            specs.push(Spec {
                at: c.at,
                first: n as u32,
                control: c.control.as_deref(),
                counter: &c.counter,
                alias: None,
                kind: c.kind.as_deref(),
                width_cpuid: None,
                event: c.event.as_deref(),
                single: Some(index),
            });
        }
        let has_role = |r: &Register, role: Role| {
            r.fields
                .iter()
                .any(|f| f.role.as_ref().is_some_and(|x| x.role == role))
        };
        let mut counters: Vec<Counter> = Vec::new();
        let mut counter_controls: Vec<usize> = Vec::new();
        let mut counter_regs: Vec<usize> = Vec::new();
        for s in &specs {
            let kind = match s.kind.unwrap_or("general") {
                "general" => CounterKind::General,
                "fixed" => CounterKind::Fixed,
                "free-running" => CounterKind::FreeRunning,
                other => {
                    self.push(ctx.error(
                        s.at,
                        format!("counter kind `{other}` is not general, fixed or free-running"),
                        "general counters select an event; fixed ones count one thing; free-running ones have no control",
                    ));
                    continue;
                }
            };
            let Some(ci) = find(self, s.at, s.counter, "counter") else {
                continue;
            };
            let creg = &registers[ci];
            let Some(count_field) = creg
                .fields
                .iter()
                .find(|f| f.role.as_ref().is_some_and(|r| r.role == Role::Count))
            else {
                self.push(ctx.error(
                    s.at,
                    format!(
                        "counter register {} has no field with role count",
                        creg.name
                    ),
                    "mark the counting bits: <field name=\"event_count\" ... role=\"count\">",
                ));
                continue;
            };
            if let Some(i) = s.single.filter(|&i| i >= creg.count) {
                self.push(ctx.error(
                    s.at,
                    format!(
                        "<counter> index {i} is outside {} (count {})",
                        creg.name, creg.count
                    ),
                    "index names one element of the counter array, from 0",
                ));
                continue;
            }
            let control = match (s.control, kind) {
                (None, CounterKind::FreeRunning) => None,
                (Some(_), CounterKind::FreeRunning) => {
                    self.push(ctx.error(
                        s.at,
                        "a free-running counter has no control",
                        "drop control=\"...\", or use kind=\"fixed\"",
                    ));
                    continue;
                }
                (None, _) => {
                    self.push(ctx.error(
                        s.at,
                        format!("counter {} has no control", creg.name),
                        "name its control register, or say kind=\"free-running\"",
                    ));
                    continue;
                }
                (Some(name), _) => {
                    let Some(ki) = find(self, s.at, name, "control") else {
                        continue;
                    };
                    Some(ki)
                }
            };
            if let Some(ki) = control {
                let kreg = &registers[ki];
                if kreg.count != 1 && kreg.count != creg.count {
                    self.push(ctx.error(
                        s.at,
                        format!(
                            "control {} has {} elements but counter {} has {}",
                            kreg.name, kreg.count, creg.name, creg.count
                        ),
                        "pair arrays of the same length, or use one shared control register",
                    ));
                    continue;
                }
                if kind == CounterKind::General && !has_role(kreg, Role::Event) {
                    self.push(ctx.error(
                        s.at,
                        format!(
                            "control {} of a general counter has no event role field",
                            kreg.name
                        ),
                        "mark its event select with role=\"event\", or say kind=\"fixed\"",
                    ));
                    continue;
                }
                if !has_role(kreg, Role::Enable) && !has_role(kreg, Role::RingEnable) {
                    self.push(ctx.error(
                        s.at,
                        format!("control {} has no enable role field", kreg.name),
                        "mark the bit that starts the counter with role=\"enable\"",
                    ));
                    continue;
                }
                counter_controls.push(ki);
            }
            let alias = match s.alias {
                None => None,
                Some(name) => {
                    let Some(ai) = find(self, s.at, name, "alias") else {
                        continue;
                    };
                    if registers[ai].count != creg.count {
                        self.push(ctx.error(
                            s.at,
                            format!(
                                "alias {} has {} elements but counter {} has {}",
                                registers[ai].name, registers[ai].count, creg.name, creg.count
                            ),
                            "an alias array matches its counter array element for element",
                        ));
                        continue;
                    }
                    Some(ai)
                }
            };
            if let Some(c) = s.width_cpuid.filter(|c| !is_cpuid_bits(c)) {
                self.push(ctx.error(
                    s.at,
                    format!("width-cpuid `{c}` is not of the form 0AH.EAX[23:16]"),
                    "name the CPUID leaf, register and bits",
                ));
            }
            if kind != CounterKind::General && s.event.is_none() {
                self.push(ctx.error(
                    s.at,
                    format!(
                        "the {} counter {} does not say what it counts",
                        kind.as_str(),
                        creg.name
                    ),
                    "add event=\"...\" (e.g. \"uncore clock ticks\")",
                ));
            }
            counter_regs.push(ci);
            let elements: Vec<(u32, u32)> = match s.single {
                Some(i) => vec![(s.first, i)],
                None => (0..creg.count).map(|n| (s.first + n, n)).collect(),
            };
            for (number, n) in elements {
                if counters.iter().any(|c| c.number == number) {
                    self.push(ctx.error(
                        s.at,
                        format!("counter number {number} is used twice in the box"),
                        "each counter has its own number (its bit in the box's bitmap fields)",
                    ));
                    continue;
                }
                let shared = control.is_some_and(|k| registers[k].count == 1);
                counters.push(Counter {
                    number,
                    kind,
                    width: count_field.width(),
                    width_cpuid: s.width_cpuid.map(str::to_string),
                    control: control.map(|k| RegIndex {
                        register: k,
                        index: if shared { 0 } else { n },
                    }),
                    counter: RegIndex {
                        register: ci,
                        index: n,
                    },
                    alias: alias.map(|a| RegIndex {
                        register: a,
                        index: n,
                    }),
                    event: s.event.map(normalize_text),
                });
            }
        }
        counters.sort_by_key(|c| c.number);
        // A rejected counter declaration leaves its registers unclaimed: checking where the
        // role fields sit would only repeat that error.
        if self.errors.len() > before {
            return None;
        }

        // Global level.
        if let Some(g) = raw.global.as_ref().filter(|_| instances.len() != 1) {
            self.push(ctx.error(
                g.at,
                format!(
                    "a <global> level in a unit with {} instances",
                    instances.len()
                ),
                "the global level is one set of registers: declare it in a unit with one instance",
            ));
        }
        let global = raw.global.as_ref().and_then(|g| {
            let control = find(self, g.at, &g.control, "global control");
            let status = find(self, g.at, &g.status, "global status");
            let ovf = match &g.overflow_clear {
                Some(n) => Some(find(self, g.at, n, "global overflow-clear")?),
                None => None,
            };
            Some(Global {
                control: control?,
                status: status?,
                overflow_clear: ovf,
            })
        });

        // Every role field sits in a register that plays its part, and names counters the
        // box has.
        let numbers: Vec<u32> = counters.iter().map(|c| c.number).collect();
        for (ri, r) in registers.iter().enumerate() {
            for f in &r.fields {
                let Some(fr) = &f.role else { continue };
                let (ok, part) = match fr.role.class() {
                    RoleClass::CounterControl => {
                        (counter_controls.contains(&ri), "a counter's control")
                    }
                    RoleClass::Counter => (counter_regs.contains(&ri), "a counter"),
                    RoleClass::BoxControl => (controls.contains(&ri), "a <control> of the <pmu>"),
                    RoleClass::BoxStatus => (
                        statuses.contains(&ri) || global.as_ref().is_some_and(|g| g.status == ri),
                        "a <status> of the <pmu>",
                    ),
                    RoleClass::BoxOverflowClear => (
                        overflow_clears.contains(&ri)
                            || global
                                .as_ref()
                                .is_some_and(|g| g.overflow_clear == Some(ri)),
                        "an <overflow-clear> of the <pmu>",
                    ),
                    RoleClass::GlobalControl => (
                        global.as_ref().is_some_and(|g| g.control == ri),
                        "the <global> control",
                    ),
                };
                if !ok {
                    self.push(diag(
                        &r.at,
                        format!(
                            "register {}: field `{}` has role {}, but the register is not {part}",
                            r.name,
                            f.name,
                            fr.role.as_str()
                        ),
                        "list the register in the unit's <pmu>, or move the role to the right register",
                    ));
                }
                if let Some(n) = fr.counters.iter().find(|n| !numbers.contains(n)) {
                    self.push(diag(
                        &r.at,
                        format!(
                            "register {}: field `{}` names counter {n}, which the box does not have (its counters: {})",
                            r.name,
                            f.name,
                            numbers.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                        ),
                        "correct counters=\"...\", or declare the counter in the <pmu>",
                    ));
                }
            }
        }
        // A shared control (one register for several counters) must say which counter each
        // of its role fields serves.
        for c in &counters {
            let Some(k) = c.control else { continue };
            let kreg = &registers[k.register];
            let users = counters
                .iter()
                .filter(|o| o.control.is_some_and(|ok| ok.register == k.register))
                .count();
            if kreg.count == 1 && users > 1 {
                if let Some(f) = kreg
                    .fields
                    .iter()
                    .find(|f| f.role.as_ref().is_some_and(|r| r.counters.is_empty()))
                {
                    self.push(diag(
                        &kreg.at,
                        format!(
                            "register {}: it controls {users} counters, but its field `{}` does not say which",
                            kreg.name, f.name
                        ),
                        "add counters=\"...\" to each role field of a shared control",
                    ));
                    break;
                }
            }
        }
        // Box-level bitmaps cover every counter they can.
        let bitmap_regs = [
            (Role::CounterEnable, &controls, "counter-enable"),
            (Role::Overflow, &statuses, "overflow"),
            (Role::OverflowClear, &overflow_clears, "overflow-clear"),
        ];
        for (role, regs, name) in bitmap_regs {
            let covered: Vec<u32> = regs
                .iter()
                .flat_map(|&ri| registers[ri].fields.iter())
                .filter_map(|f| f.role.as_ref().filter(|r| r.role == role))
                .flat_map(|r| r.counters.iter().copied())
                .collect();
            if covered.is_empty() {
                continue;
            }
            let mut seen = covered.clone();
            seen.sort_unstable();
            if let Some(d) = seen.windows(2).find(|w| w[0] == w[1]) {
                self.push(ctx.error(
                    raw.at,
                    format!("counter {} has two {name} bits in the box", d[0]),
                    "each counter has one bit per box-level bitmap",
                ));
            }
            if let Some(c) = counters
                .iter()
                .find(|c| c.kind != CounterKind::FreeRunning && !covered.contains(&c.number))
            {
                self.push(ctx.error(
                    raw.at,
                    format!(
                        "counter {} has no {name} bit, though the box has {name} bits for others",
                        c.number
                    ),
                    &format!("add the counter to counters=\"...\" of the box's {name} field"),
                ));
            }
        }

        // Filters.
        let mut filters = Vec::new();
        for fl in &raw.filter {
            let Some(register) = find(self, fl.at, &fl.register, "filter") else {
                continue;
            };
            let mask = match &fl.mask {
                Some(m) => match find(self, fl.at, m, "filter mask") {
                    Some(i) => Some(i),
                    None => continue,
                },
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
                    continue;
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
                    continue;
                }
            };
            let fcounters = match fl.counters.as_deref().map(parse_counter_list) {
                None => Vec::new(),
                Some(Some(l)) => l,
                Some(None) => {
                    self.push(ctx.error(
                        fl.at,
                        "filter counters is not an ascending list of counter numbers",
                        "write e.g. counters=\"0-3\"",
                    ));
                    continue;
                }
            };
            if let Some(n) = fcounters.iter().find(|n| !numbers.contains(n)) {
                self.push(ctx.error(
                    fl.at,
                    format!("filter names counter {n}, which the box does not have"),
                    "name counters the <pmu> declares",
                ));
            }
            if fl.description.trim().is_empty() {
                self.push(ctx.error(
                    fl.at,
                    "a <filter> says what it filters",
                    "write a sentence inside the element",
                ));
            }
            filters.push(Filter {
                register,
                mask,
                event,
                event_ext,
                counters: fcounters,
                description: normalize_text(&fl.description),
            });
        }

        // Routes, resolved later.
        let mut routes = Vec::new();
        for r in &raw.route {
            let insts: Vec<usize> = match &r.instances {
                None => (0..instances.len()).collect(),
                Some(list) => {
                    let mut v = Vec::new();
                    for name in list.split_whitespace() {
                        match instances.iter().position(|i| i.name == name) {
                            Some(i) => v.push(i),
                            None => self.push(ctx.error(
                                r.at,
                                format!("route names unknown instance `{name}`"),
                                &format!(
                                        "the unit's instances are: {}",
                                        instances
                                            .iter()
                                            .map(|i| i.name.as_str())
                                            .collect::<Vec<_>>()
                                            .join(", ")
                                    ),
                            )),
                        }
                    }
                    v
                }
            };
            let rc = match r.counters.as_deref().map(parse_counter_list) {
                None => numbers.clone(),
                Some(Some(l)) => l,
                Some(None) => {
                    self.push(ctx.error(
                        r.at,
                        "route counters is not an ascending list of counter numbers",
                        "write e.g. counters=\"0-7\"",
                    ));
                    continue;
                }
            };
            if let Some(n) = rc.iter().find(|n| !numbers.contains(n)) {
                self.push(ctx.error(
                    r.at,
                    format!("route names counter {n}, which the box does not have"),
                    "name counters the <pmu> declares",
                ));
            }
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
            routes.push(PendingRoute {
                at: pos(r.at),
                instances: insts,
                counters: rc,
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
            });
        }
        let perf = self.perf_pmus(
            ctx,
            raw,
            instances,
            &numbers,
            known_source,
            perf_driver,
            (registers, &counters),
        );
        let notes = raw
            .note
            .iter()
            .map(|n| Note {
                kind: n.kind.clone(),
                title: n.title.clone(),
                text: normalize_text(&n.text),
            })
            .collect();
        if self.errors.len() > before {
            return None;
        }
        Some((
            Pmu {
                scope,
                controls,
                statuses,
                overflow_clears,
                counters,
                filters,
                routes: Vec::new(),
                global,
                perf,
                notes,
            },
            PendingRoutes {
                at: pos(raw.at),
                routes,
            },
        ))
    }
}
