//! Register addresses: one per instance and index, and no two registers at one address.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::*;

impl Validator {
    /// A register's addresses, expanded to one per instance and index, or why none is known.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn addresses(
        &mut self,
        ctx: &Ctx<'_>,
        r: &RawRegister,
        space: Space,
        width: u32,
        count: u32,
        instances: &[Instance],
        cat: &Catalogue,
    ) -> Addresses {
        if let Some(u) = &r.address_unknown {
            if !r.msr.is_empty() || !r.pci.is_empty() {
                self.push(ctx.error(
                    u.at,
                    "<address-unknown> cannot stand beside addresses",
                    "keep either the addresses or <address-unknown>",
                ));
            }
            if u.reason.trim().is_empty() {
                self.push(ctx.error(
                    u.at,
                    "<address-unknown> needs a reason",
                    "say which sources were searched and why none gives the address",
                ));
            }
            return Addresses::Unknown {
                reason: normalize_text(&u.reason),
            };
        }
        // (at, instance, index, stride, location, source)
        struct Entry<'s> {
            at: usize,
            instance: &'s str,
            index: Option<&'s str>,
            stride: Option<&'s str>,
            base: Option<Location>,
            source: &'s str,
        }
        let mut entries = Vec::new();
        for m in &r.msr {
            if space != Space::Msr {
                self.push(ctx.error(
                    m.at,
                    "an <msr> address on a register in PCI space",
                    "use <pci> elements, or set space=\"msr\"",
                ));
            }
            let base = match parse_number(&m.address) {
                Some(a) if a <= u32::MAX as u64 => Some(Location::Msr(a as u32)),
                _ => {
                    self.push(ctx.error(
                        m.at,
                        format!("MSR address `{}` is not a 32-bit number", m.address),
                        "MSR numbers are 32-bit, e.g. 0xC90",
                    ));
                    None
                }
            };
            entries.push(Entry {
                at: m.at,
                instance: &m.instance,
                index: m.index.as_deref(),
                stride: m.stride.as_deref(),
                base,
                source: &m.source,
            });
        }
        for p in &r.pci {
            if space != Space::Pci {
                self.push(ctx.error(
                    p.at,
                    "a <pci> address on a register in MSR space",
                    "use <msr> elements, or set space=\"pci\"",
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
                    if off % 4 != 0 || off + u64::from(width / 8) > 0x1000 {
                        self.push(ctx.error(p.at, format!("config-space offset {off:#x} is not dword-aligned or runs past 4 KiB"), "PCI registers start on a 4-byte boundary inside the 4 KiB config space"));
                    }
                    Some(Location::Pci {
                        device_id: id as u16,
                        device: dev as u8,
                        function: func as u8,
                        offset: off as u16,
                    })
                }
                _ => {
                    self.push(ctx.error(
                        p.at,
                        "PCI address out of range",
                        "device-id is 16-bit, device 0-31, function 0-7, offset 0-0xFFF",
                    ));
                    None
                }
            };
            entries.push(Entry {
                at: p.at,
                instance: &p.instance,
                index: p.index.as_deref(),
                stride: p.stride.as_deref(),
                base,
                source: &p.source,
            });
        }
        if entries.is_empty() {
            self.push(ctx.error(r.at, "the register has no address", "add <msr>/<pci> elements, or <address-unknown reason=\"...\"/> if no source gives one"));
        }

        let mut seen: BTreeMap<(usize, u32), usize> = BTreeMap::new();
        let mut addresses = Vec::new();
        for e in &entries {
            if !cat.public.contains_key(e.source) {
                self.push(ctx.error(
                    e.at,
                    format!("unknown source `{}`", e.source),
                    "public sources are declared in processors.xml",
                ));
            }
            let Some(inst) = instances.iter().position(|i| i.name == e.instance) else {
                let names: Vec<&str> = instances.iter().map(|i| i.name.as_str()).collect();
                self.push(ctx.error(
                    e.at,
                    format!("unknown instance `{}`", e.instance),
                    &format!("the unit's instances are: {}", names.join(", ")),
                ));
                continue;
            };
            let indices: Vec<u32> = match (e.index, e.stride) {
                (Some(_), Some(_)) => {
                    self.push(ctx.error(
                        e.at,
                        "an address has both index and stride",
                        "use index=\"k\" for one element, or stride for all",
                    ));
                    continue;
                }
                (Some(i), None) => match parse_number(i) {
                    Some(i) if i < u64::from(count) => vec![i as u32],
                    _ => {
                        self.push(ctx.error(
                            e.at,
                            format!("index `{i}` is outside the array (count {count})"),
                            "indices run from 0 to count-1",
                        ));
                        continue;
                    }
                },
                (None, stride) => {
                    if count > 1 && stride.is_none() {
                        self.push(ctx.error(e.at, format!("the register is an array of {count}, but this address has neither stride nor index"), "add stride=\"N\" (index n at address + n*N) or one element per index"));
                        continue;
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
                    continue;
                }
            };
            let Some(base) = e.base else { continue };
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
                let delta = stride * u64::from(n);
                let location = match base {
                    Location::Msr(a) => match u32::try_from(u64::from(a) + delta) {
                        Ok(a) => Location::Msr(a),
                        Err(_) => continue,
                    },
                    Location::Pci {
                        device_id,
                        device,
                        function,
                        offset,
                    } => {
                        let off = u64::from(offset) + delta;
                        if off + u64::from(width / 8) > 0x1000 {
                            self.push(ctx.error(e.at, format!("index {n} lands at offset {off:#x}, past the 4 KiB config space"), "check the stride"));
                            continue;
                        }
                        Location::Pci {
                            device_id,
                            device,
                            function,
                            offset: off as u16,
                        }
                    }
                };
                addresses.push(Address {
                    instance: inst,
                    index: n,
                    location,
                    source: Arc::clone(&source),
                });
            }
        }
        if !entries.is_empty() {
            for (ii, inst) in instances.iter().enumerate() {
                let missing: Vec<String> = (0..count)
                    .filter(|n| !seen.contains_key(&(ii, *n)))
                    .map(|n| n.to_string())
                    .collect();
                if !missing.is_empty() {
                    let what = if count > 1 {
                        format!(
                            "instance {} index {} has no address",
                            inst.name,
                            missing.join(", ")
                        )
                    } else {
                        format!("instance {} has no address", inst.name)
                    };
                    self.push(ctx.error(r.at, what, "every instance (and index) needs an address, or the register gets <address-unknown>"));
                }
            }
        }
        addresses.sort_by_key(|a| (a.instance, a.index));
        addresses.shrink_to_fit();
        Addresses::Known(addresses)
    }

    /// No two registers of a processor share an address in one space (a 64-bit PCI
    /// register takes two dwords).
    pub(super) fn check_address_collisions(&mut self, p: &Processor) {
        let mut seen: HashMap<Location, (String, String)> = HashMap::new();
        for u in &p.units {
            for r in &u.registers {
                let Addresses::Known(addrs) = &r.addresses else {
                    continue;
                };
                for a in addrs {
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
