//! The PMU structure rules (spec/README.md, "PMU structure"): field roles (`roles`); a unit's
//! `<pmu>` (`wiring`, which runs the passes: its counters in `counters`, where role fields sit
//! in `placement`, its perf PMUs in `perf`, what only free-running counters have in
//! `free_running`); and, once every unit of a processor is known,
//! its overflow routes and global level (`routes`).
//!
//! Each pass is a `Validator` method over a [`UnitScope`] (the unit being checked) that pushes
//! what it finds and returns what it resolved, so the order of the diagnostics is the order
//! of the passes.

use std::path::Path;
use std::sync::Arc;

use super::processors::Catalogue;
use super::{instance_names, parse_counter_list, Ctx, Validator};
use crate::diagnostics::Diagnostic;
use crate::model::{Instance, Position, Register};

mod box_count;
mod clock;
mod counters;
mod free_running;
mod perf;
mod placement;
mod quirks;
mod roles;
mod routes;
mod socket_bus;
mod stack_bus;
mod table_placed;
mod wiring;

/// A register found by concrete name: unit, register, instance, index.
type Found = (usize, usize, usize, u32);

/// The register's readable fields but `skip`, in bit order, when they are fields of `width`
/// bits packed from bit 0 up (field k at bits k*width..): their positions in the register.
/// A socket's bus map (slots) and an IIO stack's bus register (a bus a byte) are such.
fn packed_fields(reg: &Register, width: u32, skip: Option<usize>) -> Option<Vec<usize>> {
    let mut fields: Vec<(u32, usize)> = reg
        .fields
        .iter()
        .enumerate()
        .filter(|&(i, f)| Some(i) != skip && !f.access.is_placeholder() && f.access.is_readable())
        .map(|(i, f)| (f.lsb, i))
        .collect();
    fields.sort_unstable();
    let packed = fields.iter().enumerate().all(|(k, &(lsb, i))| {
        reg.fields[i].split.is_none() && reg.fields[i].width() == width && lsb == k as u32 * width
    });
    (packed && !fields.is_empty()).then(|| fields.into_iter().map(|(_, i)| i).collect())
}

/// The unit whose `<pmu>` is being checked: its file, its validated registers and
/// instances, and what processors.xml declares (sources, perf drivers).
pub(in crate::validate) struct UnitScope<'a> {
    pub(in crate::validate) ctx: &'a Ctx<'a>,
    pub(in crate::validate) path: &'a Arc<Path>,
    pub(in crate::validate) registers: &'a [Register],
    pub(in crate::validate) instances: &'a [Instance],
    pub(in crate::validate) cat: &'a Catalogue,
}

/// The `<pmu>` element a `counters="..."` or `instances="..."` list is written on, for the
/// messages and the list's default.
#[derive(Clone, Copy)]
enum ListOn {
    Filter,
    Route,
    Perf,
}

impl ListOn {
    fn name(self) -> &'static str {
        match self {
            ListOn::Filter => "filter",
            ListOn::Route => "route",
            ListOn::Perf => "<perf>",
        }
    }
}

impl Validator {
    /// `counters="..."` of a filter, route or `<perf>`: an ascending list of counters the box
    /// has (`numbers`). Absent, the element covers every counter: a filter says so with an
    /// empty list, a route or `<perf>` lists them all. `None` when the list does not parse; a
    /// counter the box lacks is reported, and the list kept.
    fn counter_list(
        &mut self,
        ctx: &Ctx<'_>,
        (on, at): (ListOn, usize),
        text: Option<&str>,
        numbers: &[u32],
    ) -> Option<Vec<u32>> {
        let list = match (text.map(parse_counter_list), on) {
            (None, ListOn::Filter) => Vec::new(),
            (None, _) => numbers.to_vec(),
            (Some(Some(l)), _) => l,
            (Some(None), _) => {
                let example = match on {
                    ListOn::Filter => "write e.g. counters=\"0-3\"",
                    _ => "write e.g. counters=\"0-7\"",
                };
                self.push(ctx.error(
                    at,
                    format!(
                        "{} counters is not an ascending list of counter numbers",
                        on.name()
                    ),
                    example,
                ));
                return None;
            }
        };
        if let Some(n) = list.iter().find(|n| !numbers.contains(n)) {
            self.push(ctx.error(
                at,
                format!(
                    "{} names counter {n}, which the box does not have",
                    on.name()
                ),
                "name counters the <pmu> declares",
            ));
        }
        Some(list)
    }

    /// `instances="..."` of a route or `<perf>`: the instances named (unknown ones reported
    /// and left out), or every instance of the unit.
    fn instance_list(
        &mut self,
        unit: &UnitScope<'_>,
        (on, at): (ListOn, usize),
        text: Option<&str>,
    ) -> Vec<usize> {
        let Some(text) = text else {
            return (0..unit.instances.len()).collect();
        };
        let mut found = Vec::new();
        for name in text.split_whitespace() {
            match unit.instances.iter().position(|i| i.name == name) {
                Some(i) => found.push(i),
                None => {
                    let help = match on {
                        ListOn::Perf => "name instances the unit declares".to_string(),
                        _ => format!(
                            "the unit's instances are: {}",
                            instance_names(unit.instances)
                        ),
                    };
                    self.push(unit.ctx.error(
                        at,
                        format!("{} names unknown instance `{name}`", on.name()),
                        &help,
                    ))
                }
            }
        }
        found
    }
}

/// A route as written, kept until every unit of the processor is validated.
#[derive(Debug, Clone)]
pub(crate) struct PendingRoute {
    at: Position,
    instances: Vec<usize>,
    counters: Vec<u32>,
    bits: Vec<PendingBit>,
    /// A route declared unknown (`unknown="why"`): it claims its counters, has no hops and
    /// is not part of the generated structure.
    unknown: bool,
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
    /// The `<box-count>`, which may name a register of another unit.
    box_count: Option<box_count::PendingBoxCount>,
    /// The `<socket-bus>`, whose registers are resolved the same way.
    socket_bus: Option<socket_bus::PendingSocketBus>,
    /// The `<stack-bus>`, whose register is resolved the same way.
    stack_bus: Option<stack_bus::PendingStackBus>,
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
