//! Sampling that cannot lose or invent an overflow (issue 11, section 4), each as a general
//! rule over every counter or every place a refusal can come from:
//! - every counter's overflow is reported and re-armed along its own route;
//! - a counter given twice, and any refused plan or configuration, read and write nothing;
//! - overflow bits left from earlier counting are not this interval's overflow;
//! - one session per PMU, the second refused with the holder named;
//! - ending a session puts back what arming changed, counter values included.

use pmu_regs::arch::core::{Ia32PerfEvtSel, IA32_PERFEVTSEL, IA32_PERF_GLOBAL_CTRL, IA32_PMC};
use pmu_regs::xeon_7500::PROCESSOR as NHM;
use pmu_regs::{Addresses, Location, PROCESSORS};
use pmu_runtime::fault::{Fault, Faulty, When};
use pmu_runtime::ownership::{LockDir, Ownership, Pmu};
use pmu_runtime::sampling::core::{CoreEventSelect, CorePmu};
use pmu_runtime::sampling::standalone::StandaloneBox;
use pmu_runtime::sampling::uncore::{EventSelect, SamplePlan, Uncore, UncoreCounter};
use pmu_runtime::sim::{ArchConfig, Sim, SimConfig, UncoreEvent};
use pmu_runtime::{Error, MsrAccess, MsrAccessExt, SamplingError, UsageError};

/// Every Xeon 7500 box instance.
fn boxes() -> Vec<&'static str> {
    let p = PROCESSORS.iter().find(|p| p.id == "xeon-7500").unwrap();
    p.units
        .iter()
        .flat_map(|u| u.instances.iter().copied())
        .collect()
}

/// Every counter of every Xeon 7500 box, with an event it counts (the W-box fixed counter
/// counts only uncore clocks, 0xFF).
fn every_counter(sim: &Sim) -> Vec<(UncoreCounter, u16)> {
    let uncore = Uncore::open(sim, &NHM, 0, 0).unwrap();
    let mut all = Vec::new();
    for instance in boxes() {
        for position in 0.. {
            let c = UncoreCounter::new(instance, position);
            let ev_sel = match uncore.configure(c, &EventSelect::event(0x01)) {
                Ok(()) => 0x01,
                Err(Error::Usage(UsageError::NoSuchCounter { .. })) => break,
                Err(_) => {
                    uncore.configure(c, &EventSelect::event(0xFF)).unwrap();
                    0xFF
                }
            };
            all.push((c, ev_sel));
        }
    }
    uncore.reset().unwrap();
    all
}

fn inject(sim: &Sim, c: UncoreCounter, ev_sel: u16, n: u64) {
    sim.inject_uncore(
        0,
        UncoreEvent {
            instance: c.instance,
            ev_sel,
            umask: None,
        },
        n,
    )
    .unwrap();
}

/// Every MSR of the Xeon 7500 uncore and the architectural PMU of CPU 0, as raw values.
fn msr_state(sim: &Sim) -> Vec<(u32, Option<u64>)> {
    PROCESSORS
        .iter()
        .filter(|p| p.id != "xeon-e5-2600")
        .flat_map(|p| p.units.iter())
        .flat_map(|u| u.registers.iter())
        .flat_map(|r| match r.addresses {
            Addresses::Known(a) => a.to_vec(),
            Addresses::Unknown(_) | Addresses::FromTable(_) => Vec::new(),
        })
        .filter_map(|a| match a.location {
            Location::Msr(m) => Some(m),
            Location::Pci { .. }
            | Location::Mmio { .. }
            | Location::Table(_)
            | Location::SysReg(_) => None,
        })
        .map(|m| (m, sim.read_msr(0, m).ok()))
        .collect()
}

#[test]
fn every_counter_is_reported_and_rearmed_along_its_own_route() {
    let sim = Sim::new(SimConfig::default());
    let counters = every_counter(&sim);
    // 1 U + 5 W (4 general, 1 fixed) + 4 S each + 4 B each + 6 C each + 6 M each + 16 R.
    assert_eq!(counters.len(), 1 + 5 + 2 * 4 + 2 * 4 + 8 * 6 + 2 * 6 + 16);
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    for (c, ev_sel) in counters {
        let n = 50;
        let mut s = uncore
            .arm(&SamplePlan {
                counters: vec![(c, EventSelect::event(ev_sel), n)],
                pmi_core: 0,
            })
            .unwrap_or_else(|e| panic!("{c}: {e}"));
        for interval in 0..3 {
            inject(&sim, c, ev_sel, n);
            let sample = uncore
                .frozen_sample(&mut s)
                .unwrap_or_else(|e| panic!("{c} interval {interval}: {e}"));
            assert_eq!(sample.overflowed, vec![c], "{c} interval {interval}");
            assert_eq!(sample.counts, vec![(c, n)], "{c} interval {interval}");
            uncore.rearm(&mut s, &sample).unwrap();
        }
        s.close().unwrap();
    }
}

#[test]
fn a_counter_given_twice_is_refused_before_any_access() {
    let sim = Sim::new(SimConfig::default());
    let counted = Faulty::new(&sim, When::Never, Fault::Eio);
    let uncore = Uncore::open(&counted, &NHM, 0, 0).unwrap();
    let (a, b) = (UncoreCounter::new("R", 9), UncoreCounter::new("C2", 1));
    for plan in [
        vec![a, a],
        vec![a, b, a],
        vec![b, a, UncoreCounter::new("C2", 1)],
    ] {
        let err = uncore
            .arm(&SamplePlan {
                counters: plan
                    .iter()
                    .map(|c| (*c, EventSelect::event(1), 100))
                    .collect(),
                pmi_core: 0,
            })
            .unwrap_err();
        assert!(
            matches!(err, Error::Usage(UsageError::DuplicateCounter { .. })),
            "{err}"
        );
        assert_eq!(counted.counts(), (0, 0), "{plan:?}: {err}");
    }
}

/// Runs `f` on a fresh session whose every access is counted, and returns the counts.
fn accesses(sim: &Sim, f: impl FnOnce(&Uncore<'_, Faulty<&Sim>>)) -> (usize, usize) {
    let counted = Faulty::new(sim, When::Never, Fault::Eio);
    let uncore = Uncore::open(&counted, &NHM, 0, 0).unwrap();
    f(&uncore);
    drop(uncore);
    counted.counts()
}

#[test]
fn a_refused_plan_or_configuration_reads_and_writes_nothing() {
    let sim = Sim::new(SimConfig::default());
    let before = msr_state(&sim);
    let good = (UncoreCounter::new("C1", 0), EventSelect::event(1), 100);
    let bad_settings = [
        (
            UncoreCounter::new("B0", 0),
            EventSelect::event(1).with_umask(1),
        ), // no umask
        (UncoreCounter::new("B0", 0), EventSelect::event(0x20)), // too wide
        (UncoreCounter::new("C9", 0), EventSelect::event(1)),    // no such box
        (UncoreCounter::new("C0", 6), EventSelect::event(1)),    // no such counter
        (UncoreCounter::new("W", 4), EventSelect::event(1)),     // fixed: clocks only
    ];
    let mut bad: Vec<_> = bad_settings.iter().map(|&(c, e)| (c, e, 5)).collect();
    bad.push((UncoreCounter::new("C1", 1), EventSelect::event(1), 0)); // no interval
    bad.push((
        UncoreCounter::new("C1", 1),
        EventSelect::event(1),
        (1 << 48) + 1,
    )); // too long
    for entry in bad {
        // The bad entry first, between and after good ones: nothing happens either way.
        for at in 0..3 {
            let mut counters = vec![
                good,
                (UncoreCounter::new("R", 12), EventSelect::event(2), 7),
            ];
            counters.insert(at, entry);
            let counts = accesses(&sim, |uncore| {
                let plan = SamplePlan {
                    counters,
                    pmi_core: 0,
                };
                assert!(uncore.arm(&plan).is_err(), "{entry:?} at {at}");
            });
            assert_eq!(counts, (0, 0), "{entry:?} at {at}");
        }
    }
    for (c, sel) in bad_settings {
        let counts = accesses(&sim, |uncore| assert!(uncore.configure(c, &sel).is_err()));
        assert_eq!(counts, (0, 0), "configure {c} {sel:?}");
    }
    assert_eq!(msr_state(&sim), before);

    // The core PMU: an interval a legacy counter write cannot preload is refused before the
    // first access, as is a counter CPUID does not report.
    let sim = Sim::new(SimConfig {
        arch: ArchConfig {
            fw_write: false,
            ..ArchConfig::default()
        },
        ..SimConfig::default()
    });
    let counted = Faulty::new(&sim, When::Never, Fault::Eio);
    let pmu = CorePmu::new(&counted, 0, sim.cpuid_0a()).unwrap();
    let after_new = counted.counts();
    for (n, interval) in [(1, (1u64 << 31) + 1), (1, 0), (7, 10)] {
        assert!(pmu
            .arm(n, &CoreEventSelect::user(0xC0, 0), interval)
            .is_err());
        assert_eq!(
            counted.counts(),
            after_new,
            "counter {n}, interval {interval}"
        );
    }
}

#[test]
fn overflow_bits_left_from_earlier_counting_are_not_this_intervals_overflow() {
    let sim = Sim::new(SimConfig::default());
    let counters = every_counter(&sim);
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    for (stale, ev_sel) in counters {
        // Count plainly until the counter wraps: its overflow bit is left set.
        uncore
            .configure(stale, &EventSelect::event(ev_sel))
            .unwrap();
        uncore.start().unwrap();
        inject(&sim, stale, ev_sel, 1 << 48);
        uncore.stop().unwrap();
        // A new session on it and on a counter of another box, which overflows first.
        let trigger = if stale.instance == "W" {
            UncoreCounter::new("C0", 0)
        } else {
            UncoreCounter::new("W", 0)
        };
        let mut s = uncore
            .arm(&SamplePlan {
                counters: vec![
                    (stale, EventSelect::event(ev_sel), 1000),
                    (trigger, EventSelect::event(0x3), 10),
                ],
                pmi_core: 0,
            })
            .unwrap();
        inject(&sim, trigger, 0x3, 10);
        let sample = uncore.frozen_sample(&mut s).unwrap();
        assert_eq!(sample.overflowed, vec![trigger], "stale {stale}");
        assert_eq!(
            sample.counts,
            vec![(stale, 0), (trigger, 10)],
            "stale {stale}"
        );
        // And the stale counter's own interval is exact.
        uncore.rearm(&mut s, &sample).unwrap();
        inject(&sim, stale, ev_sel, 1000);
        let sample = uncore.frozen_sample(&mut s).unwrap();
        assert_eq!(sample.overflowed, vec![stale], "stale {stale}");
        assert_eq!(sample.counts[0], (stale, 1000), "stale {stale}");
        s.close().unwrap();
        uncore.reset().unwrap();
    }
}

#[test]
fn a_second_session_on_a_pmu_is_refused_naming_the_holder() {
    let sim = Sim::new(SimConfig::default());
    let first = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let err = Uncore::open(&sim, &NHM, 1, 0)
        .err()
        .expect("socket 0 is taken");
    assert!(
        matches!(err, Error::Sampling(SamplingError::Owned { .. })),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("the xeon-7500 uncore of socket 0 is in use by")
            && msg.contains(&format!("process {}", std::process::id())),
        "{msg}"
    );
    // Another socket is another PMU; the first is free again once its session ends.
    let other = Uncore::open(&sim, &NHM, 2, 1).unwrap();
    drop(first);
    Uncore::open(&sim, &NHM, 0, 0).unwrap();
    drop(other);

    let core = CorePmu::new(&sim, 3, sim.cpuid_0a()).unwrap();
    assert!(CorePmu::new(&sim, 3, sim.cpuid_0a()).is_err());
    CorePmu::new(&sim, 2, sim.cpuid_0a()).unwrap();
    drop(core);
    CorePmu::new(&sim, 3, sim.cpuid_0a()).unwrap();

    let sim = Sim::new(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR));
    let devices = sim.uncore_devices();
    let ha = StandaloneBox::of(&sim, &devices, 0, "HA").unwrap();
    assert!(StandaloneBox::of(&sim, &devices, 0, "HA").is_err());
    StandaloneBox::of(&sim, &devices, 1, "HA").unwrap();
    StandaloneBox::of(&sim, &devices, 0, "P0").unwrap();
    drop(ha);
}

#[test]
fn lock_files_make_ownership_exclusive_across_opens() {
    // flock is per open file: two opens conflict as two processes would.
    let dir = tempfile::tempdir().unwrap();
    let pmu = Pmu::Uncore {
        processor: "xeon-7500",
        socket: 1,
    };
    let lease = LockDir::new(dir.path()).claim(&pmu).unwrap();
    let err = LockDir::new(dir.path())
        .claim(&pmu)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("is in use by process {}", std::process::id())),
        "{err}"
    );
    let _core = LockDir::new(dir.path())
        .claim(&Pmu::Core { cpu: 1 })
        .unwrap();
    drop(lease);
    let _again = LockDir::new(dir.path()).claim(&pmu).unwrap();
}

/// A machine someone else has programmed: W counter 0 counting from a value, en_all set.
fn busy_sim() -> Sim {
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(0);
    use pmu_regs::xeon_7500::{cbox, ubox, wbox};
    cpu.write(
        wbox::W_MSR_PMON_EVT_SEL[0],
        wbox::WEvtSel::RESET.with_ev_sel(0x07).with_en(true),
    )
    .unwrap();
    cpu.write(
        wbox::W_MSR_PMON_GLOBAL_CTL,
        wbox::WGlobalCtl::RESET.with_ctr_en(1),
    )
    .unwrap();
    cpu.write_raw(cbox::C_MSR_PMON_CTR[1][0], 123_456).unwrap();
    cpu.write_raw(wbox::W_MSR_PMON_CTR[2], 99).unwrap();
    cpu.write(
        ubox::U_MSR_PMON_GLOBAL_CTL,
        ubox::UGlobalCtl::RESET.with_en_all(true),
    )
    .unwrap();
    sim
}

#[test]
fn ending_a_session_puts_back_what_arming_changed_counter_values_included() {
    let plan = SamplePlan {
        counters: vec![
            (UncoreCounter::new("C1", 0), EventSelect::event(0x01), 100),
            (UncoreCounter::new("W", 2), EventSelect::event(0x02), 50),
            (UncoreCounter::new("R", 11), EventSelect::event(0x03), 70),
        ],
        pmi_core: 1,
    };
    // close(), after sampling and re-arming.
    let sim = busy_sim();
    let before = msr_state(&sim);
    let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
    let mut s = uncore.arm(&plan).unwrap();
    inject(&sim, UncoreCounter::new("C1", 0), 0x01, 100);
    let sample = uncore.frozen_sample(&mut s).unwrap();
    uncore.rearm(&mut s, &sample).unwrap();
    inject(&sim, UncoreCounter::new("R", 11), 0x03, 30);
    s.close().unwrap();
    let after = msr_state(&sim);
    // Status registers keep what the hardware latched; everything arming wrote is back.
    let status: Vec<u32> = [
        pmu_regs::xeon_7500::ubox::U_MSR_PMON_GLOBAL_STATUS.address(),
        pmu_regs::xeon_7500::cbox::C_MSR_PMON_GLOBAL_STATUS[1].address(),
    ]
    .into();
    let strip = |v: Vec<(u32, Option<u64>)>| -> Vec<(u32, Option<u64>)> {
        v.into_iter().filter(|(a, _)| !status.contains(a)).collect()
    };
    assert_eq!(strip(after), strip(before.clone()));

    // Drop, on an error path: the same.
    let sim = busy_sim();
    {
        let uncore = Uncore::open(&sim, &NHM, 0, 0).unwrap();
        let _s = uncore.arm(&plan).unwrap();
        inject(&sim, UncoreCounter::new("W", 2), 0x02, 20);
    }
    assert_eq!(msr_state(&sim), before);

    // The core PMU.
    let sim = Sim::new(SimConfig::default());
    let cpu = sim.on_cpu(0);
    cpu.write(
        IA32_PERFEVTSEL[2],
        Ia32PerfEvtSel::RESET.with_ev_sel(0x3C).with_usr(true),
    )
    .unwrap();
    cpu.write_raw(IA32_PMC[2], 777).unwrap();
    let state = || {
        (
            cpu.read_raw(IA32_PERFEVTSEL[2]).unwrap(),
            cpu.read_raw(IA32_PMC[2]).unwrap(),
            cpu.read_raw(IA32_PERF_GLOBAL_CTRL).unwrap(),
        )
    };
    let before = state();
    let pmu = CorePmu::new(&sim, 0, sim.cpuid_0a()).unwrap();
    let armed = pmu.arm(2, &CoreEventSelect::user(0xC0, 0), 1000).unwrap();
    sim.inject_core(0, 0xC0, 0, 400).unwrap();
    assert_ne!(state(), before);
    armed.close().unwrap();
    assert_eq!(state(), before);
    drop(pmu.arm(2, &CoreEventSelect::user(0xC0, 0), 10).unwrap());
    assert_eq!(state(), before);
}
