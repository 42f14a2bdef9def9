//! The one control encoder (`Counter::control_value`) against the perf format strings: every
//! control value it makes for any event selection, on any general counter of any box whose
//! kernel PMU the spec names, goes through the driver's format (`from_control`) and back
//! (`to_control`, what a kernel driver reads) to the same field values, role by role.

use pmu_regs::{CounterKind, Role, PROCESSORS};
use pmu_runtime::boxes::{Boxes, Counter, EventSelect};
use pmu_runtime::perf::encode::{from_control, to_control};
use pmu_runtime::perf::{PerfNames, SpecNames};
use proptest::prelude::*;

/// Every general counter with a control, of every box whose kernel PMU the spec names.
fn counters() -> &'static [(&'static str, &'static Counter, &'static str, &'static str)] {
    static ALL: std::sync::OnceLock<Vec<Found>> = std::sync::OnceLock::new();
    ALL.get_or_init(find_counters)
}

type Found = (&'static str, &'static Counter, &'static str, &'static str);

fn find_counters() -> Vec<Found> {
    let mut out = Vec::new();
    for p in PROCESSORS {
        for b in &Boxes::of(p).boxes {
            for c in b
                .counters
                .iter()
                .filter(|c| c.info.kind == CounterKind::General && c.control.is_some())
            {
                if SpecNames
                    .lookup(p.id, b.unit.name, b.instance, Some(c.number()))
                    .is_ok()
                {
                    out.push((p.id, c, b.unit.name, b.instance));
                }
            }
        }
    }
    out
}

/// The roles an event selection sets.
const ROLES: [Role; 7] = [
    Role::Event,
    Role::Umask,
    Role::Threshold,
    Role::Invert,
    Role::Edge,
    Role::EventExt,
    Role::AnyThread,
];

fn selection() -> impl Strategy<Value = EventSelect> {
    (
        any::<u8>(),
        proptest::option::weighted(0.3, any::<u8>()),
        proptest::option::weighted(0.3, any::<u8>()),
        proptest::option::weighted(0.3, any::<bool>()),
        proptest::option::weighted(0.3, any::<bool>()),
        proptest::option::weighted(0.3, any::<bool>()),
        proptest::option::weighted(0.3, any::<bool>()),
    )
        .prop_map(
            |(ev_sel, umask, thresh, invert, edge_detect, event_ext, any_thread)| EventSelect {
                ev_sel: ev_sel.into(),
                umask: umask.map(u16::from),
                thresh,
                invert,
                edge_detect,
                event_ext,
                any_thread,
                ..EventSelect::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn every_control_value_decodes_back_through_the_perf_format(
        pick in any::<prop::sample::Index>(),
        sel in selection(),
    ) {
        let all = counters();
        prop_assert!(all.len() > 100, "{} counters", all.len());
        let (processor, c, unit, instance) = all[pick.index(all.len())];
        // A setting the control lacks, or a value too wide for its field, is refused.
        let Ok(raw) = c.control_value(&sel, false) else { return Ok(()) };
        let control = c.control.unwrap().info;
        let name = SpecNames.lookup(processor, unit, instance, Some(c.number())).unwrap();
        let formats = name.driver_formats();
        let ev = from_control(control, raw, name.pmu, &formats, Some(name.kernel_counter(c.number())));
        // What the driver's format cannot express is refused by name, never mistranslated.
        let Ok(ev) = ev else { return Ok(()) };
        let back = to_control(control, &ev.config, name.pmu, &formats)
            .map_err(|e| TestCaseError::fail(format!("{} {ev}: {e}", control.name)))?;
        for role in ROLES {
            if let Some(bits) = c.control_bits(role) {
                prop_assert_eq!(
                    bits.extract(back), bits.extract(raw),
                    "{} {:?} of {:#x} through {}", control.name, role, raw, ev
                );
            }
        }
    }
}

#[test]
fn most_selections_round_trip() {
    // The property above skips what is refused: make sure most of it is not, for plain
    // events with a unit mask, on every counter.
    let mut translated = 0;
    let all = counters();
    for (processor, c, unit, instance) in all {
        let sel = EventSelect::event(0x12);
        let Ok(raw) = c
            .control_value(&sel.with_umask(0x3), false)
            .or_else(|_| c.control_value(&sel, false))
        else {
            continue;
        };
        let name = SpecNames
            .lookup(processor, unit, instance, Some(c.number()))
            .unwrap();
        let formats = name.driver_formats();
        let control = c.control.unwrap().info;
        if let Ok(ev) = from_control(
            control,
            raw,
            name.pmu,
            &formats,
            Some(name.kernel_counter(c.number())),
        ) {
            let back = to_control(control, &ev.config, name.pmu, &formats).unwrap();
            assert_eq!(c.control_bits(Role::Event).unwrap().extract(back), 0x12);
            translated += 1;
        }
    }
    assert!(
        translated * 10 >= all.len() * 9,
        "{translated} of {}",
        all.len()
    );
}
