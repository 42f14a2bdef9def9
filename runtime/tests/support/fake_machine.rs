//! The `pmu` command and the fake machines the command-line tests run it against: file trees
//! with `/dev/cpu/N/msr` files and sysfs CPU topology, and 8-byte reads and writes into them.

// Each test crate includes this file and uses only some of it.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::Path;

use assert_cmd::Command;

/// The `pmu` binary of this build.
pub fn pmu() -> Command {
    Command::cargo_bin("pmu").expect("the pmu binary is built")
}

/// Runs `pmu args...` and returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = pmu().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A machine root: ROOT/dev/cpu/{0,1}/msr (sparse files covering MSRs 0..0x1000) and the CPU
/// topology under ROOT/sys (CPU 0 on socket 0, CPU 1 on socket 1), and nothing else.
pub fn two_sockets() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for cpu in 0..2 {
        let d = root.path().join(format!("dev/cpu/{cpu}"));
        fs::create_dir_all(&d).unwrap();
        fs::File::create(d.join("msr"))
            .unwrap()
            .set_len(0x1000)
            .unwrap();
        let t = root
            .path()
            .join(format!("sys/devices/system/cpu/cpu{cpu}/topology"));
        fs::create_dir_all(&t).unwrap();
        fs::write(t.join("physical_package_id"), format!("{cpu}\n")).unwrap();
    }
    root
}

/// The 8 bytes at `offset` of the file at `path`, little-endian (as an MSR or config read).
pub fn peek(path: &Path, offset: u64) -> u64 {
    let mut b = [0u8; 8];
    fs::File::open(path)
        .unwrap()
        .read_exact_at(&mut b, offset)
        .unwrap();
    u64::from_le_bytes(b)
}

/// Writes `value` as 8 little-endian bytes at `offset` of the file at `path`.
pub fn poke(path: &Path, offset: u64, value: u64) {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .write_all_at(&value.to_le_bytes(), offset)
        .unwrap();
}

/// Adds an HA device on bus 0x3f to the machine at `root`: ROOT/sys/bus/pci/devices/
/// 0000:3f:0e.1 with Intel's vendor ID, the Xeon E5 HA's device ID and a 4 KiB config file.
pub fn add_ha(root: &Path) {
    let ha = root.join("sys/bus/pci/devices/0000:3f:0e.1");
    fs::create_dir_all(&ha).unwrap();
    fs::write(ha.join("vendor"), "0x8086\n").unwrap();
    fs::write(ha.join("device"), "0x3c46\n").unwrap();
    fs::File::create(ha.join("config"))
        .unwrap()
        .set_len(4096)
        .unwrap();
}

/// A sysfs-like PCI device tree: each device a directory `<BDF>` with `vendor`, `device` and
/// a 4 KiB `config` of zeros (write registers into it with [`poke`]).
pub fn pci_tree(devices: &[(&str, u16, u16)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (bdf, vendor, device) in devices {
        let d = dir.path().join(bdf);
        fs::create_dir(&d).unwrap();
        fs::write(d.join("vendor"), format!("{vendor:#06x}\n")).unwrap();
        fs::write(d.join("device"), format!("{device:#06x}\n")).unwrap();
        fs::File::create(d.join("config"))
            .unwrap()
            .set_len(4096)
            .unwrap();
    }
    dir
}

/// `text` with the fake machine's tree `root` written `ROOT`, so a message naming a file in
/// the tree reads the same on every run.
pub fn redact(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), "ROOT")
}
