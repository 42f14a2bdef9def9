//! The pipeline end to end on the real spec: `generated/` is what the spec produces, runs are
//! deterministic and atomic, `--check` names stale files, and the metadata tables agree with
//! the rules the validator enforces.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use codegen::output::Stale;
use pmu_regs::{Addresses, Location, PROCESSORS};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn snapshot_dir(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    for (rel, bytes) in snapshot_dir(from) {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, bytes).unwrap();
    }
}

#[test]
fn checked_in_generated_crate_matches_the_spec() {
    let stale = codegen::check(&workspace().join("spec"), &workspace().join("generated")).unwrap();
    assert!(
        stale.is_empty(),
        "generated/ is stale; run `cargo run -p codegen`:\n{}",
        stale
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn generation_is_deterministic_and_a_second_run_writes_nothing() {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("generated");
    let spec = workspace().join("spec");
    let first = codegen::generate(&spec, &target).unwrap();
    assert!(matches!(first, codegen::Outcome::Written { .. }));
    let before = snapshot_dir(&target);
    let second = codegen::generate(&spec, &target).unwrap();
    assert_eq!(second, codegen::Outcome::UpToDate);
    assert_eq!(snapshot_dir(&target), before);
    // Rendering twice in one process gives the same bytes too (no hash-map ordering leaks).
    assert_eq!(
        codegen::render(&spec).unwrap(),
        codegen::render(&spec).unwrap()
    );
}

#[test]
fn an_invalid_spec_leaves_generated_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec");
    let out = tmp.path().join("generated");
    copy_dir(&workspace().join("spec"), &spec);
    copy_dir(&workspace().join("generated"), &out);
    // Plant a stale file so that a write, had it happened, would be visible.
    std::fs::write(out.join("src/lib.rs"), "// old\n").unwrap();
    let before = snapshot_dir(&out);

    let wbox = spec.join("xeon-7500/wbox.xml");
    let text = std::fs::read_to_string(&wbox).unwrap();
    let broken = text.replacen(r#"name="ig" bits="19""#, r#"name="ig" bits="17:16""#, 1);
    assert_ne!(text, broken, "the fixture edit must apply");
    std::fs::write(&wbox, broken).unwrap();

    let err = codegen::generate(&spec, &out).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("wbox.xml"), "{msg}");
    assert!(msg.contains("overlaps field `ig` (17:16)"), "{msg}");
    assert!(msg.contains("bit 19 is not covered"), "{msg}");
    assert_eq!(
        snapshot_dir(&out),
        before,
        "generated/ changed after a failed run"
    );
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(
        leftovers.is_empty(),
        "staging directories left behind: {leftovers:?}"
    );
}

/// Fails the `fail_at`-th file it is given, as a full disk or a killed process would.
struct Interrupted<'a> {
    inner: &'a mut dyn codegen::emit::Sink,
    fail_at: usize,
    seen: usize,
}

impl codegen::emit::Sink for Interrupted<'_> {
    fn put(&mut self, path: String, content: String) -> std::io::Result<()> {
        self.seen += 1;
        if self.seen == self.fail_at {
            return Err(std::io::Error::other("simulated interruption"));
        }
        self.inner.put(path, content)
    }
}

#[test]
fn an_interrupted_write_leaves_the_old_tree_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("generated");
    copy_dir(&workspace().join("generated"), &out);
    // An old tree that differs from what the spec produces in every file, so that from the
    // first file on the run is building a new tree.
    for (rel, mut bytes) in snapshot_dir(&out) {
        bytes.extend_from_slice(b"\n// old\n");
        std::fs::write(out.join(rel), bytes).unwrap();
    }
    let before = snapshot_dir(&out);
    let spec = codegen::load_spec(&workspace().join("spec")).unwrap();
    let total = codegen::emit::generate(&spec).unwrap().len();

    for fail_at in [1, 2, total / 2, total] {
        let err = codegen::write_tree(&out, true, |sink| {
            let mut sink = Interrupted {
                inner: sink,
                fail_at,
                seen: 0,
            };
            codegen::emit::generate_into(&spec, &mut sink)
        })
        .unwrap_err();
        assert!(err.to_string().contains("simulated interruption"), "{err}");
        assert!(
            snapshot_dir(&out) == before,
            "generated/ changed after an interruption at file {fail_at} of {total}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "generated")
            .collect();
        assert!(
            leftovers.is_empty(),
            "left behind after file {fail_at}: {leftovers:?}"
        );
    }

    // Uninterrupted, the same call replaces every file.
    let changed =
        codegen::write_tree(&out, true, |sink| codegen::emit::generate_into(&spec, sink)).unwrap();
    assert_eq!(changed.len(), total);
    assert_eq!(
        snapshot_dir(&out),
        snapshot_dir(&workspace().join("generated"))
    );
}

#[test]
fn check_names_every_stale_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("generated");
    copy_dir(&workspace().join("generated"), &out);
    std::fs::write(out.join("src/lib.rs"), "// edited by hand\n").unwrap();
    std::fs::remove_file(out.join("docs/README.md")).unwrap();
    std::fs::write(out.join("src/extra.rs"), "").unwrap();
    let stale = codegen::check(&workspace().join("spec"), &out).unwrap();
    assert_eq!(
        stale,
        vec![
            Stale::Missing("docs/README.md".into()),
            Stale::Extra("src/extra.rs".into()),
            Stale::Changed("src/lib.rs".into()),
        ]
    );
    // --check wrote nothing.
    assert_eq!(
        std::fs::read_to_string(out.join("src/lib.rs")).unwrap(),
        "// edited by hand\n"
    );
}

#[test]
fn generated_crate_is_no_std_without_dependencies() {
    let gen = workspace().join("generated");
    let lib = std::fs::read_to_string(gen.join("src/lib.rs")).unwrap();
    assert!(lib.contains("#![no_std]"));
    for (rel, bytes) in snapshot_dir(&gen.join("src")) {
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            !text.contains("extern crate std"),
            "{} links std",
            rel.display()
        );
        assert!(!text.contains("std::"), "{} names std", rel.display());
    }
    let manifest = std::fs::read_to_string(gen.join("Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .unwrap()
        .split('[')
        .next()
        .unwrap();
    assert!(deps.trim().is_empty(), "pmu-regs has dependencies: {deps}");
}

#[test]
fn metadata_masks_partition_every_register() {
    for p in PROCESSORS {
        for u in p.units {
            for r in u.registers {
                let full = if r.width == 64 {
                    u64::MAX
                } else {
                    (1u64 << r.width) - 1
                };
                let mut covered = 0u64;
                for f in r.fields {
                    assert_eq!(covered & f.mask(), 0, "{}: {} overlaps", r.name, f.name);
                    covered |= f.mask();
                }
                assert_eq!(covered, full, "{}: bits not covered", r.name);
                assert_eq!(r.reserved_mask & r.ignored_mask, 0, "{}", r.name);
                assert_eq!(r.reserved_mask & r.writable_mask, 0, "{}", r.name);
                let reset: u64 = r.fields.iter().fold(0, |a, f| a | (f.reset << f.lsb));
                assert_eq!(reset, r.reset, "{}", r.name);
            }
        }
    }
}

#[test]
fn no_two_registers_share_an_address_per_processor() {
    for p in PROCESSORS {
        let mut seen: HashMap<(Option<&str>, Location), &str> = HashMap::new();
        for u in p.units {
            for r in u.registers {
                for a in r.known_addresses() {
                    // Table offsets count from the start of each unit's own structure.
                    let unit = matches!(a.location, Location::Table(_)).then_some(u.name);
                    if let Some(other) = seen.insert((unit, a.location), a.name) {
                        panic!("{}: {} and {} share {:?}", p.id, a.name, other, a.location);
                    }
                }
            }
        }
    }
}

/// The registers issue 2 names, by concrete name, must all be in the metadata.
#[test]
fn every_register_the_source_excerpts_name_is_specified() {
    let all: Vec<(&str, &pmu_regs::RegisterInfo)> = PROCESSORS
        .iter()
        .flat_map(|p| p.units.iter())
        .flat_map(|u| u.registers.iter())
        .flat_map(|r| {
            let names: Vec<&str> = match r.addresses {
                Addresses::Known(a) => a.iter().map(|a| a.name).collect(),
                Addresses::Unknown(_) | Addresses::FromTable(_) => vec![r.name],
            };
            names.into_iter().map(move |n| (n, *r))
        })
        .collect();
    let has = |name: &str| all.iter().any(|(n, _)| *n == name);
    let expected = [
        "W_MSR_PMON_EVT_SEL0",
        "W_MSR_PMON_EVT_SEL3",
        "W_MSR_PMON_FIXED_CTR_CTL",
        "W_MSR_PMON_FIXED_CTR",
        "W_MSR_PMON_CTR0",
        "W_MSR_PMON_GLOBAL_CTL",
        "W_MSR_PMON_GLOBAL_STATUS",
        "W_MSR_PMON_GLOBAL_OVF_CTL",
        "U_MSR_PMON_GLOBAL_CTL",
        "U_MSR_PMON_GLOBAL_STATUS",
        "U_MSR_PMON_GLOBAL_OVF_CTL",
        "U_MSR_PMON_GLOBAL_SUMMARY",
        "S{i}_MSR_PMON_SUMMARY",
        "S0_MSR_PMON_GLOBAL_CTL",
        "S1_MSR_PMON_GLOBAL_STATUS",
        "B1_MSR_PMON_GLOBAL_OVF_CTL",
        "C7_MSR_PMON_EVT_SEL5",
        "C0_MSR_PMON_CTR0",
        "M1_MSR_PERF_GLOBAL_CTL",
        "R_MSR_PMON_GLOBAL_CTL_7_0",
        "R_MSR_PMON_CTR15",
        "HA_PCI_PMON_BOX_CTL",
        "HA_PCI_PMON_CTL0",
        "HA_PCI_PMON_CTL3",
        "HA_PCI_PMON_CTR3",
        "Q_P0_PCI_PMON_BOX_CTL",
        "Q_P1_PCI_PMON_CTL3",
        "Q_P1_PCI_PMON_CTR0",
        "Q_P0_PCI_PMON_PKT_MATCH0",
        "Q_P0_PCI_PMON_PKT_MATCH1",
        "Q_P1_PCI_PMON_PKT_MASK0",
        "Q_P1_PCI_PMON_PKT_MASK1",
        "IA32_PERF_GLOBAL_INUSE",
        "IA32_PERF_CAPABILITIES",
        "IA32_PMC0",
        "IA32_A_PMC0",
        "IA32_PERFEVTSEL7",
        "IA32_FIXED_CTR_CTRL",
        "IA32_FIXED_CTR2",
        "IA32_PERF_GLOBAL_CTRL",
        "IA32_PERF_GLOBAL_STATUS",
        "IA32_PERF_GLOBAL_OVF_CTRL",
    ];
    let missing: Vec<&str> = expected.iter().copied().filter(|n| !has(n)).collect();
    assert!(missing.is_empty(), "missing registers: {missing:?}");

    // Facts the excerpts state, checked against the metadata.
    let field = |reg: &str, f: &str| {
        let (_, r) = all.iter().find(|(n, _)| *n == reg).unwrap();
        r.field(f).unwrap_or_else(|| panic!("{reg}.{f} missing"))
    };
    assert_eq!((field("IA32_PERF_CAPABILITIES", "fw_write").lsb), 13);
    let pmi = field("IA32_PERF_GLOBAL_INUSE", "pmi_in_use");
    assert_eq!((pmi.msb, pmi.lsb), (63, 63));
    assert_eq!(field("W_MSR_PMON_EVT_SEL0", "pmi_en").lsb, 20);
    assert_eq!(field("HA_PCI_PMON_BOX_CTL", "frz_en").lsb, 16);
    assert_eq!(field("HA_PCI_PMON_BOX_CTL", "frz").lsb, 8);
    assert_eq!(field("Q_P0_PCI_PMON_CTL0", "rst").lsb, 17);
    let count = field("Q_P0_PCI_PMON_CTR0", "event_count");
    assert_eq!((count.msb, count.lsb), (47, 0));
}

#[test]
fn the_overflow_hierarchy_boxes_exist() {
    let nhm = PROCESSORS.iter().find(|p| p.id == "xeon-7500").unwrap();
    for unit in ["U", "W", "S", "B", "C", "M", "R"] {
        assert!(
            nhm.units.iter().any(|u| u.name == unit),
            "unit {unit} missing"
        );
    }
}

/// The small fixture spec uses every feature of the format (PCI instances, CPUID-sized bit
/// arrays, write-only and write-1-to-clear fields, partial value lists, unknown addresses);
/// what the emitters make of it must compile, not only match a snapshot.
#[test]
fn the_fixture_spec_generates_a_crate_that_compiles() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("generated");
    codegen::generate(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ok"),
        &out,
    )
    .unwrap();
    // A workspace of its own, so the outer workspace does not claim it.
    let manifest = out.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("{text}\n[workspace]\n")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        // Every processor: the crate's default builds none.
        .args([
            "check",
            "--quiet",
            "--features",
            "all-processors",
            "--manifest-path",
        ])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", workspace().join("target/fixture-check"))
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the crate generated from tests/fixtures/ok does not compile"
    );
}

/// A spec that validates generates a crate that compiles and passes its tests, whatever its
/// names: register types called `Result`, `Option`, `Default`, `Msr`, `Register`, `Event`,
/// `Self` or `Match`, fields called `type`, `fn`, `self` or `bits`, enum values `None` and
/// `Some`, and a processor set without the Xeon 7500 or the architectural PMU (so the crate's
/// doc examples must not assume either).
#[test]
fn a_spec_full_of_rust_names_generates_a_crate_whose_tests_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("generated");
    codegen::generate(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/names"),
        &out,
    )
    .unwrap();
    let manifest = out.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("{text}\n[workspace]\n")).unwrap();
    // The workspace's lock file pins proptest, so the build needs no registry look-up.
    std::fs::copy(workspace().join("Cargo.lock"), out.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        // Every processor: the crate's default builds none.
        .args([
            "test",
            "--quiet",
            "--features",
            "all-processors",
            "--manifest-path",
        ])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", workspace().join("target/fixture-check"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the crate generated from tests/fixtures/names fails its build or tests:\n{stderr}"
    );
    // Its own property tests ran: one per unit, over its 15 layouts.
    let cases = std::fs::read_to_string(out.join("tests/cases/mod.rs")).unwrap();
    assert_eq!(cases.matches("\nlayout! {").count(), 15);
    assert_eq!(cases.matches("\nlayouts! {").count(), 1);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("running 1 test\n.\ntest result: ok. 1 passed"),
        "{stdout}"
    );
}

/// `Debug` prints each field by its Rust name, enums by the guide's value name and one-bit
/// fields as bools.
#[test]
fn debug_names_fields_values_and_bools() {
    use pmu_regs::xeon_7500::wbox::{WEvtSel, WEvtSelInvert};
    let sel = WEvtSel::RESET
        .with_invert(WEvtSelInvert::Lt)
        .with_en(true)
        .with_umask(0x0f);
    let text = format!("{sel:?}");
    assert!(text.starts_with("WEvtSel {"), "{text}");
    for part in ["invert: lt", "en: true", "pmi_en: false", "umask: 0xf"] {
        assert!(text.contains(part), "{part} missing in {text}");
    }
    let ctl = pmu_regs::arch::core::Ia32PerfGlobalCtrl::RESET.with_pmc_en(3, true);
    assert!(format!("{ctl:?}").contains("pmc_en: 0x8"), "{ctl:?}");
}
