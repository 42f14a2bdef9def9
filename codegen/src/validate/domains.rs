//! A processor's discovery domains (`<discovery-domain>`: where each of its discovery tables
//! is found) and the discovery types a public source names (`<discovery-types>`).

use super::numbers::parse_number;
use super::processors::Catalogue;
use super::*;

/// What a domain's place must be.
const PLACE_HELP: &str = "give pci-device=\"0x09A1\" (the tables are found through the DVSEC capability of every Intel PCI device with that id) or msr=\"0x710\" (the MSR holds the table's physical address), exactly one of them";
/// What a domain's global-init must be.
const GLOBAL_INIT_HELP: &str = "give the 32-bit value software writes to the global control of each of the domain's tables before it uses their units, as a number: global-init=\"0x0\" (Linux's uncore_mmio_global_init writes 0, clearing freeze_all)";
/// What a list of types must be.
const TYPES_HELP: &str = "write space-separated TYPE=NAME pairs, each type a number from 0 to 0xFFFF given once and each name an upper-case identifier: `0x13=MSE 0x25=SB2UCIE`";

impl Validator {
    /// `<discovery-domain>`s and `<discovery-types>` of processor `p`: each domain found
    /// either through a PCI device id or an MSR, with a unique id, a declared source and a
    /// list of ignored types; the named types parsed the same way.
    pub(super) fn discovery_domains(
        &mut self,
        ctx: &Ctx,
        p: &mut Processor,
        raw: &RawProcessor,
        cat: &Catalogue,
    ) {
        for d in &raw.discovery_domain {
            let id = format!("processor `{}`: discovery domain `{}`", p.id, d.id);
            if p.discovery_domains.iter().any(|q| q.id == d.id) {
                self.push(ctx.error(
                    d.at,
                    format!("{id} is given twice"),
                    "give each discovery domain of a processor its own id",
                ));
            }
            let place = self.domain_place(ctx, &id, d);
            let ignored = d
                .ignore
                .as_deref()
                .map(|s| self.type_list(ctx, d.at, &id, "ignore", s))
                .unwrap_or_default();
            let global_init = d
                .global_init
                .as_deref()
                .and_then(|v| self.domain_global_init(ctx, d.at, &id, v));
            let known = self.public_source(ctx, cat, d.at, &d.source);
            if let (Some(place), true) = (place, known) {
                p.discovery_domains.push(DiscoveryDomain {
                    id: d.id.clone(),
                    place,
                    per_die: d.per == "die",
                    ignored,
                    global_init,
                    source: d.source.clone(),
                });
            }
        }
        // Without domains, the names are those of the types of the one table the generic
        // discovery device gives (Granite Rapids' types without unit files).
        if let Some(t) = &raw.discovery_types {
            let id = format!("processor `{}`", p.id);
            let names = self.type_list(ctx, t.at, &id, "discovery-types names", &t.names);
            if self.public_source(ctx, cat, t.at, &t.source) {
                p.discovery_types = Some((names, t.source.clone()));
            }
        }
    }

    /// A domain's place: exactly one of `pci-device` (16 bits) and `msr` (32 bits).
    fn domain_place(&mut self, ctx: &Ctx, id: &str, d: &RawDiscoveryDomain) -> Option<DomainPlace> {
        let why = match (&d.pci_device, &d.msr) {
            (Some(v), None) => match parse_number(v).and_then(|n| u16::try_from(n).ok()) {
                Some(n) if n != 0 && n != 0xFFFF => return Some(DomainPlace::PciDevice(n)),
                _ => format!("{id}: pci-device `{v}` is not a PCI device id (1 to 0xFFFE)"),
            },
            (None, Some(v)) => match parse_number(v).and_then(|n| u32::try_from(n).ok()) {
                Some(n) => return Some(DomainPlace::Msr(n)),
                None => format!("{id}: msr `{v}` is not a 32-bit MSR number"),
            },
            (Some(_), Some(_)) => format!("{id} gives both pci-device and msr"),
            (None, None) => format!("{id} says neither pci-device nor msr"),
        };
        self.push(ctx.error(d.at, why, PLACE_HELP));
        None
    }

    /// A domain's `global-init`: the 32-bit value written to each table's global control.
    fn domain_global_init(&mut self, ctx: &Ctx, at: usize, id: &str, v: &str) -> Option<u32> {
        let value = parse_number(v).and_then(|n| u32::try_from(n).ok());
        if value.is_none() {
            self.push(ctx.error(
                at,
                format!("{id}: global-init `{v}` is not a 32-bit value"),
                GLOBAL_INIT_HELP,
            ));
        }
        value
    }

    /// `TYPE=NAME ...` of attribute `what`; every bad pair is reported.
    fn type_list(
        &mut self,
        ctx: &Ctx,
        at: usize,
        id: &str,
        what: &str,
        s: &str,
    ) -> Vec<(u16, String)> {
        let mut out: Vec<(u16, String)> = Vec::new();
        for pair in s.split_whitespace() {
            let parsed = pair.split_once('=').and_then(|(t, n)| {
                let t = u16::try_from(parse_number(t)?).ok()?;
                let good = n.starts_with(|c: char| c.is_ascii_uppercase())
                    && n.chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
                good.then(|| (t, n.to_string()))
            });
            match parsed {
                Some((t, _)) if out.iter().any(|(u, _)| *u == t) => self.push(ctx.error(
                    at,
                    format!("{id}: {what} gives type {t} twice"),
                    TYPES_HELP,
                )),
                Some(pair) => out.push(pair),
                None => self.push(ctx.error(
                    at,
                    format!("{id}: {what} `{pair}` is not TYPE=NAME"),
                    TYPES_HELP,
                )),
            }
        }
        if out.is_empty() && s.split_whitespace().next().is_none() {
            self.push(ctx.error(at, format!("{id}: {what} is empty"), TYPES_HELP));
        }
        out
    }
}
