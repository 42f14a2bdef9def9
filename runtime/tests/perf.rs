//! The perf backend: the real `perf_event_open` path against the PMUs this machine has (the
//! `msr` PMU and the software PMU), and every box of every processor against sysfs trees the
//! tests build, with format files written as the Linux drivers write them.

use std::fs;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use pmu_regs::{CounterInfo, CounterKind, RegisterInfo, PROCESSORS};
use pmu_runtime::codec;
use pmu_runtime::perf::counting::BoxGroup;
use pmu_runtime::perf::encode::{free_running_terms, from_terms, to_control};
use pmu_runtime::perf::session::{box_event, CountingLoop};
use pmu_runtime::perf::{EventSources, PerfError, PerfNames, SpecNames};

#[path = "support/kernel_pmus.rs"]
mod kernel_pmus;

const MSR_DRIVER: &str = "the msr PMU (Linux arch/x86/events/msr.c)";

fn real() -> EventSources {
    EventSources::default()
}

#[test]
fn the_msr_pmu_is_read_from_sysfs_as_the_kernel_writes_it() {
    let msr = real()
        .pmu("msr", MSR_DRIVER)
        .expect("this VM has the msr PMU");
    let event = msr.format("event").expect("msr has format/event");
    assert_eq!(event.spec(), "config:0-63");
    assert_eq!(msr.events["tsc"], [("event".to_string(), 0)]);
    assert!(msr.cpumask.is_empty(), "the msr PMU counts on any CPU");
    let software = real().pmu("software", "").unwrap();
    assert_eq!(software.type_, 1);
    assert!(software.formats.is_empty());
}

#[test]
fn tsc_counts_for_real_through_open_enable_read_and_close() {
    let msr = real().pmu("msr", MSR_DRIVER).unwrap();
    let tsc = from_terms(&msr, "tsc").unwrap();
    assert_eq!(tsc.to_string(), "msr/event=0x0/");
    let mut group = BoxGroup::open(&msr, Some(0), &[tsc]).unwrap();
    let before = group.read().unwrap();
    assert_eq!(before[0].count, 0, "opened disabled");
    group.enable().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let first = group.read().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let second = group.read().unwrap();
    group.disable().unwrap();
    assert!(first[0].count > 0, "{first:?}");
    assert!(second[0].count > first[0].count, "{second:?}");
    assert!(
        second[0].time_running >= Duration::from_millis(30),
        "{second:?}"
    );
    assert!(!second[0].multiplexed());
    assert_eq!(second[0].scaled(), Some(second[0].count));
    drop(group); // closes the file descriptors
}

#[test]
fn a_software_group_reads_both_events_with_one_time_base() {
    let sw = real().pmu("software", "").unwrap();
    // PERF_COUNT_SW_CPU_CLOCK and PERF_COUNT_SW_TASK_CLOCK.
    let events = [
        from_terms(&sw, "config=0").unwrap(),
        from_terms(&sw, "config=1").unwrap(),
    ];
    for cpu in [None, Some(0)] {
        let mut g = BoxGroup::open(&sw, cpu, &events).unwrap();
        g.enable().unwrap();
        // Spin until both clocks have moved (a loaded machine can leave the task clock at 0
        // after one short spin), for at most two seconds.
        let spin = std::time::Instant::now();
        let r = loop {
            let step = std::time::Instant::now();
            while step.elapsed() < Duration::from_millis(15) {
                std::hint::black_box(0u64);
            }
            let r = g.read().unwrap();
            let moved = r[0].count > 0 && r[1].count > 0;
            if moved || spin.elapsed() > Duration::from_secs(2) {
                break r;
            }
        };
        assert_eq!(r.len(), 2);
        // Both clocks count this process's time (no CPU) or the CPU's (`perf stat -a -e
        // cpu-clock,task-clock` prints the same msec for both), read at one instant.
        assert!(r[0].count > 0 && r[1].count > 0, "{cpu:?}: {r:?}");
        let (a, b) = (r[0].count as f64, r[1].count as f64);
        assert!((a - b).abs() <= 0.05 * a, "{cpu:?}: {r:?}");
        assert_eq!(r[0].time_enabled, r[1].time_enabled);
    }
}

#[test]
fn a_session_reports_interval_counts_of_the_tsc() {
    let msr = real().pmu("msr", MSR_DRIVER).unwrap();
    let tsc = from_terms(&msr, "tsc").unwrap();
    let cpus = CountingLoop::cpus(&msr, None, 0).unwrap();
    let mut s = CountingLoop::start(&msr, &cpus, &[tsc]).unwrap();
    let mut seen = Vec::new();
    s.run(
        Duration::from_millis(10),
        Some(2),
        &AtomicBool::new(false),
        |_, counts| seen.push(counts.to_vec()),
    )
    .unwrap();
    assert_eq!(seen.len(), 2);
    for interval in &seen {
        assert_eq!(interval[0].cpu, Some(0));
        assert!(interval[0].reading.count > 0, "{interval:?}");
    }
}

#[test]
fn the_kernel_refusing_an_event_names_the_event_and_the_pmu() {
    let msr = real().pmu("msr", MSR_DRIVER).unwrap();
    // The msr PMU has a handful of events; 0x99 is not one of them.
    let bad = from_terms(&msr, "event=0x99").unwrap();
    let e = BoxGroup::open(&msr, Some(0), &[bad]).unwrap_err();
    assert!(matches!(e, PerfError::Rejected { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("msr/event=0x99/") && msg.contains("msr refused"),
        "{msg}"
    );
    let e = from_terms(&msr, "umask=1").unwrap_err();
    assert!(
        e.to_string().contains("msr has no format field for umask"),
        "{e}"
    );
    let e = from_terms(&msr, "tcs").unwrap_err();
    assert!(e.to_string().contains("its events are: "), "{e}");
}

#[test]
fn an_absent_pmu_names_its_driver_and_the_raw_backend() {
    let e = real()
        .pmu(
            "uncore_ha",
            "intel_uncore (Linux arch/x86/events/intel/uncore_snbep.c)",
        )
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("no PMU uncore_ha")
            && msg.contains("uncore_snbep.c")
            && msg.contains("--backend raw"),
        "{msg}"
    );
}

// ---------------------------------------------------------------------------------------
// Uncore PMUs against built trees, with the formats copied from the Linux drivers
// (support/kernel_pmus.rs), independently of the spec's copy.

use kernel_pmus::kernel_pmus;

/// A sysfs tree of `processor`'s PMUs (and the core PMU) on a two-socket machine (CPUs 0
/// and 8).
fn tree(processor: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    kernel_pmus::write_tree(root.path(), processor, "0,8");
    root
}

/// Counter control registers: those with an event select (or the M-box's inc_sel), and the
/// uncore fixed-counter controls. An event select that plays no role (AMD's legacy K7
/// addresses of the core controls) is not a counter control of the structure.
fn controls(u: &pmu_regs::UnitInfo) -> Vec<&'static RegisterInfo> {
    u.registers
        .iter()
        .copied()
        .filter(|r| {
            r.field("ev_sel").is_some_and(|f| f.role.is_some())
                || r.field("inc_sel").is_some()
                || (r.name.contains("FIXED") && r.name.contains("_CTL"))
        })
        .collect()
}

/// A typical setting for `info`: the unit's first event on this counter (or ev_sel=1), with
/// edge detection where the layout has it.
fn setting(info: &'static RegisterInfo, counter: u32) -> u64 {
    // Where the control has an enable bit (Arm's PMEVTYPER has none: PMCNTENSET starts it).
    let mut pairs: Vec<(String, String)> = Vec::new();
    if info.field("en").is_some() {
        pairs.push(("en".into(), "1".into()));
    }
    let events = codec::unit_events(info);
    let has_sel = info.field("ev_sel").is_some();
    if let Some(e) = events.iter().find(|e| has_sel && e.can_count_on(counter)) {
        pairs.push(("event".into(), e.name.into()));
    } else if has_sel {
        pairs.push(("ev_sel".into(), "1".into()));
    } else if info.field("inc_sel").is_some() {
        pairs.push(("inc_sel".into(), "0xd".into()));
    }
    for edge in ["edge_detect", "edge_det"] {
        if info.field(edge).is_some() {
            pairs.push((edge.into(), "1".into()));
        }
    }
    codec::encode(info, info.reset, &pairs).unwrap()
}

/// Every free-running counter of every box of `p` that the kernel names an event for (unit,
/// instance, counter); the others (a PCU's) have no perf string to make.
fn free_running(
    p: &pmu_regs::ProcessorInfo,
) -> Vec<(
    &'static pmu_regs::UnitInfo,
    &'static str,
    &'static CounterInfo,
)> {
    let mut out = Vec::new();
    for u in p.units {
        let Some(pmu) = u.pmu else { continue };
        let free = pmu
            .counters
            .iter()
            .filter(|c| c.kind == CounterKind::FreeRunning && c.perf_event.is_some());
        for c in free {
            out.extend(u.instances.iter().map(|i| (*u, *i, c)));
        }
    }
    out
}

/// The PMU and event string of free-running counter `c` of box `instance`, as a session
/// over perf makes them: the driver's event of its own, by the spec's terms.
fn free_running_event(
    sources: &EventSources,
    u: &pmu_regs::UnitInfo,
    instance: &str,
    c: &CounterInfo,
) -> (pmu_runtime::perf::KernelPmu, pmu_runtime::perf::PerfEvent) {
    let name = SpecNames
        .lookup(u.processor, u.name, instance, Some(c.number))
        .unwrap_or_else(|e| panic!("{instance}: {e}"));
    let pmu = sources
        .pmu(name.pmu, &name.driver_name())
        .unwrap_or_else(|e| panic!("{instance}: {e}"));
    let perf = c
        .perf_event
        .expect("free_running keeps those with a perf event");
    let ev =
        from_terms(&pmu, &free_running_terms(&perf)).unwrap_or_else(|e| panic!("{instance}: {e}"));
    (pmu, ev)
}

#[test]
fn every_box_of_every_processor_encodes_to_a_string_the_sysfs_tree_accepts() {
    let mut checked = 0;
    let mut free = 0;
    for p in PROCESSORS {
        let root = tree(p.id);
        let sources = EventSources::with_root(root.path());
        for u in p.units {
            for info in controls(u) {
                for addr in info.known_addresses() {
                    let raw = setting(info, addr.index);
                    let (pmu, ev, name) =
                        box_event(&sources, &SpecNames, info, addr.instance, addr.index, raw)
                            .unwrap_or_else(|e| panic!("{}: {e}", addr.name));
                    assert_eq!(pmu.name, name.pmu);
                    // The tree accepts the string: its terms parse through the PMU's format
                    // to the same configuration.
                    let text = ev.to_string();
                    let inner = text
                        .strip_prefix(&format!("{}/", pmu.name))
                        .and_then(|t| t.strip_suffix('/'))
                        .unwrap_or_else(|| panic!("{text}"));
                    let back = from_terms(&pmu, inner).unwrap_or_else(|e| panic!("{text}: {e}"));
                    assert_eq!(back.config, ev.config, "{}: {text}", addr.name);
                    // Where the driver's format mirrors the register, config is the register
                    // value without the bits perf sets itself.
                    let perf_sets = ["en", "rst"]
                        .iter()
                        .filter_map(|f| info.field(f))
                        .fold(0, |m, f| m | f.mask());
                    let mirrors = !matches!(pmu.name.as_str(), n if n.starts_with("uncore_bbox"))
                        && !info.name.contains("FIXED");
                    if mirrors {
                        assert_eq!(ev.config[0], raw & !perf_sets, "{}: {text}", addr.name);
                    }
                    checked += 1;
                }
            }
        }
        // Free-running counters: no control of ours, the driver's event `event=0xff,umask=N`
        // on the box's free-running PMU (SKX_FREE: event in config:0-7, umask in 8-15).
        for (u, instance, c) in free_running(p) {
            let (pmu, ev) = free_running_event(&sources, u, instance, c);
            let text = ev.to_string();
            assert!(pmu.name.contains("free_running"), "{instance}: {text}");
            let umask = u64::from(c.perf_event.unwrap().umask);
            assert_eq!(ev.config[0], 0xff | umask << 8, "{instance}: {text}");
            let inner = text
                .strip_prefix(&format!("{}/", pmu.name))
                .and_then(|t| t.strip_suffix('/'))
                .unwrap_or_else(|| panic!("{text}"));
            assert_eq!(from_terms(&pmu, inner).unwrap().config, ev.config, "{text}");
            free += 1;
        }
    }
    assert!(checked > 690, "only {checked} counters checked");
    // Skylake-SP and Cascade Lake: 6 IIO boxes of 17 (8 bandwidth, 8 utilisation, the
    // ioclk); Ice Lake-SP: 6 IIO boxes of 9 and the iMC's free-running counters.
    assert!(free > 200, "only {free} free-running counters checked");
    println!("controls checked: {checked}; free-running counters: {free}");
}

#[test]
fn every_event_decodes_back_to_its_control_as_a_driver_reads_it() {
    // What sim_perf's driver does with a config: through the tree's format files back to
    // the control value, without the bits perf sets itself and the privilege bits.
    let mut checked = 0;
    for p in PROCESSORS {
        let root = tree(p.id);
        let sources = EventSources::with_root(root.path());
        for u in p.units {
            for info in controls(u) {
                let own = ["en", "rst", "pmi_en", "int", "usr", "os"]
                    .iter()
                    .filter_map(|f| info.field(f))
                    .fold(0, |m, f| m | f.mask());
                for addr in info.known_addresses() {
                    let raw = setting(info, addr.index);
                    let (pmu, ev, _) =
                        box_event(&sources, &SpecNames, info, addr.instance, addr.index, raw)
                            .unwrap();
                    let back = to_control(info, &ev.config, &pmu.name, &pmu.formats)
                        .unwrap_or_else(|e| panic!("{}: {ev}: {e}", addr.name));
                    assert_eq!(
                        back,
                        (raw & !own) | (info.reset & own),
                        "{}: {ev}",
                        addr.name
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 690, "only {checked} controls checked");
    // A config bit no field of the control takes is refused, as a driver's event mask would.
    let root = tree("xeon-e5-2600");
    let s = EventSources::with_root(root.path());
    let ha = pmu_runtime::lookup::find("HA_PCI_PMON_CTL0").unwrap().info;
    let pmu = s.pmu("uncore_ha", "").unwrap();
    let e = to_control(ha, &[1 << 40, 0, 0], &pmu.name, &pmu.formats).unwrap_err();
    assert!(e.to_string().contains("config:0x10000000000"), "{e}");
}

#[test]
fn typed_strings_match_what_perf_users_write() {
    let root = tree("xeon-e5-2600");
    let s = EventSources::with_root(root.path());
    let ha = pmu_runtime::lookup::find("HA_PCI_PMON_CTL0").unwrap().info;
    let raw = codec::encode(
        ha,
        0,
        &[("ev_sel".into(), "1".into()), ("umask".into(), "3".into())],
    )
    .unwrap();
    let (_, ev, _) = box_event(&s, &SpecNames, ha, "HA", 0, raw).unwrap();
    assert_eq!(ev.to_string(), "uncore_ha/event=0x1,umask=0x3/");
    // QPI: the extension bit is the event's ninth bit, at config bit 21.
    let q = pmu_runtime::lookup::find("xeon-e5-2600:Q_P1_PCI_PMON_CTL2")
        .unwrap()
        .info;
    let raw = codec::encode(
        q,
        0,
        &[("event".into(), "UNC_Q_RxL_CREDITS_CONSUMED_VN0.DRS".into())],
    )
    .unwrap();
    let (_, ev, _) = box_event(&s, &SpecNames, q, "P1", 2, raw).unwrap();
    assert_eq!(ev.to_string(), "uncore_qpi_1/event=0x11e,umask=0x1/");
    assert_eq!(ev.config[0], 0x1e | 0x1 << 8 | 1 << 21);
    let raw = codec::encode(
        q,
        0,
        &[
            ("ev_sel".into(), "3".into()),
            ("ev_sel_ext".into(), "1".into()),
        ],
    )
    .unwrap();
    let (_, ev, _) = box_event(&s, &SpecNames, q, "P1", 2, raw).unwrap();
    assert_eq!(ev.to_string(), "uncore_qpi_1/event=0x103,umask=0x0/");
    // IMC named events parse, and .unit files are not events.
    let imc = s.pmu("uncore_imc_2", "").unwrap();
    assert_eq!(
        from_terms(&imc, "clockticks").unwrap().to_string(),
        "uncore_imc_2/event=0xff,umask=0x0/"
    );
    assert_eq!(imc.events.len(), 1);
    assert_eq!(imc.cpumask, [0, 8]);
    // The core PMU, with usr only as perf's u modifier.
    let cpu_root = tree("architectural");
    let c = EventSources::with_root(cpu_root.path());
    let sel = pmu_runtime::lookup::find("IA32_PERFEVTSEL0").unwrap().info;
    let raw = codec::encode(
        sel,
        sel.reset,
        &[("ev_sel".into(), "0x3c".into()), ("en".into(), "1".into())],
    )
    .unwrap();
    let (_, ev, _) = box_event(&c, &SpecNames, sel, "CPU", 0, raw).unwrap();
    assert_eq!(ev.to_string(), "cpu/event=0x3c,umask=0x0/");
    let raw = codec::encode(sel, raw, &[("usr".into(), "1".into())]).unwrap();
    let (_, ev, _) = box_event(&c, &SpecNames, sel, "CPU", 0, raw).unwrap();
    assert_eq!(ev.to_string(), "cpu/event=0x3c,umask=0x0/u");
}

#[test]
fn what_a_format_cannot_express_is_refused_by_name() {
    let root = tree("xeon-e5-2600");
    let s = EventSources::with_root(root.path());
    let pcu = pmu_runtime::lookup::find("xeon-e5-2600:PCU_MSR_PMON_CTL0")
        .unwrap()
        .info;
    // The PCU's format has no extension bit.
    let raw = codec::encode(
        pcu,
        0,
        &[
            ("ev_sel".into(), "1".into()),
            ("ev_sel_ext".into(), "1".into()),
        ],
    )
    .unwrap();
    let e = box_event(&s, &SpecNames, pcu, "PCU", 0, raw)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("uncore_pcu has no format field for ev_sel_ext") && e.contains("--backend raw"),
        "{e}"
    );
    // The driver's occ_edge covers config:14-51, not the one bit occ_edge_det is.
    let raw = codec::encode(pcu, 0, &[("occ_edge_det".into(), "1".into())]).unwrap();
    let e = box_event(&s, &SpecNames, pcu, "PCU", 0, raw)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("config:14-51") && e.contains("occ_edge_det"),
        "{e}"
    );
    // An overflow interrupt is sampling.
    let c = pmu_runtime::lookup::find("xeon-7500:C3_MSR_PMON_EVT_SEL0")
        .unwrap()
        .info;
    let raw = codec::encode(
        c,
        0,
        &[("ev_sel".into(), "1".into()), ("pmi_en".into(), "1".into())],
    )
    .unwrap();
    let root7 = tree("xeon-7500");
    let s7 = EventSources::with_root(root7.path());
    let e = box_event(&s7, &SpecNames, c, "C3", 0, raw)
        .unwrap_err()
        .to_string();
    assert!(e.contains("pmi_en") && e.contains("--backend raw"), "{e}");
    // A missing PMU in the tree: the driver is named.
    fs::remove_dir_all(root.path().join("uncore_ha")).unwrap();
    let ha = pmu_runtime::lookup::find("HA_PCI_PMON_CTL0").unwrap().info;
    let e = box_event(&s, &SpecNames, ha, "HA", 0, 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("uncore_snbep.c"), "{e}");
}

#[test]
fn the_r_box_halves_and_the_b_box_counter_select() {
    let root = tree("xeon-7500");
    let s = EventSources::with_root(root.path());
    let r = pmu_runtime::lookup::find("R_MSR_PMON_CTL9").unwrap().info;
    let raw = codec::encode(r, 0, &[("ev_sel".into(), "6".into())]).unwrap();
    let (pmu, ev, _) = box_event(&s, &SpecNames, r, "R", 9, raw).unwrap();
    assert_eq!(
        (pmu.name.as_str(), ev.to_string().as_str()),
        ("uncore_rbox_1", "uncore_rbox_1/event=0x6/")
    );
    let b = pmu_runtime::lookup::find("B1_MSR_PMON_EVT_SEL2")
        .unwrap()
        .info;
    let raw = codec::encode(b, 0, &[("ev_sel".into(), "4".into())]).unwrap();
    let (_, ev, _) = box_event(&s, &SpecNames, b, "B1", 2, raw).unwrap();
    assert_eq!(ev.to_string(), "uncore_bbox_1/event=0x4,counter=0x2/");
    assert_eq!(ev.config[0], 4 << 1 | 2 << 6);
}

#[test]
fn the_names_cover_every_box_of_the_spec() {
    for p in PROCESSORS {
        // Units without boxes (the discovery table's layouts) have no kernel PMU.
        for u in p.units.iter().filter(|u| u.pmu.is_some()) {
            for i in u.instances {
                let n = SpecNames.lookup(p.id, u.name, i, None).unwrap();
                assert!(
                    kernel_pmus(p.id).iter().any(|(k, _)| k == n.pmu),
                    "{}",
                    n.pmu
                );
            }
        }
    }
}

/// Every string `box_event` makes for `processor`'s boxes, against its tree.
fn all_strings(processor: &str, root: &std::path::Path) -> Vec<String> {
    let sources = EventSources::with_root(root);
    let p = PROCESSORS.iter().find(|p| p.id == processor).unwrap();
    let mut out = Vec::new();
    for u in p.units {
        for info in controls(u) {
            for addr in info.known_addresses() {
                let raw = setting(info, addr.index);
                let (_, ev, _) =
                    box_event(&sources, &SpecNames, info, addr.instance, addr.index, raw).unwrap();
                out.push(ev.to_string());
            }
        }
    }
    for (u, instance, c) in free_running(p) {
        out.push(free_running_event(&sources, u, instance, c).1.to_string());
    }
    out
}

#[test]
fn perf_itself_parses_every_string_against_the_drivers_formats() {
    // `perf stat` reads the PMUs from /sys/bus/event_source/devices: in a private mount
    // namespace (unshare, from util-linux; -r maps the caller to root in a user namespace)
    // the tree built from the drivers' formats is bind-mounted there. perf then parses each
    // string against it; opening fails (the types do not exist), which perf reports as
    // `<not supported>` and still exits 0. A term the format lacks is a syntax error.
    // Processors with boxes (not the discovery table's format) and events to encode (Diamond
    // Rapids' CBO has none: Intel publishes no list for it).
    let with_boxes = PROCESSORS.iter().filter(|p| {
        p.units
            .iter()
            .any(|u| u.pmu.is_some() && !u.events.is_empty())
    });
    for processor in with_boxes.map(|p| p.id) {
        let root = tree(processor);
        let strings = all_strings(processor, root.path());
        assert!(!strings.is_empty());
        let mut script = format!(
            "mount --bind {} /sys/bus/event_source/devices && exec perf stat -a",
            root.path().display()
        );
        for s in &strings {
            script.push_str(&format!(" -e '{s}'"));
        }
        script.push_str(" true");
        let out = std::process::Command::new("unshare")
            .args(["-rm", "sh", "-c", &script])
            .output()
            .expect("unshare (util-linux) and perf (linux-perf; .ci/run installs it) run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{processor}: perf refused a string:\n{err}"
        );
        for s in &strings {
            assert!(
                err.contains(s.as_str()),
                "{processor}: perf did not report {s}:\n{err}"
            );
        }
    }
    // The check can fail: perf refuses a term the tree's format lacks.
    let root = tree("xeon-e5-2600");
    let out = std::process::Command::new("unshare")
        .args([
            "-rm",
            "sh",
            "-c",
            &format!(
                "mount --bind {} /sys/bus/event_source/devices && exec perf stat -a -e 'uncore_pcu/event=0x1,umask=0x1/' true",
                root.path().display()
            ),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown term 'umask'"));
}

/// A core event's auxiliary MSR goes into the term the cpu PMU's format has for that register
/// (core.c: `offcore_rsp` and `frontend`, config1), beside the control's terms; a cpu PMU
/// without the term refuses it by name.
#[test]
fn an_auxiliary_msr_goes_into_the_cpu_pmus_config1_term() {
    let root = tempfile::tempdir().unwrap();
    let cpu = root.path().join("cpu/format");
    fs::create_dir_all(&cpu).unwrap();
    for (f, spec) in kernel_pmus::CPU_SKL {
        fs::write(cpu.join(f), format!("{spec}\n")).unwrap();
    }
    fs::write(root.path().join("cpu/type"), "4\n").unwrap();
    let s = EventSources::with_root(root.path());
    let pmu = s.pmu("cpu", "").unwrap();
    let found = pmu_runtime::lookup::find("IA32_PERFEVTSEL0").unwrap();
    let (info, addr) = (found.info, found.address.unwrap());
    let name = SpecNames
        .lookup(info.processor, info.unit, addr.instance, Some(addr.index))
        .unwrap();
    for (event, term, value) in [
        (
            "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE",
            "offcore_rsp",
            0x10001,
        ),
        ("FRONTEND_RETIRED.DSB_MISS", "frontend", 0x11),
    ] {
        let pairs = [("event".to_string(), event.to_string())];
        let raw = codec::encode_for(info, 0, &pairs, Some("skylake-sp")).unwrap();
        let aux = codec::aux_for(info, &pairs, Some("skylake-sp")).unwrap();
        let mut ev =
            pmu_runtime::perf::encode::from_control(info, raw, "cpu", &pmu.formats, None).unwrap();
        assert_eq!(ev.config[1], 0, "{event}: nothing in config1 before");
        pmu_runtime::perf::encode::with_aux(&mut ev, &pmu.formats, name.driver, aux).unwrap();
        assert_eq!(ev.config[1], value, "{event}");
        assert!(
            ev.to_string().contains(&format!("{term}={value:#x}")),
            "{event}: {ev}"
        );
    }
    // A cpu PMU of the E5 family (no frontend format) refuses a front-end value by name.
    let old = tree("xeon-e5-2600-v4");
    let s = EventSources::with_root(old.path());
    let pmu = s.pmu("cpu", "").unwrap();
    let mut ev =
        pmu_runtime::perf::encode::from_control(info, 0xc6 | 1 << 8, "cpu", &pmu.formats, None)
            .unwrap();
    let frontend = pmu_regs::AuxMsr {
        register: "MSR_PEBS_FRONTEND",
        address: 0x3F7,
        value: 0x11,
    };
    let e = pmu_runtime::perf::encode::with_aux(&mut ev, &pmu.formats, name.driver, frontend)
        .unwrap_err()
        .to_string();
    assert!(e.contains("frontend"), "{e}");
}
