//! The perf path against the register path on the same simulated events, through the
//! library's counting session: `SessionBackend::Perf` over `sim_perf::SimPerf` (a kernel driver
//! over the simulator: the spec's PMU names, encoding through a sysfs tree's format files,
//! groups per CPU, reads with times) and `SessionBackend::Registers` over a simulator of the same
//! processor, both running the session's demo workload on the same stepped clock. Every unit
//! of every processor whose spec names its kernel PMUs is counted both ways; the
//! per-interval counts must be the same.

#[path = "support/chunks.rs"]
mod chunks;
#[path = "support/kernel_pmus.rs"]
mod kernel_pmus;

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use pmu_regs::{CounterKind, ProcessorInfo, PROCESSORS};
use pmu_runtime::boxes::Boxes;
use pmu_runtime::boxes::FIXED_EVENT;
use pmu_runtime::machine::Machine;
use pmu_runtime::perf::EventSources;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::{
    BackendKind, Options, PerfBackend, Selection, SeriesInfo, Session, SessionBackend, Sockets,
};
use pmu_runtime::sim_perf::SimPerf;

/// The simulator's sockets start at CPUs 0 and 2 (two sockets of two CPUs).
const CPUMASK: &str = "0,2";

/// One row of an interval: socket, counter register, event, count.
type Row = (u32, String, String, u64);

/// The rows of three intervals of 10 ms of `selection`, through the registers (`tree` is
/// `None`) or through perf over the PMUs of `tree` (falling back to the registers where
/// `fallback`), with the series.
fn count(
    processor: &'static ProcessorInfo,
    selection: &Selection,
    tree: Option<(&Path, bool)>,
) -> Result<(Vec<Vec<Row>>, Vec<SeriesInfo>), pmu_runtime::Error> {
    let machine = Machine::simulating(processor);
    let sources = tree.map(|(t, _)| EventSources::with_root(t));
    let driver = match &sources {
        Some(s) => Some(SimPerf::new(machine.sim().unwrap(), s)?),
        None => None,
    };
    let backend = match (&driver, sources, tree) {
        (Some(driver), Some(sources), Some((_, fallback))) => SessionBackend::Perf(PerfBackend {
            machine: &machine,
            sources,
            layer: driver,
            fallback,
        }),
        _ => SessionBackend::Registers(&machine),
    };
    // The demo fixture (event i of a box at its own rate), not a named workload: these
    // tests check that perf and the registers count the same, which distinct counts per
    // event and per interval show.
    let options = Options {
        clock: backend.clock(Duration::from_millis(10)),
        pace: pmu_runtime::session::Pace::Demo,
        ..Options::default()
    };
    let mut session = Session::open(&backend, selection, options)?;
    let series = session.series().to_vec();
    let mut intervals = Vec::new();
    for _ in 0..3 {
        let interval = session.interval()?;
        // Through perf each count carries its interval's times (the simulated driver never
        // multiplexes: running is enabled); through the registers none.
        for (s, c) in series.iter().zip(&interval.counts) {
            let times = c.times.filter(|t| t.running == t.enabled);
            assert_eq!(
                times.is_some(),
                s.backend == BackendKind::Perf,
                "{s:?} {c:?}"
            );
        }
        intervals.push(
            series
                .iter()
                .zip(&interval.counts)
                .map(|(s, c)| (s.socket, s.counter.clone(), s.event.clone(), c.delta))
                .collect(),
        );
    }
    session.close()?;
    Ok((intervals, series))
}

/// `ev_sel=0x1` and `ev_sel=0x2,umask=0x1`, the first `n`.
fn events(n: usize) -> (Vec<&'static str>, Vec<EventSelect>) {
    let two = EventSelect {
        umask: Some(1),
        ..EventSelect::event(2)
    };
    let names = ["ev_sel=0x1", "ev_sel=0x2,umask=0x1"];
    (
        names[..n].to_vec(),
        [EventSelect::event(1), two][..n].to_vec(),
    )
}

fn selection(processor: &'static ProcessorInfo, unit: &str, n: usize) -> Selection {
    let boxes = Boxes::of(processor);
    let (names, sels) = events(n);
    Selection::of_boxes(&[(boxes, boxes.find(unit).unwrap())], &names, &sels).unwrap()
}

/// Whether unit `u`'s counters are system registers (Arm's), which only perf reaches: there
/// is no raw count to compare (the kernel's format for them: perf_cli.rs).
/// Read from the unit's own structure (as `PmuBox::through_perf_only` decides for a box),
/// without building every processor's boxes.
/// A CoreSight PMU's page (space `table`, placed by the APMT) is no register of the simulated
/// machine either: cspmu_sim.rs counts it on its own simulated page.
fn through_perf_only(u: &'static pmu_regs::UnitInfo) -> bool {
    u.pmu.is_some_and(|m| {
        m.counters.iter().any(|c| {
            matches!(
                c.counter.register.space,
                pmu_regs::Space::SysReg | pmu_regs::Space::Table
            )
        })
    })
}

/// Each unit of each processor whose units name kernel PMUs: its first box, with as many
/// events as it has general counters (up to two).
fn cases() -> Vec<(&'static ProcessorInfo, String, usize)> {
    let mut out = Vec::new();
    for p in PROCESSORS {
        if !p
            .units
            .iter()
            .any(|u| u.pmu.is_some_and(|m| !m.perf.is_empty()))
        {
            continue;
        }
        for u in p.units.iter().filter(|u| !through_perf_only(u)) {
            let Some(pmu) = u.pmu else { continue };
            let general = pmu
                .counters
                .iter()
                .filter(|c| c.kind == CounterKind::General && c.control.is_some())
                .count();
            if general == 0 {
                continue;
            }
            out.push((*p, u.instances[0].to_string(), general.min(2)));
        }
    }
    out
}

#[test]
fn perf_and_raw_show_the_same_counts_for_every_unit_on_the_simulator() {
    // The units are independent (a simulator and a tree each): compared on every core,
    // because this is the workspace's longest test.
    let cases = cases();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let done: Vec<&'static str> = chunks::in_chunks(&cases, threads, compare_units);
    let compared = done.len();
    let processors: std::collections::BTreeSet<&str> = done.into_iter().collect();
    assert!(compared >= 45, "only {compared} units compared");
    // Every processor of the spec has a unit compared.
    assert_eq!(
        processors.len(),
        pmu_regs::PROCESSORS
            .iter()
            .filter(|p| p
                .units
                .iter()
                .any(|u| u.pmu.is_some() && !through_perf_only(u)))
            .count(),
        "{processors:?}"
    );
}

/// The kernel's PMUs for `processor` as a sysfs tree, with each per-L3 PMU's cpumask.
fn processor_tree(processor: &'static ProcessorInfo) -> tempfile::TempDir {
    let tree = tempfile::tempdir().unwrap();
    kernel_pmus::write_tree(tree.path(), processor.id, CPUMASK);
    // The kernel lists one CPU per L3 cache in a per-L3 PMU's cpumask (amd_l3): on the
    // simulated machine, the lowest CPU of each core complex.
    let topology = Machine::simulating(processor).topology().unwrap();
    let per_l3: Vec<String> = topology
        .sockets()
        .flat_map(|s| topology.l3_cpus(s))
        .map(|c| c.to_string())
        .collect();
    for u in processor.units {
        let Some(pmu) = u.pmu.filter(|p| p.scope == pmu_regs::Scope::L3) else {
            continue;
        };
        for perf in pmu.perf {
            let mask = tree.path().join(perf.pmu).join("cpumask");
            std::fs::write(mask, format!("{}\n", per_l3.join(","))).unwrap();
        }
    }
    tree
}

/// Counts each case's unit through the registers and through perf and requires the same
/// rows; the processor of each unit compared.
fn compare_units(cases: &[(&'static ProcessorInfo, String, usize)]) -> Vec<&'static str> {
    let mut done = Vec::new();
    // One kernel tree per processor, written when its first unit comes (cases come in
    // processor order; perf only reads the tree): writing the files was most of this test.
    let mut tree: Option<(&str, tempfile::TempDir)> = None;
    for &(processor, ref unit, n) in cases {
        let unit = unit.clone();
        if tree.as_ref().is_none_or(|(id, _)| *id != processor.id) {
            tree = Some((processor.id, processor_tree(processor)));
        }
        let tree = &tree.as_ref().unwrap().1;
        // The CORE's umask role aside, a PCU or M-box control may lack a umask: one event.
        let mut selection = selection(processor, &unit, n);
        let raw = match count(processor, &selection, None) {
            Err(e) if e.to_string().contains("umask") => {
                selection = self::selection(processor, &unit, 1);
                count(processor, &selection, None)
            }
            other => other,
        };
        let (raw, raw_series) = raw.unwrap_or_else(|e| panic!("{unit} raw: {e}"));
        let (perf, perf_series) = count(processor, &selection, Some((tree.path(), false)))
            .unwrap_or_else(|e| panic!("{unit} perf: {e}"));
        assert!(raw_series
            .iter()
            .all(|s| s.backend == BackendKind::Simulator));
        assert!(perf_series.iter().all(|s| s.backend == BackendKind::Perf));
        assert_eq!(raw.len(), 3);
        assert_eq!(perf, raw, "{} {unit}", processor.id);
        // The demo workload was counted: 1000 x (event + 1) + 37 x interval each time, in
        // each place the box is counted (each L3 of a per-L3 box).
        for (i, interval) in raw.iter().enumerate() {
            for (row, series) in interval.iter().zip(&raw_series) {
                let k = series.event_index as u64;
                assert_eq!(row.3, 1000 * (k + 1) + 37 * (i as u64 + 1), "{unit}");
            }
        }
        done.push(processor.id);
    }
    done
}

#[test]
fn every_socket_through_the_simulated_driver_is_a_row_per_socket() {
    let p = &pmu_regs::xeon_e5_2600::PROCESSOR;
    let tree = tempfile::tempdir().unwrap();
    kernel_pmus::write_tree(tree.path(), p.id, CPUMASK);
    let boxes = Boxes::of(p);
    let sel = EventSelect {
        umask: Some(3),
        ..EventSelect::event(0x34)
    };
    let selection = Selection::of_boxes(
        &[(boxes, boxes.find("CBO3").unwrap())],
        &["event=UNC_C_LLC_LOOKUP.DATA_READ"],
        &[sel],
    )
    .unwrap()
    .on(Sockets::All);
    let (raw, _) = count(p, &selection, None).unwrap();
    let (perf, series) = count(p, &selection, Some((tree.path(), false))).unwrap();
    assert_eq!(perf, raw);
    let sockets: Vec<u32> = perf[0].iter().map(|r| r.0).collect();
    assert_eq!(sockets, [0, 1]);
    let perf0 = series[0].perf.as_ref().unwrap();
    assert_eq!(perf0.event, "uncore_cbox_3/event=0x34,umask=0x3/");
    assert_eq!(
        series[1].perf.as_ref().unwrap().cpu,
        Some(2),
        "socket 1 counts on its cpumask CPU"
    );
}

#[test]
fn the_comparison_can_fail() {
    // A tree without the C-box's `umask` format: the perf path refuses the event by name
    // instead of counting something else.
    let p = &pmu_regs::xeon_e5_2600::PROCESSOR;
    let tree = tempfile::tempdir().unwrap();
    kernel_pmus::write_tree(tree.path(), p.id, CPUMASK);
    std::fs::remove_file(tree.path().join("uncore_cbox_0/format/umask")).unwrap();
    let boxes = Boxes::of(p);
    let sel = EventSelect {
        umask: Some(1),
        ..EventSelect::event(1)
    };
    let selection = Selection::of_boxes(
        &[(boxes, boxes.find("CBO0").unwrap())],
        &["ev_sel=0x1,umask=0x1"],
        &[sel],
    )
    .unwrap();
    let e = count(p, &selection, Some((tree.path(), false))).unwrap_err();
    assert!(
        e.to_string()
            .contains("uncore_cbox_0 has no format field for umask"),
        "{e}"
    );
    // The command line's --sim has no perf to count through.
    let out = Command::cargo_bin("pmu")
        .unwrap()
        .args([
            "watch",
            "--sim",
            "--backend",
            "perf",
            "--unit",
            "xeon-e5-2600:CBO0",
        ])
        .args([
            "--event",
            "ev_sel=0x1",
            "--count",
            "1",
            "--interval",
            "0.01",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sim simulates the registers"));
    // A PMU the tree lacks: perf names it and the driver, a fallback counts the registers.
    std::fs::remove_dir_all(tree.path().join("uncore_cbox_0")).unwrap();
    let e = count(p, &selection, Some((tree.path(), false))).unwrap_err();
    assert!(e.to_string().contains("no PMU uncore_cbox_0"), "{e}");
    let (_, series) = count(p, &selection, Some((tree.path(), true))).unwrap();
    assert!(series.iter().all(|s| s.backend == BackendKind::Simulator));
}

/// Each unit with free-running counters the kernel names events for: its first box and its
/// first two such counters, as `event=0xff,umask=N` selections.
fn free_running_cases() -> Vec<(
    &'static ProcessorInfo,
    &'static str,
    Vec<String>,
    Vec<EventSelect>,
)> {
    let mut out = Vec::new();
    for p in PROCESSORS {
        for u in p.units {
            let Some(pmu) = u.pmu else { continue };
            let umasks: Vec<u8> = pmu
                .counters
                .iter()
                .filter(|c| c.kind == CounterKind::FreeRunning)
                .filter_map(|c| c.perf_event.map(|e| e.umask))
                .take(2)
                .collect();
            if umasks.is_empty() {
                continue;
            }
            let names = umasks
                .iter()
                .map(|m| format!("event=0xff,umask={m:#x}"))
                .collect();
            let sels = umasks
                .iter()
                .map(|&m| EventSelect::event(FIXED_EVENT).with_umask(u16::from(m)))
                .collect();
            out.push((*p, u.instances[0], names, sels));
        }
    }
    out
}

#[test]
fn free_running_counters_count_the_same_through_perf_and_the_registers() {
    // Through perf a free-running counter is the driver's event of its own on the box's
    // free-running PMU (uncore_iio_free_running_N, uncore_imc_free_running_N): nothing is
    // programmed, the event's umask picks the counter. Both ways must count the workload alike.
    let mut compared = Vec::new();
    for (processor, instance, names, sels) in free_running_cases() {
        let tree = tempfile::tempdir().unwrap();
        kernel_pmus::write_tree(tree.path(), processor.id, CPUMASK);
        let boxes = Boxes::of(processor);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let selection =
            Selection::of_boxes(&[(boxes, boxes.find(instance).unwrap())], &names, &sels)
                .unwrap_or_else(|e| panic!("{} {instance}: {e}", processor.id));
        let (raw, _) = count(processor, &selection, None)
            .unwrap_or_else(|e| panic!("{} {instance} raw: {e}", processor.id));
        let (perf, series) = count(processor, &selection, Some((tree.path(), false)))
            .unwrap_or_else(|e| panic!("{} {instance} perf: {e}", processor.id));
        assert_eq!(perf, raw, "{} {instance}", processor.id);
        for (i, interval) in perf.iter().enumerate() {
            for (row, s) in interval.iter().zip(&series) {
                let k = s.event_index as u64;
                assert_eq!(row.3, 1000 * (k + 1) + 37 * (i as u64 + 1), "{instance}");
            }
        }
        let event = &series[0].perf.as_ref().unwrap().event;
        assert!(
            event.contains("free_running") && event.contains("event=0xff,umask="),
            "{event}"
        );
        compared.push(format!("{}:{instance}", processor.id));
    }
    // Skylake-SP, Cascade Lake (IIO) and Ice Lake-SP (IIO and iMC) at least.
    assert!(compared.len() >= 4, "{compared:?}");
    println!("free-running boxes compared: {compared:?}");
}

/// A core event's auxiliary MSR through perf: the session puts its value in the event's
/// `config1` term (`offcore_rsp`, `frontend`), and the simulated driver programs the register
/// the processor's events of that select name, as the kernel's extra registers do. The
/// simulated core counts an offcore stream only while its register holds the event's value,
/// so the same non-zero counts through perf and through the registers show both wrote it.
#[test]
fn auxiliary_msrs_count_the_same_through_perf_and_the_registers() {
    let skx = &pmu_regs::skylake_sp::PROCESSOR;
    let names = [
        "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
        "FRONTEND_RETIRED.DSB_MISS",
    ];
    let sels: Vec<EventSelect> = names
        .iter()
        .map(|n| {
            let e = pmu_regs::skylake_sp::core::Event::ALL
                .iter()
                .map(|e| e.info())
                .find(|e| e.name == *n)
                .unwrap();
            assert!(e.aux.is_some(), "{n}");
            EventSelect {
                umask: Some(e.umask),
                aux: e.aux,
                ..EventSelect::event(e.code)
            }
        })
        .collect();
    let boxes = Boxes::of(&pmu_regs::arch::PROCESSOR);
    let core = boxes.boxes.iter().find(|b| b.unit.name == "CORE").unwrap();
    let selection = Selection::of_boxes(&[(boxes, core)], &names, &sels).unwrap();
    // A Skylake kernel's cpu PMU has the auxiliary MSRs' formats too.
    let tree = processor_tree(skx);
    for (f, spec) in kernel_pmus::CPU_SKL {
        std::fs::write(tree.path().join("cpu/format").join(f), format!("{spec}\n")).unwrap();
    }
    let (raw, _) = count(skx, &selection, None).unwrap();
    let (perf, series) = count(skx, &selection, Some((tree.path(), false))).unwrap();
    assert!(series.iter().all(|s| s.backend == BackendKind::Perf));
    assert_eq!(perf, raw);
    assert!(raw.iter().flatten().all(|row| row.3 > 0), "{raw:?}");
}

/// Uncore events told apart by their unit-mask extension alone, through perf: Linux's Ice
/// Lake-SP CHA format carries the extension in its `umask` term above the umask
/// (`config:8-15,32-57`), and the simulated driver splits it back into the control's
/// `umask_ext` field. The simulated CHA counts a stream only on a counter whose extension
/// matches, so the same distinct counts both ways show both paths kept the extension.
#[test]
fn unit_mask_extensions_count_the_same_through_perf_and_the_registers() {
    let icx = &pmu_regs::ice_lake_sp::PROCESSOR;
    let boxes = Boxes::of(icx);
    let cha0 = boxes.find("CHA0").unwrap();
    let names = ["UNC_CHA_TOR_INSERTS.IA_MISS", "UNC_CHA_TOR_INSERTS.IA_HIT"];
    let sels: Vec<EventSelect> = names
        .iter()
        .map(|n| {
            let e = cha0.unit.events.iter().find(|e| e.name == *n).unwrap();
            assert_ne!(e.umask_ext, 0, "{n}");
            EventSelect {
                umask: Some(e.umask),
                umask_ext: Some(e.umask_ext),
                ..EventSelect::event(e.code)
            }
        })
        .collect();
    let selection = Selection::of_boxes(&[(boxes, cha0)], &names, &sels).unwrap();
    let tree = processor_tree(icx);
    let (raw, _) = count(icx, &selection, None).unwrap();
    let (perf, series) = count(icx, &selection, Some((tree.path(), false))).unwrap();
    assert!(series.iter().all(|s| s.backend == BackendKind::Perf));
    assert_eq!(perf, raw);
    // Each event counts its own stream (the demo pace gives the second more), not both.
    for interval in &raw {
        let counts: Vec<u64> = interval.iter().map(|row| row.3).collect();
        assert!(counts[0] > 0 && counts[1] > counts[0], "{raw:?}");
        assert!(counts[1] < 3 * counts[0], "{raw:?}");
    }
}
