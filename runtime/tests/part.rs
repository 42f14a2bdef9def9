//! Box counts read from the part (the spec's `<box-count>`): a simulated part with fewer
//! boxes than its spec lists counts the boxes it has and refuses the others by name, before
//! anything is written, saying how many it has and where that was read. One test per kind
//! of rule: Skylake-SP and Cascade Lake (CHAs, CAPID6), Ice Lake-SP (CHAs, CAPID6 and
//! CAPID7), E5-2600 v3 and v4 (C-boxes, cores; S-boxes, CAPID4's chop mapped to a count),
//! and PCI units counted by the devices found (Skylake-SP's and the E5-2600 v3's iMCs).

use pmu_regs::ProcessorInfo;
use pmu_runtime::boxes::Boxes;
use pmu_runtime::machine::Machine;
use pmu_runtime::part::box_count;
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::{Options, Selection, Session, SessionBackend, Sockets};
use pmu_runtime::sim::SimConfig;
use pmu_runtime::{Error, UsageError};
#[path = "support/spec.rs"]
mod spec;
use spec::processor;

/// Counting one event on `instance` of `processor` on a part configured by `part`, on every
/// socket: the session's result, and the registers' values before and after, to show a
/// refusal wrote nothing.
fn count_on(
    processor: &'static ProcessorInfo,
    part: &'static [(&'static str, u32)],
    instance: &str,
) -> Result<(), Error> {
    let machine = Machine::simulated(SimConfig {
        part,
        ..SimConfig::of(processor)
    });
    let boxes = Boxes::of(processor);
    let selection = Selection::of_boxes(
        &[(boxes, boxes.find(instance).unwrap())],
        &["ev_sel=0x01"],
        &[EventSelect::event(0x01)],
    )
    .unwrap()
    .on(Sockets::All);
    let backend = SessionBackend::Registers(&machine);
    let accesses = machine.access_counts();
    let result = match Session::open(&backend, &selection, Options::default()) {
        Ok(session) => session.close(),
        Err(e) => {
            assert_eq!(
                machine.access_counts().1,
                accesses.1,
                "a refusal writes nothing"
            );
            Err(e)
        }
    };
    result
}

/// `instance` is refused by name, with the count and where it was read.
fn assert_refused(e: Error, instance: &str, count: &str, read: &str) {
    let text = e.to_string();
    assert!(
        matches!(e, Error::Usage(UsageError::NoSuchBox { .. })),
        "{text}"
    );
    for part in [instance, count, read] {
        assert!(text.contains(part), "`{part}` in: {text}");
    }
}

/// The part's CHAs are CAPID6's set bits: 18 CHAs count, CHA18 and CHA20 are refused.
fn eighteen_chas(id: &str) {
    let p = processor(id);
    const PART: &[(&str, u32)] = &[("CHA", 18)];
    for cha in ["CHA0", "CHA9", "CHA17"] {
        count_on(p, PART, cha).unwrap_or_else(|e| panic!("{id} {cha}: {e}"));
    }
    for cha in ["CHA18", "CHA20"] {
        let e = count_on(p, PART, cha).unwrap_err();
        assert_refused(e, cha, "18 CHA", "CAPID6.cha_en = 0x3ffff");
    }
    // Read directly: the same count, on each socket.
    let machine = Machine::simulated(SimConfig {
        part: PART,
        ..SimConfig::of(p)
    });
    let cha = Boxes::of(p).find("CHA0").unwrap();
    for socket in 0..2 {
        let n = box_count(&machine, cha.pmu, socket).unwrap().unwrap();
        assert_eq!(n.count, 18);
        assert_eq!(n.source, "linux-snbep");
        assert_eq!(n.present(cha.unit), "CHA0 to CHA17");
    }
}

#[test]
fn skylake_sp_counts_the_chas_capid6_enables_and_refuses_the_others() {
    eighteen_chas("skylake-sp");
}

#[test]
fn cascade_lake_shares_the_rule_with_its_units() {
    eighteen_chas("cascade-lake");
}

/// Ice Lake-SP's CHAs are the set bits of CAPID6 and CAPID7 together: a 36-CHA part fills
/// CAPID6 and four bits of CAPID7, counts CHA35 and refuses CHA36 and CHA39 by name.
#[test]
fn ice_lake_sp_counts_the_chas_of_capid6_and_capid7() {
    let p = processor("ice-lake-sp");
    const PART: &[(&str, u32)] = &[("CHA", 36)];
    for cha in ["CHA0", "CHA31", "CHA35"] {
        count_on(p, PART, cha).unwrap_or_else(|e| panic!("{cha}: {e}"));
    }
    for cha in ["CHA36", "CHA39"] {
        let e = count_on(p, PART, cha).unwrap_err();
        assert_refused(
            e,
            cha,
            "36 CHA",
            "CAPID6.cha_en = 0xffffffff, CAPID7.cha_en_hi = 0xf",
        );
    }
    let machine = Machine::simulated(SimConfig {
        part: PART,
        ..SimConfig::of(p)
    });
    let cha = Boxes::of(p).find("CHA0").unwrap();
    let n = box_count(&machine, cha.pmu, 1).unwrap().unwrap();
    assert_eq!(
        (n.count, n.present(cha.unit).as_str()),
        (36, "CHA0 to CHA35")
    );
    // A part with fewer than 32 CHAs leaves CAPID7 empty.
    const SMALL: &[(&str, u32)] = &[("CHA", 20)];
    let e = count_on(p, SMALL, "CHA20").unwrap_err();
    assert_refused(e, "CHA20", "20 CHA", "CAPID7.cha_en_hi = 0x0");
}

/// The C-boxes of a 10-core part: one per core.
fn ten_cores(id: &str) {
    let p = processor(id);
    const PART: &[(&str, u32)] = &[("CBO", 10)];
    count_on(p, PART, "C9").unwrap_or_else(|e| panic!("{id} C9: {e}"));
    let e = count_on(p, PART, "C10").unwrap_err();
    assert_refused(e, "C10", "10 CBO", "has 10 cores");
}

#[test]
fn e5_2600_v3_has_a_cbox_per_core() {
    ten_cores("xeon-e5-2600-v3");
}

#[test]
fn e5_2600_v4_has_a_cbox_per_core() {
    ten_cores("xeon-e5-2600-v4");
}

/// A part configured with nothing has every box its spec lists (what `every_box` counts).
#[test]
fn an_unconfigured_part_has_every_box() {
    count_on(processor("skylake-sp"), &[], "CHA27").unwrap();
    count_on(processor("xeon-e5-2600-v4"), &[], "C21").unwrap();
    count_on(processor("xeon-e5-2600-v3"), &[], "SBOX3").unwrap();
    count_on(processor("xeon-e5-2600-v4"), &[], "SBOX3").unwrap();
    count_on(processor("skylake-sp"), &[], "IMC5").unwrap();
}

/// A PCI unit counted by its devices: a part whose iMC channels 4 and 5 have no device
/// counts IMC3 and refuses IMC4 by name, saying how many devices were found.
#[test]
fn pci_boxes_are_the_devices_found() {
    for id in ["skylake-sp", "xeon-e5-2600-v3"] {
        let p = processor(id);
        const PART: &[(&str, u32)] = &[("IMC", 4)];
        let present = Boxes::of(p).find("IMC3").unwrap().instance;
        count_on(p, PART, present).unwrap_or_else(|e| panic!("{id} {present}: {e}"));
        let missing = Boxes::of(p).find("IMC4").unwrap().instance;
        let e = count_on(p, PART, missing).unwrap_err();
        assert_refused(e, missing, "4 IMC", "the devices of 4 of");
    }
}

/// Which boxes are present when a device in the middle is missing: a set, not a count.
#[test]
fn a_missing_box_need_not_be_the_last() {
    let p = processor("skylake-sp");
    let imc = Boxes::of(p).find("IMC0").unwrap();
    let n = pmu_runtime::part::BoxCount {
        count: 6,
        absent: vec![2],
        read: String::new(),
        rule: "",
        source: "",
    };
    assert!(n.has(1) && !n.has(2) && n.has(5) && !n.has(6));
    assert_eq!(n.present_count(), 5);
    assert_eq!(n.present(imc.unit), "IMC0, IMC1, IMC3, IMC4, IMC5");
}

/// The E5-2600 v3 S-boxes: four, or two on the die PCU_CAPID4.chop calls 0; on the v4,
/// none there.
#[test]
fn s_boxes_follow_the_die_capid4_names() {
    let v3 = processor("xeon-e5-2600-v3");
    let name = |p, b: &str| Boxes::of(p).find(b).unwrap().instance;
    const TWO: &[(&str, u32)] = &[("SBOX", 2)];
    count_on(v3, TWO, "SBOX1").unwrap();
    let e = count_on(v3, TWO, "SBOX2").unwrap_err();
    assert_refused(e, name(v3, "SBOX2"), "2 SBOX", "PCU_CAPID4.chop = 0x0");
    let v4 = processor("xeon-e5-2600-v4");
    const NONE: &[(&str, u32)] = &[("SBOX", 0)];
    let e = count_on(v4, NONE, "SBOX0").unwrap_err();
    assert_refused(e, name(v4, "SBOX0"), "0 SBOX", "PCU_CAPID4.chop = 0x0");
}
