//! Several discovery domains (`ProcessorInfo::discovery_domains`): each domain's tables found
//! as the spec says (through the discovery capability of every PCI device with the domain's
//! id, or at the address the domain's MSR holds on one CPU of each socket or die), read, and
//! joined on their own. A table that cannot be found or read is an error of its domain
//! ([`DiscoveryError::InDomain`]); the other domains' tables are read and joined all the same.
//!
//! A part without unit files for its boxes (Diamond Rapids) is joined by the types the spec
//! names (`<discovery-types>`): a box of a named type in a domain that does not ignore it is
//! `matching` (the reader has checked its registers against every other box of its table:
//! no shared address, no overlap, no box listed twice), one of a type the domain ignores is
//! `ignored`, and any other is `unknown`.

use pmu_regs::{DiscoveryDomain, DomainPlace, ProcessorInfo};

use super::{locate, read_table, BoxStatus, DiscoveredTable, DiscoveryError, Joined, JoinedBox};
use crate::access::{Bdf, MmioAccess, MsrAccess, PciAccess};

/// One table of one domain, as read.
#[derive(Debug)]
pub struct DomainTable {
    /// The domain.
    pub domain: &'static DiscoveryDomain,
    /// The table's socket or die (the domain's `per`), in order.
    pub index: u32,
    /// The table, or why it could not be found or read ([`DiscoveryError::InDomain`]).
    pub table: Result<DiscoveredTable, DiscoveryError>,
}

/// One table of one domain, joined with the spec.
#[derive(Debug)]
pub struct DomainJoined {
    /// The domain.
    pub domain: &'static DiscoveryDomain,
    /// The table's socket or die, in order.
    pub index: u32,
    /// The joined boxes, or why the table could not be found or read.
    pub joined: Result<Joined, DiscoveryError>,
}

/// Every table of every domain of `processor`, read through `access`: a PCI domain's on each
/// of `devices` (each device and its id, as `/sys/bus/pci/devices` lists them) with the
/// domain's id, an MSR domain's at the address its MSR holds on each of `cpus` (one CPU of
/// each socket, or of each die for a per-die domain, as the caller's topology gives them).
/// Empty for a processor without domains.
pub fn read_domains<A>(
    processor: &'static ProcessorInfo,
    access: &A,
    devices: &[(Bdf, u16)],
    cpus: impl Fn(&DiscoveryDomain) -> Vec<u32>,
) -> Vec<DomainTable>
where
    A: PciAccess + MmioAccess + MsrAccess + ?Sized,
{
    let mut out = Vec::new();
    for domain in processor.discovery_domains {
        let wrap = |index: u32, r: Result<DiscoveredTable, DiscoveryError>| DomainTable {
            domain,
            index,
            table: r.map_err(|e| DiscoveryError::InDomain {
                domain: domain.id,
                index,
                source: Box::new(e),
            }),
        };
        match domain.place {
            DomainPlace::PciDevice(id) => {
                let found = devices.iter().filter(|(_, d)| *d == id).map(|(b, _)| *b);
                for (index, bdf) in (0u32..).zip(found) {
                    match locate(access, bdf) {
                        Ok(tables) => out.extend(
                            tables
                                .iter()
                                .map(|l| wrap(index, read_table(access, l.address))),
                        ),
                        Err(e) => out.push(wrap(index, Err(e))),
                    }
                }
            }
            DomainPlace::Msr(msr) => {
                for (index, cpu) in (0u32..).zip(cpus(domain)) {
                    out.push(wrap(index, msr_table(access, msr, cpu)));
                }
            }
        }
    }
    out
}

/// The table at the address MSR `msr` holds on `cpu`.
fn msr_table<A>(access: &A, msr: u32, cpu: u32) -> Result<DiscoveredTable, DiscoveryError>
where
    A: MmioAccess + MsrAccess + ?Sized,
{
    let value = access
        .read_msr(cpu, msr)
        .map_err(|source| DiscoveryError::Read {
            what: format!("the discovery table's address in MSR {msr:#x} on CPU {cpu}"),
            source,
        })?;
    if value == 0 || value == u64::MAX {
        return Err(DiscoveryError::NoTableAddress { msr, cpu, value });
    }
    read_table(access, value)
}

/// Every table of [`read_domains`] joined with `processor`'s spec ([`join_domain`]); a table
/// that could not be read stays its domain's error.
pub fn join_domains(
    processor: &'static ProcessorInfo,
    tables: Vec<DomainTable>,
) -> Vec<DomainJoined> {
    tables
        .into_iter()
        .map(|t| DomainJoined {
            domain: t.domain,
            index: t.index,
            joined: t
                .table
                .map(|table| join_domain(processor, t.domain, &table)),
        })
        .collect()
}

/// `table` of `domain` joined with the types `processor`'s spec names: a box of a type the
/// domain ignores is `ignored` (the domain's source), one of a type `<discovery-types>` names
/// `matching` (named `domain TYPE id`), any other `unknown`.
pub fn join_domain(
    processor: &'static ProcessorInfo,
    domain: &'static DiscoveryDomain,
    table: &DiscoveredTable,
) -> Joined {
    let (names, _) = processor.discovery_types;
    let boxes = table
        .boxes
        .iter()
        .map(|t| {
            let ignored = domain.ignored.iter().find(|(ty, _)| *ty == t.box_type);
            let named = names.iter().find(|(ty, _)| *ty == t.box_type);
            let (status, named) = match (ignored, named) {
                (Some((_, name)), _) => (
                    BoxStatus::Ignored {
                        source: domain.source,
                        why: "software ignores this domain's entries of the type as broken (the domain's ignore list)",
                    },
                    Some((domain.id, *name)),
                ),
                (None, Some((_, name))) => (BoxStatus::Matching, Some((domain.id, *name))),
                (None, None) => (BoxStatus::Unknown, None),
            };
            JoinedBox {
                spec: None,
                box_type: t.box_type,
                box_id: t.box_id,
                table: Some(*t),
                status,
                named,
            }
        })
        .collect();
    Joined { boxes }
}

/// The joins of [`join_domains`] as (index, joins) rows, the socket or die of each table; the
/// first domain whose table could not be read is the error ([`DiscoveryError::InDomain`]).
pub fn readable_domains(joined: Vec<DomainJoined>) -> Result<Vec<(u32, Joined)>, DiscoveryError> {
    joined
        .into_iter()
        .map(|d| d.joined.map(|j| (d.index, j)))
        .collect()
}
