//! `pmu serve`'s `--config` size bound and `--processor`. Loopback only.

#[path = "support/serve.rs"]
#[allow(dead_code)] // Not every helper is used here.
mod support;

use std::time::Duration;

fn pmu() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("pmu").expect("the pmu binary is built");
    // A config read without bound would never end on /dev/zero: fail instead of hanging.
    cmd.timeout(Duration::from_secs(60));
    cmd
}

#[test]
fn a_config_file_beyond_1_mib_is_refused_not_read_to_its_end() {
    let out = pmu()
        .args([
            "serve",
            "--sim",
            "--listen",
            "127.0.0.1:0",
            "--config",
            "/dev/zero",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("/dev/zero") && stderr.contains("larger than 1024 KiB"),
        "{stderr}"
    );
    // Just under the bound is read (and judged on its lines).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("counters.conf");
    let mut text = "# comment\n".repeat(100_000);
    text.push_str("xeon-e5-2600:IMC0 event=UNC_M_CAS_COUNT.RD\n");
    assert!(text.len() < 1 << 20);
    std::fs::write(&file, text).unwrap();
    let served = support::start(&["--sim", "--config", &file.display().to_string()]);
    let (status, body) = support::get(served.addr, "/metrics");
    assert_eq!(status, 200);
    assert!(body.contains("UNC_M_CAS_COUNT.RD"), "{body}");
}

#[test]
fn processor_settles_a_box_name_several_processors_share() {
    let args = [
        "serve",
        "--sim",
        "--listen",
        "127.0.0.1:0",
        "--unit",
        "IMC0",
    ];
    let event = ["--event", "event=UNC_M_CAS_COUNT.RD"];
    let out = pmu().args(args).args(event).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("several processors have it"));

    let served = support::start(&[
        "--sim",
        "--processor",
        "xeon-e5-2600-v3",
        "--unit",
        "IMC0",
        "--event",
        "event=UNC_M_CAS_COUNT.RD",
    ]);
    let (status, body) = support::get(served.addr, "/metrics");
    assert_eq!(status, 200);
    assert!(body.contains("processor=\"xeon-e5-2600-v3\""), "{body}");

    let out = pmu()
        .args(args)
        .args(event)
        .args(["--processor", "xeon-9999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("there is no processor xeon-9999"),
        "{stderr}"
    );
}
