//! Which root PCI bus each Skylake-SP / Cascade Lake IIO box serves, read from
//! MSR_CPU_BUS_NUMBER (0x300) as the spec's `<stack-bus>` says, on the simulated part and on
//! file trees, and compared by `pmu check` with the kernel's own mapping.
//!
//! The expected values are Linux's reading of the register (uncore_snbep.c,
//! skx_iio_topology_cb: IIO PMU idx's bus is `(msr >> (idx * 8)) & 0xff`, no mapping while
//! bit 63 (SKX_MSR_CPU_BUS_VALID_BIT) is clear, and a bus of 0 hidden on any PMU but 0), done
//! by hand on the raw values the tests write.

use pmu_runtime::machine::Machine;
use pmu_runtime::part::stack_buses;

#[path = "support/fake_machine.rs"]
mod fake_machine;
#[path = "support/spec.rs"]
mod spec;

use fake_machine::{poke, run, two_sockets};
use spec::processor;

/// The IIO unit's structure of processor `id`.
fn iio(id: &str) -> &'static pmu_regs::PmuInfo {
    processor(id)
        .units
        .iter()
        .find(|u| u.name == "IIO")
        .and_then(|u| u.pmu)
        .expect("the IIO unit has a <pmu>")
}

/// `(box, bus)` pairs as the tests write them.
fn expect(pairs: &[(&'static str, Option<u8>)]) -> Option<Vec<(&'static str, Option<u8>)>> {
    Some(pairs.to_vec())
}

/// MSR 0x300 of socket 0 on a file tree: 0x8000_0000_5d3a_1700 is bit 63 (valid) and bytes
/// 00, 17, 3a, 5d, 00, 00 from bit 0: IIO0 on bus 00 (stack 0 owns bus 0 on the first
/// socket), IIO1 17, IIO2 3a, IIO3 5d, and IIO4 and IIO5 absent (a byte of 0 on a box but
/// the first). Socket 1: bytes 80, 85, ae, d7.
#[test]
fn a_file_tree_machine_maps_each_iio_box_to_its_bus_as_linux_does() {
    let root = two_sockets();
    let msr = |cpu: u32| root.path().join(format!("dev/cpu/{cpu}/msr"));
    poke(&msr(0), 0x300, 0x8000_0000_5d3a_1700);
    poke(&msr(1), 0x300, 0x8000_0000_d7ae_8580);
    let machine = Machine::hardware(root.path());
    for id in ["skylake-sp", "cascade-lake"] {
        let s0 = stack_buses(&machine, iio(id), 0).unwrap().unwrap();
        assert_eq!(s0.raw, 0x8000_0000_5d3a_1700);
        assert_eq!(
            s0.buses,
            expect(&[
                ("IIO0", Some(0x00)),
                ("IIO1", Some(0x17)),
                ("IIO2", Some(0x3a)),
                ("IIO3", Some(0x5d)),
                ("IIO4", None),
                ("IIO5", None),
            ]),
            "{id}"
        );
        assert_eq!(
            s0.describe(),
            "IIO0 0000:00, IIO1 0000:17, IIO2 0000:3a, IIO3 0000:5d, IIO4 none, IIO5 none"
        );
        let s1 = stack_buses(&machine, iio(id), 1).unwrap().unwrap();
        assert_eq!(
            s1.buses,
            expect(&[
                ("IIO0", Some(0x80)),
                ("IIO1", Some(0x85)),
                ("IIO2", Some(0xae)),
                ("IIO3", Some(0xd7)),
                ("IIO4", None),
                ("IIO5", None),
            ]),
            "{id}"
        );
    }
}

/// With bit 63 clear the bytes mean nothing: no bus is given, as Linux gives up the mapping.
#[test]
fn without_the_valid_bit_no_box_is_mapped() {
    let root = two_sockets();
    poke(&root.path().join("dev/cpu/0/msr"), 0x300, 0x5d3a_1700);
    let read = stack_buses(&Machine::hardware(root.path()), iio("skylake-sp"), 0)
        .unwrap()
        .unwrap();
    assert_eq!(read.buses, None);
    assert!(
        read.describe().contains("valid bit clear"),
        "{}",
        read.describe()
    );
}

/// A unit without a `<stack-bus>` (the CHA; Ice Lake-SP's IIO, mapped another way) reads
/// nothing.
#[test]
fn other_units_have_no_stack_buses() {
    let machine = Machine::simulating(processor("skylake-sp"));
    let cha = processor("skylake-sp")
        .units
        .iter()
        .find(|u| u.name == "CHA")
        .and_then(|u| u.pmu)
        .unwrap();
    assert_eq!(stack_buses(&machine, cha, 0).unwrap(), None);
    let icx = Machine::simulating(processor("ice-lake-sp"));
    assert_eq!(stack_buses(&icx, iio("ice-lake-sp"), 0).unwrap(), None);
}

/// The simulated part answers MSR 0x300 as firmware leaves it (docs/pmu.md): valid, and
/// stack k of socket s at bus 0x40 x s + 0x10 x k for the first four stacks, the two MCP
/// stacks absent. Socket 0: 0x8000_0000_3020_1000; socket 1: 0x8000_0000_7060_5040.
#[test]
fn the_simulated_part_answers_msr_0x300_per_socket() {
    let machine = Machine::simulating(processor("skylake-sp"));
    let s0 = stack_buses(&machine, iio("skylake-sp"), 0)
        .unwrap()
        .unwrap();
    assert_eq!(s0.raw, 0x8000_0000_3020_1000);
    let s1 = stack_buses(&machine, iio("skylake-sp"), 1)
        .unwrap()
        .unwrap();
    assert_eq!(s1.raw, 0x8000_0000_7060_5040);
    assert_eq!(
        s1.buses,
        expect(&[
            ("IIO0", Some(0x40)),
            ("IIO1", Some(0x50)),
            ("IIO2", Some(0x60)),
            ("IIO3", Some(0x70)),
            ("IIO4", None),
            ("IIO5", None),
        ])
    );
}

/// A Skylake-SP file tree for `pmu check --root`: its `/proc/cpuinfo` (family 6, model 85,
/// stepping 4), MSR 0x300 on each socket as above, and the kernel's `dieN` files for the
/// stacks it maps (`dies`: `(pmu, die, text)`).
fn skylake_tree(dies: &[(&str, u32, &str)]) -> tempfile::TempDir {
    let root = two_sockets();
    let at = |p: &str| root.path().join(p);
    std::fs::create_dir_all(at("proc")).unwrap();
    std::fs::write(
        at("proc/cpuinfo"),
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nstepping\t: 4\n\n",
    )
    .unwrap();
    poke(&at("dev/cpu/0/msr"), 0x300, 0x8000_0000_5d3a_1700);
    poke(&at("dev/cpu/1/msr"), 0x300, 0x8000_0000_d7ae_8580);
    for (pmu, die, text) in dies {
        let d = at("sys/bus/event_source/devices").join(pmu);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("die{die}")), format!("{text}\n")).unwrap();
    }
    root
}

/// The kernel's mapping as Linux would publish it for the tree's register values: every
/// stack with a bus, the two absent ones hidden.
const KERNEL: [(&str, u32, &str); 8] = [
    ("uncore_iio_0", 0, "0000:00"),
    ("uncore_iio_1", 0, "0000:17"),
    ("uncore_iio_2", 0, "0000:3a"),
    ("uncore_iio_3", 0, "0000:5d"),
    ("uncore_iio_0", 1, "0000:80"),
    ("uncore_iio_1", 1, "0000:85"),
    ("uncore_iio_2", 1, "0000:ae"),
    ("uncore_iio_3", 1, "0000:d7"),
];

fn row<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{out}"))
}

#[test]
fn pmu_check_agrees_with_the_kernels_mapping_on_a_file_tree() {
    let root = skylake_tree(&KERNEL);
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&["check", "--root", r, "--perf", "/nonexistent/perf"]);
    assert_eq!(code, 0, "{out}{err}");
    let s0 = row(&out, "buses IIO socket 0");
    assert!(s0.contains("as the kernel's die0 file gives it"), "{s0}");
    assert!(s0.contains("IIO1 0000:17") && s0.contains(" pass"), "{s0}");
    let s1 = row(&out, "buses IIO socket 1");
    assert!(s1.contains("IIO3 0000:d7") && s1.contains(" pass"), "{s1}");
}

/// A kernel that puts IIO2 of socket 1 on another bus fails that row only, naming the box and
/// both buses; socket 0's row still passes.
#[test]
fn pmu_check_names_a_box_the_kernel_maps_elsewhere() {
    let mut dies = KERNEL;
    dies[6] = ("uncore_iio_2", 1, "0000:af");
    let root = skylake_tree(&dies);
    let r = root.path().to_str().unwrap();
    let (code, out, err) = run(&["check", "--root", r, "--perf", "/nonexistent/perf"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(row(&out, "buses IIO socket 0").contains(" pass"), "{out}");
    let s1 = row(&out, "buses IIO socket 1");
    assert!(s1.contains("FAIL"), "{s1}");
    assert!(s1.contains("IIO2: register ae, kernel 0000:af"), "{s1}");
    assert!(err.contains("buses IIO socket 1"), "{err}");
}

/// `--json` carries the rows too.
#[test]
fn the_bus_rows_are_in_the_json_report() {
    let (code, out, err) = run(&["check", "--sim", "--processor", "cascade-lake", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let s0 = checks
        .iter()
        .find(|c| c["name"] == "buses IIO socket 0")
        .expect("a bus row");
    assert_eq!(s0["verdict"], "pass");
    assert_eq!(
        s0["measured"],
        "IIO0 0000:00, IIO1 0000:10, IIO2 0000:20, IIO3 0000:30, IIO4 none, IIO5 none"
    );
}
