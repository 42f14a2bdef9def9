//! The discovery tables of a simulated part with several discovery domains
//! (`ProcessorInfo::discovery_domains`: Diamond Rapids' IMH and CBB), served through the
//! access traits as the part would serve them: a PCI domain's table behind the discovery
//! capability of a device with the domain's id, an MSR domain's at the address its MSR holds.
//!
//! The boxes are the types the spec names (`<discovery-types>`), plus boxes of each type a
//! domain ignores. Which domain holds which named type, how many boxes of each, and every
//! address are the simulator's own invention (no public source gives them): the boxes of
//! [`MSR_DOMAIN_TYPES`] are MSR boxes in each MSR domain's table, every other named type is a
//! memory-mapped box in each PCI domain's table; each box's registers are self-consistent
//! (no two share an address or overlap), so the reader accepts the tables. The discovery
//! module reads and joins them (the part module's `joined_domains`).
//!
//! A box of a unit the spec places from the table (`<from-table>`: Diamond Rapids' CBO) is
//! listed where the simulated part models it ([`super::table_placed::places`]), so a session
//! that places it from this table programs the registers the simulator counts with. Each
//! table's global control is memory-mapped (Linux's `uncore_mmio_global_init` maps it so); a
//! domain with a `global_init` powers up with its freeze_all bit (bit 0) set, as Diamond
//! Rapids' CBB tables do (tip b575fc0e3357), and no box of a type its table lists counts
//! until software clears it ([`DomainGlobal`]).

use pmu_regs::{DiscoveryDomain, DomainPlace, ProcessorInfo};

use crate::access::{
    AccessError, BackendError, BackendResult, Bdf, MmioAccess, MsrAccess, Op, PciAccess, Target,
};
use crate::boxes::Boxes;
use crate::table_format::{AccessKind, MemoryTable, TableBox};
use crate::table_placed::EntryPlace;

/// The freeze_all bit of a discovery table's global control (bit 0, as the comment of
/// Linux's `uncore_mmio_global_init` gives it): while set, no box of the table counts.
pub const FREEZE_ALL: u32 = 1;

/// The global control of one simulated domain table, as the simulated part holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainGlobal {
    /// Its physical address (memory-mapped), as the table's global state gives it.
    pub address: u64,
    /// Its 32-bit value: [`FREEZE_ALL`] at power-on for a domain with a `global_init`.
    pub value: u32,
    /// The box types the table lists: the boxes its freeze holds.
    pub types: Vec<u16>,
}

/// The named types the simulator puts in a domain found through an MSR (a compute die's:
/// the caching, coherence and mesh agents), by the names Linux gives them.
pub const MSR_DOMAIN_TYPES: &[&str] = &["CBO", "SANTA", "CNCU", "ULA", "SBO", "CMS"];

/// How many boxes of each type the simulated part has (CBO: one per simulated core group).
fn boxes_of(name: &str) -> u16 {
    if name == "CBO" {
        4
    } else {
        2
    }
}

/// Where the simulated domains' tables are: the n-th domain's at this plus n MiB.
pub const DOMAIN_TABLES: u64 = 0xD000_0000;
/// Where the simulated memory-mapped boxes are: box k at this plus k x 4 KiB.
const MMIO_BOXES: u64 = 0xE000_0000;
/// Where the simulated MSR boxes are: box k at this plus k x 0x10.
const MSR_BOXES: u64 = 0x3000;

/// One simulated domain's table.
#[derive(Debug, Clone)]
pub struct SimTable {
    /// The domain.
    pub domain: &'static DiscoveryDomain,
    /// The table (corrupt it freely: its bytes, its device's configuration space).
    pub table: MemoryTable,
    /// The box types it lists.
    pub types: Vec<u16>,
}

/// The simulated part's domains and their tables (one socket, one die), served as registers.
#[derive(Debug, Clone)]
pub struct SimDomains {
    /// The processor.
    pub processor: &'static ProcessorInfo,
    /// One table per domain, in the spec's order.
    pub tables: Vec<SimTable>,
}

impl SimDomains {
    /// The tables `processor` publishes, `None` for one without discovery domains.
    pub fn of(processor: &'static ProcessorInfo) -> Option<Self> {
        let mut next_msr = MSR_BOXES;
        let mut next_mmio = MMIO_BOXES;
        let tables = processor
            .discovery_domains
            .iter()
            .enumerate()
            .map(|(n, domain)| {
                let msr = matches!(domain.place, DomainPlace::Msr(_));
                let placed = placed_msr_boxes(processor);
                let named = processor
                    .discovery_types
                    .0
                    .iter()
                    .filter(|(_, name)| MSR_DOMAIN_TYPES.contains(name) == msr);
                let types = named.chain(domain.ignored.iter());
                let mut boxes = Vec::new();
                for &(box_type, name) in types {
                    for box_id in 0..boxes_of(name) {
                        if let Some(b) = placed
                            .iter()
                            .find(|b| (b.box_type, b.box_id) == (box_type, box_id))
                        {
                            boxes.push(*b);
                            continue;
                        }
                        let at = if msr { &mut next_msr } else { &mut next_mmio };
                        boxes.push(sim_box(box_type, box_id, msr, *at));
                        *at += if msr { 0x10 } else { 0x1000 };
                    }
                }
                let base = DOMAIN_TABLES + ((n as u64) << 20);
                // The global control: memory-mapped, in the table's megabyte past its bytes.
                let global = global_control(n);
                let mut types: Vec<u16> = boxes.iter().map(|b| b.box_type).collect();
                types.dedup();
                SimTable {
                    domain,
                    table: MemoryTable::build(base, device_of(n), global, &boxes),
                    types,
                }
            })
            .collect::<Vec<_>>();
        (!tables.is_empty()).then_some(SimDomains { processor, tables })
    }

    /// The global control of every table, at its power-on value: [`FREEZE_ALL`] for a domain
    /// with a `global_init`, 0 for any other.
    pub fn globals(&self) -> Vec<DomainGlobal> {
        self.tables
            .iter()
            .enumerate()
            .map(|(n, t)| DomainGlobal {
                address: global_control(n),
                value: if t.domain.global_init.is_some() {
                    FREEZE_ALL
                } else {
                    0
                },
                types: t.types.clone(),
            })
            .collect()
    }

    /// The table of domain `id`, to corrupt.
    pub fn table_mut(&mut self, id: &str) -> Option<&mut MemoryTable> {
        self.tables
            .iter_mut()
            .find(|t| t.domain.id == id)
            .map(|t| &mut t.table)
    }

    /// The PCI devices of the part with their device ids, as `/sys/bus/pci/devices` would
    /// list them: each PCI domain's discovery device.
    pub fn devices(&self) -> Vec<(Bdf, u16)> {
        self.tables
            .iter()
            .filter_map(|t| match t.domain.place {
                DomainPlace::PciDevice(id) => Some((t.table.device, id)),
                DomainPlace::Msr(_) => None,
            })
            .collect()
    }
}

/// The n-th domain table's global control: half a megabyte into its table's megabyte.
fn global_control(n: usize) -> u64 {
    DOMAIN_TABLES + ((n as u64) << 20) + 0x8_0000
}

/// The boxes of `processor`'s table-placed units (MSR boxes), as table entries, where the
/// simulated part models them.
fn placed_msr_boxes(processor: &'static ProcessorInfo) -> Vec<TableBox> {
    let spec = Boxes::of(processor);
    // MSR boxes sit at the same MSRs on every socket: no bus is needed to place them.
    super::table_placed::places(spec, &[])
        .into_iter()
        .filter_map(|(instance, at)| {
            let EntryPlace::Msr(at) = *at.first()? else {
                return None;
            };
            let b = spec.find(instance)?;
            Some(TableBox {
                box_type: b.pmu.discovery_type?,
                box_id: u16::try_from(b.position).ok()?,
                access: AccessKind::Msr,
                box_control: u64::from(at.box_control),
                ctl_offset: u8::try_from(at.ctl_offset).ok()?,
                ctr_offset: u8::try_from(at.ctr_offset).ok()?,
                counters: u8::try_from(b.pmu.counters.len()).ok()?,
                width: 48,
            })
        })
        .collect()
}

/// The discovery device of the n-th domain (for a PCI domain; any other ignores it).
fn device_of(n: usize) -> Bdf {
    Bdf::new(0, 3, n as u8)
}

/// A simulated box of four 48-bit counters at `at`: an MSR box's controls 2 to 5 and counters
/// 8 to 11 past its box control; a memory-mapped box's controls 8 bytes on (8 apart) and
/// counters 0x40 bytes on.
fn sim_box(box_type: u16, box_id: u16, msr: bool, at: u64) -> TableBox {
    TableBox {
        box_type,
        box_id,
        access: if msr {
            AccessKind::Msr
        } else {
            AccessKind::Mmio
        },
        box_control: at,
        ctl_offset: if msr { 2 } else { 8 },
        ctr_offset: if msr { 8 } else { 0x40 },
        counters: 4,
        width: 48,
    }
}

fn refuse(op: Op, target: Target) -> BackendError {
    BackendError::access(op, target, AccessError::Short { done: 0, wanted: 8 })
}

impl MmioAccess for SimDomains {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        let t = self.tables.iter().find(|t| {
            address >= t.table.base && address - t.table.base < t.table.bytes.len() as u64
        });
        match t {
            Some(t) => t.table.read_mmio(address, width),
            None => Err(refuse(Op::Read, Target::Mmio { address })),
        }
    }

    fn write_mmio(&self, address: u64, _width: u32, _value: u64) -> BackendResult<()> {
        Err(refuse(Op::Write, Target::Mmio { address }))
    }
}

impl PciAccess for SimDomains {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        let t = self
            .tables
            .iter()
            .find(|t| t.table.device == bdf && matches!(t.domain.place, DomainPlace::PciDevice(_)));
        match t {
            Some(t) => t.table.read_dword(bdf, offset),
            None => Err(refuse(Op::Read, Target::Pci { bdf, offset })),
        }
    }

    fn write_dword(&self, bdf: Bdf, offset: u16, _value: u32) -> BackendResult<()> {
        Err(refuse(Op::Write, Target::Pci { bdf, offset }))
    }
}

impl MsrAccess for SimDomains {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        let t = self
            .tables
            .iter()
            .find(|t| t.domain.place == DomainPlace::Msr(address));
        match t {
            Some(t) if cpu == 0 => Ok(t.table.base),
            _ => Err(refuse(Op::Read, Target::Msr { cpu, address })),
        }
    }

    fn write_msr(&self, cpu: u32, address: u32, _value: u64) -> BackendResult<()> {
        Err(refuse(Op::Write, Target::Msr { cpu, address }))
    }
}
