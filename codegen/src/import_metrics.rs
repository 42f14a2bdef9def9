//! `cargo run -p codegen -- import-metrics FILE`: Intel's public perfmon metric list (JSON,
//! `*_metrics.json`) to `spec/<processor>/metrics/intel.xml`.
//!
//! Facts only: each metric's name, unit, category, groups, top-down level and parent, its
//! events and constants, and its formula, which is parsed here with the same parser the
//! validator uses and written back in our canonical form (constants by name, the fewest
//! parentheses). Intel's descriptions are not copied. A record the spec cannot express is
//! reported with its reason and left out: an event missing from the processor's lists, an
//! event modifier other than a counter mask, invert or edge (`:c1`, `:i1`, `:e1`) such as a
//! box filter (`:opc=`, `:filter1=`), an unknown constant, or a formula that does not parse.
//! The fixed-counter events (`INST_RETIRED.ANY`, `CPU_CLK_UNHALTED.THREAD`,
//! `CPU_CLK_UNHALTED.THREAD_ANY`) are counted through their general-counter twins, which
//! count the same (SDM Vol. 3B, 18.2.1, the architectural events 0x3C and 0xC0). An event
//! under a name Intel has deprecated (`UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0`) is read as
//! the event its lists now name for the same encoding (`UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0`):
//! the event lists beside the metric file (`X_core.json`, `X_uncore.json`,
//! `X_uncore_experimental.json`) give the old names (`import::deprecated_names`). The new file
//! is validated with the rest of the spec, in memory, before it is written, and its header
//! records the import's counts (`counts_comment`), which docs/metrics.md quotes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::import::ImportError;
use crate::model::formula::{self, Constant, Leaf};
use crate::model::metric::PERF_METRICS_CATEGORIES;
use crate::model::Spec;

/// The source every imported metric cites (declared in processors.xml).
pub const SOURCE: &str = "intel-perfmon-metrics";

/// Fixed-counter events and the general-counter event that counts the same. The E-core lists
/// (Sierra and Clearwater Forest) name fixed counter 1 `CPU_CLK_UNHALTED.CORE` ("alias to
/// CPU_CLK_UNHALTED.THREAD") and its general-counter form `CPU_CLK_UNHALTED.CORE_P` ("alias to
/// CPU_CLK_UNHALTED.THREAD_P"). `CPU_CLK_UNHALTED.REF_TSC` (fixed counter 2) has no twin
/// (docs/metrics.md).
const FIXED_TWINS: [(&str, &str); 4] = [
    ("INST_RETIRED.ANY", "INST_RETIRED.ANY_P"),
    ("CPU_CLK_UNHALTED.THREAD", "CPU_CLK_UNHALTED.THREAD_P"),
    ("CPU_CLK_UNHALTED.CORE", "CPU_CLK_UNHALTED.CORE_P"),
    (
        "CPU_CLK_UNHALTED.THREAD_ANY",
        "CPU_CLK_UNHALTED.THREAD_P_ANY",
    ),
];

/// Intel's spelling of "every logical CPU of the system".
const CPU_COUNT_EXPR: &str = "system.sockets[0].cpus.count * system.socket_count";

#[derive(Debug, Deserialize)]
struct MetricsFile {
    #[serde(rename = "Metrics")]
    metrics: Vec<IntelMetric>,
}

#[derive(Debug, Deserialize)]
struct IntelMetric {
    #[serde(rename = "MetricName")]
    name: String,
    #[serde(rename = "Level", default)]
    level: Option<u32>,
    #[serde(rename = "UnitOfMeasure", default)]
    unit: String,
    #[serde(rename = "CountDomain", default)]
    count_domain: String,
    #[serde(rename = "Category", default)]
    category: String,
    #[serde(rename = "MetricGroup", default)]
    groups: String,
    #[serde(rename = "ParentCategory", default)]
    parent: Option<String>,
    #[serde(rename = "Events", default)]
    events: Vec<Named>,
    #[serde(rename = "Constants", default)]
    constants: Vec<Named>,
    #[serde(rename = "Formula")]
    formula: String,
    #[serde(rename = "LegacyName", default)]
    legacy_name: String,
    #[serde(rename = "Threshold", default)]
    threshold: Option<IntelThreshold>,
}

/// Intel's `Threshold`: a condition on metrics (`a > 15`, `( a > 10 ) & ( b > 15 )`), each
/// alias standing for a metric by its `LegacyName`; the Sierra Forest file writes the legacy
/// names into the formula itself, with `&&`.
#[derive(Debug, Deserialize)]
struct IntelThreshold {
    #[serde(rename = "Formula", default)]
    formula: String,
    #[serde(rename = "ThresholdMetrics", default)]
    metrics: Vec<ThresholdMetric>,
}

#[derive(Debug, Deserialize)]
struct ThresholdMetric {
    #[serde(rename = "Alias")]
    alias: String,
    #[serde(rename = "Value")]
    value: String,
}

#[derive(Debug, Deserialize)]
struct Named {
    #[serde(rename = "Alias")]
    alias: String,
    #[serde(rename = "Name")]
    name: String,
}

/// What an import did.
#[derive(Debug, Default)]
pub struct MetricsReport {
    /// The processor.
    pub processor: String,
    /// Records in Intel's file.
    pub records: usize,
    /// Metrics imported.
    pub imported: usize,
    /// Records left out: (metric, why).
    pub refused: Vec<(String, String)>,
    /// Imported metrics whose parent was left out, so their `parent` is too.
    pub orphans: Vec<String>,
    /// Deprecated event names read as their current ones: (old, current) and how many
    /// imported metrics read it.
    pub renamed: BTreeMap<(String, String), usize>,
    /// Imported metrics with Intel's threshold.
    pub thresholds: usize,
    /// Imported metrics whose threshold was left out: (metric, why).
    pub thresholds_left_out: Vec<(String, String)>,
    /// The file written.
    pub written: Option<PathBuf>,
}

impl MetricsReport {
    /// The report as the command prints it: counts, then every record left out and why.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let share = if self.records == 0 {
            0.0
        } else {
            100.0 * self.imported as f64 / self.records as f64
        };
        let _ = writeln!(
            out,
            "{}: imported {} of {} metrics ({share:.0} %)",
            self.processor, self.imported, self.records
        );
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, why) in &self.refused {
            *kinds.entry(reason_kind(why)).or_default() += 1;
        }
        for (kind, n) in &kinds {
            let _ = writeln!(out, "  {n} left out: {kind}");
        }
        for ((old, new), n) in &self.renamed {
            let _ = writeln!(
                out,
                "  {old}, a name Intel deprecated, read as {new} ({n} metrics)"
            );
        }
        for (name, why) in &self.refused {
            let _ = writeln!(out, "  - {name}: {why}");
        }
        if !self.orphans.is_empty() {
            let _ = writeln!(
                out,
                "  parent left out (it was not imported): {}",
                self.orphans.join(", ")
            );
        }
        let _ = writeln!(out, "  {} thresholds imported", self.thresholds);
        for (name, why) in &self.thresholds_left_out {
            let _ = writeln!(out, "  - threshold of {name} left out: {why}");
        }
        if let Some(p) = &self.written {
            let _ = writeln!(out, "wrote {}", p.display());
        }
        out
    }
}

/// The kinds of refusal: a short key (the intel.xml header's, which docs/metrics.md's table
/// quotes) and the summary line's words.
const REASON_KINDS: [(&str, &str); 6] = [
    ("modifier", "an event needs a modifier a metric cannot express (box filter, umask override, privilege level, one box)"),
    ("top-down", "an event is read from the top-down registers (IA32_PERF_METRICS and fixed counter 3), which this processor's core does not report"),
    ("not-in-lists", "an event is not in the processor's event lists"),
    ("constant", "an unknown constant"),
    ("twice", "a name given twice"),
    ("formula", "the formula does not parse"),
];

/// The kind of a refusal (an entry of [`REASON_KINDS`]).
fn kind_of(why: &str) -> (&'static str, &'static str) {
    let key = if why.contains("modifier") {
        "modifier"
    } else if why.contains("IA32_PERF_METRICS") {
        "top-down"
    } else if why.contains("not in the processor's event lists") {
        "not-in-lists"
    } else if why.contains("constant") {
        "constant"
    } else if why.contains("twice") {
        "twice"
    } else {
        "formula"
    };
    *REASON_KINDS
        .iter()
        .find(|(k, _)| *k == key)
        .expect("every key is listed")
}

/// The kind of a refusal, for the summary lines.
fn reason_kind(why: &str) -> &'static str {
    kind_of(why).1
}

/// The counts of an import as the metrics file's header records them:
/// `records 260, imported 222, not-in-lists 20, modifier 18` (the kinds in
/// `REASON_KINDS` order, those with none left out).
pub fn counts_comment(report: &MetricsReport) -> String {
    let mut out = format!("records {}, imported {}", report.records, report.imported);
    for (key, _) in REASON_KINDS {
        let n = report
            .refused
            .iter()
            .filter(|(_, why)| kind_of(why).0 == key)
            .count();
        if n > 0 {
            let _ = write!(out, ", {key} {n}");
        }
    }
    out
}

/// An imported metric, ready to write.
struct Imported {
    name: String,
    unit: String,
    category: String,
    groups: String,
    level: u32,
    parent: Option<String>,
    /// (alias, event name, settings as attributes)
    events: Vec<(String, String, String)>,
    formula: String,
    /// Intel's threshold over metric names (`threshold_of`), if any.
    threshold: Option<String>,
}

/// The event names a processor's metrics may read: core events (which take a metric's
/// threshold, invert and edge) and uncore events (which do not).
#[derive(Debug, Default)]
struct KnownEvents {
    core: HashSet<String>,
    uncore: HashSet<String>,
}

impl KnownEvents {
    fn contains(&self, name: &str) -> bool {
        self.core.contains(name) || self.uncore.contains(name)
    }
}

/// The event names of `processor`: its core list and the top-down registers' events its
/// core reports (`TOPDOWN.SLOTS` and the first `topdown-metrics` categories of
/// `PERF_METRICS.*`), and its units' lists.
fn event_names(spec: &Spec, processor: &str) -> KnownEvents {
    let Some(p) = spec.processors.iter().find(|p| p.id == processor) else {
        return KnownEvents::default();
    };
    let names = |events: &mut dyn Iterator<Item = &crate::model::Event>| {
        events.map(|e| e.name.clone()).collect::<HashSet<String>>()
    };
    let mut core = names(&mut p.core_events.iter().flat_map(|c| c.events.iter()));
    if p.topdown_metrics > 0 {
        core.insert("TOPDOWN.SLOTS".into());
        let shares = PERF_METRICS_CATEGORIES
            .iter()
            .take(p.topdown_metrics.into());
        core.extend(shares.map(|c| format!("PERF_METRICS.{c}")));
    }
    let uncore = names(&mut p.units.iter().flat_map(|u| u.events.iter()));
    KnownEvents { core, uncore }
}

/// Intel's deprecated event names and their current ones (`import::deprecated_names`).
pub type Renames = BTreeMap<String, String>;

/// An Intel event reference (`UOPS_EXECUTED.CORE:c1`) as our event name and settings
/// attributes, or why not. A deprecated name the lists lack is read as its current name.
fn map_event(
    name: &str,
    known: &KnownEvents,
    renames: &Renames,
) -> Result<(String, String), String> {
    let mut parts = name.split(':');
    let written = parts.next().unwrap_or_default();
    let base = FIXED_TWINS
        .iter()
        .find(|(fixed, _)| *fixed == written)
        .map_or(written, |(_, twin)| twin);
    let base = match renames.get(base) {
        Some(current) if !known.contains(base) => current.as_str(),
        _ => base,
    };
    if !known.contains(base) {
        return Err(if is_top_down_register(base) {
            format!(
                "event {name} is read from IA32_PERF_METRICS (MSR 0x329: each top-down class's \
                 share of the slots) or fixed counter 3 (TOPDOWN.SLOTS), which this processor's \
                 core does not report (processors.xml's topdown-metrics)"
            )
        } else if base != written && renames.contains_key(written) {
            format!(
                "event {base} (what Intel now calls {written}) is not in the processor's event lists"
            )
        } else {
            format!("event {base} is not in the processor's event lists")
        });
    }
    let mut attrs = String::new();
    for m in parts {
        let setting = m
            .strip_prefix('c')
            .and_then(|n| n.parse::<u8>().ok())
            .map(|n| format!(" threshold=\"{n}\""))
            .or_else(|| (m == "e1").then(|| " edge=\"1\"".to_string()))
            .or_else(|| (m == "i1").then(|| " invert=\"1\"".to_string()))
            // The slots of the top-down group: fixed counter 3 itself, which is what our
            // TOPDOWN.SLOTS reads.
            .or_else(|| (m == "perf_metrics" && base == "TOPDOWN.SLOTS").then(String::new));
        match setting {
            // Only a core event takes a metric's settings (validate::metrics).
            Some(s) if !s.is_empty() && !known.core.contains(base) => {
                return Err(format!(
                    "event {name} needs the modifier `{m}` on an uncore event, which a metric \
                     cannot express (only core events take a threshold, invert or edge there)"
                ))
            }
            Some(s) => attrs.push_str(&s),
            None => {
                return Err(format!(
                    "event {name} needs the modifier `{m}`, which a metric cannot express yet"
                ))
            }
        }
    }
    Ok((base.to_string(), attrs))
}

/// Whether Intel's event `name` is one the top-down registers of Ice Lake and later give
/// rather than a general counter: a `PERF_METRICS.*` share, or `TOPDOWN.SLOTS` (fixed counter 3).
fn is_top_down_register(name: &str) -> bool {
    name.starts_with("PERF_METRICS.") || name == "TOPDOWN.SLOTS"
}

/// A metric's unit and formula as the spec writes them. Intel's top-down records
/// (`Info_System_*`) give their unit in `CountDomain` (`MB/sec`, `GB/sec`) and leave
/// `UnitOfMeasure` empty; where that unit is a rate and the formula reads no interval
/// (`Info_System_UPI_Data_Transmit_BW`: `a * 64 / 9 / 1000000`, a count in MB), Intel's
/// tools divide by the interval themselves, and the same file's `upi_data_transmit_bw`
/// writes that division (`/ DURATIONTIMEINSECONDS`), so the importer writes it too: the
/// value is then a rate whatever the interval's length (docs/metrics.md).
fn unit_and_formula(m: &IntelMetric) -> (String, String) {
    let rate = m.count_domain.ends_with("/sec");
    let unit = if m.unit.is_empty() && rate {
        m.count_domain.clone()
    } else {
        m.unit.clone()
    };
    let reads_interval = m.formula.to_ascii_uppercase().contains("DURATIONTIME")
        || m.constants
            .iter()
            .any(|c| c.name.to_ascii_uppercase().contains("DURATIONTIME"));
    let formula = if rate && !reads_interval {
        format!("({}) / DURATIONTIMEINSECONDS", m.formula)
    } else {
        m.formula.clone()
    };
    (unit, formula)
}

/// One record, mapped, or why not.
fn map_metric(m: &IntelMetric, known: &KnownEvents, renames: &Renames) -> Result<Imported, String> {
    let (unit, formula) = unit_and_formula(m);
    let mut events = Vec::new();
    let mut leaves: HashMap<String, Leaf> = HashMap::new();
    for (i, e) in m.events.iter().enumerate() {
        let (name, attrs) = map_event(&e.name, known, renames)?;
        events.push((e.alias.clone(), name, attrs));
        leaves.insert(e.alias.clone(), Leaf::Event(i));
    }
    for c in &m.constants {
        let leaf = if let Ok(n) = c.name.trim().parse::<f64>() {
            Leaf::Num(n)
        } else if c.name == CPU_COUNT_EXPR {
            Leaf::Const(Constant::CpuCount)
        } else {
            Leaf::Const(
                Constant::from_name(&c.name)
                    .ok_or_else(|| format!("unknown constant `{}`", c.name))?,
            )
        };
        leaves.insert(c.alias.clone(), leaf);
    }
    let resolve = |name: &str| {
        leaves
            .get(name)
            .copied()
            .or_else(|| Constant::from_name(name).map(Leaf::Const))
    };
    let expr = formula::parse(&formula, &resolve).map_err(|e| {
        let what = if e.message.contains("neither") {
            format!("{} (an unknown constant or name)", e.message)
        } else {
            e.message
        };
        format!("formula: {what} at offset {}", e.offset)
    })?;
    // Only the events the formula reads, renumbered in their order.
    let used = expr.events();
    let events: Vec<_> = used.iter().map(|i| events[*i].clone()).collect();
    let names: Vec<String> = {
        let mut by_index = vec![String::new(); m.events.len()];
        for i in &used {
            by_index[*i] = m.events[*i].alias.clone();
        }
        by_index
    };
    Ok(Imported {
        name: m.name.clone(),
        unit,
        category: m.category.clone(),
        groups: m.groups.clone(),
        level: m.level.unwrap_or(1).max(1),
        parent: m.parent.clone().filter(|p| !p.is_empty()),
        events,
        formula: expr.display(&names).to_string(),
        threshold: None,
    })
}

/// The top-level parts of `text` split at `op` (`&` or `|`, doubled or not), outside
/// parentheses.
fn split_top(text: &str, op: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0i32;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c == op && depth == 0 {
            if chars.peek() == Some(&op) {
                chars.next();
            }
            parts.push(String::new());
        } else {
            parts.last_mut().expect("one part at least").push(c);
        }
    }
    parts.into_iter().map(|p| p.trim().to_string()).collect()
}

/// Whether `text` is one parenthesized expression: `( a > 10 )`, not `( a ) & ( b )`.
fn parenthesized(text: &str) -> bool {
    if !(text.starts_with('(') && text.ends_with(')')) {
        return false;
    }
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 && i + 1 < text.len() {
            return false;
        }
    }
    true
}

/// A threshold condition in the spec's formula language: Intel's `x | y` (either) as
/// `max(x, y)` and `x & y` (both) as `min(x, y)`, which is the same on comparisons (1 or 0);
/// `|` binds loosest, then `&`, then the comparisons, as Intel's conditions mean them.
fn logic(text: &str) -> String {
    let text = text.trim();
    if parenthesized(text) {
        return logic(&text[1..text.len() - 1]);
    }
    for (op, f) in [('|', "max"), ('&', "min")] {
        let parts = split_top(text, op);
        if parts.len() > 1 {
            let parts: Vec<String> = parts.iter().map(|p| logic(p)).collect();
            return format!("{f}({})", parts.join(", "));
        }
    }
    text.to_string()
}

/// `m`'s threshold over the imported metrics' names (`min(Fetch_Latency > 10,
/// Frontend_Bound > 15)`), or why it is left out. `legacy` maps Intel's legacy names
/// (`metric_TMA_..Fetch_Latency(%)`) to metric names; `kept` are the imported metrics.
fn threshold_of(
    m: &IntelMetric,
    legacy: &HashMap<String, String>,
    kept: &HashSet<String>,
) -> Result<Option<String>, String> {
    let Some(t) = m
        .threshold
        .as_ref()
        .filter(|t| !t.formula.trim().is_empty())
    else {
        return Ok(None);
    };
    let mut text = t.formula.clone();
    // Legacy names written into the formula (Sierra Forest), the longest first.
    let mut inline: Vec<(&String, &String)> = legacy
        .iter()
        .filter(|(l, _)| t.formula.contains(l.as_str()))
        .collect();
    inline.sort_by_key(|(l, _)| std::cmp::Reverse(l.len()));
    for (l, name) in inline {
        text = text.replace(l.as_str(), name);
    }
    let mut names: HashMap<&str, &str> = HashMap::new();
    for tm in &t.metrics {
        let name = legacy
            .get(&tm.value)
            .ok_or_else(|| format!("it reads {}, which is not a metric of the file", tm.value))?;
        names.insert(tm.alias.as_str(), name.as_str());
    }
    let logical = logic(&text);
    let mut refs: Vec<String> = Vec::new();
    // Written back with each metric by its name.
    let mut word = String::new();
    let mut out = String::new();
    let flush = |word: &mut String, out: &mut String, refs: &mut Vec<String>| {
        if !word.is_empty() {
            let name = names
                .get(word.as_str())
                .map_or(word.clone(), |n| (*n).to_string());
            if kept.contains(&name) && !refs.contains(&name) {
                refs.push(name.clone());
            }
            out.push_str(&name);
            word.clear();
        }
    };
    for c in logical.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || (c == '.' && !word.is_empty()) {
            word.push(c);
        } else {
            flush(&mut word, &mut out, &mut refs);
            out.push(c);
        }
    }
    flush(&mut word, &mut out, &mut refs);
    canonical_threshold(&out, &refs)
        .map(Some)
        .map_err(|e| format!("{e} (a metric it reads was not imported)"))
}

/// A threshold in the canonical form (the fewest parentheses), its metrics by name.
fn canonical_threshold(text: &str, refs: &[String]) -> Result<String, String> {
    let resolve = |name: &str| refs.iter().position(|r| r == name).map(Leaf::Event);
    let expr = formula::parse(text, &resolve).map_err(|e| format!("`{text}`: {}", e.message))?;
    Ok(expr.display(refs).to_string())
}

/// `&`, `<`, `>` and `"` escaped for XML text and attributes.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The metrics file's text; `counts` is the import's [`counts_comment`].
fn file_text(processor: &str, metrics: &[Imported], counts: &str) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Written by codegen's import-metrics command from Intel's perfmon metric list: facts only. -->\n");
    let _ = writeln!(out, "<!-- import-metrics: {counts} -->");
    let _ = writeln!(
        out,
        "<metrics processor=\"{processor}\" source=\"{SOURCE}\">"
    );
    for m in metrics {
        let _ = write!(out, "  <metric name=\"{}\"", xml(&m.name));
        for (attr, v) in [
            ("unit", &m.unit),
            ("category", &m.category),
            ("groups", &m.groups),
        ] {
            if !v.is_empty() {
                let _ = write!(out, " {attr}=\"{}\"", xml(v));
            }
        }
        if m.level != 1 {
            let _ = write!(out, " level=\"{}\"", m.level);
        }
        if let Some(p) = &m.parent {
            let _ = write!(out, " parent=\"{}\"", xml(p));
        }
        out.push_str(">\n");
        for (alias, name, attrs) in &m.events {
            let _ = writeln!(
                out,
                "    <event alias=\"{alias}\" name=\"{}\"{attrs}/>",
                xml(name)
            );
        }
        let _ = writeln!(out, "    <formula>{}</formula>", xml(&m.formula));
        if let Some(t) = &m.threshold {
            let _ = writeln!(out, "    <threshold>{}</threshold>", xml(t));
        }
        out.push_str("  </metric>\n");
    }
    out.push_str("</metrics>\n");
    out
}

/// The file's metrics mapped onto `spec`'s processor, reading deprecated event names through
/// `renames`: the report and the file's text.
pub fn plan(
    text: &str,
    spec: &Spec,
    processor: &str,
    renames: &Renames,
) -> Result<(MetricsReport, String), String> {
    let file: MetricsFile =
        serde_json::from_str(text).map_err(|e| format!("not an Intel metrics file: {e}"))?;
    let known = event_names(spec, processor);
    let mut report = MetricsReport {
        processor: processor.to_string(),
        records: file.metrics.len(),
        ..MetricsReport::default()
    };
    let mut imported: Vec<Imported> = Vec::new();
    let mut names = HashSet::new();
    for m in &file.metrics {
        if !names.insert(m.name.clone()) {
            report
                .refused
                .push((m.name.clone(), "the name is given twice".into()));
            continue;
        }
        match map_metric(m, &known, renames) {
            Ok(i) => {
                for e in &m.events {
                    let base = e.name.split(':').next().unwrap_or_default();
                    if let Some(new) = renames.get(base).filter(|_| !known.contains(base)) {
                        *report
                            .renamed
                            .entry((base.to_string(), new.clone()))
                            .or_default() += 1;
                    }
                }
                imported.push(i);
            }
            Err(why) => report.refused.push((m.name.clone(), why)),
        }
    }
    let kept: HashSet<String> = imported.iter().map(|m| m.name.clone()).collect();
    thresholds(&file.metrics, &mut imported, &kept, &mut report);
    for m in &mut imported {
        if m.parent.as_ref().is_some_and(|p| !kept.contains(p)) {
            report.orphans.push(m.name.clone());
            m.parent = None;
        }
    }
    report.imported = imported.len();
    let text = file_text(processor, &imported, &counts_comment(&report));
    Ok((report, text))
}

/// Each imported metric's threshold (`threshold_of`), counted in `report`.
fn thresholds(
    records: &[IntelMetric],
    imported: &mut [Imported],
    kept: &HashSet<String>,
    report: &mut MetricsReport,
) {
    let legacy: HashMap<String, String> = records
        .iter()
        .filter(|m| !m.legacy_name.is_empty())
        .map(|m| (m.legacy_name.clone(), m.name.clone()))
        .collect();
    for m in imported.iter_mut() {
        let Some(record) = records.iter().find(|r| r.name == m.name) else {
            continue;
        };
        match threshold_of(record, &legacy, kept) {
            Ok(t) => {
                report.thresholds += usize::from(t.is_some());
                m.threshold = t;
            }
            Err(why) => report.thresholds_left_out.push((m.name.clone(), why)),
        }
    }
}

/// The deprecated names of the event lists beside Intel's metric file `file`
/// (`skylakex_metrics.json`: `skylakex_core.json`, `skylakex_uncore.json` and
/// `skylakex_uncore_experimental.json`, those that are there).
fn renames_beside(file: &Path) -> Result<Renames, ImportError> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(prefix) = name.strip_suffix("_metrics.json") else {
        return Ok(Renames::new());
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut lists = Vec::new();
    for kind in ["core", "uncore", "uncore_experimental"] {
        let path = dir.join(format!("{prefix}_{kind}.json"));
        if path.is_file() {
            let text = crate::import::read_list_file(&path)?;
            lists.push((path.display().to_string(), text));
        }
    }
    if lists.is_empty() {
        return Ok(Renames::new());
    }
    let texts: Vec<crate::import::ListText> = lists
        .iter()
        .map(|(path, text)| crate::import::ListText { text, path })
        .collect();
    crate::import::deprecated_names(&texts)
}

/// Reads `file` and writes `spec_dir/<processor>/metrics/intel.xml`, after validating the
/// spec with it in memory.
pub fn import_metrics(
    file: &Path,
    spec_dir: &Path,
    processor: &str,
) -> Result<MetricsReport, ImportError> {
    let text = std::fs::read_to_string(file).map_err(|e| ImportError::Input {
        path: file.display().to_string(),
        message: e.to_string(),
    })?;
    let spec = crate::load_spec(spec_dir)?;
    if !spec.processors.iter().any(|p| p.id == processor) {
        return Err(ImportError::Input {
            path: file.display().to_string(),
            message: format!("unknown processor `{processor}`"),
        });
    }
    let renames = renames_beside(file)?;
    let (mut report, content) =
        plan(&text, &spec, processor, &renames).map_err(|message| ImportError::Input {
            path: file.display().to_string(),
            message,
        })?;
    let rel = PathBuf::from(processor).join("metrics").join("intel.xml");
    crate::load::load_dir_with_files(spec_dir, &[], &[(rel.clone(), content.clone())])
        .map_err(|e| ImportError::Spec(crate::Error::Spec(e)))?;
    let path = spec_dir.join(rel);
    let temp = path.with_extension("xml.import-tmp");
    let io = |source| ImportError::Io {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(path.parent().expect("metrics/ has a parent")).map_err(io)?;
    std::fs::write(&temp, &content).map_err(io)?;
    std::fs::rename(&temp, &path).map_err(io)?;
    report.written = Some(path);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_down_register_events_are_left_out_with_their_own_reason() {
        let none = Renames::new();
        let known = KnownEvents {
            core: ["UOPS_ISSUED.ANY".to_string()].into(),
            uncore: ["UNC_CHA_TOR_OCCUPANCY.IA_MISS_DRD".to_string()].into(),
        };
        for name in ["PERF_METRICS.RETIRING", "TOPDOWN.SLOTS:perf_metrics"] {
            let why = map_event(name, &known, &none).unwrap_err();
            assert!(why.contains("IA32_PERF_METRICS"), "{why}");
            assert!(reason_kind(&why).contains("top-down registers"), "{why}");
        }
        let why = map_event("OFFCORE_REQUESTS.ALL_DATA_RD", &known, &none).unwrap_err();
        assert_eq!(
            reason_kind(&why),
            "an event is not in the processor's event lists"
        );
        assert!(map_event("UOPS_ISSUED.ANY:c1", &known, &none).is_ok());
        // An uncore event takes no threshold in a metric: reported as a modifier.
        let why = map_event("UNC_CHA_TOR_OCCUPANCY.IA_MISS_DRD:c1", &known, &none).unwrap_err();
        assert!(why.contains("modifier"), "{why}");
        assert!(map_event("UNC_CHA_TOR_OCCUPANCY.IA_MISS_DRD", &known, &none).is_ok());
        // Where the core reports them, they are events like the others; `:perf_metrics` is
        // fixed counter 3 itself.
        let known = KnownEvents {
            core: ["TOPDOWN.SLOTS".to_string()].into(),
            ..KnownEvents::default()
        };
        assert_eq!(
            map_event("TOPDOWN.SLOTS:perf_metrics", &known, &none),
            Ok(("TOPDOWN.SLOTS".to_string(), String::new()))
        );
        assert!(map_event("TOPDOWN.SLOTS:percore", &known, &none).is_err());
    }

    /// Intel's `Info_System_UPI_Data_Transmit_BW` record (sapphirerapids_metrics.json): unit
    /// in `CountDomain` only, formula a count in MB. Its twin `upi_data_transmit_bw` in the
    /// same file divides by `DURATIONTIMEINSECONDS`; a record that reads the interval keeps
    /// its formula.
    #[test]
    fn a_rate_whose_formula_reads_no_interval_is_divided_by_it() {
        let record = |formula: &str, domain: &str, constants: &str| -> IntelMetric {
            serde_json::from_str(&format!(
                r#"{{"MetricName": "m", "UnitOfMeasure": "", "CountDomain": "{domain}",
                   "Events": [{{"Name": "UNC_UPI_TxL_FLITS.ALL_DATA", "Alias": "a"}}],
                   "Constants": [{constants}], "Formula": "{formula}"}}"#
            ))
            .unwrap()
        };
        let upi = record("a * 64 / 9 / 1000000", "MB/sec", "");
        assert_eq!(
            unit_and_formula(&upi),
            (
                "MB/sec".to_string(),
                "(a * 64 / 9 / 1000000) / DURATIONTIMEINSECONDS".to_string()
            )
        );
        let dram = record(
            "a * 64 / 1000000000 / (durationtimeinmilliseconds / 1000)",
            "GB/sec",
            r#"{"Name": "DURATIONTIMEINMILLISECONDS", "Alias": "durationtimeinmilliseconds"}"#,
        );
        assert_eq!(
            unit_and_formula(&dram).1,
            "a * 64 / 1000000000 / (durationtimeinmilliseconds / 1000)"
        );
        assert_eq!(unit_and_formula(&dram).0, "GB/sec");
        let slots = record("a / 4", "Slots", "");
        assert_eq!(
            unit_and_formula(&slots),
            (String::new(), "a / 4".to_string())
        );
    }

    /// Two records of one encoding, the first under a name Intel deprecated, as Intel's
    /// Skylake-SP uncore list has them.
    const IIO_LIST: &str = r#"{"Events": [
        {"Unit": "IIO", "EventCode": "0x83", "UMask": "0x4", "PortMask": "0x1", "FCMask": "0x7",
         "EventName": "UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0", "Counter": "0,1", "Deprecated": "1"},
        {"Unit": "IIO", "EventCode": "0x83", "UMask": "0x04", "PortMask": "0x01", "FCMask": "0x07",
         "EventName": "UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0", "Counter": "0,1", "Deprecated": "0"},
        {"Unit": "IIO", "EventCode": "0x83", "UMask": "0x1", "PortMask": "0x1", "FCMask": "0x7",
         "EventName": "UNC_IIO_PAYLOAD_BYTES_IN.MEM_WRITE.PART0", "Counter": "0,1", "Deprecated": "1"}
    ]}"#;

    #[test]
    fn deprecated_names_are_read_as_their_current_names() {
        let list = crate::import::ListText {
            text: IIO_LIST,
            path: "skylakex_uncore.json",
        };
        let renames = crate::import::deprecated_names(&[list]).unwrap();
        // The write record has no live twin in this list: it keeps its name.
        assert_eq!(
            renames.into_iter().collect::<Vec<_>>(),
            [(
                "UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0".to_string(),
                "UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0".to_string()
            )]
        );
        let renames: Renames = [(
            "UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0".to_string(),
            "UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0".to_string(),
        )]
        .into();
        let known = KnownEvents {
            uncore: ["UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0".to_string()].into(),
            ..KnownEvents::default()
        };
        assert_eq!(
            map_event("UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0", &known, &renames),
            Ok((
                "UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0".to_string(),
                String::new()
            ))
        );
        // Without the map the old name is an event the lists lack.
        let why = map_event(
            "UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0",
            &known,
            &Renames::new(),
        )
        .unwrap_err();
        assert_eq!(kind_of(&why).0, "not-in-lists");
        // A current name the spec lacks too: the reason names both.
        let why = map_event(
            "UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0",
            &KnownEvents::default(),
            &renames,
        )
        .unwrap_err();
        assert!(
            why.contains("UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0"),
            "{why}"
        );
        assert!(
            why.contains("UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0"),
            "{why}"
        );
    }

    /// Intel's thresholds (sapphirerapids_metrics.json's Memory_Bound and Retiring,
    /// sierraforest_metrics.json's inline legacy names) over metric names.
    #[test]
    fn thresholds_read_metrics_by_name() {
        let record = |name: &str, legacy: &str, threshold: &str| -> IntelMetric {
            serde_json::from_str(&format!(
                r#"{{"MetricName": "{name}", "LegacyName": "{legacy}", "Formula": "1",
                   "Threshold": {threshold}}}"#
            ))
            .unwrap()
        };
        let records = [
            record("Backend_Bound", "metric_TMA_Backend_Bound(%)", "null"),
            record(
                "Heavy_Operations",
                "metric_TMA_..Heavy_Operations(%)",
                "null",
            ),
            record(
                "Memory_Bound",
                "metric_TMA_..Memory_Bound(%)",
                r#"{"Formula": "( a > 20 ) & ( b > 20 )", "ThresholdMetrics": [
                    {"Alias": "a", "Value": "metric_TMA_..Memory_Bound(%)"},
                    {"Alias": "b", "Value": "metric_TMA_Backend_Bound(%)"}]}"#,
            ),
            record(
                "Retiring",
                "metric_TMA_Retiring(%)",
                r#"{"Formula": "( a > 70 ) | ( b > 10 )", "ThresholdMetrics": [
                    {"Alias": "a", "Value": "metric_TMA_Retiring(%)"},
                    {"Alias": "b", "Value": "metric_TMA_..Heavy_Operations(%)"}]}"#,
            ),
            record(
                "Core_Bound",
                "metric_TMA_..Core_Bound(%)",
                r#"{"Formula": "metric_TMA_..Core_Bound(%) >0.10 && metric_TMA_Backend_Bound(%) >0.20"}"#,
            ),
        ];
        let legacy: HashMap<String, String> = records
            .iter()
            .map(|m| (m.legacy_name.clone(), m.name.clone()))
            .collect();
        let all: HashSet<String> = records.iter().map(|m| m.name.clone()).collect();
        let of = |i: usize, kept: &HashSet<String>| threshold_of(&records[i], &legacy, kept);
        assert_eq!(of(0, &all), Ok(None));
        assert_eq!(
            of(2, &all).unwrap().as_deref(),
            Some("min(Memory_Bound > 20, Backend_Bound > 20)")
        );
        assert_eq!(
            of(3, &all).unwrap().as_deref(),
            Some("max(Retiring > 70, Heavy_Operations > 10)")
        );
        assert_eq!(
            of(4, &all).unwrap().as_deref(),
            Some("min(Core_Bound > 0.1, Backend_Bound > 0.2)")
        );
        // A threshold reading a metric that was not imported is left out, saying why.
        let without: HashSet<String> = all
            .iter()
            .filter(|n| *n != "Heavy_Operations")
            .cloned()
            .collect();
        let why = of(3, &without).unwrap_err();
        assert!(
            why.contains("Heavy_Operations") && why.contains("not imported"),
            "{why}"
        );
    }

    #[test]
    fn the_counts_comment_gives_each_kind_left_out() {
        let report = MetricsReport {
            records: 5,
            imported: 2,
            refused: vec![
                (
                    "a".into(),
                    "event X is not in the processor's event lists".into(),
                ),
                (
                    "b".into(),
                    "event Y needs the modifier `SUP`, which a metric cannot express yet".into(),
                ),
                (
                    "c".into(),
                    "event Z is not in the processor's event lists".into(),
                ),
            ],
            ..MetricsReport::default()
        };
        assert_eq!(
            counts_comment(&report),
            "records 5, imported 2, modifier 1, not-in-lists 2"
        );
    }
}
