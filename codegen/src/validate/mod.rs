//! Stage 2: raw structs -> the validated model, or every error found.
//!
//! Each rule of spec/README.md ("What the validator rejects") lives in this folder and
//! nowhere else, one module per concern: `processors` (processors.xml), `unit` (a unit file
//! and its registers), `addresses`, `fields`, `structure` (the PMU structure), `events`
//! (events files), `numbers` (how numbers and names are written). The validator keeps going
//! after an error so one run lists every problem in every file. Reading files and threading
//! are `crate::load`'s.
//!
//! A check is a short `Validator` method over a small scope struct: the file (`Ctx`), the
//! unit (`unit::UnitFile`, `structure::UnitScope`) or the register (`unit::RegisterScope`)
//! it is checking. `tests/validation_errors.rs` pins every message, its place and its order.

use std::collections::HashSet;
use std::sync::Arc;

use crate::diagnostics::{Diagnostic, SourceFile};
use crate::model::pmu::BoxCountRule;
use crate::model::*;
use crate::parse::*;

mod addresses;
mod domains;
mod events;
mod fields;
mod metrics;
mod midr;
mod mmio;
mod models;
mod node_events;
mod numbers;
mod pci_identity;
mod processors;
mod socs;
mod steppings;
mod structure;
mod sysreg;
mod table_placed;
mod unit;

use crate::naming::{
    camel_case, event_ident, normalize_text, relative_spec_path, rust_type_name, snake_case,
};
pub use events::{aux_candidates, events_unit, resolve_aux, AuxCandidate, EventCapacity};
pub use metrics::MAX_STACK;
use numbers::*;
pub use numbers::{counters_mask, parse_number};
use processors::Catalogue;
use structure::{PendingRoutes, UnitScope};

/// Validates a parsed spec directory.
pub fn validate(raw: &RawSpec) -> Result<Spec, Vec<Diagnostic>> {
    let mut v = Validator::default();
    let mut ctx = v.processors(&raw.processors);
    let units: Vec<Option<ResolvedUnit>> =
        raw.units.iter().map(|u| v.resolve_unit(u, &ctx)).collect();
    v.assemble(&mut ctx, units);
    v.finish(ctx)
}

/// A validated unit with its processor's index and its routes as written.
pub(crate) type ResolvedUnit = (usize, Unit, Option<PendingRoutes>);

/// A validated unit, or none, and the errors found in its file.
pub(crate) type UnitResult = (Option<ResolvedUnit>, Vec<Diagnostic>);

/// What the processors file declares, which every unit is checked against.
pub(crate) struct SpecContext {
    pub(crate) processors: Vec<Processor>,
    pub(crate) public_sources: Vec<PublicSource>,
    pub(crate) catalogue: Catalogue,
    pub(crate) socs: Vec<crate::model::soc::Soc>,
}

#[derive(Default)]
pub(crate) struct Validator {
    pub(crate) errors: Vec<Diagnostic>,
    /// Field names and descriptions seen so far, shared rather than copied.
    strings: HashSet<Arc<str>>,
}

/// The file being validated and the register (if any) errors are about.
pub(crate) struct Ctx<'a> {
    file: &'a SourceFile,
    register: Option<&'a str>,
}

impl Ctx<'_> {
    fn error(&self, at: usize, message: impl Into<String>, help: &str) -> Diagnostic {
        let message = match self.register {
            Some(r) => format!("register {r}: {}", message.into()),
            None => message.into(),
        };
        self.file.error_at(at, message).help(help)
    }
}

impl Validator {
    pub(crate) fn push(&mut self, d: Diagnostic) {
        self.errors.push(d);
    }

    /// The shared copy of `s`.
    pub(super) fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(existing) = self.strings.get(s) {
            return Arc::clone(existing);
        }
        let new: Arc<str> = Arc::from(s);
        self.strings.insert(Arc::clone(&new));
        new
    }

    /// Validates one unit file against the processors; `None` if it has errors.
    pub(crate) fn resolve_unit(
        &mut self,
        unit: &ParsedUnit,
        ctx: &SpecContext,
    ) -> Option<ResolvedUnit> {
        let processors = &ctx.processors;
        let Some(pi) = processors.iter().position(|p| p.id == unit.raw.processor) else {
            let known: Vec<&str> = processors.iter().map(|p| p.id.as_str()).collect();
            self.push(
                unit.file
                    .error_at(
                        unit.raw.at,
                        format!(
                            "unit `{}` names unknown processor `{}`",
                            unit.raw.name, unit.raw.processor
                        ),
                    )
                    .help(format!(
                        "use one of the processors in processors.xml: {}",
                        known.join(", ")
                    )),
            );
            return None;
        };
        self.unit(unit, &processors[pi], &ctx.catalogue)
            .map(|(u, routes)| (pi, u, routes))
    }

    /// Adds validated units to their processors (refusing a unit defined twice), then checks
    /// what spans units: addresses.
    pub(crate) fn assemble(&mut self, ctx: &mut SpecContext, units: Vec<Option<ResolvedUnit>>) {
        let mut pending: Vec<Vec<(usize, PendingRoutes)>> = vec![Vec::new(); ctx.processors.len()];
        for (pi, u, routes) in units.into_iter().flatten() {
            let processor = &mut ctx.processors[pi];
            if processor
                .units
                .iter()
                .any(|o| o.name == u.name || o.module == u.module)
            {
                self.push(
                    Diagnostic {
                        path: u.at.path.to_path_buf(),
                        line: u.at.line,
                        column: u.at.column,
                        message: format!(
                            "unit `{}` (module `{}`) is defined twice for processor `{}`",
                            u.name, u.module, processor.id
                        ),
                        help: None,
                    }
                    .help("each unit has one file; merge the two or rename one"),
                );
            } else {
                if let Some(r) = routes {
                    pending[pi].push((processor.units.len(), r));
                }
                processor.units.push(u);
            }
        }
        for p in &ctx.processors {
            self.check_address_collisions(p);
            self.check_mmio_overlaps(p);
        }
        for (p, pending) in ctx.processors.iter_mut().zip(pending) {
            self.resolve_box_counts(p, &pending);
            self.resolve_socket_buses(p, &pending);
            self.resolve_stack_buses(p, &pending);
            // After `<socket-bus>`: it says whether a socket's devices share one bus.
            for d in pci_identity::check(p) {
                self.push(d);
            }
            self.resolve_routes(p, pending);
        }
        self.share_units(&mut ctx.processors);
    }

    /// `units-from`: each processor that takes another's units gets copies of them, validated
    /// once, with no events (its own events files add those). A unit file of its own with the
    /// name or module of a taken unit is refused: the processor would have two.
    fn share_units(&mut self, processors: &mut [Processor]) {
        for i in 0..processors.len() {
            let Some(from) = processors[i].units_from.as_ref().map(|r| r.id.clone()) else {
                continue;
            };
            // `processors` checked that `from` exists and takes no units itself.
            let Some(source) = processors.iter().find(|p| p.id == from) else {
                continue;
            };
            let mut taken: Vec<Unit> = source.units.clone();
            let p = &processors[i];
            for own in &p.units {
                if let Some(t) = taken
                    .iter()
                    .find(|t| t.name == own.name || t.module == own.module)
                {
                    self.push(
                        Diagnostic {
                            path: own.at.path.to_path_buf(),
                            line: own.at.line,
                            column: own.at.column,
                            message: format!(
                                "unit `{}` (module `{}`) of processor `{}` is also taken from `{from}` (units-from), whose file {} defines it",
                                own.name, own.module, p.id, t.file
                            ),
                            help: None,
                        }
                        .help("delete this file and keep the shared one, or drop units-from and give the processor every unit file of its own"),
                    );
                }
            }
            // The taken units go after the processor's own (file-path order: its own
            // directory first), so their routes' unit positions move by that many.
            let offset = p.units.len();
            for t in &mut taken {
                t.events.clear();
                let Some(pmu) = t.pmu.as_mut() else { continue };
                for hop in pmu.routes.iter_mut().flat_map(|r| &mut r.hops) {
                    hop.bit.unit += offset;
                    if let Some(c) = &mut hop.clear {
                        c.unit += offset;
                    }
                }
                if let Some(BoxCountRule::SetBits(bits)) =
                    pmu.box_count.as_mut().map(|b| &mut b.rule)
                {
                    for b in bits {
                        b.unit += offset;
                    }
                }
                if let Some(sb) = pmu.socket_bus.as_mut() {
                    for b in std::iter::once(&mut sb.node_id).chain(&mut sb.slots) {
                        b.unit += offset;
                    }
                }
                if let Some(sb) = pmu.stack_bus.as_mut() {
                    for b in std::iter::once(&mut sb.valid).chain(&mut sb.buses) {
                        b.unit += offset;
                    }
                }
            }
            processors[i].units.append(&mut taken);
        }
    }

    /// The validated spec, or every error found.
    pub(crate) fn finish(self, ctx: SpecContext) -> Result<Spec, Vec<Diagnostic>> {
        if self.errors.is_empty() {
            Ok(Spec {
                processors: ctx.processors,
                public_sources: ctx.public_sources,
                socs: ctx.socs,
            })
        } else {
            Err(self.errors)
        }
    }
}

/// The instances' names, for a help line: `"C0, C1"`.
fn instance_names(instances: &[Instance]) -> String {
    let names: Vec<&str> = instances.iter().map(|i| i.name.as_str()).collect();
    names.join(", ")
}
