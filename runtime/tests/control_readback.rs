//! What `Session::open` programs, read back through the machine: after opening a session on
//! the simulator, every control register of every counted event is read and compared with
//! a value encoded here by hand, bit by bit, from the vendor's layout of that register and
//! the event's encoding in the vendor's own event list. The runtime computes the control
//! from the spec's roles; these literals do not, so a wrong role, a dropped modifier, a
//! missing enable or privilege bit, or an event taken from the wrong entry fails here.
//!
//! Layouts:
//! - Intel core: IA32_PERFEVTSELx, SDM Vol. 3B section 20.2.1.1 ("Architectural Performance
//!   Monitoring Version 1 Facilities", Figure 20-1): event select 7:0, unit mask 15:8, USR 16,
//!   OS 17, edge detect 18, INT 20, AnyThread 21, EN 22, INV 23, CMASK 31:24.
//! - Intel uncore box controls (Xeon E5 v2-v4 and Xeon Scalable uncore performance
//!   monitoring guides, "Unit Level PMON State"; Linux arch/x86/events/intel/uncore_snbep.c
//!   SNBEP_PMON_CTL_*): event 7:0, umask 15:8, edge 18, EN 22, invert 23, threshold 31:24;
//!   from Ice Lake-SP the CHA's unit-mask extension at 32 and up (uncore_snbep.c's
//!   `umask_ext4` format, config:8-15,32-57; `umask_ext5` on Sapphire Rapids, 32-63).
//! - AMD core: PerfEvtSeln, AMD64 APM Vol. 2 section 13.2.1 ("Core Performance Event-Select
//!   Registers"): event select 7:0 and 35:32, unit mask 15:8, USR 16, OS 17, edge 18, INT 20,
//!   EN 22, INV 23, CntMask 31:24.
//! - AMD L3 (ChL3PmcCfg) and Data Fabric: Linux arch/x86/events/amd/uncore.c, formats
//!   `event8` (config:0-7), `event14` (config:0-7,32-35,59-60), `umask` (8-15), and
//!   `l3_thread_slice_mask`: family 17h sets the slice mask 51:48 and thread mask 63:56 to
//!   all ones; family 19h on sets threadmask 57:56 to all ones and EnAllSlices (46) and
//!   EnAllCores (47). UMC: perf_event.h AMD64_PERFMON_V2_ENABLE_UMC (bit 31),
//!   _EVENTSEL_EVENT_UMC (7:0), _EVENTSEL_RDWRMASK_UMC (9:8).
//!
//! Event encodings are Intel's perfmon files (`/work/shared/perfmon/*_core.json`,
//! `*_uncore.json`: EventCode, UMask, UMaskExt, CounterMask, Invert) and Linux perf's AMD
//! lists (tools/perf/pmu-events/arch/x86/amdzen*/: EventCode, UMask, RdWrMask).

use std::time::Duration;

use pmu_runtime::machine::{Machine, Resolved, Where};
use pmu_runtime::session::{Clock, Options, Selection, Session, SessionBackend};

/// USR (16), OS (17) and EN (22) of IA32_PERFEVTSELx and AMD's PerfEvtSeln: what every
/// counting control sets, so both privilege levels are counted (a control without USR and OS
/// counts nothing on hardware).
const USR_OS_EN: u64 = USR | OS | EN;
/// USR (16) and OS (17) alone.
const USR: u64 = 1 << 16;
const OS: u64 = 1 << 17;
/// EN (22): the enable of the core controls and of an Intel uncore box control.
const EN: u64 = 1 << 22;
/// Edge detect (18), invert (23), counter mask / threshold (31:24): the same bits in every
/// control here that has them.
const EDGE: u64 = 1 << 18;
const INV: u64 = 1 << 23;
const fn cmask(n: u64) -> u64 {
    n << 24
}
/// Event select (bits 7:0) and unit mask (15:8), where every control here has them.
const fn sel(event: u64, umask: u64) -> u64 {
    event | umask << 8
}

/// Opens a session counting `events` on box `unit` of `processor` on the simulator, and
/// reads back each event's control register, in the order of `events` (the same in every
/// box of socket 0 that counts it); then closes it and checks every control is back at 0.
fn read_back(processor: &'static str, unit: &str, events: &[&str]) -> Vec<u64> {
    let info = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == processor)
        .unwrap();
    let machine = Machine::simulating(info);
    let selection = Selection::of_named_boxes(&[unit], events, Some(processor), None)
        .unwrap_or_else(|e| panic!("{processor} {unit} {events:?}: {e}"));
    let planned = &selection.boxes()[0];
    let backend = SessionBackend::Registers(&machine);
    let options = Options {
        clock: Clock::Steps(Duration::from_millis(10)),
        ..Options::default()
    };
    let session = Session::open(&backend, &selection, options)
        .unwrap_or_else(|e| panic!("{processor} {unit} {events:?}: {e}"));
    let mut controls = Vec::new();
    let mut read = Vec::new();
    for s in session.series().iter().filter(|s| s.socket == 0) {
        let counter = planned
            .pmu_box
            .counters
            .iter()
            .find(|c| c.counter.name() == s.counter)
            .unwrap_or_else(|| panic!("{processor}: no counter {}", s.counter));
        let ctl = counter.control.expect("a programmed counter has a control");
        let at = Where {
            cpu: s.cpu,
            socket: Some(s.socket),
            device: None,
        };
        let reg = Resolved {
            info: ctl.info,
            address: ctl.addr,
            place: machine.place(ctl.info, ctl.addr, &at).unwrap(),
        };
        read.push((s.event_index, machine.read(&reg).unwrap()));
        controls.push(reg);
    }
    session.close().unwrap();
    for reg in &controls {
        assert_eq!(
            machine.read(reg).unwrap(),
            0,
            "{processor}: {} put back",
            reg.address.name
        );
    }
    // One value per event: every box of the socket that counts it (each L3 of an AMD
    // socket) programmed alike.
    (0..events.len())
        .map(|i| {
            let all: Vec<u64> = read.iter().filter(|r| r.0 == i).map(|r| r.1).collect();
            assert!(
                !all.is_empty(),
                "{processor} {unit}: {} not counted",
                events[i]
            );
            assert!(
                all.iter().all(|v| *v == all[0]),
                "{processor} {unit} {}: {all:#x?}",
                events[i]
            );
            all[0]
        })
        .collect()
}

/// Checks `events` on `unit` of each of `processors` program exactly `expected`.
fn check(processors: &[&'static str], unit: &str, events: &[&str], expected: &[u64]) {
    for p in processors {
        let got = read_back(p, unit, events);
        for ((e, g), x) in events.iter().zip(&got).zip(expected) {
            assert_eq!(
                *g, *x,
                "{p} {unit} {e}: read {g:#x}, the layout gives {x:#x}"
            );
        }
    }
}

/// Intel cores, E5 v2 to Granite Rapids: the same architectural layout, events from each
/// part's own list. INST_RETIRED.ANY_P is event 0xC0 umask 0x00, CPU_CLK_UNHALTED.THREAD_P
/// 0x3C/0x00, BR_MISP_RETIRED.ALL_BRANCHES 0xC5/0x00 on all of them; CYCLE_ACTIVITY.
/// STALLS_TOTAL is 0xA3/0x04 with CounterMask 4 (ivytown, broadwellx, skylakex, icelakex,
/// sapphirerapids, graniterapids _core.json).
#[test]
fn intel_core_controls_are_the_sdm_encoding_of_each_named_event() {
    let events = [
        "event=INST_RETIRED.ANY_P,thresh=1,edge=1",
        "event=CPU_CLK_UNHALTED.THREAD_P",
        "event=BR_MISP_RETIRED.ALL_BRANCHES,thresh=2,invert=1",
        "event=CYCLE_ACTIVITY.STALLS_TOTAL",
    ];
    let expected = [
        sel(0xC0, 0x00) | USR_OS_EN | EDGE | cmask(1),
        sel(0x3C, 0x00) | USR_OS_EN,
        sel(0xC5, 0x00) | USR_OS_EN | INV | cmask(2),
        sel(0xA3, 0x04) | USR_OS_EN | cmask(4),
    ];
    check(
        &[
            "xeon-e5-2600-v2",
            "xeon-e5-2600-v4",
            "skylake-sp",
            "cascade-lake",
            "ice-lake-sp",
            "sapphire-rapids",
            "emerald-rapids",
            "granite-rapids",
        ],
        "CORE",
        &events,
        &expected,
    );
    // One privilege level: `os=0` is perf's `:u` (USR alone), `usr=0` its `:k` (OS alone).
    check(
        &[
            "xeon-e5-2600-v2",
            "skylake-sp",
            "sapphire-rapids",
            "granite-rapids",
        ],
        "CORE",
        &[
            "event=INST_RETIRED.ANY_P,os=0",
            "event=CPU_CLK_UNHALTED.THREAD_P,usr=0",
        ],
        &[sel(0xC0, 0x00) | USR | EN, sel(0x3C, 0x00) | OS | EN],
    );
    // Haswell-EP's list has no CYCLE_ACTIVITY.STALLS_TOTAL; UOPS_ISSUED.STALL_CYCLES is
    // 0x0E/0x01 with CounterMask 1 and Invert 1 (haswellx_core.json).
    check(
        &["xeon-e5-2600-v3"],
        "CORE",
        &["event=UOPS_ISSUED.STALL_CYCLES", "event=INST_RETIRED.ANY_P"],
        &[
            sel(0x0E, 0x01) | USR_OS_EN | INV | cmask(1),
            0xC0 | USR_OS_EN,
        ],
    );
}

/// Intel uncore boxes. UNC_M_CAS_COUNT.RD is event 0x04 umask 0x03 on E5 v2-v4, Skylake-SP
/// and Cascade Lake (ivytown, haswellx, skylakex _uncore.json); UNC_CHA_TOR_INSERTS.IA_MISS
/// is 0x35 umask 0x01 with UMaskExt 0xC001FE from Ice Lake-SP on (icelakex,
/// sapphirerapids, emeraldrapids, graniterapids _uncore.json); UNC_CHA_CLOCKTICKS is
/// 0x00/0x00 on Ice Lake-SP, 0x01/0x00 from Sapphire Rapids.
#[test]
fn intel_uncore_controls_are_the_guides_encoding_of_each_named_event() {
    check(
        &["xeon-e5-2600-v2", "xeon-e5-2600-v3", "xeon-e5-2600-v4"],
        "CH0",
        &[
            "event=UNC_M_CAS_COUNT.RD",
            "event=UNC_M_CAS_COUNT.RD,thresh=1,edge=1",
        ],
        &[sel(0x04, 0x03) | EN, sel(0x04, 0x03) | EN | EDGE | cmask(1)],
    );
    check(
        &["skylake-sp", "cascade-lake"],
        "IMC0",
        &[
            "event=UNC_M_CAS_COUNT.RD",
            "event=UNC_M_CAS_COUNT.RD,thresh=3,invert=1",
        ],
        &[sel(0x04, 0x03) | EN, sel(0x04, 0x03) | EN | INV | cmask(3)],
    );
    check(
        &["ice-lake-sp"],
        "CHA0",
        &[
            "event=UNC_CHA_TOR_INSERTS.IA_MISS",
            "event=UNC_CHA_CLOCKTICKS,thresh=1,edge=1",
        ],
        &[
            sel(0x35, 0x01) | EN | 0xC0_01FE << 32,
            sel(0x00, 0x00) | EN | EDGE | cmask(1),
        ],
    );
    // Memory-mapped iMC controls: UNC_M_CAS_COUNT.RD is 0x04/0x0F on Ice Lake-SP
    // (icelakex_uncore.json), 0x05/0xCF from Sapphire Rapids (sapphirerapids,
    // emeraldrapids _uncore.json).
    check(
        &["ice-lake-sp"],
        "IMC0",
        &["event=UNC_M_CAS_COUNT.RD,thresh=1,edge=1"],
        &[sel(0x04, 0x0F) | EN | EDGE | cmask(1)],
    );
    check(
        &["sapphire-rapids", "emerald-rapids"],
        "IMC0",
        &["event=UNC_M_CAS_COUNT.RD"],
        &[sel(0x05, 0xCF) | EN],
    );
    check(
        &["sapphire-rapids", "emerald-rapids", "granite-rapids"],
        "CHA0",
        &[
            "event=UNC_CHA_TOR_INSERTS.IA_MISS",
            "event=UNC_CHA_CLOCKTICKS,thresh=2,invert=1",
        ],
        &[
            sel(0x35, 0x01) | EN | 0xC0_01FE << 32,
            sel(0x01, 0x00) | EN | INV | cmask(2),
        ],
    );
}

/// AMD cores, Zen 2 to Zen 5: ex_ret_instr is PMCx0C0, ls_not_halted_cyc PMCx076,
/// ex_ret_brn_misp PMCx0C3 (amdzen2-5 core.json / other.json / branch.json).
#[test]
fn amd_core_controls_are_the_apm_encoding_of_each_named_event() {
    check(
        &["amd-zen2", "amd-zen3", "amd-zen4", "amd-zen5"],
        "PMC",
        &[
            "event=ex_ret_instr",
            "event=ls_not_halted_cyc,thresh=1,edge=1",
            "event=ex_ret_brn_misp,thresh=1,invert=1",
        ],
        &[
            0xC0 | USR_OS_EN,
            0x76 | USR_OS_EN | EDGE | cmask(1),
            0xC3 | USR_OS_EN | INV | cmask(1),
        ],
    );
    check(
        &["amd-zen2", "amd-zen4"],
        "PMC",
        &["event=ex_ret_instr,os=0", "event=ex_ret_instr,usr=0"],
        &[0xC0 | USR | EN, 0xC0 | OS | EN],
    );
}

/// A privilege level left out where the control cannot leave it out (an uncore box counts
/// every mode), or both left out (nothing would count), is refused before anything is
/// written.
#[test]
fn a_privilege_level_the_control_cannot_leave_out_is_refused() {
    for (processor, unit, event) in [
        ("skylake-sp", "IMC0", "event=UNC_M_CAS_COUNT.RD,usr=0"),
        ("skylake-sp", "CORE", "event=INST_RETIRED.ANY_P,usr=0,os=0"),
        ("amd-zen4", "L3", "event=l3_lookup_state.l3_miss,os=0"),
    ] {
        let info = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == processor)
            .unwrap();
        let machine = Machine::simulating(info);
        let opened = Selection::of_named_boxes(&[unit], &[event], Some(processor), None)
            .map_err(pmu_runtime::Error::from)
            .and_then(|selection| {
                let backend = SessionBackend::Registers(&machine);
                Session::open(&backend, &selection, Options::default())
            });
        let Err(e) = opened else {
            panic!("{processor} {unit} {event} opened")
        };
        assert_eq!(machine.access_counts().1, 0, "{event}: written: {e}");
        let e = e.to_string();
        assert!(
            e.contains("usr") || e.contains("os") || e.contains("privilege"),
            "{e}"
        );
    }
}

/// AMD L3, Data Fabric and UMC: the masks Linux's l3_thread_slice_mask adds, the DF's split
/// event select, the UMC's read/write mask. l3_lookup_state.all_l3_req_typs is 0x04/0xFF
/// (amdzen2, amdzen3 cache.json), l3_lookup_state.all_coherent_accesses_to_l3 0x04/0xFF
/// (amdzen4, amdzen5); remote_outbound_data_controller_0 is DF event 0x7C7 umask 0x02
/// (amdzen2 data-fabric.json); umc_cas_cmd.rd is UMC event 0x0A with RdWrMask 1 (amdzen4,
/// amdzen5 memory-controller.json).
#[test]
fn amd_uncore_controls_carry_the_masks_linux_sets() {
    // Family 17h: SliceMask 51:48 and ThreadMask 63:56 all ones.
    let zen2_masks: u64 = 0xF << 48 | 0xFF << 56;
    check(
        &["amd-zen2"],
        "L3",
        &["event=l3_lookup_state.all_l3_req_typs"],
        &[sel(0x04, 0xFF) | EN | zen2_masks],
    );
    // Family 19h on: ThreadMask 57:56, EnAllSlices 46, EnAllCores 47.
    let zen3_masks: u64 = 0b11 << 56 | 1 << 46 | 1 << 47;
    check(
        &["amd-zen3"],
        "L3",
        &["event=l3_lookup_state.all_l3_req_typs"],
        &[sel(0x04, 0xFF) | EN | zen3_masks],
    );
    check(
        &["amd-zen4", "amd-zen5"],
        "L3",
        &["event=l3_lookup_state.all_coherent_accesses_to_l3"],
        &[sel(0x04, 0xFF) | EN | zen3_masks],
    );
    // Event 0x7C7: bits 7:0 = 0xC7, bits 11:8 (= 0x7) at 35:32.
    check(
        &["amd-zen2"],
        "DF",
        &["event=remote_outbound_data_controller_0"],
        &[sel(0xC7, 0x02) | EN | 0x7 << 32],
    );
    check(
        &["amd-zen4", "amd-zen5"],
        "UMC0",
        &["event=umc_cas_cmd.rd", "event=umc_cas_cmd.wr"],
        &[sel(0x0A, 0b01) | 1 << 31, sel(0x0A, 0b10) | 1 << 31],
    );
}
