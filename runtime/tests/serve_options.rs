//! `pmu serve`'s `--config` size bound and `--processor`, and serving AMD Zen 4's uncore
//! units. Loopback only.

#[path = "support/serve.rs"]
#[allow(dead_code)] // Not every helper is used here.
mod support;

use std::time::Duration;

#[path = "support/fake_machine.rs"]
mod fake_machine;

fn pmu() -> assert_cmd::Command {
    let mut cmd = fake_machine::pmu();
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

/// `pmu serve --sim` counts AMD Zen 4's uncore units, none of which has a box or global
/// level: the L3, the Data Fabric and a memory controller. Every series' total grows between
/// scrapes.
#[test]
fn serve_counts_the_amd_zen4_l3_data_fabric_and_memory_controller() {
    for unit in ["amd-zen4:L3", "amd-zen4:DF", "amd-zen4:UMC0"] {
        let served = support::start(&[
            "--sim",
            "--unit",
            unit,
            "--event",
            "event=0x04",
            "--interval",
            "0.05",
            "--sim-rate",
            "100000",
        ]);
        let totals = || {
            let (status, body) = support::get(served.addr, "/metrics");
            assert_eq!(status, 200, "{unit}: {body}");
            (support::samples(&body, "pmu_events_total"), body)
        };
        let mut first = None;
        let grew = support::wait_until(Duration::from_secs(20), || {
            let (now, _) = totals();
            if now.is_empty() || now.values().any(|&v| v == 0.0) {
                return false;
            }
            match &first {
                None => {
                    first = Some(now);
                    false
                }
                Some(before) => {
                    now.len() == before.len() && now.iter().all(|(k, v)| *v > before[k])
                }
            }
        });
        let (now, body) = totals();
        assert!(grew, "{unit}: totals did not all grow: {body}");
        // The simulated socket has two core complexes (one CPU each): serve counts the L3 of
        // each, as watch does, a series per complex told apart by its `cpu` label (the CPU it
        // is reached through); the DF and a UMC are one box of the socket, with no `cpu`.
        let cpus: Vec<&str> = now
            .keys()
            .map(|k| {
                k.split("cpu=\"")
                    .nth(1)
                    .map_or("", |r| &r[..r.find('"').unwrap()])
            })
            .collect();
        if unit.ends_with("L3") {
            assert_eq!(cpus, ["0", "1"], "{unit}: {body}");
        } else {
            assert_eq!(cpus, [""], "{unit}: {body}");
        }
    }
}
