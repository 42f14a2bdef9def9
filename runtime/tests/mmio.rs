//! The memory-mapped register backend, against files the tests make (never real memory): a
//! file standing for physical memory, mapped a page at a time, and the window bases assembled
//! from PCI config dwords as the spec's `<mmio-window>` says.

use std::collections::HashMap;
use std::sync::Mutex;

use pmu_regs::{Location, MmioBasePart, MmioWindow};
use pmu_runtime::access::BackendResult;
use pmu_runtime::access::{register_address, window_base};
use pmu_runtime::mmio::DevMem;
use pmu_runtime::{AccessError, Bdf, MmioAccess, PciAccess};

/// A file of `pages` 4 KiB pages of zeros standing for physical memory.
fn memory(pages: usize) -> (tempfile::NamedTempFile, DevMem) {
    let file = tempfile::NamedTempFile::new().unwrap();
    file.as_file().set_len(4096 * pages as u64).unwrap();
    let mem = DevMem::with_path(file.path());
    (file, mem)
}

#[test]
fn reads_and_writes_land_at_their_physical_address_whole() {
    let (file, mem) = memory(3);
    mem.write_mmio(0x1008, 64, 0x1122_3344_5566_7788).unwrap();
    mem.write_mmio(0x2ffc, 32, 0xdead_beef).unwrap();
    assert_eq!(mem.read_mmio(0x1008, 64).unwrap(), 0x1122_3344_5566_7788);
    assert_eq!(mem.read_mmio(0x1008, 32).unwrap(), 0x5566_7788);
    assert_eq!(mem.read_mmio(0x100c, 32).unwrap(), 0x1122_3344);
    assert_eq!(mem.read_mmio(0x2ffc, 32).unwrap(), 0xdead_beef);
    // What the file holds: little-endian, at the offset equal to the address, nothing else.
    let bytes = std::fs::read(file.path()).unwrap();
    assert_eq!(
        &bytes[0x1008..0x1010],
        &0x1122_3344_5566_7788u64.to_le_bytes()
    );
    assert_eq!(&bytes[0x2ffc..0x3000], &0xdead_beefu32.to_le_bytes());
    let touched: usize = bytes.iter().filter(|b| **b != 0).count();
    assert_eq!(touched, 12);
}

#[test]
fn misaligned_and_odd_widths_are_refused_before_anything_is_mapped() {
    let (file, mem) = memory(1);
    let kind = |e: pmu_runtime::BackendError| format!("{:?}", e.access_kind());
    assert_eq!(
        kind(mem.read_mmio(0x4, 64).unwrap_err()),
        "Some(Misaligned { bytes: 8 })"
    );
    assert_eq!(
        kind(mem.write_mmio(0x2, 32, 1).unwrap_err()),
        "Some(Misaligned { bytes: 4 })"
    );
    assert_eq!(
        kind(mem.read_mmio(0x8, 16).unwrap_err()),
        "Some(BadWidth { width: 16 })"
    );
    assert_eq!(
        kind(mem.write_mmio(0x8, 32, 1 << 32).unwrap_err()),
        "Some(TooWide { value: 4294967296, width: 32 })"
    );
    assert!(std::fs::read(file.path()).unwrap().iter().all(|b| *b == 0));
}

#[test]
fn an_address_past_the_file_is_refused_not_a_crash() {
    let (_file, mem) = memory(1);
    let err = mem.read_mmio(0x1000, 32).unwrap_err();
    assert!(
        matches!(err.access_kind(), Some(AccessError::Short { done: 0, .. })),
        "{err}"
    );
}

#[test]
fn a_missing_dev_mem_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let mem = DevMem::with_path(dir.path().join("dev/mem"));
    let err = mem.read_mmio(0x1000, 32).unwrap_err();
    assert!(matches!(
        err.access_kind(),
        Some(AccessError::NoMemDevice { .. })
    ));
    let text = err.to_string();
    assert!(text.contains("does not exist"), "{text}");
    assert!(text.contains("MMIO 0x1000"), "{text}");
}

/// PCI config space of one device, dword by offset.
struct Config(Mutex<HashMap<u16, u32>>);

impl PciAccess for Config {
    fn read_dword(&self, _: Bdf, offset: u16) -> BackendResult<u32> {
        Ok(self.0.lock().unwrap().get(&offset).copied().unwrap_or(0))
    }
    fn write_dword(&self, _: Bdf, _: u16, _: u32) -> BackendResult<()> {
        unreachable!("assembling a base only reads")
    }
}

/// Ice Lake-SP's iMC window as Linux describes it (uncore_snbep.c): base bits 51:23 from
/// dword 0xD0 bits 28:0, bits 22:12 from dword 0xD8 + 4 * controller bits 10:0.
const ICX_LIKE: MmioWindow = MmioWindow {
    device_id: 0x3451,
    device: 0,
    function: 1,
    parts: &[
        MmioBasePart {
            offset: 0xD0,
            controller_stride: 0,
            lsb: 0,
            msb: 28,
            shift: 23,
        },
        MmioBasePart {
            offset: 0xD8,
            controller_stride: 4,
            lsb: 0,
            msb: 10,
            shift: 12,
        },
    ],
    offset: 0x22800,
    channel_stride: 0x4000,
    size: 0x4000,
    controllers: 4,
    channels: 3,
};

#[test]
fn a_window_base_is_assembled_from_its_config_dwords() {
    // Bits above each part's mask are ignored, as the kernel's masks drop them.
    let config = Config(Mutex::new(HashMap::from([
        (0xD0, 0xE000_0041),
        (0xD8, 0xFFFF_F801),
        (0xE0, 0x0000_0123),
    ])));
    let bdf = Bdf {
        segment: 0,
        bus: 0x7e,
        device: 0,
        function: 1,
    };
    let base0 = window_base(&config, bdf, &ICX_LIKE, 0).unwrap();
    assert_eq!(base0, (0x41 << 23) | (0x001 << 12));
    let base2 = window_base(&config, bdf, &ICX_LIKE, 2).unwrap();
    assert_eq!(base2, (0x41 << 23) | (0x123 << 12));
    // Channel 1's counter 2 (offset 0x18) of controller 2.
    let at = Location::Mmio {
        controller: 2,
        channel: 1,
        offset: 0x18,
    };
    assert_eq!(
        register_address(&ICX_LIKE, base2, at),
        Some(base2 + 0x22800 + 0x4000 + 0x18)
    );
    assert_eq!(
        register_address(&ICX_LIKE, base2, Location::Msr(0xC90)),
        None
    );
}
