//! Counting through the discovery join, as `pmu watch --sim` and `pmu serve --sim` do: the
//! table the simulated part publishes -> located and read by the machine -> joined with the
//! spec in the session's check -> every box programmed -> counts -> every register put back,
//! for each processor with discovery types, every box of each. Then each way the part's table
//! can differ from the spec (a disagreeing entry, a box it lacks, a table that cannot be
//! read): the box is refused before anything is written, unless the session allows
//! mismatches. (The reader's corruption classes one by one: discovery_reader.rs.)

use std::time::Duration;

/// What a counter selecting an event the simulated workload does not name counts in one
/// 10 ms interval: the workload's default, one event in every 1000 cycles of the 2 GHz
/// uncore clock (`runtime/src/sim/workloads.rs`): 2,000,000 a second, 20,000 in 10 ms.
const DEFAULT_IN_10MS: u64 = 20_000;

use pmu_regs::{AddressInfo, Location};
use pmu_runtime::boxes::{Boxes, PmuBox, Reg};
use pmu_runtime::discovery::{join, table_boxes, MemoryTable, TableBox};
use pmu_runtime::machine::Machine;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::{Options, Selection, Session, SessionBackend};
use pmu_runtime::sim::{Sim, SimConfig, DISCOVERY_DEVICE, DISCOVERY_TABLE};
use pmu_runtime::{read_by_info, Site};
#[path = "support/spec.rs"]
mod spec;
use spec::processor;

fn read(sim: &Sim, r: Reg) -> u64 {
    let a: &AddressInfo = r.addr;
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
    read_by_info(sim, r.info, r.addr, place).unwrap()
}

/// Every register a session may change on `boxes`: box controls, counter controls, counters.
fn registers(boxes: &[&PmuBox]) -> Vec<Reg> {
    boxes
        .iter()
        .flat_map(|b| {
            b.controls.iter().copied().chain(
                b.counters
                    .iter()
                    .flat_map(|c| c.control.into_iter().chain([c.counter])),
            )
        })
        .collect()
}

fn options(backend: &SessionBackend<'_>, allow_mismatch: bool) -> Options {
    Options {
        clock: backend.clock(Duration::from_millis(10)),
        allow_mismatch,
        ..Options::default()
    }
}

/// One event on each of `picked`.
fn selection(boxes: &'static Boxes, picked: &[&'static PmuBox]) -> Selection {
    let pairs: Vec<_> = picked.iter().map(|b| (boxes, *b)).collect();
    Selection::of_boxes(&pairs, &["e"], &[EventSelect::event(0x21)]).unwrap()
}

#[test]
fn every_box_of_each_discovering_processor_counts_through_the_join_and_is_put_back() {
    for id in [
        "sapphire-rapids",
        "emerald-rapids",
        "granite-rapids",
        "sierra-forest",
        "clearwater-forest",
    ] {
        let p = processor(id);
        let boxes = Boxes::of(p);
        let machine = Machine::simulating(p);
        let tables = machine.discovery_tables();
        assert_eq!(tables.len(), 1, "{id}: one simulated discovery device");
        let (device, table) = &tables[0];
        assert_eq!(*device, DISCOVERY_DEVICE);
        let table = table.as_ref().unwrap();
        let joined = join(boxes, table);
        assert!(joined.all_match(), "{id}: {joined:?}");
        // Every box of every unit with a discovery type is in the table, and only those.
        let listed: Vec<&'static PmuBox> = joined.boxes.iter().map(|j| j.spec.unwrap()).collect();
        let discovering = boxes
            .boxes
            .iter()
            .filter(|b| b.pmu.discovery_type.is_some())
            .count();
        assert_eq!(listed.len(), discovering, "{id}");
        assert_eq!(table.boxes.len(), discovering, "{id}");

        let sim = machine.sim().unwrap();
        let regs = registers(&listed);
        let before: Vec<u64> = regs.iter().map(|r| read(sim, *r)).collect();
        let backend = SessionBackend::Registers(&machine);
        let mut session = Session::open(
            &backend,
            &selection(boxes, &listed),
            options(&backend, false),
        )
        .unwrap_or_else(|e| panic!("{id}: {e}"));
        let interval = session.interval().unwrap();
        assert_eq!(interval.counts.len(), listed.len(), "{id}");
        let instances: Vec<&str> = session
            .series()
            .iter()
            .map(|s| s.instance.as_str())
            .collect();
        let names: Vec<&str> = listed.iter().map(|b| b.instance).collect();
        assert_eq!(instances, names, "{id}: a series per box, in order");
        for (c, b) in interval.counts.iter().zip(&listed) {
            // The demo pace's first 10 ms of the first event.
            assert_eq!(c.delta, DEFAULT_IN_10MS, "{id}:{}", b.instance);
        }
        session.close().unwrap();
        let after: Vec<u64> = regs.iter().map(|r| read(sim, *r)).collect();
        assert_eq!(after, before, "{id}: every register put back");
        println!(
            "{id}: {} boxes discovered, joined, counted and put back",
            listed.len()
        );
    }
}

/// Sapphire Rapids' boxes, its simulated machine, and CHA0.
fn spr() -> (&'static Boxes, Machine, &'static PmuBox) {
    let p = processor("sapphire-rapids");
    let boxes = Boxes::of(p);
    (boxes, Machine::simulating(p), boxes.find("CHA0").unwrap())
}

/// Opens `picked` on `machine`; the error's text, or the first interval's first count
/// (closing the session).
fn count(
    machine: &Machine,
    boxes: &'static Boxes,
    picked: &[&'static PmuBox],
    allow: bool,
) -> Result<u64, String> {
    let backend = SessionBackend::Registers(machine);
    let selection = selection(boxes, picked);
    let mut session =
        Session::open(&backend, &selection, options(&backend, allow)).map_err(|e| e.to_string())?;
    let first = session.interval().unwrap().counts[0].delta;
    session.close().unwrap();
    Ok(first)
}

/// Refused with a message containing `why`, nothing written; counted with the flag.
fn refused_then_allowed(machine: &Machine, boxes: &'static Boxes, b: &'static PmuBox, why: &str) {
    let e = count(machine, boxes, &[b], false).unwrap_err();
    assert!(
        e.contains(&format!(
            "box {} is not as this part's discovery table",
            b.instance
        )),
        "{e}"
    );
    assert!(e.contains(why), "{e}");
    assert!(e.contains("--allow-mismatch"), "{e}");
    assert_eq!(machine.access_counts().1, 0, "nothing written: {e}");
    assert_eq!(count(machine, boxes, &[b], true), Ok(DEFAULT_IN_10MS));
}

#[test]
fn a_box_the_table_disagrees_with_is_refused_before_any_write_unless_allowed() {
    let (boxes, machine, cha0) = spr();
    let sim = machine.sim().unwrap();
    let mut table = sim.discovery_table().unwrap();
    // Entry 0 (CHA0): 32-bit counters (bits 23:16 of the entry's first qword).
    let q = table.qword(32);
    table.set_qword(32, (q & !(0xFF << 16)) | (32 << 16));
    sim.publish_discovery_table(Some(table));
    refused_then_allowed(&machine, boxes, cha0, "width: table 32, spec 48 (");
    // The boxes the table agrees with are counted as before.
    let cha1 = boxes.find("CHA1").unwrap();
    assert_eq!(count(&machine, boxes, &[cha1], false), Ok(DEFAULT_IN_10MS));
}

#[test]
fn a_box_control_strides_away_names_both_addresses() {
    let (boxes, machine, _) = spr();
    let sim = machine.sim().unwrap();
    let mut listed = table_boxes(boxes, DISCOVERY_DEVICE.bus).unwrap();
    // CHA3's entry where a CHA after the last would be (CHAs are 0x10 apart).
    let at = listed
        .iter()
        .position(|t| t.box_type == 0 && t.box_id == 3)
        .unwrap();
    let chas = listed.iter().filter(|t| t.box_type == 0).count() as u64;
    let cha0 = listed
        .iter()
        .find(|t| t.box_type == 0 && t.box_id == 0)
        .unwrap()
        .box_control;
    listed[at].box_control = cha0 + 0x10 * chas;
    let global = listed[0].box_control;
    sim.publish_discovery_table(Some(MemoryTable::build(
        DISCOVERY_TABLE,
        DISCOVERY_DEVICE,
        global,
        &listed,
    )));
    let cha3 = boxes.find("CHA3").unwrap();
    let spec_at = cha3.controls[0].addr.location;
    let Location::Msr(spec_msr) = spec_at else {
        panic!("CHA box controls are MSRs")
    };
    refused_then_allowed(
        &machine,
        boxes,
        cha3,
        &format!(
            "box control: table MSR {:#x}, spec {} at MSR {spec_msr:#x}",
            listed[at].box_control,
            cha3.controls[0].name()
        ),
    );
}

/// Publishes on `machine`'s simulator the table of `boxes`, changed by `edit`.
fn publish_edited(machine: &Machine, boxes: &'static Boxes, edit: impl FnOnce(&mut Vec<TableBox>)) {
    let mut listed = table_boxes(boxes, DISCOVERY_DEVICE.bus).unwrap();
    edit(&mut listed);
    let global = listed[0].box_control;
    machine
        .sim()
        .unwrap()
        .publish_discovery_table(Some(MemoryTable::build(
            DISCOVERY_TABLE,
            DISCOVERY_DEVICE,
            global,
            &listed,
        )));
}

#[test]
fn a_box_the_table_does_not_list_is_refused_unless_allowed() {
    let (boxes, machine, _) = spr();
    publish_edited(&machine, boxes, |l| {
        l.retain(|t| !(t.box_type == 1 && t.box_id == 5))
    });
    refused_then_allowed(
        &machine,
        boxes,
        boxes.find("IIO5").unwrap(),
        "the table does not list it",
    );
}

/// The boxes of `boxes` whose units have discovery type `t`.
fn of_type(boxes: &'static Boxes, t: u16) -> Vec<&'static PmuBox> {
    boxes
        .boxes
        .iter()
        .filter(|b| b.pmu.discovery_type == Some(t))
        .collect()
}

#[test]
fn upi_and_m3upi_entries_linux_ignores_never_refuse_their_boxes() {
    // A table that carries the known-wrong entries: UPI0's box control elsewhere in its
    // device, UPI1 and every M3UPI box left out.
    let (boxes, machine, _) = spr();
    publish_edited(&machine, boxes, |l| {
        for t in l.iter_mut().filter(|t| t.box_type == 8 && t.box_id == 0) {
            t.box_control += 0x40;
        }
        l.retain(|t| !(t.box_type == 8 && t.box_id == 1) && t.box_type != 9);
    });
    let (upi, m3upi) = (of_type(boxes, 8), of_type(boxes, 9));
    assert_eq!((upi.len(), m3upi.len()), (4, 4));
    let joined = pmu_runtime::part::joined_tables(&machine, boxes);
    let joined = joined[0].joined.as_ref().unwrap();
    for b in upi.iter().chain(&m3upi) {
        let j = joined.of(b).unwrap();
        assert_eq!(j.status.as_str(), "ignored", "{}", b.instance);
        assert!(
            j.status
                .detail()
                .starts_with("table ignored (linux-discovery): Linux ignores"),
            "{}",
            j.status.detail()
        );
    }
    // Counted at the spec's addresses without --allow-mismatch, and put back.
    let picked: Vec<&'static PmuBox> = upi.iter().chain(&m3upi).copied().collect();
    let before: Vec<u64> = registers(&picked)
        .iter()
        .map(|r| read(machine.sim().unwrap(), *r))
        .collect();
    assert_eq!(count(&machine, boxes, &picked, false), Ok(DEFAULT_IN_10MS));
    let after: Vec<u64> = registers(&picked)
        .iter()
        .map(|r| read(machine.sim().unwrap(), *r))
        .collect();
    assert_eq!(before, after);
    // The same corruption of a box the table is believed for is refused.
    publish_edited(&machine, boxes, |l| {
        for t in l.iter_mut().filter(|t| t.box_type == 1 && t.box_id == 0) {
            t.box_control += 1;
        }
    });
    let iio0 = boxes.find("IIO0").unwrap();
    let e = count(&machine, boxes, &[iio0], false).unwrap_err();
    assert!(e.contains("box control: table "), "{e}");
}

#[test]
fn chas_the_part_counts_are_taken_though_the_table_leaves_them_out() {
    // The table lists 40 CHAs (its count is wrong); the part's MSR 0x2FFE says 60.
    let p = processor("sapphire-rapids");
    let boxes = Boxes::of(p);
    let cha = |n: &str| boxes.find(n).unwrap();
    let without_last_20 =
        |l: &mut Vec<TableBox>| l.retain(|t| !(t.box_type == 0 && t.box_id >= 40));
    let machine = Machine::simulating(p);
    publish_edited(&machine, boxes, without_last_20);
    let joined = pmu_runtime::part::joined_tables(&machine, boxes);
    let j = joined[0].joined.as_ref().unwrap().of(cha("CHA45")).unwrap();
    assert_eq!(j.status.as_str(), "counted-by-part");
    assert!(
        j.status.detail().contains("the part has 60 of its unit's boxes (UNC_CBO_CONFIG.num_cbo = 0x3c on socket 0; linux-snbep)"),
        "{}",
        j.status.detail()
    );
    assert_eq!(
        count(&machine, boxes, &[cha("CHA45")], false),
        Ok(DEFAULT_IN_10MS)
    );
    // Where the MSR reads 0 (the Emerald Rapids XCC die), the table's count stands: a CHA it
    // leaves out is refused.
    let machine = Machine::simulated(SimConfig {
        part: &[("CHA", 0)],
        ..SimConfig::of(p)
    });
    publish_edited(&machine, boxes, without_last_20);
    refused_then_allowed(&machine, boxes, cha("CHA45"), "the table does not list it");
    assert_eq!(
        count(&machine, boxes, &[cha("CHA39")], false),
        Ok(DEFAULT_IN_10MS)
    );
}

#[test]
fn with_allow_mismatch_what_disagrees_is_still_reported() {
    let (boxes, machine, cha0) = spr();
    let sim = machine.sim().unwrap();
    let mut table = sim.discovery_table().unwrap();
    let q = table.qword(32);
    table.set_qword(32, (q & !(0xFF << 16)) | (32 << 16));
    sim.publish_discovery_table(Some(table));
    let backend = SessionBackend::Registers(&machine);
    let session = Session::open(
        &backend,
        &selection(boxes, &[cha0]),
        options(&backend, true),
    )
    .unwrap();
    assert_eq!(session.warnings().len(), 1, "{:?}", session.warnings());
    let w = &session.warnings()[0];
    assert!(
        w.starts_with("socket 0 (device 0000:7e:00.1): box CHA0: width: table 32, spec 48 ("),
        "{w}"
    );
    assert!(
        w.ends_with("programmed as the spec says (--allow-mismatch)"),
        "{w}"
    );
    session.close().unwrap();
    // A box the table agrees with gives none.
    let cha1 = boxes.find("CHA1").unwrap();
    let session = Session::open(
        &backend,
        &selection(boxes, &[cha1]),
        options(&backend, true),
    )
    .unwrap();
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
    session.close().unwrap();
}

#[test]
fn a_memory_mapped_box_control_a_stride_away_is_refused() {
    let (boxes, machine, _) = spr();
    // IMC1's entry 0x100 bytes past its box control, in no other box's place.
    let sim = machine.sim().unwrap();
    let mut table = sim.discovery_table().unwrap();
    let read = pmu_runtime::discovery::read_table(&table, table.base).unwrap();
    let entry = read
        .boxes
        .iter()
        .find(|b| b.box_type == 6 && b.box_id == 1)
        .unwrap()
        .entry as u64;
    // The unit entries follow the global state, one stride apart; the box control is the
    // entry's second qword.
    let at = (entry + 1) * read.global.stride + 8;
    let q = table.qword(at);
    table.set_qword(at, q + 0x100);
    sim.publish_discovery_table(Some(table));
    let imc1 = boxes.find("IMC1").unwrap();
    refused_then_allowed(&machine, boxes, imc1, "box control: table memory 0x");
}

#[test]
fn a_table_that_cannot_be_read_refuses_every_discovered_box_unless_allowed() {
    let (boxes, machine, cha0) = spr();
    let sim = machine.sim().unwrap();
    // Truncated: the global state still declares every entry.
    let mut table = sim.discovery_table().unwrap();
    table.bytes.truncate(table.bytes.len() / 2);
    sim.publish_discovery_table(Some(table));
    refused_then_allowed(&machine, boxes, cha0, "cannot be read");
    // A box of a unit without a discovery type (the U-box) is not checked.
    let ubox = boxes.find("UBOX").unwrap();
    assert!(ubox.pmu.discovery_type.is_none());
    assert_eq!(count(&machine, boxes, &[ubox], false), Ok(DEFAULT_IN_10MS));
}

#[test]
fn a_part_that_publishes_no_table_is_counted_as_the_spec_says() {
    let (boxes, machine, cha0) = spr();
    machine.sim().unwrap().publish_discovery_table(None);
    assert!(machine.discovery_tables().is_empty());
    assert_eq!(count(&machine, boxes, &[cha0], false), Ok(DEFAULT_IN_10MS));
}

#[test]
fn a_processor_without_discovery_types_publishes_no_table() {
    let machine = Machine::simulating(processor("skylake-sp"));
    assert!(machine.discovery_tables().is_empty());
}

#[path = "support/fake_machine.rs"]
mod fake_machine;

/// `pmu watch` on a machine root (MSR files, a discovery device, physical memory as a file)
/// whose table says CHA0's counters are 32 bits wide: refused with the table's and the spec's
/// values and no MSR changed; counted and put back with --allow-mismatch.
#[test]
fn pmu_watch_on_a_machine_refuses_a_box_its_table_disagrees_with_unless_allowed() {
    use std::fs;
    use std::io::{Seek, SeekFrom, Write};

    let root = fake_machine::two_sockets();
    for cpu in 0..2 {
        let msr = root.path().join(format!("dev/cpu/{cpu}/msr"));
        fs::OpenOptions::new()
            .write(true)
            .open(&msr)
            .unwrap()
            .set_len(0x4000)
            .unwrap();
    }
    let (boxes, _, _) = spr();
    let mut t =
        pmu_runtime::discovery::simulated_table(boxes, DISCOVERY_TABLE, DISCOVERY_DEVICE).unwrap();
    let q = t.qword(32);
    t.set_qword(32, (q & !(0xFF << 16)) | (32 << 16));
    let dev = root
        .path()
        .join("sys/bus/pci/devices")
        .join(DISCOVERY_DEVICE.to_string());
    fs::create_dir_all(&dev).unwrap();
    fs::write(dev.join("vendor"), "0x8086\n").unwrap();
    fs::write(dev.join("device"), "0x09a7\n").unwrap();
    let config: Vec<u8> = t.config.iter().flat_map(|d| d.to_le_bytes()).collect();
    fs::write(dev.join("config"), config).unwrap();
    let mut mem = fs::File::create(root.path().join("dev/mem")).unwrap();
    mem.set_len(DISCOVERY_TABLE + 0x4000).unwrap();
    mem.seek(SeekFrom::Start(DISCOVERY_TABLE)).unwrap();
    mem.write_all(&t.bytes).unwrap();
    drop(mem);

    let msr0 = root.path().join("dev/cpu/0/msr");
    let before = fs::read(&msr0).unwrap();
    let r = root.path().to_str().unwrap();
    let watch = |extra: &[&str]| {
        let mut args = vec![
            "watch",
            "--root",
            r,
            "--processor",
            "sapphire-rapids",
            "--backend",
            "raw",
            "--unit",
            "CHA0",
            "--event",
            "ev_sel=0x21",
            "--interval",
            "0.01",
            "--count",
            "1",
        ];
        args.extend_from_slice(extra);
        fake_machine::run(&args)
    };
    let (code, _, err) = watch(&[]);
    assert_ne!(code, 0);
    assert!(
        err.contains(
            "box CHA0 is not as this part's discovery table describes it (width: table 32, spec 48"
        ),
        "{err}"
    );
    assert_eq!(fs::read(&msr0).unwrap(), before, "no MSR written");
    let (code, out, err) = watch(&["--allow-mismatch"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("C0_MSR_PMON_CTR0"), "{out}");
    assert_eq!(fs::read(&msr0).unwrap(), before, "every MSR put back");
}

/// A box the discovery table places (the Granite Rapids PCU, the spec's `<from-table>`) is
/// placed by the session from the part's table, as `pmu watch --sim --processor
/// granite-rapids --unit PCU` does: Intel's UNC_P_CLOCKTICKS (event 0x01,
/// graniterapids_uncore.json) counts at the table's place, and every register there is put
/// back. The simulated table lists the PCU at the simulator's own place
/// (`pmu_runtime::sim::table_placed::PLACED_BASE`).
#[test]
fn a_box_the_table_places_counts_where_the_table_lists_it() {
    let p = processor("granite-rapids");
    let boxes = Boxes::of(p);
    let pcu = boxes.find("PCU").unwrap();
    assert!(pcu.table_placed() && pcu.counters.is_empty());
    let machine = Machine::simulating(p);
    let sim = machine.sim().unwrap();
    let at = pmu_runtime::table_placed::MsrPlace {
        box_control: pmu_runtime::sim::table_placed::PLACED_BASE as u32,
        ctl_offset: 2,
        ctr_offset: 8,
    };
    let placed = pmu_runtime::table_placed::placed_boxes(boxes, &[("PCU", at)]);
    let regs = registers(&[placed.find("PCU").unwrap()]);
    assert_eq!(regs.len(), 9, "a box control, 4 controls and 4 counters");
    let before: Vec<u64> = regs.iter().map(|r| read(sim, *r)).collect();
    let backend = SessionBackend::Registers(&machine);
    let sel = Selection::of_boxes(
        &[(boxes, pcu)],
        &["UNC_P_CLOCKTICKS"],
        &[EventSelect::event(0x01)],
    )
    .unwrap();
    let mut session = Session::open(&backend, &sel, options(&backend, false)).unwrap();
    let interval = session.interval().unwrap();
    assert_eq!(interval.counts.len(), 1);
    assert_eq!(interval.counts[0].delta, DEFAULT_IN_10MS);
    session.close().unwrap();
    let after: Vec<u64> = regs.iter().map(|r| read(sim, *r)).collect();
    assert_eq!(after, before, "every PCU register put back");
}

/// `pmu watch --sim` counts a table-placed box by name and by Intel's event name: the PCU's
/// UNC_P_CLOCKTICKS on its first counter (PCU_PMON_CTR0, placed by the table), at the
/// simulated workload's default pace for an event it does not name (2,000,000 a second:
/// `runtime/src/sim/workloads.rs`).
#[test]
fn pmu_watch_counts_a_box_the_table_places() {
    let (code, out, err) = fake_machine::run(&[
        "watch",
        "--sim",
        "--processor",
        "granite-rapids",
        "--unit",
        "PCU",
        "--event",
        "event=UNC_P_CLOCKTICKS",
        "--count",
        "1",
        "-x,",
    ]);
    assert_eq!(code, 0, "{err}");
    let row: Vec<&str> = out.lines().last().unwrap().split(',').collect();
    assert!(row.contains(&"PCU_PMON_CTR0"), "{out}");
    assert!(row.contains(&"2000000"), "{out}");
}

/// `pmu watch --sim` counts a table-placed box of each access type the table gives: the PCU
/// (MSR), B2UPI0 (PCI) and B2CXL0 (memory-mapped), each by Intel's clock-tick event name
/// (UNC_P_CLOCKTICKS, UNC_B2UPI_CLOCKTICKS, UNC_B2CXL_CLOCKTICKS: event 0x01 in
/// graniterapids_uncore.json) on its first counter, placed where the simulated part's table
/// lists it, at the simulated workload's default pace for an event it does not name
/// (2,000,000 a second: `runtime/src/sim/workloads.rs`), on Granite Rapids and on Sierra
/// Forest, which takes Granite Rapids' units.
#[test]
fn pmu_watch_counts_a_table_placed_box_of_each_access_type() {
    for processor in ["granite-rapids", "sierra-forest"] {
        for (unit, event, counter) in [
            ("PCU", "UNC_P_CLOCKTICKS", "PCU_PMON_CTR0"),
            ("B2UPI0", "UNC_B2UPI_CLOCKTICKS", "B2UPI0_PCI_PMON_CTR0"),
            ("B2CXL0", "UNC_B2CXL_CLOCKTICKS", "B2CXL0_MMIO_PMON_CTR0"),
        ] {
            let ev = format!("event={event}");
            let (code, out, err) = fake_machine::run(&[
                "watch",
                "--sim",
                "--processor",
                processor,
                "--unit",
                unit,
                "--event",
                &ev,
                "--count",
                "1",
                "-x,",
            ]);
            assert_eq!(code, 0, "{processor} {unit}: {err}");
            let row: Vec<&str> = out.lines().last().unwrap().split(',').collect();
            assert!(row.contains(&counter), "{processor} {unit}: {out}");
            assert!(row.contains(&"2000000"), "{processor} {unit}: {out}");
        }
    }
}

/// A session places a PCI and a memory-mapped box from the part's table (B2UPI1, B2CXL2) and
/// counts on both (their put-back is checked in discovery_sim.rs); on socket 1, which the simulated part
/// publishes no table for, the PCI box is refused by name before anything is written, since
/// a PCI or memory-mapped box is where its own socket's table says.
#[test]
fn pci_and_memory_mapped_boxes_the_table_places_count_and_are_put_back() {
    let p = processor("granite-rapids");
    let boxes = Boxes::of(p);
    let machine = Machine::simulating(p);
    let backend = SessionBackend::Registers(&machine);
    let picked = [boxes.find("B2UPI1").unwrap(), boxes.find("B2CXL2").unwrap()];
    assert!(picked
        .iter()
        .all(|b| b.table_placed() && b.counters.is_empty()));
    let sel = selection(boxes, &picked);
    let mut session = Session::open(&backend, &sel, options(&backend, false)).unwrap();
    let names: Vec<&str> = session
        .series()
        .iter()
        .map(|c| c.counter.as_str())
        .collect();
    assert_eq!(names, ["B2UPI1_PCI_PMON_CTR0", "B2CXL2_MMIO_PMON_CTR0"]);
    let interval = session.interval().unwrap();
    assert!(interval.counts.iter().all(|c| c.delta == DEFAULT_IN_10MS));
    session.close().unwrap();
    // Socket 1: no table of its own places the PCI box.
    let sel = Selection {
        sockets: pmu_runtime::session::Sockets::One(1),
        ..selection(boxes, &picked[..1])
    };
    let e = Session::open(&backend, &sel, options(&backend, false))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("only the discovery table of socket 0 places it"),
        "{e}"
    );
}
