//! `pmu detect` names the SoC of an Arm machine from a file tree made here: `/proc/cpuinfo` as
//! arm64 Linux prints it (arch/arm64/kernel/cpuinfo.c) and the SMCCC SOC_ID Linux's
//! drivers/firmware/smccc/soc_id.c shows in `/sys/devices/soc0/soc_id` (`jep106:%04x:%04x`,
//! the JEP106 bank and identity code, then the SoC id) and `family` (`jep106:%04x`).
//! Grace's value, jep106:036b:0241, is NVIDIA DCGM's (DcgmSystemMonitor.cpp) and hwloc's.

use std::fs;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::run;

/// A Neoverse core of `part` (implementer 0x41) and, where given, soc0's soc_id and family.
fn detect(part: u32, soc: Option<(&str, &str)>, extra: &[&str]) -> String {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("proc")).unwrap();
    fs::write(
        root.path().join("proc/cpuinfo"),
        format!(
            "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: {part:#05x}\nCPU revision\t: 0\n\n"
        ),
    )
    .unwrap();
    if let Some((id, family)) = soc {
        let dir = root.path().join("sys/devices/soc0");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("soc_id"), format!("{id}\n")).unwrap();
        fs::write(dir.join("family"), format!("{family}\n")).unwrap();
        fs::write(dir.join("revision"), "0x00000001\n").unwrap();
    }
    let mut args = vec!["detect", "--root", root.path().to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn grace_is_named_by_its_soc_id_with_its_cores_and_uncore() {
    // Neoverse V2: cputype.h's ARM_CPU_PART_NEOVERSE_V2 0xD4F.
    let out = detect(0xD4F, Some(("jep106:036b:0241", "jep106:036b")), &[]);
    assert!(out.contains("specs: neoverse-v2 ("), "{out}");
    assert!(
        out.contains("soc: nvidia-grace (NVIDIA Grace (Neoverse V2 cores, Scalable Coherency Fabric)): cores neoverse-v2, uncore nvidia-grace-scf; SMCCC SOC_ID jep106:036b:0241"),
        "{out}"
    );
    assert!(!out.contains("but the cores are"), "{out}");
    let json = detect(
        0xD4F,
        Some(("jep106:036b:0241", "jep106:036b")),
        &["--json"],
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["soc"]["id"], "nvidia-grace");
    assert_eq!(v["soc"]["soc_id"], "jep106:036b:0241");
    assert_eq!(v["soc"]["family"], "jep106:036b");
    assert_eq!(v["soc"]["cores"], "neoverse-v2");
}

#[test]
fn a_soc_id_whose_cores_disagree_is_named_with_the_disagreement() {
    // Neoverse N2 (0xD49) under Grace's SOC_ID.
    let out = detect(0xD49, Some(("jep106:036b:0241", "jep106:036b")), &[]);
    assert!(out.contains("soc: nvidia-grace ("), "{out}");
    assert!(
        out.contains("but the cores are neoverse-n2, not the SoC's neoverse-v2"),
        "{out}"
    );
}

#[test]
fn an_unknown_soc_id_says_which_the_spec_knows() {
    // Ampere's JEP106 code (arm_cspmu.h: ARM_CSPMU_IMPL_ID_AMPERE 0xA16, bank 0x0a, id 0x16).
    let out = detect(0xD0C, Some(("jep106:0a16:0001", "jep106:0a16")), &[]);
    assert!(
        out.contains("soc: SMCCC SOC_ID jep106:0a16:0001 (family jep106:0a16) is no SoC the spec composes (it knows nvidia-grace jep106:036b:0241, aws-graviton4 (no public SOC_ID))"),
        "{out}"
    );
}

#[test]
fn without_a_soc_id_the_socs_with_these_cores_are_named() {
    let out = detect(0xD4F, None, &[]);
    assert!(
        out.contains("soc: not identified (no SMCCC SOC_ID in /sys/devices/soc0/soc_id"),
        "{out}"
    );
    assert!(
        out.contains("SoCs of the spec with these cores: nvidia-grace, aws-graviton4"),
        "{out}"
    );
    // A soc_id that is not an SMCCC one (a device-tree SoC's name) is not taken for one.
    let out = detect(0xD4F, Some(("tegra234", "Tegra")), &[]);
    assert!(out.contains("soc: not identified"), "{out}");
    // An x86 machine has no soc line.
    let (_, x86, _) = {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("proc")).unwrap();
        fs::write(
            root.path().join("proc/cpuinfo"),
            "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: x\nstepping\t: 8\n\n",
        )
        .unwrap();
        run(&["detect", "--root", root.path().to_str().unwrap()])
    };
    assert!(!x86.contains("soc:"), "{x86}");
}

#[test]
fn every_soc_names_processors_of_the_spec() {
    for s in pmu_regs::SOCS {
        let ids: Vec<&str> = pmu_regs::PROCESSORS.iter().map(|p| p.id).collect();
        assert!(ids.contains(&s.cores), "{}: {}", s.id, s.cores);
        for u in s.uncore {
            assert!(ids.contains(u), "{}: {u}", s.id);
        }
    }
}

/// An APMT table of one ACPI-device node (Linux's struct acpi_apmt_node, packed: length 56 at
/// 0, flags at 2, type at 3, id at 4, base_address0 at 20, proc_affinity at 48) with a right
/// checksum (byte 9).
fn apmt_bytes(id: u32, base0: u64, affinity: u32) -> Vec<u8> {
    let mut t = b"APMT".to_vec();
    t.extend(92u32.to_le_bytes());
    t.extend([0u8; 28]);
    let mut node = vec![0u8; 56];
    node[0..2].copy_from_slice(&56u16.to_le_bytes());
    node[3] = 3;
    node[4..8].copy_from_slice(&id.to_le_bytes());
    node[20..28].copy_from_slice(&base0.to_le_bytes());
    node[48..52].copy_from_slice(&affinity.to_le_bytes());
    t.extend(node);
    let sum = t.iter().fold(0u8, |s, b| s.wrapping_add(*b));
    t[9] = 0u8.wrapping_sub(sum);
    t
}

#[test]
fn detect_lists_the_apmt_nodes_and_refuses_a_corrupt_table() {
    let with = |bytes: Vec<u8>| {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("proc")).unwrap();
        fs::write(
            root.path().join("proc/cpuinfo"),
            "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\nCPU revision\t: 0\n\n",
        )
        .unwrap();
        let dir = root.path().join("sys/firmware/acpi/tables");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("APMT"), bytes).unwrap();
        let (code, out, err) = run(&["detect", "--root", root.path().to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let out = with(apmt_bytes(5, 0x1000_0000, 0));
    assert!(
        out.contains("apmt: 1 CoreSight PMU (node 5 acpi_device at 0x10000000, processor 0)"),
        "{out}"
    );
    let mut bad = apmt_bytes(5, 0x1000_0000, 0);
    // The node's id byte (36 + 4) from 5 to 4: the bytes now add up to 0xff.
    bad[40] ^= 1;
    let out = with(bad);
    assert!(
        out.contains("apmt: refused: the APMT table's bytes add up to 0xff"),
        "{out}"
    );
}
