//! `<perf>`: which Linux perf PMU counts which counters of which box, checked against the
//! unit's structure.

use std::collections::BTreeMap;

use super::super::{Ctx, Validator};
use super::parse_counter_list;
use crate::model::pmu::PerfPmu;
use crate::model::Instance;
use crate::parse::pmu::RawPmu;

impl Validator {
    /// A unit's `<perf>` elements: which Linux perf PMU counts which counters of which box.
    /// Checked against the structure: every counter of every box is counted by exactly one
    /// PMU once any is named, a PMU counts one box (a name shared by several boxes needs
    /// `{i}`), and the counters named exist.
    pub(super) fn perf_pmus(
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
}
