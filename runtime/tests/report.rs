//! The library's printing API (`report`), and the lookups the `pmu` command's printing moved
//! into the library for a program to call: a register by MSR number (`lookup::resolve`),
//! the event a control value selects (`codec::event_of`). Expected values come from Intel's
//! SDM (IA32_PERFEVTSEL0 is MSR 186H; architectural event 3CH umask 00H is UnHalted Core
//! Cycles), not from the code under test.

use pmu_runtime::codec::{decode, event_of};
use pmu_runtime::lookup::resolve;
use pmu_runtime::report::register::{decoded_json, decoded_table, event_line, header, hex};
use pmu_runtime::report::table::TextTable;

#[test]
fn a_register_is_found_by_its_msr_number() {
    let found = resolve("0x186", None).unwrap();
    assert_eq!(found.address.unwrap().name, "IA32_PERFEVTSEL0");
    let e = resolve("0x999999", None).unwrap_err().to_string();
    assert!(
        e.contains("no register in the specs is at MSR 0x999999"),
        "{e}"
    );
    assert!(resolve("0xzz", None).is_err());
}

#[test]
fn a_control_value_names_the_event_it_selects() {
    let info = resolve("IA32_PERFEVTSEL0", None).unwrap().info;
    // ev_sel 0x3c, umask 0, usr, os, en: UnHalted Core Cycles.
    let d = decode(info, 0x43_003c);
    assert_eq!(
        event_of(&d, None, None).unwrap().name,
        "UNHALTED_CORE_CYCLES"
    );
    assert_eq!(event_line(&d, None, None), "event: UNHALTED_CORE_CYCLES\n");
    // An all-zero control selects nothing.
    assert_eq!(event_line(&decode(info, 0), None, None), "");
}

#[test]
fn a_decoded_value_reads_as_a_table_and_as_json() {
    let found = resolve("IA32_PERFEVTSEL0", None).unwrap();
    let d = decode(found.info, 0x43_003c);
    assert_eq!(
        header(&found, 0x43_003c),
        "IA32_PERFEVTSEL0 = 0x000000000043003c (64-bit, MSR 0x186)\n"
    );
    let table = decoded_table(&d);
    let ev_sel = table.lines().find(|l| l.contains("ev_sel")).unwrap();
    assert!(
        ev_sel.starts_with("7:0") && ev_sel.contains("0x3c"),
        "{ev_sel}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&decoded_json(&d, Default::default(), None, None)).unwrap();
    assert_eq!(json["value"], 0x43_003c);
    assert_eq!(json["event"], "UNHALTED_CORE_CYCLES");
    assert_eq!(hex(0x3c, 16), "0x003c");
}

#[test]
fn a_text_table_pads_columns_to_the_widest_cell() {
    let mut t = TextTable::new(&["NAME", "N"]).right_align(&[1]);
    t.row(vec!["a".into(), "10".into()]);
    t.row(vec!["long name".into(), "2".into()]);
    assert_eq!(t.render(), "NAME        N\na          10\nlong name   2\n");
}
