//! The whole discovery path for every processor whose spec has discovery types: the table the
//! simulated part publishes -> locate -> read -> join with the spec -> a counting session on
//! every box the join accepts -> counts -> everything put back. (The corruption classes are
//! runtime/tests/discovery_reader.rs; a processor written only as a spec, test_spec.rs.)

use pmu_regs::{AddressInfo, Location, PROCESSORS};
use pmu_runtime::boxes::{Boxes, Reg};
use pmu_runtime::counters::Counting;
use pmu_runtime::discovery::{
    entry_place, join, locate, msr_place, read_table, simulated_table, BoxStatus,
};
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::Selection;
use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent};
use pmu_runtime::table_placed::{placed_boxes, placed_on};
use pmu_runtime::{read_by_info, Bdf, Site};

const DEVICE: Bdf = Bdf::new(0x7e, 0, 1);

fn read(sim: &Sim, r: Reg) -> u64 {
    let a: &AddressInfo = r.addr;
    // A PCI or memory-mapped box the table placed is where socket 0's table says.
    if let Some(site) = pmu_runtime::table_placed::site(r.addr, 0) {
        return read_by_info(sim, r.info, r.addr, site.unwrap()).unwrap_or(0);
    }
    let place = match a.location {
        Location::Msr(_) => Site::Cpu(0),
        Location::Pci {
            device_id,
            device,
            function,
            ..
        } => Site::Device(
            sim.uncore_devices()
                .bdf_at(0, device_id, device, function, r.name())
                .unwrap(),
        ),
        Location::Mmio { .. } => {
            pmu_runtime::access::place_of(sim, &sim.uncore_devices(), 0, r.info, r.addr).unwrap()
        }
        Location::Table(_) | Location::SysReg(_) => {
            unreachable!("these boxes' registers are MSRs, PCI or MMIO")
        }
    };
    read_by_info(sim, r.info, r.addr, place).unwrap_or(0)
}

#[test]
fn every_discovered_box_of_every_processor_counts_on_the_simulator_and_is_put_back() {
    let mut processors = Vec::new();
    for p in PROCESSORS {
        let boxes = Boxes::of(p);
        let sim = Sim::new(SimConfig::of(p));
        // The table the simulated part publishes (memory-mapped boxes at its windows).
        let Some(table) = sim.discovery_table() else {
            continue;
        };
        let at = locate(&table, DEVICE).unwrap()[0].address;
        let joined = join(boxes, &read_table(&table, at).unwrap());
        assert!(joined.all_match(), "{}: {joined:?}", p.id);
        let mut counted = 0;
        for j in &joined.boxes {
            let b = j
                .spec
                .expect("every box of a simulated table is the spec's");
            // A box the table places (the spec's <from-table>) is placed from its entry.
            let (boxes, b) = match j.table.and_then(|t| entry_place(&t, 0)) {
                Some(at) if b.table_placed() => {
                    let placed = placed_on(boxes, &[(b.instance, vec![at])]);
                    (placed, placed.find(b.instance).unwrap())
                }
                _ => (boxes, b),
            };
            // The session's own check of the joined view, before any write.
            let selection =
                Selection::of_boxes(&[(boxes, b)], &["e"], &[EventSelect::event(0x21)]).unwrap();
            selection.check_discovered(&joined, false).unwrap();
            let regs: Vec<Reg> = b
                .counters
                .iter()
                .flat_map(|c| c.control.into_iter().chain([c.counter]))
                .collect();
            let before: Vec<u64> = regs.iter().map(|r| read(&sim, *r)).collect();
            let mut c = Counting::open(&sim, boxes, b, 0, 0, Some(sim.uncore_devices())).unwrap();
            let n = c.program(&[EventSelect::event(0x21)]).unwrap()[0];
            let ev = UncoreEvent {
                instance: b.instance,
                ev_sel: 0x21,
                umask: None,
            };
            sim.inject_uncore(0, ev, 321).unwrap();
            assert_eq!(c.read_counter(n).unwrap(), 321, "{}:{}", p.id, b.instance);
            c.close().unwrap();
            let after: Vec<u64> = regs.iter().map(|r| read(&sim, *r)).collect();
            assert_eq!(after, before, "{}:{} put back", p.id, b.instance);
            counted += 1;
        }
        assert_eq!(counted, joined.boxes.len());
        println!(
            "{}: {counted} boxes discovered, joined, counted and put back",
            p.id
        );
        processors.push(p.id);
    }
    assert!(processors.contains(&"sapphire-rapids"), "{processors:?}");
    // A box whose table entry disagrees is refused before anything is written.
    let spr = PROCESSORS
        .iter()
        .find(|p| p.id == "sapphire-rapids")
        .unwrap();
    let boxes = Boxes::of(spr);
    let mut table = simulated_table(boxes, 0xFE00_0000, DEVICE).unwrap();
    // Entry 0 (CHA0): 32-bit counters.
    let q = table.qword(32);
    table.set_qword(32, (q & !(0xFF << 16)) | (32 << 16));
    let joined = join(boxes, &read_table(&table, 0xFE00_0000).unwrap());
    let cha0 = boxes.find("CHA0").unwrap();
    assert!(matches!(
        joined.of(cha0).unwrap().status,
        BoxStatus::Disagreeing(_)
    ));
    let selection =
        Selection::of_boxes(&[(boxes, cha0)], &["e"], &[EventSelect::event(0x21)]).unwrap();
    let e = selection.check_discovered(&joined, false).unwrap_err();
    assert!(e.to_string().contains("width: table 32, spec 48"), "{e}");
}

/// A Granite Rapids table lists types (or boxes) the spec has no unit file for: those Linux
/// names (gnr_uncores[20] = spr_uncore_mdf; [18] = gnr_uncore_b2upi, whose spec has six
/// boxes, after upstream commit 6d642735cdb6) are shown by name, still unknown (no registers are described, so nothing
/// can be compared or counted); a type no source names keeps its number.
#[test]
fn granite_rapids_names_the_types_it_has_no_unit_file_for() {
    let gnr = PROCESSORS
        .iter()
        .find(|p| p.id == "granite-rapids")
        .unwrap();
    let boxes = Boxes::of(gnr);
    let table = simulated_table(boxes, 0xFE00_0000, DEVICE).unwrap();
    let mut read = read_table(&table, 0xFE00_0000).unwrap();
    for (box_type, box_id) in [(20, 0), (18, 7), (3, 0)] {
        let mut extra = read.boxes[0];
        extra.box_type = box_type;
        extra.box_id = box_id;
        read.boxes.push(extra);
    }
    let joined = join(boxes, &read);
    let named: Vec<(String, &str)> = joined
        .boxes
        .iter()
        .filter(|b| b.spec.is_none())
        .map(|b| (b.name(), b.status.as_str()))
        .collect();
    assert_eq!(
        named,
        [
            ("MDF 0".to_string(), "unknown"),
            ("B2UPI 7".to_string(), "unknown"),
            ("type 3 id 0".to_string(), "unknown"),
        ]
    );
}

/// The Granite Rapids PCU is placed by the table (the spec's `<from-table>`: Linux's
/// gnr_uncores[4] = spr_uncore_pcu, and Intel PCM's SPR_PCU_BOX_TYPE 4, take it from the
/// table): the simulated part publishes it at a place of its own, the join accepts it there,
/// comparing only what the spec still says (4 counters, Intel's perfmon list: counters 0-3 for
/// every PCU event; 48 bits), and a table that says otherwise disagrees, naming the source.
#[test]
fn granite_rapids_pcu_is_placed_by_the_table() {
    let gnr = PROCESSORS
        .iter()
        .find(|p| p.id == "granite-rapids")
        .unwrap();
    let boxes = Boxes::of(gnr);
    let pcu = boxes.find("PCU").unwrap();
    assert!(pcu.table_placed());
    assert!(
        pcu.counters.is_empty() && pcu.controls.is_empty(),
        "no fixed address in the spec"
    );
    let sim = Sim::new(SimConfig::of(gnr));
    let table = sim.discovery_table().unwrap();
    let at = locate(&table, DEVICE).unwrap()[0].address;
    let mut listed = read_table(&table, at).unwrap();
    let joined = join(boxes, &listed);
    let j = joined.of(pcu).unwrap();
    assert_eq!(j.status.as_str(), "matching", "{j:?}");
    let entry = j.table.unwrap();
    assert_eq!(
        (entry.box_type, entry.box_id, entry.counters, entry.width),
        (4, 0, 4, 48)
    );
    assert_eq!(
        entry.box_control.to_string(),
        format!("MSR {:#x}", pmu_runtime::sim::table_placed::PLACED_BASE)
    );
    // Unplaced, the box has nothing to count on; placed from its entry, it counts Intel's
    // UNC_P_CLOCKTICKS (event 0x01, graniterapids_uncore.json) and is put back.
    let e = pcu.assign(&[EventSelect::event(0x01)]).unwrap_err();
    assert!(
        e.to_string().contains("discovery table places this box"),
        "{e}"
    );
    let placed = placed_boxes(boxes, &[("PCU", msr_place(&entry).unwrap())]);
    let pb = placed.find("PCU").unwrap();
    let ctl0 = pb.counter(0).unwrap().control.unwrap();
    assert_eq!((ctl0.name(), ctl0.msr()), ("PCU_PMON_CTL0", Some(0x3F02)));
    assert_eq!(pb.counter(3).unwrap().counter.msr(), Some(0x3F0B));
    let regs: Vec<Reg> = pb
        .counters
        .iter()
        .flat_map(|c| c.control.into_iter().chain([c.counter]))
        .chain(pb.controls.iter().copied())
        .collect();
    let before: Vec<u64> = regs.iter().map(|r| read(&sim, *r)).collect();
    let mut c = Counting::open(&sim, placed, pb, 0, 0, Some(sim.uncore_devices())).unwrap();
    let n = c.program(&[EventSelect::event(0x01)]).unwrap()[0];
    let ev = UncoreEvent {
        instance: "PCU",
        ev_sel: 0x01,
        umask: None,
    };
    sim.inject_uncore(0, ev, 1234).unwrap();
    assert_eq!(c.read_counter(n).unwrap(), 1234);
    c.close().unwrap();
    let after: Vec<u64> = regs.iter().map(|r| read(&sim, *r)).collect();
    assert_eq!(after, before, "PCU put back");
    // A table whose PCU has 2 counters of 32 bits disagrees on both.
    let i = listed.boxes.iter().position(|b| b.box_type == 4).unwrap();
    listed.boxes[i].counters = 2;
    listed.boxes[i].width = 32;
    let joined = join(boxes, &listed);
    let BoxStatus::Disagreeing(d) = &joined.of(pcu).unwrap().status else {
        panic!("{:?}", joined.of(pcu));
    };
    let said: Vec<String> = d
        .iter()
        .map(|d| {
            format!(
                "{}: table {}, spec {} ({})",
                d.what, d.table, d.spec, d.source
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            "counters: table 2, spec 4 (linux-discovery)",
            "width: table 32, spec 48 (linux-discovery)"
        ]
    );
}

/// The Granite Rapids B2UPI (PCI) and B2CXL (memory-mapped) boxes are placed by the table
/// too: the simulated part lists B2UPI0 in PCI function 1d.0 of its uncore bus with the box
/// control at offset 0x100, and B2CXL0 in memory at the simulator's own place
/// (`pmu_runtime::sim::table_placed`); counter control n and counter n are 8n bytes past the
/// entry's (Linux's generic PCI box, and `UNCORE_BOX_FLAG_CTL_OFFS8` for B2CXL), a count
/// injected into each reads back, everything is put back, and a table that lists B2UPI as
/// an MSR box disagrees on its access type.
#[test]
fn granite_rapids_pci_and_memory_mapped_boxes_are_placed_by_the_table() {
    use pmu_runtime::sim::table_placed as at;
    let gnr = PROCESSORS
        .iter()
        .find(|p| p.id == "granite-rapids")
        .unwrap();
    let boxes = Boxes::of(gnr);
    let sim = Sim::new(SimConfig::of(gnr));
    let table = sim.discovery_table().unwrap();
    let mut listed = read_table(&table, locate(&table, DEVICE).unwrap()[0].address).unwrap();
    let joined = join(boxes, &listed);
    for (instance, count, first, last) in [
        (
            "B2UPI0",
            4321,
            "PCI 0000:3f:1d.0 offset 0x108",
            "PCI 0000:3f:1d.0 offset 0x140",
        ),
        ("B2CXL0", 8765, "memory 0xf000000008", "memory 0xf000000040"),
    ] {
        let b = boxes.find(instance).unwrap();
        let j = joined.of(b).unwrap();
        assert_eq!(j.status.as_str(), "matching", "{j:?}");
        let entry = j.table.unwrap();
        let placed = placed_on(boxes, &[(instance, vec![entry_place(&entry, 0).unwrap()])]);
        let pb = placed.find(instance).unwrap();
        let site = |r: Reg| pmu_runtime::table_placed::site(r.addr, 0).unwrap().unwrap();
        let shown = |r: Reg| match site(r) {
            Site::Device(bdf) => match r.addr.location {
                Location::Pci { offset, .. } => format!("PCI {bdf} offset {offset:#x}"),
                _ => unreachable!(),
            },
            Site::Mmio(a) => format!("memory {a:#x}"),
            Site::Cpu(_) => unreachable!(),
        };
        assert_eq!(shown(pb.counter(0).unwrap().control.unwrap()), first);
        assert_eq!(shown(pb.counter(3).unwrap().counter), last);
        let regs: Vec<Reg> = pb
            .counters
            .iter()
            .flat_map(|c| c.control.into_iter().chain([c.counter]))
            .chain(pb.controls.iter().copied())
            .collect();
        let before: Vec<u64> = regs.iter().map(|r| read(&sim, *r)).collect();
        let mut c = Counting::open(&sim, placed, pb, 0, 0, Some(sim.uncore_devices())).unwrap();
        let n = c.program(&[EventSelect::event(0x01)]).unwrap()[0];
        let ev = UncoreEvent {
            instance,
            ev_sel: 0x01,
            umask: None,
        };
        sim.inject_uncore(0, ev, count).unwrap();
        assert_eq!(c.read_counter(n).unwrap(), count, "{instance}");
        c.close().unwrap();
        let after: Vec<u64> = regs.iter().map(|r| read(&sim, *r)).collect();
        assert_eq!(after, before, "{instance} put back");
    }
    assert_eq!(at::PLACED_PCI_DEVICE, 0x1D);
    // A table listing B2UPI0 as an MSR box disagrees on its access type.
    let i = listed
        .boxes
        .iter()
        .position(|b| (b.box_type, b.box_id) == (18, 0))
        .unwrap();
    let pcu = listed.boxes.iter().find(|b| b.box_type == 4).unwrap();
    (listed.boxes[i].access, listed.boxes[i].box_control) = (pcu.access, pcu.box_control);
    let b2upi0 = boxes.find("B2UPI0").unwrap();
    let joined = join(boxes, &listed);
    let BoxStatus::Disagreeing(d) = &joined.of(b2upi0).unwrap().status else {
        panic!("{:?}", joined.of(b2upi0));
    };
    assert_eq!(
        (d[0].what, d[0].spec.as_str(), d[0].table.as_str()),
        ("access", "pci", "msr")
    );
}
