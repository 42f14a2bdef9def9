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

/// A series of box `instance`'s counter `counter` counting event `event` on socket 0.
fn series(instance: &str, counter: &str, event: usize) -> pmu_runtime::session::SeriesInfo {
    pmu_runtime::session::SeriesInfo {
        processor: "xeon-7500",
        socket: 0,
        unit: "C".into(),
        instance: instance.into(),
        counter: format!("{instance}_{counter}"),
        event: format!("ev_sel={event}"),
        event_index: event,
        backend: pmu_runtime::session::BackendKind::Simulator,
        width: 48,
        perf: None,
        cpu: None,
    }
}

fn count(delta: u64, running: Option<f64>) -> pmu_runtime::session::Count {
    pmu_runtime::session::Count {
        delta,
        total: delta,
        running_ratio: running,
        times: None,
    }
}

#[test]
fn rows_sum_each_event_over_a_sockets_boxes_when_asked() {
    use pmu_runtime::report::counts::{Grouping, Rows};
    let series = vec![
        series("C0", "CTR0", 0),
        series("C0", "CTR1", 1),
        series("C1", "CTR0", 0),
        series("C1", "CTR1", 1),
    ];
    let counts = [
        count(3, None),
        count(10, Some(0.5)),
        count(4, None),
        count(20, Some(0.25)),
    ];
    // Per box: one sum per series, as counted.
    let each = Rows::new(series.clone(), Grouping::default());
    let sums: Vec<u64> = each.sums(&counts).iter().map(|s| s.count).collect();
    assert_eq!(sums, [3, 10, 4, 20]);
    assert_eq!(
        each.counters(),
        ["C0_CTR0", "C0_CTR1", "C1_CTR0", "C1_CTR1"]
    );
    // Per socket: each event over both boxes, 3 + 4 and 10 + 20, as complete as the least
    // running part (0.25).
    let per_socket = Grouping {
        per_socket: true,
        ..Grouping::default()
    };
    let summed = Rows::new(series, per_socket);
    let sums = summed.sums(&counts);
    let totals: Vec<(usize, u64, Option<f64>)> = sums
        .iter()
        .map(|s| (s.series, s.count, s.running))
        .collect();
    assert_eq!(totals, [(0, 7, None), (1, 30, Some(0.25))]);
    assert_eq!(summed.counters(), ["C0+C1"]);
    assert!(!summed.shows_cpu());
}

#[test]
fn a_register_of_another_processor_is_refused_on_this_machine() {
    use pmu_runtime::detect::check_describes;
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("proc")).unwrap();
    // Family 6 model 0x2d is Sandy Bridge-EP, the Xeon E5-2600 (Intel's SDM, table 2-1).
    std::fs::write(
        root.path().join("proc/cpuinfo"),
        "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 45\nstepping\t: 7\n\
         model name\t: test\nflags\t\t: fpu arch_perfmon\n",
    )
    .unwrap();
    let root = Some(root.path());
    assert!(check_describes(root, "HA_PCI_PMON_CTL0", "register", "xeon-e5-2600").is_ok());
    let e = check_describes(root, "W_MSR_PMON_EVT_SEL0", "register", "xeon-7500").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("W_MSR_PMON_EVT_SEL0 is a xeon-7500 register, but this machine's"),
        "{e}"
    );
    // No cpuinfo: nothing to check against.
    assert!(check_describes(Some("/nonexistent".as_ref()), "X", "box", "xeon-7500").is_ok());
}

#[test]
fn patterns_select_names_as_perf_list_does() {
    use pmu_runtime::lookup::{matches, processor_named, Pattern};
    assert!(Pattern::new("cas").matches_any(&["UNC_M_CAS_COUNT.RD"]));
    assert!(!Pattern::new("unc_m_*.wr").matches_any(&["UNC_M_CAS_COUNT.RD"]));
    assert!(matches(Some("ha"), &["HA", "hbox"]));
    assert!(matches(None, &[]));
    assert_eq!(
        processor_named(Some("XEON-7500")).unwrap(),
        Some("xeon-7500")
    );
    assert_eq!(processor_named(None).unwrap(), None);
    assert!(processor_named(Some("no-such-cpu")).is_err());
}

#[test]
fn the_listings_name_what_they_select() {
    use pmu_runtime::report::listing::{event_lists, events, registers, summary};
    // The Xeon 7500's W-box has event selects 0 to 3 (its guide's W-box section).
    let w = registers(Some("xeon-7500"), Some("W"), None, false).unwrap();
    for n in 0..4 {
        assert!(w.contains(&format!("W_MSR_PMON_EVT_SEL{n} ")), "{w}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&summary(Some("xeon-7500"), Some("W"), true).unwrap()).unwrap();
    assert_eq!(json[0]["unit"], "W");
    let e = registers(Some("xeon-7500"), Some("NOPE"), None, false).unwrap_err();
    assert!(
        e.to_string().starts_with("xeon-7500 has no unit NOPE"),
        "{e}"
    );
    let lists = event_lists(Some("xeon-e5-2600"), Some("HA")).unwrap();
    let table = events(&lists, None, None, false).unwrap();
    assert!(table.contains("UNC_H_REQUESTS.READS"), "{table}");
    // A pattern no event matches is refused (a usage error), as every list refuses.
    let none = pmu_runtime::lookup::Pattern::new("zz_no_such_event");
    let e = events(&lists, None, Some(&none), false).unwrap_err();
    assert!(e.to_string().contains("no event name"), "{e}");
}

#[test]
fn serving_refuses_one_box_twice_and_two_processors() {
    use pmu_runtime::export::serving::{check_each_box_once, one_processor};
    use pmu_runtime::session::Selection;
    let of = |unit: &str| {
        Selection::of_named_boxes(&[unit.to_string()], &["ev_sel=0x01"], None, None).unwrap()
    };
    let (c0, again, imc) = (
        of("xeon-7500:C0"),
        of("xeon-7500:C0"),
        of("xeon-e5-2600:IMC0"),
    );
    let units = ["xeon-7500:C0".to_string()];
    let e = check_each_box_once(&[(&units, &c0), (&units, &again)]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("box C0 of xeon-7500 is selected twice"),
        "{e}"
    );
    assert_eq!(one_processor(&[&c0]).unwrap().id, "xeon-7500");
    assert!(one_processor(&[&c0, &imc]).is_err());
}
