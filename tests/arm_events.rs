//! Arm's PMU event lists (ARM-software/data): the `import-arm` importer on small fixtures, and
//! the committed Neoverse events against Arm's own list where `../shared/arm` holds it.

use std::path::{Path, PathBuf};

use pmu_regs::PROCESSORS;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/arm")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// The spec's copy in a scratch directory, for imports that write.
fn spec_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(&workspace().join("spec"), dir.path());
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

/// Each record becomes one event of the core PMU, by Arm's name and number, on every event
/// counter (0-30: the counters the unit declares general), citing the list's source.
#[test]
fn every_record_becomes_an_event_of_the_core_pmu() {
    let spec = codegen::load_spec(&workspace().join("spec")).unwrap();
    let text = fixture("neoverse-v2-small.json");
    let (rel, xml, n) =
        codegen::import_arm::plan_arm(&text, "small.json", &spec, "neoverse-v2").unwrap();
    assert_eq!(rel, Path::new("neoverse-v2/events/core.xml"));
    assert_eq!(n, 4);
    assert!(xml
        .contains(r#"<events processor="neoverse-v2" unit="PMU" source="arm-data-neoverse-v2">"#));
    // The fixture's numbers, in hexadecimal: 8, 17, 16384 and 33007.
    for line in [
        r#"<event name="INST_RETIRED" code="0x0008" umask="0x00" counters="0-30"/>"#,
        r#"<event name="CPU_CYCLES" code="0x0011" umask="0x00" counters="0-30"/>"#,
        r#"<event name="SAMPLE_POP" code="0x4000" umask="0x00" counters="0-30"/>"#,
        r#"<event name="FIXTURE_IMPDEF_EVENT" code="0x80ef" umask="0x00" counters="0-30"/>"#,
    ] {
        assert!(xml.contains(line), "{line} missing from:\n{xml}");
    }
    assert_eq!(xml.matches("<event ").count(), 4);
    // Facts only: Arm's descriptions stay out.
    assert!(!xml.contains("Fixture record"));
}

/// A list of another PMU architecture, a processor without a core PMU, and an event number
/// wider than the event field are refused, and nothing is written.
#[test]
fn lists_that_do_not_fit_are_refused_and_nothing_is_written() {
    let spec = codegen::load_spec(&workspace().join("spec")).unwrap();
    let small = fixture("neoverse-v2-small.json");
    let other = small.replace("\"pmuv3\"", "\"pmuv2\"");
    let e = codegen::import_arm::plan_arm(&other, "x.json", &spec, "neoverse-v2").unwrap_err();
    assert!(e.to_string().contains("PMUv3"), "{e}");
    let e = codegen::import_arm::plan_arm(&small, "x.json", &spec, "no-such-core").unwrap_err();
    assert!(e.to_string().contains("no processor `no-such-core`"), "{e}");

    let dir = spec_copy();
    let target = dir.path().join("neoverse-v2/events/core.xml");
    let before = std::fs::read_to_string(&target).unwrap();
    let wide = dir.path().join("wide.json");
    std::fs::write(&wide, small.replace("33007", "65536")).unwrap();
    let e = codegen::import_arm::import_arm(&wide, dir.path(), "neoverse-v2").unwrap_err();
    assert!(e.to_string().contains("FIXTURE_IMPDEF_EVENT"), "{e}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), before);
}

/// Every event of the generated crate for a Neoverse core is a record of Arm's list for it,
/// with the same number, and every record is an event: checked where Arm's lists are beside
/// the workspace (`../shared/arm`, as in CI and development); a missing list is reported.
#[test]
fn the_neoverse_events_are_arms_list() {
    let dir = workspace().join("../shared/arm");
    let mut checked = 0;
    for p in PROCESSORS.iter().filter(|p| p.id.starts_with("neoverse-")) {
        let path = dir.join(format!("{}.json", p.id));
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!(
                "{} not found: the {} events are not compared",
                path.display(),
                p.id
            );
            continue;
        };
        let list: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut want: Vec<(String, u64)> = list["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_string(),
                    e["code"].as_u64().unwrap(),
                )
            })
            .collect();
        let mut have: Vec<(String, u64)> = p
            .units
            .iter()
            .flat_map(|u| u.events.iter())
            .map(|e| (e.name.to_string(), u64::from(e.code)))
            .collect();
        want.sort();
        have.sort();
        assert_eq!(have, want, "{}", p.id);
        checked += 1;
    }
    if dir.is_dir() {
        assert!(checked > 0, "no Neoverse processor in the crate");
    }
}
