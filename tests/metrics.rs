//! Derived metrics, end to end from the spec: every formula of every processor prints back
//! to the same expression, the generated tables hold what the spec says, and the generated
//! `no_std` evaluator gives the value the formula predicts, or "n/a" (None), never a panic
//! or an infinity.

use std::path::Path;

use codegen::model::formula::{self, Leaf};
use pmu_regs::metrics::{evaluate, for_processor, Constant, Constants, MetricScope, Op};
use proptest::prelude::*;

fn spec() -> codegen::model::Spec {
    codegen::load_spec(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec")).unwrap()
}

#[test]
fn every_spec_formula_prints_back_to_the_same_expression_and_matches_the_crate() {
    let spec = spec();
    let mut seen = 0;
    for p in &spec.processors {
        let table = for_processor(&p.id);
        assert_eq!(table.len(), p.metrics.len(), "{}", p.id);
        for (m, g) in p.metrics.iter().zip(table) {
            let names: Vec<String> = m.events.iter().map(|e| e.alias.clone()).collect();
            let printed = m.expr.display(&names).to_string();
            let resolve = |n: &str| {
                names
                    .iter()
                    .position(|a| a == n)
                    .map(Leaf::Event)
                    .or_else(|| formula::Constant::from_name(n).map(Leaf::Const))
            };
            assert_eq!(
                formula::parse(&printed, &resolve).as_ref(),
                Ok(&m.expr),
                "{printed}"
            );
            assert_eq!(g.name, m.name);
            assert_eq!(g.formula, m.formula);
            assert_eq!(g.ops.len(), m.expr.postfix().len());
            assert_eq!(g.events.len(), m.events.len());
            seen += 1;
        }
    }
    assert!(seen > 700, "{seen} metrics");
}

fn metric(processor: &str, name: &str) -> &'static pmu_regs::metrics::MetricInfo {
    for_processor(processor)
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("{processor} has no metric {name}"))
}

/// Intel's thresholds, by hand from sapphirerapids_metrics.json: Memory_Bound's
/// `( a > 20 ) & ( b > 20 )` over itself and Backend_Bound, Retiring's `( a > 70 ) | ( b >
/// 10 )` over itself and Heavy_Operations; `cpi` has none. A value it reads that is missing
/// leaves the answer unknown. Every spec threshold is the crate's.
#[test]
fn thresholds_are_intels_conditions_and_match_the_crate() {
    let m = metric("sapphire-rapids", "Memory_Bound");
    let at = |mb: f64, bb: f64| {
        m.over_threshold(|n| match n {
            "Memory_Bound" => Some(mb),
            "Backend_Bound" => Some(bb),
            _ => None,
        })
    };
    assert_eq!(at(21.0, 21.0), Some(true));
    assert_eq!(at(21.0, 19.0), Some(false));
    assert_eq!(at(19.0, 50.0), Some(false));
    assert_eq!(m.over_threshold(|_| None), None);
    let r = metric("sapphire-rapids", "Retiring");
    let at = |re: f64, heavy: f64| {
        r.over_threshold(|n| match n {
            "Retiring" => Some(re),
            "Heavy_Operations" => Some(heavy),
            _ => None,
        })
    };
    assert_eq!(at(71.0, 1.0), Some(true));
    assert_eq!(at(10.0, 11.0), Some(true));
    assert_eq!(at(70.0, 10.0), Some(false));
    assert_eq!(
        metric("sapphire-rapids", "cpi").over_threshold(|_| Some(1.0)),
        None
    );
    let spec = spec();
    let mut with = 0;
    for p in &spec.processors {
        for (m, g) in p.metrics.iter().zip(for_processor(&p.id)) {
            match &m.threshold {
                Some(t) => {
                    with += 1;
                    assert_eq!(g.threshold_formula, t.formula);
                    assert_eq!(g.threshold.len(), t.expr.postfix().len(), "{}", m.name);
                    let names: Vec<&str> = t.metrics.iter().map(String::as_str).collect();
                    assert_eq!(g.threshold_metrics, names.as_slice());
                }
                None => assert!(g.threshold.is_empty() && g.threshold_metrics.is_empty()),
            }
        }
    }
    assert!(with > 900, "{with} thresholds");
}

#[test]
fn formulas_give_the_predicted_values() {
    let c = Constants {
        duration_seconds: Some(0.5),
        threads_per_core: Some(2.0),
        ..Constants::NONE
    };
    for p in [
        "xeon-e5-2600",
        "xeon-e5-2600-v3",
        "skylake-sp",
        "cascade-lake",
    ] {
        // 1,000,000 CAS of 64 bytes in 0.5 s: 128 MB/s.
        let m = metric(p, "memory_bandwidth_read");
        assert_eq!(m.scope, MetricScope::Socket);
        assert_eq!(m.evaluate(&[Some(1e6)], &c), Some(128.0));
        let m = metric(p, "llc_hit_rate");
        assert_eq!(m.scope, MetricScope::Cpu);
        assert_eq!(m.evaluate(&[Some(400.0), Some(100.0)], &c), Some(75.0));
    }
    // Frontend_Bound with SMT on: IDQ_UOPS_NOT_DELIVERED.CORE / (4 * THREAD_P_ANY / 2).
    let m = metric("xeon-e5-2600-v3", "Frontend_Bound");
    let counts: Vec<Option<f64>> = m
        .events
        .iter()
        .map(|e| match e.name {
            "IDQ_UOPS_NOT_DELIVERED.CORE" => Some(1000.0),
            "CPU_CLK_UNHALTED.THREAD_P_ANY" => Some(2000.0),
            _ => Some(0.0),
        })
        .collect();
    assert_eq!(m.evaluate(&counts, &c), Some(25.0));
}

#[test]
fn division_by_zero_and_missing_values_are_not_a_number() {
    let c = Constants {
        duration_seconds: Some(1.0),
        ..Constants::NONE
    };
    let m = metric("xeon-e5-2600-v3", "llc_hit_rate");
    assert_eq!(m.evaluate(&[Some(0.0), Some(0.0)], &c), None);
    assert_eq!(m.evaluate(&[None, Some(1.0)], &c), None);
    assert_eq!(
        m.evaluate(&[Some(1.0)], &c),
        None,
        "a count missing from the slice"
    );
    // A division by zero in the branch not taken does not matter.
    let ops = [
        Op::Const(Constant::HyperthreadingOn),
        Op::Num(1.0),
        Op::Num(1.0),
        Op::Num(0.0),
        Op::Div,
        Op::Select,
    ];
    let smt = Constants {
        threads_per_core: Some(2.0),
        ..Constants::NONE
    };
    assert_eq!(evaluate(&ops, &[], &smt), Some(1.0));
    let no_smt = Constants {
        threads_per_core: Some(1.0),
        ..Constants::NONE
    };
    assert_eq!(evaluate(&ops, &[], &no_smt), None);
    // Overflow to infinity is n/a too; so are ill-formed op lists.
    assert_eq!(
        evaluate(&[Op::Num(1e300), Op::Num(1e300), Op::Mul], &[], &c),
        None
    );
    assert_eq!(evaluate(&[Op::Add], &[], &c), None);
    assert_eq!(evaluate(&[Op::Num(1.0), Op::Num(1.0)], &[], &c), None);
    assert_eq!(evaluate(&[], &[], &c), None);
    assert_eq!(evaluate(&[Op::Num(f64::NAN)], &[], &c), None);
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<f64>().prop_map(Op::Num),
        (0u8..6).prop_map(Op::Event),
        (0usize..Constant::ALL.len()).prop_map(|i| Op::Const(Constant::ALL[i])),
        Just(Op::Neg),
        Just(Op::Add),
        Just(Op::Sub),
        Just(Op::Mul),
        Just(Op::Div),
        Just(Op::Min),
        Just(Op::Max),
        Just(Op::Gt),
        Just(Op::Lt),
        Just(Op::Ge),
        Just(Op::Le),
        Just(Op::Select),
    ]
}

fn count() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        Just(None),
        Just(Some(0.0)),
        any::<f64>().prop_map(Some),
        (0u64..1 << 48).prop_map(|n| Some(n as f64)),
    ]
}

proptest! {
    #[test]
    fn the_evaluator_never_panics_nor_returns_a_non_finite_value(
        ops in proptest::collection::vec(op(), 0..200),
        counts in proptest::collection::vec(count(), 0..6),
        seconds in count(),
    ) {
        let c = Constants { duration_seconds: seconds, tsc_hz: Some(2.1e9), ..Constants::NONE };
        if let Some(v) = evaluate(&ops, &counts, &c) {
            prop_assert!(v.is_finite());
        }
    }

    #[test]
    fn every_metric_of_every_processor_evaluates_any_counts(
        counts in proptest::collection::vec(count(), 64),
        seconds in count(),
        threads in prop_oneof![Just(Some(1.0)), Just(Some(2.0)), Just(None)],
    ) {
        let c = Constants {
            duration_seconds: seconds,
            threads_per_core: threads,
            tsc_hz: Some(2.1e9),
            socket_count: Some(2.0),
            cores_per_socket: Some(18.0),
            chas_per_socket: Some(18.0),
            cpu_count: Some(72.0),
        };
        for id in pmu_regs::PROCESSORS.iter().map(|p| p.id) {
            for m in for_processor(id) {
                if let Some(v) = m.evaluate(&counts[..m.events.len().min(64)], &c) {
                    prop_assert!(v.is_finite(), "{} {}", id, m.name);
                }
            }
        }
    }
}

/// IA32_PERF_METRICS: a category's slots are the interval's slots x its byte / 0xFF, rounded
/// down (Linux's icl_get_metrics_event_value), whatever the other bytes hold.
#[test]
fn topdown_slots_are_the_byte_share_of_the_slots() {
    use pmu_regs::metrics::{topdown_slots, MetricRead};
    // Retiring 0x33 (51), bad speculation 0x11, frontend 0x44, backend 0x77: sum 0xFF.
    let pm: u64 = 0x7744_1133;
    assert_eq!(topdown_slots(1020, pm, 0), 204); // 1020 x 51 / 255
    assert_eq!(topdown_slots(1020, pm, 3), 476); // 1020 x 119 / 255
    assert_eq!(topdown_slots(1020, pm, 9), 0);
    assert_eq!(MetricRead::Slots.topdown_value(1020, pm), Some(1020));
    assert_eq!(MetricRead::SlotsShare(2).topdown_value(1020, pm), Some(272));
    assert_eq!(MetricRead::Counted.topdown_value(1020, pm), None);
    // The largest slot count: no overflow.
    assert_eq!(topdown_slots(u64::MAX, u64::MAX, 7), u64::MAX);
}

proptest! {
    #[test]
    fn topdown_slots_never_exceed_the_slots(slots: u64, pm: u64, byte in 0u8..8) {
        let v = pmu_regs::metrics::topdown_slots(slots, pm, byte);
        prop_assert!(v <= slots);
        let share = (pm >> (byte * 8)) & 0xff;
        prop_assert_eq!(v as u128, slots as u128 * share as u128 / 255);
    }
}

/// The counts the importer wrote into a metrics file's header
/// (`<!-- import-metrics: records 260, imported 220, modifier 18, not-in-lists 22 -->`), by key.
fn import_counts(intel_xml: &str) -> std::collections::BTreeMap<String, usize> {
    let line = intel_xml
        .lines()
        .find_map(|l| l.trim().strip_prefix("<!-- import-metrics: "))
        .expect("the importer's counts line");
    line.trim_end_matches("-->")
        .split(',')
        .map(|kv| {
            let (k, v) = kv.trim().rsplit_once(' ').expect("`key n`");
            (k.to_string(), v.parse().expect("a count"))
        })
        .collect()
}

#[test]
fn the_docs_import_table_quotes_the_importers_counts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let docs = std::fs::read_to_string(root.join("docs/metrics.md")).unwrap();
    let spec = spec();
    let mut rows = 0;
    for p in &spec.processors {
        let Some(prefix) = p.identity.as_ref().and_then(|i| i.perfmon.clone()) else {
            continue;
        };
        let path = root.join("spec").join(&p.id).join("metrics/intel.xml");
        let Ok(xml) = std::fs::read_to_string(&path) else {
            continue;
        };
        let counts = import_counts(&xml);
        // The header's imported count is the file's metrics.
        assert_eq!(
            counts["imported"],
            xml.matches("<metric ").count(),
            "{}",
            path.display()
        );
        let file = format!("`{prefix}_metrics.json`");
        let row: Vec<&str> = docs
            .lines()
            .find(|l| l.starts_with('|') && l.contains(&file))
            .unwrap_or_else(|| panic!("docs/metrics.md has no row for {file}"))
            .split('|')
            .map(str::trim)
            .collect();
        let n = |key: &str| counts.get(key).copied().unwrap_or(0).to_string();
        assert_eq!(
            row[3..6].iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            [
                format!("{} of {}", counts["imported"], counts["records"]),
                n("not-in-lists"),
                n("modifier"),
            ],
            "{file}: {counts:?}"
        );
        // The per-reason tables (a row each, starting with the file): by event not in the
        // lists, then by modifier; each row's cells sum to its total, the importer's count.
        let per_reason: Vec<Vec<usize>> = docs
            .lines()
            .filter(|l| l.starts_with(&format!("| {file}")))
            .map(|l| {
                // The cells after the file's; an empty cell is none.
                l.trim_matches('|')
                    .split('|')
                    .skip(1)
                    .map(|c| match c.trim() {
                        "" => 0,
                        n => n.parse().expect("a count"),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            per_reason.len(),
            2,
            "{file}: a row in each per-reason table of docs/metrics.md"
        );
        for (cells, kind) in per_reason.iter().zip(["not-in-lists", "modifier"]) {
            let (total, each) = cells.split_last().expect("cells");
            assert_eq!(
                each.iter().sum::<usize>(),
                *total,
                "{file} {kind}: {cells:?}"
            );
            assert_eq!(
                *total,
                counts.get(kind).copied().unwrap_or(0),
                "{file} {kind}: the per-reason table's total is the importer's count"
            );
        }
        // A formula the language does not express (`a[0]`) is named in the text instead.
        if let Some(n) = counts.get("formula") {
            let flat = docs.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                flat.contains(&format!("{prefix}_metrics.json`: {n} with a formula")),
                "{file}: docs/metrics.md should say `{prefix}_metrics.json`: {n} with a formula"
            );
        }
        // Every record is imported or left out for one of the reasons the docs give.
        let tabled: usize = ["imported", "not-in-lists", "modifier", "formula"]
            .iter()
            .filter_map(|k| counts.get(*k))
            .sum();
        assert_eq!(
            tabled, counts["records"],
            "{file}: a kind the table has no column for: {counts:?}"
        );
        rows += 1;
    }
    assert_eq!(rows, 10, "one row per processor with Intel's metric file");
}
