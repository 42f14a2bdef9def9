//! `pmu detect` against `/proc/cpuinfo` fixtures made from the spec's own identities: every
//! processor the spec identifies, by vendor, family, each end of each model range and its
//! steppings, is named; the same numbers under another vendor are not. Nothing here names a
//! processor, so AMD's parts are covered as soon as the spec identifies them.

use std::fs;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::{run, two_sockets};

/// `pmu detect --root` on a machine whose first CPU has this vendor and signature.
fn detect(vendor: &str, family: u32, model: u32, stepping: u32) -> String {
    let root = two_sockets();
    fs::create_dir_all(root.path().join("proc")).unwrap();
    fs::write(
        root.path().join("proc/cpuinfo"),
        format!(
            "processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: test part\nstepping\t: {stepping}\nflags\t\t: fpu msr\n\nprocessor\t: 1\nvendor_id\t: {vendor}\n"
        ),
    )
    .unwrap();
    let (code, out, err) = run(&["detect", "--root", root.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn detect_names_each_identified_processor_by_vendor_family_and_model_range() {
    let mut checked = 0;
    for p in pmu_regs::PROCESSORS.iter() {
        let Some(id) = p.identity else { continue };
        let (stepping, _) = id.steppings.unwrap_or((0, 15));
        for &(lo, hi) in id.models {
            for model in [lo, hi] {
                let out = detect(id.vendor.as_str(), id.family, model, stepping);
                assert!(
                    out.contains(&format!("specs: {} (", p.id)),
                    "{} {:#x}/{model:#x}: {out}",
                    id.vendor.as_str(),
                    id.family
                );
                // The same numbers from a vendor the spec does not describe name nothing.
                let other = detect("CentaurHauls", id.family, model, stepping);
                assert!(other.contains("no spec matches"), "{other}");
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 8,
        "the spec identifies its processors ({checked} checked)"
    );
}

#[test]
fn a_known_vendor_without_a_matching_spec_is_told_so() {
    // Family 0x6, model 0x01 is no processor of the spec, whatever the vendor.
    let out = detect("GenuineIntel", 6, 1, 0);
    assert!(
        out.contains("no spec matches this GenuineIntel processor yet"),
        "{out}"
    );
}
