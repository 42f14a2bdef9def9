//! Events: the perfmon importer on small fixtures, and the event metadata against the units'
//! control registers.

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
        let events = p.unwrap().path().join("events");
        if events.is_dir() {
            std::fs::remove_dir_all(events).unwrap();
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
        report.errors[0]
            .contains("record 4 (UNC_I_CACHE_ACK_PENDING_OCCUPANCY.ANY): unit IRP is not in the spec of xeon-e5-2600"),
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
    assert!(
        err.to_string().contains("not an Intel perfmon event list"),
        "{err}"
    );
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
                .filter(|r| r.field("ev_sel").is_some())
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
                    let umask_max = r.field("umask").map_or(0, |f| f.max());
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
                    assert!(
                        matches!(r.addresses, Addresses::Known(_)),
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
