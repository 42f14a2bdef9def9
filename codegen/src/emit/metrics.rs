//! Metrics in the generated crate: `src/metrics.rs` (the types and the evaluator, from
//! `codegen/templates/metrics.rs`, with `for_processor`) and each processor's
//! `src/<processor>/metrics.rs` (its `METRICS` table).

use std::fmt::Write;

use super::events::METADATA;
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

/// A processor's `metrics.rs`, or `None` when it has no metrics.
pub fn processor_module(p: &Processor) -> Option<String> {
    if p.metrics.is_empty() {
        return None;
    }
    let reads_constants = p
        .metrics
        .iter()
        .any(|m| m.expr.postfix().iter().any(|op| matches!(op, Op::Const(_))));
    let mut out = format!(
        "{}//! Derived metrics of {} ({} metrics), from the spec's `{}/metrics/`.\n\nuse crate::metrics::{{{}MetricEvent, MetricInfo, MetricRead, MetricScope, Op}};\n\n/// Every metric of the processor, in spec order.\npub static METRICS: &[MetricInfo] = &[\n",
        super::rust::HEADER,
        p.name,
        p.metrics.len(),
        p.id,
        if reads_constants { "Constant, " } else { "" }
    );
    for m in &p.metrics {
        metric_literal(m, &mut out);
    }
    out.push_str("];\n");
    Some(out)
}

/// One `MetricInfo { .. },` entry.
fn metric_literal(m: &Metric, out: &mut String) {
    let groups: Vec<String> = m.groups.iter().map(|g| lit(g)).collect();
    let parent = m
        .parent
        .as_deref()
        .map_or("None".to_string(), |p| format!("Some({})", lit(p)));
    let scope = match m.scope {
        MetricScope::Cpu => "Cpu",
        MetricScope::Socket => "Socket",
    };
    let _ = writeln!(
        out,
        "    MetricInfo {{\n        name: {},\n        {METADATA}\n        description: {},\n        unit: {},\n        category: {},\n        groups: &[{}],\n        level: {},\n        parent: {parent},\n        scope: MetricScope::{scope},",
        lit(&m.name),
        lit(&m.description),
        lit(&m.unit),
        lit(&m.category),
        groups.join(", "),
        m.level,
    );
    out.push_str("        events: &[\n");
    for e in &m.events {
        let s = e.settings;
        let _ = writeln!(
            out,
            "            MetricEvent {{ alias: {}, name: {}, unit: {}, threshold: {}, invert: {}, edge: {}, read: MetricRead::{} }},",
            lit(&e.alias),
            lit(&e.name),
            lit(&e.unit),
            s.threshold,
            s.invert,
            s.edge,
            read_literal(e.read)
        );
    }
    let ops: Vec<String> = m.expr.postfix().into_iter().map(op_literal).collect();
    let (t_metrics, t_ops, t_formula) = match &m.threshold {
        Some(t) => (
            t.metrics.iter().map(|n| lit(n)).collect::<Vec<_>>(),
            t.expr.postfix().into_iter().map(op_literal).collect(),
            t.formula.as_str(),
        ),
        None => (Vec::new(), Vec::new(), ""),
    };
    let _ = writeln!(
        out,
        "        ],\n        {METADATA}\n        formula: {},\n        ops: &[{}],\n        threshold_metrics: &[{}],\n        threshold: &[{}],\n        {METADATA}\n        threshold_formula: {},\n    }},",
        lit(&m.formula),
        ops.join(", "),
        t_metrics.join(", "),
        t_ops.join(", "),
        lit(t_formula)
    );
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
        Op::Num(n) => format!("Op::Num({n:?})"),
        Op::Event(i) => format!("Op::Event({i})"),
        Op::Const(c) => format!("Op::Const(Constant::{})", c.variant()),
        Op::Neg => "Op::Neg".into(),
        Op::Bin(b) => format!("Op::{}", b.variant()),
        Op::Select => "Op::Select".into(),
    }
}
