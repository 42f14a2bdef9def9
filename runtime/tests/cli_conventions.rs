//! The `pmu` command as users of msr-tools, setpci, perf and likwid expect it (issue 13):
//! the number rule, refusals of arguments that make no sense, one grammar, value-only and
//! CSV/JSON-lines output, sockets, processor detection, completions and the man page, JSON hex
//! strings, quiet broken pipes, and messages that do not mislead. Messages are snapshots.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::process::Stdio;

use assert_cmd::cargo::CommandCargoExt;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::redact;
use fake_machine::{add_ha, poke, run, two_sockets};

/// A file-tree machine: two sockets (CPU 0 on socket 0, CPU 1 on socket 1), an MSR file per
/// CPU, an HA device on bus 0x3f, and, when given, a /proc/cpuinfo.
fn machine(cpuinfo: Option<&str>) -> tempfile::TempDir {
    let root = two_sockets();
    add_ha(root.path());
    if let Some(text) = cpuinfo {
        fs::create_dir_all(root.path().join("proc")).unwrap();
        fs::write(root.path().join("proc/cpuinfo"), text).unwrap();
    }
    root
}

const AMD: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7713 64-Core Processor\nflags\t\t: fpu msr perfctr_core\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n";
const JAKETOWN: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 45\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 0 @ 2.70GHz\nflags\t\t: fpu msr arch_perfmon pebs\n";

/// Every message of `cases` (name, args, expected exit code), as one reviewed snapshot.
fn messages(cases: &[(&str, Vec<&str>, i32)]) -> String {
    let mut out = BTreeMap::new();
    for (name, args, want) in cases {
        let (code, _, err) = run(args);
        assert_eq!(code, *want, "{name}: {err}");
        assert!(err.starts_with("error: "), "{name}: one error style: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        out.insert(name.to_string(), err);
    }
    out.iter()
        .map(|(k, v)| format!("[{k}]\n{v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // `pmu list --json | head -c 100`: about 600 kB of output, the reader leaves early.
    let mut child = std::process::Command::cargo_bin("pmu")
        .unwrap()
        .args(["list", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // stdout is dropped here: the pipe is closed.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "exit quietly");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "and say nothing");

    // `pmu watch ... | head -1` on a file-tree machine: quiet, and the registers are put back.
    let root = machine(None);
    let msr = root.path().join("dev/cpu/0/msr");
    poke(&msr, 0xC00, 0x1);
    let before = fs::read(&msr).unwrap();
    let mut child = std::process::Command::cargo_bin("pmu")
        .unwrap()
        .args(["watch", "--root", root.path().to_str().unwrap()])
        .args([
            "--unit",
            "W",
            "--event",
            "ev_sel=0x05",
            "--interval",
            "0.01",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(fs::read(&msr).unwrap(), before, "registers put back");
}

#[test]
fn numbers_follow_one_rule_an_rdmsr_user_cannot_trip_over() {
    // rdmsr prints hex without 0x: a value with a hex letter is hex.
    let (code, out, _) = run(&["decode", "IA32_PERFEVTSEL0", "43003c", "-f", "ev_sel"]);
    assert_eq!((code, out.as_str()), (0, "3c\n"));
    // Explicit prefixes.
    let (_, out, _) = run(&["decode", "IA32_PERFEVTSEL0", "0x430076", "-x"]);
    assert_eq!(out, "430076\n");
    let (_, out, _) = run(&["decode", "IA32_PERFEVTSEL0", "0d430076", "-x"]);
    assert_eq!(out, "68ffc\n");
    let (_, out, _) = run(&["decode", "IA32_PERFEVTSEL0", "0b101", "-d"]);
    assert_eq!(out, "5\n");
    // A single digit is the same in both bases.
    let (code, out, _) = run(&["encode", "IA32_FIXED_CTR_CTRL", "en2=3"]);
    assert_eq!(code, 0);
    assert!(out.contains("0x0000000000000300"), "{out}");
    // The rule is in --help.
    let (_, help, _) = run(&["decode", "--help"]);
    assert!(help.contains("refused as ambiguous"), "{help}");
    insta::assert_snapshot!(messages(&[
        (
            "pasted rdmsr value, digits only",
            vec!["decode", "IA32_PERFEVTSEL0", "430076"],
            2
        ),
        ("negative", vec!["decode", "IA32_PERFEVTSEL0", "-5"], 2),
        (
            "too large",
            vec!["decode", "IA32_PERFEVTSEL0", "0x1_0000_0000_0000_0000"],
            2
        ),
        (
            "not a number",
            vec!["decode", "IA32_PERFEVTSEL0", "0xfg"],
            2
        ),
        (
            "ambiguous field value",
            vec!["encode", "IA32_PERFEVTSEL0", "ev_sel=60"],
            2
        ),
        (
            "negative field value",
            vec!["encode", "IA32_PERFEVTSEL0", "ev_sel=-1"],
            2
        ),
    ]));
}

#[test]
fn arguments_that_make_no_sense_are_refused_before_anything_is_written() {
    let root = machine(None);
    let r = root.path().to_str().unwrap();
    let msr = root.path().join("dev/cpu/0/msr");
    let before = fs::read(&msr).unwrap();
    let watch = |interval: &'static str| {
        vec![
            "watch",
            "--root",
            r,
            "--unit",
            "W",
            "--event",
            "ev_sel=0x05",
            "--count",
            "1",
            "--interval",
            interval,
        ]
    };
    let text = messages(&[
        ("interval 0", watch("0"), 2),
        ("interval 1e-12", watch("1e-12"), 2),
        ("interval 1e30", watch("1e30"), 2),
        ("interval NaN", watch("NaN"), 2),
        (
            "count 0",
            vec![
                "watch", "--sim", "--unit", "W", "--event", "ev_sel=5", "--count", "0",
            ],
            2,
        ),
        (
            "a field given twice",
            vec![
                "encode",
                "W_MSR_PMON_EVT_SEL0",
                "ev_sel=0x3c",
                "ev_sel=0x3d",
            ],
            2,
        ),
        (
            "a field given twice, in another case",
            vec!["encode", "W_MSR_PMON_EVT_SEL0", "en=1", "EN=0"],
            2,
        ),
        (
            "event=NAME and a field it sets",
            vec![
                "encode",
                "HA_PCI_PMON_CTL0",
                "event=UNC_H_REQUESTS.READS",
                "umask=0x0c",
            ],
            2,
        ),
        (
            "watch: event=NAME and a field it sets",
            vec![
                "watch",
                "--sim",
                "--unit",
                "HA",
                "--event",
                "event=UNC_H_REQUESTS.READS,ev_sel=0x02",
                "--count",
                "1",
            ],
            2,
        ),
        (
            "--cpu with --socket",
            vec![
                "read",
                "W_MSR_PMON_CTR0",
                "--sim",
                "--cpu",
                "0",
                "--socket",
                "1",
            ],
            2,
        ),
        (
            "read: a PCI register with --cpu",
            vec!["read", "HA_PCI_PMON_CTL0", "--sim", "--cpu", "0"],
            2,
        ),
        (
            "watch: a PCI box with --cpu",
            vec![
                "watch", "--root", r, "--unit", "HA", "--cpu", "0", "--event", "ev_sel=1",
            ],
            2,
        ),
        (
            "watch: a box given twice",
            vec![
                "watch", "--sim", "--unit", "C0", "--unit", "c0", "--event", "ev_sel=1",
            ],
            2,
        ),
        (
            "watch: a setting watch makes itself",
            vec!["watch", "--sim", "--unit", "C0", "--event", "ev_sel=1,en=0"],
            2,
        ),
    ]);
    assert_eq!(fs::read(&msr).unwrap(), before, "nothing was written");
    insta::assert_snapshot!(redact(&text, root.path()));
}

#[test]
fn watch_takes_what_encode_takes() {
    // event=NAME, a named value (invert=lt), and the number rule, on a PCI box and an MSR box.
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "HA",
        "--event",
        "event=UNC_H_REQUESTS.READS",
        "--event",
        "ev_sel=0x02,invert=lt,thresh=2",
        "--count",
        "2",
        "--interval",
        "0.01",
        "-x,",
    ]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("watch_ha_csv", out);
    // event=NAME programs the event's select and umask: the simulator counts it.
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "xeon-e5-2600:P0",
        "--event",
        "event=UNC_Q_CTO_COUNT",
        "--count",
        "1",
        "--interval",
        "0.01",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["event"], "event=UNC_Q_CTO_COUNT");
    assert_eq!(v["socket"], 0);
    assert!(v["count_hex"].is_string(), "{v}");
}

#[test]
fn decode_names_the_event() {
    let (code, out, _) = run(&["decode", "HA_PCI_PMON_CTL0", "0x400301"]);
    assert_eq!(code, 0);
    assert!(out.contains("event: UNC_H_REQUESTS.READS\n"), "{out}");
    let (_, out, _) = run(&["decode", "HA_PCI_PMON_CTL0", "0x400301", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["event"], "UNC_H_REQUESTS.READS");
    // A select no event of the list has: no name, not a wrong one.
    let (_, out, _) = run(&["decode", "HA_PCI_PMON_CTL0", "0xff"]);
    assert!(!out.contains("event:"), "{out}");
}

#[test]
fn registers_by_raw_address_like_rdmsr() {
    let root = machine(None);
    let r = root.path().to_str().unwrap();
    poke(&root.path().join("dev/cpu/0/msr"), 0x186, 0x43_003c);
    let (code, out, err) = run(&["read", "0x186", "--cpu", "0", "--root", r]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("IA32_PERFEVTSEL0 = 0x000000000043003c (64-bit, MSR 0x186) on CPU 0"),
        "{out}"
    );
    let (_, out, _) = run(&["read", "0x186", "--cpu", "0", "--root", r, "-f", "7:0"]);
    assert_eq!(out, "3c\n");
    let (_, out, _) = run(&["decode", "0x186", "0x43003c", "-f", "usr"]);
    assert_eq!(out, "1\n");
    insta::assert_snapshot!(messages(&[
        ("no register there", vec!["read", "0x1234", "--sim"], 2),
        ("not a number", vec!["read", "0xzz", "--sim"], 2),
    ]));
}

#[test]
fn read_all_and_value_only_output() {
    let root = machine(None);
    let r = root.path().to_str().unwrap();
    poke(&root.path().join("dev/cpu/0/msr"), 0xC00, 0x1);
    poke(&root.path().join("dev/cpu/1/msr"), 0xC00, 0x2000_0001);
    let (code, out, err) = run(&["read", "xeon-7500:U_MSR_PMON_GLOBAL_CTL", "-a", "--root", r]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("read_all_sockets", out);
    // rdmsr -a style: one bare value per line.
    let (_, out, _) = run(&[
        "read",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "--all",
        "--root",
        r,
        "-x",
    ]);
    assert_eq!(out, "1\n20000001\n");
    let (_, out, _) = run(&[
        "read",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "-a",
        "--root",
        r,
        "-f",
        "0",
        "-d",
    ]);
    assert_eq!(out, "1\n1\n");
    // A core register: every CPU.
    let (_, out, _) = run(&["read", "IA32_PERFEVTSEL0", "-a", "--root", r, "-x"]);
    assert_eq!(out.lines().count(), 2);
    let (_, out, _) = run(&[
        "read",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "-a",
        "--root",
        r,
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[1]["socket"], 1);
    assert_eq!(v[1]["value_hex"], "0x20000001");
    insta::assert_snapshot!(messages(&[
        (
            "-f bits outside the register",
            vec![
                "decode",
                "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
                "0x1",
                "-f",
                "40:32"
            ],
            2
        ),
        (
            "-f unknown field",
            vec![
                "decode",
                "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
                "0x1",
                "-f",
                "enall"
            ],
            2
        ),
    ]));
}

#[test]
fn watch_formats_sockets_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("counts.csv");
    // Every socket, two boxes, summed per socket, CSV with ';', into a file.
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "-a",
        "--unit",
        "xeon-7500:C0",
        "--unit",
        "xeon-7500:C1",
        "--per-socket",
        "--event",
        "ev_sel=0x01",
        "--count",
        "2",
        "--interval",
        "0.5",
        "-x;",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "", "the report goes to the file");
    insta::assert_snapshot!("watch_per_socket_csv", fs::read_to_string(&file).unwrap());
    // Per box, the table has a socket column.
    let (code, out, _) = run(&[
        "watch",
        "--sim",
        "-a",
        "--unit",
        "xeon-7500:C0",
        "--event",
        "ev_sel=0x01",
        "--count",
        "1",
        "--interval",
        "0.5",
    ]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("watch_all_sockets_table", out);
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "xeon-7500:C0",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
        "--interval",
        "0.01",
        "-o",
        "/nonexistent/dir/out.csv",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: cannot write /nonexistent/dir/out.csv"),
        "{err}"
    );
}

#[test]
fn the_processor_is_detected_and_an_amd_machine_is_named_plainly() {
    let amd = machine(Some(AMD));
    let (code, out, _) = run(&["detect", "--root", amd.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("detect_amd", out);
    let intel = machine(Some(JAKETOWN));
    let i = intel.path().to_str().unwrap();
    let (code, out, _) = run(&["detect", "--root", i]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("detect_jaketown", out);
    // On the E5-2600, a name both processors have means the E5-2600's.
    let (code, out, err) = run(&["read", "C0_MSR_PMON_CTR0", "--root", i, "--cpu", "0"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("MSR 0xD16"), "{out}");
    let text = messages(&[
        (
            "AMD",
            vec![
                "read",
                "IA32_PERFEVTSEL0",
                "--root",
                amd.path().to_str().unwrap(),
            ],
            1,
        ),
        (
            "a Xeon 7500 register on an E5-2600",
            vec!["read", "W_MSR_PMON_CTR0", "--root", i],
            1,
        ),
    ]);
    insta::assert_snapshot!(redact(&redact(&text, amd.path()), intel.path()));
}

/// What the shell gets when it asks `pmu` to complete `words` (fish's protocol: one
/// candidate per line, its help after a tab).
fn complete(words: &[&str]) -> Vec<String> {
    let out = fake_machine::pmu()
        .env("PMU_COMPLETE", "fish")
        .arg("--")
        .arg("pmu")
        .args(words)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn completions_and_man_page_come_from_the_command_definitions() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = run(&["completions", shell]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("PMU_COMPLETE"), "{shell} asks pmu: {out}");
    }
    // Options, and names from the spec: processors, registers, boxes, events.
    assert!(complete(&["watch", "--per"]).contains(&"--per-socket".to_string()));
    assert_eq!(
        complete(&["watch", "--processor", "xeon-e5-2600-v"]),
        ["xeon-e5-2600-v2", "xeon-e5-2600-v3", "xeon-e5-2600-v4"]
    );
    let regs = complete(&["read", "C3_MSR_PMON_CTL"]);
    assert!(regs.contains(&"C3_MSR_PMON_CTL0".to_string()), "{regs:?}");
    let units = complete(&["watch", "--unit", "xeon-e5-2600:IMC"]);
    assert!(
        units.contains(&"xeon-e5-2600:IMC0".to_string()),
        "{units:?}"
    );
    let events = complete(&[
        "watch",
        "--unit",
        "IMC0",
        "--event",
        "event=UNC_M_CAS_COUNT.R",
    ]);
    assert!(
        events.contains(&"event=UNC_M_CAS_COUNT.RD".to_string()),
        "{events:?}"
    );

    let (code, out, _) = run(&["man"]);
    assert_eq!(code, 0);
    assert!(out.starts_with(".ie") || out.contains(".TH pmu"), "{out}");
    assert!(out.contains("completions"));
    // A page per subcommand, each with every option, which the top page refers to.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = run(&["man", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    // One line per page written: the top page and one per subcommand, nothing else in DIR
    // (no staging directory left behind).
    let pages: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(out.lines().count(), pages.len(), "{out}");
    assert!(pages.iter().all(|p| p.ends_with(".1")), "{pages:?}");
    for page in ["pmu.1", "pmu-watch.1", "pmu-discover.1", "pmu-man.1"] {
        assert!(pages.iter().any(|p| p == page), "{page} not in {pages:?}");
    }
    let watch = fs::read_to_string(dir.path().join("pmu-watch.1")).unwrap();
    for option in ["per\\-socket", "field\\-separator", "interval"] {
        assert!(watch.contains(option), "pmu-watch.1 lacks {option}");
    }
    let top = fs::read_to_string(dir.path().join("pmu.1")).unwrap();
    assert!(top.contains("pmu\\-watch(1)"), "{top}");
    let (code, _, err) = run(&["man", "--dir", "/nonexistent/man1"]);
    assert_eq!(code, 2);
    assert!(err.contains("create it first"), "{err}");
}

#[test]
fn json_values_carry_hex_strings() {
    let (_, out, _) = run(&["decode", "W_MSR_PMON_EVT_SEL0", "0x4000000400001", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["value_hex"], "0x0004000000400001");
    assert_eq!(v["reserved_bits_set_hex"], "0x4000000000000");
    assert_eq!(v["ignored_bits_set_hex"], "0x0");
    assert!(v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["value_hex"].is_string()));
    // A value jq 1.6 would round keeps its digits in the hex string.
    let (_, out, _) = run(&[
        "decode",
        "IA32_PERF_GLOBAL_CTRL",
        "0x4000000000030001",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["value_hex"], "0x4000000000030001");
    let (_, out, _) = run(&["list", "--json", "--unit", "HA"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["address_hex"], "0xf4");
    assert!(v[0]["fields"][0]["reset_hex"].is_string());
}

#[test]
fn messages_do_not_mislead() {
    let (code, out, _) = run(&["decode", "W_MSR_PMON_CTR0 ", "0x5"]);
    assert_eq!(code, 0, "a trailing space is not part of the name");
    assert!(out.starts_with("W_MSR_PMON_CTR0 = "), "{out}");
    let (_, help, _) = run(&["decode", "--help"]);
    assert!(
        help.contains("W_MSR_PMON_EVT_SEL{N}"),
        "{{n}} is not a line break: {help}"
    );
    let (code, _, _) = run(&["decode", "W_MSR_PMON_EVT_SEL{N}", "0x1"]);
    assert_eq!(code, 0, "the help's spelling works");
    insta::assert_snapshot!(messages(&[
        (
            "write a read-only register",
            vec!["write", "IA32_PERF_CAPABILITIES", "0", "--sim"],
            2
        ),
        (
            "write two whole values",
            vec!["write", "W_MSR_PMON_EVT_SEL0", "0x1", "0x2", "--sim"],
            2
        ),
        (
            "set an ignored field",
            vec!["encode", "W_MSR_PMON_GLOBAL_CTL", "ig=1"],
            2
        ),
        (
            "set a reserved field",
            vec!["encode", "IA32_PERFEVTSEL0", "rsv=1"],
            2
        ),
        (
            "a unit of another processor",
            vec!["list", "--processor", "xeon-7500", "--unit", "HA"],
            2
        ),
        (
            "an unknown processor",
            vec!["list", "--processor", "xeon-9999"],
            2
        ),
        ("clap's own errors", vec!["frobnicate"], 2),
    ]));
}

#[test]
fn list_events_covers_the_architectural_events_and_shows_intel_descriptions() {
    let (code, out, _) = run(&["list", "--events", "--unit", "CORE"]);
    assert_eq!(code, 0);
    // The architectural events and each processor's own list, each row naming its processor
    // (`xeon-e5-2600:CORE`): the lists share names.
    let row = |l: &str| l.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    assert!(
        out.lines()
            .any(|l| row(l) == "UNHALTED_CORE_CYCLES architectural:CORE 0x3c 0x00"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| row(l) == "INST_RETIRED.ANY_P xeon-e5-2600:CORE 0xc0 0x00"),
        "{out}"
    );
    let (_, out, _) = run(&["decode", "IA32_PERFEVTSEL0", "0x43412e"]);
    assert!(out.contains("event: LLC_MISSES\n"), "{out}");
    let (code, out, _) = run(&["encode", "IA32_PERFEVTSEL0", "event=llc_misses", "usr=1"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("IA32_PERFEVTSEL0 = 0x000000000001412e"),
        "{out}"
    );
    // Descriptions come from Intel's file, matched by name (and the architectural events by
    // code and umask), for the processor the file is of.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("list.json");
    fs::write(
        &file,
        r#"{"Header": {}, "Events": [
            {"EventCode": "0x2E", "UMask": "0x41", "EventName": "LONGEST_LAT_CACHE.MISS", "BriefDescription": "Core-originated requests that missed the LLC (test text)."},
            {"EventCode": "0x01", "UMask": "0x03", "EventName": "UNC_H_REQUESTS.READS", "BriefDescription": "Reads (test text)."}
        ]}"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (code, out, _) = run(&[
        "list",
        "--events",
        "--unit",
        "CORE",
        "--perfmon",
        f,
        "--processor",
        "xeon-e5-2600",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.lines().next().unwrap().ends_with("DESCRIPTION"),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("LONGEST_LAT_CACHE.MISS ")
            && l.ends_with("missed the LLC (test text).")),
        "{out}"
    );
    let (_, out, _) = run(&[
        "list",
        "--events",
        "--unit",
        "HA",
        "--perfmon",
        f,
        "--json",
        "--processor",
        "xeon-e5-2600",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let reads = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "UNC_H_REQUESTS.READS")
        .unwrap();
    assert_eq!(reads["description"], "Reads (test text).");
    assert_eq!(reads["code_hex"], "0x01");
    // A file whose name does not say its processor needs --processor.
    let (code, _, err) = run(&["list", "--events", "--perfmon", f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("give --processor"), "{err}");
    // One processor's descriptions never go to another's events of the same name: Intel's
    // haswellx list describes the E5-2600 v3 HA only, and is refused for v4.
    let v3 = dir.path().join("haswellx_uncore.json");
    fs::copy(&file, &v3).unwrap();
    let v3 = v3.to_str().unwrap();
    let (code, out, _) = run(&[
        "list",
        "--events",
        "--unit",
        "HA",
        "--perfmon",
        v3,
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let described: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "UNC_H_REQUESTS.READS" && !e["description"].is_null())
        .map(|e| e["processor"].as_str().unwrap())
        .collect();
    assert_eq!(described, ["xeon-e5-2600-v3"], "{out}");
    let (code, _, err) = run(&[
        "list",
        "--events",
        "--perfmon",
        v3,
        "--processor",
        "xeon-e5-2600-v4",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is the event list of xeon-e5-2600-v3"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "list",
        "--events",
        "--perfmon",
        "/nonexistent.json",
        "--processor",
        "xeon-e5-2600",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: cannot read /nonexistent.json"),
        "{err}"
    );
}

#[test]
fn backend_messages_fit_where_the_command_ran() {
    let empty = tempfile::tempdir().unwrap();
    let root = machine(None);
    let r = root.path().to_str().unwrap();
    let text = messages(&[
        (
            "sim: no such CPU",
            vec!["read", "W_MSR_PMON_EVT_SEL0", "--cpu", "5", "--sim"],
            2,
        ),
        (
            "sim: no such socket",
            vec!["read", "HA_PCI_PMON_CTL0", "--socket", "3", "--sim"],
            2,
        ),
        (
            "sim: a register the processor lacks",
            vec!["write", "IA32_A_PMC4", "1", "--sim"],
            1,
        ),
        (
            "no uncore devices: only the one asked for",
            vec![
                "read",
                "HA_PCI_PMON_CTL0",
                "--root",
                empty.path().to_str().unwrap(),
            ],
            1,
        ),
        (
            "a PCI device refusing an access is no #GP",
            vec![
                "read",
                "HA_PCI_PMON_CTL0",
                "--root",
                r,
                "--inject-fault",
                "read:1:eio",
            ],
            1,
        ),
        (
            "an MSR refusing an access is a #GP",
            vec![
                "read",
                "W_MSR_PMON_EVT_SEL0",
                "--root",
                r,
                "--inject-fault",
                "read:1:eio",
            ],
            1,
        ),
    ]);
    assert!(
        !text.contains("modprobe") && !text.contains("<sim>"),
        "{text}"
    );
    assert!(
        text.lines().all(|l| l.len() < 400),
        "one short line each: {text}"
    );
    insta::assert_snapshot!(redact(&redact(&text, empty.path()), root.path()));
}

#[test]
fn sigterm_puts_the_registers_back() {
    let root = machine(None);
    let msr = root.path().join("dev/cpu/0/msr");
    poke(&msr, 0xC00, 0x1);
    let before = fs::read(&msr).unwrap();
    let mut child = std::process::Command::cargo_bin("pmu")
        .unwrap()
        .args(["watch", "--root", root.path().to_str().unwrap()])
        .args([
            "--unit",
            "W",
            "--event",
            "ev_sel=0x05",
            "--interval",
            "0.05",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The header is printed once everything is programmed.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    stdout.read_exact(&mut first).unwrap();
    assert_ne!(
        fs::read(&msr).unwrap(),
        before,
        "watch programmed the W-box"
    );
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read(&msr).unwrap(), before, "registers put back");
}

/// Two boxes on every socket: a failure at any read or write, including while programming
/// the second box or the second socket, leaves both CPUs' MSRs exactly as they were.
#[test]
fn watch_of_several_boxes_and_sockets_rolls_back_at_every_step() {
    for op in ["write", "read"] {
        let mut n = 1;
        loop {
            let root = machine(None);
            let files: Vec<_> = (0..2)
                .map(|c| root.path().join(format!("dev/cpu/{c}/msr")))
                .collect();
            poke(&files[0], 0xC00, 0x1);
            let before: Vec<Vec<u8>> = files.iter().map(|f| fs::read(f).unwrap()).collect();
            let fault = format!("{op}:{n}:eio");
            let (code, _, err) = run(&[
                "watch",
                "--root",
                root.path().to_str().unwrap(),
                "-a",
                "--unit",
                "W",
                "--unit",
                "xeon-7500:C0",
                "--event",
                "ev_sel=0x05",
                "--count",
                "1",
                "--interval",
                "0.01",
                "--inject-fault",
                &fault,
            ]);
            let after: Vec<Vec<u8>> = files.iter().map(|f| fs::read(f).unwrap()).collect();
            if err.contains("also failed") || err.contains("restoring") {
                // The fault hit the restore itself: the message must say so and what to do.
                assert!(err.contains("check them with `pmu read`"), "{fault}: {err}");
            } else {
                assert!(
                    after == before,
                    "{fault}: exit {code}: registers changed: {err}"
                );
            }
            if code == 0 {
                assert!(n > 1, "{fault}: the first access must fail");
                break;
            }
            assert_eq!(code, 1, "{fault}: {err}");
            n += 1;
            assert!(n < 200, "{fault}: watch never succeeded");
        }
    }
}

#[test]
fn a_misspelt_box_or_processor_gets_the_closest_names() {
    let watch = |units: &[&'static str], extra: &[&'static str]| {
        let mut args = vec!["watch", "--sim", "--event", "ev_sel=0x01", "--count", "1"];
        for u in units {
            args.extend(["--unit", u]);
        }
        args.extend(extra);
        args
    };
    let text = messages(&[
        (
            "a box typo with a prefix",
            watch(&["xeon-7500:C33"], &[]),
            2,
        ),
        (
            "a box typo with --processor",
            watch(&["CHA30"], &["--processor", "skylake-sp"]),
            2,
        ),
        ("a box typo without a processor", watch(&["CBOX3"], &[]), 2),
        (
            "a box typo after a prefixed unit",
            watch(&["xeon-7500:C3", "C44"], &[]),
            2,
        ),
        (
            "an unknown processor",
            watch(&["CHA3"], &["--processor", "skylake"]),
            2,
        ),
        ("an unknown prefix", watch(&["skylake:CHA3"], &[]), 2),
    ]);
    for block in text.split("\n[") {
        assert!(
            block.len() < 400,
            "a few short lines, not every box: {block}"
        );
    }
    insta::assert_snapshot!(text);
}

#[test]
fn a_prefix_on_one_unit_settles_the_processor_of_the_others() {
    // C3 is a box of xeon-7500 and of every E5: alone it needs a prefix.
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "C3",
        "--event",
        "ev_sel=0x01",
        "--count",
        "1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("prefix one"), "{err}");
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "xeon-7500:C3",
        "--unit",
        "C4",
        "--event",
        "ev_sel=0x01",
        "--count",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("C4_MSR_PMON_CTR0"), "{out}");
    // The later name means the first's processor, even where another has it too.
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "xeon-e5-2600:HA",
        "--unit",
        "C4",
        "--event",
        "ev_sel=0x01",
        "--count",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("C4_MSR_PMON_CTR0"), "{out}");
}
