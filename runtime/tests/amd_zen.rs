//! AMD Zen 2 to Zen 5 through the `pmu` command and the simulator: every unit of every
//! generation is counted with `--sim` and put back; the core PMC's 12-bit event select, split
//! over register bits 35:32 and 7:0, is decoded and encoded as one value (an event above 0xFF
//! sets bits 35:32); the per-CPU PMC box, which has no architectural layout, is simulated from
//! its structure alone.

use pmu_regs::PROCESSORS;
use pmu_runtime::boxes::Boxes;
use pmu_runtime::counters::Counting;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::sim::{Sim, SimConfig};
use pmu_runtime::{read_by_info, Place};

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::run;

const ZEN: [&str; 4] = ["amd-zen2", "amd-zen3", "amd-zen4", "amd-zen5"];

fn processor(id: &str) -> &'static pmu_regs::ProcessorInfo {
    PROCESSORS.iter().find(|p| p.id == id).unwrap()
}

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
                .map(|l| l.split(',').nth(4).unwrap().parse().unwrap())
                .collect();
            assert_eq!(counts.len(), 2, "{unit}: {out}");
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
                read_by_info(&sim, r.info, r.addr, Place::Cpu(0)).unwrap()
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
