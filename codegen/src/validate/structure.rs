//! The PMU structure rules (spec/README.md, "PMU structure"): field roles, a unit's `<pmu>`
//! wiring, and, once every unit of a processor is known, its overflow routes and global level.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::{is_cpuid_bits, normalize_text, parse_number, Ctx, Validator};
use crate::diagnostics::Diagnostic;
use crate::model::pmu::*;
use crate::model::{Access, Instance, Note, Position, Processor, Register, Repeat};
use crate::parse::pmu::*;
use crate::parse::RawField;

/// A route as written, kept until every unit of the processor is validated.
#[derive(Debug, Clone)]
pub(crate) struct PendingRoute {
    at: Position,
    instances: Vec<usize>,
    counters: Vec<u32>,
    bits: Vec<PendingBit>,
}

#[derive(Debug, Clone)]
struct PendingBit {
    at: Position,
    register: String,
    field: String,
    clear: Option<String>,
}

/// A unit's routes as written, and where its `<pmu>` is (for errors about a missing route).
#[derive(Debug, Clone)]
pub(crate) struct PendingRoutes {
    at: Position,
    routes: Vec<PendingRoute>,
}

/// `"0-3,5"` -> `[0, 1, 2, 3, 5]`: ascending, no repeats, or `None`.
pub(crate) fn parse_counter_list(text: &str) -> Option<Vec<u32>> {
    let mut out: Vec<u32> = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if lo > hi || hi > 1023 || out.last().is_some_and(|&l| l >= lo) {
            return None;
        }
        out.extend(lo..=hi);
    }
    (!out.is_empty()).then_some(out)
}

fn diag(at: &Position, message: String, help: &str) -> Diagnostic {
    Diagnostic {
        path: at.path.to_path_buf(),
        line: at.line,
        column: at.column,
        message,
        help: None,
    }
    .help(help)
}

impl Validator {
    /// A field's `role` and `counters`, checked against its width and access.
    pub(super) fn field_role(
        &mut self,
        ctx: &Ctx<'_>,
        f: &RawField,
        width: u32,
        access: Access,
        repeat: Option<&Repeat>,
    ) -> Option<Box<FieldRole>> {
        let Some(text) = &f.role else {
            if f.counters.is_some() {
                self.push(ctx.error(
                    f.at,
                    format!("field `{}` has counters but no role", f.name),
                    "counters says which counters a role field's bits stand for; add role=\"...\"",
                ));
            }
            return None;
        };
        let Some(role) = Role::parse(text) else {
            let known: Vec<&str> = Role::ALL.iter().map(|(_, n)| *n).collect();
            self.push(ctx.error(
                f.at,
                format!("field `{}`: unknown role `{text}`", f.name),
                &format!("use one of: {}", known.join(", ")),
            ));
            return None;
        };
        if let Some(why) = role.access_problem(access) {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: role {} does not fit access {}",
                    f.name,
                    role.as_str(),
                    access.as_str()
                ),
                why,
            ));
            return None;
        }
        let counters = match &f.counters {
            None => Vec::new(),
            Some(c) => match parse_counter_list(c) {
                Some(list) => list,
                None => {
                    self.push(ctx.error(
                        f.at,
                        format!("field `{}`: counters `{c}` is not an ascending list of counter numbers", f.name),
                        "write e.g. counters=\"0-3\" or \"32\" or \"0,2\"",
                    ));
                    return None;
                }
            },
        };
        if role.is_bitmap() && counters.is_empty() {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: a {} field needs counters=\"...\"",
                    f.name,
                    role.as_str()
                ),
                "name the counter each bit stands for, lowest bit first, e.g. counters=\"0-3\"",
            ));
            return None;
        }
        // Element width: what one counter's share of the field must be.
        let elements = counters.len().max(1) as u32;
        let problem = match (role.element_width(), repeat) {
            (Some(ew), Some(rep)) => (rep.element_width != ew
                || elements > rep.max_count
                || (rep.count_cpuid.is_none() && elements != rep.max_count))
                .then(|| format!("its {} elements of {} bit(s) do not give each of the {elements} counter(s) {ew} bit(s)", rep.max_count, rep.element_width)),
            (Some(ew), None) if counters.is_empty() => (width != ew)
                .then(|| format!("the role takes {ew} bit(s), and the field is {width} bits wide")),
            (Some(ew), None) => (width != ew * elements).then(|| {
                format!(
                    "{elements} counters of {ew} bit(s) need {} bits, and the field is {width} bits wide",
                    ew * elements
                )
            }),
            (None, _) => (elements != 1)
                .then(|| "a multi-bit value role stands for one counter".to_string()),
        };
        if let Some(p) = problem {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: role {} does not fit its width: {p}",
                    f.name,
                    role.as_str()
                ),
                "give the role to a field of the right width, or correct counters=\"...\" (one entry per bit, or per element of a bit array)",
            ));
            return None;
        }
        Some(Box::new(FieldRole { role, counters }))
    }

    /// A unit's `<pmu>`: resolves the wiring against the unit's registers. Routes are returned
    /// as written, for [`Validator::resolve_routes`].
    pub(super) fn unit_pmu(
        &mut self,
        ctx: &Ctx<'_>,
        path: &Arc<Path>,
        raw: Option<&RawPmu>,
        registers: &[Register],
        instances: &[Instance],
        known_source: &dyn Fn(&str) -> bool,
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
            if r.bit.is_empty() {
                self.push(ctx.error(
                    r.at,
                    "a <route> has no <bit>",
                    "list the status bits above the box, bottom to top",
                ));
            }
            routes.push(PendingRoute {
                at: pos(r.at),
                instances: insts,
                counters: rc,
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
        let perf = self.perf_pmus(ctx, raw, instances, &numbers, known_source);
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

    /// A unit's `<perf>` elements: which Linux perf PMU counts which counters of which box.
    /// Checked against the structure: every counter of every box is counted by exactly one
    /// PMU once any is named, a PMU counts one box (a name shared by several boxes needs
    /// `{i}`), and the counters named exist.
    fn perf_pmus(
        &mut self,
        ctx: &Ctx<'_>,
        raw: &RawPmu,
        instances: &[Instance],
        numbers: &[u32],
        known_source: &dyn Fn(&str) -> bool,
    ) -> Vec<PerfPmu> {
        let mut out: Vec<PerfPmu> = Vec::new();
        let mut covered: BTreeMap<(usize, u32), String> = BTreeMap::new();
        for pf in &raw.perf {
            let insts: Vec<usize> = match &pf.instances {
                None => (0..instances.len()).collect(),
                Some(list) => {
                    let mut v = Vec::new();
                    for name in list.split_whitespace() {
                        match instances.iter().position(|i| i.name == name) {
                            Some(i) => v.push(i),
                            None => self.push(ctx.error(
                                pf.at,
                                format!("<perf> names unknown instance `{name}`"),
                                "name instances the unit declares",
                            )),
                        }
                    }
                    v
                }
            };
            let counters = match pf.counters.as_deref().map(parse_counter_list) {
                None => numbers.to_vec(),
                Some(Some(l)) => l,
                Some(None) => {
                    self.push(ctx.error(
                        pf.at,
                        "<perf> counters is not an ascending list of counter numbers",
                        "write e.g. counters=\"0-7\"",
                    ));
                    continue;
                }
            };
            if let Some(n) = counters.iter().find(|n| !numbers.contains(n)) {
                self.push(ctx.error(
                    pf.at,
                    format!("<perf> names counter {n}, which the box does not have"),
                    "name counters the <pmu> declares",
                ));
            }
            if !known_source(&pf.source) {
                self.push(ctx.error(
                    pf.at,
                    format!("unknown source `{}`", pf.source),
                    "public sources are declared in processors.xml",
                ));
            }
            if insts.len() > 1 && !pf.pmu.contains("{i}") {
                self.push(ctx.error(
                    pf.at,
                    format!("<perf pmu=\"{}\"> names one kernel PMU for {} boxes", pf.pmu, insts.len()),
                    "a kernel PMU counts one box: write the box number as {i} (uncore_cbox_{i}), or one <perf> per box",
                ));
                continue;
            }
            for &i in &insts {
                let pmu = pf.pmu.replace("{i}", &instances[i].key);
                if let Some(other) = out.iter().find(|o| o.pmu == pmu && o.instance != i) {
                    self.push(ctx.error(
                        pf.at,
                        format!(
                            "kernel PMU {pmu} is given to boxes {} and {}",
                            instances[other.instance].name, instances[i].name
                        ),
                        "a kernel PMU counts one box: give each box its own name",
                    ));
                }
                for &c in &counters {
                    if let Some(first) = covered.insert((i, c), pmu.clone()) {
                        self.push(ctx.error(
                            pf.at,
                            format!(
                                "counter {c} of box {} is counted by two kernel PMUs, {first} and {pmu}",
                                instances[i].name
                            ),
                            "give each counter one <perf>; split counters=\"...\"",
                        ));
                    }
                }
                out.push(PerfPmu {
                    instance: i,
                    pmu,
                    counters: counters.clone(),
                    source: pf.source.clone(),
                });
            }
        }
        if !raw.perf.is_empty() {
            for (i, inst) in instances.iter().enumerate() {
                let missing: Vec<String> = numbers
                    .iter()
                    .filter(|c| !covered.contains_key(&(i, **c)))
                    .map(|c| c.to_string())
                    .collect();
                if !missing.is_empty() {
                    self.push(ctx.error(
                        raw.at,
                        format!(
                            "counter(s) {} of box {} have no kernel PMU, though the unit names perf PMUs",
                            missing.join(", "),
                            inst.name
                        ),
                        "add a <perf> that counts them (its counters=\"...\" and instances=\"...\")",
                    ));
                }
            }
        }
        out
    }

    /// Resolves every unit's routes against the whole processor, and checks that every counter
    /// of a processor with a global level reaches it exactly one way.
    pub(super) fn resolve_routes(
        &mut self,
        p: &mut Processor,
        pending: Vec<(usize, PendingRoutes)>,
    ) {
        // Concrete name -> (unit, register, instance, index).
        let mut names: HashMap<String, (usize, usize, usize, u32)> = HashMap::new();
        for (ui, u) in p.units.iter().enumerate() {
            for (ri, r) in u.registers.iter().enumerate() {
                for (ii, inst) in u.instances.iter().enumerate() {
                    for n in 0..r.count {
                        names.insert(r.concrete_name(inst, n), (ui, ri, ii, n));
                    }
                }
            }
        }
        let globals: Vec<(usize, &Global)> = p
            .units
            .iter()
            .enumerate()
            .filter_map(|(ui, u)| {
                u.pmu
                    .as_ref()
                    .and_then(|m| m.global.as_ref())
                    .map(|g| (ui, g))
            })
            .collect();
        if globals.len() > 1 {
            let u = &p.units[globals[1].0];
            self.push(diag(
                &u.at,
                format!("processor {} declares a <global> level in two units", p.id),
                "declare the global level once, in the unit that holds its registers",
            ));
            return;
        }
        let global = globals.first().map(|(ui, g)| (*ui, g.status));
        let resolve_bit = |v: &mut Validator,
                           at: &Position,
                           reg: &str,
                           field: &str,
                           clear: bool|
         -> Option<BitRef> {
            let Some(&(unit, register, instance, index)) = names.get(reg) else {
                v.push(diag(at, format!("route names unknown register `{reg}`"), &format!("name a register of processor {} by its concrete name, e.g. S0_MSR_PMON_SUMMARY", p.id)));
                return None;
            };
            let r = &p.units[unit].registers[register];
            let Some(fi) = r
                .fields
                .iter()
                .position(|f| !f.access.is_placeholder() && f.name.as_ref() == field)
            else {
                v.push(diag(
                    at,
                    format!("route names unknown field `{field}` of {reg}"),
                    &format!(
                        "the register's fields are: {}",
                        r.fields
                            .iter()
                            .filter(|f| !f.access.is_placeholder())
                            .map(|f| f.name.as_ref())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
                return None;
            };
            let f = &r.fields[fi];
            let bad = if clear {
                !matches!(f.access, Access::W1c | Access::Wo)
            } else {
                !f.access.is_readable()
            };
            if bad || f.width() != 1 {
                v.push(diag(
                    at,
                    format!(
                        "{reg}.{field} ({}, {} bit(s)) cannot be a route's {} bit",
                        f.access.as_str(),
                        f.width(),
                        if clear { "clear" } else { "status" }
                    ),
                    if clear {
                        "a clear bit is one w1c or wo bit"
                    } else {
                        "a status bit is one readable bit"
                    },
                ));
                return None;
            }
            Some(BitRef {
                unit,
                register,
                instance,
                index,
                field: fi,
            })
        };
        let mut resolved: Vec<(usize, Vec<Route>)> = Vec::new();
        for (ui, pr) in &pending {
            let mut routes = Vec::new();
            for r in &pr.routes {
                let mut hops = Vec::new();
                for b in &r.bits {
                    let Some(bit) = resolve_bit(self, &b.at, &b.register, &b.field, false) else {
                        continue;
                    };
                    let clear = match &b.clear {
                        None => None,
                        Some(c) => {
                            let Some((reg, field)) = c.rsplit_once('.') else {
                                self.push(diag(
                                    &b.at,
                                    format!("clear `{c}` is not REGISTER.field"),
                                    "write e.g. clear=\"U_MSR_PMON_GLOBAL_OVF_CTL.clr_ov_s0\"",
                                ));
                                continue;
                            };
                            match resolve_bit(self, &b.at, reg, field, true) {
                                Some(x) => Some(x),
                                None => continue,
                            }
                        }
                    };
                    hops.push(Hop { bit, clear });
                }
                if let (Some((gu, gs)), Some(last)) = (global, hops.last()) {
                    if last.bit.unit != gu || last.bit.register != gs {
                        let g = &p.units[gu].registers[gs];
                        self.push(diag(
                            &r.at,
                            format!("the route ends below the global status {}", g.name),
                            "list every hop up to and including the global status bit",
                        ));
                    }
                }
                routes.push(Route {
                    instances: r.instances.clone(),
                    counters: r.counters.clone(),
                    hops,
                });
            }
            resolved.push((*ui, routes));
        }
        // Every (instance, counter) reaches the global status one way.
        for ((ui, routes), (_, pr)) in resolved.iter().zip(&pending) {
            let u = &p.units[*ui];
            let Some(pmu) = &u.pmu else { continue };
            // The box's own status is the global status (the core PMU): no route needed.
            let own_is_global =
                global.is_some_and(|(gu, gs)| gu == *ui && pmu.statuses.contains(&gs));
            let mut claims: BTreeMap<(usize, u32), &Route> = BTreeMap::new();
            for r in routes {
                for &i in &r.instances {
                    for &c in &r.counters {
                        if let Some(prev) = claims.insert((i, c), r) {
                            if prev.hops != r.hops {
                                self.push(diag(&pr.at, format!("two routes claim counter {c} of {} with different hops", u.instances[i].name), "give each instance and counter one route; split the instances or counters attributes"));
                            }
                        }
                    }
                }
            }
            if global.is_none() || own_is_global {
                continue;
            }
            for (ii, inst) in u.instances.iter().enumerate() {
                for c in pmu
                    .counters
                    .iter()
                    .filter(|c| c.kind != CounterKind::FreeRunning)
                {
                    if !claims.contains_key(&(ii, c.number)) {
                        self.push(diag(&pr.at, format!("counter {} of {} has no overflow route, but processor {} has a global level", c.number, inst.name, p.id), "add a <route> listing the summary and global status bits its overflow sets"));
                        break;
                    }
                }
            }
        }
        for (ui, routes) in resolved {
            if let Some(pmu) = p.units[ui].pmu.as_mut() {
                pmu.routes = routes;
            }
        }
    }
}
