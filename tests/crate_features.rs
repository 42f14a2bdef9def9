//! The crates' features as a dependency sees them: every processor of `spec/processors.xml`
//! (the architectural PMU aside: always built) is a feature of `pmu-regs`, none is on by
//! default, `all-processors` names them all, and `pmu-runtime` forwards each under the same name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// The `[features]` table of a manifest: each feature and the quoted names it turns on.
fn features(manifest: &str) -> BTreeMap<String, Vec<String>> {
    let table = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("the manifest has a [features] table");
    let table = table.split("\n[").next().unwrap();
    table
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(" = ["))
        .map(|l| {
            let (name, list) = l.split_once(" = ").unwrap();
            let items = list
                .trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(|s| s.trim().trim_matches('"').to_string())
                .filter(|s| !s.is_empty())
                .collect();
            (name.to_string(), items)
        })
        .collect()
}

/// The processors the spec describes, by id, without the always-built architectural PMU.
fn spec_processors() -> BTreeSet<String> {
    let xml = read("../spec/processors.xml");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("processor"))
        .map(|n| n.attribute("id").unwrap().to_string())
        .filter(|id| id != "architectural")
        .collect()
}

#[test]
fn pmu_regs_builds_no_processor_by_default_and_all_on_request() {
    let regs = features(&read("../generated/Cargo.toml"));
    let processors = spec_processors();
    assert!(processors.contains("sapphire-rapids"), "{processors:?}");
    for p in &processors {
        assert!(regs.contains_key(p), "pmu-regs has no feature {p}");
    }
    let default: BTreeSet<&String> = regs["default"].iter().collect();
    assert!(
        default.iter().all(|f| !processors.contains(*f)),
        "a processor is on by default: {default:?}"
    );
    let all: BTreeSet<String> = regs["all-processors"].iter().cloned().collect();
    assert_eq!(all, processors);
}

#[test]
fn pmu_runtime_forwards_each_processor_under_its_name() {
    let runtime = features(&read("../runtime/Cargo.toml"));
    for p in spec_processors().iter().filter(|p| *p != "discovery") {
        assert_eq!(
            runtime.get(p),
            Some(&vec![format!("pmu-regs/{p}")]),
            "pmu-runtime's feature {p}"
        );
    }
    assert_eq!(runtime["all-processors"], ["pmu-regs/all-processors"]);
    // The `pmu` command knows every processor: the default builds them.
    assert!(runtime["default"].contains(&"all-processors".to_string()));
}
