//! Sampling on the Xeon E5-2600 v2, v3 and v4 uncores through their specs alone: the global
//! level of these processors is a freeze signal (write-only freeze and unfreeze commands in
//! U_MSR_PMON_GLOBAL_CTL, overflows summarised in U_MSR_PMON_GLOBAL_STATUS), which the
//! runtime drives from the roles the spec gives, with no code per processor. Each box either
//! samples on the simulator (frozen on exactly the Nth event, found through its route, re-armed
//! and put back) or is refused before anything is written, with the reason.

use pmu_regs::{ProcessorInfo, Role};
use pmu_runtime::boxes::Boxes;
use pmu_runtime::sampling::uncore::{EventSelect, SamplePlan, Uncore, UncoreCounter};
use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent};
use pmu_runtime::{read_by_info, Site};
#[path = "support/spec.rs"]
mod spec;
use spec::processor;

/// Every register value of every box, to check that a session puts everything back.
fn snapshot(sim: &Sim, p: &'static ProcessorInfo) -> Vec<u64> {
    let boxes = Boxes::of(p);
    let mut regs = Vec::new();
    for b in &boxes.boxes {
        for c in &b.counters {
            regs.extend(c.control);
            regs.push(c.counter);
        }
        regs.extend(b.controls.iter().copied());
    }
    let devices = sim.uncore_devices();
    regs.iter()
        .map(|r| {
            let place = match r.addr.location {
                pmu_regs::Location::Msr(_) => Site::Cpu(0),
                pmu_regs::Location::Pci {
                    device_id,
                    device,
                    function,
                    ..
                } => Site::Device(
                    devices
                        .bdf_at(0, device_id, device, function, r.name())
                        .unwrap(),
                ),
                pmu_regs::Location::Mmio { .. } => unreachable!("the E5 v2-v4 have no MMIO"),
                pmu_regs::Location::Table(_) | pmu_regs::Location::SysReg(_) => {
                    unreachable!("these boxes' registers are MSRs or PCI")
                }
            };
            read_by_info(sim, r.info, r.addr, place).unwrap()
        })
        .collect()
}

/// Arms counter 0 (or the first general counter) of each box to freeze after 50 events; a box
/// that arms must freeze on exactly the 50th, report its counter through the walk, count the
/// next interval after re-arming, and leave every register as it was. Returns the boxes that
/// sampled and each refused box with its reason.
fn sample_every_box(id: &str) -> (Vec<&'static str>, Vec<(&'static str, String)>) {
    let p = processor(id);
    let boxes = Boxes::of(p);
    let g = boxes.global.as_ref().expect("a global level");
    assert!(
        g.info.freeze_signal().is_some() && g.info.pmi_freeze().is_none(),
        "{id}: the global level is a freeze signal"
    );
    let mut sampled = Vec::new();
    let mut refused = Vec::new();
    for b in &boxes.boxes {
        let sim = Sim::new(SimConfig::of(p));
        let uncore = Uncore::open(&sim, p, 0, 0)
            .unwrap()
            .with_devices(sim.uncore_devices());
        let c = b
            .counters
            .iter()
            .find(|c| c.control_bits(Role::Event).is_some())
            .expect("a general counter");
        let counter = UncoreCounter::new(b.instance, c.number());
        let before = snapshot(&sim, p);
        let plan = SamplePlan {
            counters: vec![(counter, EventSelect::event(0x01), 50)],
            pmi_core: 1,
        };
        let mut s = match uncore.arm(&plan) {
            Ok(s) => s,
            Err(e) => {
                assert_eq!(
                    snapshot(&sim, p),
                    before,
                    "{id}:{}: refused but written",
                    b.instance
                );
                refused.push((b.instance, e.to_string()));
                continue;
            }
        };
        let event = UncoreEvent {
            instance: b.instance,
            ev_sel: 0x01,
            umask: None,
        };
        sim.inject_uncore(0, event, 80).unwrap();
        assert!(
            sim.is_frozen(0, b.instance).unwrap(),
            "{id}:{} frozen by its overflow",
            b.instance
        );
        let sample = uncore.frozen_sample(&mut s).unwrap();
        assert_eq!(sample.overflowed, vec![counter], "{id}:{}", b.instance);
        assert_eq!(
            sample.counts,
            vec![(counter, 50)],
            "{id}:{}: frozen on the 50th event",
            b.instance
        );
        uncore.rearm(&mut s, &sample).unwrap();
        assert!(
            !sim.is_frozen(0, b.instance).unwrap(),
            "{id}:{} unfrozen by rearm",
            b.instance
        );
        sim.inject_uncore(0, event, 50).unwrap();
        let again = uncore.frozen_sample(&mut s).unwrap();
        assert_eq!(
            again.overflowed,
            vec![counter],
            "{id}:{}: overflow bits cleared between intervals",
            b.instance
        );
        assert_eq!(
            again.counts,
            vec![(counter, 50)],
            "{id}:{}: second interval",
            b.instance
        );
        s.close().unwrap();
        assert_eq!(snapshot(&sim, p), before, "{id}:{}: put back", b.instance);
        assert!(
            !sim.is_frozen(0, b.instance).unwrap(),
            "{id}:{}: unfrozen after close",
            b.instance
        );
        sampled.push(b.instance);
    }
    (sampled, refused)
}

#[test]
fn e5_2600_v2_samples_every_box_with_an_overflow_enable_and_a_freeze_enable() {
    let (sampled, refused) = sample_every_box("xeon-e5-2600-v2");
    assert_eq!(
        sampled,
        [
            "HA0", "HA1", "CH0", "CH1", "CH2", "CH3", "CH4", "CH5", "CH6", "CH7", "IRP", "PCU",
            "P0", "P1", "P2", "R2PCIE", "L0", "L1", "L2"
        ]
    );
    for (instance, why) in &refused {
        let expected = if instance.starts_with('C') {
            // Table 2-14 reserves the CBo's bits 21:20: no overflow enable.
            "overflow (PMI) enable"
        } else {
            // The U-box has no box control, so nothing lets the freeze signal stop it.
            "box freeze enable"
        };
        assert!(why.contains(expected), "{instance}: {why}");
    }
    let refused: Vec<&str> = refused.iter().map(|(i, _)| *i).collect();
    assert_eq!(refused.len(), 16, "{refused:?}");
    assert!(refused.contains(&"UBOX"));
}

#[test]
fn e5_2600_v3_and_v4_refuse_sampling_for_want_of_an_overflow_enable() {
    for id in ["xeon-e5-2600-v3", "xeon-e5-2600-v4"] {
        let (sampled, refused) = sample_every_box(id);
        assert!(sampled.is_empty(), "{id}: {sampled:?}");
        assert_eq!(refused.len(), Boxes::of(processor(id)).boxes.len());
        for (instance, why) in refused {
            assert!(
                why.contains("overflow (PMI) enable"),
                "{id}:{instance}: {why}"
            );
        }
    }
}

#[test]
fn the_global_status_shows_which_box_overflowed_and_a_written_one_clears_it() {
    let p = processor("xeon-e5-2600-v2");
    let sim = Sim::new(SimConfig::of(p));
    let uncore = Uncore::open(&sim, p, 0, 0)
        .unwrap()
        .with_devices(sim.uncore_devices());
    let ha1 = UncoreCounter::new("HA1", 2);
    let ch5 = UncoreCounter::new("CH5", 1);
    let mut s = uncore
        .arm(&SamplePlan {
            counters: vec![
                (ha1, EventSelect::event(0x01), 10),
                (ch5, EventSelect::event(0x04), 1000),
            ],
            pmi_core: 0,
        })
        .unwrap();
    let status = Boxes::of(p).global.as_ref().unwrap().status;
    let global_status = || read_by_info(&sim, status.info, status.addr, Site::Cpu(0)).unwrap();
    let ov_ha1 = status.info.field("ov_ha1").unwrap();
    assert_eq!(global_status(), 0);
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: "HA1",
            ev_sel: 0x01,
            umask: None,
        },
        10,
    )
    .unwrap();
    // HA1 froze the whole uncore: CH5 counts nothing more.
    assert!(sim.is_frozen(0, "CH5").unwrap());
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: "CH5",
            ev_sel: 0x04,
            umask: None,
        },
        7,
    )
    .unwrap();
    // Only HA1's bit is set: bit 19, as likwid tests it.
    assert_eq!(global_status(), ov_ha1.mask());
    assert_eq!(ov_ha1.lsb, 19);
    let sample = uncore.frozen_sample(&mut s).unwrap();
    assert_eq!(sample.overflowed, vec![ha1]);
    assert_eq!(sample.counts, vec![(ha1, 10), (ch5, 0)]);
    uncore.rearm(&mut s, &sample).unwrap();
    assert_eq!(global_status(), 0, "re-arming clears the global bit");
    assert!(!sim.is_frozen(0, "CH5").unwrap());
    s.close().unwrap();
}
