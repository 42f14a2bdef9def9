//! The PMU structure rules (spec/README.md, "PMU structure"): field roles (`roles`), a unit's
//! `<pmu>` wiring (`wiring`), and, once every unit of a processor is known, its overflow
//! routes and global level (`routes`).

use crate::diagnostics::Diagnostic;
use crate::model::Position;

mod perf;
mod roles;
mod routes;
mod wiring;

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
