//! Every class of spec error the validator must reject, one fixture each, with the exact
//! message (file:line:column, the names involved, and what to do) kept as an insta snapshot.
//!
//! Each fixture in `fixtures/errors/` is one unit file; the test places it beside the valid
//! `fixtures/ok/processors.xml` in a temporary spec directory.

use std::path::Path;

fn diagnostics_for(case: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::copy(
        root.join("ok/processors.xml"),
        dir.path().join("processors.xml"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("demo")).unwrap();
    std::fs::copy(
        root.join(format!("errors/{case}.xml")),
        dir.path().join("demo/x.xml"),
    )
    .unwrap();
    rejection(&dir, case)
}

/// The errors of the spec in `dir`, which must be rejected, with its path written `SPEC`.
fn rejection(dir: &tempfile::TempDir, case: &str) -> String {
    match codegen::load_spec(dir.path()) {
        Ok(_) => panic!("fixture {case} was accepted, but it must be rejected"),
        Err(e) => e
            .to_string()
            .replace(&dir.path().display().to_string(), "SPEC"),
    }
}

macro_rules! error_cases {
    ($($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                insta::assert_snapshot!(diagnostics_for(stringify!($case)));
            }
        )*

        /// A fixture without a test would never be checked.
        #[test]
        fn every_fixture_has_a_test() {
            let known = [$(stringify!($case)),*];
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/errors");
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                assert!(known.contains(&stem.as_str()), "fixtures/errors/{stem}.xml has no test");
            }
        }
    };
}

error_cases!(
    overlap,
    gap,
    bit_outside_width,
    bits_wrong_order,
    field_reset_too_wide,
    register_reset_mismatch,
    duplicate_field_name,
    duplicate_register,
    unknown_attribute,
    unknown_element,
    unknown_access,
    address_collision,
    missing_address,
    unknown_instance,
    unknown_source,
    unknown_processor,
    missing_placeholder,
    enum_value_outside,
    malformed_xml,
    missing_description,
    xeon7500_table_2_98_as_printed,
    sdm_inuse_text_bit_32,
    name_starts_with_placeholder,
    pci_device_identity,
    table_address,
    table_collision,
    sysreg_encoding,
    sysreg_collision,
    // The PMU structure (spec/README.md, "PMU structure").
    pmu_unknown_register,
    pmu_route_unknown_field,
    pmu_role_wrong_width,
    pmu_role_wrong_access,
    pmu_counters_width_mismatch,
    pmu_counters_unknown_counter,
    pmu_route_missing,
    pmu_route_inconsistent,
    pmu_counter_arrays_mismatch,
    pmu_duplicate_counter_number,
    pmu_role_outside_structure,
    pmu_route_below_global,
    pmu_unknown_role,
    pmu_role_without_pmu,
    pmu_bitmap_without_counters,
    pmu_general_counter_without_event,
    pmu_route_clear_not_w1c,
    pmu_route_clear_rw1c_other_bit,
    pmu_route_unknown_and_routed,
    pmu_route_unknown_with_bits,
    pmu_shared_control_without_counters,
    pmu_free_running_with_control,
    // Free-running counters (spec/README.md, "Free-running counters").
    pmu_free_running_writable,
    pmu_free_running_perf_on_general,
    pmu_free_running_perf_incomplete,
    pmu_free_running_perf_scale,
    pmu_free_running_perf_duplicate,
    pmu_global_in_several_instances,
    pmu_perf_uncovered,
    pmu_perf_unknown_driver,
    pmu_perf_format_misfit,
    // Memory-mapped registers (spec/README.md, "Memory-mapped registers").
    mmio_offset_outside_window,
    mmio_overlap,
    mmio_box_in_two_windows,
    mmio_base_parts,
    mmio_window_misused,
    mmio_window_unused,
    mmio_without_window,
    // Many errors in one file: each check keeps its message and its place in the order.
    register_many_errors,
    pmu_counter_errors,
    pmu_list_errors,
    pmu_route_bad_names,
    unit_many_errors,
    unit_without_instance,
    pmu_perf_boxes,
    // Fields of several bit ranges (spec/README.md, "field").
    split_field_errors,
    pmu_discovery_type,
    // count-default (spec/README.md, "field"): where it may stand and what it may hold.
    count_default_errors,
    count_default_outside_control,
    count_default_without_pmu,
    // The spec's corrections of the discovery table (spec/README.md, "<discovery-ignored>").
    pmu_discovery_ignored_without_type,
    pmu_discovery_ignored_without_description,
    // Hardware quirks (spec/README.md, "Hardware quirks").
    pmu_saturation_errors,
    pmu_global_init_errors,
    pmu_clock_event_errors,
    pmu_discovery_corrections_without_type,
    pmu_discovery_corrections_errors,
    // Table-placed registers (spec/README.md, "Addresses": <from-table>).
    pmu_from_table_errors,
    pmu_from_table_without_type,
    pmu_from_table_places,
    pmu_from_table_access,
    pmu_from_table_spaces,
    // Mesh node events (spec/README.md, "Mesh node events": <node-events>).
    node_events_errors,
    node_events_driver,
    node_events_slots,
    node_events_list,
);

/// `<clock-event>` against the processor's event list (read after every unit): an encoding
/// whose event is not named as a clock tick (`*_CLOCKTICKS`) is refused; with the list's
/// clock-tick event at that encoding the spec loads.
#[test]
fn a_clock_event_must_be_the_event_lists_clock_tick_event() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for (name, accepted) in [("UNC_X_INSERTS", false), ("UNC_X_CLOCKTICKS", true)] {
        let dir = tempfile::tempdir().expect("temporary directory");
        std::fs::copy(
            root.join("ok/processors.xml"),
            dir.path().join("processors.xml"),
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("demo/events")).unwrap();
        std::fs::copy(
            root.join("clock_event_unit.xml"),
            dir.path().join("demo/x.xml"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("demo/events/x.xml"),
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<events processor=\"demo\" unit=\"X\" source=\"demo-driver\">\n  <event name=\"{name}\" code=\"0x01\" umask=\"0x00\" counters=\"0\"/>\n</events>\n"
            ),
        )
        .unwrap();
        match codegen::load_spec(dir.path()) {
            Ok(_) => assert!(accepted, "{name} was accepted as the clock event"),
            Err(e) => {
                let text = e.to_string();
                assert!(!accepted, "{name}: {text}");
                assert!(
                    text.contains("clock-event code 0x01 umask 0x00 of unit X is no event of demo named *_CLOCKTICKS"),
                    "{text}"
                );
            }
        }
    }
}

/// The errors codegen shows besides spec diagnostics (those are snapshotted per rule above).
#[test]
fn codegen_run_and_import_errors_say_what_to_do() {
    let io = || std::io::Error::from_raw_os_error(28); // ENOSPC
    let errors: Vec<String> = vec![
        codegen::Error::Io {
            action: "cannot write",
            path: "generated".into(),
            source: io(),
        }
        .to_string(),
        codegen::Error::Docs(tera::Error::msg("Variable `unit` not found")).to_string(),
        codegen::import::ImportError::Input {
            path: "events.json".into(),
            message: "not an Intel perfmon event list".into(),
        }
        .to_string(),
        codegen::import::ImportError::Io {
            path: "spec/xeon-e5-2600/events/ha.xml".into(),
            source: io(),
        }
        .to_string(),
    ];
    insta::assert_snapshot!(errors.join("\n"));
}

/// The errors of `fixtures/processors-errors/{case}.xml` used as processors.xml (no units).
fn processors_diagnostics(case: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::copy(
        root.join(format!("processors-errors/{case}.xml")),
        dir.path().join("processors.xml"),
    )
    .unwrap();
    rejection(&dir, case)
}

/// Two processors claiming one CPUID signature (or one perfmon file name) are refused: the
/// runtime picks the spec for a machine by its signature.
#[test]
fn duplicate_cpuid() {
    insta::assert_snapshot!(processors_diagnostics("duplicate_cpuid"));
}

/// Two processors of one family and model (Skylake-SP and Cascade Lake are both 06_55H) are
/// told apart by their steppings; overlapping ranges, or a range that is not one, are refused.
#[test]
fn overlapping_steppings() {
    insta::assert_snapshot!(processors_diagnostics("overlapping_steppings"));
}

/// A signature that is not a number, an identity without a code name, an unknown source.
#[test]
fn bad_cpuid() {
    insta::assert_snapshot!(processors_diagnostics("bad_cpuid"));
}

/// Identities by vendor, family and model ranges: an unknown vendor, model and models both or
/// neither, ranges out of order or upside down, and model ranges two processors of one vendor
/// and family share (another vendor's same numbers are no clash).
#[test]
fn identity_errors() {
    insta::assert_snapshot!(processors_diagnostics("identity_errors"));
}

/// Arm cores by MIDR_EL1 (issue 44): an implementer or part number too wide, no name, an
/// undeclared source, two cores with one (implementer, part) however it is spelt, and a
/// processor with both a CPUID identity and a MIDR.
#[test]
fn midr_errors() {
    insta::assert_snapshot!(processors_diagnostics("midr_errors"));
}

/// SoCs (issue 44): a SoC whose cores or uncore name no processor, whose cores are no Arm
/// core, whose SOC_ID is not Linux's `jep106:XXXX:XXXX`; two SoCs with one id or one SOC_ID;
/// undeclared sources.
#[test]
fn soc_errors() {
    insta::assert_snapshot!(processors_diagnostics("soc_errors"));
}

/// Discovery domains (issue 43) found both ways or neither, through a PCI device id beyond 16
/// bits, twice under one id, with ignore lists that are not `TYPE=NAME` or give a type twice,
/// from an undeclared source; and fixed-counters naming a counter the core unit lacks, fixed
/// counter 3 without topdown-metrics, or on a processor without a core PMU.
#[test]
fn discovery_domain_errors() {
    insta::assert_snapshot!(processors_diagnostics("discovery_domains"));
}

/// A perf driver's format that does not parse as the kernel writes it, maps onto nothing
/// without saying why, onto two things, or onto an unknown role; a name given twice; an
/// undeclared source.
#[test]
fn bad_perf_driver() {
    insta::assert_snapshot!(processors_diagnostics("bad_perf_driver"));
}

/// Many processors.xml errors in one file: duplicate ids of each kind, a module name that is
/// not an identifier, and each way a core-pmu link can be wrong.
#[test]
fn processors_many_errors() {
    insta::assert_snapshot!(processors_diagnostics("many_errors"));
}

/// The errors of `fixtures/ok` with the files of `fixtures/spec-errors/{case}/` added: for
/// what spans files (events files, two units).
fn spec_diagnostics(case: &str) -> String {
    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy_tree(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let dir = tempfile::tempdir().expect("temporary directory");
    copy_tree(&root.join("ok"), dir.path());
    copy_tree(&root.join("spec-errors").join(case), dir.path());
    rejection(&dir, case)
}

/// Events files: each event's attributes, its fit in the unit's controls, names given twice;
/// a file naming an unknown unit, source or processor.
#[test]
fn events_many_errors() {
    insta::assert_snapshot!(spec_diagnostics("events"));
}

/// A processor's global level is declared once.
#[test]
fn two_globals() {
    insta::assert_snapshot!(spec_diagnostics("two_globals"));
}

/// A core PMU's events whose settings its controls cannot take, events for a unit without an
/// event select, and a unit defined twice.
#[test]
fn events_core() {
    insta::assert_snapshot!(spec_diagnostics("events_core"));
}

/// Counters without Hyper-Threading (`counters-ht-off`): not a list, past the unit's
/// counters, not a superset that adds some, widening a restricted event, and on a unit whose
/// part does not report its counter count.
#[test]
fn events_ht_off() {
    insta::assert_snapshot!(spec_diagnostics("events_ht_off"));
}

/// Auxiliary registers (`msr`, `msr-value`): one without the other, a register the unit
/// lacks, one of the PMU's own, a value setting reserved bits or not a number, and one on an
/// uncore unit's event; a good one passes.
#[test]
fn events_aux() {
    insta::assert_snapshot!(spec_diagnostics("events_aux"));
}

/// Metrics files: an unknown event, an unknown constant, a malformed formula (each at its
/// place in the formula), an unused or reserved alias, settings on an uncore event, a bad
/// level, a name given twice, an unknown parent, processor or source; a threshold that reads
/// no metric of the processor, or does not parse (one over known metrics passes).
#[test]
fn metrics_many_errors() {
    insta::assert_snapshot!(spec_diagnostics("metrics"));
}

/// A register citing another processor's document.
#[test]
fn foreign_document() {
    insta::assert_snapshot!(spec_diagnostics("foreign_document"));
}

/// `units-from`: a processor taking another's units (allowed: `twin`), and each way the
/// link can be wrong: a unit file of its own of a taken unit's name, a processor that takes
/// its units itself, no processor, the processor itself.
#[test]
fn units_from() {
    insta::assert_snapshot!(spec_diagnostics("units_from"));
}

/// `<box-count>`: an unknown kind, a register named where none is read or missing where
/// one is, register and field lists of different lengths, a `value` read from two registers,
/// an unknown source, no description; and, once every unit is known, an unknown register, a
/// field that cannot hold a bit per box (a register of another unit is fine), fields with too
/// few bits together, or a `value` field too narrow for the unit's boxes (an eight-bit one for
/// three boxes is fine); `cpuid-set-bits` without its `cpuid`, CPUID bits on another kind,
/// malformed CPUID bits, or fewer CPUID bits than boxes (three for three, with the counters'
/// bits, is fine).
#[test]
fn box_count() {
    insta::assert_snapshot!(spec_diagnostics("box_count"));
}

/// `<socket-bus>`: an unknown `other-buses`, no description; and, once every unit is known,
/// an unknown register, registers that are not PCI, registers of two devices, an unknown
/// node-id field, and a map whose slots are not as wide as the node id.
#[test]
fn socket_bus() {
    insta::assert_snapshot!(spec_diagnostics("socket_bus"));
}

/// `<stack-bus>`: no description; and, once every unit is known, an unknown register, a PCI
/// register (it is read on a CPU: an MSR), a valid field wider than one bit, and bus fields
/// that are not one per box. A correct one (one box, one bus, the valid bit) passes.
#[test]
fn stack_bus() {
    insta::assert_snapshot!(spec_diagnostics("stack_bus"));
}

/// `<counters overflow>`: an unknown way of seeing an overflow, `msb-clear` without a source
/// or with an unknown one, a source with no rule to cite, and `msb-clear` on counters whose
/// box's status already has their overflow bits. A correct `msb-clear` (OF) passes.
#[test]
fn overflow_seen() {
    insta::assert_snapshot!(spec_diagnostics("overflow_seen"));
}

/// The top-down registers' events on the real spec: a level-2 share on Ice Lake-SP (whose
/// IA32_PERF_METRICS reports four shares) and `topdown-metrics` on a processor without a
/// core PMU are refused; the same share on Sapphire Rapids (eight) is accepted.
#[test]
fn top_down_register_events_need_a_core_that_reports_them() {
    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy_tree(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let metric = r#"  <metric name="Memory_Share_Test">
    <event alias="m" name="PERF_METRICS.MEMORY_BOUND"/>
    <event alias="s" name="TOPDOWN.SLOTS"/>
    <formula>m / s</formula>
  </metric>
</metrics>
"#;
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let add = |dir: &Path, processor: &str| {
        let file = dir.join(processor).join("metrics/intel.xml");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("</metrics>\n", metric)).unwrap();
    };
    let icx = tempfile::tempdir().unwrap();
    copy_tree(&spec, icx.path());
    add(icx.path(), "ice-lake-sp");
    let err = rejection(&icx, "icx level-2 share");
    assert!(
        err.contains("PERF_METRICS.MEMORY_BOUND` is a level-2 share")
            && err.contains("reports only 4 shares")
            && err.lines().filter(|l| l.contains(": error:")).count() == 1,
        "{err}"
    );
    let spr = tempfile::tempdir().unwrap();
    copy_tree(&spec, spr.path());
    add(spr.path(), "sapphire-rapids");
    let loaded = codegen::load_spec(spr.path()).unwrap();
    let p = loaded
        .processors
        .iter()
        .find(|p| p.id == "sapphire-rapids")
        .unwrap();
    let m = p
        .metrics
        .iter()
        .find(|m| m.name == "Memory_Share_Test")
        .unwrap();
    use codegen::model::metric::MetricRead;
    assert_eq!(m.events[0].read, MetricRead::SlotsShare(7));
    assert_eq!(m.events[1].read, MetricRead::Slots);
    // topdown-metrics without a core-pmu.
    let bare = tempfile::tempdir().unwrap();
    copy_tree(&spec, bare.path());
    let file = bare.path().join("processors.xml");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text.replacen(
        r#"name="Intel Xeon Processor 7500 Series (Nehalem-EX) uncore" core-pmu="architectural""#,
        r#"name="Intel Xeon Processor 7500 Series (Nehalem-EX) uncore" topdown-metrics="4""#,
        1,
    );
    std::fs::write(&file, text).unwrap();
    let err = rejection(&bare, "topdown-metrics without core-pmu");
    assert!(err.contains("topdown-metrics without a core-pmu"), "{err}");
}
