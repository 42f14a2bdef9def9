//! A `<pmu>`'s counters: `<counters>` arrays and single `<counter>`s, each paired with its
//! control and alias registers and checked against their roles.

use super::super::{is_cpuid_bits, normalize_text, parse_number, Validator};
use super::UnitScope;
use crate::model::pmu::*;
use crate::model::{Field, Register};
use crate::parse::pmu::{RawCounter, RawCounters, RawPmu};

/// One counter declaration as written, from `<counters>` or `<counter>`.
pub(super) struct CounterSpec<'s> {
    pub(super) at: usize,
    /// The counter number of the array's element 0 (of the one element, for `<counter>`).
    first: u32,
    control: Option<&'s str>,
    counter: &'s str,
    alias: Option<&'s str>,
    kind: Option<&'s str>,
    width_cpuid: Option<&'s str>,
    event: Option<&'s str>,
    /// How an overflow is seen (`<counters>` only) and the source of that rule.
    overflow: Option<&'s str>,
    overflow_source: Option<&'s str>,
    /// `<counter>`: the one element it names.
    single: Option<u32>,
    /// `<counter>`: its perf event attributes, for a free-running counter.
    pub(super) perf: Option<&'s RawCounter>,
}

/// The box's counters, and which registers serve as their counters and controls.
#[derive(Default)]
pub(super) struct Wired {
    pub(super) counters: Vec<Counter>,
    pub(super) counter_controls: Vec<usize>,
    pub(super) counter_regs: Vec<usize>,
}

/// Whether every counter `s` declares has a `counter-enable` bit in some register of the unit
/// (Arm's PMCNTENSET_EL0): then that bit, not a field of the counter's control, starts it.
fn enabled_by_box(unit: &UnitScope<'_>, s: &CounterSpec, creg: &Register) -> bool {
    let count = if s.single.is_some() { 1 } else { creg.count };
    let enabled: Vec<u32> = unit
        .registers
        .iter()
        .flat_map(|r| r.fields.iter())
        .filter_map(|f| f.role.as_ref())
        .filter(|r| r.role == Role::CounterEnable)
        .flat_map(|r| r.counters.iter().copied())
        .collect();
    (s.first..s.first + count).all(|n| enabled.contains(&n))
}

/// Why a counter declaration was dropped: the error is already reported.
struct Rejected;

impl Validator {
    /// The counter declarations of a `<pmu>` whose numbers parse, `<counters>` first.
    pub(super) fn counter_specs<'s>(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &'s RawPmu,
    ) -> Vec<CounterSpec<'s>> {
        let arrays = raw
            .counters
            .iter()
            .filter_map(|c| self.counters_spec(unit, c));
        let mut specs: Vec<CounterSpec<'s>> = arrays.collect();
        specs.extend(
            raw.counter
                .iter()
                .filter_map(|c| self.counter_spec(unit, c)),
        );
        specs
    }

    fn counters_spec<'s>(
        &mut self,
        unit: &UnitScope<'_>,
        c: &'s RawCounters,
    ) -> Option<CounterSpec<'s>> {
        let first = match c.first.as_deref().map(parse_number) {
            None => 0,
            Some(Some(n)) if n < 1024 => n as u32,
            Some(_) => {
                self.push(unit.ctx.error(
                    c.at,
                    format!(
                        "<counters> first `{}` is not a counter number",
                        c.first.as_deref().unwrap_or_default()
                    ),
                    "first is the number of the array's element 0, e.g. first=\"32\"",
                ));
                return None;
            }
        };
        Some(CounterSpec {
            at: c.at,
            first,
            control: c.control.as_deref(),
            counter: &c.counter,
            alias: c.alias.as_deref(),
            kind: c.kind.as_deref(),
            width_cpuid: c.width_cpuid.as_deref(),
            event: c.event.as_deref(),
            overflow: c.overflow.as_deref(),
            overflow_source: c.overflow_source.as_deref(),
            single: None,
            perf: None,
        })
    }

    fn counter_spec<'s>(
        &mut self,
        unit: &UnitScope<'_>,
        c: &'s RawCounter,
    ) -> Option<CounterSpec<'s>> {
        let Some(n) = parse_number(&c.number).filter(|n| *n < 1024) else {
            self.push(unit.ctx.error(
                c.at,
                format!("<counter> number `{}` is not a counter number", c.number),
                "number is the counter's bit in the box's bitmap fields, e.g. number=\"4\"",
            ));
            return None;
        };
        let index = match c.index.as_deref().map(parse_number) {
            None => 0,
            Some(Some(i)) if i < 1024 => i as u32,
            Some(_) => {
                self.push(unit.ctx.error(
                    c.at,
                    format!(
                        "<counter> index `{}` is not an array index",
                        c.index.as_deref().unwrap_or_default()
                    ),
                    "index is the element of the counter array, e.g. index=\"1\"",
                ));
                return None;
            }
        };
        Some(CounterSpec {
            at: c.at,
            first: n as u32,
            control: c.control.as_deref(),
            counter: &c.counter,
            alias: None,
            kind: c.kind.as_deref(),
            width_cpuid: None,
            event: c.event.as_deref(),
            overflow: None,
            overflow_source: None,
            single: Some(index),
            perf: Some(c),
        })
    }

    /// Every declaration resolved against the unit's registers, counters sorted by number.
    pub(super) fn wire_counters(&mut self, unit: &UnitScope<'_>, specs: &[CounterSpec]) -> Wired {
        let mut wired = Wired::default();
        for s in specs {
            // A rejected declaration is reported; the others are still checked.
            let _ = self.wire_counter(unit, s, &mut wired);
        }
        wired.counters.sort_by_key(|c| c.number);
        wired
    }

    /// One declaration: its kind, counter register, control, alias and elements.
    fn wire_counter(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
        wired: &mut Wired,
    ) -> Result<(), Rejected> {
        let kind = self.counter_kind(unit, s)?;
        let ci = self
            .find_register(unit, s.at, s.counter, "counter")
            .ok_or(Rejected)?;
        let creg = &unit.registers[ci];
        let count_field = self.count_field(unit, s, creg)?;
        if let Some(i) = s.single.filter(|&i| i >= creg.count) {
            self.push(unit.ctx.error(
                s.at,
                format!(
                    "<counter> index {i} is outside {} (count {})",
                    creg.name, creg.count
                ),
                "index names one element of the counter array, from 0",
            ));
            return Err(Rejected);
        }
        let control = self.counter_control(unit, s, kind, creg)?;
        wired.counter_controls.extend(control);
        let alias = self.counter_alias(unit, s, creg)?;
        self.counter_attributes(unit, s, kind, creg);
        self.count_access(unit, s, kind, creg, count_field);
        let perf = self.counter_perf(unit, s, kind, creg);
        if let Some(p) = &perf {
            self.perf_event_unique(unit, s.at, p, &wired.counters);
        }
        let (overflow, overflow_source) = self.counter_overflow(unit, s)?;
        wired.counter_regs.push(ci);
        let elements: Vec<(u32, u32)> = match s.single {
            Some(i) => vec![(s.first, i)],
            None => (0..creg.count).map(|n| (s.first + n, n)).collect(),
        };
        let shared = control.is_some_and(|k| unit.registers[k].count == 1);
        for (number, n) in elements {
            if wired.counters.iter().any(|c| c.number == number) {
                self.push(unit.ctx.error(
                    s.at,
                    format!("counter number {number} is used twice in the box"),
                    "each counter has its own number (its bit in the box's bitmap fields)",
                ));
                continue;
            }
            wired.counters.push(Counter {
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
                perf: perf.clone(),
                overflow,
                overflow_source: overflow_source.clone(),
            });
        }
        Ok(())
    }

    /// `width-cpuid`, and what a fixed or free-running counter counts.
    fn counter_attributes(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
        kind: CounterKind,
        creg: &Register,
    ) {
        if let Some(c) = s.width_cpuid.filter(|c| !is_cpuid_bits(c)) {
            self.push(unit.ctx.error(
                s.at,
                format!("width-cpuid `{c}` is not of the form 0AH.EAX[23:16]"),
                "name the CPUID leaf, register and bits",
            ));
        }
        if kind != CounterKind::General && s.event.is_none() {
            self.push(unit.ctx.error(
                s.at,
                format!(
                    "the {} counter {} does not say what it counts",
                    kind.as_str(),
                    creg.name
                ),
                "add event=\"...\" (e.g. \"uncore clock ticks\")",
            ));
        }
    }

    /// `overflow` and `overflow-source`: a known way of seeing an overflow, and a declared
    /// source for any way but the box's status (the default).
    fn counter_overflow(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
    ) -> Result<(OverflowSeen, Option<String>), Rejected> {
        let help = "overflow=\"msb-clear\" overflow-source=\"...\" says software sees an overflow by the counter's top bit reading 0; leave it out where the box's status has the counter's overflow bit";
        let seen = match s.overflow.map(OverflowSeen::parse) {
            None => OverflowSeen::Status,
            Some(Some(seen)) => seen,
            Some(None) => {
                self.push(unit.ctx.error(
                    s.at,
                    format!(
                        "unknown overflow `{}` (known: {})",
                        s.overflow.unwrap_or_default(),
                        OverflowSeen::VOCABULARY.spellings().collect::<Vec<_>>().join(", ")
                    ),
                    help,
                ));
                return Err(Rejected);
            }
        };
        match (seen, s.overflow_source) {
            (OverflowSeen::Status, None) => Ok((seen, None)),
            (OverflowSeen::Status, Some(_)) => {
                self.push(unit.ctx.error(
                    s.at,
                    "overflow-source is given without an overflow rule to cite",
                    help,
                ));
                Err(Rejected)
            }
            (_, None) => {
                self.push(unit.ctx.error(
                    s.at,
                    format!("overflow `{}` has no overflow-source", seen.as_str()),
                    "cite the public source of the rule with overflow-source=\"...\" (a processors.xml source)",
                ));
                Err(Rejected)
            }
            (_, Some(src)) => {
                if self.public_source(unit.ctx, unit.cat, s.at, src) {
                    Ok((seen, Some(src.to_string())))
                } else {
                    Err(Rejected)
                }
            }
        }
    }

    fn counter_kind(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
    ) -> Result<CounterKind, Rejected> {
        match s.kind.unwrap_or("general") {
            "general" => Ok(CounterKind::General),
            "fixed" => Ok(CounterKind::Fixed),
            "free-running" => Ok(CounterKind::FreeRunning),
            other => {
                self.push(unit.ctx.error(
                    s.at,
                    format!("counter kind `{other}` is not general, fixed or free-running"),
                    "general counters select an event; fixed ones count one thing; free-running ones have no control",
                ));
                Err(Rejected)
            }
        }
    }

    /// The counter register's field with role count.
    fn count_field<'r>(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
        creg: &'r Register,
    ) -> Result<&'r Field, Rejected> {
        let found = creg
            .fields
            .iter()
            .find(|f| f.role.as_ref().is_some_and(|r| r.role == Role::Count));
        found.ok_or_else(|| {
            self.push(unit.ctx.error(
                s.at,
                format!(
                    "counter register {} has no field with role count",
                    creg.name
                ),
                "mark the counting bits: <field name=\"event_count\" ... role=\"count\">",
            ));
            Rejected
        })
    }

    /// The control register of a counter (none for a free-running one): an array as long as
    /// the counter's or one shared register, with the roles its kind needs.
    fn counter_control(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
        kind: CounterKind,
        creg: &Register,
    ) -> Result<Option<usize>, Rejected> {
        let name = match (s.control, kind) {
            (None, CounterKind::FreeRunning) => return Ok(None),
            (Some(_), CounterKind::FreeRunning) => {
                self.push(unit.ctx.error(
                    s.at,
                    "a free-running counter has no control",
                    "drop control=\"...\", or use kind=\"fixed\"",
                ));
                return Err(Rejected);
            }
            (None, _) => {
                self.push(unit.ctx.error(
                    s.at,
                    format!("counter {} has no control", creg.name),
                    "name its control register, or say kind=\"free-running\"",
                ));
                return Err(Rejected);
            }
            (Some(name), _) => name,
        };
        let ki = self
            .find_register(unit, s.at, name, "control")
            .ok_or(Rejected)?;
        let kreg = &unit.registers[ki];
        let has_role = |role: Role| {
            kreg.fields
                .iter()
                .any(|f| f.role.as_ref().is_some_and(|x| x.role == role))
        };
        let problem = if kreg.count != 1 && kreg.count != creg.count {
            Some((
                format!(
                    "control {} has {} elements but counter {} has {}",
                    kreg.name, kreg.count, creg.name, creg.count
                ),
                "pair arrays of the same length, or use one shared control register",
            ))
        } else if kind == CounterKind::General && !has_role(Role::Event) {
            Some((
                format!(
                    "control {} of a general counter has no event role field",
                    kreg.name
                ),
                "mark its event select with role=\"event\", or say kind=\"fixed\"",
            ))
        } else if !has_role(Role::Enable)
            && !has_role(Role::RingEnable)
            && !enabled_by_box(unit, s, creg)
        {
            Some((
                format!("control {} has no enable role field", kreg.name),
                "mark the bit that starts the counter with role=\"enable\", or give the box a counter-enable bit for each of its counters",
            ))
        } else {
            None
        };
        match problem {
            Some((message, help)) => {
                self.push(unit.ctx.error(s.at, message, help));
                Err(Rejected)
            }
            None => Ok(Some(ki)),
        }
    }

    /// The alias register of a counter array (its counts read elsewhere), element for element.
    fn counter_alias(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
        creg: &Register,
    ) -> Result<Option<usize>, Rejected> {
        let Some(name) = s.alias else { return Ok(None) };
        let ai = self
            .find_register(unit, s.at, name, "alias")
            .ok_or(Rejected)?;
        let areg = &unit.registers[ai];
        if areg.count != creg.count {
            self.push(unit.ctx.error(
                s.at,
                format!(
                    "alias {} has {} elements but counter {} has {}",
                    areg.name, areg.count, creg.name, creg.count
                ),
                "an alias array matches its counter array element for element",
            ));
            return Err(Rejected);
        }
        Ok(Some(ai))
    }
}
