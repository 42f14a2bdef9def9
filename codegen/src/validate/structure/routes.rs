//! Overflow routes across a processor's units: each hop resolved to a concrete register and
//! field, each route ending in the global status, each counter routed exactly one way.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::super::Validator;
use super::{diag, PendingBit, PendingRoute, PendingRoutes};
use crate::model::pmu::*;
use crate::model::{Access, Position, Processor};

/// Concrete register name (`S0_MSR_PMON_SUMMARY`) -> (unit, register, instance, index).
pub(super) type Names = HashMap<String, (usize, usize, usize, u32)>;

/// The processor whose routes are resolved, and its registers by concrete name.
struct Scope<'p> {
    p: &'p Processor,
    names: Names,
    /// The global level's unit and status register, if the processor has one.
    global: Option<(usize, usize)>,
}

impl Validator {
    /// Resolves every unit's routes against the whole processor, and checks that every counter
    /// of a processor with a global level reaches it exactly one way.
    pub(in crate::validate) fn resolve_routes(
        &mut self,
        p: &mut Processor,
        pending: Vec<(usize, PendingRoutes)>,
    ) {
        let Some(global) = self.processor_global(p) else {
            return;
        };
        let scope = Scope {
            p,
            names: concrete_names(p),
            global,
        };
        let resolved: Vec<(usize, Vec<Route>)> = pending
            .iter()
            .map(|(ui, pr)| {
                let routes = pr.routes.iter().filter(|r| !r.unknown);
                // A route declared unknown claims its counters (below), but reaches nothing
                // the runtime could walk.
                (*ui, routes.map(|r| self.resolve_route(&scope, r)).collect())
            })
            .collect();
        for ((ui, routes), (_, pr)) in resolved.iter().zip(&pending) {
            self.route_coverage(&scope, *ui, routes, pr);
        }
        for (ui, routes) in resolved {
            if let Some(pmu) = p.units[ui].pmu.as_mut() {
                pmu.routes = routes;
            }
        }
    }

    /// The processor's global level (its unit and status register), declared at most once;
    /// `None` (reported) when two units declare one.
    fn processor_global(&mut self, p: &Processor) -> Option<Option<(usize, usize)>> {
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
            return None;
        }
        Some(globals.first().map(|(ui, g)| (*ui, g.status)))
    }

    /// A route's hops, in order; a route with hops ends at the global status.
    fn resolve_route(&mut self, scope: &Scope, r: &PendingRoute) -> Route {
        let hops: Vec<Hop> = r
            .bits
            .iter()
            .filter_map(|b| self.resolve_hop(scope, b))
            .collect();
        if let (Some((gu, gs)), Some(last)) = (scope.global, hops.last()) {
            if last.bit.unit != gu || last.bit.register != gs {
                let g = &scope.p.units[gu].registers[gs];
                self.push(diag(
                    &r.at,
                    format!("the route ends below the global status {}", g.name),
                    "list every hop up to and including the global status bit",
                ));
            }
        }
        Route {
            instances: r.instances.clone(),
            counters: r.counters.clone(),
            hops,
        }
    }

    /// One `<bit>`: its status bit and the bit that clears it.
    fn resolve_hop(&mut self, scope: &Scope, b: &PendingBit) -> Option<Hop> {
        let bit = self.resolve_bit(scope, &b.at, (&b.register, &b.field), false)?;
        let Some(c) = &b.clear else {
            return Some(Hop { bit, clear: None });
        };
        let Some((reg, field)) = c.rsplit_once('.') else {
            self.push(diag(
                &b.at,
                format!("clear `{c}` is not REGISTER.field"),
                "write e.g. clear=\"U_MSR_PMON_GLOBAL_OVF_CTL.clr_ov_s0\"",
            ));
            return None;
        };
        let x = self.resolve_bit(scope, &b.at, (reg, field), true)?;
        // A rw1c bit clears itself only: writing 1 to another status bit would clear that
        // bit, not this hop.
        let access = scope.p.units[x.unit].registers[x.register].fields[x.field].access;
        if access == Access::Rw1c && x != bit {
            self.push(diag(
                &b.at,
                format!("clear `{c}` is a rw1c status bit, but not this hop's bit {}.{}", b.register, b.field),
                "a rw1c bit clears only itself: name the hop's own bit as its clear, or a w1c/wo bit of an overflow-clear register",
            ));
            return None;
        }
        Some(Hop {
            bit,
            clear: Some(x),
        })
    }

    /// `REGISTER.field` of a hop: a status bit (one readable bit) or, with `clear`, a clear
    /// bit (one w1c, wo or rw1c bit).
    fn resolve_bit(
        &mut self,
        scope: &Scope,
        at: &Position,
        (reg, field): (&str, &str),
        clear: bool,
    ) -> Option<BitRef> {
        let Some(&(unit, register, instance, index)) = scope.names.get(reg) else {
            self.push(diag(at, format!("route names unknown register `{reg}`"), &format!("name a register of processor {} by its concrete name, e.g. S0_MSR_PMON_SUMMARY", scope.p.id)));
            return None;
        };
        let r = &scope.p.units[unit].registers[register];
        let named = || r.fields.iter().filter(|f| !f.access.is_placeholder());
        let Some(fi) = r
            .fields
            .iter()
            .position(|f| !f.access.is_placeholder() && f.name.as_ref() == field)
        else {
            let names: Vec<&str> = named().map(|f| f.name.as_ref()).collect();
            self.push(diag(
                at,
                format!("route names unknown field `{field}` of {reg}"),
                &format!("the register's fields are: {}", names.join(", ")),
            ));
            return None;
        };
        let f = &r.fields[fi];
        let bad = if clear {
            !matches!(f.access, Access::W1c | Access::Wo | Access::Rw1c)
        } else {
            !f.access.is_readable()
        };
        if bad || f.width() != 1 {
            self.push(diag(
                at,
                format!(
                    "{reg}.{field} ({}, {} bit(s)) cannot be a route's {} bit",
                    f.access.as_str(),
                    f.width(),
                    if clear { "clear" } else { "status" }
                ),
                if clear {
                    "a clear bit is one w1c or wo bit, or the status bit itself when it is rw1c"
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
    }

    /// Every (instance, counter) of unit `ui` reaches the global status one way: no two
    /// routes with different hops, no route beside an unknown one, none missing.
    fn route_coverage(&mut self, scope: &Scope, ui: usize, routes: &[Route], pr: &PendingRoutes) {
        let (p, global) = (scope.p, scope.global);
        let u = &p.units[ui];
        let Some(pmu) = &u.pmu else { return };
        // The box's own status is the global status (the core PMU): no route needed.
        let own_is_global = global.is_some_and(|(gu, gs)| gu == ui && pmu.statuses.contains(&gs));
        let mut claims: BTreeMap<(usize, u32), &Route> = BTreeMap::new();
        let mut unknown: BTreeSet<(usize, u32)> = BTreeSet::new();
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
        // Routes declared unknown claim their counters too, and must not overlap a route
        // that gives the hops.
        for r in pr.routes.iter().filter(|r| r.unknown) {
            for &i in &r.instances {
                for &c in &r.counters {
                    if claims.contains_key(&(i, c)) {
                        self.push(diag(&r.at, format!("counter {c} of {} has a route and is declared unknown", u.instances[i].name), "keep the route whose hops a source gives, and narrow the unknown one's instances or counters"));
                    }
                    unknown.insert((i, c));
                }
            }
        }
        if global.is_none() || own_is_global {
            return;
        }
        let routed = pmu
            .counters
            .iter()
            .filter(|c| c.kind != CounterKind::FreeRunning);
        let routed: Vec<&Counter> = routed.collect();
        for (ii, inst) in u.instances.iter().enumerate() {
            let claimed = |c: &&&Counter| {
                claims.contains_key(&(ii, c.number)) || unknown.contains(&(ii, c.number))
            };
            if let Some(c) = routed.iter().find(|c| !claimed(c)) {
                self.push(diag(&pr.at, format!("counter {} of {} has no overflow route, but processor {} has a global level", c.number, inst.name, p.id), "add a <route> listing the summary and global status bits its overflow sets"));
            }
        }
    }
}

pub(super) fn concrete_names(p: &Processor) -> Names {
    let mut names = Names::new();
    for (ui, u) in p.units.iter().enumerate() {
        for (ri, r) in u.registers.iter().enumerate() {
            for (ii, inst) in u.instances.iter().enumerate() {
                for n in 0..r.count {
                    names.insert(r.concrete_name(inst, n), (ui, ri, ii, n));
                }
            }
        }
    }
    names
}
