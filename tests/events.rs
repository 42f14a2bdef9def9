//! Events: the perfmon importer on small fixtures, and the event metadata against the units'
//! control registers.

mod support;

use std::path::{Path, PathBuf};

use pmu_regs::{Addresses, PROCESSORS};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A scratch copy of the real spec without its event files.
fn spec_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(&workspace().join("spec"), dir.path());
    for p in std::fs::read_dir(dir.path()).unwrap() {
        let p = p.unwrap().path();
        // The metrics name events, so they go with them.
        for sub in ["events", "metrics"] {
            if p.join(sub).is_dir() {
                std::fs::remove_dir_all(p.join(sub)).unwrap();
            }
        }
    }
    dir
}

fn copy(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let d = to.join(p.file_name().unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&d).unwrap();
            copy(&p, &d);
        } else {
            std::fs::copy(&p, &d).unwrap();
        }
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/perfmon")
        .join(name)
}

/// Skylake-SP lists: a deprecated record that counts what another does is an alias (only one
/// name is imported), a record needing a setting the events format cannot record (a filter
/// value) is reported, not imported without it, and the IIO port and class masks go into the
/// event.
#[test]
fn import_reports_skylake_sp_aliases_and_unrecordable_settings() {
    let spec = spec_copy();
    let report =
        codegen::import::import_perfmon(&fixture("skx_small.json"), spec.path(), "skylake-sp")
            .unwrap();
    assert_eq!(report.imported.get("CHA"), Some(&2), "{:?}", report.errors);
    assert_eq!(report.imported.get("UPI"), Some(&1));
    assert_eq!(report.imported.get("IIO"), Some(&1));
    let errors = report.errors.join("\n");
    for expected in [
        "record 1 (UNC_C_CLOCKTICKS): Intel marks it deprecated; UNC_CHA_CLOCKTICKS counts the same",
        "record 3 (UNC_C_TOR_INSERTS.REM_ALL): Intel marks it deprecated; UNC_CHA_TOR_INSERTS.REM_ALL",
        "record 5 (UNC_CHA_TOR_INSERTS.IA_HIT_DRD): needs FILTER_VALUE 0x40433",
    ] {
        assert!(errors.contains(expected), "{expected}\n in\n{errors}");
    }
    assert_eq!(report.errors.len(), 3, "{errors}");
    let iio = std::fs::read_to_string(spec.path().join("skylake-sp/events/iio.xml")).unwrap();
    assert!(
        iio.contains(r#"name="UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0" code="0x83" umask="0x04" counters="0,1" filters="fc, chnl" port-mask="0x1" fc-mask="0x7"/>"#),
        "{iio}"
    );
    let cha = std::fs::read_to_string(spec.path().join("skylake-sp/events/cha.xml")).unwrap();
    assert!(cha.contains("UNC_CHA_CLOCKTICKS") && cha.contains("UNC_CHA_TOR_INSERTS.REM_ALL"));
    assert!(!cha.contains("UNC_C_"), "{cha}");
}

/// A main list and its experimental list imported together: the experimental list's events
/// go into the same units' files after the main list's, marked `experimental="1"`; a record
/// the main list has by name too, a deprecated alias of a record of either list, and records
/// the spec cannot take are each reported with the reason; an experimental list alone is
/// refused (it would replace the units' main events).
#[test]
fn an_experimental_list_is_merged_marked_and_every_other_record_reported() {
    let spec = spec_copy();
    let lists = [
        fixture("skx_small.json"),
        fixture("skx_small_experimental.json"),
    ];
    let report = codegen::import::import_perfmon_lists(&lists, spec.path(), "skylake-sp").unwrap();
    let errors = report.errors.join("\n");
    assert_eq!(report.imported.get("CHA"), Some(&3), "{errors}");
    assert_eq!(report.imported.get("M2M"), Some(&1), "{errors}");
    assert_eq!(report.experimental.get("CHA"), Some(&1));
    assert_eq!(report.experimental.get("M2M"), Some(&1));
    assert_eq!(report.experimental.get("IIO"), None);
    for expected in [
        "skx_small.json record 1 (UNC_C_CLOCKTICKS): Intel marks it deprecated",
        "skx_small_experimental.json record 1 (UNC_H_BYPASS_CHA_IMC.TAKEN): Intel marks it deprecated; UNC_CHA_BYPASS_CHA_IMC.TAKEN counts the same",
        "skx_small_experimental.json record 3 (UNC_CHA_CLOCKTICKS): the main list has an event of this name too",
        "skx_small_experimental.json record 4 (UNC_H_CLOCKTICKS): Intel marks it deprecated; UNC_CHA_CLOCKTICKS counts the same",
        "skx_small_experimental.json record 5 (UNC_M2HBM_CLOCKTICKS): the list's unit `M2HBM` has no counterpart",
        "skx_small_experimental.json record 6 (UNC_CHA_TOR_INSERTS.IA_MISS_DRD): needs FILTER_VALUE 0x40433",
    ] {
        assert!(errors.contains(expected), "{expected}\n in\n{errors}");
    }
    assert_eq!(report.errors.len(), 8, "{errors}");
    assert_eq!(
        report
            .not_imported
            .get("experimental, in the main list too"),
        Some(&1)
    );
    let cha = std::fs::read_to_string(spec.path().join("skylake-sp/events/cha.xml")).unwrap();
    let lines: Vec<&str> = cha.lines().filter(|l| l.contains("<event ")).collect();
    assert_eq!(lines.len(), 3, "{cha}");
    // The main list's events first, unmarked; the experimental one after, marked.
    assert!(!lines[0].contains("experimental") && !lines[1].contains("experimental"));
    assert!(
        lines[2].contains(r#"name="UNC_CHA_BYPASS_CHA_IMC.TAKEN" code="0x57" umask="0x1" counters="0,1,2,3" experimental="1"/>"#),
        "{cha}"
    );
    assert!(report
        .render()
        .contains("CHA         3 events (1 experimental)"));

    // The merged files validate, and the model carries the mark.
    let model = codegen::load_spec(spec.path()).unwrap();
    let unit = model
        .processors
        .iter()
        .find(|p| p.id == "skylake-sp")
        .and_then(|p| p.units.iter().find(|u| u.name == "M2M"))
        .unwrap();
    assert!(unit.events.iter().all(|e| e.experimental));

    let err = codegen::import::import_perfmon_lists(
        &[fixture("skx_small_experimental.json")],
        spec.path(),
        "skylake-sp",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("an experimental list is imported together with its main list"),
        "{err}"
    );
}

/// Ice Lake-SP's uncore list: a record's UMaskExt, PortMask and FCMask go into the event's
/// `umask-ext`, `port-mask` and `fc-mask`, the fields with those roles; a mask the unit has no
/// field for, or too wide for its field, and a free-running counter's record are reported
/// with their reasons.
#[test]
fn import_carries_the_uncore_masks_into_the_fields_with_their_roles() {
    let spec = spec_copy();
    let report =
        codegen::import::import_perfmon(&fixture("icx_masks.json"), spec.path(), "ice-lake-sp")
            .unwrap();
    assert_eq!(report.imported.get("CHA"), Some(&2), "{:?}", report.errors);
    assert_eq!(report.imported.get("IIO"), Some(&1));
    let errors = report.errors.join("\n");
    for expected in [
        "record 4 (UNC_I_MADE_UP_NEEDS_EXT): it sets umask-ext 0x1, which this unit's counter controls do not take",
        "record 5 (UNC_M2M_MADE_UP_TOO_WIDE): its umask-ext 0x1ff does not fit the unit's umask-ext field (max 0xff)",
        "record 6 (UNC_IIO_CLOCKTICKS_FREERUN): counts only on a free-running counter",
    ] {
        assert!(errors.contains(expected), "{expected}\n in\n{errors}");
    }
    assert_eq!(report.errors.len(), 3, "{errors}");
    assert_eq!(
        report
            .not_imported
            .get("needs a mask field the unit's controls lack"),
        Some(&2)
    );
    let read = |unit: &str| {
        std::fs::read_to_string(spec.path().join(format!("ice-lake-sp/events/{unit}.xml"))).unwrap()
    };
    assert!(read("cha").contains(r#"<event name="UNC_CHA_TOR_INSERTS.IA_MISS" code="0x35" umask="0x01" counters="0,1,2,3" umask-ext="0xc001fe"/>"#));
    assert!(read("iio").contains(r#"counters="0,1" port-mask="0x1" fc-mask="0x7"/>"#));
    // What was written loads: the validator takes the masks where the controls have them.
    codegen::load_spec(spec.path()).unwrap();
}

/// Granite Rapids' IIO list gives the port and class masks twice: as PortMask and FCMask, and
/// inside UMaskExt (control bits 32 and up). Where UMaskExt repeats them bit for bit the IIO,
/// which has no umask-ext field, takes the event; where it disagrees the record is reported.
#[test]
fn a_umask_ext_that_repeats_the_port_masks_is_carried_by_them() {
    let spec = spec_copy();
    let report = codegen::import::import_perfmon(
        &fixture("gnr_iio_masks.json"),
        spec.path(),
        "granite-rapids",
    )
    .unwrap();
    assert_eq!(report.imported.get("IIO"), Some(&1), "{:?}", report.errors);
    let errors = report.errors.join("\n");
    assert!(
        errors.contains("record 2 (UNC_IIO_MADE_UP_EXT_DISAGREES): it sets umask-ext 0x70020"),
        "{errors}"
    );
    let iio = std::fs::read_to_string(spec.path().join("granite-rapids/events/iio.xml")).unwrap();
    assert!(
        iio.contains(r#"counters="0,1" port-mask="0x1" fc-mask="0x7"/>"#)
            && !iio.contains("umask-ext"),
        "{iio}"
    );
}

/// The typed events program their masks: `with_event` sets the fields playing the
/// `umask-ext`, `port-mask` and `fc-mask` roles, as Linux's formats place them (umask_ext2
/// config:32-57, ch_mask config:36-47, fc_mask config:48-50).
#[test]
fn typed_events_program_their_uncore_masks() {
    use pmu_regs::{granite_rapids, ice_lake_sp};
    let cha =
        ice_lake_sp::cha::ChaCtl::RESET.with_event(ice_lake_sp::cha::Event::TOR_INSERTS_IA_MISS);
    assert_eq!(cha.bits(), 0x00c0_01fe_0000_0135);
    let iio = ice_lake_sp::iio::IioCtl::RESET
        .with_event(ice_lake_sp::iio::Event::DATA_REQ_OF_CPU_MEM_READ_PART0);
    assert_eq!(iio.bits(), 0x0007_0010_0000_0483);
    // Granite Rapids' IIO: the same bits as Intel's UMaskExt 0x00070010 at bit 32.
    let gnr = granite_rapids::iio::IioCtl::RESET
        .with_event(granite_rapids::iio::Event::DATA_REQ_OF_CPU_MEM_READ_PART0);
    assert_eq!(gnr.bits(), (0x0007_0010u64 << 32) | 0x0483);
    let info = ice_lake_sp::cha::Event::TOR_INSERTS_IA_MISS.info();
    assert_eq!(
        (info.umask_ext, info.port_mask, info.fc_mask),
        (0xc0_01fe, 0, 0)
    );
}

/// The validator takes an event's masks only where every counter control has the field with
/// the role, wide enough.
#[test]
fn uncore_masks_are_checked_against_the_roles_of_the_controls() {
    for (unit, attrs, expected) in [
        (
            "IRP",
            r#" umask-ext="0x1""#,
            "it sets umask-ext 0x1, which this unit's counter controls do not take",
        ),
        (
            "M2M",
            r#" umask-ext="0x100""#,
            "its umask-ext 0x100 does not fit the unit's umask-ext field (max 0xff)",
        ),
        (
            "CHA",
            r#" port-mask="0x1""#,
            "it sets port-mask 0x1, which this unit's counter controls do not take",
        ),
        (
            "IIO",
            r#" fc-mask="0x100""#,
            "fc-mask `0x100` is not a number of 8 bits",
        ),
    ] {
        let spec = spec_copy();
        put(
            spec.path(),
            &format!("ice-lake-sp/events/{}.xml", unit.to_ascii_lowercase()),
            &format!("<?xml version=\"1.0\"?>\n<events processor=\"ice-lake-sp\" unit=\"{unit}\" source=\"intel-perfmon-ice-lake-sp\">\n  <event name=\"UNC_X.Y\" code=\"0x01\" umask=\"0x01\" counters=\"0-1\"{attrs}/>\n</events>\n"),
        );
        let err = load_error(spec.path());
        assert!(err.contains(expected), "{unit}: {expected}\n in\n{err}");
    }
}

#[test]
fn import_writes_facts_per_unit_and_reports_what_it_could_not_map() {
    let spec = spec_copy();
    let report =
        codegen::import::import_perfmon(&fixture("small.json"), spec.path(), "xeon-e5-2600")
            .unwrap();
    assert_eq!(report.imported.get("HA"), Some(&2));
    assert_eq!(report.imported.get("QPI"), Some(&1));
    assert_eq!(report.errors.len(), 1);
    assert!(
        report.errors[0].contains(
            "record 4 (UNC_M2M_BYPASS_M2M_EGRESS.TAKEN): unit M2M is not in the spec of xeon-e5-2600"
        ),
        "{:?}",
        report.errors
    );
    insta::assert_snapshot!(
        "import_report",
        report
            .render()
            .replace(&spec.path().display().to_string(), "SPEC")
    );
    let ha = std::fs::read_to_string(spec.path().join("xeon-e5-2600/events/ha.xml")).unwrap();
    insta::assert_snapshot!("import_ha_xml", ha);
    assert!(
        !ha.contains("not copied"),
        "Intel's descriptions must not be copied"
    );
    // The spec with the imported events is valid and carries them.
    let model = codegen::load_spec(spec.path()).unwrap();
    let qpi = model
        .processors
        .iter()
        .flat_map(|p| &p.units)
        .find(|u| u.name == "QPI")
        .unwrap();
    assert_eq!(qpi.events[0].ident, "CTO_COUNT");
    assert!(qpi.events[0].ext_sel);
    assert_eq!(qpi.events[0].filters, "QPIMask0[17:0]");
}

#[test]
fn an_event_that_does_not_fit_its_unit_is_refused_and_nothing_is_written() {
    let spec = spec_copy();
    let report =
        codegen::import::import_perfmon(&fixture("bad_code.json"), spec.path(), "xeon-e5-2600")
            .unwrap();
    assert_eq!(
        report.errors,
        vec![
            "record 1 (UNC_H_TOO_WIDE): code 0x1ff does not fit the unit's event select (max 0xff)"
                .to_string()
        ]
    );
    assert!(report.written.is_empty());
    assert!(
        !spec.path().join("xeon-e5-2600/events").exists(),
        "nothing may be written"
    );
}

#[test]
fn a_write_that_fails_part_way_leaves_the_spec_unimported() {
    let spec = spec_copy();
    let events = spec.path().join("xeon-e5-2600/events");
    // small.json writes ha.xml, then qpi.xml; a directory where qpi's temporary file goes makes
    // the second write fail after the first has succeeded.
    std::fs::create_dir_all(events.join("qpi.xml.import-tmp")).unwrap();
    let err = codegen::import::import_perfmon(&fixture("small.json"), spec.path(), "xeon-e5-2600")
        .unwrap_err();
    assert!(err.to_string().contains("qpi.xml"), "{err}");
    let left: Vec<String> = std::fs::read_dir(&events)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["qpi.xml.import-tmp".to_string()],
        "nothing else written"
    );
}

#[test]
fn a_file_that_is_not_an_event_list_is_a_clear_error() {
    let spec = spec_copy();
    let err = codegen::import::import_perfmon(
        &workspace().join("Cargo.toml"),
        spec.path(),
        "xeon-e5-2600",
    )
    .unwrap_err();
    assert!(err.to_string().contains("not an event list"), "{err}");
    let err = codegen::import::import_perfmon(&fixture("small.json"), spec.path(), "pentium")
        .unwrap_err();
    assert!(err.to_string().contains("no processor `pentium`"), "{err}");
}

/// Every event's unit exists and has a counter control that can take it: the code and umask
/// fit, the counters exist, and the extension bit is there when the event needs it.
#[test]
fn every_event_fits_a_control_register_of_its_unit() {
    let mut events = 0;
    for p in PROCESSORS {
        for u in p.units {
            let controls: Vec<_> = u
                .registers
                .iter()
                // A counter control: its event select plays the event role (AMD's legacy
                // K7 addresses of the core controls have the layout but no role).
                .filter(|r| r.field("ev_sel").is_some_and(|f| f.role.is_some()))
                .collect();
            for e in u.events {
                events += 1;
                assert!(
                    !controls.is_empty(),
                    "{}: unit {} has no counter control",
                    e.name,
                    u.name
                );
                for r in &controls {
                    assert!(
                        u64::from(e.code) <= r.field("ev_sel").unwrap().max(),
                        "{} code in {}",
                        e.name,
                        r.name
                    );
                    // The field playing the umask role (the AMD UMC's is rd_wr_mask).
                    let umask_max = r
                        .fields
                        .iter()
                        .find(|f| f.role == Some(pmu_regs::Role::Umask))
                        .map_or(0, |f| f.max());
                    assert!(
                        u64::from(e.umask) <= umask_max,
                        "{} umask in {}",
                        e.name,
                        r.name
                    );
                    assert!(
                        e.counters >> r.count == 0,
                        "{} counters beyond {}",
                        e.name,
                        r.count
                    );
                    assert!(
                        !e.ext_sel || r.field("ev_sel_ext").is_some(),
                        "{} needs ev_sel_ext in {}",
                        e.name,
                        r.name
                    );
                    // An address, or the place the discovery table gives (`<from-table>`).
                    assert!(
                        matches!(r.addresses, Addresses::Known(_) | Addresses::FromTable(_)),
                        "{} has no address",
                        r.name
                    );
                }
            }
        }
    }
    assert!(
        events > 100,
        "the imported event lists are in the metadata ({events})"
    );
}

#[test]
fn typed_events_go_only_into_their_units_controls() {
    use pmu_regs::xeon_e5_2600::{ha, qpi};
    let ctl = ha::HaCtl::RESET
        .with_event(ha::Event::REQUESTS_READS)
        .with_en(true);
    assert_eq!((ctl.ev_sel(), ctl.umask()), (0x01, 0x03));
    let q = qpi::QpiCtl::RESET.with_event(qpi::Event::CTO_COUNT);
    assert_eq!((q.ev_sel(), q.ev_sel_ext()), (0x38, true));
    // `ha::HaCtl::RESET.with_event(qpi::Event::CTO_COUNT)` does not compile: the types differ.
}

/// Cascade Lake takes Skylake-SP's units (`units-from`): one type per layout, re-exported,
/// with Cascade Lake's own events and metadata that names Cascade Lake.
#[test]
fn a_processor_taking_anothers_units_shares_its_types_and_keeps_its_events() {
    use pmu_regs::{cascade_lake, skylake_sp};
    // The same type: a value of one is a value of the other, with no conversion.
    let ctl: skylake_sp::cha::ChaCtl = cascade_lake::cha::ChaCtl::RESET.with_en(true);
    let ctl = cascade_lake::cha::Event::REQUESTS_READS.program(ctl);
    assert_eq!((ctl.ev_sel(), ctl.umask()), (0x50, 0x03));
    assert_eq!(
        cascade_lake::cha::C_MSR_PMON_CTL[3][1].address(),
        skylake_sp::cha::C_MSR_PMON_CTL[3][1].address()
    );
    // The metadata of each processor names it, and each has its own event list.
    let (sky, clx) = (&skylake_sp::cha::UNIT, &cascade_lake::cha::UNIT);
    assert_eq!(
        (sky.processor, clx.processor),
        ("skylake-sp", "cascade-lake")
    );
    assert!(clx.registers.iter().all(|r| r.processor == "cascade-lake"));
    assert_eq!(clx.pmu.unwrap().processor, "cascade-lake");
    assert!(!std::ptr::eq(sky.events, clx.events));
    let names = |u: &pmu_regs::UnitInfo| u.registers.iter().map(|r| r.name).collect::<Vec<_>>();
    assert_eq!(names(sky), names(clx));
}

/// A memory-mapped unit taken with `units-from` shares its window too: Emerald Rapids' iMC
/// channels are Sapphire Rapids' registers at the same places past the same base.
#[test]
fn a_taken_memory_mapped_unit_shares_its_window() {
    use pmu_regs::{emerald_rapids, sapphire_rapids};
    assert!(std::ptr::eq(
        &emerald_rapids::imc::MMIO_WINDOW,
        &sapphire_rapids::imc::MMIO_WINDOW
    ));
    let emr = emerald_rapids::imc::UNIT.mmio_window.unwrap();
    assert_eq!(
        (emr.device_id, emr.controllers, emr.channels),
        (0x3251, 4, 2)
    );
    assert_eq!(emerald_rapids::imc::UNIT.processor, "emerald-rapids");
    let base = 0x20_0000_0000;
    assert_eq!(
        emerald_rapids::imc::MC_MMIO_PMON_CTL[3][2].address(base),
        sapphire_rapids::imc::MC_MMIO_PMON_CTL[3][2].address(base)
    );
    // Box 3 is controller 1, channel 1: its control 2 is 0x48 into the window at 0x26800.
    assert_eq!(
        emerald_rapids::imc::MC_MMIO_PMON_CTL[3][2].address(base),
        base + 0x2_6848
    );
}

/// The importer validates the new events with the spec, in memory, through the same loader
/// as generation: an error the validator finds (two events whose constants clash) refuses the
/// import, names the file it would have written, and writes nothing.
#[test]
fn events_the_validator_refuses_are_not_written() {
    let spec = spec_copy();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("clash.json");
    std::fs::write(
        &json,
        r#"{"Events": [
        {"Unit": "HA", "EventCode": "0x01", "UMask": "0x03", "EventName": "UNC_H_A.B", "Counter": "0,1", "Filter": "null", "ExtSel": "0"},
        {"Unit": "HA", "EventCode": "0x02", "UMask": "0x03", "EventName": "UNC_H_A_B", "Counter": "0,1", "Filter": "null", "ExtSel": "0"}
    ]}"#,
    )
    .unwrap();
    let err = codegen::import::import_perfmon(&json, spec.path(), "xeon-e5-2600").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("clashes with another event"), "{text}");
    let target = spec.path().join("xeon-e5-2600/events/ha.xml");
    assert!(text.contains(&target.display().to_string()), "{text}");
    assert!(
        !spec.path().join("xeon-e5-2600/events").exists(),
        "nothing may be written"
    );
}

/// A core list (no `Unit` key) goes to the processor's CORE unit through `core-pmu`: each
/// record is imported with its counter mask, invert, edge and any-thread settings, or
/// reported with its reason (fixed counter only, another MSR needed, PEBS only, a setting the
/// control cannot take).
#[test]
fn a_core_list_is_imported_for_the_processor_and_every_other_record_is_reported() {
    let spec = spec_copy();
    let report =
        codegen::import::import_perfmon(&fixture("core_small.json"), spec.path(), "xeon-e5-2600")
            .unwrap();
    assert_eq!(report.imported.get("CORE"), Some(&6), "{}", report.render());
    let kinds: Vec<(&str, usize)> = report.not_imported.iter().map(|(k, n)| (*k, *n)).collect();
    assert_eq!(
        kinds,
        [
            ("MSR value does not fit the register", 1),
            ("PEBS only", 2),
            ("does not fit the unit's controls", 1),
            ("fixed counter only", 1),
            ("needs an MSR the unit lacks", 1),
            ("offcore response without a value", 1),
        ]
    );
    insta::assert_snapshot!("import_core_report", report.render());
    let core = std::fs::read_to_string(spec.path().join("xeon-e5-2600/events/core.xml")).unwrap();
    insta::assert_snapshot!("import_core_xml", core);
    assert!(!core.contains("not copied"));
    // The spec with them is valid; they are the processor's, counted by the architectural CORE
    // unit, whose own 7 events are unchanged.
    let model = codegen::load_spec(spec.path()).unwrap();
    let p = model
        .processors
        .iter()
        .find(|p| p.id == "xeon-e5-2600")
        .unwrap();
    let c = p.core_events.as_ref().unwrap();
    assert_eq!(
        (c.processor.as_str(), c.unit.as_str()),
        ("architectural", "CORE")
    );
    let stall = c
        .events
        .iter()
        .find(|e| e.name == "UOPS_ISSUED.CORE_STALL_CYCLES")
        .unwrap();
    assert_eq!(
        (
            stall.settings.threshold,
            stall.settings.invert,
            stall.settings.edge,
            stall.settings.any_thread
        ),
        (1, true, false, true)
    );
    // An offcore response record takes its first code and the first register (0xB7 with
    // MSR_OFFCORE_RSP_0, not 0xBB with MSR_OFFCORE_RSP_1); the front-end one its register.
    let aux = |name: &str| {
        let e = c.events.iter().find(|e| e.name == name).unwrap();
        let a = e.aux.as_ref().unwrap();
        (e.code, a.register.as_str(), a.address, a.value)
    };
    assert_eq!(
        aux("OFFCORE_RESPONSE.DEMAND_DATA_RD.LLC_HIT.ANY_RESPONSE"),
        (0xB7, "MSR_OFFCORE_RSP_0", 0x1A6, 0x3f_803c_0001)
    );
    assert_eq!(
        aux("FRONTEND_RETIRED.DSB_MISS"),
        (0xC6, "MSR_PEBS_FRONTEND", 0x3F7, 0x11)
    );
    let arch = model
        .processors
        .iter()
        .find(|p| p.id == "architectural")
        .unwrap();
    assert_eq!(
        arch.units[0].events.len(),
        0,
        "the copy has no events files"
    );
}

/// The E-core lists (Sierra and Clearwater Forest) write an offcore response event with one
/// code and two umasks, one per offcore response MSR (`0xB7`, `0x01,0x02`, `0x1a6,0x1a7`):
/// Linux's `intel_cmt_extra_regs` pair `0x01b7` with MSR_OFFCORE_RSP_0 (0x1A6), so the
/// importer takes umask 0x01 with that register, and leaves out the fixed-counter-only record.
#[test]
fn an_e_core_offcore_response_takes_its_first_umask_with_the_first_register() {
    let spec = spec_copy();
    let report =
        codegen::import::import_perfmon(&fixture("ecore_ocr.json"), spec.path(), "sierra-forest")
            .unwrap();
    assert_eq!(report.imported.get("CORE"), Some(&1), "{}", report.render());
    assert_eq!(report.not_imported.get("fixed counter only"), Some(&1));
    let model = codegen::load_spec(spec.path()).unwrap();
    let p = model
        .processors
        .iter()
        .find(|p| p.id == "sierra-forest")
        .unwrap();
    let c = p.core_events.as_ref().unwrap();
    let e = c
        .events
        .iter()
        .find(|e| e.name == "OCR.DEMAND_DATA_RD.ANY_RESPONSE")
        .unwrap();
    let a = e.aux.as_ref().unwrap();
    assert_eq!(
        (e.code, e.umask, a.register.as_str(), a.address, a.value),
        (0xB7, 0x01, "MSR_OFFCORE_RSP_0", 0x1A6, 0x10001)
    );
}

/// Writes `text` as `rel` in the spec copy `dir`.
fn put(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn load_error(dir: &Path) -> String {
    codegen::load_spec(dir)
        .map(|_| ())
        .unwrap_err()
        .to_string()
        .replace(&dir.display().to_string(), "SPEC")
}

/// The validator's rules for core events: a processor's events file reaches the CORE unit only
/// through its `core-pmu`; `core-pmu` names another processor without one of its own; settings
/// (threshold, invert, edge, any-thread) belong to a core PMU's events and must fit its
/// controls.
#[test]
fn core_events_are_checked_against_the_core_pmu_link_and_its_controls() {
    let event = |attrs: &str| {
        format!(
            "<?xml version=\"1.0\"?>\n<events processor=\"xeon-e5-2600\" unit=\"CORE\" source=\"intel-perfmon\">\n  <event name=\"X.Y\" code=\"0x0E\" umask=\"0x01\" counters=\"0-3\"{attrs}/>\n</events>\n"
        )
    };
    // Accepted as it is.
    let spec = spec_copy();
    put(
        spec.path(),
        "xeon-e5-2600/events/core.xml",
        &event(" threshold=\"255\" invert=\"1\" edge=\"1\" any-thread=\"1\""),
    );
    codegen::load_spec(spec.path()).unwrap();
    // A threshold wider than cmask, and a bad flag.
    put(
        spec.path(),
        "xeon-e5-2600/events/core.xml",
        &event(" threshold=\"256\""),
    );
    let e = load_error(spec.path());
    assert!(
        e.contains("threshold `256` is not a number from 0 to 255"),
        "{e}"
    );
    put(
        spec.path(),
        "xeon-e5-2600/events/core.xml",
        &event(" edge=\"yes\""),
    );
    let e = load_error(spec.path());
    assert!(e.contains("edge `yes` is not 0 or 1"), "{e}");
    // Without core-pmu, CORE is not a unit of the E5-2600.
    let processors = spec.path().join("processors.xml");
    let text = std::fs::read_to_string(&processors).unwrap();
    put(spec.path(), "xeon-e5-2600/events/core.xml", &event(""));
    let without = text.replacen(
        "id=\"xeon-e5-2600\" module=\"xeon_e5_2600\" name=\"Intel Xeon Processor E5-2600 Product Family (Sandy Bridge-EP) uncore\" core-pmu=\"architectural\"",
        "id=\"xeon-e5-2600\" module=\"xeon_e5_2600\" name=\"Intel Xeon Processor E5-2600 Product Family (Sandy Bridge-EP) uncore\"",
        1,
    );
    assert_ne!(
        without, text,
        "the fixture names the E5-2600's processor element"
    );
    std::fs::write(&processors, &without).unwrap();
    let e = load_error(spec.path());
    assert!(
        e.contains("events for unknown unit `CORE` of xeon-e5-2600"),
        "{e}"
    );
    // core-pmu must name another processor that has none of its own.
    std::fs::write(
        &processors,
        text.replacen(
            "core-pmu=\"architectural\"",
            "core-pmu=\"xeon-e5-2600-v2\"",
            1,
        ),
    )
    .unwrap();
    let e = load_error(spec.path());
    assert!(
        e.contains("core-pmu `xeon-e5-2600-v2` names a processor that has a core-pmu of its own"),
        "{e}"
    );
    std::fs::write(
        &processors,
        text.replacen("core-pmu=\"architectural\"", "core-pmu=\"nowhere\"", 1),
    )
    .unwrap();
    let e = load_error(spec.path());
    assert!(
        e.contains("core-pmu `nowhere` names no processor of processors.xml"),
        "{e}"
    );
    std::fs::write(&processors, &text).unwrap();
    // Settings on an uncore unit's event are refused (only a core PMU's events carry them).
    std::fs::remove_file(spec.path().join("xeon-e5-2600/events/core.xml")).unwrap();
    put(
        spec.path(),
        "xeon-e5-2600/events/ha.xml",
        "<?xml version=\"1.0\"?>\n<events processor=\"xeon-e5-2600\" unit=\"HA\" source=\"intel-perfmon\">\n  <event name=\"UNC_H_X\" code=\"0x01\" umask=\"0x01\" counters=\"0-3\" threshold=\"1\"/>\n</events>\n",
    );
    let e = load_error(spec.path());
    assert!(e.contains("only a core PMU's events"), "{e}");
}

/// The typed core events: every processor's `core::Event` and the architectural ones go into
/// the one architectural event select, with the settings Intel's list gives them; an uncore
/// event does not compile there, and a core event does not compile in an uncore control.
#[test]
fn typed_core_events_of_every_processor_go_into_the_architectural_select() {
    use pmu_regs::arch::core::{self as arch, Ia32PerfEvtSel};
    const SEL: Ia32PerfEvtSel = Ia32PerfEvtSel::RESET
        .with_event(pmu_regs::xeon_e5_2600::core::Event::UOPS_ISSUED_CORE_STALL_CYCLES)
        .with_usr(true)
        .with_en(true);
    assert_eq!(
        (
            SEL.ev_sel(),
            SEL.umask(),
            SEL.cmask(),
            SEL.inv(),
            SEL.any_thread(),
            SEL.edge()
        ),
        (0x0e, 0x01, 1, true, true, false)
    );
    // Setting another event clears what the first one set.
    let plain = SEL.with_event(pmu_regs::xeon_e5_2600_v3::core::Event::INST_RETIRED_ANY_P);
    assert_eq!(
        (
            plain.ev_sel(),
            plain.cmask(),
            plain.inv(),
            plain.any_thread()
        ),
        (0xc0, 0, false, false)
    );
    let arch_sel = Ia32PerfEvtSel::RESET.with_event(arch::Event::LLC_MISSES);
    assert_eq!((arch_sel.ev_sel(), arch_sel.umask()), (0x2e, 0x41));
    // Each processor's list is its own type and its own metadata.
    // Every processor whose core PMU is the architectural one (a processor with a per-CPU
    // unit of its own, AMD's PMC, lists its core events there).
    let own_core = |p: &&&pmu_regs::ProcessorInfo| {
        p.units
            .iter()
            .any(|u| u.pmu.is_some_and(|m| m.scope == pmu_regs::Scope::Cpu))
    };
    for p in PROCESSORS
        .iter()
        // Diamond Rapids: Intel publishes no event list for it (its spec is its identity).
        // Processors of layouts only (the discovery table, the CMN mesh, ACPI's APMT) and
        // NVIDIA's SCF PMU are no cores.
        .filter(|p| {
            !own_core(p)
                && !support::layouts_only(p)
                && !matches!(
                    p.id,
                    "architectural" | "diamond-rapids" | "nvidia-grace-scf"
                )
        })
    {
        let c = p
            .core_events
            .unwrap_or_else(|| panic!("{} has no core events", p.id));
        assert_eq!((c.processor, c.unit), ("architectural", "CORE"));
        // Sierra Forest's E-core list is the shortest: 229 events (Ice Lake-SP's, the
        // shortest of the P-cores, 243).
        assert!(c.events.len() > 220, "{}: {}", p.id, c.events.len());
        assert!(c
            .events
            .iter()
            .all(|e| e.counters != 0 && e.counters >> 8 == 0 && !e.ext_sel));
    }
    assert_eq!(
        pmu_regs::xeon_7500::core::Event::ALL.len(),
        pmu_regs::xeon_7500::PROCESSOR
            .core_events
            .unwrap()
            .events
            .len()
    );
    // `Ia32PerfEvtSel::RESET.with_event(pmu_regs::xeon_e5_2600::ha::Event::REQUESTS_READS)` and
    // `HaCtl::RESET.with_event(pmu_regs::xeon_e5_2600::core::Event::INST_RETIRED_ANY_P)` do not
    // compile: the types differ.
}

/// A Linux pmu-events directory (the AMD Zen 4 flavour: a bare array per topic, no `Counter`,
/// metrics mixed in) is read as one list: core records go to the processor's own per-CPU unit
/// (PMC) on every counter, L3/DF/UMC records to their units, an event select above 0xFF into
/// the split field; metrics, records needing a setting the events format cannot record (a UMC
/// read/write mask, an L3 thread mask) and selects wider than the field are reported.
#[test]
fn a_linux_pmu_events_directory_is_imported_and_every_other_record_is_reported() {
    let spec = spec_copy();
    let report =
        codegen::import::import_perfmon(&fixture("amdzen_small"), spec.path(), "amd-zen4").unwrap();
    let imported: Vec<(&str, usize)> = report
        .imported
        .iter()
        .map(|(u, n)| (u.as_str(), *n))
        .collect();
    assert_eq!(
        imported,
        [("DF", 2), ("L3", 1), ("PMC", 3), ("UMC", 2)],
        "{}",
        report.render()
    );
    let kinds: Vec<(&str, usize)> = report.not_imported.iter().map(|(k, n)| (*k, *n)).collect();
    assert_eq!(
        kinds,
        [
            ("does not fit the unit's controls", 1),
            ("metric, not an event", 1),
            ("needs a setting events cannot record", 1),
        ]
    );
    insta::assert_snapshot!("import_linux_pmu_events_report", report.render());
    let core = std::fs::read_to_string(spec.path().join("amd-zen4/events/core.xml")).unwrap();
    assert!(
        core.contains("source=\"linux-pmu-events-amdzen4\""),
        "{core}"
    );
    assert!(
        core.contains(
            "<event name=\"ex_ret_ucode_instr\" code=\"0x1c1\" umask=\"0x00\" counters=\"0-5\"/>"
        ),
        "{core}"
    );
    // A UMC record's RdWrMask is its unit mask: the UMC control's rd_wr_mask plays the role.
    let umc = std::fs::read_to_string(spec.path().join("amd-zen4/events/umc.xml")).unwrap();
    assert!(
        umc.contains(
            "<event name=\"umc_cas_cmd.rd\" code=\"0x0a\" umask=\"0x1\" counters=\"0-3\"/>"
        ),
        "{umc}"
    );
    codegen::load_spec(spec.path()).unwrap();
}
