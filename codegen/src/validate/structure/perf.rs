//! `<perf>`: which Linux perf PMU counts which counters of which box, checked against the
//! unit's structure.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::super::Validator;
use super::{ListOn, UnitScope};
use crate::model::pmu::{
    Counter, CounterKind, FormatTarget, PerfDriver, PerfFormat, PerfPmu, Role,
};
use crate::model::Register;
use crate::parse::pmu::{RawPerf, RawPmu};

/// The kernel PMUs named so far, and which one counts each (box, counter).
#[derive(Default)]
struct Coverage {
    pmus: Vec<PerfPmu>,
    counted_by: BTreeMap<(usize, u32), String>,
}

/// One format of a driver named by a `<perf>` at `at`, for its messages.
#[derive(Clone, Copy)]
struct Format<'a> {
    at: usize,
    driver: &'a PerfDriver,
    format: &'a PerfFormat,
}

impl Validator {
    /// A unit's `<perf>` elements: which Linux perf PMU counts which counters of which box.
    /// Checked against the structure: every counter of every box is counted by exactly one
    /// PMU once any is named, a PMU counts one box (a name shared by several boxes needs
    /// `{i}`), the counters named exist, and the driver's format maps onto the unit
    /// ([`Validator::perf_driver_fits`]).
    pub(super) fn perf_pmus(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawPmu,
        numbers: &[u32],
        unit_counters: &[Counter],
    ) -> Vec<PerfPmu> {
        let mut coverage = Coverage::default();
        for pf in &raw.perf {
            self.perf(unit, pf, (numbers, unit_counters), &mut coverage);
        }
        if !raw.perf.is_empty() {
            self.perf_uncovered(unit, raw.at, numbers, &coverage);
        }
        coverage.pmus
    }

    /// One `<perf>`: its boxes and counters, driver and source, one kernel PMU per box.
    fn perf(
        &mut self,
        unit: &UnitScope<'_>,
        pf: &RawPerf,
        (numbers, unit_counters): (&[u32], &[Counter]),
        coverage: &mut Coverage,
    ) {
        let ctx = unit.ctx;
        let on = (ListOn::Perf, pf.at);
        let insts = self.instance_list(unit, on, pf.instances.as_deref());
        let Some(counters) = self.counter_list(ctx, on, pf.counters.as_deref(), numbers) else {
            return;
        };
        let Some(driver) = unit.cat.perf_drivers.get(&pf.driver).cloned() else {
            self.push(ctx.error(
                pf.at,
                format!("<perf> names unknown perf driver `{}`", pf.driver),
                "declare the driver's formats in processors.xml (<perf-driver id=\"...\">)",
            ));
            return;
        };
        self.perf_driver_fits(unit, pf, &driver, &counters, unit_counters);
        self.public_source(ctx, unit.cat, pf.at, &pf.source);
        if insts.len() > 1 && !pf.pmu.contains("{i}") {
            self.push(ctx.error(
                pf.at,
                format!("<perf pmu=\"{}\"> names one kernel PMU for {} boxes", pf.pmu, insts.len()),
                "a kernel PMU counts one box: write the box number as {i} (uncore_cbox_{i}), or one <perf> per box",
            ));
            return;
        }
        for &i in &insts {
            let pmu = pf.pmu.replace("{i}", &unit.instances[i].key);
            self.perf_box(unit, pf.at, (i, &pmu), &counters, coverage);
            coverage.pmus.push(PerfPmu {
                instance: i,
                pmu,
                counters: counters.clone(),
                source: pf.source.clone(),
                driver: Arc::clone(&driver),
            });
        }
    }

    /// Kernel PMU `pmu` counts `counters` of box `i`: no other box has that PMU, and no other
    /// PMU counts those counters.
    fn perf_box(
        &mut self,
        unit: &UnitScope<'_>,
        at: usize,
        (i, pmu): (usize, &str),
        counters: &[u32],
        coverage: &mut Coverage,
    ) {
        let instances = unit.instances;
        if let Some(other) = coverage
            .pmus
            .iter()
            .find(|o| o.pmu == pmu && o.instance != i)
        {
            self.push(unit.ctx.error(
                at,
                format!(
                    "kernel PMU {pmu} is given to boxes {} and {}",
                    instances[other.instance].name, instances[i].name
                ),
                "a kernel PMU counts one box: give each box its own name",
            ));
        }
        for &c in counters {
            if let Some(first) = coverage.counted_by.insert((i, c), pmu.to_string()) {
                self.push(unit.ctx.error(
                    at,
                    format!(
                        "counter {c} of box {} is counted by two kernel PMUs, {first} and {pmu}",
                        instances[i].name
                    ),
                    "give each counter one <perf>; split counters=\"...\"",
                ));
            }
        }
    }

    /// Once a unit names perf PMUs, every counter of every box has one.
    fn perf_uncovered(
        &mut self,
        unit: &UnitScope<'_>,
        pmu_at: usize,
        numbers: &[u32],
        coverage: &Coverage,
    ) {
        for (i, inst) in unit.instances.iter().enumerate() {
            let missing: Vec<String> = numbers
                .iter()
                .filter(|c| !coverage.counted_by.contains_key(&(i, **c)))
                .map(|c| c.to_string())
                .collect();
            if !missing.is_empty() {
                self.push(unit.ctx.error(
                    pmu_at,
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

    /// The driver's format against the counters a `<perf>` covers: a format mapped onto a
    /// role needs that role, of the format's width, in every general counter control among
    /// them (an `event` format may be wider by the control's `event-ext` bit); one mapped
    /// onto a field needs the field, of the format's width; one mapped onto a register needs
    /// the register in the unit.
    fn perf_driver_fits(
        &mut self,
        unit: &UnitScope<'_>,
        pf: &RawPerf,
        driver: &PerfDriver,
        counters: &[u32],
        unit_counters: &[Counter],
    ) {
        let registers = unit.registers;
        let controls: Vec<&Register> = {
            let mut v: Vec<usize> = unit_counters
                .iter()
                .filter(|c| c.kind == CounterKind::General && counters.contains(&c.number))
                .filter_map(|c| c.control.map(|r| r.register))
                .collect();
            v.sort_unstable();
            v.dedup();
            v.into_iter().map(|r| &registers[r]).collect()
        };
        // A fixed counter among them with a control of its own may be chosen by the event
        // format's one bit above the event field (arm_cspmu's `cycles`, config bit 32).
        let fixed_select = unit_counters.iter().any(|c| {
            c.kind == CounterKind::Fixed && c.control.is_some() && counters.contains(&c.number)
        });
        for format in &driver.formats {
            let f = Format {
                at: pf.at,
                driver,
                format,
            };
            match &format.target {
                FormatTarget::Role(role) => {
                    for reg in &controls {
                        self.format_on_role(unit, f, reg, (*role, fixed_select));
                    }
                }
                FormatTarget::Field(name) => {
                    for reg in &controls {
                        self.format_on_field(unit, f, reg, name);
                    }
                }
                FormatTarget::Register(name) => {
                    if !registers.iter().any(|r| &r.name == name) {
                        self.push(unit.ctx.error(
                            pf.at,
                            format!(
                                "perf driver `{}`: format `{}` maps onto register {name}, which the unit does not have",
                                driver.id, format.name
                            ),
                            "name a register of this unit (its name template), or give the reason as the <format>'s text",
                        ));
                    }
                }
                FormatTarget::Unmapped(_) => {}
            }
        }
    }

    /// A format mapped onto `role`: the control `reg` has a field of that role (serving
    /// every counter) of the format's width, or for `event` that width less the `event-ext`
    /// bit, or less the one bit that selects a fixed counter (`fixed_select`).
    fn format_on_role(
        &mut self,
        unit: &UnitScope<'_>,
        f: Format,
        reg: &Register,
        (role, fixed_select): (Role, bool),
    ) {
        let (driver, format) = (f.driver, f.format);
        let has = |r: Role| {
            reg.fields.iter().find(|x| {
                x.role
                    .as_ref()
                    .is_some_and(|fr| fr.role == r && fr.counters.is_empty())
            })
        };
        let Some(field) = has(role) else {
            self.push(unit.ctx.error(
                f.at,
                format!(
                    "perf driver `{}`: format `{}` maps onto role {}, which {} has no field for",
                    driver.id, format.name, role.as_str(), reg.name
                ),
                "map the format onto what the control has, or give the driver's reason as the <format>'s text (and a note)",
            ));
            return;
        };
        let ext = has(Role::EventExt).map_or(0, |e| e.width());
        let fits = field.width() == format.width
            || (role == Role::Event && ext > 0 && field.width() + ext == format.width)
            || (role == Role::Event && fixed_select && field.width() + 1 == format.width);
        if !fits {
            self.push(unit.ctx.error(
                f.at,
                format!(
                    "perf driver `{}`: format `{}` ({}) is {} bits, but {}.{} ({}) is {}",
                    driver.id,
                    format.name,
                    format.config,
                    format.width,
                    reg.name,
                    field.name,
                    role.as_str(),
                    field.width()
                ),
                "a format field and the control field it maps onto have one width",
            ));
        }
    }

    /// A format mapped onto field `name`: the control `reg` has it, of the format's width.
    fn format_on_field(&mut self, unit: &UnitScope<'_>, f: Format, reg: &Register, name: &str) {
        let (driver, format) = (f.driver, f.format);
        match reg.fields.iter().find(|x| &*x.name == name) {
            Some(field) if field.width() == format.width => {}
            Some(field) => self.push(unit.ctx.error(
                f.at,
                format!(
                    "perf driver `{}`: format `{}` ({}) is {} bits, but {}.{} is {}",
                    driver.id, format.name, format.config, format.width, reg.name, name, field.width()
                ),
                "a format field and the control field it maps onto have one width",
            )),
            None => self.push(unit.ctx.error(
                f.at,
                format!(
                    "perf driver `{}`: format `{}` maps onto field `{name}`, which {} does not have",
                    driver.id, format.name, reg.name
                ),
                "name a field of the counter control, or give the driver's reason as the <format>'s text",
            )),
        }
    }
}
