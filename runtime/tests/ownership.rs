//! Ownership and honest labels (issue 21), each through the `pmu` command or the library, as a
//! new user would meet it:
//! - a counter whose control is already enabled is refused, named with its value, before any
//!   write; `--force` takes it, and it is put back at exit;
//! - `pmu write` to a box a running session holds is refused, naming the session;
//! - lock files are never opened through a link, and a lock directory that other users can
//!   write is refused (sticky or not: issue 41);
//! - a socket or CPU the machine lacks is refused, naming those it has;
//! - the same mistake gets the same exit status, and `pmu write` says when the register reads
//!   back differently.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use assert_cmd::cargo::CommandCargoExt;
use pmu_runtime::boxes::Boxes;
use pmu_runtime::counters::Counting;
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::ownership::{LockDir, Ownership, Pmu};
use pmu_runtime::sampling::uncore::EventSelect;
use pmu_runtime::session::{Options, Selection, Session, SessionBackend};
use pmu_runtime::sim::SimConfig;
use pmu_runtime::{Error, SamplingError};

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::{add_ha, peek, poke, run, two_sockets};

/// `pmu watch` of the Xeon 7500 W-box under `root`, once, with `extra` arguments.
fn watch_w(root: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["watch", "--root", root.to_str().unwrap()];
    args.extend(["--unit", "W", "--event", "ev_sel=0x05"]);
    args.extend(["--count", "1", "--interval", "0.01"]);
    args.extend(extra);
    run(&args)
}

#[test]
fn an_enabled_control_is_refused_before_any_write_and_taken_only_with_force() {
    let root = two_sockets();
    let msr = root.path().join("dev/cpu/0/msr");
    // W_MSR_PMON_EVT_SEL0 counting event 5, enabled: a killed session's, or another tool's.
    poke(&msr, 0xC90, 0x40_0005);
    let before = fs::read(&msr).unwrap();
    let (code, _, err) = watch_w(root.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("W_MSR_PMON_EVT_SEL0 is already enabled (0x400005)")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(fs::read(&msr).unwrap(), before, "nothing was written");

    let (code, out, err) = watch_w(root.path(), &["--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("W_MSR_PMON_CTR0"), "{out}");
    assert_eq!(
        peek(&msr, 0xC90),
        0x40_0005,
        "the taken control is put back"
    );
    assert_eq!(fs::read(&msr).unwrap(), before, "everything is put back");

    // With two boxes, the second one's enabled control is refused and the first is put
    // back: the machine is left as it was.
    poke(&msr, 0xC90, 0); // the W-box free now
    poke(&msr, 0xD10, 0x40_0007); // C0_MSR_PMON_EVT_SEL0 enabled
    let before = fs::read(&msr).unwrap();
    let (code, _, err) = watch_w(root.path(), &["--unit", "xeon-7500:C0"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("C0_MSR_PMON_EVT_SEL0 is already enabled (0x400007)"),
        "{err}"
    );
    assert_eq!(
        fs::read(&msr).unwrap(),
        before,
        "the first box was put back"
    );

    // A core counter likewise: IA32_PERFEVTSEL0 with EN (bit 22) set.
    poke(&msr, 0x186, 0x43_003c);
    let r = root.path().to_str().unwrap();
    let core = [
        "watch",
        "--root",
        r,
        "--unit",
        "CORE",
        "--event",
        "ev_sel=0x3c",
    ];
    let (code, _, err) = run(&[&core[..], &["--count", "1", "--interval", "0.01"]].concat());
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("IA32_PERFEVTSEL0 is already enabled (0x43003c)"),
        "{err}"
    );
    assert_eq!(peek(&msr, 0x38F), 0, "IA32_PERF_GLOBAL_CTRL untouched");
}

#[test]
fn the_library_refuses_an_enabled_counter_unless_taking_over() {
    let boxes = Boxes::of(&pmu_regs::xeon_7500::PROCESSOR);
    let c3 = boxes.find("C3").unwrap();
    let machine = Machine::simulated(SimConfig::of(&pmu_regs::xeon_7500::PROCESSOR));
    let ctl = machine
        .resolve("C3_MSR_PMON_EVT_SEL0", &Where::default())
        .unwrap();
    machine.write(&ctl, 0x40_0001).unwrap();

    let mut counting = Counting::open(&machine, boxes, c3, 0, 0, None).unwrap();
    match counting.program(&[EventSelect::event(0x02)]) {
        Err(Error::Sampling(SamplingError::Enabled {
            register, value, ..
        })) => {
            assert_eq!((register, value), ("C3_MSR_PMON_EVT_SEL0", 0x40_0001));
        }
        other => panic!(
            "expected the enabled control refused, got {:?}",
            other.err()
        ),
    }
    counting.close().unwrap();
    assert_eq!(
        machine.read(&ctl).unwrap(),
        0x40_0001,
        "nothing was written"
    );

    let machine = machine.taking_over(true);
    let mut counting = Counting::open(&machine, boxes, c3, 0, 0, None).unwrap();
    let n = counting.program(&[EventSelect::event(0x02)]).unwrap();
    assert_eq!(n, [0], "the enabled counter itself is taken");
    assert_eq!(
        machine.read(&ctl).unwrap() & 0xff,
        0x02,
        "now counting event 2"
    );
    counting.close().unwrap();
    assert_eq!(
        machine.read(&ctl).unwrap(),
        0x40_0001,
        "put back at the end"
    );
}

#[test]
fn a_session_writes_nothing_when_a_later_box_is_enabled() {
    let processor = &pmu_regs::xeon_7500::PROCESSOR;
    let boxes = Boxes::of(processor);
    let selection = Selection::of_boxes(
        &[
            (boxes, boxes.find("C0").unwrap()),
            (boxes, boxes.find("C3").unwrap()),
        ],
        &["ev_sel=0x02"],
        &[EventSelect::event(0x02)],
    )
    .unwrap();
    let machine = Machine::simulating(processor);
    let ctl = machine
        .resolve("C3_MSR_PMON_EVT_SEL0", &Where::default())
        .unwrap();
    machine.write(&ctl, 0x40_0001).unwrap();
    let (_, writes) = machine.access_counts();
    let backend = SessionBackend::Registers(&machine);
    match Session::open(&backend, &selection, Options::default()) {
        Err(Error::Sampling(SamplingError::Enabled {
            register, value, ..
        })) => {
            assert_eq!((register, value), ("C3_MSR_PMON_EVT_SEL0", 0x40_0001));
        }
        other => panic!(
            "expected C3's enabled control refused, got {:?}",
            other.err()
        ),
    }
    assert_eq!(
        machine.access_counts().1,
        writes,
        "every box is checked before the first is programmed: C0 was never written"
    );

    // Taking over, both are programmed, and C3's control is put back at the end.
    let machine = machine.taking_over(true);
    let backend = SessionBackend::Registers(&machine);
    let session = Session::open(&backend, &selection, Options::default()).unwrap();
    assert_eq!(session.series().len(), 2);
    assert_eq!(
        machine.read(&ctl).unwrap() & 0xff,
        0x02,
        "C3 counts event 2"
    );
    session.close().unwrap();
    assert_eq!(
        machine.read(&ctl).unwrap(),
        0x40_0001,
        "put back at the end"
    );
}

#[test]
fn a_write_to_a_box_a_session_holds_is_refused_naming_the_session() {
    let root = two_sockets();
    let r = root.path().to_str().unwrap();
    let msr = root.path().join("dev/cpu/0/msr");
    let mut child = std::process::Command::cargo_bin("pmu")
        .unwrap()
        .args([
            "watch",
            "--root",
            r,
            "--unit",
            "W",
            "--event",
            "ev_sel=0x05",
        ])
        .args(["--interval", "0.05"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The header is printed once everything is programmed (and the socket claimed).
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    stdout.read_exact(&mut first).unwrap();

    let (code, _, err) = run(&["write", "C0_MSR_PMON_EVT_SEL0", "0x1", "--root", r]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("the xeon-7500 uncore of socket 0 is in use by")
            && err.contains(&format!("process {}", child.id()))
            && err.contains("watch --root"),
        "{err}"
    );
    assert_eq!(peek(&msr, 0xD10), 0, "nothing written");
    // Another box of the socket's uncore (one global control governs them all), a field
    // write, the global control: refused too. (0xD10: far enough from the W-box's MSRs that
    // the file's bytes do not overlap.)
    let (code, _, _) = run(&["write", "C0_MSR_PMON_EVT_SEL0", "en=1", "--root", r]);
    assert_eq!(code, 1);
    let (code, _, _) = run(&[
        "write",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "0x0",
        "--root",
        r,
    ]);
    assert_eq!(code, 1);
    // A dry run writes nothing, so it is answered; another PMU (socket 1, a core) is free.
    let (code, _, err) = run(&[
        "write",
        "C0_MSR_PMON_EVT_SEL0",
        "0x1",
        "--dry-run",
        "--root",
        r,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&[
        "write",
        "C0_MSR_PMON_EVT_SEL0",
        "0x1",
        "--socket",
        "1",
        "--root",
        r,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&["write", "IA32_PERFEVTSEL0", "0x3c", "--root", r]);
    assert_eq!(code, 0, "{err}");

    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdout);
    assert_eq!(out.status.code(), Some(0));
    let (code, _, err) = run(&["write", "C0_MSR_PMON_EVT_SEL0", "0x1", "--root", r]);
    assert_eq!(code, 0, "free again once the session ended: {err}");
    assert_eq!(peek(&msr, 0xD10), 1);
}

#[test]
fn lock_files_are_never_opened_through_a_link() {
    let root = two_sockets();
    let r = root.path().to_str().unwrap();
    let msr = root.path().join("dev/cpu/0/msr");
    let locks = root.path().join("run/pmu-regs");
    fs::create_dir_all(&locks).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    fs::write(&victim, "precious\n").unwrap();
    let lock = locks.join("uncore-xeon-7500-socket0.lock");
    std::os::unix::fs::symlink(&victim, &lock).unwrap();
    let before = fs::read(&msr).unwrap();

    let (code, _, err) = watch_w(root.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("is a symbolic link") && err.contains("rm "),
        "{err}"
    );
    let (code, _, err) = run(&["write", "W_MSR_PMON_EVT_SEL0", "0x1", "--root", r]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(fs::read(&msr).unwrap(), before, "nothing was written");

    // A hard link to another file is refused too.
    fs::remove_file(&lock).unwrap();
    fs::hard_link(&victim, &lock).unwrap();
    let (code, _, err) = watch_w(root.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not a plain file with one name"), "{err}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");

    fs::remove_file(&lock).unwrap();
    let (code, _, err) = watch_w(root.path(), &[]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_lock_directory_other_users_can_write_is_refused() {
    let root = two_sockets();
    let locks = root.path().join("run/pmu-regs");
    fs::create_dir_all(&locks).unwrap();
    let chmod = |mode| fs::set_permissions(&locks, fs::Permissions::from_mode(mode)).unwrap();
    chmod(0o777);
    let (code, _, err) = watch_w(root.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("can be written by every user (mode 777)") && err.contains("chmod 755"),
        "{err}"
    );
    // Through the library, as PMU_RUNTIME_DIR would name it.
    let pmu = Pmu::Core { cpu: 0 };
    match LockDir::new(&locks).claim(&pmu) {
        Err(Error::Sampling(SamplingError::UnsafeLock { .. })) => {}
        other => panic!("expected an unsafe lock directory, got {other:?}"),
    }
    assert_eq!(
        fs::read_dir(&locks).unwrap().count(),
        0,
        "no file made there"
    );
    // With the sticky bit (as /tmp has) others cannot replace our files, but they can plant
    // a lock file under a name we have not used yet: refused too (issue 41).
    chmod(0o1777);
    let (code, _, err) = watch_w(root.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("mode 1777"), "{err}");
    chmod(0o755);
    let (code, _, err) = watch_w(root.path(), &[]);
    assert_eq!(code, 0, "{err}");
    // Owned by another user: refused (only root can give a directory away to test it).
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&locks, Some(65534), None).unwrap();
        let (code, _, err) = watch_w(root.path(), &[]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("belongs to another user (uid 65534)"), "{err}");
    }
}

#[test]
fn a_socket_or_cpu_the_machine_lacks_is_refused_naming_those_it_has() {
    let root = two_sockets();
    let r = root.path().to_str().unwrap();
    let msr = root.path().join("dev/cpu/0/msr");
    let before = fs::read(&msr).unwrap();
    let has = "available: socket 0 (CPU 0), socket 1 (CPU 1)";
    let (code, _, err) = watch_w(root.path(), &["--socket", "3"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("there is no socket 3; {has}")),
        "{err}"
    );
    let (code, _, err) = watch_w(root.path(), &["--cpu", "7"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("there is no CPU 7; {has}")), "{err}");
    assert_eq!(fs::read(&msr).unwrap(), before, "nothing was written");
    // Through perf, a PMU without a cpumask (msr) was counted on CPU 0 and labelled socket 3.
    let perf = ["watch", "--root", r, "--backend", "perf", "--pmu", "msr"];
    let perf = [
        &perf[..],
        &["--event", "tsc", "--count", "1", "--interval", "0.01"],
    ]
    .concat();
    let (code, _, err) = run(&[&perf[..], &["--socket", "3"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("there is no socket 3; {has}")),
        "{err}"
    );
    let (code, _, err) = run(&[&perf[..], &["--cpu", "7"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("there is no CPU 7; {has}")), "{err}");
    // `read` and `write` the same way (they were "no such file" errors, exit 1).
    let (code, _, err) = run(&["read", "IA32_PMC0", "--cpu", "7", "--root", r]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("there is no CPU 7; {has}")), "{err}");
    let (code, _, err) = run(&["write", "IA32_PMC0", "0x1", "--socket", "3", "--root", r]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("there is no socket 3; {has}")),
        "{err}"
    );
    // The simulator's machine too.
    let sim = [
        "watch",
        "--sim",
        "--unit",
        "xeon-7500:C3",
        "--event",
        "ev_sel=1",
    ];
    let (code, _, err) = run(&[&sim[..], &["--count", "1", "--socket", "9"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("there is no socket 9; available: socket 0"),
        "{err}"
    );
}

#[test]
fn the_same_mistake_gets_the_same_exit_status() {
    let root = two_sockets();
    let r = root.path().to_str().unwrap();
    let info = pmu_runtime::lookup::find("W_MSR_PMON_EVT_SEL1")
        .unwrap()
        .info;
    let reserved = info
        .fields
        .iter()
        .find(|f| f.is_placeholder() && f.access == pmu_regs::Access::Rsv)
        .unwrap();
    let whole = format!("{:#x}", 1u64 << reserved.lsb);
    let field = format!("{}=1", reserved.name);
    for (what, value) in [
        ("a reserved bit as a whole value", whole.as_str()),
        ("a reserved field", field.as_str()),
        ("a field too wide", "umask=0x100"),
    ] {
        let (code, _, err) = run(&["write", "W_MSR_PMON_EVT_SEL1", value, "--root", r]);
        assert_eq!(code, 2, "{what}: {err}");
    }
    let (code, _, err) = run(&[
        "write",
        "xeon-7500:U_MSR_PMON_GLOBAL_CTL",
        "0x100000000",
        "--sim",
    ]);
    assert_eq!(code, 2, "a whole value too wide: {err}");
    assert_eq!(peek(&root.path().join("dev/cpu/0/msr"), 0xC92), 0);
}

#[test]
fn write_says_when_the_register_reads_back_differently() {
    let root = two_sockets();
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&[
        "write",
        "W_MSR_PMON_EVT_SEL0",
        "0x400005",
        "--root",
        r,
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["read_back"], 0x40_0005);
    assert_eq!(json["read_back_differs"], false);
    // A device that keeps nothing: every write reads back as zero.
    let msr = root.path().join("dev/cpu/0/msr");
    fs::remove_file(&msr).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &msr).unwrap();
    let (code, _, err) = run(&["write", "W_MSR_PMON_EVT_SEL0", "0x400005", "--root", r]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "warning: read 0x0000000000000000 back after writing 0x0000000000400005: bits \
             0x400005 (en, ev_sel) did not take"
        ),
        "{err}"
    );
}

/// CSV rows of `pmu watch ... -x,` as column name -> value maps.
fn csv_rows(out: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            let cols = l.split(',').map(str::to_string);
            header.iter().map(|h| h.to_string()).zip(cols).collect()
        })
        .collect()
}

#[test]
fn all_counts_a_per_cpu_pmu_on_every_cpu_summed_per_socket_and_per_cpu_with_no_aggr() {
    // The simulator: two sockets of two CPUs each.
    let core = ["watch", "--sim", "--unit", "CORE", "--event", "ev_sel=0x3c"];
    let core = [
        &core[..],
        &["-a", "--count", "1", "--interval", "0.01", "-x,"],
    ]
    .concat();
    let (code, out, err) = run(&core);
    assert_eq!(code, 0, "{err}");
    let summed = csv_rows(&out);
    assert!(!summed[0].contains_key("cpu"), "{out}");
    assert_eq!(summed.len(), 2, "a row per socket: {out}");
    let (code, out, err) = run(&[&core[..], &["-A"]].concat());
    assert_eq!(code, 0, "{err}");
    let per_cpu = csv_rows(&out);
    let cpus: Vec<&str> = per_cpu.iter().map(|r| r["cpu"].as_str()).collect();
    assert_eq!(cpus, ["0", "1", "2", "3"], "a row per CPU: {out}");
    for row in &summed {
        let of_socket: u64 = per_cpu
            .iter()
            .filter(|r| r["socket"] == row["socket"])
            .map(|r| r["count"].parse::<u64>().unwrap())
            .sum();
        assert_eq!(row["count"].parse::<u64>().unwrap(), of_socket, "{row:?}");
        assert!(of_socket > 0);
    }
    // -A has no CPU label in an exposition.
    let (code, _, err) = run(&[&core[..], &["-A", "--format", "openmetrics"]].concat());
    assert_eq!(code, 2, "{err}");
}

#[test]
fn all_counts_the_msr_pmu_on_every_cpu_through_perf_for_real() {
    let topology = pmu_runtime::topology::Topology::system().unwrap();
    let msr = [
        "watch",
        "--backend",
        "perf",
        "--pmu",
        "msr",
        "--event",
        "tsc",
        "-a",
    ];
    let msr = [&msr[..], &["--count", "1", "--interval", "0.05", "--json"]].concat();
    let (code, out, err) = run(&[&msr[..], &["-A"]].concat());
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let cpus: Vec<u64> = rows.iter().map(|c| c["cpu"].as_u64().unwrap()).collect();
    let online: Vec<u64> = topology.cpus().iter().map(|&(c, _)| c.into()).collect();
    assert_eq!(cpus, online, "every online CPU: {out}");
    let (code, out, err) = run(&msr);
    assert_eq!(code, 0, "{err}");
    let counts: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        counts.len(),
        topology.sockets().count(),
        "summed per socket: {out}"
    );
    assert!(
        counts.iter().all(|c| c["cpu"].is_null()),
        "a sum names no CPU: {out}"
    );
}

#[test]
fn a_perf_row_is_counted_and_labelled_on_the_socket_asked_for() {
    // This machine's msr PMU, in a tree whose topology puts CPU 1 on socket 1.
    let root = two_sockets();
    let real = Path::new("/sys/bus/event_source/devices/msr");
    let copy = root.path().join("sys/bus/event_source/devices/msr");
    for file in ["type", "format/event", "events/tsc"] {
        fs::create_dir_all(copy.join(file).parent().unwrap()).unwrap();
        fs::copy(real.join(file), copy.join(file)).unwrap();
    }
    let r = root.path().to_str().unwrap();
    let msr = [
        "watch",
        "--root",
        r,
        "--backend",
        "perf",
        "--pmu",
        "msr",
        "--event",
        "tsc",
    ];
    let msr = [&msr[..], &["--count", "1", "--interval", "0.01", "--json"]].concat();
    let (code, out, err) = run(&[&msr[..], &["--cpu", "1"]].concat());
    assert_eq!(code, 0, "{err}");
    let line: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["cpu"], 1, "{out}");
    assert_eq!(line["socket"], 1, "CPU 1's socket, not 0: {out}");
}

#[test]
fn a_write_to_a_pci_box_a_session_holds_is_refused_however_the_device_is_named() {
    let root = two_sockets();
    add_ha(root.path());
    let ha = root.path().join("sys/bus/pci/devices/0000:3f:0e.1");
    // This test holds the HA box of socket 0, as a session would.
    let held = LockDir::new(root.path().join("run/pmu-regs"))
        .claim(&Pmu::Box {
            processor: "xeon-e5-2600",
            socket: 0,
            instance: "HA",
        })
        .unwrap();
    let r = root.path().to_str().unwrap();
    let write = ["write", "HA_PCI_PMON_CTL1", "0x1", "--root", r];
    for place in [&[][..], &["--socket", "0"], &["--device", "0000:3f:0e.1"]] {
        let (code, _, err) = run(&[&write[..], place].concat());
        assert_eq!(code, 1, "{place:?}: {err}");
        assert!(
            err.contains("the xeon-e5-2600 box HA of socket 0 is in use by")
                && err.contains(&format!("process {}", std::process::id())),
            "{place:?}: {err}"
        );
    }
    assert_eq!(
        peek(&ha.join("config"), 0xDC) & 0xffff_ffff,
        0,
        "nothing written"
    );
    drop(held);
    let (code, _, err) = run(&write);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn serve_refuses_an_enabled_control_and_takes_it_with_force() {
    use std::io::{BufRead, BufReader};
    let root = two_sockets();
    let msr = root.path().join("dev/cpu/0/msr");
    poke(&msr, 0xC90, 0x40_0005);
    let before = fs::read(&msr).unwrap();
    let r = root.path().to_str().unwrap();
    let serve = [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--root",
        r,
        "--unit",
        "xeon-7500:W",
    ];
    let serve = [
        &serve[..],
        &["--event", "ev_sel=0x06", "--interval", "0.05"],
    ]
    .concat();
    let (code, _, err) = run(&serve);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("W_MSR_PMON_EVT_SEL0 is already enabled (0x400005)"),
        "{err}"
    );
    assert_eq!(fs::read(&msr).unwrap(), before, "nothing was written");

    let mut child = std::process::Command::cargo_bin("pmu")
        .unwrap()
        .args([&serve[..], &["--force"]].concat())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening on") {
        line.clear();
        assert_ne!(stderr.read_line(&mut line).unwrap(), 0, "serve ended early");
    }
    assert_ne!(
        peek(&msr, 0xC90),
        0x40_0005,
        "taken over: counting event 6 for serve"
    );
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(fs::read(&msr).unwrap(), before, "put back at exit");
}
