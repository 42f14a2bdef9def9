//! Metrics files (`<processor>/metrics/*.xml`): each metric's events found in the
//! processor's lists, its formula parsed into a typed expression, names checked.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::model::formula::{self, Constant, Leaf};
use crate::model::metric::{
    Metric, MetricEvent, MetricRead, MetricScope, Threshold, PERF_METRICS_CATEGORIES,
};
use crate::parse::metrics::{RawMetric, RawMetricEvent, RawMetrics};

/// The deepest evaluation stack a formula may need: the generated evaluator's fixed stack.
/// The deepest of Intel's formulas needs far less.
pub const MAX_STACK: usize = 64;

/// Words a formula gives a meaning of its own, which an event alias cannot take.
const RESERVED: [&str; 4] = ["min", "max", "if", "else"];

/// An event of a processor: which unit counts it, and whether that is its core PMU's.
struct Found {
    unit: String,
    core: bool,
}

impl Validator {
    /// Checks a metrics file and adds its metrics to its processor.
    pub(crate) fn metrics(&mut self, file: &SourceFile, raw: &RawMetrics, ctx: &mut SpecContext) {
        let Some(pi) = ctx.processors.iter().position(|p| p.id == raw.processor) else {
            self.push(
                file.error_at(
                    raw.at,
                    format!("metrics for unknown processor `{}`", raw.processor),
                )
                .help("use a processor id from processors.xml"),
            );
            return;
        };
        if !self.metric_source(file, &ctx.catalogue, raw.at, &raw.source) {
            return;
        }
        let path: Arc<std::path::Path> = Arc::from(file.path.as_path());
        let mut taken: HashSet<String> = ctx.processors[pi]
            .metrics
            .iter()
            .map(|m| m.name.clone())
            .collect();
        let mut metrics = Vec::new();
        for m in &raw.metric {
            let source = m.source.as_deref().unwrap_or(&raw.source);
            if m.source.is_some() && !self.metric_source(file, &ctx.catalogue, m.at, source) {
                continue;
            }
            if !taken.insert(m.name.clone()) {
                self.push(
                    file.error_at(m.at, format!("metric {} is declared twice", m.name))
                        .help("each metric of a processor has one name"),
                );
                continue;
            }
            if let Some(mut metric) = self.metric(file, m, &ctx.processors, pi) {
                metric.source = source.to_string();
                metric.at = Position::of(file, &path, m.at);
                metrics.push(metric);
            }
        }
        ctx.processors[pi].metrics.extend(metrics);
    }

    /// A metric file's or metric's `source`: a public source or a document.
    fn metric_source(&mut self, file: &SourceFile, cat: &Catalogue, at: usize, id: &str) -> bool {
        let known = cat.public.contains_key(id) || cat.documents.contains_key(id);
        if !known {
            self.push(
                file.error_at(at, format!("unknown source `{id}`"))
                    .help("public sources and documents are declared in processors.xml"),
            );
        }
        known
    }

    /// One metric: its events, level and formula.
    fn metric(
        &mut self,
        file: &SourceFile,
        m: &RawMetric,
        processors: &[Processor],
        pi: usize,
    ) -> Option<Metric> {
        let err = |at: usize, msg: String, help: &str| {
            file.error_at(at, format!("metric {}: {msg}", m.name))
                .help(help)
        };
        let level = self.metric_name_and_level(file, m)?;
        if m.event.len() > 255 {
            self.push(err(
                m.at,
                format!("{} events; a metric reads at most 255", m.event.len()),
                "split the metric",
            ));
            return None;
        }
        let mut events = Vec::new();
        let mut all_core = true;
        for e in &m.event {
            let (event, core) = self.metric_event(file, m, e, &events, processors, pi)?;
            all_core &= core;
            events.push(event);
        }
        let expr = self.formula(file, m, &events)?;
        self.formula_fits(file, m, &events, &expr)?;
        let threshold = match &m.threshold {
            Some(t) => Some(self.threshold(file, m, t)?),
            None => None,
        };
        Some(Metric {
            name: m.name.clone(),
            description: m
                .description
                .as_deref()
                .map(normalize_text)
                .unwrap_or_default(),
            unit: m.unit.clone(),
            category: m.category.clone(),
            groups: groups(&m.groups),
            level,
            parent: m.parent.clone().filter(|p| !p.is_empty()),
            scope: if all_core && !events.is_empty() {
                MetricScope::Cpu
            } else {
                MetricScope::Socket
            },
            events,
            formula: m.formula.text.trim().to_string(),
            expr,
            threshold,
            source: String::new(),
            at: Position::of(file, &Arc::from(file.path.as_path()), m.at),
        })
    }

    /// A metric's name (letters, digits, `_`) and level (1-9, default 1).
    fn metric_name_and_level(&mut self, file: &SourceFile, m: &RawMetric) -> Option<u8> {
        let err = |msg: String, help: &str| {
            file.error_at(m.at, format!("metric {}: {msg}", m.name))
                .help(help)
        };
        if m.name.is_empty()
            || !m
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.push(err(
                "the name is not letters, digits and `_`".into(),
                "name metrics as Intel does (memory_bandwidth_read, Frontend_Bound)",
            ));
            return None;
        }
        match m.level.as_deref().map(str::parse::<u8>) {
            None => Some(1),
            Some(Ok(l)) if (1..=9).contains(&l) => Some(l),
            Some(_) => {
                self.push(err(
                    format!(
                        "level `{}` is not a number from 1 to 9",
                        m.level.as_deref().unwrap_or("")
                    ),
                    "level is the metric's depth in the top-down hierarchy; 1 outside it",
                ));
                None
            }
        }
    }

    /// Every event is read by the formula, and its evaluation fits the evaluator's stack.
    fn formula_fits(
        &mut self,
        file: &SourceFile,
        m: &RawMetric,
        events: &[MetricEvent],
        expr: &formula::Expr,
    ) -> Option<()> {
        let err = |at: usize, msg: String, help: &str| {
            file.error_at(at, format!("metric {}: {msg}", m.name))
                .help(help)
        };
        let used = expr.events();
        if let Some(unused) = (0..events.len()).find(|i| !used.contains(i)) {
            self.push(err(
                m.event[unused].at,
                format!(
                    "event alias `{}` is not used by the formula",
                    events[unused].alias
                ),
                "remove the event, or use it in the formula",
            ));
            return None;
        }
        if expr.stack_depth() > MAX_STACK {
            self.push(err(
                m.formula.at,
                format!(
                    "the formula needs an evaluation stack {} deep; the evaluator has {MAX_STACK}",
                    expr.stack_depth()
                ),
                "split the formula or raise MAX_STACK in codegen and the evaluator",
            ));
            return None;
        }
        Some(())
    }

    /// One `<event>` of a metric: a fresh alias, an event of the processor, settings only on
    /// a core event.
    fn metric_event(
        &mut self,
        file: &SourceFile,
        m: &RawMetric,
        e: &RawMetricEvent,
        before: &[MetricEvent],
        processors: &[Processor],
        pi: usize,
    ) -> Option<(MetricEvent, bool)> {
        let err = |msg: String, help: String| {
            file.error_at(e.at, format!("metric {}: {msg}", m.name))
                .help(help)
        };
        if !is_identifier(&e.alias)
            || RESERVED.contains(&e.alias.as_str())
            || Constant::from_name(&e.alias).is_some()
            || before.iter().any(|b| b.alias == e.alias)
        {
            self.push(err(
                format!("event alias `{}` is not a fresh name", e.alias),
                "an alias is a letter then letters, digits or `_`, given once, and not min, max, if, else or a constant's name".into(),
            ));
            return None;
        }
        if let Some(found) = self.topdown_event(file, m, e, &processors[pi]) {
            return found;
        }
        let Some(found) = find_event(&processors[pi], &e.name) else {
            self.push(err(
                format!(
                    "event `{}` is not in any events list of {}",
                    e.name, processors[pi].id
                ),
                format!(
                    "check the name against spec/{}/events/ (a fixed-counter event has a general-counter twin: INST_RETIRED.ANY_P, CPU_CLK_UNHALTED.THREAD_P)",
                    processors[pi].id
                ),
            ));
            return None;
        };
        // A metric event has no `any-thread`: the attribute is not in its schema.
        let written = SettingsText {
            threshold: e.threshold.as_deref(),
            invert: e.invert.as_deref(),
            edge: e.edge.as_deref(),
            any_thread: None,
        };
        let settings = match event_settings(&written) {
            Ok(s) => s,
            Err(msg) => {
                self.push(err(
                    msg,
                    "threshold is a number (0-255); invert and edge are 0 or 1".into(),
                ));
                return None;
            }
        };
        if !settings.is_none() && !found.core {
            self.push(err(
                format!("event `{}` is an uncore event; only core events take threshold, invert or edge here", e.name),
                "remove the settings, or name a core event".into(),
            ));
            return None;
        }
        Some((
            MetricEvent {
                alias: e.alias.clone(),
                name: e.name.clone(),
                unit: found.unit,
                settings,
                read: MetricRead::Counted,
            },
            found.core,
        ))
    }

    /// An event read from the top-down registers (`TOPDOWN.SLOTS`, `PERF_METRICS.*`):
    /// `None` when `e` names another event; else the event, or `Some(None)` after an error
    /// (a processor whose core lacks the registers, a share it does not report, an unknown
    /// category, settings on such an event).
    #[allow(clippy::option_option)]
    fn topdown_event(
        &mut self,
        file: &SourceFile,
        m: &RawMetric,
        e: &RawMetricEvent,
        p: &Processor,
    ) -> Option<Option<(MetricEvent, bool)>> {
        let topdown = e.name == "TOPDOWN.SLOTS" || e.name.starts_with("PERF_METRICS.");
        if !topdown {
            return None;
        }
        let err = |msg: String, help: String| {
            file.error_at(e.at, format!("metric {}: {msg}", m.name))
                .help(help)
        };
        let read = MetricRead::from_event_name(&e.name);
        let reported = match read {
            Some(MetricRead::SlotsShare(n)) => n < p.topdown_metrics,
            _ => p.topdown_metrics > 0,
        };
        let problem = match read {
            None => Some((
                format!("`{}` is not a category of IA32_PERF_METRICS", e.name),
                format!("the categories are PERF_METRICS.{{{}}}", PERF_METRICS_CATEGORIES.join(",")),
            )),
            Some(_) if p.topdown_metrics == 0 => Some((
                format!("event `{}` is read from IA32_PERF_METRICS or fixed counter 3, which the core of {} lacks", e.name, p.id),
                "only processors with topdown-metrics in processors.xml (Ice Lake-SP and later) have them; use general-counter events".into(),
            )),
            Some(_) if !reported => Some((
                format!("event `{}` is a level-2 share, and the IA32_PERF_METRICS of {} reports only {} shares", e.name, p.id, p.topdown_metrics),
                "level-2 shares come with Sapphire Rapids (topdown-metrics=\"8\")".into(),
            )),
            Some(_) if e.threshold.is_some() || e.invert.is_some() || e.edge.is_some() => Some((
                format!("event `{}` is read from a register; it takes no threshold, invert or edge", e.name),
                "remove the settings".into(),
            )),
            _ => None,
        };
        if let Some((msg, help)) = problem {
            self.push(err(msg, help));
            return Some(None);
        }
        let unit = p
            .core_events
            .as_ref()
            .map_or("CORE".to_string(), |c| c.unit.clone());
        Some(Some((
            MetricEvent {
                alias: e.alias.clone(),
                name: e.name.clone(),
                unit,
                settings: EventSettings::default(),
                read: read.unwrap_or(MetricRead::Counted),
            },
            true,
        )))
    }

    /// The formula parsed with the metric's aliases and the constants; an error points at
    /// the place in the file.
    fn formula(
        &mut self,
        file: &SourceFile,
        m: &RawMetric,
        events: &[MetricEvent],
    ) -> Option<formula::Expr> {
        let aliases: HashMap<&str, usize> = events
            .iter()
            .enumerate()
            .map(|(i, e)| (e.alias.as_str(), i))
            .collect();
        let resolve = |name: &str| {
            aliases
                .get(name)
                .map(|i| Leaf::Event(*i))
                .or_else(|| Constant::from_name(name).map(Leaf::Const))
        };
        match formula::parse(&m.formula.text, &resolve) {
            Ok(e) => Some(e),
            Err(fe) => {
                let at = formula_offset(file, m.formula.at, &m.formula.text, fe.offset);
                self.push(
                    file.error_at(at, format!("metric {}: formula: {}", m.name, fe.message))
                        .help(format!(
                            "a formula is numbers, the metric's event aliases ({}), constants ({}), + - * /, min(..), max(..), comparisons and `x if cond else y`",
                            events.iter().map(|e| e.alias.as_str()).collect::<Vec<_>>().join(", "),
                            Constant::ALL.map(|c| c.name()).join(", ")
                        )),
                );
                None
            }
        }
    }

    /// A metric's threshold: a condition over metrics, each by its name (checked to be a
    /// metric of the processor once all files are read, in `metric_parents`).
    fn threshold(
        &mut self,
        file: &SourceFile,
        m: &RawMetric,
        raw: &crate::parse::metrics::RawFormula,
    ) -> Option<Threshold> {
        let seen = std::cell::RefCell::new(Vec::<String>::new());
        let resolve = |name: &str| {
            if let Some(c) = Constant::from_name(name) {
                return Some(Leaf::Const(c));
            }
            if RESERVED.contains(&name)
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return None;
            }
            let mut seen = seen.borrow_mut();
            let i = seen.iter().position(|s| s == name).unwrap_or_else(|| {
                seen.push(name.to_string());
                seen.len() - 1
            });
            Some(Leaf::Event(i))
        };
        match formula::parse(&raw.text, &resolve) {
            Ok(expr) => Some(Threshold {
                formula: raw.text.trim().to_string(),
                metrics: seen.into_inner(),
                expr,
            }),
            Err(fe) => {
                let at = formula_offset(file, raw.at, &raw.text, fe.offset);
                self.push(
                    file.error_at(at, format!("metric {}: threshold: {}", m.name, fe.message))
                        .help("a threshold is a condition over metrics of the processor, by name: numbers, + - * /, min(..) for both, max(..) for either, comparisons"),
                );
                None
            }
        }
    }

    /// Every metric's `parent` and the metrics its threshold reads name metrics of its
    /// processor (run once all files are read).
    pub(crate) fn metric_parents(&mut self, processors: &[Processor]) {
        for p in processors {
            let names: HashSet<&str> = p.metrics.iter().map(|m| m.name.as_str()).collect();
            for m in &p.metrics {
                let unknown = m
                    .threshold
                    .iter()
                    .flat_map(|t| &t.metrics)
                    .find(|x| !names.contains(x.as_str()));
                if let Some(x) = unknown {
                    self.push(
                        Diagnostic {
                            path: m.at.path.to_path_buf(),
                            line: m.at.line,
                            column: m.at.column,
                            message: format!(
                                "metric {}: threshold reads `{x}`, which is not a metric of {}",
                                m.name, p.id
                            ),
                            help: None,
                        }
                        .help("name metrics of the same processor in a threshold"),
                    );
                }
                if let Some(parent) = m.parent.as_deref().filter(|x| !names.contains(x)) {
                    self.push(
                        Diagnostic {
                            path: m.at.path.to_path_buf(),
                            line: m.at.line,
                            column: m.at.column,
                            message: format!(
                                "metric {}: parent `{parent}` is not a metric of {}",
                                m.name, p.id
                            ),
                            help: None,
                        }
                        .help("name a metric of the same processor, or leave parent out"),
                    );
                }
            }
        }
    }
}

/// `groups="A;B"` as a list, each once.
fn groups(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in text.split(';').map(str::trim).filter(|g| !g.is_empty()) {
        if !out.iter().any(|o| o == g) {
            out.push(g.to_string());
        }
    }
    out
}

/// The unit of `processor` (or of its core PMU) whose list has event `name`.
fn find_event(p: &Processor, name: &str) -> Option<Found> {
    if let Some(u) = p
        .units
        .iter()
        .find(|u| u.events.iter().any(|e| e.name == name))
    {
        return Some(Found {
            unit: u.name.clone(),
            core: u
                .pmu
                .as_ref()
                .is_some_and(|x| x.scope == crate::model::pmu::Scope::Cpu),
        });
    }
    let core = p.core_events.as_ref()?;
    core.events.iter().any(|e| e.name == name).then(|| Found {
        unit: core.unit.clone(),
        core: true,
    })
}

/// The file offset of byte `offset` of a formula's text, whose element starts at `tag`: the
/// text follows the start tag, with `&lt;`-style entities standing for one character each.
fn formula_offset(file: &SourceFile, tag: usize, text: &str, offset: usize) -> usize {
    let src = file.text.as_str();
    let Some(open_end) = src.get(tag..).and_then(|s| s.find('>')) else {
        return tag;
    };
    let mut at = tag + open_end + 1;
    // The parsed text may have lost leading whitespace.
    if !text.starts_with(char::is_whitespace) {
        while src[at..].starts_with(char::is_whitespace) {
            at += src[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    let mut seen = 0;
    while seen < offset && at < src.len() {
        let rest = &src[at..];
        let (raw, cooked) = if rest.starts_with('&') {
            (rest.find(';').map_or(1, |i| i + 1), 1)
        } else {
            let c = rest.chars().next().map_or(1, char::len_utf8);
            (c, c)
        };
        at += raw;
        seen += cooked;
    }
    at
}
