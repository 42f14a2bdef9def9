//! The spec's boxes against the table's: what the spec adds (layouts, roles, events, sources)
//! and what the table adds (which boxes this part has), side by side.
//!
//! A unit takes part when its `<pmu>` has a `discovery-type`; its instance k is box id k of
//! that type. For each such box the join compares the box control, every counter control
//! and every counter address (counter i where the table's counter 0 plus i strides puts it, as
//! Linux's generic driver reaches it), the number of general counters and their width. A PCI address is
//! compared by device, function and offset (the bus is the part's own); a memory-mapped one by
//! its physical address, where the part's windows give it ([`PartFacts::mmio`]).
//!
//! The spec's corrections of the table, as a public source makes them, are data too: a unit
//! whose `<discovery-ignored>` says the table's entries of its type are wrong is not compared
//! ([`BoxStatus::Ignored`]); a box the table does not list but the part's own count has
//! (`<box-count>`, read from the part: [`PartFacts::counts`]) is taken as the spec describes
//! it ([`BoxStatus::CountedByPart`]), and so is one the spec's `<discovery-count>` says the
//! part has ([`BoxStatus::CorrectedCount`]); a unit whose `<discovery-broken>` says its boxes
//! do not count is never used ([`BoxStatus::Broken`]).

use pmu_regs::{CounterKind, Location};

use super::{AccessKind, DiscoveredBox, DiscoveredTable, TableAddress};
use crate::boxes::{Boxes, PmuBox, Reg};
use crate::table_format::{spec_view, MmioPlace};

/// How one box of the spec and the table compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoxStatus {
    /// The table lists the box, and everything compared agrees.
    Matching,
    /// The spec has the box; the table does not list it (the part lacks it, or it is fused off).
    Missing,
    /// The table lists a box the spec does not describe (an unmapped type, or an id beyond the
    /// unit's instances).
    Unknown,
    /// Both have it, and they disagree.
    Disagreeing(Vec<Disagreement>),
    /// The spec says the table's entries of this box's type are known to be wrong (a public
    /// source ignores them): the spec's description is trusted and nothing is compared.
    Ignored {
        /// The source that ignores them (a `processors.xml` source id).
        source: &'static str,
        /// What is wrong with them.
        why: &'static str,
    },
    /// The table does not list the box, but the part's own count of its unit's boxes, read
    /// as the spec's `<box-count>` says, has it: the spec's description is trusted.
    CountedByPart {
        /// The boxes of the unit the part has.
        count: u32,
        /// What was read.
        read: String,
        /// The source of the rule.
        source: &'static str,
    },
    /// The table does not list the box, but the spec says the part has this many of the
    /// unit's boxes whatever its table lists (`<discovery-count>`): the spec's description is
    /// trusted.
    CorrectedCount {
        /// The boxes of the unit the part has.
        count: u32,
        /// The source of the correction.
        source: &'static str,
        /// What is wrong with the table's count.
        why: &'static str,
    },
    /// The spec says the unit's boxes do not count on the parts whose table lists them
    /// (`<discovery-broken>`): the box is not used, never shown as counting 0.
    Broken {
        /// The source that says so.
        source: &'static str,
        /// What is wrong with the boxes.
        why: &'static str,
    },
}

impl BoxStatus {
    /// `matching`, `missing`, `unknown`, `disagreeing`, `ignored`, `counted-by-part`,
    /// `corrected-count`, `broken`.
    pub fn as_str(&self) -> &'static str {
        match self {
            BoxStatus::Matching => "matching",
            BoxStatus::Missing => "missing",
            BoxStatus::Unknown => "unknown",
            BoxStatus::Disagreeing(_) => "disagreeing",
            BoxStatus::Ignored { .. } => "ignored",
            BoxStatus::CountedByPart { .. } => "counted-by-part",
            BoxStatus::CorrectedCount { .. } => "corrected-count",
            BoxStatus::Broken { .. } => "broken",
        }
    }

    /// Whether the box may be programmed as the spec describes it: the table agrees, or the
    /// spec's correction of the table applies.
    pub fn is_trusted(&self) -> bool {
        matches!(
            self,
            BoxStatus::Matching
                | BoxStatus::Ignored { .. }
                | BoxStatus::CountedByPart { .. }
                | BoxStatus::CorrectedCount { .. }
        )
    }

    /// What the status means for this box, in words (empty for a matching box): each
    /// disagreement with the spec's value, source and the table's value; the correction
    /// that applies and its source.
    pub fn detail(&self) -> String {
        match self {
            BoxStatus::Matching => String::new(),
            BoxStatus::Disagreeing(d) => d
                .iter()
                .map(|d| {
                    format!(
                        "{}: spec {} ({}), table {}",
                        d.what, d.spec, d.source, d.table
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            BoxStatus::Missing => "the spec has it; the table does not list it".into(),
            BoxStatus::Unknown => {
                "the table lists it; no unit of the spec has this type and id".into()
            }
            BoxStatus::Ignored { source, why } => {
                format!("table ignored ({source}): {why}")
            }
            BoxStatus::CountedByPart {
                count,
                read,
                source,
            } => format!(
                "the table does not list it; the part has {count} of its unit's boxes ({read}; {source})"
            ),
            BoxStatus::CorrectedCount { count, source, why } => format!(
                "the table does not list it; the part has {count} of its unit's boxes ({source}: {why})"
            ),
            BoxStatus::Broken { source, why } => {
                format!("known not to count ({source}): {why}")
            }
        }
    }
}

/// How many boxes of a unit the part itself says it has (its `<box-count>`, read from the
/// part), for the join.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartCount {
    /// The unit.
    pub unit: &'static str,
    /// Boxes 0 to `count - 1` are present.
    pub count: u32,
    /// What was read, for messages.
    pub read: String,
    /// The public source of the rule.
    pub source: &'static str,
}

/// What the join knows of the part besides its table.
#[derive(Default)]
pub struct PartFacts<'a> {
    /// Box counts read from the part, for units whose `<box-count>` the part answered.
    pub counts: Vec<PartCount>,
    /// Where the part's memory-mapped registers are (their physical addresses on the
    /// table's socket); without it memory-mapped addresses are not compared.
    pub mmio: Option<Box<dyn Fn(Reg) -> Option<u64> + 'a>>,
}

/// One value the spec and the table give differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// What: `box control`, `counter control 0`, `counter 0`, `counter control` and `counter`
    /// (those after the first; the spec's value names the register), `counters`, `width`.
    pub what: &'static str,
    /// The spec's value.
    pub spec: String,
    /// The table's value.
    pub table: String,
    /// The public source of the spec's value (a `processors.xml` source id).
    pub source: &'static str,
}

/// One box of the joined view.
#[derive(Debug, Clone)]
pub struct JoinedBox {
    /// The spec's box (`None` for a box only the table lists).
    pub spec: Option<&'static PmuBox>,
    /// Box type.
    pub box_type: u16,
    /// Box id.
    pub box_id: u16,
    /// The table's entry (`None` for a missing box).
    pub table: Option<DiscoveredBox>,
    /// How they compare.
    pub status: BoxStatus,
    /// For a box whose type the spec names but describes in no unit file
    /// (`<discovery-types>`): the domain's id (empty for the one table of a part without
    /// domains) and the type's name ([`super::join_domain`], [`join_on`]).
    pub named: Option<(&'static str, &'static str)>,
}

impl JoinedBox {
    /// The spec's name (`CHA3`), the domain and type name a `<discovery-types>` gives
    /// (`cbb CBO 3`, or `PCU 0` on a part with one table), or `type T id I` for a box the
    /// spec does not know.
    pub fn name(&self) -> String {
        match (self.spec, self.named) {
            (Some(b), _) => b.instance.to_string(),
            (None, Some(("", name))) => format!("{name} {}", self.box_id),
            (None, Some((domain, name))) => format!("{domain} {name} {}", self.box_id),
            (None, None) => format!("type {} id {}", self.box_type, self.box_id),
        }
    }
}

/// Every box of a processor's spec that takes part in discovery, and every box of a table.
#[derive(Debug, Clone)]
pub struct Joined {
    /// Spec boxes in spec order, then the table's unknown boxes in table order.
    pub boxes: Vec<JoinedBox>,
}

impl Joined {
    /// The joined box of spec box `b`, if its unit takes part in discovery.
    pub fn of(&self, b: &PmuBox) -> Option<&JoinedBox> {
        self.boxes
            .iter()
            .find(|j| j.spec.is_some_and(|s| std::ptr::eq(s, b)))
    }

    /// Whether every box matches, or a correction of the spec applies to it.
    pub fn all_match(&self) -> bool {
        self.boxes.iter().all(|b| b.status.is_trusted())
    }
}

/// Joins the boxes of `spec` with `table`, knowing nothing else of the part (memory-mapped
/// addresses are not compared, no box count is read): [`join_on`].
pub fn join(spec: &'static Boxes, table: &DiscoveredTable) -> Joined {
    join_on(spec, table, &PartFacts::default())
}

/// Joins the boxes of `spec` with `table`, with what is known of the part: the box counts
/// it gives and where its memory-mapped registers are.
pub fn join_on(spec: &'static Boxes, table: &DiscoveredTable, part: &PartFacts<'_>) -> Joined {
    let mut used = vec![false; table.boxes.len()];
    let mut boxes = Vec::new();
    for b in &spec.boxes {
        let Some(box_type) = b.pmu.discovery_type else {
            continue;
        };
        let box_id = b.position as u16;
        let found = table
            .boxes
            .iter()
            .position(|t| t.box_type == box_type && t.box_id == box_id);
        if let Some(i) = found {
            used[i] = true;
        }
        let counted = part
            .counts
            .iter()
            .find(|c| c.unit == b.unit.name && (b.position as u32) < c.count);
        let status = match (b.pmu.discovery_ignored, found, counted) {
            _ if b.pmu.discovery_broken.is_some() => {
                let broken = b.pmu.discovery_broken.expect("checked");
                BoxStatus::Broken {
                    source: broken.source,
                    why: broken.description,
                }
            }
            (Some(ignored), _, _) => BoxStatus::Ignored {
                source: ignored.source,
                why: ignored.description,
            },
            (None, None, None) if corrected(b).is_some() => {
                let c = corrected(b).expect("checked");
                BoxStatus::CorrectedCount {
                    count: c.boxes,
                    source: c.source,
                    why: c.description,
                }
            }
            (None, None, Some(c)) => BoxStatus::CountedByPart {
                count: c.count,
                read: c.read.clone(),
                source: c.source,
            },
            (None, None, None) => BoxStatus::Missing,
            (None, Some(i), _) => {
                let d = compare(b, &table.boxes[i], part.mmio.as_deref());
                if d.is_empty() {
                    BoxStatus::Matching
                } else {
                    BoxStatus::Disagreeing(d)
                }
            }
        };
        boxes.push(JoinedBox {
            spec: Some(b),
            box_type,
            box_id,
            table: found.map(|i| table.boxes[i]),
            status,
            named: None,
        });
    }
    // A type the spec names without a unit file (`<discovery-types>`) is shown by its name;
    // with no registers described, its boxes stay unknown.
    let (names, _) = spec.processor.discovery_types;
    for (t, _) in table.boxes.iter().zip(&used).filter(|(_, u)| !**u) {
        boxes.push(JoinedBox {
            spec: None,
            box_type: t.box_type,
            box_id: t.box_id,
            table: Some(*t),
            status: BoxStatus::Unknown,
            named: names
                .iter()
                .find(|(ty, _)| *ty == t.box_type)
                .map(|&(_, name)| ("", name)),
        });
    }
    Joined { boxes }
}

/// The spec's `<discovery-count>` of `b`'s unit, where it gives the part box `b`.
fn corrected(b: &PmuBox) -> Option<pmu_regs::DiscoveryCountInfo> {
    b.pmu
        .discovery_count
        .filter(|c| (b.position as u32) < c.boxes)
}

fn compare(b: &PmuBox, t: &DiscoveredBox, mmio: Option<MmioPlace<'_>>) -> Vec<Disagreement> {
    if b.table_placed() {
        return compare_placed(b, t);
    }
    let v = spec_view(b);
    let mut out = Vec::new();
    for (what, reg, at) in [
        ("box control", v.box_control, t.box_control),
        ("counter control 0", v.first_control, t.first_control),
        ("counter 0", v.first_counter, t.first_counter),
    ] {
        if let Some(reg) = reg {
            if same_place(reg, at, mmio) == Some(false) {
                out.push(Disagreement {
                    what,
                    spec: format!("{} at {}", reg.name(), location_text(reg.addr.location)),
                    table: at.to_string(),
                    source: reg.addr.source,
                });
            }
        }
    }
    out.extend(every_counter(b, t, mmio));
    let source = v.first_counter.map_or("", |c| c.addr.source);
    if v.counters != usize::from(t.counters) {
        out.push(Disagreement {
            what: "counters",
            spec: v.counters.to_string(),
            table: t.counters.to_string(),
            source,
        });
    }
    if let Some(w) = v.width.filter(|w| *w != u32::from(t.width)) {
        out.push(Disagreement {
            what: "width",
            spec: w.to_string(),
            table: t.width.to_string(),
            source,
        });
    }
    out
}

/// A table-placed box (the spec's `<from-table>`) against its entry: the table gives its
/// addresses, so only what the spec still says is compared, its general counters' number and
/// width, each citing the source of the counters' placement.
fn compare_placed(b: &PmuBox, t: &DiscoveredBox) -> Vec<Disagreement> {
    let general: Vec<_> = b
        .pmu
        .counters
        .iter()
        .filter(|c| c.kind == CounterKind::General)
        .collect();
    let source = general
        .first()
        .and_then(|c| match c.counter.register.addresses {
            pmu_regs::Addresses::FromTable(p) => Some(p.source),
            _ => None,
        })
        .unwrap_or("");
    let mut out = Vec::new();
    let space = general.first().map(|c| c.counter.register.space);
    if let Some(space) = space.filter(|s| access_space(t.access) != *s) {
        out.push(Disagreement {
            what: "access",
            spec: space.as_str().to_string(),
            table: t.access.as_str().to_string(),
            source,
        });
    }
    if general.len() != usize::from(t.counters) {
        out.push(Disagreement {
            what: "counters",
            spec: general.len().to_string(),
            table: t.counters.to_string(),
            source,
        });
    }
    if let Some(w) = general
        .first()
        .map(|c| c.width)
        .filter(|w| *w != u32::from(t.width))
    {
        out.push(Disagreement {
            what: "width",
            spec: w.to_string(),
            table: t.width.to_string(),
            source,
        });
    }
    out
}

/// Where a table entry puts an MSR box, for placing a table-placed box there
/// ([`crate::table_placed::place`]); `None` for a PCI or memory-mapped entry ([`entry_place`]
/// places those) or an entry whose counters lie before its box control.
pub fn msr_place(t: &DiscoveredBox) -> Option<crate::table_placed::MsrPlace> {
    match (t.box_control, t.first_control, t.first_counter) {
        (TableAddress::Msr(b), TableAddress::Msr(c), TableAddress::Msr(r)) => {
            Some(crate::table_placed::MsrPlace {
                box_control: b,
                ctl_offset: c.checked_sub(b)?,
                ctr_offset: r.checked_sub(b)?,
            })
        }
        _ => None,
    }
}

/// The spec's space for a table entry's access type.
fn access_space(a: AccessKind) -> pmu_regs::Space {
    match a {
        AccessKind::Msr => pmu_regs::Space::Msr,
        AccessKind::Pci => pmu_regs::Space::Pci,
        AccessKind::Mmio => pmu_regs::Space::Mmio,
    }
}

/// Where a table entry puts a box of any access type, for placing a table-placed box there
/// ([`crate::table_placed::place`]): an MSR box as [`msr_place`] says, a PCI box in the
/// function and at the offsets the entry names, a memory-mapped box at its physical addresses;
/// `socket` is the socket whose table it is. `None` for an entry whose counters lie before its
/// box control, or whose PCI addresses are in another function than its box control.
pub fn entry_place(t: &DiscoveredBox, socket: u32) -> Option<crate::table_placed::EntryPlace> {
    use crate::table_placed::EntryPlace;
    match (t.box_control, t.first_control, t.first_counter) {
        (TableAddress::Msr(_), _, _) => msr_place(t).map(EntryPlace::Msr),
        (
            TableAddress::Pci {
                domain,
                bus,
                device,
                function,
                offset,
            },
            TableAddress::Pci { offset: c, .. },
            TableAddress::Pci { offset: r, .. },
        ) => {
            let same = |a: TableAddress| {
                matches!(a, TableAddress::Pci { bus: b, device: d, function: f, .. }
                    if (b, d, f) == (bus, device, function))
            };
            if !(same(t.first_control) && same(t.first_counter)) {
                return None;
            }
            Some(EntryPlace::Pci {
                socket,
                device: crate::Bdf {
                    segment: u16::from(domain),
                    bus,
                    device,
                    function,
                },
                box_control: offset,
                ctl_offset: c.checked_sub(offset)?,
                ctr_offset: r.checked_sub(offset)?,
            })
        }
        (TableAddress::Mmio(b), TableAddress::Mmio(c), TableAddress::Mmio(r)) => {
            Some(EntryPlace::Mmio {
                socket,
                box_control: b,
                ctl_offset: c.checked_sub(b)?,
                ctr_offset: r.checked_sub(b)?,
            })
        }
        _ => None,
    }
}

/// How far apart the table's counters and their controls are, as Linux's generic discovery
/// driver reaches them (uncore_discovery.c and uncore.h): MSR boxes one register apart; PCI and
/// memory-mapped boxes 8 bytes apart for counters, and for controls 8 (the generic PCI box and
/// the memory-mapped types it marks `UNCORE_BOX_FLAG_CTL_OFFS8`) or 4 (the generic
/// memory-mapped box). Returns (control strides allowed, counter stride).
fn strides(access: AccessKind) -> (&'static [u64], u64) {
    match access {
        AccessKind::Msr => (&[1], 1),
        AccessKind::Pci | AccessKind::Mmio => (&[8, 4], 8),
    }
}

/// General counter i (i >= 1, in number order) and its control against where the table puts
/// them: counter 0 and control 0 plus i strides. A wrong stride in the spec (or the table)
/// shows here, where comparing only the first of each passes it.
fn every_counter(b: &PmuBox, t: &DiscoveredBox, mmio: Option<MmioPlace<'_>>) -> Vec<Disagreement> {
    let mut general: Vec<_> = b
        .counters
        .iter()
        .filter(|c| c.info.kind == CounterKind::General)
        .collect();
    general.sort_by_key(|c| c.number());
    let (control_strides, counter_stride) = strides(t.access);
    let mut out = Vec::new();
    for (i, c) in general
        .iter()
        .enumerate()
        .take(usize::from(t.counters))
        .skip(1)
    {
        let at = |first: TableAddress, stride: u64| first.plus(i as u64 * stride);
        if let Some(expected) = at(t.first_counter, counter_stride) {
            if same_place(c.counter, expected, mmio) == Some(false) {
                out.push(misplaced("counter", c.counter, expected, i, counter_stride));
            }
        }
        let Some(ctl) = c.control else { continue };
        let placed = control_strides.iter().any(|&s| {
            at(t.first_control, s).is_none_or(|e| same_place(ctl, e, mmio) != Some(false))
        });
        if !placed {
            let s = control_strides[0];
            if let Some(expected) = at(t.first_control, s) {
                out.push(misplaced("counter control", ctl, expected, i, s));
            }
        }
    }
    out
}

/// A register the spec places elsewhere than the table's first one plus `i` strides.
fn misplaced(
    what: &'static str,
    reg: Reg,
    table: TableAddress,
    i: usize,
    stride: u64,
) -> Disagreement {
    Disagreement {
        what,
        spec: format!("{} at {}", reg.name(), location_text(reg.addr.location)),
        table: format!("{table} ({what} 0 + {i} x {stride})"),
        source: reg.addr.source,
    }
}

/// Whether a spec register and a table address are the same register; `None` when they
/// cannot be compared (a memory-mapped register whose physical address is not known).
fn same_place(reg: Reg, table: TableAddress, mmio: Option<MmioPlace<'_>>) -> Option<bool> {
    match (reg.addr.location, table) {
        (Location::Mmio { .. }, TableAddress::Mmio(b)) => mmio.and_then(|m| m(reg)).map(|a| a == b),
        (Location::Msr(a), TableAddress::Msr(b)) => Some(a == b),
        (
            Location::Pci {
                device,
                function,
                offset,
                ..
            },
            TableAddress::Pci {
                device: d,
                function: f,
                offset: o,
                ..
            },
        ) => Some((device, function, offset) == (d, f, o)),
        (_, TableAddress::Mmio(_)) | (Location::Table(_), _) => None,
        _ => Some(false),
    }
}

fn location_text(loc: Location) -> String {
    match loc {
        Location::Msr(a) => format!("MSR {a:#x}"),
        Location::Pci {
            device,
            function,
            offset,
            ..
        } => format!("PCI dev {device} fn {function} offset {offset:#x}"),
        Location::Table(o) => format!("table offset {o:#x}"),
        Location::SysReg(e) => format!("system register {e}"),
        Location::Mmio {
            controller,
            channel,
            offset,
        } => format!("MMIO controller {controller} channel {channel} offset {offset:#x}"),
    }
}
