//! Derived metrics (the spec's `<processor>/metrics/`, generated into
//! `pmu_regs::metrics`): choosing them by name, category or group, planning the events they
//! need onto one unit's counters, and evaluating them from a session's counts.
//!
//! A [`Plan`] gathers the events of the chosen metrics, each once, on the unit that counts
//! them; [`Plan::evaluate`] evaluates every metric from each event's counts summed over the
//! boxes (and CPUs) of a socket. More events than a box has general counters are counted in
//! turns by the session ([`crate::session::turns`]), which scales each count by the share of
//! the interval it ran. What the plan cannot count yet is refused before anything is
//! programmed, saying why: metrics whose events are on different units.
//!
//! ```
//! use pmu_runtime::metrics::{select, Plan};
//! let chosen = select("xeon-e5-2600-v3", &["memory_bandwidth_read".into()])?;
//! let plan = Plan::new("xeon-e5-2600-v3", &chosen, &pmu_regs::metrics::Constants::NONE)?;
//! assert_eq!(plan.unit, "IMC");
//! assert_eq!(plan.events[0].name, "UNC_M_CAS_COUNT.RD");
//! // What a session counts: the event on every box of the unit.
//! let selection = plan.selection()?;
//! let boxes = pmu_runtime::boxes::Boxes::of(selection.processor());
//! let imc = boxes.boxes.iter().filter(|b| b.unit.name == "IMC").count();
//! assert_eq!(selection.boxes().len(), imc);
//! assert!(selection.boxes().iter().all(|b| b.pmu_box.unit.name == "IMC"));
//! # Ok::<(), pmu_runtime::UsageError>(())
//! ```

use pmu_regs::metrics::{for_processor, Constants, MetricInfo, MetricRead, MetricScope, Op};
use pmu_regs::{CounterKind, ProcessorInfo, PROCESSORS};

use crate::boxes::{Boxes, EventSelect, PmuBox};
use crate::error::UsageError;
use crate::session::words::{self, Modifiers};
use crate::session::{BoxEvents, Counted, Selection, Sockets, TopdownSample};

mod sums;
mod values;
pub use sums::{MetricSite, Summed, Sums};
pub use values::MetricValue;

/// The metrics of `processor` that `selectors` name (a metric's name, or a category or group
/// that selects several, like `perf stat -M`), each once, in spec order.
pub fn select(
    processor: &str,
    selectors: &[String],
) -> Result<Vec<&'static MetricInfo>, UsageError> {
    let all = for_processor(processor);
    if all.is_empty() {
        return Err(UsageError::BadValue {
            text: processor.to_string(),
            expected: "a processor with metrics (`pmu list --metrics --processor P` lists them)"
                .into(),
        });
    }
    let mut chosen: Vec<&'static MetricInfo> = Vec::new();
    for s in selectors {
        let found: Vec<&'static MetricInfo> = all.iter().filter(|m| m.is_selected_by(s)).collect();
        if found.is_empty() {
            let names = all.iter().flat_map(|m| {
                [m.name, m.category]
                    .into_iter()
                    .chain(m.groups.iter().copied())
            });
            let close = crate::lookup::suggest(s, names, 5);
            return Err(UsageError::BadValue {
                text: s.clone(),
                expected: if close.is_empty() {
                    format!("a metric, category or group of {processor} (`pmu list --metrics --processor {processor}`)")
                } else {
                    format!("a metric of {processor}, such as {}", close.join(", "))
                },
            });
        }
        for m in found {
            if !chosen.iter().any(|c| c.name == m.name) {
                chosen.push(m);
            }
        }
    }
    Ok(chosen)
}

/// One event a plan counts, with the settings a metric adds to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedEvent {
    /// The event's name (`UNC_M_CAS_COUNT.RD`).
    pub name: &'static str,
    /// Counter mask (0: the event's own).
    pub threshold: u8,
    /// Invert the counter mask.
    pub invert: bool,
    /// Count edges.
    pub edge: bool,
}

impl PlannedEvent {
    /// The name its series carry: the event as `pmu watch --event` writes it
    /// (`event=NAME,thresh=1`).
    pub fn label(&self) -> String {
        let mut w = format!("event={}", self.name);
        if self.threshold != 0 {
            w.push_str(&format!(",thresh={}", self.threshold));
        }
        if self.invert {
            w.push_str(",invert=1");
        }
        if self.edge {
            w.push_str(",edge=1");
        }
        w
    }
}

/// The events some metrics need, on one unit.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The processor's id.
    pub processor: &'static str,
    /// The metrics.
    pub metrics: Vec<&'static MetricInfo>,
    /// The unit that counts every event (`IMC`, `CORE`).
    pub unit: &'static str,
    /// The counted events, each once.
    pub events: Vec<PlannedEvent>,
    /// The events read from the top-down registers (`TOPDOWN.SLOTS`, `PERF_METRICS.*`),
    /// each once: a session with [`crate::session::Options::topdown`] reads them.
    pub topdown: Vec<MetricRead>,
    /// For each metric, the index of each of its events in the counts [`Plan::evaluate`]
    /// takes: [`Plan::events`], then [`Plan::topdown`] (`usize::MAX`: not needed).
    pub inputs: Vec<Vec<usize>>,
}

impl Plan {
    /// Plans `metrics` of `processor`: every event on one unit (more events than its boxes
    /// have general counters are counted in turns). Events only a branch the constants rule
    /// out reads (`x if HYPERTHREADING_ON else y` with SMT off) are not counted.
    pub fn new(
        processor: &str,
        metrics: &[&'static MetricInfo],
        constants: &Constants,
    ) -> Result<Plan, UsageError> {
        let Some(info) = PROCESSORS.iter().find(|p| p.id == processor) else {
            return Err(UsageError::BadValue {
                text: processor.to_string(),
                expected: "a processor of `pmu list --summary`".into(),
            });
        };
        let unit = match metrics.first().and_then(|m| m.events.first()) {
            Some(e) => e.unit,
            None => {
                return Err(UsageError::BadValue {
                    text: metrics.iter().map(|m| m.name).collect::<Vec<_>>().join(","),
                    expected: "metrics that read at least one event".into(),
                })
            }
        };
        let mut events: Vec<PlannedEvent> = Vec::new();
        let mut topdown: Vec<MetricRead> = Vec::new();
        let mut inputs: Vec<Vec<usize>> = Vec::new();
        // Placeholders for the top-down inputs until the counted events are all known.
        const TOPDOWN: usize = usize::MAX / 2;
        for m in metrics {
            let mut idx = Vec::new();
            let needed = needed_events(m.ops, constants);
            for (n, e) in m.events.iter().enumerate() {
                if !needed.contains(&n) {
                    // Read by no branch these constants take: never counted, so missing.
                    idx.push(usize::MAX);
                    continue;
                }
                if e.unit != unit {
                    return Err(UsageError::BadValue {
                        text: m.name.to_string(),
                        expected: format!(
                            "metrics whose events are all on one unit: {} reads {} on {}, and the others read {unit}; watch them in separate runs (counting several units in one run is not implemented yet)",
                            m.name, e.name, e.unit
                        ),
                    });
                }
                if e.read != MetricRead::Counted {
                    // Read from the top-down registers: numbered after the counted events.
                    idx.push(TOPDOWN + index_of(&mut topdown, e.read));
                    continue;
                }
                let planned = PlannedEvent {
                    name: e.name,
                    threshold: e.threshold,
                    invert: e.invert,
                    edge: e.edge,
                };
                idx.push(index_of(&mut events, planned));
            }
            inputs.push(idx);
        }
        for i in inputs.iter_mut().flatten() {
            if (TOPDOWN..usize::MAX).contains(i) {
                *i = *i - TOPDOWN + events.len();
            }
        }
        Ok(Plan {
            processor: info.id,
            metrics: metrics.to_vec(),
            unit,
            events,
            topdown,
            inputs,
        })
    }

    /// What a session counts for this plan: every box of the unit (for core events, the core
    /// box of the processor's core PMU), each counting [`Plan::events`] in order, on socket 0
    /// ([`Selection::on`] counts elsewhere). Each event is looked up by its name in the box's
    /// list (or the processor's core list) with the settings its metrics add.
    pub fn selection(&self) -> Result<Selection, UsageError> {
        let boxes: Vec<(&'static Boxes, &'static PmuBox)> = self
            .box_owners()
            .find_map(|p| {
                let boxes = Boxes::of(p);
                let own: Vec<_> = boxes
                    .boxes
                    .iter()
                    .filter(|b| b.unit.name == self.unit)
                    .map(|b| (boxes, b))
                    .collect();
                (!own.is_empty()).then_some(own)
            })
            .ok_or_else(|| UsageError::NoSuchBox {
                name: format!("of unit {}", self.unit),
                available: format!("the boxes of {}", self.processor),
            })?;
        let counted = boxes
            .into_iter()
            .map(|(boxes, pmu_box)| {
                Ok(BoxEvents {
                    boxes,
                    pmu_box,
                    events: self.selects(pmu_box)?,
                })
            })
            .collect::<Result<Vec<_>, UsageError>>()?;
        let selection = Selection {
            counted: Counted::Boxes(counted),
            events: self.events.iter().map(PlannedEvent::label).collect(),
            sockets: Sockets::One(0),
            cpu: None,
            every_cpu: false,
        };
        selection.check()?;
        Ok(selection)
    }

    /// The processors whose boxes may count the plan's unit: its own, then the one whose core
    /// PMU it uses.
    fn box_owners(&self) -> impl Iterator<Item = &'static ProcessorInfo> + '_ {
        let own = PROCESSORS.iter().find(|p| p.id == self.processor).copied();
        let core = own
            .and_then(|p| p.core_events)
            .and_then(|c| PROCESSORS.iter().find(|p| p.id == c.processor).copied());
        own.into_iter().chain(core)
    }

    /// The plan's events as `pmu_box` counts them: on the free-running counter an event names,
    /// or on a general counter (the i-th on the i-th, in turns where there are more events).
    fn selects(&self, pmu_box: &'static PmuBox) -> Result<Vec<EventSelect>, UsageError> {
        let general: Vec<_> = pmu_box
            .counters
            .iter()
            .filter_map(|c| c.control.filter(|_| c.info.kind == CounterKind::General))
            .collect();
        let mut on_general = 0;
        let mut selects = Vec::new();
        for e in &self.events {
            if let Some(sel) = words::free_running_named(pmu_box, e.name) {
                selects.push(sel);
                continue;
            }
            let Some(control) = general.get(on_general % general.len().max(1)) else {
                return Err(UsageError::NoSuchCounter {
                    counter: format!("general counter for {} in {}", e.name, pmu_box.instance),
                    available: pmu_box.offers(),
                });
            };
            on_general += 1;
            let modifiers = Modifiers {
                threshold: e.threshold,
                invert: e.invert,
                edge: e.edge,
            };
            selects.push(words::named_event(
                control.info,
                e.name,
                modifiers,
                Some(self.processor),
            )?);
        }
        Ok(selects)
    }

    /// The values of [`Plan::topdown`] at `site` (a socket, or one CPU of it) from an
    /// interval's samples: each of its CPUs' slots, or its slots x the category's byte /
    /// 0xFF, summed over those CPUs. Nothing sampled there: each missing, so its metrics are
    /// n/a.
    pub fn topdown_counts(
        &self,
        samples: &[TopdownSample],
        site: MetricSite,
    ) -> Vec<(u64, Option<f64>)> {
        let samples: Vec<&TopdownSample> = samples
            .iter()
            .filter(|s| s.socket == site.socket && site.cpu.is_none_or(|c| c == s.cpu))
            .collect();
        self.topdown
            .iter()
            .map(|r| {
                if samples.is_empty() {
                    return (0, Some(0.0));
                }
                let sum = samples.iter().fold(0u64, |acc, s| {
                    acc.saturating_add(r.topdown_value(s.slots, s.perf_metrics).unwrap_or(0))
                });
                (sum, None)
            })
            .collect()
    }

    /// Whether every metric is per CPU.
    pub fn per_cpu(&self) -> bool {
        self.metrics.iter().all(|m| m.scope == MetricScope::Cpu)
    }

    /// Every metric's value for one socket (or CPU): `counts[i]` is event i's count summed
    /// over the boxes, as a session's intervals give it (already scaled up where it ran part
    /// of the interval), with the smallest running fraction of its parts (`None`: it ran the
    /// whole time). A count that did not run at all is missing, so its metrics are n/a.
    pub fn evaluate(
        &self,
        counts: &[(u64, Option<f64>)],
        constants: &Constants,
    ) -> Vec<Option<f64>> {
        let scaled: Vec<Option<f64>> = counts
            .iter()
            .map(|&(n, ratio)| match ratio {
                Some(r) if r <= 0.0 => None,
                _ => Some(n as f64),
            })
            .collect();
        self.metrics
            .iter()
            .zip(&self.inputs)
            .map(|(m, idx)| {
                let values: Vec<Option<f64>> = idx
                    .iter()
                    .map(|&i| scaled.get(i).copied().flatten())
                    .collect();
                m.evaluate(&values, constants)
            })
            .collect()
    }
}

/// Where `item` is in `list`, added at the end if it is not there yet.
fn index_of<T: PartialEq>(list: &mut Vec<T>, item: T) -> usize {
    match list.iter().position(|x| *x == item) {
        Some(i) => i,
        None => {
            list.push(item);
            list.len() - 1
        }
    }
}

/// The events (indices) a formula reads once the constants known before counting decide its
/// branches (the interval's length is not known then).
pub fn needed_events(ops: &[Op], constants: &Constants) -> Vec<usize> {
    let mut stack: Vec<(Option<f64>, Vec<usize>)> = Vec::new();
    let pop =
        |stack: &mut Vec<(Option<f64>, Vec<usize>)>| stack.pop().unwrap_or((None, Vec::new()));
    for op in ops {
        let item = match *op {
            Op::Num(n) => (Some(n), Vec::new()),
            Op::Event(i) => (None, vec![usize::from(i)]),
            Op::Const(pmu_regs::metrics::Constant::DurationSeconds)
            | Op::Const(pmu_regs::metrics::Constant::DurationMilliseconds) => (None, Vec::new()),
            Op::Const(c) => (constants.get(c), Vec::new()),
            Op::Neg => {
                let (v, e) = pop(&mut stack);
                (v.map(|x| -x), e)
            }
            Op::Select => {
                let (otherwise, then, (cond, mut e)) =
                    (pop(&mut stack), pop(&mut stack), pop(&mut stack));
                match cond {
                    Some(c) if c != 0.0 => e.extend(then.1),
                    Some(_) => e.extend(otherwise.1),
                    None => {
                        e.extend(then.1);
                        e.extend(otherwise.1);
                    }
                }
                (None, e)
            }
            _ => {
                let (b, a) = (pop(&mut stack), pop(&mut stack));
                let mut e = a.1;
                e.extend(b.1);
                // Constant folding matters only for a Select's condition: compute it here.
                let v = match (a.0, b.0) {
                    (Some(x), Some(y)) => pmu_regs::metrics::evaluate(
                        &[Op::Num(x), Op::Num(y), *op],
                        &[],
                        &Constants::NONE,
                    ),
                    _ => None,
                };
                (v, e)
            }
        };
        stack.push(item);
    }
    let mut all: Vec<usize> = stack.into_iter().flat_map(|(_, e)| e).collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// `metric`'s formula with each event alias replaced by the event's name, and the counter
/// mask, invert and edge settings the metric adds written after it as Intel's metric lists
/// write them (`:c1`, `:i1`, `:e1`): `a / b` of `cpi` reads
/// `CPU_CLK_UNHALTED.THREAD_P / INST_RETIRED.ANY_P`.
pub fn spelled_out(metric: &MetricInfo) -> String {
    let name_of = |alias: &str| {
        let e = metric.events.iter().find(|e| e.alias == alias)?;
        let mut name = e.name.to_string();
        if e.threshold != 0 {
            name.push_str(&format!(":c{}", e.threshold));
        }
        if e.invert {
            name.push_str(":i1");
        }
        if e.edge {
            name.push_str(":e1");
        }
        Some(name)
    };
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            out.push_str(&name_of(word).unwrap_or_else(|| word.clone()));
            word.clear();
        }
    };
    for c in metric.formula.chars() {
        // An identifier: a letter or `_`, then letters, digits, `_` and `.` (a number's
        // digits and point stay with it, so `1e9` and `0.5` are never taken for an alias).
        if c.is_ascii_alphanumeric() || c == '_' || (c == '.' && !word.is_empty()) {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `v` to 12 significant digits: the value a metric's arithmetic meant, without the binary
/// float noise its operations leave (`108.97919999999999` is `108.9792`), so that CSV and JSON,
/// which print the shortest text that reads back as the same double, print no noise either.
/// Twelve digits keep every count below 10^12 exact and lose nothing a counter measures.
pub fn without_float_noise(v: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    format!("{v:.11e}").parse().unwrap_or(v)
}

/// A value as a report shows it: `n/a` when the metric is not defined.
pub fn format_value(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{v:.3}"),
        None => "n/a".to_string(),
    }
}

#[cfg(test)]
mod float_noise_tests {
    use super::without_float_noise;

    /// 108.9792 is not a double; a sum of doubles near it prints as 108.97919999999999 (the
    /// shortest text that reads back as that double), the noise issue 40 shows.
    #[test]
    fn a_computed_value_prints_as_its_decimal() {
        let noisy = 100.0 + 8.9792 - 1e-14;
        assert_eq!(noisy.to_string(), "108.97919999999999");
        assert_eq!(without_float_noise(noisy).to_string(), "108.9792");
        assert_eq!(
            serde_json::json!(without_float_noise(noisy)).to_string(),
            "108.9792"
        );
        assert_eq!(without_float_noise(0.1 + 0.2).to_string(), "0.3");
        // Counts up to 10^12 stay exact, and the edges pass through.
        assert_eq!(without_float_noise(999_999_999_999.0), 999_999_999_999.0);
        assert_eq!(without_float_noise(0.0), 0.0);
        assert!(without_float_noise(f64::NAN).is_nan());
        assert_eq!(without_float_noise(f64::INFINITY), f64::INFINITY);
    }
}
