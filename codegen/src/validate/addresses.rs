//! Register addresses: one per instance and index, and no two registers at one address.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::unit::RegisterScope;
use super::*;

/// One address element (`<msr>`, `<pci>`, ...): its base address (if it parses), for
/// expanding.
pub(super) struct Entry<'s> {
    pub(super) at: usize,
    pub(super) instance: &'s str,
    pub(super) index: Option<&'s str>,
    pub(super) stride: Option<&'s str>,
    pub(super) base: Option<Location>,
    pub(super) source: &'s str,
}

/// Where each (instance, index) got its address: the element's offset.
type Seen = BTreeMap<(usize, u32), usize>;

impl Validator {
    /// A register's addresses, expanded to one per instance and index, or why none is known.
    pub(super) fn addresses(&mut self, reg: &RegisterScope<'_>) -> Addresses {
        let r = reg.raw;
        if let Some(u) = &r.address_unknown {
            return self.address_unknown(reg, u);
        }
        if let Some(t) = &r.from_table {
            return self.placed_by_table(reg, t);
        }
        let msr = r.msr.iter().map(|m| self.msr_entry(reg, m));
        let mut entries: Vec<Entry> = msr.collect();
        entries.extend(r.pci.iter().map(|p| self.pci_entry(reg, p)));
        entries.extend(r.mmio.iter().map(|m| Entry {
            at: m.at,
            instance: &m.instance,
            index: m.index.as_deref(),
            stride: m.stride.as_deref(),
            base: self.mmio_location(reg, m),
            source: &m.source,
        }));
        entries.extend(r.table.iter().map(|t| self.table_entry(reg, t)));
        entries.extend(r.sysreg.iter().map(|t| self.sysreg_entry(reg, t)));
        if entries.is_empty() {
            self.push(reg.ctx.error(r.at, "the register has no address", "add <msr>/<pci>/<mmio>/<table>/<sysreg> elements, or <address-unknown reason=\"...\"/> if no source gives one"));
        }
        let mut seen = Seen::new();
        let mut addresses = Vec::new();
        for e in &entries {
            self.expand_entry(reg, e, &mut seen, &mut addresses);
        }
        if !entries.is_empty() {
            self.missing_addresses(reg, &seen);
        }
        addresses.sort_by_key(|a| (a.instance, a.index));
        addresses.shrink_to_fit();
        Addresses::Known(addresses)
    }

    /// `<address-unknown>`: alone, and with a reason.
    fn address_unknown(&mut self, reg: &RegisterScope<'_>, u: &RawAddressUnknown) -> Addresses {
        if !reg.raw.msr.is_empty()
            || !reg.raw.pci.is_empty()
            || !reg.raw.mmio.is_empty()
            || !reg.raw.table.is_empty()
            || !reg.raw.sysreg.is_empty()
        {
            self.push(reg.ctx.error(
                u.at,
                "<address-unknown> cannot stand beside addresses",
                "keep either the addresses or <address-unknown>",
            ));
        }
        if u.reason.trim().is_empty() {
            self.push(reg.ctx.error(
                u.at,
                "<address-unknown> needs a reason",
                "say which sources were searched and why none gives the address",
            ));
        }
        Addresses::Unknown {
            reason: normalize_text(&u.reason),
        }
    }

    fn msr_entry<'s>(&mut self, reg: &RegisterScope<'_>, m: &'s RawMsr) -> Entry<'s> {
        if reg.space != Space::Msr {
            self.push(reg.ctx.error(
                m.at,
                format!(
                    "an <msr> address on a register in {} space",
                    space_name(reg.space)
                ),
                "use the space's address element (<pci>, <mmio>, <table>), or set space=\"msr\"",
            ));
        }
        let base = match parse_number(&m.address) {
            Some(a) if a <= u32::MAX as u64 => Some(Location::Msr(a as u32)),
            _ => {
                self.push(reg.ctx.error(
                    m.at,
                    format!("MSR address `{}` is not a 32-bit number", m.address),
                    "MSR numbers are 32-bit, e.g. 0xC90",
                ));
                None
            }
        };
        Entry {
            at: m.at,
            instance: &m.instance,
            index: m.index.as_deref(),
            stride: m.stride.as_deref(),
            base,
            source: &m.source,
        }
    }

    fn pci_entry<'s>(&mut self, reg: &RegisterScope<'_>, p: &'s RawPci) -> Entry<'s> {
        if reg.space != Space::Pci {
            self.push(reg.ctx.error(
                p.at,
                format!(
                    "a <pci> address on a register in {} space",
                    space_name(reg.space)
                ),
                "use the space's address element (<msr>, <mmio>, <table>), or set space=\"pci\"",
            ));
        }
        let num = |s: &str, max: u64| parse_number(s).filter(|v| *v <= max);
        let base = match (
            num(&p.device_id, 0xFFFF),
            num(&p.device, 31),
            num(&p.function, 7),
            num(&p.offset, 0xFFF),
        ) {
            (Some(id), Some(dev), Some(func), Some(off)) => {
                if off % 4 != 0 || off + u64::from(reg.width / 8) > 0x1000 {
                    self.push(reg.ctx.error(
                        p.at,
                        format!(
                            "config-space offset {off:#x} is not dword-aligned or runs past 4 KiB"
                        ),
                        "PCI registers start on a 4-byte boundary inside the 4 KiB config space",
                    ));
                }
                Some(Location::Pci {
                    device_id: id as u16,
                    device: dev as u8,
                    function: func as u8,
                    offset: off as u16,
                })
            }
            _ => {
                self.push(reg.ctx.error(
                    p.at,
                    "PCI address out of range",
                    "device-id is 16-bit, device 0-31, function 0-7, offset 0-0xFFF",
                ));
                None
            }
        };
        Entry {
            at: p.at,
            instance: &p.instance,
            index: p.index.as_deref(),
            stride: p.stride.as_deref(),
            base,
            source: &p.source,
        }
    }

    /// `<table>`: a byte offset inside the structure the unit describes, aligned to the
    /// register's width.
    fn table_entry<'s>(&mut self, reg: &RegisterScope<'_>, t: &'s RawTable) -> Entry<'s> {
        if reg.space != Space::Table {
            self.push(reg.ctx.error(
                t.at,
                format!(
                    "a <table> address on a register in {} space",
                    reg.space.as_str()
                ),
                "use the space's address element (<msr>, <pci>), or set space=\"table\"",
            ));
        }
        let bytes = u64::from(reg.width / 8);
        let base = match parse_number(&t.offset) {
            Some(o) if o <= u64::from(u16::MAX) && o % bytes == 0 => {
                Some(Location::Table(o as u32))
            }
            _ => {
                self.push(reg.ctx.error(
                    t.at,
                    format!(
                        "table offset `{}` is not a multiple of {bytes} below 0x10000",
                        t.offset
                    ),
                    "a table register starts on a boundary of its own width (8 bytes for a 64-bit one)",
                ));
                None
            }
        };
        Entry {
            at: t.at,
            instance: &t.instance,
            index: t.index.as_deref(),
            stride: t.stride.as_deref(),
            base,
            source: &t.source,
        }
    }

    /// One element's addresses: for its instance, each index it covers, at base + n * stride.
    fn expand_entry(
        &mut self,
        reg: &RegisterScope<'_>,
        e: &Entry,
        seen: &mut Seen,
        addresses: &mut Vec<Address>,
    ) {
        let ctx = reg.ctx;
        self.public_source(ctx, reg.cat, e.at, e.source);
        let Some(inst) = reg.instances.iter().position(|i| i.name == e.instance) else {
            self.push(ctx.error(
                e.at,
                format!("unknown instance `{}`", e.instance),
                &format!(
                    "the unit's instances are: {}",
                    instance_names(reg.instances)
                ),
            ));
            return;
        };
        let Some((indices, stride)) = self.entry_indices(reg, e) else {
            return;
        };
        let Some(base) = e.base else { return };
        let source: Arc<str> = Arc::from(e.source);
        for n in indices {
            if let Some(_prev) = seen.insert((inst, n), e.at) {
                self.push(ctx.error(
                    e.at,
                    format!("instance {} index {n} has two addresses", e.instance),
                    "give each instance and index exactly one address",
                ));
                continue;
            }
            let Some(location) = self.element_location(reg, e, base, stride * u64::from(n), n)
            else {
                continue;
            };
            addresses.push(Address {
                instance: inst,
                index: n,
                location,
                source: Arc::clone(&source),
            });
        }
    }

    /// The indices an element covers (one with `index`, all with `stride`) and its stride.
    fn entry_indices(&mut self, reg: &RegisterScope<'_>, e: &Entry) -> Option<(Vec<u32>, u64)> {
        let (ctx, count) = (reg.ctx, reg.count);
        let indices: Vec<u32> = match (e.index, e.stride) {
            (Some(_), Some(_)) => {
                self.push(ctx.error(
                    e.at,
                    "an address has both index and stride",
                    "use index=\"k\" for one element, or stride for all",
                ));
                return None;
            }
            (Some(i), None) => match parse_number(i) {
                Some(i) if i < u64::from(count) => vec![i as u32],
                _ => {
                    self.push(ctx.error(
                        e.at,
                        format!("index `{i}` is outside the array (count {count})"),
                        "indices run from 0 to count-1",
                    ));
                    return None;
                }
            },
            (None, stride) => {
                if count > 1 && stride.is_none() {
                    self.push(ctx.error(e.at, format!("the register is an array of {count}, but this address has neither stride nor index"), "add stride=\"N\" (index n at address + n*N) or one element per index"));
                    return None;
                }
                (0..count).collect()
            }
        };
        let stride = match e.stride.map(parse_number) {
            None => 0,
            Some(Some(s)) if s > 0 => s,
            Some(_) => {
                self.push(ctx.error(
                    e.at,
                    "stride must be a positive number",
                    "stride is the distance between consecutive elements",
                ));
                return None;
            }
        };
        Some((indices, stride))
    }

    /// Element `n`'s address, `delta` bytes (or MSR numbers) past the base; `None` when it
    /// leaves the space (a PCI offset past 4 KiB is reported).
    fn element_location(
        &mut self,
        reg: &RegisterScope<'_>,
        e: &Entry,
        base: Location,
        delta: u64,
        n: u32,
    ) -> Option<Location> {
        match base {
            Location::Msr(a) => u32::try_from(u64::from(a) + delta).ok().map(Location::Msr),
            Location::Table(o) => u32::try_from(u64::from(o) + delta)
                .ok()
                .map(Location::Table),
            Location::Pci {
                device_id,
                device,
                function,
                offset,
            } => {
                let off = u64::from(offset) + delta;
                if off + u64::from(reg.width / 8) > 0x1000 {
                    self.push(reg.ctx.error(
                        e.at,
                        format!("index {n} lands at offset {off:#x}, past the 4 KiB config space"),
                        "check the stride",
                    ));
                    return None;
                }
                Some(Location::Pci {
                    device_id,
                    device,
                    function,
                    offset: off as u16,
                })
            }
            Location::Mmio { .. } => self.mmio_element(reg, e.at, base, delta, n),
            Location::SysReg(enc) => self.sysreg_element(reg, e.at, enc, delta, n),
        }
    }

    /// Every instance and index has an address.
    fn missing_addresses(&mut self, reg: &RegisterScope<'_>, seen: &Seen) {
        let count = reg.count;
        for (ii, inst) in reg.instances.iter().enumerate() {
            let missing: Vec<String> = (0..count)
                .filter(|n| !seen.contains_key(&(ii, *n)))
                .map(|n| n.to_string())
                .collect();
            if missing.is_empty() {
                continue;
            }
            let what = if count > 1 {
                format!(
                    "instance {} index {} has no address",
                    inst.name,
                    missing.join(", ")
                )
            } else {
                format!("instance {} has no address", inst.name)
            };
            self.push(reg.ctx.error(reg.raw.at, what, "every instance (and index) needs an address, or the register gets <address-unknown>"));
        }
    }

    /// No two registers of a processor share an address in one space (a 64-bit PCI
    /// register takes two dwords).
    pub(super) fn check_address_collisions(&mut self, p: &Processor) {
        let mut seen: HashMap<Location, (String, String)> = HashMap::new();
        for u in &p.units {
            // Table offsets count from the start of the unit's own structure.
            seen.retain(|loc, _| !matches!(loc, Location::Table(_)));
            for r in &u.registers {
                let Addresses::Known(addrs) = &r.addresses else {
                    continue;
                };
                // Memory-mapped offsets are relative to a window: `check_mmio_overlaps`.
                for a in addrs
                    .iter()
                    .filter(|a| !matches!(a.location, Location::Mmio { .. }))
                {
                    // A 64-bit PCI register covers two dwords; both must be free.
                    let mut locations = vec![a.location];
                    if let (
                        Location::Pci {
                            device_id,
                            device,
                            function,
                            offset,
                        },
                        64,
                    ) = (a.location, r.width)
                    {
                        locations.push(Location::Pci {
                            device_id,
                            device,
                            function,
                            offset: offset + 4,
                        });
                    }
                    for loc in locations {
                        if let Some((other, other_file)) = seen.get(&loc) {
                            self.push(
                                Diagnostic {
                                    path: r.at.path.to_path_buf(),
                                    line: r.at.line,
                                    column: r.at.column,
                                    message: format!("register {}: {} is at {loc}, which {other} ({other_file}) already uses", r.name, r.address_name(u, a)),
                                    help: None,
                                }
                                .help("two registers cannot share an address in one space; check both sources"),
                            );
                        } else {
                            seen.insert(loc, (r.address_name(u, a), u.file.clone()));
                        }
                    }
                }
            }
        }
    }
}

/// The space as messages name it.
pub(super) fn space_name(space: Space) -> &'static str {
    match space {
        Space::Msr => "MSR",
        Space::Pci => "PCI",
        Space::Mmio => "MMIO",
        Space::Table => "table",
        Space::SysReg => "system-register",
    }
}
