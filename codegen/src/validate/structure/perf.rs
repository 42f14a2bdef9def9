//! `<perf>`: which Linux perf PMU counts which counters of which box, checked against the
//! unit's structure.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::super::Validator;
use super::{ListOn, UnitScope};
use crate::model::pmu::{Counter, CounterKind, FormatTarget, PerfDriver, PerfPmu, Role};
use crate::model::Register;
use crate::parse::pmu::{RawPerf, RawPmu};

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
        let ctx = unit.ctx;
        let instances = unit.instances;
        let mut out: Vec<PerfPmu> = Vec::new();
        let mut covered: BTreeMap<(usize, u32), String> = BTreeMap::new();
        for pf in &raw.perf {
            let on = (ListOn::Perf, pf.at);
            let insts = self.instance_list(unit, on, pf.instances.as_deref());
            let Some(counters) = self.counter_list(ctx, on, pf.counters.as_deref(), numbers) else {
                continue;
            };
            let Some(driver) = unit.cat.perf_drivers.get(&pf.driver).cloned() else {
                self.push(ctx.error(
                    pf.at,
                    format!("<perf> names unknown perf driver `{}`", pf.driver),
                    "declare the driver's formats in processors.xml (<perf-driver id=\"...\">)",
                ));
                continue;
            };
            self.perf_driver_fits(unit, pf, &driver, &counters, unit_counters);
            if !unit.cat.public.contains_key(&pf.source) {
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
                    driver: Arc::clone(&driver),
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
        let (ctx, registers) = (unit.ctx, unit.registers);
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
        for f in &driver.formats {
            match &f.target {
                FormatTarget::Role(role) => {
                    for reg in &controls {
                        let has = |r: Role| {
                            reg.fields.iter().find(|x| {
                                x.role
                                    .as_ref()
                                    .is_some_and(|fr| fr.role == r && fr.counters.is_empty())
                            })
                        };
                        let Some(field) = has(*role) else {
                            self.push(ctx.error(
                                pf.at,
                                format!(
                                    "perf driver `{}`: format `{}` maps onto role {}, which {} has no field for",
                                    driver.id, f.name, role.as_str(), reg.name
                                ),
                                "map the format onto what the control has, or give the driver's reason as the <format>'s text (and a note)",
                            ));
                            continue;
                        };
                        let ext = has(Role::EventExt).map_or(0, |e| e.width());
                        let fits = field.width() == f.width
                            || (*role == Role::Event && ext > 0 && field.width() + ext == f.width);
                        if !fits {
                            self.push(ctx.error(
                                pf.at,
                                format!(
                                    "perf driver `{}`: format `{}` ({}) is {} bits, but {}.{} ({}) is {}",
                                    driver.id, f.name, f.config, f.width, reg.name, field.name, role.as_str(), field.width()
                                ),
                                "a format field and the control field it maps onto have one width",
                            ));
                        }
                    }
                }
                FormatTarget::Field(name) => {
                    for reg in &controls {
                        match reg.fields.iter().find(|x| &*x.name == name.as_str()) {
                            Some(field) if field.width() == f.width => {}
                            Some(field) => self.push(ctx.error(
                                pf.at,
                                format!(
                                    "perf driver `{}`: format `{}` ({}) is {} bits, but {}.{} is {}",
                                    driver.id, f.name, f.config, f.width, reg.name, name, field.width()
                                ),
                                "a format field and the control field it maps onto have one width",
                            )),
                            None => self.push(ctx.error(
                                pf.at,
                                format!(
                                    "perf driver `{}`: format `{}` maps onto field `{name}`, which {} does not have",
                                    driver.id, f.name, reg.name
                                ),
                                "name a field of the counter control, or give the driver's reason as the <format>'s text",
                            )),
                        }
                    }
                }
                FormatTarget::Register(name) => {
                    if !registers.iter().any(|r| &r.name == name) {
                        self.push(ctx.error(
                            pf.at,
                            format!(
                                "perf driver `{}`: format `{}` maps onto register {name}, which the unit does not have",
                                driver.id, f.name
                            ),
                            "name a register of this unit (its name template), or give the reason as the <format>'s text",
                        ));
                    }
                }
                FormatTarget::Unmapped(_) => {}
            }
        }
    }
}
