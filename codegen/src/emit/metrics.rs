//! Metrics in the generated crate: `src/metrics.rs` (the types and the evaluator, from
//! `codegen/templates/metrics.rs`, with `for_processor`) and each processor's
//! `src/<processor>/metrics.rs` (its `METRICS` table).

use std::fmt::Write;

use super::rust::lit;
use crate::model::formula::Op;
use crate::model::metric::{Metric, MetricRead, MetricScope};
use crate::model::{Processor, Spec};

const METRICS: &str = include_str!("../../templates/metrics.rs");

/// `src/metrics.rs`: the template, then `for_processor` over the processors with metrics.
pub fn crate_module(spec: &Spec) -> String {
    let mut out = super::from_template("metrics.rs", METRICS);
    out.push_str("\n/// The metrics of the processor with id `id` (`xeon-e5-2600-v3`); empty for a processor\n/// without metrics or one whose cargo feature is off.\npub fn for_processor(id: &str) -> &'static [MetricInfo] {\n");
    if spec.processors.iter().all(|p| p.metrics.is_empty()) {
        out.push_str("    let _ = id;\n    &[]\n}\n");
        return out;
    }
    out.push_str("    match id {\n");
    for p in spec.processors.iter().filter(|p| !p.metrics.is_empty()) {
        let cfg = match super::rust::processor_feature(p) {
            Some(f) => format!("        #[cfg(feature = \"{f}\")]\n"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "{cfg}        {} => crate::{}::metrics::METRICS,",
            lit(&p.id),
            p.module
        );
    }
    out.push_str("        _ => &[],\n    }\n}\n");
    out
}

/// The unit of the core PMU's events, as a metric's read names it (`read_core`).
const CORE: &str = "CORE";

/// A processor's `metrics.rs`, or `None` when it has no metrics.
pub fn processor_module(p: &Processor) -> Option<String> {
    if p.metrics.is_empty() {
        return None;
    }
    let ops = |m: &Metric| {
        let mut ops = m.expr.postfix();
        if let Some(t) = &m.threshold {
            ops.extend(t.expr.postfix());
        }
        ops
    };
    let reads_constants = p
        .metrics
        .iter()
        .any(|m| ops(m).iter().any(|op| matches!(op, Op::Const(_))));
    let mut uses = vec!["metric", "MetricInfo"];
    if reads_constants {
        uses.push("Constant");
    }
    let reads = || p.metrics.iter().flat_map(|m| m.events.iter());
    if reads().any(|e| e.unit != CORE) {
        uses.push("read");
    }
    if reads().any(|e| e.unit == CORE) {
        uses.push("read_core");
    }
    let topdown = |m: &Metric| m.events.iter().any(|e| e.read != MetricRead::Counted);
    if p.metrics.iter().any(topdown) {
        uses.push("MetricRead");
    }
    let mut scopes = Vec::new();
    for (scope, name) in [(MetricScope::Cpu, "Cpu"), (MetricScope::Socket, "Socket")] {
        if p.metrics.iter().any(|m| m.scope == scope) {
            scopes.push(name);
        }
    }
    let mut out = format!(
        "{}//! Derived metrics of {} ({} metrics), from the spec's `{}/metrics/`.\n//! Each is `metric(name, unit, category, scope)` and what it has besides, one builder a\n//! fact (`crate::metrics`); a formula is its text and its postfix ops.\n\nuse crate::metrics::{{{}}};\nuse crate::metrics::MetricScope::{{{}}};\nuse crate::metrics::Op::*;\n\n/// Every metric of the processor, in spec order.\npub static METRICS: &[MetricInfo] = &[\n",
        super::rust::HEADER,
        p.name,
        p.metrics.len(),
        p.id,
        uses.join(", "),
        scopes.join(", "),
    );
    for m in &p.metrics {
        metric_literal(m, &mut out);
    }
    out.push_str("];\n");
    Some(out)
}

/// A list of string literals, `&["a", "b"]`.
fn str_slice(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|g| lit(g)).collect();
    format!("&[{}]", items.join(", "))
}

/// One metric of the table: `metric(..)` and its builders, one a line.
fn metric_literal(m: &Metric, out: &mut String) {
    let scope = match m.scope {
        MetricScope::Cpu => "Cpu",
        MetricScope::Socket => "Socket",
    };
    let _ = writeln!(
        out,
        "    metric({}, {}, {}, {scope})",
        lit(&m.name),
        lit(&m.unit),
        lit(&m.category)
    );
    if !m.description.is_empty() {
        let _ = writeln!(out, "        .about({})", lit(&m.description));
    }
    if !m.groups.is_empty() {
        let _ = writeln!(out, "        .in_groups({})", str_slice(&m.groups));
    }
    if m.level != 1 {
        let _ = writeln!(out, "        .at_level({})", m.level);
    }
    if let Some(parent) = &m.parent {
        let _ = writeln!(out, "        .child_of({})", lit(parent));
    }
    if !m.events.is_empty() {
        out.push_str("        .reads(&[\n");
        for e in &m.events {
            let s = e.settings;
            // Most reads are of the core PMU's events: `read_core` names its unit once.
            let mut read = if e.unit == CORE {
                format!("read_core({}, {})", lit(&e.alias), lit(&e.name))
            } else {
                format!(
                    "read({}, {}, {})",
                    lit(&e.alias),
                    lit(&e.name),
                    lit(&e.unit)
                )
            };
            if s.threshold != 0 {
                read.push_str(&format!(".cmask({})", s.threshold));
            }
            if s.invert {
                read.push_str(".inv()");
            }
            if s.edge {
                read.push_str(".edge_detect()");
            }
            if e.read != MetricRead::Counted {
                read.push_str(&format!(".via(MetricRead::{})", read_literal(e.read)));
            }
            let _ = writeln!(out, "            {read},");
        }
        out.push_str("        ])\n");
    }
    let _ = write!(
        out,
        "        .computed_as({}, {})",
        lit(&m.formula),
        ops_literal(&m.expr.postfix())
    );
    if let Some(t) = &m.threshold {
        let metrics: Vec<String> = t.metrics.iter().map(|n| n.to_string()).collect();
        let _ = write!(
            out,
            "\n        .threshold_when({}, {}, {})",
            str_slice(&metrics),
            lit(&t.formula),
            ops_literal(&t.expr.postfix())
        );
    }
    out.push_str(",\n");
}

/// Postfix ops as a slice literal, `&[Num(100.0), Event(0), Div]` (the module imports `Op::*`):
/// on the builder's line where they fit, else one line of at most about 100 columns after
/// another (Intel's longest formula is 1,200 ops).
fn ops_literal(ops: &[Op]) -> String {
    let ops: Vec<String> = ops.iter().map(|op| op_literal(*op)).collect();
    let inline = ops.join(", ");
    if inline.len() <= 60 {
        return format!("&[{inline}]");
    }
    let mut out = String::from("&[");
    let mut line = String::new();
    for op in ops {
        if !line.is_empty() && line.len() + op.len() > 86 {
            let _ = write!(out, "\n            {}", line.trim_end());
            line.clear();
        }
        line.push_str(&op);
        line.push_str(", ");
    }
    let _ = write!(out, "\n            {}\n        ]", line.trim_end());
    out
}

/// A `MetricRead` variant as Rust.
fn read_literal(r: MetricRead) -> String {
    match r {
        MetricRead::Counted => "Counted".into(),
        MetricRead::Slots => "Slots".into(),
        MetricRead::SlotsShare(n) => format!("SlotsShare({n})"),
    }
}

/// An `Op` as Rust.
fn op_literal(op: Op) -> String {
    match op {
        Op::Num(n) => format!("Num({n:?})"),
        Op::Event(i) => format!("Event({i})"),
        Op::Const(c) => format!("Const(Constant::{})", c.variant()),
        Op::Neg => "Neg".into(),
        Op::Bin(b) => b.variant().to_string(),
        Op::Select => "Select".into(),
    }
}
