//! AMD Zen 2 to Zen 5 through the `pmu` command and the simulator: every unit of every
//! generation is counted with `--sim` and put back; the core PMC's 12-bit event select, split
//! over register bits 35:32 and 7:0, is decoded and encoded as one value (an event above 0xFF
//! sets bits 35:32); the per-CPU PMC box, which has no architectural layout, is simulated from
//! its structure alone.

use pmu_runtime::boxes::Boxes;
use pmu_runtime::counters::Counting;
use pmu_runtime::sampling::cpu_box::CpuBox;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::sim::{PmiSource, Sim, SimConfig};
use pmu_runtime::{read_by_info, write_by_info, Site};

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::run;
#[path = "support/spec.rs"]
mod spec;
use spec::processor;

const ZEN: [&str; 4] = ["amd-zen2", "amd-zen3", "amd-zen4", "amd-zen5"];

/// `pmu watch --sim --unit amd-zenN:BOX` counts the simulated workload on every box of every
/// generation (the PMC box per CPU, the L3, the Data Fabric and each UMC per socket).
#[test]
fn watch_counts_every_unit_of_every_generation_on_the_simulator() {
    let mut watched = Vec::new();
    for id in ZEN {
        for b in &Boxes::of(processor(id)).boxes {
            let unit = format!("{id}:{}", b.instance);
            let (code, out, err) = run(&[
                "watch",
                "--sim",
                "--unit",
                &unit,
                "--event",
                "event=0x04",
                "--count",
                "2",
                "--interval",
                "0.01",
                "-x,",
            ]);
            assert_eq!(code, 0, "{unit}: {err}");
            let counts: Vec<u64> = out
                .lines()
                .filter(|l| !l.starts_with('#') && !l.starts_with("time,"))
                .map(|l| l.split(',').nth_back(1).unwrap().parse().unwrap())
                .collect();
            // One row per interval, and per L3 for the L3 box: the simulated socket has
            // two core complexes.
            let rows = if b.scope() == pmu_regs::Scope::L3 {
                4
            } else {
                2
            };
            assert_eq!(counts.len(), rows, "{unit}: {out}");
            assert!(counts.iter().all(|&c| c > 0), "{unit}: {out}");
            watched.push(unit);
        }
    }
    // PMC, L3, DF on each; twelve UMCs on Zen 4 and Zen 5.
    assert_eq!(watched.len(), 3 * 4 + 2 * 12, "{watched:?}");
}

/// Every counter of every AMD box counts what the simulator injects and every register it
/// programmed reads as before once the session is closed: the PMC box through the per-CPU
/// model, with PerfMonV2's global control on Zen 4/5 and without any box level on Zen 2/3.
#[test]
fn every_counter_counts_and_every_register_is_put_back() {
    for id in ZEN {
        let p = processor(id);
        let boxes = Boxes::of(p);
        for b in &boxes.boxes {
            let sim = Sim::new(SimConfig::of(p));
            let regs: Vec<_> = b
                .counters
                .iter()
                .flat_map(|c| c.control.into_iter().chain([c.counter]))
                .chain(b.controls.iter().copied())
                .collect();
            // Every AMD register is an MSR, read on CPU 0.
            let read = |r: &pmu_runtime::boxes::Reg| {
                read_by_info(&sim, r.info, r.addr, Site::Cpu(0)).unwrap()
            };
            let before: Vec<u64> = regs.iter().map(read).collect();
            let mut session = Counting::open(&sim, boxes, b, 0, 0, None).unwrap();
            let n = session.general_counters().len();
            let sels: Vec<EventSelect> = (0..n)
                .map(|i| EventSelect::event(0x20 + i as u16))
                .collect();
            let numbers = session.program(&sels).unwrap();
            for (i, number) in numbers.iter().enumerate() {
                let events = 1000 + i as u64;
                if b.scope() == pmu_regs::Scope::Cpu {
                    assert_eq!(sim.core_box(), Some(b.instance), "{id}");
                    sim.inject_core(0, 0x20 + i as u16, 0, events).unwrap();
                } else {
                    sim.inject_uncore(
                        0,
                        pmu_runtime::sim::UncoreEvent {
                            instance: b.instance,
                            ev_sel: 0x20 + i as u16,
                            umask: None,
                        },
                        events,
                    )
                    .unwrap();
                }
                assert_eq!(
                    session.read_counter(*number).unwrap(),
                    events,
                    "{id}:{} counter {number}",
                    b.instance
                );
            }
            session.close().unwrap();
            let after: Vec<u64> = regs.iter().map(read).collect();
            assert_eq!(before, after, "{id}:{} put back", b.instance);
        }
    }
}

/// A PERF_CTL value whose event select is 0x1C1 (bit 32 and 0xC1) decodes to one 12-bit
/// field and names Zen 4's event; encoding that event sets bit 32.
#[test]
fn the_split_event_select_decodes_and_encodes_as_one_value() {
    let (code, out, err) = run(&["decode", "amd-zen4:PERF_CTL0", "0x1004300c1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0x1c1"), "{out}");
    assert!(out.contains("ex_ret_ucode_instr"), "{out}");
    let (code, out, err) = run(&[
        "encode",
        "amd-zen4:PERF_CTL0",
        "event=ex_ret_ucode_instr",
        "usr=1",
        "os=1",
        "en=1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines().next().unwrap().contains("0x00000001004300c1"),
        "{out}"
    );
    assert_eq!(
        out.lines().nth(1),
        Some("event: ex_ret_ucode_instr"),
        "{out}"
    );
}

/// Every register of `b` a sampling session may change, read on `cpu`.
fn box_registers(sim: &Sim, b: &pmu_runtime::boxes::PmuBox, cpu: u32) -> Vec<u64> {
    b.counters
        .iter()
        .flat_map(|c| c.control.into_iter().chain([c.counter]))
        .chain(b.controls.iter().copied())
        .chain(b.statuses.iter().copied())
        .map(|r| read_by_info(&sim, r.info, r.addr, Site::Cpu(cpu)).unwrap())
        .collect()
}

/// Sampling on the core counters' overflow interrupt on each generation, through the
/// library: the PMI comes on exactly the Nth event, to the CPU whose counter overflowed; the
/// handler finds the overflowed counter the way the spec says the generation shows it (Zen 2
/// and 3: the counter's bit 47 reads 0, no register read; Zen 4 and 5: PerfMonV2's global
/// status, one read, cleared through the status-clear register); the counters keep counting
/// past the overflow, re-arming loses no event, and closing puts every register back.
#[test]
fn core_counters_sample_on_overflow_on_every_generation() {
    for id in ZEN {
        let p = processor(id);
        let sim = Sim::new(SimConfig::of(p));
        let cpu = 1;
        let pmc = CpuBox::open(&sim, p, cpu).unwrap();
        let before = box_registers(&sim, pmc.pmu_box(), cpu);
        let mut sampling = pmc
            .arm(&[
                (0, EventSelect::event(0x1C1), 1000),
                (2, EventSelect::event(0x76), 5000),
            ])
            .unwrap();
        sim.inject_core(cpu, 0x1C1, 0, 999).unwrap();
        assert!(sim.pmis().is_empty(), "{id}: a PMI before the 1000th event");
        sim.inject_core(cpu, 0x1C1, 0, 1).unwrap();
        let pmis = sim.pmis();
        assert_eq!(pmis.len(), 1, "{id}: {pmis:?}");
        assert_eq!(pmis[0].event, 1000, "{id}");
        assert_eq!(pmis[0].core, Some(cpu), "{id}");
        assert_eq!(
            pmis[0].source,
            PmiSource::Core {
                cpu,
                counter: pmc.pmu_box().counter(0).unwrap().counter.name().into()
            },
            "{id}"
        );
        // The counter goes on counting after the overflow; the other one has not overflowed.
        sim.inject_core(cpu, 0x1C1, 0, 20).unwrap();
        sim.inject_core(cpu, 0x76, 0, 100).unwrap();
        let sample = pmc.sample(&sampling).unwrap();
        assert_eq!(sample.overflowed, vec![0], "{id}");
        assert_eq!(sample.counts, vec![(0, 1020), (2, 100)], "{id}");
        let perfmon_v2 = !pmc.pmu_box().statuses.is_empty();
        assert_eq!(perfmon_v2, matches!(id, "amd-zen4" | "amd-zen5"), "{id}");
        assert_eq!(sample.status_reads, usize::from(perfmon_v2), "{id}");
        pmc.rearm(&mut sampling, &sample).unwrap();
        // Re-armed: nothing is seen as overflowed (the status bit was cleared, the counter
        // preloaded again), and the next interrupt comes 1000 events later.
        let quiet = pmc.sample(&sampling).unwrap();
        assert!(quiet.overflowed.is_empty(), "{id}: {quiet:?}");
        assert_eq!(quiet.counts, vec![(0, 0), (2, 0)], "{id}");
        sim.inject_core(cpu, 0x1C1, 0, 1000).unwrap();
        assert_eq!(sim.pmis().len(), 2, "{id}");
        assert_eq!(sim.pmis()[1].event, 1000 + 20 + 100 + 1000, "{id}");
        let second = pmc.sample(&sampling).unwrap();
        assert_eq!(second.overflowed, vec![0], "{id}");
        assert_eq!(second.counts, vec![(0, 1000), (2, 0)], "{id}");
        pmc.rearm(&mut sampling, &second).unwrap();
        sampling.close().unwrap();
        assert_eq!(
            box_registers(&sim, pmc.pmu_box(), cpu),
            before,
            "{id}: put back"
        );
    }
}

/// What the generations' ways of seeing an overflow refuse, before anything is written: where
/// the top bit shows it (Zen 2/3), an interval of more than 2^47 events (its preload would
/// have bit 47 clear already); anywhere, a counter given twice, a counter the box lacks, and a
/// counter another tool has enabled.
#[test]
fn sampling_plans_the_counters_cannot_take_are_refused_before_any_write() {
    for id in ZEN {
        let p = processor(id);
        let sim = Sim::new(SimConfig::of(p));
        let pmc = CpuBox::open(&sim, p, 0).unwrap();
        let before = box_registers(&sim, pmc.pmu_box(), 0);
        let big = (1u64 << 47) + 1;
        let refused = pmc.arm(&[(1, EventSelect::event(0xC0), big)]);
        if pmc.pmu_box().statuses.is_empty() {
            let e = refused.unwrap_err().to_string();
            assert!(
                e.contains(&format!("choose 1 to {}", 1u64 << 47)),
                "{id}: {e}"
            );
        } else {
            refused.unwrap().close().unwrap();
        }
        for plan in [
            vec![
                (1, EventSelect::event(0xC0), 10),
                (1, EventSelect::event(0xC1), 10),
            ],
            vec![(6, EventSelect::event(0xC0), 10)],
        ] {
            let e = pmc.arm(&plan).unwrap_err().to_string();
            assert!(e.contains("counter"), "{id}: {e}");
        }
        assert_eq!(box_registers(&sim, pmc.pmu_box(), 0), before, "{id}");
        // A counter enabled by someone else.
        let ctl = pmc.pmu_box().counter(3).unwrap().control.unwrap();
        let en = pmc
            .pmu_box()
            .counter(3)
            .unwrap()
            .control_bits(pmu_regs::Role::Enable)
            .unwrap()
            .mask();
        write_by_info(&sim, ctl.info, ctl.addr, Site::Cpu(0), en).unwrap();
        let e = pmc
            .arm(&[(3, EventSelect::event(0xC0), 10)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("already enabled"), "{id}: {e}");
    }
}

/// The L3 is one box per core complex (the spec's `scope="l3"`): the topology says which CPUs
/// share an L3 (on hardware sysfs's `cache/index3/shared_cpu_list`), a session counts each L3
/// through its lowest CPU, every CPU of a core complex reaches the same counters and no other
/// complex's, and two complexes' boxes are claimed and put back apart.
#[test]
fn the_l3_is_one_box_per_core_complex() {
    for id in ZEN {
        let p = processor(id);
        let sim = Sim::new(SimConfig {
            sockets: 2,
            cpus_per_socket: 8,
            cpus_per_l3: 4,
            ..SimConfig::of(p)
        });
        let topology = sim.topology();
        assert_eq!(topology.l3_cpus(0), vec![0, 4], "{id}");
        assert_eq!(topology.l3_cpus(1), vec![8, 12], "{id}");
        assert_eq!(topology.l3_of(6), Some(4), "{id}");
        let boxes = Boxes::of(p);
        let l3 = boxes.find("L3").unwrap();
        assert_eq!(l3.scope(), pmu_regs::Scope::L3, "{id}");
        let ctl = l3.counters[0].control.unwrap();
        let read = |cpu| read_by_info(&sim, ctl.info, ctl.addr, Site::Cpu(cpu)).unwrap();
        let mut first = Counting::open(&sim, boxes, l3, 0, 0, None).unwrap();
        let mut second = Counting::open(&sim, boxes, l3, 4, 0, None).unwrap();
        let a = first.program(&[EventSelect::event(0x04)]).unwrap()[0];
        let b = second.program(&[EventSelect::event(0x05)]).unwrap()[0];
        // CPU 6 shares CPU 4's L3: it sees that complex's control, not CPU 0's.
        assert_ne!(read(6), read(0), "{id}");
        assert_eq!(read(6), read(4), "{id}");
        let event = |ev_sel| pmu_runtime::sim::UncoreEvent {
            instance: l3.instance,
            ev_sel,
            umask: None,
        };
        sim.inject_l3(5, event(0x05), 300).unwrap();
        sim.inject_l3(2, event(0x04), 70).unwrap();
        sim.inject_l3(6, event(0x04), 1000).unwrap(); // not counted: complex 1 counts 0x05
        assert_eq!(first.read_counter(a).unwrap(), 70, "{id}");
        assert_eq!(second.read_counter(b).unwrap(), 300, "{id}");
        second.close().unwrap();
        first.close().unwrap();
        assert_eq!(read(0), 0, "{id}");
        assert_eq!(read(4), 0, "{id}");
    }
}

/// `pmu watch --sim` shows one row per core complex for the L3, each with its CPU.
#[test]
fn watch_shows_a_row_per_core_complex() {
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "amd-zen4:L3",
        "--event",
        "event=0x04",
        "--count",
        "1",
        "--interval",
        "0.01",
        "-x,",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "time,socket,cpu,counter,event,count,rate",
        "{out}"
    );
    let cpus: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(',').nth(2).unwrap())
        .collect();
    assert_eq!(cpus, ["0", "1"], "{out}");
}

/// The counts `pmu watch --sim --unit UNIT --event EVENT` prints (one per row), or its error.
fn watch_counts(unit: &str, event: &str) -> Result<Vec<u64>, String> {
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        unit,
        "--event",
        event,
        "--count",
        "2",
        "--interval",
        "0.01",
        "-x,",
    ]);
    if code != 0 {
        return Err(err);
    }
    Ok(out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("time,"))
        .map(|l| l.split(',').nth_back(1).unwrap().parse().unwrap())
        .collect())
}

/// The L3 control's thread and slice masks count nothing at their reset value of zero: the
/// control value counting programs sets them as the spec's `count-default` says (all threads,
/// all slices, all cores), unless the event names them. On the simulator, as on hardware, a
/// zero mask observes nothing.
#[test]
fn an_l3_event_counts_with_the_default_masks_and_nothing_with_a_zero_mask() {
    for id in ZEN {
        let boxes = Boxes::of(processor(id));
        let l3 = boxes.find("L3").unwrap();
        let c = l3.counter(0).unwrap();
        let raw = c.control_value(&EventSelect::event(0x04), false).unwrap();
        let field = |name: &str| {
            let ctl = c.control.unwrap().info;
            ctl.fields
                .iter()
                .find(|f| f.name == name)
                .unwrap()
                .extract(raw)
        };
        assert_eq!(field("thread_mask"), field("thread_mask") | 0x3, "{id}");
        let unit = format!("{id}:L3");
        let counts = watch_counts(&unit, "event=0x04").unwrap();
        assert!(counts.iter().all(|&n| n > 0), "{unit}: {counts:?}");
        let zero = watch_counts(&unit, "event=0x04,thread_mask=0").unwrap();
        assert!(
            !zero.is_empty() && zero.iter().all(|&n| n == 0),
            "{unit}: {zero:?}"
        );
        if id == "amd-zen2" {
            assert_eq!((field("thread_mask"), field("slice_mask")), (0xFF, 0xF));
            let zero = watch_counts(&unit, "event=0x04,slice_mask=0").unwrap();
            assert!(zero.iter().all(|&n| n == 0), "{unit}: {zero:?}");
        } else {
            let all = (
                field("thread_mask"),
                field("en_all_cores"),
                field("en_all_slices"),
            );
            assert_eq!(all, (0x3, 1, 1), "{id}");
            // One thread of one core on one slice still observes something.
            let one = watch_counts(
                &unit,
                "event=0x04,thread_mask=1,en_all_cores=0,core_id=2,en_all_slices=0,slice_id=1",
            )
            .unwrap();
            assert!(one.iter().all(|&n| n > 0), "{unit}: {one:?}");
        }
    }
}

/// A filter is set only on a control that has it, and only to a value that fits it.
#[test]
fn an_l3_filter_is_refused_where_it_does_not_fit() {
    let wide = watch_counts("amd-zen4:L3", "event=0x04,thread_mask=0x4").unwrap_err();
    assert!(wide.contains(".thread_mask, 2 bits wide"), "{wide}");
    let other = watch_counts("amd-zen4:DF", "event=0x04,thread_mask=1").unwrap_err();
    assert!(
        other.contains("`thread_mask` is not a filter of"),
        "{other}"
    );
    let zen2 = watch_counts("amd-zen2:L3", "event=0x04,slice_id=1").unwrap_err();
    assert!(
        zen2.contains("its filters are thread_mask, slice_mask"),
        "{zen2}"
    );
}

/// A Zen 4 part that reports fewer core counters in CPUID leaf 80000022H (EBX[3:0], the
/// spec's `count-cpuid` on PERF_CTL{n}) than the spec lists is counted on those alone: six
/// events take turns on PERF_CTL0-3, and PERF_CTL4 and PERF_CTL5 are never written. With the
/// spec's six, they are used.
#[test]
fn a_zen4_part_with_fewer_core_counters_is_counted_on_those_it_reports() {
    use pmu_runtime::machine::{Machine, Where};
    use pmu_runtime::session::{Clock, Options, Selection, Session, SessionBackend};
    let p = processor("amd-zen4");
    let counted = |cpuid_counts: &'static [(&'static str, u32)]| {
        let machine = Machine::simulated(SimConfig {
            cpuid_counts,
            ..SimConfig::of(p)
        });
        assert_eq!(
            machine.cpuid_count("80000022H.EBX[3:0]"),
            Some(cpuid_counts.first().map_or(6, |c| c.1))
        );
        let boxes = Boxes::of(p);
        let pmc = boxes
            .boxes
            .iter()
            .find(|b| b.scope() == pmu_regs::Scope::Cpu)
            .unwrap();
        let sels: Vec<EventSelect> = (1..=6).map(EventSelect::event).collect();
        let names: Vec<String> = (1..=6).map(|e| format!("ev_sel={e:#x}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let selection = Selection::of_boxes(&[(boxes, pmc)], &names, &sels).unwrap();
        let backend = SessionBackend::Registers(&machine);
        let options = Options {
            clock: Clock::Steps(std::time::Duration::from_millis(10)),
            ..Options::default()
        };
        let mut session = Session::open(&backend, &selection, options).unwrap();
        let at = Where {
            cpu: Some(0),
            ..Where::default()
        };
        let ctl = |n: u32| {
            let r = machine
                .resolve(&format!("amd-zen4:PERF_CTL{n}"), &at)
                .unwrap();
            machine.read(&r).unwrap()
        };
        let mut used = Vec::new();
        for _ in 0..4 {
            session.read_all().unwrap();
            used.extend((0..6).filter(|&n| ctl(n) != 0));
        }
        let mut counters: Vec<String> =
            session.series().iter().map(|s| s.counter.clone()).collect();
        counters.sort();
        counters.dedup();
        session.close().unwrap();
        used.sort();
        used.dedup();
        (used, counters)
    };
    let (used, counters) = counted(&[("80000022H.EBX[3:0]", 4)]);
    assert_eq!(used, [0, 1, 2, 3]);
    assert_eq!(
        counters,
        ["PERF_CTR0", "PERF_CTR1", "PERF_CTR2", "PERF_CTR3"]
    );
    let (used, _) = counted(&[]);
    assert_eq!(used, [0, 1, 2, 3, 4, 5]);
}

/// `pmu encode` and `pmu decode` of a Zen 4 Data Fabric control: the 14-bit event select
/// (register bits 37:32 and 7:0) and the 12-bit unit mask (27:24 and 15:8) are each one value
/// in one row, whose BITS column names every range.
#[test]
fn a_data_fabric_control_encodes_and_decodes_its_split_fields_as_one_value_each() {
    // Event 0x3C7: 0x3 in bits 37:32, 0xC7 in 7:0; unit mask 0xA5B: 0xA in 27:24, 0x5B in 15:8.
    let raw = 0x3u64 << 32 | 0xA << 24 | 1 << 22 | 0x5B << 8 | 0xC7;
    let (code, out, err) = run(&[
        "encode",
        "amd-zen4:DF_PERF_CTL0",
        "ev_sel=0x3C7",
        "umask=0xA5B",
        "en=1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("{raw:#018x}")), "{out}");
    let (code, decoded, err) = run(&["decode", "amd-zen4:DF_PERF_CTL0", &format!("{raw:#x}")]);
    assert_eq!(code, 0, "{err}");
    for text in [&out, &decoded] {
        let row = |field: &str| {
            text.lines()
                .find(|l| l.split_whitespace().nth(1) == Some(field))
                .unwrap_or_else(|| panic!("no {field} row: {text}"))
                .split_whitespace()
                .collect::<Vec<_>>()
        };
        let ev = row("ev_sel");
        assert_eq!((ev[0], ev[3]), ("37:32,7:0", "0x3c7"), "{text}");
        let umask = row("umask");
        assert_eq!((umask[0], umask[3]), ("27:24,15:8", "0xa5b"), "{text}");
    }
}

/// AMD's UMC counters stop at their top instead of wrapping (Linux 2492e5aba2be): the
/// simulator saturates them as the hardware does. A counter found at 2^48 - 1000 that then
/// counts 5000 events: with the runtime's handling off the delta is the 999 events it took
/// to reach 2^48 - 1, where it stopped; with it on, the first reading finds bit 47 set and
/// resets the counter (as Linux's amd_uncore_umc_read does), readings go on over 47 bits,
/// and the delta is the 5000 events. Closing puts the value found back.
#[test]
fn a_umc_delta_across_saturation_is_right_with_the_handling_and_stops_without() {
    use pmu_runtime::counters::delta;
    use pmu_runtime::quirks::Quirks;
    for id in ["amd-zen4", "amd-zen5"] {
        let p = processor(id);
        let boxes = Boxes::of(p);
        let umc = boxes.boxes.iter().find(|b| b.instance == "UMC0").unwrap();
        for (quirks, expected) in [(Quirks::NONE, 999), (Quirks::ALL, 5000)] {
            let sim = Sim::new(SimConfig::of(p));
            let found = (1u64 << 48) - 1000;
            let counter = umc.counters[0].counter;
            write_by_info(&sim, counter.info, counter.addr, Site::Cpu(0), found).unwrap();
            let mut session = Counting::open(&sim, boxes, umc, 0, 0, None).unwrap();
            session.set_quirks(quirks);
            let n = session.program(&[EventSelect::event(0x0A)]).unwrap()[0];
            assert_eq!(n, umc.counters[0].number());
            let width = session.counter_width(n).unwrap();
            let start = session.read_counter(n).unwrap();
            sim.inject_uncore(
                0,
                pmu_runtime::sim::UncoreEvent {
                    instance: "UMC0",
                    ev_sel: 0x0A,
                    umask: None,
                },
                5000,
            )
            .unwrap();
            let now = session.read_counter(n).unwrap();
            assert_eq!(delta(start, now, width), expected, "{id} {quirks:?}");
            session.close().unwrap();
            let back = read_by_info(&sim, counter.info, counter.addr, Site::Cpu(0)).unwrap();
            assert_eq!(back, found, "{id} {quirks:?}: put back");
        }
    }
}

/// The off switch a conformance run uses, through a counting session: Zen 4's UMC0 counter
/// found at 2^48 - 1000, counting 500,000 events a second read every 10 ms (5000 an
/// interval). With `Options::quirks` off the first interval sees the 999 events before the
/// counter stopped at its top and the next ones nothing; with the handling on every interval
/// counts its 5000. Closing puts the value found back either way.
#[test]
fn a_session_counts_across_umc_saturation_unless_its_quirks_are_off() {
    use pmu_runtime::machine::{Machine, Where};
    use pmu_runtime::quirks::Quirks;
    use pmu_runtime::session::{Clock, Options, Pace, Selection, Session, SessionBackend};
    use std::time::Duration;
    let p = processor("amd-zen4");
    let boxes = Boxes::of(p);
    let found = (1u64 << 48) - 1000;
    for (quirks, expected) in [(Quirks::NONE, [999, 0, 0]), (Quirks::ALL, [5000; 3])] {
        let machine = Machine::simulating(p);
        let at = Where {
            socket: Some(0),
            ..Where::default()
        };
        let ctr = machine.resolve("amd-zen4:UMC0_PERF_CTR0", &at).unwrap();
        machine.write(&ctr, found).unwrap();
        let selection = Selection::of_boxes(
            &[(boxes, boxes.find("UMC0").unwrap())],
            &["ev_sel=0x0a"],
            &[EventSelect::event(0x0A)],
        )
        .unwrap();
        let options = Options {
            clock: Clock::Steps(Duration::from_millis(10)),
            pace: Pace::Steady(500_000),
            quirks,
            ..Options::default()
        };
        let backend = SessionBackend::Registers(&machine);
        let mut session = Session::open(&backend, &selection, options).unwrap();
        let deltas: Vec<u64> = (0..3)
            .map(|_| session.interval().unwrap().counts[0].delta)
            .collect();
        assert_eq!(deltas, expected, "{quirks:?}");
        session.close().unwrap();
        assert_eq!(machine.read(&ctr).unwrap(), found, "{quirks:?}: put back");
    }
}
