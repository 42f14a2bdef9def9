//! The named workloads a simulated machine runs (`pmu watch --sim --workload NAME`, `pmu list
//! --workloads`), defined once here as data.
//!
//! A workload says, for each event it names, how many of it happen in each cycle of one
//! hardware thread (a [`CyclePattern`] of [`counting::PERIOD`] cycles: core events on the core
//! clock, uncore and L3 events on the uncore clock), the first [`NamedWorkload::kernel`]
//! cycles of each period in kernel mode. Events are named as their vendor's list names them
//! and found by what they are: the simulator resolves each name through the simulated
//! processor's own event lists to its unit, event select and unit mask, and a counter whose
//! control selects that encoding counts the pattern as [`counting`] says (counter mask,
//! invert, edge, USR/OS, any-thread). A name whose list gives it a counter mask `c`
//! (`CYCLE_ACTIVITY.CYCLES_MEM_ANY`) names the cycles its condition holds: its encoding then
//! has `c` events in each of them (more where the pattern gives more), unless the workload
//! names the encoding's plain event too; with edge detect too (`MACHINE_CLEARS.COUNT`) the
//! pattern is still the cycles the condition holds, and the count its rising edges. A name
//! prefixed `raw:` applies only where the list gives that name a counter mask: it gives the
//! encoding's own events in each cycle (`raw:INT_MISC.RECOVERY_CYCLES`, where its unit mask
//! combines two conditions that can hold in one cycle), so that dropping the counter mask
//! counts differently, as it would on hardware.
//! A name prefixed `@N:` applies only on a core with `N`
//! pipeline slots a cycle (the `slots_per_cycle` the simulator finds in its event lists), before the plain name's
//! entry. An event the workload does not name counts
//! [`NamedWorkload::default`]: its documented default, a rare event.
//!
//! The numbers make a possible machine (per period of 1000 cycles, by hand):
//!
//! | | compute-bound | memory-bound | idle |
//! |---|---|---|---|
//! | core clock (and time-stamp counter) | 2.0 GHz | 2.0 GHz | 2.0 GHz, unhalted 40 of 1000 cycles |
//! | instructions (IPC) | 2300 (2.3) | 400 (0.4) | 30 (0.75 per unhalted cycle) |
//! | top-down, 4, 5 or 6 slots a cycle (Intel) | retiring 70 %, bad speculation 5 %, frontend 10 %, backend 15 % | 12 / 3 / 5 / 80 % | 25 / 5 / 30 / 40 % |
//! | top-down, 6 or 8 slots a cycle (AMD) | retiring 60 %, bad speculation 5 %, frontend 10 %, backend 20 %, SMT contention 5 % | 10 / 3 / 5 / 80 / 2 % | 25 / 5 / 30 / 35 / 5 % |
//! | LLC references / misses (hit rate) | 20 / 2 (90 %) | 40 / 30 (25 %) | 2 / 1 (50 %) |
//! | CAS reads / writes per channel, per 1000 uncore cycles at 2 GHz | 8 / 4 (1.02 / 0.51 GB/s) | 94 / 40 (12.03 / 5.12 GB/s) | 1 / 1 (0.13 / 0.13 GB/s) |
//!
//! Intel's level 1 (SDM-era formulas, Skylake-SP to Cascade Lake): slots = 4 x core cycles;
//! frontend = IDQ_UOPS_NOT_DELIVERED.CORE; bad speculation = UOPS_ISSUED.ANY -
//! UOPS_RETIRED.RETIRE_SLOTS + 4 x INT_MISC.RECOVERY_CYCLES; retiring =
//! UOPS_RETIRED.RETIRE_SLOTS; backend the rest. From Ice Lake on, IA32_PERF_METRICS reads
//! [`NamedWorkload::perf_metrics`], the same shares in 255ths. AMD's (Zen 4 and 5) are
//! `de_no_dispatch_per_slot.*`, `de_src_op_disp.all - ex_ret_ops` and `ex_ret_ops` over six
//! slots a cycle.

use super::counting::{self, run, CyclePattern, Run};

/// One named workload.
#[derive(Debug, PartialEq, Eq)]
pub struct NamedWorkload {
    /// Its name (`compute-bound`).
    pub name: &'static str,
    /// What it is, in one line.
    pub summary: &'static str,
    /// The core clock, MHz (also the time-stamp counter's: reference cycles equal unhalted
    /// core cycles).
    pub core_mhz: u64,
    /// The uncore clock, MHz: every uncore and L3 box's.
    pub uncore_mhz: u64,
    /// Cycles of each period in kernel mode (the period's first ones).
    pub kernel: u64,
    /// Cycles of each period a thread runs (the period's first ones; the rest it is halted,
    /// and its core counters count nothing).
    pub unhalted: u64,
    /// What IA32_PERF_METRICS reads (Ice Lake and later): retiring, bad speculation,
    /// frontend bound, backend bound, heavy operations, branch mispredicts, fetch latency,
    /// memory bound, one byte each from byte 0, in 255ths (level 1 summing to 255).
    pub perf_metrics: u64,
    /// Each event it names (as its vendor's list does) and its pattern.
    pub events: &'static [(&'static str, &'static [Run])],
    /// What an event it does not name counts.
    pub default: &'static [Run],
}

impl NamedWorkload {
    /// Event `name`'s pattern (the default for one the workload does not name).
    pub fn pattern_of(&self, name: &str) -> CyclePattern {
        let runs = self
            .events
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map_or(self.default, |(_, r)| *r);
        self.pattern(runs)
    }

    /// `runs` in this workload's modes, on a core (counted only while its thread runs).
    pub fn pattern(&self, runs: &'static [Run]) -> CyclePattern {
        CyclePattern {
            runs,
            kernel: self.kernel,
            unhalted: self.unhalted,
        }
    }

    /// `runs` on an uncore clock, which never halts.
    pub fn uncore_pattern(&self, runs: &'static [Run]) -> CyclePattern {
        CyclePattern {
            unhalted: counting::PERIOD,
            ..self.pattern(runs)
        }
    }

    /// Core cycles (unhalted or not) in one period: [`counting::PERIOD`].
    pub const PERIOD: u64 = counting::PERIOD;
}

/// The workloads, the default ([`DEFAULT_WORKLOAD`]) first.
pub const WORKLOADS: &[&NamedWorkload] = &[&COMPUTE_BOUND, &MEMORY_BOUND, &IDLE];

/// The workload `--sim` runs unless `--workload` names another.
pub const DEFAULT_WORKLOAD: &str = COMPUTE_BOUND.name;

/// The workload called [`DEFAULT_WORKLOAD`].
pub fn default_workload() -> &'static NamedWorkload {
    &COMPUTE_BOUND
}

/// The workload called `name` (case-insensitive).
pub fn workload(name: &str) -> Option<&'static NamedWorkload> {
    WORKLOADS
        .iter()
        .copied()
        .find(|w| w.name.eq_ignore_ascii_case(name))
}

/// The workload called `name`, or an error that lists them (`--workload`).
pub fn workload_named(name: &str) -> Result<&'static NamedWorkload, crate::error::UsageError> {
    workload(name).ok_or_else(|| crate::error::UsageError::BadValue {
        text: name.to_string(),
        expected: format!(
            "a simulated workload: {} (`pmu list --workloads` describes them)",
            WORKLOADS
                .iter()
                .map(|w| w.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// `pmu list --workloads`: each workload's name and summary, one a line, the default
/// marked; as JSON, an array of `{name, default, summary, core_ghz}` objects.
pub fn list_workloads(json: bool) -> String {
    if json {
        let quote = |t: &str| format!("\"{}\"", t.replace('\\', "\\\\").replace('"', "\\\""));
        let rows: Vec<String> = WORKLOADS
            .iter()
            .map(|w| {
                format!(
                    "{{\"name\":{},\"default\":{},\"summary\":{},\"core_ghz\":{}}}",
                    quote(w.name),
                    w.name == DEFAULT_WORKLOAD,
                    quote(w.summary),
                    w.core_mhz as f64 / 1000.0
                )
            })
            .collect();
        return format!("[{}]\n", rows.join(","));
    }
    let mut out = String::new();
    for w in WORKLOADS {
        let default = if w.name == DEFAULT_WORKLOAD {
            " (default)"
        } else {
            ""
        };
        out.push_str(&format!("{:<14} {}{default}\n", w.name, w.summary));
    }
    out
}

/// Every cycle busy, one event each: unhalted cycles of a busy thread.
const ALL: &[Run] = &[run(1, 1000)];

/// No event in any cycle.
const NONE: &[Run] = &[run(0, 1000)];

/// `n` cycles with one event, then none: `n` events a period.
macro_rules! ones {
    ($n:expr) => {
        &[run(1, $n), run(0, 1000 - $n)]
    };
}

/// Compute-bound's recoveries as a list that gives INT_MISC.RECOVERY_CYCLES a counter mask
/// sees them: two events in the first two cycles of each.
const RAW_RECOVERY_COMPUTE: &[Run] = &[
    run(2, 2),
    run(1, 3),
    run(0, 195),
    run(2, 2),
    run(1, 3),
    run(0, 195),
    run(2, 2),
    run(1, 3),
    run(0, 195),
    run(2, 2),
    run(1, 3),
    run(0, 195),
    run(2, 2),
    run(1, 3),
    run(0, 195),
];

/// A loop of compute: IPC 2.3, few misses, 5 % of the time in the kernel.
pub const COMPUTE_BOUND: NamedWorkload = NamedWorkload {
    name: "compute-bound",
    summary:
        "a compute loop: IPC 2.3, 90 % LLC hits, 1 GB/s read per memory channel, mostly retiring",
    core_mhz: 2000,
    uncore_mhz: 2000,
    kernel: 50,
    unhalted: 1000,
    // 0xB3 (70 %), 0x0D (5 %), 0x1A (10 %), 0x25 (15 %): 179 + 13 + 26 + 37 = 255; heavy
    // operations 0x0A, mispredicts 0x0A, fetch latency 0x10, memory bound 0x0C.
    perf_metrics: 0x0C10_0A0A_251A_0DB3,
    events: &[
        // Intel (core). With SMT the core's clocks shared out between its threads
        // (CPU_CLK_UNHALTED.DISTRIBUTED) are what CPU_CLK_UNHALTED.THREAD_P_ANY / 2 gives:
        // the two threads' cycles, halved.
        ("CPU_CLK_UNHALTED.THREAD_P", ALL),
        ("CPU_CLK_UNHALTED.DISTRIBUTED", ALL),
        (
            "INST_RETIRED.ANY_P",
            &[
                run(4, 300),
                run(3, 200),
                run(2, 200),
                run(1, 100),
                run(0, 200),
            ],
        ),
        (
            "UOPS_RETIRED.RETIRE_SLOTS",
            &[run(4, 600), run(2, 200), run(0, 200)],
        ),
        (
            "UOPS_RETIRED.SLOTS",
            &[run(4, 600), run(2, 200), run(0, 200)],
        ),
        ("L2_LINES_IN.ALL", ones!(30)),
        // Five and six slots a cycle (Ice Lake; Sapphire Rapids on): some cycles with none
        // delivered at all.
        (
            "@5:IDQ_UOPS_NOT_DELIVERED.CORE",
            &[run(5, 40), run(3, 100), run(0, 860)],
        ),
        (
            "@6:IDQ_UOPS_NOT_DELIVERED.CORE",
            &[run(6, 40), run(3, 100), run(0, 860)],
        ),
        ("UOPS_ISSUED.ANY", &[run(4, 650), run(3, 100), run(0, 250)]),
        // Five recoveries of five cycles: four mispredicts and one machine clear.
        (
            "INT_MISC.RECOVERY_CYCLES",
            &[
                run(1, 5),
                run(0, 195),
                run(1, 5),
                run(0, 195),
                run(1, 5),
                run(0, 195),
                run(1, 5),
                run(0, 195),
                run(1, 5),
                run(0, 195),
            ],
        ),
        // Where the list gives INT_MISC.RECOVERY_CYCLES a counter mask of 1 (its unit mask
        // two conditions, 0x03), both hold in the first two cycles of each recovery.
        ("raw:INT_MISC.RECOVERY_CYCLES", RAW_RECOVERY_COMPUTE),
        ("MACHINE_CLEARS.COUNT", ones!(1)),
        ("INT_MISC.UOP_DROPPING", ones!(1)),
        (
            "IDQ_UOPS_NOT_DELIVERED.CORE",
            &[run(4, 50), run(2, 100), run(0, 850)],
        ),
        ("LONGEST_LAT_CACHE.REFERENCE", ones!(20)),
        ("LONGEST_LAT_CACHE.MISS", ones!(2)),
        ("BR_INST_RETIRED.ALL_BRANCHES", ones!(400)),
        ("BR_MISP_RETIRED.ALL_BRANCHES", ones!(4)),
        // Of the four mispredicts, three conditional: two taken, one not.
        ("BR_MISP_RETIRED.COND", ones!(3)),
        ("BR_MISP_RETIRED.COND_TAKEN", ones!(2)),
        ("BR_INST_RETIRED.CONDITIONAL", ones!(300)),
        ("BR_INST_RETIRED.COND", ones!(300)),
        ("BR_INST_RETIRED.COND_TAKEN", ones!(200)),
        ("BR_INST_RETIRED.COND_NTAKEN", ones!(100)),
        ("BR_INST_RETIRED.NOT_TAKEN", ones!(100)),
        ("BR_INST_RETIRED.NEAR_TAKEN", ones!(260)),
        ("BR_INST_RETIRED.NEAR_CALL", ones!(20)),
        ("BR_INST_RETIRED.NEAR_RETURN", ones!(20)),
        ("CYCLE_ACTIVITY.CYCLES_MEM_ANY", ones!(300)),
        ("MEMORY_ACTIVITY.CYCLES_L1D_MISS", ones!(100)),
        ("CYCLE_ACTIVITY.CYCLES_L1D_MISS", ones!(100)),
        ("ASSISTS.SSE_AVX_MIX", NONE),
        // Forty microcode-sequencer uops in ten cycles: the one assist (Intel's top-down
        // charges 34 slots to each, and its Assists node sits under the Microcode_Sequencer
        // one, so the sequencer's uops must cover it) and a few microcoded instructions.
        ("IDQ.MS_UOPS", &[run(4, 10), run(0, 990)]),
        (
            "MEM_INST_RETIRED.ALL_LOADS",
            &[run(2, 250), run(1, 100), run(0, 650)],
        ),
        ("MEM_INST_RETIRED.ALL_STORES", ones!(250)),
        // Intel E-cores (Sierra Forest): level 1 counted per slot, six slots a cycle, the
        // same shares: retiring 4200, bad speculation 300, frontend 600, backend 900 of 6000.
        ("CPU_CLK_UNHALTED.CORE_P", ALL),
        (
            "TOPDOWN_RETIRING.ALL_P",
            &[run(6, 600), run(4, 150), run(0, 250)],
        ),
        ("TOPDOWN_BAD_SPECULATION.ALL_P", &[run(6, 50), run(0, 950)]),
        (
            "TOPDOWN_FE_BOUND.ALL_P",
            &[run(6, 50), run(3, 100), run(0, 850)],
        ),
        ("TOPDOWN_BE_BOUND.ALL_P", &[run(6, 150), run(0, 850)]),
        // Intel (uncore, per uncore cycle).
        ("UNC_M_CAS_COUNT.RD", ones!(8)),
        ("UNC_M_CAS_COUNT.WR", ones!(4)),
        ("UNC_UPI_TxL_FLITS.ALL_DATA", ones!(1)),
        ("UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.ALL_PARTS", ones!(1)),
        ("UNC_IIO_DATA_REQ_OF_CPU.MEM_WRITE.ALL_PARTS", ones!(1)),
        // Granite Rapids counts each channel's two sub-channels apart.
        ("UNC_M_CAS_COUNT_SCH0.RD", ones!(4)),
        ("UNC_M_CAS_COUNT_SCH1.RD", ones!(4)),
        ("UNC_M_CAS_COUNT_SCH0.WR", ones!(2)),
        ("UNC_M_CAS_COUNT_SCH1.WR", ones!(2)),
        // AMD (core, six dispatch slots a cycle).
        ("ls_not_halted_cyc", ALL),
        (
            "ex_ret_instr",
            &[
                run(4, 300),
                run(3, 200),
                run(2, 200),
                run(1, 100),
                run(0, 200),
            ],
        ),
        ("ex_ret_ops", &[run(6, 500), run(4, 150), run(0, 350)]),
        (
            "de_src_op_disp.all",
            &[run(6, 550), run(4, 150), run(0, 300)],
        ),
        (
            "de_no_dispatch_per_slot.no_ops_from_frontend",
            &[run(6, 50), run(3, 100), run(0, 850)],
        ),
        (
            "de_no_dispatch_per_slot.backend_stalls",
            &[run(6, 150), run(3, 100), run(0, 750)],
        ),
        (
            "de_no_dispatch_per_slot.smt_contention",
            &[run(3, 100), run(0, 900)],
        ),
        ("ex_ret_brn_misp", ones!(4)),
        ("resyncs_or_nc_redirects", ones!(1)),
        ("bp_redirects.resync", ones!(1)),
        ("bp_fe_redir.resync", ones!(1)),
        ("ex_ret_ucode_ops", ones!(36)),
        ("ex_no_retire.load_not_complete", ones!(100)),
        ("ex_no_retire.not_complete", ones!(300)),
        // Zen 5 dispatches eight slots a cycle: the same shares of eight.
        ("@8:ex_ret_ops", &[run(8, 500), run(4, 200), run(0, 300)]),
        (
            "@8:de_src_op_disp.all",
            &[run(8, 550), run(4, 200), run(0, 250)],
        ),
        (
            "@8:de_no_dispatch_per_slot.no_ops_from_frontend",
            &[run(8, 50), run(4, 100), run(0, 850)],
        ),
        (
            "@8:de_no_dispatch_per_slot.backend_stalls",
            &[run(8, 150), run(4, 100), run(0, 750)],
        ),
        (
            "@8:de_no_dispatch_per_slot.smt_contention",
            &[run(4, 100), run(0, 900)],
        ),
        // AMD (L3 and memory, per uncore cycle).
        ("l3_lookup_state.all_coherent_accesses_to_l3", ones!(20)),
        ("l3_lookup_state.all_l3_req_typs", ones!(20)),
        ("l3_lookup_state.l3_miss", ones!(2)),
        ("l3_misses", ones!(2)),
        ("umc_cas_cmd.rd", ones!(8)),
        ("umc_cas_cmd.wr", ones!(4)),
        // Zen 2 and 3 count each DRAM channel's reads and writes together.
        ("dram_channel_data_controller_0", ones!(12)),
        ("dram_channel_data_controller_1", ones!(12)),
        ("dram_channel_data_controller_2", ones!(12)),
        ("dram_channel_data_controller_3", ones!(12)),
        ("dram_channel_data_controller_4", ones!(12)),
        ("dram_channel_data_controller_5", ones!(12)),
        ("dram_channel_data_controller_6", ones!(12)),
        ("dram_channel_data_controller_7", ones!(12)),
    ],
    default: ones!(1),
};

/// Streaming through memory: IPC 0.4, most LLC references miss, 12 GB/s read per channel.
pub const MEMORY_BOUND: NamedWorkload = NamedWorkload {
    name: "memory-bound",
    summary: "streaming through memory: IPC 0.4, 25 % LLC hits, 12 GB/s read per memory channel, mostly backend bound",
    core_mhz: 2000,
    uncore_mhz: 2000,
    kernel: 50,
    unhalted: 1000,
    // 0x1F (12 %), 0x08 (3 %), 0x0D (5 %), 0xCB (80 %): 31 + 8 + 13 + 203 = 255; heavy
    // operations 0x06, mispredicts 0x05, fetch latency 0x0A, memory bound 0xB4 (no two
    // bytes alike, so a byte read from the wrong place shows).
    perf_metrics: 0xB40A_0506_CB0D_081F,
    events: &[
        ("CPU_CLK_UNHALTED.THREAD_P", ALL),
        ("CPU_CLK_UNHALTED.DISTRIBUTED", ALL),
        ("INST_RETIRED.ANY_P", &[run(2, 100), run(1, 200), run(0, 700)]),
        ("UOPS_RETIRED.RETIRE_SLOTS", &[run(4, 100), run(1, 80), run(0, 820)]),
        ("UOPS_RETIRED.SLOTS", &[run(4, 100), run(1, 80), run(0, 820)]),
        ("L2_LINES_IN.ALL", ones!(60)),
        ("@5:IDQ_UOPS_NOT_DELIVERED.CORE", &[run(5, 20), run(1, 100), run(0, 880)]),
        ("@6:IDQ_UOPS_NOT_DELIVERED.CORE", &[run(6, 20), run(1, 100), run(0, 880)]),
        ("UOPS_ISSUED.ANY", &[run(4, 110), run(1, 80), run(0, 810)]),
        // Four recoveries of five cycles, in the period's first half (the sibling thread,
        // half a period behind, recovers in other cycles): two mispredicts and two machine
        // clears.
        ("INT_MISC.RECOVERY_CYCLES", &[
            run(1, 5), run(0, 95), run(1, 5), run(0, 145),
            run(1, 5), run(0, 95), run(1, 5), run(0, 645),
        ]),
        ("raw:INT_MISC.RECOVERY_CYCLES", &[
            run(2, 2), run(1, 3), run(0, 95), run(2, 2), run(1, 3), run(0, 145),
            run(2, 2), run(1, 3), run(0, 95), run(2, 2), run(1, 3), run(0, 645),
        ]),
        // The two clears, five cycles each (the edges of their cycles count).
        ("MACHINE_CLEARS.COUNT", &[run(0, 250), run(1, 5), run(0, 95), run(1, 5), run(0, 645)]),
        ("INT_MISC.UOP_DROPPING", ones!(3)),
        ("IDQ_UOPS_NOT_DELIVERED.CORE", &[run(4, 25), run(1, 100), run(0, 875)]),
        ("LONGEST_LAT_CACHE.REFERENCE", ones!(40)),
        ("LONGEST_LAT_CACHE.MISS", ones!(30)),
        ("BR_INST_RETIRED.ALL_BRANCHES", ones!(60)),
        // Two mispredicts, both conditional: one taken, one not.
        ("BR_MISP_RETIRED.ALL_BRANCHES", ones!(2)),
        ("BR_MISP_RETIRED.COND", ones!(2)),
        ("BR_MISP_RETIRED.COND_TAKEN", ones!(1)),
        ("BR_INST_RETIRED.CONDITIONAL", ones!(45)),
        ("BR_INST_RETIRED.COND", ones!(45)),
        ("BR_INST_RETIRED.COND_TAKEN", ones!(30)),
        ("BR_INST_RETIRED.COND_NTAKEN", ones!(15)),
        ("BR_INST_RETIRED.NOT_TAKEN", ones!(15)),
        ("BR_INST_RETIRED.NEAR_TAKEN", ones!(40)),
        ("BR_INST_RETIRED.NEAR_CALL", ones!(3)),
        ("BR_INST_RETIRED.NEAR_RETURN", ones!(3)),
        ("CYCLE_ACTIVITY.CYCLES_MEM_ANY", ones!(900)),
        ("MEMORY_ACTIVITY.CYCLES_L1D_MISS", ones!(800)),
        ("CYCLE_ACTIVITY.CYCLES_L1D_MISS", ones!(800)),
        ("ASSISTS.SSE_AVX_MIX", NONE),
        // As compute-bound: the sequencer's uops cover the one assist.
        ("IDQ.MS_UOPS", &[run(4, 10), run(0, 990)]),
        ("MEM_INST_RETIRED.ALL_LOADS", ones!(150)),
        ("MEM_INST_RETIRED.ALL_STORES", ones!(50)),
        // E-cores: 720 / 180 / 300 / 4800 of 6000 slots.
        ("CPU_CLK_UNHALTED.CORE_P", ALL),
        ("TOPDOWN_RETIRING.ALL_P", &[run(6, 100), run(4, 30), run(0, 870)]),
        ("TOPDOWN_BAD_SPECULATION.ALL_P", &[run(6, 30), run(0, 970)]),
        ("TOPDOWN_FE_BOUND.ALL_P", &[run(6, 50), run(0, 950)]),
        ("TOPDOWN_BE_BOUND.ALL_P", &[run(6, 800), run(0, 200)]),
        ("UNC_M_CAS_COUNT.RD", ones!(94)),
        ("UNC_M_CAS_COUNT.WR", ones!(40)),
        ("UNC_UPI_TxL_FLITS.ALL_DATA", ones!(36)),
        ("UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.ALL_PARTS", ones!(16)),
        ("UNC_IIO_DATA_REQ_OF_CPU.MEM_WRITE.ALL_PARTS", ones!(8)),
        // Granite Rapids counts each channel's two sub-channels apart.
        ("UNC_M_CAS_COUNT_SCH0.RD", ones!(47)),
        ("UNC_M_CAS_COUNT_SCH1.RD", ones!(47)),
        ("UNC_M_CAS_COUNT_SCH0.WR", ones!(20)),
        ("UNC_M_CAS_COUNT_SCH1.WR", ones!(20)),
        ("ls_not_halted_cyc", ALL),
        ("ex_ret_instr", &[run(2, 100), run(1, 200), run(0, 700)]),
        ("ex_ret_ops", &[run(6, 100), run(0, 900)]),
        ("de_src_op_disp.all", &[run(6, 100), run(3, 60), run(0, 840)]),
        ("de_no_dispatch_per_slot.no_ops_from_frontend", &[run(6, 25), run(3, 50), run(0, 925)]),
        ("de_no_dispatch_per_slot.backend_stalls", &[run(6, 800), run(0, 200)]),
        ("de_no_dispatch_per_slot.smt_contention", &[run(3, 40), run(0, 960)]),
        ("ex_ret_brn_misp", ones!(1)),
        ("resyncs_or_nc_redirects", ones!(1)),
        ("bp_redirects.resync", ones!(1)),
        ("bp_fe_redir.resync", ones!(1)),
        ("ex_ret_ucode_ops", ones!(6)),
        ("ex_no_retire.load_not_complete", ones!(700)),
        ("ex_no_retire.not_complete", ones!(800)),
        ("@8:ex_ret_ops", &[run(8, 100), run(0, 900)]),
        ("@8:de_src_op_disp.all", &[run(8, 100), run(4, 60), run(0, 840)]),
        ("@8:de_no_dispatch_per_slot.no_ops_from_frontend", &[run(8, 25), run(4, 50), run(0, 925)]),
        ("@8:de_no_dispatch_per_slot.backend_stalls", &[run(8, 800), run(0, 200)]),
        ("@8:de_no_dispatch_per_slot.smt_contention", &[run(4, 40), run(0, 960)]),
        ("l3_lookup_state.all_coherent_accesses_to_l3", ones!(40)),
        ("l3_lookup_state.all_l3_req_typs", ones!(40)),
        ("l3_lookup_state.l3_miss", ones!(30)),
        ("l3_misses", ones!(30)),
        ("umc_cas_cmd.rd", ones!(94)),
        ("umc_cas_cmd.wr", ones!(40)),
        // Zen 2 and 3 count each DRAM channel's reads and writes together.
        ("dram_channel_data_controller_0", ones!(134)),
        ("dram_channel_data_controller_1", ones!(134)),
        ("dram_channel_data_controller_2", ones!(134)),
        ("dram_channel_data_controller_3", ones!(134)),
        ("dram_channel_data_controller_4", ones!(134)),
        ("dram_channel_data_controller_5", ones!(134)),
        ("dram_channel_data_controller_6", ones!(134)),
        ("dram_channel_data_controller_7", ones!(134)),
    ],
    default: ones!(1),
};

/// Busy 40 cycles in 1000 (4 %), mostly in the kernel.
const BUSY_IDLE: &[Run] = &[run(1, 40), run(0, 960)];

/// A machine at rest: halted 96 % of the time, what runs mostly the kernel's.
pub const IDLE: NamedWorkload = NamedWorkload {
    name: "idle",
    summary:
        "at rest: unhalted 4 % of the time, mostly in the kernel; 0.13 GB/s per memory channel",
    core_mhz: 2000,
    uncore_mhz: 2000,
    kernel: 30,
    unhalted: 40,
    // 0x40 (25 %), 0x0D (5 %), 0x4C (30 %), 0x66 (40 %): 64 + 13 + 76 + 102 = 255; heavy
    // operations 0x08, mispredicts 0x08, fetch latency 0x3C, memory bound 0x30.
    perf_metrics: 0x303C_0808_664C_0D40,
    events: &[
        ("CPU_CLK_UNHALTED.THREAD_P", BUSY_IDLE),
        ("CPU_CLK_UNHALTED.DISTRIBUTED", BUSY_IDLE),
        ("INST_RETIRED.ANY_P", ones!(30)),
        ("UOPS_RETIRED.RETIRE_SLOTS", BUSY_IDLE),
        ("UOPS_RETIRED.SLOTS", BUSY_IDLE),
        ("L2_LINES_IN.ALL", ones!(10)),
        ("@5:IDQ_UOPS_NOT_DELIVERED.CORE", &[run(5, 10), run(0, 990)]),
        ("@6:IDQ_UOPS_NOT_DELIVERED.CORE", &[run(6, 10), run(0, 990)]),
        ("UOPS_ISSUED.ANY", BUSY_IDLE),
        // Two recoveries of one cycle: a mispredict and a machine clear.
        (
            "INT_MISC.RECOVERY_CYCLES",
            &[run(1, 1), run(0, 9), run(1, 1), run(0, 989)],
        ),
        ("MACHINE_CLEARS.COUNT", ones!(1)),
        ("IDQ_UOPS_NOT_DELIVERED.CORE", &[run(2, 24), run(0, 976)]),
        ("LONGEST_LAT_CACHE.REFERENCE", ones!(2)),
        ("LONGEST_LAT_CACHE.MISS", ones!(1)),
        ("BR_INST_RETIRED.ALL_BRANCHES", ones!(6)),
        ("BR_MISP_RETIRED.ALL_BRANCHES", ones!(1)),
        // The one mispredict is a conditional branch not taken: none is taken.
        ("BR_MISP_RETIRED.COND", ones!(1)),
        ("BR_MISP_RETIRED.COND_TAKEN", NONE),
        ("BR_INST_RETIRED.CONDITIONAL", ones!(4)),
        ("BR_INST_RETIRED.COND", ones!(4)),
        ("BR_INST_RETIRED.COND_TAKEN", ones!(2)),
        ("BR_INST_RETIRED.COND_NTAKEN", ones!(2)),
        ("BR_INST_RETIRED.NOT_TAKEN", ones!(2)),
        ("BR_INST_RETIRED.NEAR_TAKEN", ones!(4)),
        ("BR_INST_RETIRED.NEAR_CALL", ones!(1)),
        ("BR_INST_RETIRED.NEAR_RETURN", ones!(1)),
        ("CYCLE_ACTIVITY.CYCLES_MEM_ANY", ones!(20)),
        ("MEMORY_ACTIVITY.CYCLES_L1D_MISS", ones!(10)),
        ("CYCLE_ACTIVITY.CYCLES_L1D_MISS", ones!(10)),
        ("ASSISTS.SSE_AVX_MIX", NONE),
        // Nothing at rest needs a microcode assist: one (34 slots by Intel's top-down) in
        // the 160 to 240 slots of 40 unhalted cycles would outweigh the microcode sequencer
        // node it belongs under (one uop a period), making the level-3 and level-4 nodes
        // inconsistent and the `Bottleneck_*` estimates built on them negative.
        ("ASSISTS.ANY", NONE),
        // Skylake-SP and Cascade Lake count assists as these two.
        ("FP_ASSIST.ANY", NONE),
        ("OTHER_ASSISTS.ANY", NONE),
        // What little runs at rest hits the core's own caches: no load reaches the L3.
        ("MEM_LOAD_UOPS_L3_HIT_RETIRED.XSNP_HIT", NONE),
        ("MEM_LOAD_UOPS_L3_HIT_RETIRED.XSNP_HITM", NONE),
        ("MEM_LOAD_UOPS_L3_HIT_RETIRED.XSNP_MISS", NONE),
        ("MEM_LOAD_UOPS_L3_MISS_RETIRED.LOCAL_DRAM", NONE),
        ("MEM_LOAD_UOPS_L3_MISS_RETIRED.REMOTE_DRAM", NONE),
        ("MEM_LOAD_UOPS_L3_MISS_RETIRED.REMOTE_FWD", NONE),
        ("MEM_LOAD_UOPS_L3_MISS_RETIRED.REMOTE_HITM", NONE),
        ("MEM_LOAD_UOPS_RETIRED.L3_HIT", NONE),
        ("OFFCORE_RESPONSE.DEMAND_RFO.LLC_HIT.HITM_OTHER_CORE", NONE),
        ("OFFCORE_RESPONSE.DEMAND_RFO.LLC_MISS.REMOTE_HITM", NONE),
        ("MEM_INST_RETIRED.ALL_LOADS", ones!(10)),
        ("MEM_INST_RETIRED.ALL_STORES", ones!(4)),
        // E-cores: 60 / 12 / 72 / 96 of the 240 slots of 40 unhalted cycles.
        ("CPU_CLK_UNHALTED.CORE_P", BUSY_IDLE),
        ("TOPDOWN_RETIRING.ALL_P", &[run(6, 10), run(0, 990)]),
        ("TOPDOWN_BAD_SPECULATION.ALL_P", &[run(6, 2), run(0, 998)]),
        ("TOPDOWN_FE_BOUND.ALL_P", &[run(6, 12), run(0, 988)]),
        ("TOPDOWN_BE_BOUND.ALL_P", &[run(6, 16), run(0, 984)]),
        ("UNC_M_CAS_COUNT.RD", ones!(1)),
        ("UNC_M_CAS_COUNT.WR", ones!(1)),
        ("UNC_M_CAS_COUNT_SCH0.RD", ones!(1)),
        ("UNC_M_CAS_COUNT_SCH0.WR", ones!(1)),
        ("ls_not_halted_cyc", BUSY_IDLE),
        ("ex_ret_instr", ones!(30)),
        ("ex_ret_ops", &[run(6, 10), run(0, 990)]),
        ("de_src_op_disp.all", &[run(6, 10), run(3, 4), run(0, 986)]),
        (
            "de_no_dispatch_per_slot.no_ops_from_frontend",
            &[run(6, 12), run(0, 988)],
        ),
        (
            "de_no_dispatch_per_slot.backend_stalls",
            &[run(6, 14), run(0, 986)],
        ),
        (
            "de_no_dispatch_per_slot.smt_contention",
            &[run(6, 2), run(0, 998)],
        ),
        ("ex_ret_brn_misp", ones!(1)),
        ("resyncs_or_nc_redirects", ones!(1)),
        ("bp_redirects.resync", ones!(1)),
        ("bp_fe_redir.resync", ones!(1)),
        ("ex_ret_ucode_ops", ones!(2)),
        ("ex_no_retire.load_not_complete", ones!(10)),
        ("ex_no_retire.not_complete", ones!(20)),
        ("@8:ex_ret_ops", &[run(8, 10), run(0, 990)]),
        (
            "@8:de_src_op_disp.all",
            &[run(8, 10), run(4, 4), run(0, 986)],
        ),
        (
            "@8:de_no_dispatch_per_slot.no_ops_from_frontend",
            &[run(8, 12), run(0, 988)],
        ),
        (
            "@8:de_no_dispatch_per_slot.backend_stalls",
            &[run(8, 14), run(0, 986)],
        ),
        (
            "@8:de_no_dispatch_per_slot.smt_contention",
            &[run(8, 2), run(0, 998)],
        ),
        ("l3_lookup_state.all_coherent_accesses_to_l3", ones!(2)),
        ("l3_lookup_state.all_l3_req_typs", ones!(2)),
        ("l3_lookup_state.l3_miss", ones!(1)),
        ("l3_misses", ones!(1)),
        ("umc_cas_cmd.rd", ones!(1)),
        ("umc_cas_cmd.wr", ones!(1)),
        // Zen 2 and 3 count each DRAM channel's reads and writes together.
        ("dram_channel_data_controller_0", ones!(2)),
        ("dram_channel_data_controller_1", ones!(2)),
        ("dram_channel_data_controller_2", ones!(2)),
        ("dram_channel_data_controller_3", ones!(2)),
        ("dram_channel_data_controller_4", ones!(2)),
        ("dram_channel_data_controller_5", ones!(2)),
        ("dram_channel_data_controller_6", ones!(2)),
        ("dram_channel_data_controller_7", ones!(2)),
    ],
    default: ones!(1),
};
