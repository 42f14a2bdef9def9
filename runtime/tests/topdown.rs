//! The top-down registers (fixed counter 3, IA32_PERF_METRICS) on the simulator and in
//! counting sessions: what a metric over them gives is the formula's value for the
//! workload's shares, and every register is put back.

use pmu_runtime::sim::{Sim, SimConfig, SimTopdown, SLOTS_EVENT};
use pmu_runtime::MsrAccess;

fn sim(id: &str) -> Sim {
    let p = pmu_regs::PROCESSORS.iter().find(|p| p.id == id).unwrap();
    Sim::new(SimConfig::of(p))
}

#[test]
fn the_simulated_core_counts_slots_and_reports_the_workload_shares() {
    let s = sim("ice-lake-sp");
    // Fixed counter 3 and PERF_METRICS off: nothing counts.
    s.inject_core(0, SLOTS_EVENT.0, SLOTS_EVENT.1, 1000)
        .unwrap();
    assert_eq!(s.read_msr(0, 0x30C).unwrap(), 0);
    assert_eq!(s.read_msr(0, 0x329).unwrap(), 0);
    s.write_msr(0, 0x38D, 0b11 << 12).unwrap();
    s.write_msr(0, 0x38F, 1 << 35 | 1 << 48).unwrap();
    s.inject_core(0, SLOTS_EVENT.0, SLOTS_EVENT.1, 1000)
        .unwrap();
    assert_eq!(s.read_msr(0, 0x30C).unwrap(), 1000);
    // Ice Lake reports the four level-1 shares, which sum to 0xFF.
    let pm = s.read_msr(0, 0x329).unwrap();
    assert_eq!(pm, SimTopdown::DEMO_PROFILE & 0xFFFF_FFFF);
    assert_eq!((0..4).map(|b| pm >> (8 * b) & 0xFF).sum::<u64>(), 0xFF);
    // Zeroing starts a new interval: the metrics read 0 until slots count again.
    s.write_msr(0, 0x329, 0).unwrap();
    assert_eq!(s.read_msr(0, 0x329).unwrap(), 0);
    // Sapphire Rapids reports eight; a core without the registers faults.
    let spr = sim("sapphire-rapids");
    spr.write_msr(0, 0x38D, 0b11 << 12).unwrap();
    spr.write_msr(0, 0x38F, 1 << 35 | 1 << 48).unwrap();
    spr.inject_core(0, SLOTS_EVENT.0, SLOTS_EVENT.1, 10)
        .unwrap();
    assert_eq!(spr.read_msr(0, 0x329).unwrap(), SimTopdown::DEMO_PROFILE);
    let skx = sim("skylake-sp");
    assert!(skx.read_msr(0, 0x329).is_err());
    assert!(skx.read_msr(0, 0x30C).is_err());
    assert!(skx.write_msr(0, 0x38F, 1 << 35).is_err());
}

/// Clearwater Forest's E-cores count the three level-1 top-down classes on fixed counters 4
/// to 6 (Linux's intel_skt_event_constraints, which Clearwater Forest takes: 0x0073, 0x019c
/// and 0x02c2 as event | umask << 8, at MSR 0x309 + i): each counts what a general counter
/// counts with the class's `_P` event from Intel's list (TOPDOWN_BAD_SPECULATION.ALL_P 0x73
/// umask 0x00, TOPDOWN_FE_BOUND.ALL_P 0x9C 0x01, TOPDOWN_RETIRING.ALL_P 0xC2 0x02). Sierra
/// Forest's cores have no such counters.
#[test]
fn clearwater_forest_counts_its_top_down_classes_on_fixed_counters_4_to_6() {
    use pmu_runtime::sim::workloads::COMPUTE_BOUND;
    let cwf = sim("clearwater-forest");
    // CPUID.0AH:ECX enumerates fixed counters 0-2 and 4-6; 3 (TOPDOWN.SLOTS) is not there.
    assert_eq!(cwf.cpuid_0a().fixed_counter_mask(), 0b111_0111);
    assert!(cwf.read_msr(0, 0x30C).is_err());
    let classes = [(0x73u64, 0x00u64), (0x9C, 0x01), (0xC2, 0x02)];
    for (n, (ev, umask)) in classes.iter().enumerate() {
        // EN, OS, USR.
        let sel = ev | umask << 8 | 1 << 22 | 1 << 17 | 1 << 16;
        cwf.write_msr(0, 0x186 + n as u32, sel).unwrap();
    }
    // Each of fixed counters 4-6 in every ring (0b11 in its block at bits 4i+1:4i), and the
    // global enables of PMC0-2 and of fixed counters 4-6 (bits 36-38).
    cwf.write_msr(0, 0x38D, 0b11 << 16 | 0b11 << 20 | 0b11 << 24)
        .unwrap();
    cwf.write_msr(0, 0x38F, 0b111 | 0b111 << 36).unwrap();
    let id = cwf.run_named(&COMPUTE_BOUND);
    cwf.advance(&[id], std::time::Duration::from_millis(1))
        .unwrap();
    for n in 0..3 {
        let general = cwf.read_msr(0, 0xC1 + n).unwrap();
        let fixed = cwf.read_msr(0, 0x30D + n).unwrap();
        assert!(general > 0, "PMC{n} counted nothing");
        assert_eq!(fixed, general, "IA32_FIXED_CTR{}", 4 + n);
    }
    // A core without them faults on their counters and refuses their enables.
    let srf = sim("sierra-forest");
    assert!(srf.read_msr(0, 0x30D).is_err());
    assert!(srf.write_msr(0, 0x38F, 1 << 36).is_err());
}

mod session {
    use std::time::Duration;

    use pmu_runtime::boxes::Boxes;
    use pmu_runtime::machine::{Machine, Where};
    use pmu_runtime::sampling::uncore::EventSelect;
    use pmu_runtime::session::{Clock, Options, Pace, Selection, Session, SessionBackend};
    use pmu_runtime::sim::SimTopdown;

    const REGS: [&str; 4] = [
        "IA32_FIXED_CTR_CTRL",
        "IA32_PERF_GLOBAL_CTRL",
        "IA32_FIXED_CTR3",
        "IA32_PERF_METRICS",
    ];

    fn regs(machine: &Machine, cpu: u32) -> Vec<u64> {
        let at = Where {
            cpu: Some(cpu),
            ..Where::default()
        };
        REGS.iter()
            .map(|r| machine.read(&machine.resolve(r, &at).unwrap()).unwrap())
            .collect()
    }

    fn write(machine: &Machine, cpu: u32, name: &str, v: u64) {
        let at = Where {
            cpu: Some(cpu),
            ..Where::default()
        };
        machine
            .write(&machine.resolve(name, &at).unwrap(), v)
            .unwrap();
    }

    fn core_selection() -> Selection {
        let boxes = Boxes::of(&pmu_regs::arch::PROCESSOR);
        let core = boxes.boxes.iter().find(|b| b.unit.name == "CORE").unwrap();
        Selection::of_boxes(
            &[(boxes, core)],
            &["ev_sel=0xc0"],
            &[EventSelect::event(0xc0)],
        )
        .unwrap()
    }

    fn options(topdown: bool) -> Options {
        Options {
            clock: Clock::Steps(Duration::from_millis(10)),
            pace: Pace::Steady(1000),
            topdown,
            ..Options::default()
        }
    }

    #[test]
    fn each_interval_reads_and_zeroes_both_and_closing_puts_back_what_was_there() {
        let icx = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == "ice-lake-sp")
            .unwrap();
        let machine = Machine::simulating(icx);
        // Values another user left: a count in fixed counter 3, some metrics.
        write(&machine, 0, "IA32_FIXED_CTR3", 77);
        write(&machine, 0, "IA32_PERF_METRICS", 0x1234);
        let before = regs(&machine, 0);
        let backend = SessionBackend::Registers(&machine);
        let mut session = Session::open(&backend, &core_selection(), options(true)).unwrap();
        for _ in 0..2 {
            let interval = session.interval().unwrap();
            let t = &interval.topdown;
            assert_eq!(t.len(), 1, "{t:?}");
            // 1000 x 1000 slots per second (the steady pace, SLOTS_PER_EVENT) for 10 ms.
            assert_eq!(t[0].slots, 10_000);
            assert_eq!(t[0].perf_metrics, SimTopdown::DEMO_PROFILE & 0xFFFF_FFFF);
        }
        session.close().unwrap();
        assert_eq!(regs(&machine, 0), before);
    }

    #[test]
    fn fixed_counter_3_in_use_elsewhere_is_refused_before_anything_is_written() {
        let icx = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == "ice-lake-sp")
            .unwrap();
        let machine = Machine::simulating(icx);
        write(&machine, 0, "IA32_FIXED_CTR_CTRL", 0b11 << 12);
        let before = regs(&machine, 0);
        let backend = SessionBackend::Registers(&machine);
        let (_, writes) = machine.access_counts();
        let Err(e) = Session::open(&backend, &core_selection(), options(true)) else {
            panic!("fixed counter 3 taken from another user");
        };
        assert!(e.to_string().contains("--force"), "{e}");
        // Refused before the first write: not even the core box was programmed.
        assert_eq!(machine.access_counts().1, writes);
        assert_eq!(regs(&machine, 0), before);
        // A core without the registers: refused too, nothing left programmed.
        let skx = Machine::simulating(&pmu_regs::skylake_sp::PROCESSOR);
        let backend = SessionBackend::Registers(&skx);
        assert!(Session::open(&backend, &core_selection(), options(true)).is_err());
    }

    /// A virtual machine may run an Ice Lake core whose CPUID leaf 0AH leaves fixed counter 3
    /// out: the session asks CPUID (the count in EDX[4:0], and from version 5 the bitmap in
    /// ECX) and refuses before its first write, saying what CPUID reports.
    #[test]
    fn a_core_whose_cpuid_hides_fixed_counter_3_is_refused_before_any_write() {
        use pmu_runtime::sim::{ArchConfig, SimConfig};
        let icx = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == "ice-lake-sp")
            .unwrap();
        let hidden = |fixed_counters, fixed_mask| {
            Machine::simulated(SimConfig {
                arch: ArchConfig {
                    fixed_counters,
                    fixed_mask,
                    ..ArchConfig::of(icx)
                },
                ..SimConfig::of(icx)
            })
        };
        // Three fixed counters and no bitmap: counter 3 is not there.
        let machine = hidden(3, 0);
        let backend = SessionBackend::Registers(&machine);
        let Err(e) = Session::open(&backend, &core_selection(), options(true)) else {
            panic!("fixed counter 3 used where CPUID does not enumerate it");
        };
        let text = e.to_string();
        assert!(text.contains("fixed counter 3"), "{text}");
        assert!(text.contains("fixed counters 0, 1, 2"), "{text}");
        assert_eq!(machine.access_counts().1, 0, "a register was written");
        // The bitmap alone may enumerate it (a count of 0, ECX bits 0-3): then it counts.
        let machine = hidden(0, 0b1111);
        let backend = SessionBackend::Registers(&machine);
        let mut session = Session::open(&backend, &core_selection(), options(true)).unwrap();
        assert_eq!(session.interval().unwrap().topdown[0].slots, 10_000);
        session.close().unwrap();
        // Counter 3 enumerated but counters 0-2 bitmapped out: counter 3 is still there.
        let machine = hidden(0, 0b1000);
        let backend = SessionBackend::Registers(&machine);
        assert!(Session::open(&backend, &core_selection(), options(true)).is_ok());
    }
}
