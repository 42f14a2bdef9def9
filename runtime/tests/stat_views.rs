//! `pmu stat --sim --td-level N` and `pmu stat --sim --view memory` on a simulated Sapphire
//! Rapids running a named workload. Expected values come from the workload's named
//! quantities (runtime/src/sim/workloads.rs) through the vendor's formulas, computed here by
//! hand; the markers from Intel's thresholds (sapphirerapids_metrics.json, `Threshold`):
//! Backend_Bound > 20; Memory_Bound > 20 and Backend_Bound > 20; Core_Bound > 10 and
//! Backend_Bound > 20; Frontend_Bound > 15.

use std::process::{Command, Output};

use pmu_runtime::machine::workload_named as workload;

fn pmu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(args)
        .output()
        .expect("pmu runs")
}

/// The line of `text` whose first word is `name`, split into its words.
fn line_of<'t>(text: &'t str, name: &str) -> Vec<&'t str> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.first() == Some(&name))
        .unwrap_or_else(|| panic!("no line for {name} in:\n{text}"))
}

/// Byte `n` of IA32_PERF_METRICS as the workload sets it, of 0xFF.
fn byte(perf_metrics: u64, n: u32) -> f64 {
    ((perf_metrics >> (8 * n)) & 0xff) as f64
}

#[test]
fn the_top_down_tree_marks_the_nodes_over_their_thresholds() {
    let w = workload("memory-bound").unwrap();
    let out = pmu(&[
        "stat",
        "--sim",
        "--processor",
        "sapphire-rapids",
        "--workload",
        w.name,
        "--td-level",
        "2",
        "--",
        "sh",
        "-c",
        "sleep 0.05; exit 4",
    ]);
    let text = String::from_utf8_lossy(&out.stderr);
    // The command's status passes through.
    assert_eq!(out.status.code(), Some(4), "{text}");
    // Bytes 0 to 3: retiring, bad speculation, frontend bound, backend bound; byte 7 memory
    // bound (Linux's INTEL_TD_METRIC_* order).
    let pm = w.perf_metrics;
    let level1 = byte(pm, 0) + byte(pm, 1) + byte(pm, 2) + byte(pm, 3);
    let backend = 100.0 * byte(pm, 3) / level1;
    let memory = 100.0 * byte(pm, 7) / level1;
    let core = 100.0 * (byte(pm, 3) - byte(pm, 7)) / level1;
    // The workload's shares make one node over and one under on each side of a threshold.
    assert!(backend > 20.0 && memory > 20.0 && core < 10.0);
    for (name, value, over) in [
        ("Backend_Bound", backend, true),
        ("Memory_Bound", memory, true),
        ("Core_Bound", core, false),
    ] {
        let words = line_of(&text, name);
        let shown: f64 = words[1].parse().unwrap();
        assert!(
            (shown - value).abs() < 0.01,
            "{name}: {shown} against {value}"
        );
        assert_eq!(words.last() == Some(&"<=="), over, "{name}: {words:?}");
    }
    // Frontend bound: its share less the dropped uops (a rare event), under 15.
    let frontend = line_of(&text, "Frontend_Bound");
    let shown: f64 = frontend[1].parse().unwrap();
    assert!(shown <= 100.0 * byte(pm, 2) / level1 && shown > 100.0 * byte(pm, 2) / level1 - 0.1);
    assert_ne!(frontend.last(), Some(&"<=="));
    // Level 2 nodes are indented under their parents, and the tree stops at level 2.
    let indented = text.lines().find(|l| l.contains("Memory_Bound")).unwrap();
    assert!(indented.starts_with("  Memory_Bound"), "{indented}");
    assert!(!text.contains("L1_Bound"), "{text}");
}

#[test]
fn the_memory_view_shows_every_channel_of_every_socket() {
    let w = workload("memory-bound").unwrap();
    let out = pmu(&[
        "stat",
        "--sim",
        "--processor",
        "sapphire-rapids",
        "--workload",
        w.name,
        "--view",
        "memory",
        "-a",
        "--",
        "sleep",
        "0.05",
    ]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    // CAS commands per period of uncore cycles, each moving a 64-byte line.
    let per_period = |event: &str| -> f64 {
        w.pattern_of(event)
            .runs
            .iter()
            .map(|r| f64::from(r.per_cycle) * f64::from(r.cycles))
            .sum()
    };
    let periods_per_second = w.uncore_mhz as f64 * 1e6 / 1000.0;
    let mb_s = |event: &str| per_period(event) * periods_per_second * 64.0 / 1e6;
    let (read, write) = (mb_s("UNC_M_CAS_COUNT.RD"), mb_s("UNC_M_CAS_COUNT.WR"));
    // One channel by hand: socket 1's fourth (box IMC3), channel 3 as pcm-memory numbers it.
    let row = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() == 4 && w[0] == "1" && w[1] == "3")
        .unwrap_or_else(|| panic!("no row for socket 1 channel 3:\n{text}"));
    let (r, wr): (f64, f64) = (row[2].parse().unwrap(), row[3].parse().unwrap());
    assert!((r - read).abs() / read < 1e-3, "read {r} against {read}");
    assert!(
        (wr - write).abs() / write < 1e-3,
        "write {wr} against {write}"
    );
    // Every channel of every socket: as many as the spec's IMC boxes of the part, numbered
    // from 0 on each socket (not the boxes' names), on both sockets.
    let p = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == "sapphire-rapids")
        .unwrap();
    let imcs: Vec<String> = pmu_runtime::boxes::Boxes::of(p)
        .boxes
        .iter()
        .filter(|b| b.unit.name == "IMC")
        .map(|b| b.instance.to_string())
        .collect();
    assert!(!imcs.is_empty());
    assert!(!text.contains("IMC"), "box names, not channels:\n{text}");
    for socket in ["0", "1"] {
        for channel in 0..imcs.len() {
            let channel = channel.to_string();
            assert!(
                text.lines().any(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    w.len() == 4 && w[0] == socket && w[1] == channel
                }),
                "socket {socket} channel {channel} missing:\n{text}"
            );
        }
        let next = imcs.len().to_string();
        assert!(
            !text.lines().any(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() == 4 && w[0] == socket && w[1] == next
            }),
            "socket {socket} has more channels than boxes:\n{text}"
        );
    }
}

/// Without `--sim`, `-M`, `--td-level` and `--view` are refused (exit 2) saying to add
/// `--sim`; where this machine has no core PMU in perf's sysfs (read here: no
/// /sys/bus/event_source/devices/cpu, as on this VM) the message says so and names perf's
/// software events as what counts here.
#[test]
fn a_view_without_the_simulator_or_a_part_without_the_tree_is_refused() {
    let no_core_pmu = !std::path::Path::new("/sys/bus/event_source/devices/cpu").exists()
        && !std::path::Path::new("/sys/bus/event_source/devices/cpu_core").exists();
    for args in [
        &["stat", "--td-level", "1", "--", "true"][..],
        &["stat", "-M", "TmaL1", "--", "true"],
        &["stat", "--view", "memory", "-a"],
    ] {
        let out = pmu(args);
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains("add --sim (pmu stat --sim"),
            "{args:?}: {text}"
        );
        if no_core_pmu {
            assert!(text.contains("no hardware PMU"), "{text}");
            assert!(text.contains("-e task-clock"), "{text}");
        }
    }
    let out = pmu(&[
        "stat",
        "--sim",
        "--processor",
        "xeon-7500",
        "--view",
        "memory",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("memory_bandwidth_read"), "{text}");
    // What does not apply to the simulator's views is refused, not ignored.
    for extra in [&["-x,"][..], &["-r", "3"], &["-e", "task-clock"]] {
        let mut args = vec!["stat", "--sim", "--td-level", "1"];
        args.extend_from_slice(extra);
        args.extend(["--", "true"]);
        assert_eq!(pmu(&args).status.code(), Some(2), "{extra:?}");
    }
    let out = pmu(&["--json", "stat", "--sim", "--td-level", "1", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `-e` takes a core event by the spec's name: Intel's INST_RETIRED.ANY_P (EventCode 0xC0,
/// UMask 0x00, sapphirerapids_core.json) counts as the raw event perf writes `r00c0`. This
/// machine has no core PMU (a VM), so both tools print `<not supported>` for it; where one
/// exists both count. Without a processor to name it (none is detected here) it is refused.
#[test]
fn a_spec_event_name_counts_as_its_encoding_does_in_perf() {
    let out = pmu(&[
        "stat",
        "--processor",
        "sapphire-rapids",
        "-x,",
        "-e",
        "INST_RETIRED.ANY_P",
        "--",
        "true",
    ]);
    let ours = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{ours}");
    let perf = Command::new("perf")
        .args(["stat", "-x,", "-e", "r00c0", "--", "true"])
        .output()
        .expect("perf runs (apt-get install linux-perf)");
    let theirs = String::from_utf8_lossy(&perf.stderr).into_owned();
    let first = |t: &str| {
        t.lines()
            .next()
            .unwrap_or_default()
            .split(',')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let supported = |t: &str| first(t) != "<not supported>";
    assert_eq!(
        supported(&ours),
        supported(&theirs),
        "pmu: {ours}\nperf: {theirs}"
    );
    assert!(ours.contains(",INST_RETIRED.ANY_P,"), "{ours}");
    if !std::path::Path::new("/sys/bus/event_source/devices/cpu").exists() {
        assert!(!supported(&ours), "{ours}");
    }
    let detected = pmu(&["detect", "--json"]);
    let detected: serde_json::Value = serde_json::from_slice(&detected.stdout).unwrap();
    if detected["specs"].as_array().is_some_and(Vec::is_empty) {
        let out = pmu(&["stat", "-e", "INST_RETIRED.ANY_P", "--", "true"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--processor"));
    }
}

/// `-M` on the simulator: a group's metrics over the command's run. Sapphire Rapids'
/// `TmaL1` group holds the four level-1 nodes; Backend_Bound is the memory-bound workload's
/// backend byte over the four level-1 bytes (Intel's formula, as in the tree above).
#[test]
fn metrics_by_group_on_the_simulator() {
    let w = workload("memory-bound").unwrap();
    let out = pmu(&[
        "stat",
        "--sim",
        "--processor",
        "sapphire-rapids",
        "--workload",
        w.name,
        "-M",
        "TmaL1",
        "--",
        "true",
    ]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let pm = w.perf_metrics;
    let level1 = byte(pm, 0) + byte(pm, 1) + byte(pm, 2) + byte(pm, 3);
    let shown: f64 = line_of(&text, "Backend_Bound")[1].parse().unwrap();
    assert!(
        (shown - 100.0 * byte(pm, 3) / level1).abs() < 0.01,
        "{text}"
    );
    for name in ["Frontend_Bound", "Bad_Speculation", "Retiring"] {
        line_of(&text, name);
    }
    let out = pmu(&["stat", "--sim", "-M", "no_such_metric", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The value under the header entry `entry` in perf's --metric-only text: values are
/// right-aligned under their headers, so the value's last character is in the header's.
fn value_under(header: &str, values: &str, entry: &str) -> f64 {
    let end = header
        .find(entry)
        .unwrap_or_else(|| panic!("no {entry} in {header:?}"))
        + entry.len();
    values[..end]
        .split_whitespace()
        .last()
        .unwrap_or_else(|| panic!("no value under {entry}: {values:?}"))
        .parse()
        .unwrap()
}

/// `--metric-only`: Sapphire Rapids' `TmaL1` group, as perf stat --metric-only prints it: a
/// header line (each metric's unit and name, `%  Backend_Bound`) and a value line. Backend
/// bound and retiring are the workload's backend and retiring bytes over the four level-1
/// bytes (Intel's formulas: `100 * d / (a + b + c + d)`), printed with one decimal as perf's
/// `%8.1f`.
#[test]
fn metric_only_prints_a_header_line_and_a_value_line() {
    let w = workload("memory-bound").unwrap();
    let args = |extra: &[&'static str]| {
        let mut v = vec![
            "stat",
            "--sim",
            "--processor",
            "sapphire-rapids",
            "--workload",
        ];
        v.extend([w.name, "-M", "TmaL1", "--metric-only"]);
        v.extend_from_slice(extra);
        v.extend(["--", "sh", "-c", "exit 3"]);
        v
    };
    let out = pmu(&args(&[]));
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{text}");
    let pm = w.perf_metrics;
    let level1 = byte(pm, 0) + byte(pm, 1) + byte(pm, 2) + byte(pm, 3);
    let backend = 100.0 * byte(pm, 3) / level1;
    let retiring = 100.0 * byte(pm, 0) / level1;
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with(" Performance counter stats for 'sh -c exit 3'"),
        "{text}"
    );
    let (header, values) = (lines[3], lines[4]);
    for (entry, value) in [("%  Backend_Bound", backend), ("%  Retiring", retiring)] {
        let shown = value_under(header, values, entry);
        assert!(
            (shown - value).abs() <= 0.05 + 1e-9,
            "{entry}: {shown} against {value}\n{text}"
        );
    }
    // A metric without a unit is its name alone, its value with two decimals.
    assert!(header.contains(" Info_Core_CoreIPC "), "{header}");
    let end = header.find("Info_Core_CoreIPC").unwrap() + "Info_Core_CoreIPC".len();
    let ipc = values[..end].split_whitespace().last().unwrap();
    assert_eq!(ipc.split('.').nth(1).map(str::len), Some(2), "{ipc}");
    let shown_values = values.split_whitespace().count();
    // No table, no tree: the two lines alone.
    assert!(!text.contains("metric ") && lines.len() == 5, "{text}");
    // CSV: the same two lines, each field ended by the separator, no title.
    let out = pmu(&args(&["-x;"]));
    let csv = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "{csv}");
    let (heads, vals): (Vec<&str>, Vec<&str>) =
        (lines[0].split(';').collect(), lines[1].split(';').collect());
    assert_eq!(heads.len(), vals.len());
    assert_eq!(
        heads.len() - 1,
        shown_values,
        "a value per header: {text}\n{csv}"
    );
    assert_eq!(
        heads.last(),
        Some(&""),
        "each header ends in the separator: {csv}"
    );
    let at = heads
        .iter()
        .position(|h| *h == "%  Backend_Bound")
        .expect(&csv);
    let shown: f64 = vals[at].parse().unwrap();
    assert!((shown - backend).abs() <= 0.05 + 1e-9, "{csv}");
}

/// `--sim --metric-only` without metrics to print is refused, and so is `-x` with the
/// simulator's tables (without `--sim`, `--metric-only` prints the events' derived metrics as
/// perf: `tests/stat_metric_only.rs`).
#[test]
fn metric_only_needs_metrics() {
    for args in [
        &[
            "stat",
            "--sim",
            "--view",
            "memory",
            "--metric-only",
            "--",
            "true",
        ],
        &["stat", "--sim", "-M", "TmaL1", "-x,", "--", "true"],
    ] {
        let out = pmu(args);
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains("--metric-only"), "{args:?}: {text}");
    }
}

/// The layout against the real perf on this machine (a VM: perf's metrics have no events to
/// count, so its --metric-only prints a slot per default event with an empty value): perf's
/// CSV value line has a field per slot, each ended by the separator; its text value line is
/// the slots side by side, so its length over their number is a slot's width (a value
/// right-aligned in 20 columns and a space). pmu's header and value lines keep that width
/// (wider only for a longer header), and its CSV has no title, as perf's.
#[test]
fn metric_only_layout_is_perfs() {
    let perf = |args: &[&str]| {
        let out = Command::new("perf")
            .arg("stat")
            .args(args)
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run perf ({e}): install it (Debian: apt-get install linux-perf; .ci/run does)")
            });
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let csv = perf(&["--metric-only", "-x,", "--", "true"]);
    let csv_lines: Vec<&str> = csv.lines().filter(|l| !l.is_empty()).collect();
    let slots = csv_lines.last().unwrap().matches(',').count();
    assert!(
        slots > 0 && csv_lines.last().unwrap().ends_with(','),
        "{csv}"
    );
    assert!(!csv.contains("Performance counter stats"), "{csv}");
    let text = perf(&["--metric-only", "--", "true"]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with(" Performance counter stats for 'true'"),
        "{text}"
    );
    let value_line = lines[4];
    assert_eq!(value_line.len() % slots, 0, "{text:?}");
    let slot = value_line.len() / slots;
    assert_eq!(slot, 21, "perf's slot: {text:?}");
    let out = pmu(&[
        "stat",
        "--sim",
        "--processor",
        "sapphire-rapids",
        "-M",
        "TmaL1",
        "--metric-only",
        "--",
        "true",
    ]);
    let ours = String::from_utf8_lossy(&out.stderr);
    let ours: Vec<&str> = ours.lines().collect();
    assert!(
        ours[1].starts_with(" Performance counter stats for 'true'"),
        "{ours:?}"
    );
    let (header, values) = (ours[3], ours[4]);
    assert_eq!(header.len(), values.len(), "{ours:?}");
    // Each header entry ends a slot: a space after it, and the slot `slot` wide unless the
    // entry is longer.
    let mut start = 0;
    for entry in [
        "%  Frontend_Bound",
        "%  Bad_Speculation",
        "%  Backend_Bound",
        "%  Retiring",
    ] {
        let end = header.find(entry).unwrap() + entry.len();
        assert_eq!(&header[end..=end], " ", "{header:?}");
        assert_eq!(
            end + 1 - start,
            slot.max(entry.len() + 1),
            "{entry} in {header:?}"
        );
        start = end + 1;
    }
}

/// The rows of a view's table whose first word is `socket` and second `place`.
fn view_row(text: &str, socket: &str, place: &str) -> Vec<f64> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() >= 3 && w[0] == socket && w[1] == place)
        .unwrap_or_else(|| panic!("no row for socket {socket} {place}:\n{text}"))[2..]
        .iter()
        .map(|v| v.parse().unwrap())
        .collect()
}

/// `--view upi` and `--view io` on the memory-bound workload, by hand from Intel's formulas
/// (sapphirerapids_uncore metrics: upi_data_transmit_bw = UNC_UPI_TxL_FLITS.ALL_DATA x 64/9
/// bytes, receive the same of RxL; io_bandwidth_read = UNC_CHA_TOR_INSERTS.IO_PCIRDCUR x 64,
/// io_bandwidth_write = (IO_ITOM + IO_ITOMCACHENEAR) x 64, each over the seconds) and the
/// workload's event patterns per 1,000 uncore cycles: each UPI link on its own row with the
/// socket's total after them; IO a row per socket, summed over its CHAs.
#[test]
fn the_upi_and_io_views_show_each_link_and_socket() {
    let w = workload("memory-bound").unwrap();
    let per_second = |event: &str| -> f64 {
        let per_period: f64 = w
            .pattern_of(event)
            .runs
            .iter()
            .map(|r| f64::from(r.per_cycle) * f64::from(r.cycles))
            .sum();
        per_period * w.uncore_mhz as f64 * 1e6 / 1000.0
    };
    let view = |name: &str| {
        let out = pmu(&[
            "stat",
            "--sim",
            "--processor",
            "sapphire-rapids",
            "--workload",
            w.name,
            "--view",
            name,
            "-a",
            "--",
            "sleep",
            "0.05",
        ]);
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{text}");
        text
    };
    let text = view("upi");
    let flits = |e: &str| per_second(e) * 64.0 / 9.0 / 1e6;
    let (tx, rx) = (
        flits("UNC_UPI_TxL_FLITS.ALL_DATA"),
        flits("UNC_UPI_RxL_FLITS.ALL_DATA"),
    );
    let p = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == "sapphire-rapids")
        .unwrap();
    let boxes = |unit: &str| -> Vec<String> {
        pmu_runtime::boxes::Boxes::of(p)
            .boxes
            .iter()
            .filter(|b| b.unit.name == unit)
            .map(|b| b.instance.to_string())
            .collect()
    };
    let links = boxes("UPI");
    assert!(!links.is_empty());
    // Links numbered on each socket (`0`, `1`, ...), not by their boxes' names.
    assert!(!text.contains("UPI"), "{text}");
    for socket in ["0", "1"] {
        for (number, link) in links.iter().enumerate() {
            let v = view_row(&text, socket, &number.to_string());
            assert!(
                (v[0] - tx).abs() / tx < 1e-3,
                "{link} transmit {} against {tx}",
                v[0]
            );
            assert!(
                (v[1] - rx).abs() / rx < 1e-3,
                "{link} receive {} against {rx}",
                v[1]
            );
        }
        let total = view_row(&text, socket, "total");
        let n = links.len() as f64;
        assert!((total[0] - n * tx).abs() / (n * tx) < 1e-3, "{text}");
    }
    let text = view("io");
    let chas = boxes("CHA").len() as f64;
    assert!(chas > 0.0);
    let bytes = |events: &[&str]| -> f64 {
        events.iter().map(|e| per_second(e)).sum::<f64>() * chas * 64.0 / 1e6
    };
    let read = bytes(&["UNC_CHA_TOR_INSERTS.IO_PCIRDCUR"]);
    let write = bytes(&[
        "UNC_CHA_TOR_INSERTS.IO_ITOM",
        "UNC_CHA_TOR_INSERTS.IO_ITOMCACHENEAR",
    ]);
    for socket in ["0", "1"] {
        let v: Vec<f64> = text
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.len() == 3 && w[0] == socket)
            .unwrap_or_else(|| panic!("no row for socket {socket}:\n{text}"))[1..]
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        assert!(
            (v[0] - read).abs() / read < 1e-3,
            "read {} against {read}\n{text}",
            v[0]
        );
        assert!(
            (v[1] - write).abs() / write < 1e-3,
            "write {} against {write}\n{text}",
            v[1]
        );
    }
}

/// `--sim -M ... --metric-only -I 100`: as perf stat -I --metric-only, a header line (the time
/// column, then the same headers as without -I) and a line per interval: the whole intervals
/// at 0.1, 0.2 and 0.3 s of the simulated clock, then the rest up to the command's end; each
/// with Backend_Bound as the workload's bytes give it by hand (one decimal, as perf).
#[test]
fn metric_only_intervals_on_the_simulator() {
    let w = workload("memory-bound").unwrap();
    let pm = w.perf_metrics;
    let level1 = byte(pm, 0) + byte(pm, 1) + byte(pm, 2) + byte(pm, 3);
    let backend = 100.0 * byte(pm, 3) / level1;
    let run = |extra: &[&str]| {
        let mut args = vec![
            "stat",
            "--sim",
            "--processor",
            "sapphire-rapids",
            "--workload",
            w.name,
            "-M",
            "Backend_Bound,Retiring",
            "--metric-only",
        ];
        args.extend(extra);
        args.extend(["--", "sleep", "0.35"]);
        let out = pmu(&args);
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{text}");
        text
    };
    let whole = run(&[]);
    let headers = whole
        .lines()
        .find(|l| l.contains("%  Backend_Bound"))
        .unwrap();
    let text = run(&["-I", "100"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("#           time {headers}"), "{text}");
    assert!(
        lines.len() >= 5,
        "three whole intervals and the rest: {text}"
    );
    for (i, line) in lines[1..].iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if i < 3 {
            assert_eq!(words[0], format!("0.{}00000000", i + 1), "{text}");
        }
        let shown: f64 = words[1].parse().unwrap();
        assert!(
            (shown - backend).abs() <= 0.05 + 1e-9,
            "{shown} against {backend}"
        );
    }
    let csv = run(&["-I", "100", "-x,"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], " time,%  Backend_Bound,%  Retiring,", "{csv}");
    assert!(lines[1].starts_with("     0.100000000,"), "{csv}");
}

/// The value and last word of the line of `name` in each interval of `text` (a first
/// column of times, then the tree's or the metrics' columns), by interval time.
fn by_interval(text: &str, name: &str) -> Vec<(String, f64, String)> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() >= 3 && w[1] == name)
        .map(|w| {
            (
                w[0].to_string(),
                w[2].parse().unwrap(),
                w[w.len() - 1].to_string(),
            )
        })
        .collect()
}

/// `--sim --td-level 2 -I 100` and `--view memory -I 100` (toplev's interval mode: each
/// line stamped with its interval's end): the whole intervals at 0.1 and 0.2 s of the
/// simulated clock, then the rest up to the command's end; in each, Backend_Bound and
/// Memory_Bound as the workload's IA32_PERF_METRICS bytes give them by hand, marked over
/// Intel's thresholds, Core_Bound under its own; and each channel's read and write
/// bandwidth as the workload's CAS pattern x 64 bytes gives it, every channel of both
/// sockets in every interval. `-M` without `--metric-only` gets the same time column.
#[test]
fn the_tree_and_the_views_every_interval_on_the_simulator() {
    let w = workload("memory-bound").unwrap();
    let run = |what: &[&str]| {
        let mut args = vec![
            "stat",
            "--sim",
            "--processor",
            "sapphire-rapids",
            "--workload",
            w.name,
            "-I",
            "100",
        ];
        args.extend(what);
        args.extend(["--", "sleep", "0.25"]);
        let out = pmu(&args);
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{what:?}: {text}");
        text
    };
    let pm = w.perf_metrics;
    let level1 = byte(pm, 0) + byte(pm, 1) + byte(pm, 2) + byte(pm, 3);
    let tree = run(&["--td-level", "2"]);
    let first: Vec<&str> = tree.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(first[..4], ["time", "top-down,", "level", "2"], "{tree}");
    assert!(!tree.contains("Performance counter stats"), "{tree}");
    for (name, value, over) in [
        ("Backend_Bound", 100.0 * byte(pm, 3) / level1, true),
        ("Memory_Bound", 100.0 * byte(pm, 7) / level1, true),
        (
            "Core_Bound",
            100.0 * (byte(pm, 3) - byte(pm, 7)) / level1,
            false,
        ),
    ] {
        let lines = by_interval(&tree, name);
        assert!(lines.len() >= 3, "two whole intervals and the rest: {tree}");
        assert_eq!(lines[0].0, "0.100000000", "{tree}");
        assert_eq!(lines[1].0, "0.200000000", "{tree}");
        let rest: f64 = lines.last().unwrap().0.parse().unwrap();
        assert!(
            rest > 0.25 && rest < 1.0,
            "the rest ends with the command: {tree}"
        );
        for (time, shown, last) in &lines {
            assert!(
                (shown - value).abs() < 0.01,
                "{time} {name}: {shown} against {value}"
            );
            assert_eq!(last == "<==", over, "{time} {name}: {last}");
        }
    }
    // CAS commands per period of uncore cycles, each moving a 64-byte line.
    let per_period = |event: &str| -> f64 {
        w.pattern_of(event)
            .runs
            .iter()
            .map(|r| f64::from(r.per_cycle) * f64::from(r.cycles))
            .sum()
    };
    let mb_s = |event: &str| per_period(event) * w.uncore_mhz as f64 * 1e6 / 1000.0 * 64.0 / 1e6;
    let (read, write) = (mb_s("UNC_M_CAS_COUNT.RD"), mb_s("UNC_M_CAS_COUNT.WR"));
    let view = run(&["--view", "memory", "-a"]);
    let rows: Vec<Vec<&str>> = view
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let channels = 8; // Sapphire Rapids: IMC0 to IMC7, four controllers of two channels.
    for time in ["0.100000000", "0.200000000"] {
        for socket in ["0", "1"] {
            for channel in 0..channels {
                let row = rows
                    .iter()
                    .find(|r| r[0] == time && r[1] == socket && r[2] == channel.to_string())
                    .unwrap_or_else(|| panic!("{time} socket {socket} channel {channel}:\n{view}"));
                let (r, wr): (f64, f64) = (row[3].parse().unwrap(), row[4].parse().unwrap());
                assert!((r - read).abs() / read < 1e-3, "read {r} against {read}");
                assert!(
                    (wr - write).abs() / write < 1e-3,
                    "write {wr} against {write}"
                );
            }
            let total = rows
                .iter()
                .find(|r| r[0] == time && r[1] == socket && r[2] == "total")
                .unwrap();
            let sum: f64 = total[3].parse().unwrap();
            assert!((sum - channels as f64 * read).abs() / sum < 1e-3, "{view}");
        }
    }
    let metrics = run(&["-M", "Backend_Bound"]);
    let lines = by_interval(&metrics, "Backend_Bound");
    assert!(lines.len() >= 3 && lines[0].0 == "0.100000000", "{metrics}");
}
