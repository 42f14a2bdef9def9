//! Every box of every processor in the spec, driven only by the structure the spec declares:
//! each can be programmed, counted on the simulator and put back; each whose structure lets
//! an overflow be signalled, freeze the uncore and be found can be sampled, and the others
//! are refused saying why. Prints the
//! coverage figures the README gives (`cargo test -p pmu-runtime --test every_box --
//! --nocapture`).

use pmu_regs::{CounterKind, Role, Scope, PROCESSORS};
use pmu_runtime::boxes::Boxes;
use pmu_runtime::counters::Counting;
use pmu_runtime::sampling::uncore::{EventSelect, SamplePlan, Uncore, UncoreCounter};
use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent, FIXED_EVENT};
use pmu_runtime::{read_by_info, Site};

#[test]
fn every_box_counts_on_the_simulator_and_is_put_back() {
    let mut boxes_watched = 0;
    let mut through_perf_only = 0;
    let mut placed_by_firmware = 0;
    let mut counters_counted = 0;
    let mut free_running_counted = 0;
    for p in PROCESSORS {
        let boxes = Boxes::of(p);
        for b in &boxes.boxes {
            // Arm's system registers are reached through perf only; the simulator does not
            // model them yet (cli.rs: a_system_register_unit_is_refused_on_the_simulator...).
            if b.through_perf_only() {
                through_perf_only += 1;
                continue;
            }
            // A CoreSight PMU's page is placed by the APMT: cspmu_sim.rs counts it.
            if b.placed_by_firmware() {
                placed_by_firmware += 1;
                continue;
            }
            let sim = Sim::new(SimConfig::of(p));
            let devices = sim.uncore_devices();
            let mut session = Counting::open(&sim, boxes, b, 0, 0, Some(devices)).unwrap();
            let mut general = session.general_counters().len();
            if b.scope() == Scope::Cpu {
                // The architectural counters that exist are what CPUID says.
                general = general.min(usize::from(sim.cpuid_0a().counters()));
            }
            let sels: Vec<EventSelect> = (0..general)
                .map(|i| EventSelect::event(0x10 + i as u16))
                .collect();
            // Free-running counters run on and cannot be loaded: only what the session
            // programs is put back.
            let programmable =
                |c: &&pmu_runtime::boxes::Counter| c.info.kind != CounterKind::FreeRunning;
            let before: Vec<u64> = b
                .counters
                .iter()
                .filter(programmable)
                .flat_map(|c| c.control.into_iter().chain([c.counter]))
                .map(|r| read(&sim, r))
                .collect();
            let numbers = session
                .program(&sels)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", p.id, b.instance));
            for (i, n) in numbers.iter().enumerate() {
                let events = 100 + i as u64;
                match b.scope() {
                    Scope::Cpu => sim.inject_core(0, 0x10 + i as u16, 0, events).unwrap(),
                    // Through CPU 0: the socket's first L3, for a per-L3 box.
                    Scope::Socket | Scope::L3 => sim
                        .inject_uncore(
                            0,
                            UncoreEvent {
                                instance: b.instance,
                                ev_sel: 0x10 + i as u16,
                                umask: None,
                            },
                            events,
                        )
                        .unwrap(),
                }
                assert_eq!(
                    session.read_counter(*n).unwrap(),
                    events,
                    "{}:{} counter {n}",
                    p.id,
                    b.instance
                );
                counters_counted += 1;
            }
            free_running_counted += count_free_running(&sim, &mut session, p.id, b);
            drop(session);
            let after: Vec<u64> = b
                .counters
                .iter()
                .filter(programmable)
                .flat_map(|c| c.control.into_iter().chain([c.counter]))
                .map(|r| read(&sim, r))
                .collect();
            assert_eq!(after, before, "{}:{} put back", p.id, b.instance);
            boxes_watched += 1;
        }
    }
    let total: usize = PROCESSORS.iter().map(|p| Boxes::of(p).boxes.len()).sum();
    println!("boxes counted and put back on the simulator: {boxes_watched} of {total} ({through_perf_only} of system registers, through perf only); counters: {counters_counted}; free-running counters read: {free_running_counted}");
    assert_eq!(
        boxes_watched + through_perf_only + placed_by_firmware,
        total
    );
    // NVIDIA Grace's SCF PMU.
    assert_eq!(placed_by_firmware, 1);
    // The core PMU of the Neoverse V2, N2, V3, N3, N1 and V1.
    assert_eq!(through_perf_only, 6);
}

/// Every free-running counter of `b` the kernel names an event for: taken by its event
/// (`event=0xff,umask=N`) with nothing written, advanced by the simulator's workload alone
/// (no enable, no freeze), and read back wrapping at its own width. Returns how many.
fn count_free_running(
    sim: &Sim,
    session: &mut Counting<'_, Sim>,
    processor: &str,
    b: &pmu_runtime::boxes::PmuBox,
) -> usize {
    let mut counted = 0;
    for c in b
        .counters
        .iter()
        .filter(|c| c.info.kind == CounterKind::FreeRunning)
    {
        let Some(p) = c.info.perf_event else { continue };
        let sel = EventSelect::event(FIXED_EVENT).with_umask(u16::from(p.umask));
        let n = session
            .program(&[sel])
            .unwrap_or_else(|e| panic!("{processor}:{} {}: {e}", b.instance, p.name))[0];
        assert_eq!(n, c.number());
        let before = session.read_counter(n).unwrap();
        // 2^width - 1 events: the counter comes back one short, across its wrap.
        let events = c.info.max();
        let ev = UncoreEvent {
            instance: b.instance,
            ev_sel: FIXED_EVENT,
            umask: Some(u16::from(p.umask)),
        };
        sim.inject_uncore(0, ev, events).unwrap();
        let after = session.read_counter(n).unwrap();
        assert_eq!(
            after,
            (u128::from(before) + u128::from(events)) as u64 & c.info.max(),
            "{processor}:{} {} wraps at {} bits",
            b.instance,
            p.name,
            c.info.width
        );
        // Taken once: a second event for it is refused before anything is read.
        assert!(session.program(&[sel]).is_err());
        counted += 1;
    }
    counted
}

/// A register's raw value on socket 0 of the simulator (0 where the simulated CPU lacks it).
fn read(sim: &Sim, r: pmu_runtime::boxes::Reg) -> u64 {
    let place = match r.addr.location {
        pmu_regs::Location::Msr(_) => Site::Cpu(0),
        pmu_regs::Location::Pci {
            device_id,
            device,
            function,
            ..
        } => Site::Device(
            sim.uncore_devices()
                .bdf_at(0, device_id, device, function, r.name())
                .unwrap(),
        ),
        // The window's base, read from the base device's config dwords as on hardware.
        pmu_regs::Location::Mmio { .. } => {
            pmu_runtime::access::place_of(sim, &sim.uncore_devices(), 0, r.info, r.addr).unwrap()
        }
        pmu_regs::Location::Table(_) | pmu_regs::Location::SysReg(_) => {
            unreachable!("simulated box registers are MSRs, PCI or MMIO")
        }
    };
    read_by_info(sim, r.info, r.addr, place).unwrap_or(0)
}

#[test]
fn every_listed_event_fits_a_counter_of_its_box() {
    let (mut listed, mut watchable) = (0, 0);
    for p in PROCESSORS {
        for u in p.units {
            let Some(pmu) = u.pmu else { continue };
            for e in u.events {
                listed += 1;
                let fits = pmu.counters.iter().any(|c| {
                    let bits = |role| c.control_bits(role);
                    e.can_count_on(c.number)
                        && bits(Role::Event).is_some_and(|b| u64::from(e.code) <= b.max())
                        && (e.umask == 0
                            || bits(Role::Umask).is_some_and(|b| u64::from(e.umask) <= b.max()))
                        && (!e.ext_sel || bits(Role::EventExt).is_some())
                });
                assert!(fits, "{}:{} {}", p.id, u.name, e.name);
                watchable += 1;
            }
        }
    }
    println!("events listed: {listed}; fit a counter of their box (pmu watch --event ev_sel=..,umask=..,ext=..): {watchable}");
    assert_eq!(watchable, listed);
}

#[test]
fn every_box_with_an_overflow_route_samples_and_the_others_are_refused_saying_why() {
    for p in PROCESSORS.iter().filter(|p| {
        Boxes::of(p)
            .boxes
            .iter()
            .all(|b| b.scope() == Scope::Socket)
    }) {
        let boxes = Boxes::of(p);
        let sim = Sim::new(SimConfig::of(p));
        let uncore = Uncore::open(&sim, p, 0, 0)
            .unwrap()
            .with_devices(sim.uncore_devices());
        for b in &boxes.boxes {
            if b.table_placed() {
                // Placed by the discovery table (the Granite Rapids PCU): it has no overflow
                // route (the structure declares none), and sampling does not place boxes
                // from the table yet (docs/discovery.md).
                continue;
            }
            let Some(c) = b
                .counters
                .iter()
                .find(|c| c.control_bits(Role::Event).is_some())
            else {
                // A box of free-running counters only: nothing to program, so nothing to
                // sample, and arming one says so.
                let c = &b.counters[0];
                assert_eq!(
                    c.info.kind,
                    CounterKind::FreeRunning,
                    "{}:{}",
                    p.id,
                    b.instance
                );
                let plan = SamplePlan {
                    counters: vec![(
                        UncoreCounter::new(b.instance, c.number()),
                        EventSelect::event(0x01),
                        20,
                    )],
                    pmi_core: 0,
                };
                let Err(e) = uncore.arm(&plan) else {
                    panic!(
                        "{}:{}: a free-running counter cannot sample",
                        p.id, b.instance
                    )
                };
                assert!(
                    e.to_string().contains("free-running"),
                    "{}:{}: {e}",
                    p.id,
                    b.instance
                );
                continue;
            };
            let counter = UncoreCounter::new(b.instance, c.number());
            let plan = SamplePlan {
                counters: vec![(counter, EventSelect::event(0x01), 20)],
                pmi_core: 0,
            };
            // A counter samples when its overflow can be signalled, the global level freezes
            // on it (a PMI clears the enable, or the freeze signal stops boxes that let it),
            // and the walk can find it (a route above the box, or the box's own status).
            let freezes = boxes.global.as_ref().is_some_and(|g| {
                g.info.pmi_freeze().is_some()
                    || (g.info.freeze_signal().is_some()
                        && b.box_field(Role::FreezeEnable).is_some())
            });
            let found = c.route.is_some() || b.box_bit(Role::Overflow, c.number()).is_some();
            let samples = freezes && found && c.control_bits(Role::OverflowEnable).is_some();
            match uncore.arm(&plan) {
                Ok(mut s) => {
                    assert!(samples, "{}:{} armed without a route", p.id, b.instance);
                    sim.inject_uncore(
                        0,
                        UncoreEvent {
                            instance: b.instance,
                            ev_sel: 0x01,
                            umask: None,
                        },
                        20,
                    )
                    .unwrap();
                    let sample = uncore.frozen_sample(&mut s).unwrap();
                    assert_eq!(
                        sample.counts,
                        vec![(counter, 20)],
                        "{}:{}",
                        p.id,
                        b.instance
                    );
                }
                Err(e) => {
                    assert!(!samples, "{}:{}: {e}", p.id, b.instance);
                    let msg = e.to_string();
                    assert!(
                        msg.contains("overflow (PMI) enable")
                            || msg.contains("global freeze on PMI")
                            || msg.contains("box freeze enable"),
                        "{msg}"
                    );
                }
            }
        }
    }
}
