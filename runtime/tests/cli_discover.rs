//! `pmu discover`: a table dump, the simulator, and a machine root with a discovery device,
//! with the exit statuses docs/discovery.md gives.

use std::fs;

#[path = "support/fake_machine.rs"]
mod fake_machine;

use fake_machine::run;
use pmu_runtime::discovery::{AccessKind, MemoryTable, TableBox};
use pmu_runtime::Bdf;

const DEVICE: Bdf = Bdf::new(0x7e, 0, 1);

/// A CHA-like MSR box of type 0 with id `id`.
fn table_box(id: u16) -> TableBox {
    TableBox {
        box_type: 0,
        box_id: id,
        access: AccessKind::Msr,
        box_control: 0x2000 + 0x10 * u64::from(id),
        ctl_offset: 2,
        ctr_offset: 8,
        counters: 4,
        width: 48,
    }
}

fn table() -> MemoryTable {
    MemoryTable::build(0xFE00_0000, DEVICE, 0x2FF0, &[table_box(0), table_box(1)])
}

fn dump(bytes: &[u8]) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    fs::write(f.path(), bytes).unwrap();
    f
}

#[test]
fn a_dumped_table_is_read_and_joined_in_every_format() {
    let f = dump(&table().bytes);
    let path = f.path().to_str().unwrap();
    let (code, out, err) = run(&["discover", "--table", path, "--processor", "skylake-sp"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("discover_table", out);
    let (code, out, _) = run(&[
        "discover",
        "--table",
        path,
        "--processor",
        "skylake-sp",
        "--csv",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("SOCKET,BOX,TYPE,ID,STATUS,ACCESS,BOX_CONTROL,COUNTERS,WIDTH,DETAIL\n"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 3);
    let (code, out, _) = run(&[
        "--json",
        "discover",
        "--table",
        path,
        "--processor",
        "skylake-sp",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[1]["socket"], 0);
    assert_eq!(v[1]["box_control"], "MSR 0x2010");
    assert_eq!(v[1]["status"], "unknown");
    assert_eq!(
        (v[1]["counters"].as_u64(), v[1]["width"].as_u64()),
        (Some(4), Some(48))
    );
}

#[test]
fn the_simulated_sapphire_rapids_table_matches_its_spec() {
    let (code, out, err) = run(&[
        "discover",
        "--sim",
        "--processor",
        "sapphire-rapids",
        "--check",
        "--csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        rows.len(),
        104,
        "60 CHAs, 12 IIO, 12 IRP, 4 UPI, 4 M3UPI, 4 M2M, 8 iMC channels"
    );
    // A memory-mapped box is published at its physical address on the simulated socket 0,
    // and compared with the address its window gives there.
    assert!(
        rows.iter()
            .any(|r| r.starts_with("0,IMC0,6,0,matching,mmio,memory 0x")),
        "{out}"
    );
    // The UPI and M3UPI entries Linux ignores are shown ignored, with the source; every
    // other box matches.
    let status = |r: &&str| r.split(',').nth(4).unwrap().to_string();
    let ignored: Vec<&&str> = rows.iter().filter(|r| status(r) == "ignored").collect();
    assert_eq!(ignored.len(), 8, "4 UPI, 4 M3UPI: {out}");
    assert!(
        ignored
            .iter()
            .all(|r| r.contains("table ignored (linux-discovery): Linux ignores")),
        "{out}"
    );
    assert!(
        rows.iter()
            .all(|r| status(r) == "matching" || status(r) == "ignored"),
        "{out}"
    );
    assert!(
        rows[0].starts_with("0,CHA0,0,0,matching,msr,MSR 0x2000,4,48,"),
        "{out}"
    );
}

#[test]
fn check_fails_unless_every_box_matches_and_still_prints_them() {
    let f = dump(&table().bytes);
    let path = f.path().to_str().unwrap();
    let (code, out, err) = run(&[
        "discover",
        "--table",
        path,
        "--processor",
        "skylake-sp",
        "--check",
    ]);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(err.contains("2 of 2 boxes do not match the spec"), "{err}");
}

#[test]
fn a_truncated_dump_is_an_error_naming_the_entry() {
    let t = table();
    let f = dump(&t.bytes[..48]);
    let (code, out, err) = run(&[
        "discover",
        "--table",
        f.path().to_str().unwrap(),
        "--processor",
        "skylake-sp",
    ]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("ends before entry 0 of the 2 it declares"),
        "{err}"
    );
}

#[test]
fn usage_mistakes_exit_2() {
    let (code, _, err) = run(&["discover", "--sim"]);
    assert_eq!(code, 2);
    assert!(err.contains("--processor"), "{err}");
    let (code, _, err) = run(&["discover", "--sim", "--processor", "skylakesp"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean skylake-sp"), "{err}");
    // A part from before the discovery tables: its simulated part publishes none.
    let (code, _, err) = run(&["discover", "--sim", "--processor", "skylake-sp"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no unit of skylake-sp has a discovery type"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "discover",
        "--table",
        "/nonexistent",
        "--processor",
        "skylake-sp",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("cannot read the table dump /nonexistent"),
        "{err}"
    );
}

#[test]
fn on_a_machine_the_device_and_its_table_are_found() {
    let root = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "discover",
        "--processor",
        "skylake-sp",
        "--root",
        root.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no uncore discovery device (8086:09a7)"),
        "{err}"
    );
    // A discovery device whose capability locates the table.
    let t = table();
    let dev = root
        .path()
        .join("sys/bus/pci/devices")
        .join(DEVICE.to_string());
    fs::create_dir_all(&dev).unwrap();
    fs::write(dev.join("vendor"), "0x8086\n").unwrap();
    fs::write(dev.join("device"), "0x09a7\n").unwrap();
    let config: Vec<u8> = t.config.iter().flat_map(|d| d.to_le_bytes()).collect();
    fs::write(dev.join("config"), config).unwrap();
    let (code, _, err) = run(&[
        "discover",
        "--processor",
        "skylake-sp",
        "--root",
        root.path().to_str().unwrap(),
    ]);
    // Without physical memory to read it from (or the privilege to): the device, why, and
    // the way round.
    assert_eq!(code, 1);
    assert!(
        err.contains("socket 0 (device 0000:7e:00.1): reading "),
        "{err}"
    );
    assert!(err.contains("--table FILE"), "{err}");
    // Physical memory as a sparse file holding the table at the BAR's address: read in place.
    use std::io::{Seek, SeekFrom, Write};
    fs::create_dir_all(root.path().join("dev")).unwrap();
    let mut mem = fs::File::create(root.path().join("dev/mem")).unwrap();
    mem.set_len(0xFE00_0000 + 0x2000).unwrap();
    mem.seek(SeekFrom::Start(0xFE00_0000)).unwrap();
    mem.write_all(&t.bytes).unwrap();
    drop(mem);
    let (code, out, err) = run(&[
        "discover",
        "--processor",
        "skylake-sp",
        "--root",
        root.path().to_str().unwrap(),
        "--csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(
        rows[0].starts_with("0,type 0 id 0,0,0,unknown,msr,MSR 0x2000,4,48,"),
        "{out}"
    );
    // A second socket's device, its table elsewhere in memory listing one box: every
    // socket's table is shown, each row with its socket.
    const SECOND: Bdf = Bdf::new(0xfe, 0, 1);
    let one = MemoryTable::build(0xFE00_1000, SECOND, 0x2FF0, &[table_box(7)]);
    let dev = root
        .path()
        .join("sys/bus/pci/devices")
        .join(SECOND.to_string());
    fs::create_dir_all(&dev).unwrap();
    fs::write(dev.join("vendor"), "0x8086\n").unwrap();
    fs::write(dev.join("device"), "0x09a7\n").unwrap();
    let config: Vec<u8> = one.config.iter().flat_map(|d| d.to_le_bytes()).collect();
    fs::write(dev.join("config"), config).unwrap();
    let mut mem = fs::OpenOptions::new()
        .write(true)
        .open(root.path().join("dev/mem"))
        .unwrap();
    mem.seek(SeekFrom::Start(0xFE00_1000)).unwrap();
    mem.write_all(&one.bytes).unwrap();
    drop(mem);
    let (code, out, err) = run(&[
        "discover",
        "--processor",
        "skylake-sp",
        "--root",
        root.path().to_str().unwrap(),
        "--csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert!(rows[0].starts_with("0,type 0 id 0,"), "{out}");
    assert!(rows[1].starts_with("0,type 0 id 1,"), "{out}");
    assert!(
        rows[2].starts_with("1,type 0 id 7,0,7,unknown,msr,MSR 0x2070,"),
        "{out}"
    );
}
