//! What a local user can name or plant for `pmu` (issue 41): a discovery table that never
//! ends, is huge or never comes; configuration files that are FIFOs; password hashes that
//! could never be checked, or only for hours; lock directories others can write; a planted
//! lock file. Each ends with a clear error, having read no more than its bound, and nothing a
//! lock file holds reaches the terminal but a bounded, escaped line. Loopback and temporary
//! files only; every wait is bounded.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use pmu_runtime::ownership::{LockDir, Ownership, Pmu};
use pmu_runtime::{Error, SamplingError};
use rustix::fs::{FileType, Mode, OFlags};

#[path = "support/fake_machine.rs"]
mod fake_machine;

/// `pmu ARGS`, killed if it has not ended in 60 s: (exit code, stdout, stderr, time taken).
fn pmu(args: &[&str]) -> (i32, String, String, Duration) {
    let since = Instant::now();
    let out = Command::cargo_bin("pmu")
        .unwrap()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        since.elapsed(),
    )
}

fn fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let mode = Mode::from_raw_mode(0o600);
    rustix::fs::mknodat(rustix::fs::CWD, &path, FileType::Fifo, mode, 0).unwrap();
    path
}

fn discover(table: &Path) -> (i32, String, String, Duration) {
    let table = table.to_str().unwrap();
    pmu(&[
        "discover",
        "--table",
        table,
        "--processor",
        "sapphire-rapids",
    ])
}

#[test]
fn a_table_from_dev_zero_or_a_huge_sparse_file_is_refused_by_its_global_state() {
    let (code, _, err, took) = discover(Path::new("/dev/zero"));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("has an empty global state"), "{err}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.bin");
    fs::File::create(&huge).unwrap().set_len(1 << 30).unwrap();
    let (code, _, err, _) = discover(&huge);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("has an empty global state"), "{err}");
}

#[test]
fn a_table_fifo_no_one_writes_ends_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = fifo(dir.path(), "table");
    let (code, _, err, took) = discover(&path);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("cannot read the table dump")
            && err.contains("delivered 0 bytes and then nothing for 5 s"),
        "{err}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
}

/// A global state declaring 80 entries 24 bytes apart: 1,944 bytes of table in all.
fn global_state() -> (Vec<u8>, usize) {
    let (units, stride_qwords) = (80u64, 3u64);
    let mut bytes = Vec::new();
    bytes.extend(((units << 16) | (stride_qwords << 8) | 1).to_le_bytes());
    bytes.extend(0x2ff0u64.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    (bytes, ((1 + units) * stride_qwords * 8) as usize)
}

#[test]
fn only_the_declared_table_is_read_of_a_pipe_that_never_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = fifo(dir.path(), "endless");
    let table = path.to_str().unwrap().to_string();
    let child = std::thread::spawn(move || {
        pmu(&[
            "discover",
            "--table",
            &table,
            "--processor",
            "sapphire-rapids",
        ])
    });
    // Open the writing end once `pmu` has opened the reading end (ENXIO until then), shrink
    // the pipe to one page, and write for as long as `pmu` reads: it must stop at the table.
    let deadline = Instant::now() + Duration::from_secs(30);
    let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = loop {
        match rustix::fs::open(&path, flags, Mode::empty()) {
            Ok(fd) => break fd,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("pmu never opened the FIFO: {e}"),
        }
    };
    let page = rustix::pipe::fcntl_setpipe_size(&fd, 4096).unwrap();
    rustix::fs::fcntl_setfl(&fd, OFlags::empty()).unwrap();
    let mut writer = fs::File::from(fd);
    let (head, declared) = global_state();
    writer.write_all(&head).unwrap();
    let mut written = head.len();
    let zeros = [0u8; 512];
    while Instant::now() < deadline {
        match writer.write(&zeros) {
            Ok(n) => written += n,
            Err(_) => break, // EPIPE: pmu closed its end.
        }
    }
    let (code, out, err, _) = child.join().unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("missing"), "{out}");
    assert!(
        written <= declared + page + zeros.len(),
        "{written} bytes taken for a {declared}-byte table (pipe of {page})"
    );
}

#[test]
fn a_config_or_web_config_fifo_no_one_writes_ends_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = fifo(dir.path(), "config");
    let sim = ["serve", "--sim", "--listen", "127.0.0.1:0"];
    for flag in ["--config", "--web.config.file"] {
        let mut args = sim.to_vec();
        args.extend([flag, path.to_str().unwrap()]);
        if flag == "--web.config.file" {
            args.extend([
                "--unit",
                "xeon-e5-2600:IMC0",
                "--event",
                "event=UNC_M_CAS_COUNT.RD",
            ]);
        }
        let (code, _, err, took) = pmu(&args);
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(
            err.contains("nothing came from it for 5 s"),
            "{flag}: {err}"
        );
        assert!(took < Duration::from_secs(30), "{took:?}");
    }
}

#[test]
fn password_hashes_that_cannot_be_checked_in_bounded_time_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let good = bcrypt::hash("pw", 4).unwrap();
    let salt_end = 7 + 21;
    let mut bad_salt = good.clone();
    bad_salt.replace_range(salt_end..salt_end + 1, "!");
    let cost = |c: &str| good.replacen("$04$", &format!("${c}$"), 1);
    for (hash, says) in [
        (cost("03"), "cost \"03\" is not from 4 to 14"),
        (cost("99"), "cost \"99\" is not from 4 to 14"),
        (cost("31"), "cost \"31\" is not from 4 to 14"),
        (bad_salt, "bcrypt's alphabet"),
    ] {
        let web = dir.path().join("web.yml");
        fs::write(&web, format!("basic_auth_users:\n  prometheus: '{hash}'\n")).unwrap();
        let (code, _, err, took) = pmu(&[
            "serve",
            "--sim",
            "--listen",
            "127.0.0.1:0",
            "--unit",
            "xeon-e5-2600:IMC0",
            "--event",
            "event=UNC_M_CAS_COUNT.RD",
            "--web.config.file",
            web.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{hash}: {err}");
        assert!(
            err.contains("user \"prometheus\"") && err.contains(says),
            "{hash}: {err}"
        );
        assert!(!err.contains("listening on"), "{err}");
        assert!(took < Duration::from_secs(30), "{took:?}");
    }
}

#[test]
fn lock_directories_others_can_write_or_relative_ones_are_refused() {
    let pmu = Pmu::Core { cpu: 0 };
    let refused = |dir: &Path| match LockDir::new(dir).claim(&pmu) {
        Err(Error::Sampling(SamplingError::UnsafeLock { problem, .. })) => problem,
        other => panic!("{}: expected a refusal, got {other:?}", dir.display()),
    };
    let relative = Path::new("pmu-abuse-relative-locks");
    assert!(refused(relative).contains("is a relative path"));
    assert!(!relative.exists(), "nothing made there");

    let root = tempfile::tempdir().unwrap();
    let locks = root.path().join("locks");
    fs::create_dir(&locks).unwrap();
    let chmod = |mode| fs::set_permissions(&locks, fs::Permissions::from_mode(mode)).unwrap();
    for mode in [0o777, 0o1777, 0o1773] {
        chmod(mode);
        let problem = refused(&locks);
        assert!(
            problem.contains("can be written by every user") && problem.contains("chmod 755"),
            "{mode:o}: {problem}"
        );
        assert_eq!(fs::read_dir(&locks).unwrap().count(), 0, "no file made");
    }
    // Writable by the owner's own group: the owner's.
    chmod(0o770);
    drop(LockDir::new(&locks).claim(&pmu).expect("the owner's group"));
    // Writable by another group: refused (only root can give a directory to any group).
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&locks, None, Some(65534)).unwrap();
        let problem = refused(&locks);
        assert!(
            problem.contains("can be written by group 65534"),
            "{problem}"
        );
        chmod(0o750);
        drop(
            LockDir::new(&locks)
                .claim(&pmu)
                .expect("not group-writable"),
        );
    }
}

#[test]
fn a_planted_lock_file_prints_no_more_than_a_bounded_escaped_line() {
    let root = fake_machine::two_sockets();
    let locks = root.path().join("run/pmu-regs");
    fs::create_dir_all(&locks).unwrap();
    let lock = locks.join("uncore-xeon-7500-socket0.lock");
    // It claims a process that exists (PID 1), with a command line PID 1 does not run,
    // terminal escapes, and 2 MB more.
    let mut planted = b"process 1 (systemd \x1b[2J\x1b]0;owned\x07 --pretend)".to_vec();
    planted.extend(std::iter::repeat_n(b'A', 2 << 20));
    fs::write(&lock, &planted).unwrap();
    let held = fs::File::open(&lock).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();

    let r = root.path().to_str().unwrap();
    let (code, out, err, _) = pmu(&[
        "watch",
        "--root",
        r,
        "--unit",
        "W",
        "--event",
        "ev_sel=0x05",
        "--count",
        "1",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("is in use by an unconfirmed holder") && err.contains("\\u{1b}[2J"),
        "{err}"
    );
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    assert!(err.len() < 2048, "{} bytes of stderr", err.len());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.is_empty(), "{out}");
}

#[test]
fn after_a_crash_the_refusal_lists_every_enabled_control_naming_the_socket() {
    use pmu_runtime::boxes::Boxes;
    use pmu_runtime::counters::Counting;
    use pmu_runtime::machine::{Machine, Where};
    use pmu_runtime::sampling::uncore::EventSelect;
    use pmu_runtime::sim::SimConfig;

    // A session killed with SIGKILL left C3's first two controls enabled, on socket 1.
    let processor = &pmu_regs::xeon_7500::PROCESSOR;
    let boxes = Boxes::of(processor);
    let machine = Machine::simulated(SimConfig::of(processor));
    let on_socket_1 = Where {
        socket: Some(1),
        ..Where::default()
    };
    let mut left = Vec::new();
    for (name, value) in [
        ("C3_MSR_PMON_EVT_SEL0", 0x40_0005),
        ("C3_MSR_PMON_EVT_SEL1", 0x40_0006),
    ] {
        let ctl = machine.resolve(name, &on_socket_1).unwrap();
        machine.write(&ctl, value).unwrap();
        left.push((ctl, value));
    }
    let c3 = boxes.find("C3").unwrap();
    let cpu = machine.cpu_for_socket(1).unwrap();
    let mut counting = Counting::open(&machine, boxes, c3, cpu, 1, None).unwrap();
    let err = counting
        .program(&[EventSelect::event(0x05), EventSelect::event(0x06)])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("C3_MSR_PMON_EVT_SEL0 is already enabled (0x400005)")
            && err.contains("C3_MSR_PMON_EVT_SEL1 is already enabled (0x400006)")
            && err.contains("on the xeon-7500 uncore of socket 1")
            && err.contains("`pmu write C3_MSR_PMON_EVT_SEL1 0`")
            && err.contains("--force"),
        "{err}"
    );
    counting.close().unwrap();
    for (ctl, value) in left {
        assert_eq!(machine.read(&ctl).unwrap(), value, "nothing was written");
    }
}

#[test]
fn a_table_or_device_declaring_more_than_any_part_has_is_refused() {
    use pmu_runtime::discovery::{
        locate, read_table, DiscoveryError, MemoryTable, MAX_ENTRIES, MAX_TABLES_PER_DEVICE,
    };
    use pmu_runtime::Bdf;
    let device = Bdf::new(0x7e, 0, 1);
    // 600 entries 24 bytes apart: within the size bound (14 KiB), beyond the entries'.
    let mut bytes = ((600u64 << 16) | (3 << 8) | 1).to_le_bytes().to_vec();
    bytes.extend(0x2ff0u64.to_le_bytes());
    bytes.resize(601 * 24, 0);
    let t = MemoryTable::from_bytes(0, device, bytes);
    match read_table(&t, 0) {
        Err(DiscoveryError::TooManyEntries {
            entries: 600,
            limit,
        }) => {
            assert_eq!(limit, MAX_ENTRIES)
        }
        other => panic!("expected too many entries, got {other:?}"),
    }
    // The discovery capability repeated down the extended capability list, each pointing at
    // the next: a table for each would be read.
    let mut t = MemoryTable::from_bytes(0xFE00_0000, device, vec![0; 64]);
    let capability: Vec<u32> = t.config[0x100 / 4..0x110 / 4].to_vec();
    for k in 1..8usize {
        for (i, dword) in capability.iter().enumerate() {
            t.set_dword(0x100 * k + 4 * i, *dword);
        }
        let header = capability[0] & 0xF_FFFF;
        let next = if k < 7 { 0x100 * (k as u32 + 1) } else { 0 };
        t.set_dword(0x100 * k, header | (next << 20));
    }
    match locate(&t, device) {
        Err(DiscoveryError::TooManyTables { limit, .. }) => {
            assert_eq!(limit, MAX_TABLES_PER_DEVICE)
        }
        other => panic!("expected too many capabilities, got {other:?}"),
    }
}

#[test]
fn a_device_tree_whose_files_never_end_is_read_to_a_bound() {
    // Under --root, the PCI tree is whatever the user's tree holds: a `vendor` that is
    // /dev/zero is read to a bound and does not match, so the device is not a discovery one.
    let root = tempfile::tempdir().unwrap();
    let dev = root.path().join("0000:7e:00.1");
    fs::create_dir_all(&dev).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dev.join("vendor")).unwrap();
    fs::write(dev.join("device"), "0x09a7\n").unwrap();
    let since = Instant::now();
    let found = pmu_runtime::discovery::find_in_sysfs(
        root.path(),
        &pmu_runtime::pci::PciSysfs::with_root(root.path()),
    );
    assert!(found.is_empty(), "{found:?}");
    assert!(since.elapsed() < Duration::from_secs(5));
}
