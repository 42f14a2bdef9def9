//! What the simulator's counters count under a named workload, from the control values the
//! SDM describes (addresses and bits from SDM Vol. 3B 20.2, not from the spec), against
//! counts worked out by hand from the workload's published numbers
//! (`runtime/src/sim/workloads.rs`).
//!
//! Compute-bound, `INST_RETIRED.ANY_P` (event 0xC0, umask 0x00): each period of 1000 cycles
//! has 300 cycles of 4 instructions, 200 of 3, 200 of 2, 100 of 1 and 200 of none, the first
//! 50 cycles (all in the run of 4) in kernel mode; the core clock is 2 GHz. In 1 ms, 2,000,000
//! cycles, 2000 periods:
//!
//! | control | per period | in 1 ms |
//! |---|---|---|
//! | USR+OS | 1200 + 600 + 400 + 100 = 2300 | 4,600,000 |
//! | USR only | 2300 - 4 x 50 = 2100 | 4,200,000 |
//! | OS only | 4 x 50 = 200 | 400,000 |
//! | neither | 0 | 0 |
//! | CMASK 1 (cycles with >= 1) | 800 | 1,600,000 |
//! | CMASK 1, INV (cycles with none) | 200 | 400,000 |
//! | CMASK 3 | 300 + 200 = 500 | 1,000,000 |
//! | CMASK 1, E (rising edges) | 1 (the run of 4 after the run of none, at cycle 0) | 2000 |
//! | CMASK 1, E, USR only | 0 (that edge is at cycle 0, in kernel mode) | 0 |
//! | ANY (both threads, in step) | 2 x 2300 | 9,200,000 |
//! | ANY, CMASK 5 (cycles with >= 5 of both threads: 2 x 4 and 2 x 3) | 500 | 1,000,000 |

use std::time::Duration;

use pmu_runtime::sim::workloads::{COMPUTE_BOUND, IDLE};
use pmu_runtime::sim::{Sim, SimConfig};
use pmu_runtime::MsrAccess;

// SDM Vol. 3B, 20.2: the architectural MSRs.
const IA32_PMC0: u32 = 0xC1;
const IA32_PERFEVTSEL0: u32 = 0x186;
const IA32_FIXED_CTR0: u32 = 0x309;
const IA32_FIXED_CTR_CTRL: u32 = 0x38D;
const IA32_PERF_GLOBAL_CTRL: u32 = 0x38F;

// IA32_PERFEVTSELx bits.
const USR: u64 = 1 << 16;
const OS: u64 = 1 << 17;
const EDGE: u64 = 1 << 18;
const ANY: u64 = 1 << 21;
const EN: u64 = 1 << 22;
const INV: u64 = 1 << 23;
const fn cmask(c: u64) -> u64 {
    c << 24
}
const INST_RETIRED_ANY_P: u64 = 0xC0;

/// What four general counters with controls `sels` and fixed counters 0 and 1 (instructions,
/// cycles; USR+OS) count on CPU 0 of a simulated Skylake-SP in `ms` ms of `workload`.
fn count(
    workload: &'static pmu_runtime::sim::NamedWorkload,
    sels: [u64; 4],
    ms: u64,
) -> ([u64; 4], [u64; 2]) {
    let sim = Sim::new(SimConfig::of(&pmu_regs::skylake_sp::PROCESSOR));
    for (n, sel) in sels.iter().enumerate() {
        sim.write_msr(0, IA32_PERFEVTSEL0 + n as u32, *sel).unwrap();
    }
    // Fixed counters 0 and 1: OS and USR (0b11 in each nibble).
    sim.write_msr(0, IA32_FIXED_CTR_CTRL, 0x33).unwrap();
    sim.write_msr(0, IA32_PERF_GLOBAL_CTRL, 0b1111 | 0b11 << 32)
        .unwrap();
    let id = sim.run_named(workload);
    sim.advance(&[id], Duration::from_millis(ms)).unwrap();
    let gp = [0, 1, 2, 3].map(|n| sim.read_msr(0, IA32_PMC0 + n).unwrap());
    let fixed = [0, 1].map(|n| sim.read_msr(0, IA32_FIXED_CTR0 + n).unwrap());
    (gp, fixed)
}

#[test]
fn privilege_bits_count_their_modes_and_neither_counts_nothing() {
    let e = INST_RETIRED_ANY_P | EN;
    let (gp, fixed) = count(&COMPUTE_BOUND, [e | USR | OS, e | USR, e | OS, e], 1);
    assert_eq!(gp, [4_600_000, 4_200_000, 400_000, 0]);
    // Fixed counter 0 is instructions retired, fixed counter 1 unhalted cycles.
    assert_eq!(fixed, [4_600_000, 2_000_000]);
}

#[test]
fn counter_mask_invert_and_edge_count_cycles_and_their_starts() {
    let e = INST_RETIRED_ANY_P | EN | USR | OS;
    let (gp, fixed) = count(
        &COMPUTE_BOUND,
        [
            e | cmask(1),
            e | cmask(1) | INV,
            e | cmask(3),
            e | cmask(1) | EDGE,
        ],
        1,
    );
    assert_eq!(gp, [1_600_000, 400_000, 1_000_000, 2000]);
    // Cycles with an instruction plus cycles without are all cycles.
    assert_eq!(gp[0] + gp[1], fixed[1]);
}

#[test]
fn edges_in_kernel_mode_are_not_counted_in_user_mode_and_any_thread_adds_the_sibling() {
    let e = INST_RETIRED_ANY_P | EN;
    let (gp, _) = count(
        &COMPUTE_BOUND,
        [
            e | USR | cmask(1) | EDGE,
            e | USR | OS | ANY,
            e | USR | OS | ANY | cmask(5),
            e | USR | OS | cmask(1) | EDGE,
        ],
        1,
    );
    // Any-thread adds the sibling, 500 cycles behind: 2 x 2300 instructions a period; with a
    // counter mask of 5, this thread's 4, 4, 3, 2, 1, 0 in [0,200), [200,300), [300,500),
    // [500,700), [700,800), [800,1000) plus the sibling's 2, 1, 0, 4, 4, 3 there: 6, 5, 3,
    // 6, 5, 3, at least 5 in 200 + 100 + 200 + 100 = 600 cycles a period.
    assert_eq!(gp, [0, 9_200_000, 1_200_000, 2000]);
}

#[test]
fn a_reading_split_in_two_adds_up_to_the_whole() {
    // The idle workload: 40 unhalted cycles of 1000 (CPU_CLK_UNHALTED.THREAD_P, 0x3C),
    // 30 instructions; 0.5 ms + 0.5 ms = 1 ms = 2000 periods.
    let sels = [
        0x3C | EN | USR | OS,
        INST_RETIRED_ANY_P | EN | USR | OS,
        0,
        0,
    ];
    let sim = Sim::new(SimConfig::of(&pmu_regs::skylake_sp::PROCESSOR));
    for (n, sel) in sels.iter().enumerate() {
        sim.write_msr(0, IA32_PERFEVTSEL0 + n as u32, *sel).unwrap();
    }
    sim.write_msr(0, IA32_PERF_GLOBAL_CTRL, 0b11).unwrap();
    let id = sim.run_named(&IDLE);
    sim.advance(&[id], Duration::from_micros(500)).unwrap();
    let half = sim.read_msr(0, IA32_PMC0).unwrap();
    sim.advance(&[id], Duration::from_millis(1)).unwrap();
    assert_eq!(half, 40 * 1000);
    assert_eq!(sim.read_msr(0, IA32_PMC0).unwrap(), 40 * 2000);
    assert_eq!(sim.read_msr(0, IA32_PMC0 + 1).unwrap(), 30 * 2000);
    // The whole in one reading: the same.
    let (gp, fixed) = count(&IDLE, sels, 1);
    assert_eq!(gp[..2], [80_000, 60_000]);
    assert_eq!(fixed, [60_000, 80_000]);
}
