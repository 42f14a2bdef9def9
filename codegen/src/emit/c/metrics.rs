//! A processor's derived metrics in its C header: per metric its name, unit and events as
//! macros, its formula as `pmu_regs_metric_step` data, and a function that evaluates it with
//! the common header's `pmu_regs_metric_evaluate` (the Rust evaluator's rules, in C).

use std::fmt::Write;

use super::{names, Header};
use crate::model::formula::{BinOp, Constant, Op};
use crate::model::metric::{Metric, MetricEvent, MetricRead, MetricScope};
use crate::model::Processor;

/// Every metric of `p`, after a comment on how to use them.
pub(super) fn emit(h: &mut Header, p: &Processor) {
    if p.metrics.is_empty() {
        return;
    }
    h.out.push('\n');
    h.comment(&format!(
        "Derived metrics of {} ({} metrics, from the spec's {}/metrics/). For each: _NAME, \
         _UNIT, _EVENT_COUNT and _EVENTn (the event names, in the order the counts are \
         given) with _EVENTn_READ (PMU_REGS_READ_COUNTED: a counter's count; _SLOTS and \
         _SLOTS_SHARE: pmu_regs_topdown_count of the top-down registers, the byte in \
         _EVENTn_PERF_METRICS_BYTE), the formula's steps, and a function: pass the events' counts over an \
         interval and the constants (duration_seconds the interval's length; NaN where \
         unknown, see pmu_regs_metric_unknown); it returns 1 and sets *value, or 0 when the \
         metric is n/a.",
        p.name,
        p.metrics.len(),
        p.id
    ));
    for m in &p.metrics {
        metric(h, p, m);
    }
}

/// How the metric's comment lists event `i`: `[0] NAME (unit, threshold 1, edge, ...)`.
fn event_phrase(i: usize, e: &MetricEvent) -> String {
    let s = e.settings;
    let mut extra = Vec::new();
    if s.threshold != 0 {
        extra.push(format!("threshold {}", s.threshold));
    }
    if s.invert {
        extra.push("inverted".to_string());
    }
    if s.edge {
        extra.push("edge".to_string());
    }
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(", {}", extra.join(", "))
    };
    let read = match e.read {
        MetricRead::Counted => String::new(),
        MetricRead::Slots => ", fixed counter 3".to_string(),
        MetricRead::SlotsShare(n) => format!(", IA32_PERF_METRICS byte {n}"),
    };
    format!("[{i}] {} ({}{extra}{read})", e.name, e.unit)
}

fn metric(h: &mut Header, p: &Processor, m: &Metric) {
    let stem = names::metric(&p.module, &m.name);
    let function = names::metric_function(&p.module, &m.name);
    let what = || format!("metric {}", m.name);
    let events: Vec<String> = m
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| event_phrase(i, e))
        .collect();
    h.out.push('\n');
    h.comment(&format!(
        "{} ({}, level {}, per {}): {}\n\nEvents: {}.",
        m.name,
        if m.unit.is_empty() {
            "a ratio"
        } else {
            &m.unit
        },
        m.level,
        match m.scope {
            MetricScope::Cpu => "CPU",
            MetricScope::Socket => "socket",
        },
        m.formula,
        events.join("; ")
    ));
    h.define(&format!("{stem}_NAME"), &c_string(&m.name), &what);
    h.define(&format!("{stem}_UNIT"), &c_string(&m.unit), &what);
    h.define(
        &format!("{stem}_EVENT_COUNT"),
        &format!("{}U", m.events.len()),
        &what,
    );
    for (i, e) in m.events.iter().enumerate() {
        h.define(&format!("{stem}_EVENT{i}"), &c_string(&e.name), &what);
        // Where the count comes from: a counter, or the top-down registers (the count is
        // then pmu_regs_topdown_count of fixed counter 3 and IA32_PERF_METRICS).
        let (read, byte) = match e.read {
            MetricRead::Counted => ("PMU_REGS_READ_COUNTED", None),
            MetricRead::Slots => ("PMU_REGS_READ_SLOTS", None),
            MetricRead::SlotsShare(n) => ("PMU_REGS_READ_SLOTS_SHARE", Some(n)),
        };
        h.define(&format!("{stem}_EVENT{i}_READ"), read, &what);
        if let Some(n) = byte {
            h.define(
                &format!("{stem}_EVENT{i}_PERF_METRICS_BYTE"),
                &format!("{n}U"),
                &what,
            );
        }
    }
    let steps: Vec<String> = m.expr.postfix().into_iter().map(step).collect();
    let steps_name = format!("{function}_steps");
    h.idents.claim(&steps_name, what);
    h.idents.claim(&function, what);
    let _ = write!(
        h.out,
        "static const struct pmu_regs_metric_step {steps_name}[{}] = {{\n\t{}\n}};\n\
         static inline int {function}(const double *counts, const struct pmu_regs_metric_constants *c, double *value)\n\
         {{\n\treturn pmu_regs_metric_evaluate({steps_name}, {}U, counts, {stem}_EVENT_COUNT, c, value);\n}}\n",
        steps.len(),
        steps.join(",\n\t"),
        steps.len()
    );
}

/// One step as a C initializer.
fn step(op: Op) -> String {
    let (name, index, num) = match op {
        Op::Num(n) => ("NUM", 0, n),
        Op::Event(i) => ("EVENT", i, 0.0),
        Op::Const(c) => ("CONST", constant_index(c), 0.0),
        Op::Neg => ("NEG", 0, 0.0),
        Op::Bin(b) => (binary(b), 0, 0.0),
        Op::Select => ("SELECT", 0, 0.0),
    };
    // `{:?}` keeps every digit and a decimal point (1e-6 as 1e-6, 64 as 64.0).
    format!("{{PMU_REGS_OP_{name}, {index}U, {num:?}}}")
}

fn constant_index(c: Constant) -> usize {
    Constant::ALL
        .iter()
        .position(|&x| x == c)
        .expect("every constant is in ALL")
}

fn binary(b: BinOp) -> &'static str {
    match b {
        BinOp::Add => "ADD",
        BinOp::Sub => "SUB",
        BinOp::Mul => "MUL",
        BinOp::Div => "DIV",
        BinOp::Min => "MIN",
        BinOp::Max => "MAX",
        BinOp::Gt => "GT",
        BinOp::Lt => "LT",
        BinOp::Ge => "GE",
        BinOp::Le => "LE",
    }
}

/// `s` as a C string literal.
fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '?' => out.push_str("\\?"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            _ => out.push('_'),
        }
    }
    out.push('"');
    out
}
