//! `pmu encode --perf`, `pmu watch --backend perf|auto` and `pmu list --backends`, end to end:
//! for real against this machine's msr and software PMUs, and against sysfs trees the tests
//! build. The event strings are cross-checked with `perf` itself (Debian: `linux-perf`;
//! `.ci/run` installs it).

use std::fs;
use std::path::Path;
use std::process::Command as Std;

use serde_json::Value;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::run;

/// Writes PMU `name` under ROOT/sys/bus/event_source/devices.
fn add_pmu(root: &Path, name: &str, type_: u32, formats: &[(&str, &str)], cpumask: Option<&str>) {
    let d = root.join("sys/bus/event_source/devices").join(name);
    fs::create_dir_all(d.join("format")).unwrap();
    fs::write(d.join("type"), format!("{type_}\n")).unwrap();
    for (f, spec) in formats {
        fs::write(d.join("format").join(f), format!("{spec}\n")).unwrap();
    }
    if let Some(m) = cpumask {
        fs::write(d.join("cpumask"), format!("{m}\n")).unwrap();
    }
}

/// uncore_snbep.c's format for the HA, IMC, R2PCIe and R3QPI boxes.
const SNBEP: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];

#[test]
fn encode_prints_the_perf_event_string() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["HA_PCI_PMON_CTL0", "ev_sel=0x1", "umask=0x3"],
            "uncore_ha/event=0x1,umask=0x3/\n",
        ),
        (
            &["IA32_PERFEVTSEL0", "ev_sel=0x3c"],
            "cpu/event=0x3c,umask=0x0/\n",
        ),
        (
            &["IA32_PERFEVTSEL1", "ev_sel=0xc0", "os=1", "en=1"],
            "cpu/event=0xc0,umask=0x0/k\n",
        ),
        (
            &[
                "xeon-e5-2600:C3_MSR_PMON_CTL1",
                "ev_sel=0x34",
                "umask=0x3",
                "tid_en=1",
            ],
            "uncore_cbox_3/event=0x34,umask=0x3,tid_en=0x1/\n",
        ),
        (
            &[
                "xeon-e5-2600:Q_P1_PCI_PMON_CTL0",
                "ev_sel=0x2",
                "ev_sel_ext=1",
            ],
            "uncore_qpi_1/event=0x102,umask=0x0/\n",
        ),
        (
            &["xeon-e5-2600:MC_CH2_PCI_PMON_FIXED_CTL", "en=1"],
            "uncore_imc_2/event=0xff,umask=0x0/\n",
        ),
        (
            &["R_MSR_PMON_CTL12", "ev_sel=0x3"],
            "uncore_rbox_1/event=0x3/\n",
        ),
        (
            &[
                "xeon-7500:C5_MSR_PMON_EVT_SEL0",
                "ev_sel=0x1",
                "threshold=2",
            ],
            "uncore_cbox_5/event=0x1,umask=0x0,thresh=0x2/\n",
        ),
    ];
    for (args, want) in cases {
        let mut a = vec!["encode"];
        a.extend_from_slice(args);
        a.push("--perf");
        let (code, out, err) = run(&a);
        assert_eq!((code, out.as_str()), (0, *want), "{args:?}: {err}");
    }
    let (code, out, _) = run(&[
        "--json",
        "encode",
        "HA_PCI_PMON_CTL0",
        "ev_sel=0x1",
        "umask=3",
        "--perf",
    ]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["event"].as_str(), v["config"].as_u64()),
        (Some("uncore_ha/event=0x1,umask=0x3/"), Some(0x301))
    );
}

#[test]
fn encode_perf_takes_the_processors_core_events() {
    // --processor names the list event=NAME comes from, as for plain `encode`.
    let (code, out, err) = run(&[
        "encode",
        "IA32_PERFEVTSEL0",
        "event=INST_RETIRED.ANY_P",
        "usr=1",
        "en=1",
        "--processor",
        "skylake-sp",
        "--perf",
    ]);
    assert_eq!(
        (code, out.as_str()),
        (0, "cpu/event=0xc0,umask=0x0/u\n"),
        "{err}"
    );
    // A number after event= is pointed at the field that takes it.
    let (code, _, err) = run(&["encode", "IA32_PERFEVTSEL0", "event=0xc0", "--perf"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("write ev_sel=0xc0"), "{err}");
}

#[test]
fn encode_refuses_what_the_pmu_cannot_express() {
    let (code, _, err) = run(&[
        "encode",
        "xeon-e5-2600:PCU_MSR_PMON_CTL0",
        "ev_sel=1",
        "ev_sel_ext=1",
        "--perf",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("uncore_pcu has no format field for ev_sel_ext")
            && err.contains("--backend raw"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "encode",
        "xeon-7500:C0_MSR_PMON_EVT_SEL0",
        "ev_sel=1",
        "pmi_en=1",
        "--perf",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("pmi_en") && err.contains("sampl"), "{err}");
    let (code, _, err) = run(&["encode", "HA_PCI_PMON_CTL{n}", "ev_sel=1", "--perf"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("HA_PCI_PMON_CTL0"), "{err}");
    // A PMU present under --root wins over the driver's format: here one without umask.
    let root = tempfile::tempdir().unwrap();
    add_pmu(root.path(), "uncore_ha", 30, &SNBEP[..1], Some("0"));
    let r = root.path().to_str().unwrap();
    let (code, _, err) = run(&[
        "encode",
        "HA_PCI_PMON_CTL0",
        "ev_sel=1",
        "umask=1",
        "--perf",
        "--root",
        r,
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("uncore_ha has no format field for umask"),
        "{err}"
    );
}

#[test]
fn watch_counts_the_tsc_through_perf_for_real() {
    let (code, out, err) = run(&[
        "watch",
        "--backend",
        "perf",
        "--pmu",
        "msr",
        "--event",
        "tsc",
        "--count",
        "2",
        "--interval",
        "0.05",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].contains("event") && lines[0].contains("running"),
        "{out}"
    );
    // watch's columns, for every backend: time, socket, counter (through perf, the event
    // string), event (as given), count (with thousands separators), rate/s, running.
    let header: Vec<&str> = lines[0]
        .trim()
        .trim_start_matches("# ")
        .split_whitespace()
        .collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for l in &lines[1..] {
        let cols: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cols[col("counter")], "msr/event=0x0/", "{l}");
        assert_eq!(cols[col("event")], "tsc", "{l}");
        assert!(
            cols[col("count")].replace(',', "").parse::<u64>().unwrap() > 0,
            "{l}"
        );
        assert_eq!(cols[col("running")], "100.00%", "{l}");
    }
}

#[test]
fn an_event_naming_a_pmu_under_pmu_says_to_drop_one_of_them() {
    let (code, _, err) = run(&["watch", "--sim", "--pmu", "msr", "--event", "msr/tsc/"]);
    assert_eq!(code, 2, "{err}");
    // One sentence, the event as given, the two ways out; no run of spaces from the source.
    assert!(err.contains("--pmu msr takes its event names or terms (tsc, event=0x3c); `msr/tsc/` names a PMU itself: drop --pmu, or the slashes"), "{err}");
}

#[test]
fn watch_of_a_box_goes_from_our_fields_through_the_name_map_to_the_kernel() {
    // A tree whose uncore_ha is the kernel's software PMU (type 1) with the HA's format:
    // event 0 of it is cpu-clock, so the whole path (box -> PMU name -> format -> syscall ->
    // group read) runs for real and counts nanoseconds.
    let root = tempfile::tempdir().unwrap();
    add_pmu(root.path(), "uncore_ha", 1, SNBEP, Some("0"));
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&[
        "--json",
        "watch",
        "--backend",
        "perf",
        "--unit",
        "HA",
        "--event",
        "ev_sel=0",
        "--count",
        "1",
        "--interval",
        "0.05",
        "--root",
        r,
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let c = &v;
    assert_eq!(
        (
            c["pmu"].as_str(),
            c["perf_event"].as_str(),
            c["cpu"].as_u64()
        ),
        (
            Some("uncore_ha"),
            Some("uncore_ha/event=0x0,umask=0x0/"),
            Some(0)
        )
    );
    assert!(c["count"].as_u64().unwrap() > 1_000_000, "{c}");
    // auto picks perf where the PMU exists...
    let (code, out, err) = run(&[
        "--json",
        "watch",
        "--unit",
        "HA",
        "--event",
        "ev_sel=0",
        "--count",
        "1",
        "--interval",
        "0.01",
        "--root",
        r,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"backend\":\"perf\""), "{out}");
    // ...and --backend perf without it names the driver and the way out.
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "watch",
        "--backend",
        "perf",
        "--unit",
        "HA",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
        "--root",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no PMU uncore_ha")
            && err.contains("uncore_snbep.c")
            && err.contains("--backend raw"),
        "{err}"
    );
    // What the format takes but the kernel refuses (software event 0x100 does not exist)
    // is reported with the event and the PMU.
    let (code, _, err) = run(&[
        "watch",
        "--backend",
        "perf",
        "--unit",
        "HA",
        "--event",
        "ev_sel=0,umask=1",
        "--root",
        r,
        "--count",
        "1",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("uncore_ha refused uncore_ha/event=0x0,umask=0x1/"),
        "{err}"
    );
    // A field the PMU's format lacks is refused before anything opens.
    add_pmu(root.path(), "uncore_imc_1", 1, &SNBEP[..1], Some("0"));
    let (code, _, err) = run(&[
        "watch",
        "--backend",
        "perf",
        "--unit",
        "xeon-e5-2600:CH1",
        "--event",
        "ev_sel=0,umask=1",
        "--root",
        r,
        "--count",
        "1",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("uncore_imc_1 has no format field for umask"),
        "{err}"
    );
}

#[test]
fn list_shows_which_backend_reaches_each_box() {
    let root = tempfile::tempdir().unwrap();
    add_pmu(root.path(), "uncore_ha", 30, SNBEP, Some("0"));
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&["--json", "list", "--backends", "--root", r]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rows = v.as_array().unwrap();
    let ha = rows.iter().find(|x| x["instance"] == "HA").unwrap();
    assert_eq!(
        (
            ha["perf_pmu"].as_str(),
            ha["perf"].as_bool(),
            ha["auto"].as_str()
        ),
        (Some("uncore_ha"), Some(true), Some("perf"))
    );
    let c3 = rows
        .iter()
        .find(|x| x["processor"] == "xeon-e5-2600" && x["instance"] == "C3")
        .unwrap();
    assert_eq!(
        (c3["perf_pmu"].as_str(), c3["auto"].as_str()),
        (Some("uncore_cbox_3"), Some("none"))
    );
    let r_box = rows.iter().find(|x| x["instance"] == "R").unwrap();
    assert_eq!(
        r_box["perf_pmu"].as_str(),
        Some("uncore_rbox_0 uncore_rbox_1")
    );
    let (_, table, _) = run(&["list", "--backends", "--root", r]);
    assert!(
        table.lines().next().unwrap().contains("PERF PMU"),
        "{table}"
    );
}

/// `perf stat -e STRING true`: (success, output).
fn perf_stat(event: &str) -> (bool, String) {
    let out = Std::new("perf")
        .args(["stat", "-x,", "-e", event, "true"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run perf ({e}): install it (Debian: apt-get install linux-perf; .ci/run does)"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn perf_itself_parses_the_strings_pmu_prints() {
    for (pmu, event) in [
        ("msr", "tsc"),
        ("msr", "event=0x0"),
        ("software", "config=0"),
        ("software", "config=0x2"),
    ] {
        let (code, out, err) = run(&[
            "--json",
            "watch",
            "--backend",
            "perf",
            "--pmu",
            pmu,
            "--event",
            event,
            "--count",
            "1",
            "--interval",
            "0.01",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        let s = v["perf_event"].as_str().unwrap().to_string();
        let (ok, report) = perf_stat(&s);
        assert!(ok && report.contains(&s), "perf stat -e {s}: {report}");
    }
    // Both refuse a term the PMU's format lacks.
    let (ok, report) = perf_stat("msr/event=0x0,umask=0x1/");
    assert!(!ok && report.contains("umask"), "{report}");
    let (code, _, err) = run(&[
        "watch",
        "--backend",
        "perf",
        "--pmu",
        "msr",
        "--event",
        "event=0x0,umask=0x1",
        "--count",
        "1",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("msr has no format field for umask"), "{err}");
}

#[test]
fn without_privilege_the_error_names_perf_event_paranoid_and_its_value() {
    let paranoid: i32 = fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("pmu");
    // As an unprivileged user (nobody), with no capabilities: setpriv is in util-linux.
    // A test run that is not root is unprivileged already.
    let root = std::os::unix::fs::MetadataExt::uid(&fs::metadata("/proc/self").unwrap()) == 0;
    let mut cmd = if root {
        let mut c = Std::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&bin);
        c
    } else {
        Std::new(&bin)
    };
    let out = cmd
        .args([
            "watch",
            "--backend",
            "perf",
            "--pmu",
            "msr",
            "--event",
            "tsc",
            "--count",
            "1",
            "--interval",
            "0.01",
        ])
        .output()
        .expect("the command runs (as root: setpriv, from util-linux, runs it as nobody)");
    let err = String::from_utf8_lossy(&out.stderr);
    if paranoid > 0 {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("kernel.perf_event_paranoid is {paranoid}"))
                && err.contains("CAP_PERFMON"),
            "{err}"
        );
    } else {
        assert!(
            out.status.success(),
            "paranoid {paranoid} lets anyone count a CPU: {err}"
        );
    }
}

/// `perf stat -e` lists pasted into `pmu watch -e` as they are: raw terms, a PMU's named
/// events, generic names with modifiers and group braces, counted for real on this
/// machine's `msr` and software PMUs, one row per event in the order given. perf itself takes
/// each list too, so the syntax is perf's and not a look-alike.
#[test]
fn watch_takes_perf_stat_event_lists() {
    let lists: &[(&str, &[&str])] = &[
        ("msr/tsc/,cpu-clock", &["msr/tsc/", "cpu-clock"]),
        (
            "task-clock,software/config=0x1/,msr/event=0x0/",
            &["task-clock", "software/config=0x1/", "msr/event=0x0/"],
        ),
        (
            "{cpu-clock:u,cpu-clock:k},tsc",
            &["cpu-clock:u", "cpu-clock:k", "tsc"],
        ),
    ];
    for (list, events) in lists {
        let (ok, report) = perf_stat(list);
        assert!(ok, "perf stat -e {list}: {report}");
        let (code, out, err) = run(&[
            "watch",
            "-e",
            list,
            "--count",
            "1",
            "--interval",
            "0.05",
            "-x,",
        ]);
        assert_eq!(code, 0, "pmu watch -e {list}: {err}");
        let rows: Vec<Vec<&str>> = out
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        let named: Vec<&str> = rows.iter().map(|r| r[3]).collect();
        assert_eq!(&named, events, "{out}");
        for r in &rows {
            assert!(r[4].parse::<u64>().unwrap() > 0, "{list}: {out}");
        }
    }
    // `--pmu software --event cpu-clock`: the software PMU's events are the generic ones.
    let (code, out, err) = run(&[
        "watch",
        "--pmu",
        "software",
        "--event",
        "cpu-clock",
        "--count",
        "1",
        "--interval",
        "0.05",
        "-x,",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines().nth(1).unwrap().contains("software/config=0x0/"),
        "{out}"
    );
    // The same list through --backend perf, and one event per -e, count the same rows.
    let (code, out, err) = run(&[
        "watch",
        "--backend",
        "perf",
        "-e",
        "msr/tsc/",
        "-e",
        "cpu-clock",
        "--count",
        "1",
        "--interval",
        "0.05",
        "-x,",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 3, "{out}");
}

/// What perf's language cannot count here is refused before anything opens, saying what to
/// do: a typo gets the closest name, our grammar without a box asks for --unit, a generic
/// hardware event on a machine without a core PMU says so, --sim and --backend raw refuse.
#[test]
fn perf_event_lists_that_cannot_count_say_why() {
    let cases: &[(&[&str], &str)] = &[
        (&["-e", "tssc"], "did you mean tsc?"),
        (&["-e", "msr/tsc"], "end with a slash"),
        (&["-e", "cpu-clock:pp"], "modifier `pp`"),
        (&["-e", "ev_sel=0x01"], "needs a box: give --unit"),
        (&["-e", "cpu-clock,,tsc"], "is empty"),
        (&["--sim", "-e", "cpu-clock"], "give --unit"),
        (
            &["--backend", "raw", "-e", "cpu-clock"],
            "--backend perf or auto",
        ),
        (
            &["--pmu", "msr", "-e", "msr/tsc/"],
            "drop --pmu, or the slashes",
        ),
        (&["-e", "nosuchpmu/event=0x1/"], "nosuchpmu"),
    ];
    for (args, expected) in cases {
        let mut argv = vec!["watch", "--count", "1"];
        argv.extend_from_slice(args);
        let (code, out, err) = run(&argv);
        assert!(code == 1 || code == 2, "{argv:?}: {code} {out}");
        assert!(err.contains(expected), "{argv:?}: {err}");
        assert!(out.is_empty(), "{argv:?}: {out}");
    }
    // `cycles` counts where the kernel has a core PMU, and is refused by name where not.
    let has_core_pmu = Path::new("/sys/bus/event_source/devices/cpu").exists();
    let (code, _, err) = run(&[
        "watch",
        "-e",
        "cycles",
        "--count",
        "1",
        "--interval",
        "0.05",
    ]);
    if has_core_pmu {
        assert_eq!(code, 0, "{err}");
    } else {
        assert_eq!(code, 1);
        assert!(
            err.contains("no core PMU to count generic hardware events"),
            "{err}"
        );
    }
}

/// The Arm Neoverse V2 core PMU through the kernel's format files, copied from
/// drivers/perf/arm_pmuv3.c into `fixtures/arm` (this machine has no Arm PMU): the event
/// string names the event by its number (INST_RETIRED is 0x08 in Linux's arm_pmuv3.h, and in
/// Arm's list), and the format files place it in config bits 0-15.
#[test]
fn encode_perf_gives_arm_pmuv3_strings_its_format_files_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm");
    let r = root.to_str().unwrap();
    let (code, out, err) = run(&[
        "--json",
        "encode",
        "neoverse-v2:PMEVTYPER3_EL0",
        "event=INST_RETIRED",
        "--perf",
        "--root",
        r,
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["event"].as_str(), Some("armv8_pmuv3_0/event=0x8/"));
    // The string's terms, placed through the fixture's format files as perf does.
    let event = v["event"].as_str().unwrap();
    let terms = event
        .strip_prefix("armv8_pmuv3_0/")
        .and_then(|t| t.strip_suffix('/'))
        .unwrap();
    let dir = root.join("sys/bus/event_source/devices/armv8_pmuv3_0/format");
    let mut words = [0u64; 3];
    for (name, value) in pmu_runtime::perf::format::parse_terms(terms).unwrap() {
        let text = fs::read_to_string(dir.join(&name)).unwrap();
        let field = pmu_runtime::perf::format::FormatField::parse(&name, &text).unwrap();
        field.place(value, &mut words).unwrap();
    }
    assert_eq!(words, [0x08, 0, 0]);
    assert_eq!(
        (v["config"].as_u64(), v["config1"].as_u64()),
        (Some(0x08), Some(0))
    );
    // A core-specific event number above 0x8000 needs all 16 bits of the format: it passes
    // whole.
    let (code, out, err) = run(&[
        "encode",
        "neoverse-v2:PMEVTYPER0_EL0",
        "ev_sel=0x80c1",
        "--perf",
        "--root",
        r,
    ]);
    assert_eq!(
        (code, out.as_str()),
        (0, "armv8_pmuv3_0/event=0x80c1/\n"),
        "{err}"
    );
    // A filter bit the format cannot carry is refused by name, not dropped.
    let (code, _, err) = run(&[
        "encode",
        "neoverse-v2:PMEVTYPER0_EL0",
        "event=INST_RETIRED",
        "nsh=1",
        "--perf",
        "--root",
        r,
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("armv8_pmuv3_0 has no format field for nsh"),
        "{err}"
    );
    // The way out is perf's modifiers: raw access cannot reach a system register.
    assert!(err.contains("`:u` user only, `:k` kernel only"), "{err}");
    assert!(!err.contains("--backend raw"), "{err}");
}

/// NVIDIA Grace's SCF PMU through the kernel's format file, copied from
/// drivers/perf/arm_cspmu/arm_cspmu.h (`event` is `config:0-32`) into `fixtures/arm`: the
/// string names the event by its number (`scf_cache` is 0xF2 in Linux's nvidia_cspmu.c) on
/// socket 0's PMU, `nvidia_scf_pmu_0`, and the format file places it in config.
#[test]
fn encode_perf_gives_nvidia_scf_strings_its_format_file_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm");
    let r = root.to_str().unwrap();
    let (code, out, err) = run(&[
        "--json",
        "encode",
        "nvidia-grace-scf:PMEVTYPER5",
        "event=scf_cache",
        "--perf",
        "--root",
        r,
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["event"].as_str(), Some("nvidia_scf_pmu_0/event=0xf2/"));
    let terms = v["event"]
        .as_str()
        .and_then(|e| e.strip_prefix("nvidia_scf_pmu_0/"))
        .and_then(|t| t.strip_suffix('/'))
        .unwrap();
    let dir = root.join("sys/bus/event_source/devices/nvidia_scf_pmu_0/format");
    let mut words = [0u64; 3];
    for (name, value) in pmu_runtime::perf::format::parse_terms(terms).unwrap() {
        let text = fs::read_to_string(dir.join(&name)).unwrap();
        let field = pmu_runtime::perf::format::FormatField::parse(&name, &text).unwrap();
        field.place(value, &mut words).unwrap();
    }
    assert_eq!(words, [0xF2, 0, 0]);
    // The highest event number of the list (cmem_wr_total_bytes, 0x1db) passes whole.
    let (code, out, err) = run(&[
        "encode",
        "nvidia-grace-scf:PMEVTYPER0",
        "event=cmem_wr_total_bytes",
        "--perf",
        "--root",
        r,
    ]);
    assert_eq!(
        (code, out.as_str()),
        (0, "nvidia_scf_pmu_0/event=0x1db/\n"),
        "{err}"
    );
}

/// The words the terms of `event` (`arm_cmn_0/type=0x5,eventid=0x1/`) make through the
/// format files of the fixture's `arm_cmn_0`, placed as perf places them.
fn cmn_words(root: &Path, terms: &str) -> [u64; 3] {
    let dir = root.join("sys/bus/event_source/devices/arm_cmn_0/format");
    let mut words = [0u64; 3];
    for (name, value) in pmu_runtime::perf::format::parse_terms(terms).unwrap() {
        let text = fs::read_to_string(dir.join(&name)).unwrap();
        let field = pmu_runtime::perf::format::FormatField::parse(&name, &text).unwrap();
        field.place(value, &mut words).unwrap();
    }
    words
}

/// `pmu encode arm-cmn-700:EVENT --perf` against the CMN driver's format and event files
/// copied from drivers/perf/arm-cmn.c into `fixtures/arm` (README there): each event's string
/// makes, through the kernel's format files, the config the kernel's own events file for it
/// makes, and the configs computed by hand from the driver's bit ranges.
#[test]
fn cmn_events_encode_to_strings_the_kernel_formats_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm");
    let r = root.to_str().unwrap();
    let events = root.join("sys/bus/event_source/devices/arm_cmn_0/events");
    let mut checked = 0;
    for entry in fs::read_dir(&events).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name == "dtc_cycles" {
            continue; // the DTC's cycle counter: no node event of the spec (yet)
        }
        let event = format!("arm-cmn-700:{name}");
        let (code, out, err) = run(&["encode", &event, "--perf", "--root", r]);
        assert_eq!(code, 0, "{name}: {err}");
        let terms = out.trim().strip_prefix("arm_cmn_0/").unwrap();
        let ours = cmn_words(&root, terms.strip_suffix('/').unwrap());
        let kernel = fs::read_to_string(events.join(&name)).unwrap();
        assert_eq!(ours, cmn_words(&root, kernel.trim()), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 7);
    // type 0-15, eventid 16-26, occupid 27-30, bynodeid 31, nodeid 32-47, by hand.
    for (event, extra, config) in [
        ("hnf_cache_miss", None, 0x0001_0005u64),
        ("hnf_qos_pocq_occupancy_read", None, 0x080f_0005),
        ("hnf_sn_throttle_min_write", None, 0x302b_0005),
        ("hnf_cache_miss", Some("nodeid=0x68"), 0x68_8001_0005),
    ] {
        let event = format!("arm-cmn-700:{event}");
        let mut args = vec!["encode", event.as_str()];
        args.extend(extra);
        args.extend(["--perf", "--root", r]);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let terms = out.trim().strip_prefix("arm_cmn_0/").unwrap();
        assert_eq!(
            cmn_words(&root, terms.strip_suffix('/').unwrap()),
            [config, 0, 0],
            "{out}"
        );
    }
    // Without the kernel's PMU, the driver's format from the spec gives the same string.
    let (code, out, err) = run(&["encode", "arm-cmn-700:hnf_cache_miss", "--perf"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "arm_cmn_0/type=0x5,eventid=0x1/\n"),
        "{err}"
    );
    let (code, out, _) = run(&["encode", "arm-cmn-700:hnf_sf_hit", "nodeid=0x68", "--perf"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "arm_cmn_0/type=0x5,eventid=0x6,nodeid=0x68,bynodeid=0x1/\n"
        )
    );
    // A term the format lacks is refused by name.
    let (code, _, err) = run(&["encode", "arm-cmn-700:hnf_sf_hit", "umask=1", "--perf"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("arm_cmn_0 has no format field for umask"),
        "{err}"
    );
}

/// `pmu decode arm_cmn_0 CONFIG` names the event a config selects, read through the driver's
/// bit ranges (the kernel's events file for hnf_sn_throttle_min_write is
/// type=0x5,eventid=0x2b,occupid=0x6: 0x302b0005).
#[test]
fn cmn_configs_decode_to_the_event_names() {
    let (code, out, err) = run(&["decode", "arm_cmn_0", "0x302b0005"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "arm_cmn_0/type=0x5,eventid=0x2b,occupid=0x6/: hnf_sn_throttle_min_write (arm-cmn-700)\n"
        ),
        "{err}"
    );
    let (code, out, _) = run(&["decode", "arm_cmn_0", "0x6880010005"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("nodeid=0x68") && out.contains("hnf_cache_miss"),
        "{out}"
    );
    // Every event of the spec encodes and decodes back to itself: no two share a config.
    for e in pmu_runtime::cmn::all_events() {
        let pmu = pmu_runtime::perf::mesh::driver_pmu(e.node);
        let ev = pmu_runtime::perf::mesh::perf_event(&e, &pmu, &[]).unwrap();
        let back = pmu_runtime::perf::mesh::from_config(&pmu, ev.config[0]);
        assert_eq!(back, Some(e), "{}", e.event.name);
    }
    // The HN-F's 75 and the SBSX's 18 CMN-700 entries of arm_cmn_event_attrs, counted by hand.
    assert_eq!(pmu_runtime::cmn::all_events().count(), 75 + 18);
}
