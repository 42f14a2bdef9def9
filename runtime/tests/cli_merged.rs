//! What a newcomer's trial of the merged tool found (issues 11, 13, 14, 15, 16 together), each
//! through the command line: boxes of another processor, detection of every processor the
//! spec identifies, --cpu's socket, --sim with perf, one box under two names, and serve's
//! configuration errors.

use std::fs;
use std::path::Path;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::{poke, run, two_sockets};

/// A machine tree with two CPUs (one per socket) and this /proc/cpuinfo.
fn machine(cpuinfo: &str) -> tempfile::TempDir {
    let root = two_sockets();
    fs::create_dir_all(root.path().join("proc")).unwrap();
    fs::write(root.path().join("proc/cpuinfo"), cpuinfo).unwrap();
    root
}

fn intel(model: u32) -> String {
    format!(
        "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: {model}\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu arch_perfmon\n\n"
    )
}

fn msr_bytes(root: &Path) -> Vec<u8> {
    fs::read(root.join("dev/cpu/0/msr")).unwrap()
}

#[test]
fn watch_refuses_boxes_of_another_processor_and_touches_nothing() {
    let amd = machine("vendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 49\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n\n");
    let r = amd.path().to_str().unwrap();
    let before = msr_bytes(amd.path());
    let (code, _, err) = run(&[
        "watch",
        "--root",
        r,
        "--unit",
        "CORE",
        "--event",
        "ev_sel=0x3c",
        "--count",
        "1",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("AuthenticAMD") && err.contains("--sim"),
        "{err}"
    );
    // A Sandy Bridge-EP machine has no Xeon 7500 W-box.
    let snb = machine(&intel(45));
    let r = snb.path().to_str().unwrap();
    let (code, _, err) = run(&[
        "watch",
        "--root",
        r,
        "--unit",
        "xeon-7500:W",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("xeon-7500:W is a xeon-7500 box") && err.contains("xeon-e5-2600"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "serve",
        "--root",
        r,
        "--unit",
        "xeon-7500:W",
        "--event",
        "ev_sel=1",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(msr_bytes(amd.path()), before);
    assert_eq!(msr_bytes(snb.path()), before);
}

#[test]
fn detect_names_every_processor_the_spec_identifies() {
    for (model, spec) in [
        (0x2E, "xeon-7500"),
        (0x2D, "xeon-e5-2600"),
        (0x3E, "xeon-e5-2600-v2"),
        (0x3F, "xeon-e5-2600-v3"),
        (0x4F, "xeon-e5-2600-v4"),
    ] {
        let m = machine(&intel(model));
        let (code, out, err) = run(&["detect", "--root", m.path().to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains(&format!("specs: {spec} (")),
            "{model:#x}: {out}"
        );
    }
}

#[test]
fn cpu_picks_the_socket_a_box_is_labelled_and_claimed_on() {
    let (code, out, err) = run(&[
        "watch",
        "--sim",
        "--cpu",
        "3",
        "--unit",
        "xeon-7500:W",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
        "--interval",
        "0.01",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let (_, socket1, _) = run(&[
        "watch",
        "--sim",
        "--socket",
        "1",
        "--unit",
        "xeon-7500:W",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
        "--interval",
        "0.01",
        "--json",
    ]);
    let w: serde_json::Value = serde_json::from_str(socket1.lines().next().unwrap()).unwrap();
    assert_eq!(v["socket"], w["socket"], "{out} vs {socket1}");
    assert_eq!(v["socket"], 1, "{out}");
}

#[test]
fn the_simulator_is_not_counted_through_perf() {
    let (code, _, err) = run(&[
        "watch", "--sim", "--pmu", "msr", "--event", "tsc", "--count", "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--sim does not simulate"), "{err}");
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--backend",
        "perf",
        "--unit",
        "xeon-e5-2600:HA",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("drop --backend perf"), "{err}");
}

#[test]
fn auto_counts_raw_a_box_the_spec_names_no_kernel_pmu_for() {
    let m = machine(&intel(0x3F));
    let r = m.path().to_str().unwrap();
    let (code, out, err) = run(&[
        "watch",
        "--root",
        r,
        "--unit",
        "CBO0",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
        "--interval",
        "0.01",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"backend\":\"raw\""), "{out}");
}

#[test]
fn one_box_under_two_names_is_refused() {
    let (code, _, err) = run(&[
        "watch",
        "--sim",
        "--unit",
        "xeon-e5-2600:IMC0",
        "--unit",
        "xeon-e5-2600:CH0",
        "--event",
        "ev_sel=1",
        "--count",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("names already"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("pmu.conf");
    fs::write(
        &conf,
        "xeon-e5-2600:IMC0 ev_sel=1\nxeon-e5-2600:CH0 ev_sel=2\n",
    )
    .unwrap();
    let (code, _, err) = run(&[
        "serve",
        "--sim",
        "--config",
        conf.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("selected twice"), "{err}");
}

#[test]
fn serve_config_errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("pmu.conf");
    fs::write(
        &conf,
        "# bandwidth\nxeon-e5-2600:IMC0 event=UNC_M_CAS_COUNT.RDX\n",
    )
    .unwrap();
    let (code, _, err) = run(&[
        "serve",
        "--sim",
        "--config",
        conf.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{}:2: ", conf.display())) && err.contains("UNC_M_CAS_COUNT.RD"),
        "{err}"
    );
}

/// `pmu detect` reads how many boxes the part has where the spec says how: a Skylake-SP's
/// CHAs from CAPID6 of its PCU device (device 0x2083, offset 0x9C), socket by socket.
#[test]
fn detect_reads_the_box_counts_of_the_part() {
    let m = machine(&intel(0x55).replace("flags", "stepping\t: 4\nflags"));
    for (bus, capid6) in [("3f", 0x3_ffffu64), ("7f", 0xf_ffff)] {
        let dev = m
            .path()
            .join(format!("sys/bus/pci/devices/0000:{bus}:1e.3"));
        fs::create_dir_all(&dev).unwrap();
        fs::write(dev.join("vendor"), "0x8086\n").unwrap();
        fs::write(dev.join("device"), "0x2083\n").unwrap();
        fs::File::create(dev.join("config"))
            .unwrap()
            .set_len(4096)
            .unwrap();
        poke(&dev.join("config"), 0x9c, capid6);
    }
    // Which socket owns each bus: the U-box (8086:2014 at 8.0) of bus 0x3f has node 0, that
    // of bus 0x7f node 1, and the node map gives package n node n.
    for (bus, node) in [("3f", 0u64), ("7f", 1)] {
        let dev = m
            .path()
            .join(format!("sys/bus/pci/devices/0000:{bus}:08.0"));
        fs::create_dir_all(&dev).unwrap();
        fs::write(dev.join("vendor"), "0x8086\n").unwrap();
        fs::write(dev.join("device"), "0x2014\n").unwrap();
        fs::File::create(dev.join("config"))
            .unwrap()
            .set_len(4096)
            .unwrap();
        poke(&dev.join("config"), 0xc0, node);
        poke(&dev.join("config"), 0xd4, 1 << 3);
    }
    let (code, out, err) = run(&["detect", "--root", m.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("specs: skylake-sp ("), "{out}");
    assert!(
        out.contains(
            "CHA boxes, socket 0: 18 of 28 listed (CHA0 to CHA17; CAPID6.cha_en = 0x3ffff"
        ),
        "{out}"
    );
    assert!(
        out.contains("CHA boxes, socket 1: 20 of 28 listed (CHA0 to CHA19;"),
        "{out}"
    );
}
