//! What a report prints of a metric: a plan's evaluation of any counts and running fractions
//! (a count that ran a sliver of the interval, or not at all, a count of zero) is a finite
//! number or n/a, on every processor, for every metric that plans; the printed value is never
//! `inf` or `NaN`.

use pmu_regs::metrics::{for_processor, Constants};
use pmu_runtime::metrics::{format_value, Plan};
use proptest::prelude::*;

fn count() -> impl Strategy<Value = (u64, Option<f64>)> {
    (
        prop_oneof![Just(0u64), Just(u64::MAX), 0u64..1 << 48],
        prop_oneof![
            Just(None),
            Just(Some(0.0)),
            Just(Some(1e-300)),
            Just(Some(f64::NAN)),
            (0.0f64..=1.0).prop_map(Some)
        ],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn a_planned_metric_is_a_finite_number_or_n_a(
        counts in proptest::collection::vec(count(), 8),
        seconds in prop_oneof![Just(0.0), Just(1e-9), Just(1.0), Just(f64::INFINITY)],
    ) {
        let constants = Constants {
            duration_seconds: Some(seconds),
            threads_per_core: Some(1.0),
            socket_count: Some(2.0),
            ..Constants::NONE
        };
        for p in pmu_regs::PROCESSORS {
            for m in for_processor(p.id) {
                let Ok(plan) = Plan::new(p.id, &[m], &constants) else { continue };
                let n = plan.events.len();
                for v in plan.evaluate(&counts[..n.min(8)], &constants) {
                    let shown = format_value(v);
                    prop_assert!(v.is_none_or(f64::is_finite), "{} {}: {shown}", p.id, m.name);
                    prop_assert!(!shown.contains("inf") && !shown.contains("NaN"), "{shown}");
                }
            }
        }
    }
}
