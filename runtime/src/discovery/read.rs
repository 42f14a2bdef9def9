//! Reading a discovery table from memory: the global state, then each unit entry
//! (`spec/discovery/global.xml`, `unit.xml`), never past the size the global state declares.

use std::collections::HashMap;

use pmu_regs::discovery::global::{
    GlobalDiscoveryTable1, GlobalDiscoveryTable1AccessType, GLOBAL_CTL_ADDR,
    GLOBAL_DISCOVERY_TABLE1, GLOBAL_DISCOVERY_TABLE3,
};
use pmu_regs::discovery::unit::{
    UnitDiscoveryTable1, UnitDiscoveryTable1AccessType, UnitDiscoveryTable3, UNIT_CTL_ADDR,
    UNIT_DISCOVERY_TABLE1, UNIT_DISCOVERY_TABLE3,
};

use std::path::Path;

use super::{
    AccessKind, DiscoveredBox, DiscoveredTable, DiscoveryError, GlobalState, MemoryTable,
    SkippedEntry, TableAddress,
};
use crate::access::{BackendError, Bdf, MmioAccess};
use crate::bounded::{self, BoundedFile};

/// The largest table the reader accepts, in bytes. The fields allow (1 + 1023) entries 255 * 8
/// bytes apart (2 MiB); real parts list a few hundred boxes of 32 bytes or less, so anything
/// near the limit is a corrupt global state, and reading it would only map memory for nothing.
pub const MAX_TABLE_BYTES: u64 = 512 * 1024;

/// The most unit entries a table may declare (the field allows 1023). Real parts list a few
/// hundred boxes at most; more is a corrupt global state, and would only make rows for nothing.
pub const MAX_ENTRIES: u16 = 512;

/// One entry is three qwords.
const ENTRY_BYTES: u64 = 24;

/// Reads a table dumped to `path` (taken to come from `device`): its global state, then only
/// the bytes that declares, never more than [`MAX_TABLE_BYTES`], each read ending within
/// [`bounded::DEFAULT_TIMEOUT`] (a FIFO no one writes is an error, not a wait).
pub fn read_dump(path: &Path, device: Bdf) -> Result<DiscoveredTable, DiscoveryError> {
    let dump = |source| DiscoveryError::Dump {
        path: path.to_path_buf(),
        source,
    };
    let mut file = BoundedFile::open(path, bounded::DEFAULT_TIMEOUT).map_err(dump)?;
    let global = [
        GLOBAL_DISCOVERY_TABLE1.offset(),
        GLOBAL_CTL_ADDR.offset(),
        GLOBAL_DISCOVERY_TABLE3.offset(),
    ];
    let head = u64::from(global.iter().max().copied().unwrap_or(0)) + 8;
    let mut bytes = file.read_up_to(head).map_err(dump)?;
    let qword = |at: u32| {
        let at = at as usize;
        bytes
            .get(at..at + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    let state = global_state(0, global.map(qword))?;
    let declared = (1 + u64::from(state.max_units)) * state.stride;
    bytes.extend(
        file.read_up_to(declared.saturating_sub(head))
            .map_err(dump)?,
    );
    read_table(&MemoryTable::from_bytes(0, device, bytes), 0)
}

/// Reads the table at physical address `address`: its global state, then every unit entry it
/// declares. Empty entries and entries of an undefined access kind are skipped (and listed,
/// with the reason), as Linux skips them; everything else wrong is an error.
pub fn read_table(
    mmio: &(impl MmioAccess + ?Sized),
    address: u64,
) -> Result<DiscoveredTable, DiscoveryError> {
    let qword = |at: u64| mmio.read_mmio(at, 64);
    let three = |base: u64, offsets: [u32; 3]| -> Result<[u64; 3], BackendError> {
        Ok([
            qword(base + u64::from(offsets[0]))?,
            qword(base + u64::from(offsets[1]))?,
            qword(base + u64::from(offsets[2]))?,
        ])
    };
    let global = three(
        address,
        [
            GLOBAL_DISCOVERY_TABLE1.offset(),
            GLOBAL_CTL_ADDR.offset(),
            GLOBAL_DISCOVERY_TABLE3.offset(),
        ],
    )
    .map_err(|source| DiscoveryError::Read {
        what: format!("the global state of the discovery table at {address:#x}"),
        source,
    })?;
    let state = global_state(address, global)?;
    let offsets = [
        UNIT_DISCOVERY_TABLE1.offset(),
        UNIT_CTL_ADDR.offset(),
        UNIT_DISCOVERY_TABLE3.offset(),
    ];
    let mut table = DiscoveredTable {
        address,
        global: state,
        boxes: Vec::new(),
        skipped: Vec::new(),
    };
    for entry in 0..usize::from(state.max_units) {
        let base = address + (entry as u64 + 1) * state.stride;
        let qwords = three(base, offsets).map_err(|source| DiscoveryError::Truncated {
            entry,
            of: state.max_units,
            source,
        })?;
        match unit_entry(entry, qwords)? {
            Ok(b) => table.boxes.push(b),
            Err(reason) => table.skipped.push(SkippedEntry { entry, reason }),
        }
    }
    check_unique(&table.boxes)?;
    Ok(table)
}

/// A qword set Linux treats as no entry: a first or second qword of 0 or all ones, or a third
/// of all ones.
fn is_empty(q: [u64; 3]) -> bool {
    q[0] == 0 || q[1] == 0 || q[0] == u64::MAX || q[1] == u64::MAX || q[2] == u64::MAX
}

/// The global state, with its size checked before any entry is read.
fn global_state(address: u64, q: [u64; 3]) -> Result<GlobalState, DiscoveryError> {
    if is_empty(q) {
        return Err(DiscoveryError::EmptyGlobal { address, qwords: q });
    }
    let t1 = GlobalDiscoveryTable1::from_bits(q[0]);
    let stride = u64::from(t1.stride()) * 8;
    if stride < ENTRY_BYTES {
        return Err(DiscoveryError::BadStride { stride });
    }
    let max_units = t1.max_units();
    if max_units == 0 {
        return Err(DiscoveryError::NoUnits { address });
    }
    let bytes = (1 + u64::from(max_units)) * stride;
    if bytes > MAX_TABLE_BYTES || address.checked_add(bytes).is_none() {
        return Err(DiscoveryError::TooLarge {
            bytes,
            limit: MAX_TABLE_BYTES,
        });
    }
    if max_units > MAX_ENTRIES {
        return Err(DiscoveryError::TooManyEntries {
            entries: max_units,
            limit: MAX_ENTRIES,
        });
    }
    let access = match t1.access_type() {
        GlobalDiscoveryTable1AccessType::Msr => AccessKind::Msr,
        GlobalDiscoveryTable1AccessType::Mmio => AccessKind::Mmio,
        GlobalDiscoveryTable1AccessType::Pci => AccessKind::Pci,
        GlobalDiscoveryTable1AccessType::Reserved => {
            return Err(DiscoveryError::EmptyGlobal { address, qwords: q })
        }
    };
    Ok(GlobalState {
        table_type: t1.type_(),
        access,
        control: q[1],
        stride,
        max_units,
    })
}

/// One unit entry: a box, or why it is skipped (`Ok(Err(reason))`), or an error.
fn unit_entry(
    entry: usize,
    q: [u64; 3],
) -> Result<Result<DiscoveredBox, &'static str>, DiscoveryError> {
    if is_empty(q) {
        return Ok(Err("empty (a qword of 0 or all ones)"));
    }
    let t1 = UnitDiscoveryTable1::from_bits(q[0]);
    let t3 = UnitDiscoveryTable3::from_bits(q[2]);
    let access = match t1.access_type() {
        UnitDiscoveryTable1AccessType::Msr => AccessKind::Msr,
        UnitDiscoveryTable1AccessType::Mmio => AccessKind::Mmio,
        UnitDiscoveryTable1AccessType::Pci => AccessKind::Pci,
        UnitDiscoveryTable1AccessType::Reserved => return Ok(Err("access type 3 is not defined")),
    };
    if t1.ctl_offset() == 0 || t1.ctr_offset() == 0 {
        return Ok(Err(
            "a counter control or counter offset of 0 (Linux disables such a unit)",
        ));
    }
    let bad = |why| DiscoveryError::BadAddress {
        entry,
        value: q[1],
        why,
    };
    let box_control = box_address(access, q[1]).ok_or_else(|| {
        bad(match access {
            AccessKind::Msr => "an MSR number has 32 bits",
            AccessKind::Pci => "a PCI address uses bits 30:0 only",
            AccessKind::Mmio => "unreachable",
        })
    })?;
    let past = |offset: u8| box_control.plus(u64::from(offset));
    let (Some(first_control), Some(first_counter)) = (past(t1.ctl_offset()), past(t1.ctr_offset()))
    else {
        return Err(bad("its counters' offsets leave the address space"));
    };
    Ok(Ok(DiscoveredBox {
        entry,
        box_type: t3.box_type(),
        box_id: t3.box_id(),
        access,
        box_control,
        first_control,
        first_counter,
        counters: t1.num_regs(),
        width: t1.bit_width(),
    }))
}

/// A box control address of `access` kind from the raw qword; `None` when it does not fit.
/// A PCI address is encoded as Linux and PCM decode it: offset 11:0, devfn 19:12, bus 27:20,
/// domain 30:28.
fn box_address(access: AccessKind, raw: u64) -> Option<TableAddress> {
    match access {
        AccessKind::Msr => u32::try_from(raw).ok().map(TableAddress::Msr),
        AccessKind::Mmio => Some(TableAddress::Mmio(raw)),
        AccessKind::Pci => (raw >> 31 == 0).then(|| {
            let devfn = (raw >> 12) as u8;
            TableAddress::Pci {
                domain: ((raw >> 28) & 0x7) as u8,
                bus: (raw >> 20) as u8,
                device: devfn >> 3,
                function: devfn & 0x7,
                offset: (raw & 0xFFF) as u16,
            }
        }),
    }
}

/// Where a box's registers lie, as Linux's generic driver reaches them: the address space
/// (MSRs; one PCI function; memory) and the range from its box control to the end of its last
/// counter and control (MSRs one apart; PCI counters and controls 8 bytes apart; memory-mapped
/// counters 8 and controls at least 4).
fn span(b: &DiscoveredBox) -> (u64, u64, u64) {
    let n = u64::from(b.counters.max(1));
    let (ctl_stride, ctr_stride, ctr_bytes) = match b.access {
        AccessKind::Msr => (1, 1, 1),
        AccessKind::Pci => (8, 8, 8),
        AccessKind::Mmio => (4, 8, 8),
    };
    let (space, start) = place(b.box_control);
    let end = |a: TableAddress, stride: u64, size: u64| place(a).1 + (n - 1) * stride + size;
    let last = end(b.first_control, ctl_stride, ctl_stride.min(4)).max(end(
        b.first_counter,
        ctr_stride,
        ctr_bytes,
    ));
    (space, start, last)
}

/// An address's space (0 for MSRs, 1 for memory, the PCI function otherwise) and place in it.
fn place(a: TableAddress) -> (u64, u64) {
    match a {
        TableAddress::Msr(n) => (0, u64::from(n)),
        TableAddress::Mmio(m) => (1, m),
        TableAddress::Pci {
            domain,
            bus,
            device,
            function,
            offset,
        } => (
            2 + (u64::from(domain) << 16
                | u64::from(bus) << 8
                | u64::from(device) << 3
                | u64::from(function)),
            u64::from(offset),
        ),
    }
}

/// No two boxes whose registers overlap ([`span`]): one of them is off, and writing one would
/// change the other.
fn check_disjoint(boxes: &[DiscoveredBox]) -> Result<(), DiscoveryError> {
    let mut spans: Vec<(u64, u64, u64, &DiscoveredBox)> = boxes
        .iter()
        .map(|b| {
            let (space, start, end) = span(b);
            (space, start, end, b)
        })
        .collect();
    spans.sort_by_key(|&(space, start, _, _)| (space, start));
    for pair in spans.windows(2) {
        let ((sa, _, ea, a), (sb, start_b, _, b)) = (pair[0], pair[1]);
        if sa == sb && start_b < ea {
            let (first, second) = if a.entry < b.entry { (a, b) } else { (b, a) };
            return Err(DiscoveryError::OverlappingBoxes {
                entries: (first.entry, second.entry),
                addresses: (first.box_control, second.box_control),
            });
        }
    }
    Ok(())
}

/// No box twice, no two boxes at one box control, and no two whose registers overlap.
fn check_unique(boxes: &[DiscoveredBox]) -> Result<(), DiscoveryError> {
    let mut ids = HashMap::new();
    let mut addresses = HashMap::new();
    for b in boxes {
        if let Some(first) = ids.insert((b.box_type, b.box_id), b.entry) {
            return Err(DiscoveryError::DuplicateBox {
                box_type: b.box_type,
                box_id: b.box_id,
                entries: (first, b.entry),
            });
        }
        if let Some(first) = addresses.insert(b.box_control, b.entry) {
            return Err(DiscoveryError::SharedAddress {
                address: b.box_control,
                entries: (first, b.entry),
            });
        }
    }
    check_disjoint(boxes)
}
