//! `processors.xml`: processors, their documents and the public sources every unit cites.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::*;
use crate::model::pmu::{FormatTarget, PerfDriver, PerfFormat, Role};

/// Lookup tables built from processors.xml.
pub(crate) struct Catalogue {
    /// document id -> (processor id, document, the origin registers share)
    pub(super) documents: HashMap<String, (String, Document, Arc<SourceOrigin>)>,
    /// source id -> (source, the origin registers share)
    pub(super) public: HashMap<String, (PublicSource, Arc<SourceOrigin>)>,
    /// perf driver id -> its formats (`<perf-driver>`)
    pub(super) perf_drivers: HashMap<String, Arc<PerfDriver>>,
}

/// One way a processor is recognised, as [`Validator::recognition`] checks it.
pub(super) struct Recognition<'a> {
    /// The processor's id, for messages.
    pub(super) processor: &'a str,
    /// Where the element is.
    pub(super) at: usize,
    /// What the element is called in messages (`identity`, `MIDR`).
    pub(super) what: &'a str,
    /// Its `source=`.
    pub(super) source: &'a str,
    /// Its `codenames=`, comma-separated.
    pub(super) codenames: &'a str,
    /// An example of `codenames=` for the fix.
    pub(super) example: &'a str,
}

impl Validator {
    /// processors.xml: the processors with their documents, the public sources and perf
    /// drivers, CPUID identities and core-PMU links.
    pub(crate) fn processors(&mut self, parsed: &ParsedProcessors) -> SpecContext {
        let ctx = Ctx {
            file: &parsed.file,
            register: None,
        };
        let mut catalogue = Catalogue {
            documents: HashMap::new(),
            public: HashMap::new(),
            perf_drivers: HashMap::new(),
        };
        let raw = &parsed.raw;
        let mut processors = self.processor_list(&ctx, &raw.processor, &mut catalogue);
        let public_sources = self.public_sources(&ctx, &raw.source, &mut catalogue);
        for d in &raw.perf_driver {
            if let Some(driver) = self.perf_driver(&ctx, d, &catalogue) {
                if catalogue
                    .perf_drivers
                    .insert(d.id.clone(), Arc::new(driver))
                    .is_some()
                {
                    self.push(ctx.error(
                        d.at,
                        format!("duplicate perf driver id `{}`", d.id),
                        "give each <perf-driver> its own id",
                    ));
                }
            }
        }
        for (p, raw) in processors.iter_mut().zip(&raw.processor) {
            if let Some(raw) = &raw.identity {
                p.identity = self.identity(&ctx, &p.id, raw, &catalogue);
            }
        }
        for (p, raw) in processors.iter_mut().zip(&raw.processor) {
            self.discovery_domains(&ctx, p, raw, &catalogue);
        }
        self.unique_identities(&ctx, &processors, &raw.processor);
        self.midrs(&ctx, &mut processors, &raw.processor, &catalogue);
        self.core_pmus(&ctx, &mut processors, &raw.processor);
        self.units_from(&ctx, &mut processors, &raw.processor);
        let socs = self.socs(&ctx, &raw.soc, &processors, &catalogue);
        SpecContext {
            processors,
            public_sources,
            catalogue,
            socs,
        }
    }

    /// The `<processor>`s, each with its own id and module; their documents go into the
    /// catalogue, each id once.
    fn processor_list(
        &mut self,
        ctx: &Ctx,
        raw: &[RawProcessor],
        catalogue: &mut Catalogue,
    ) -> Vec<Processor> {
        let mut processors: Vec<Processor> = Vec::new();
        let mut modules = HashSet::new();
        for p in raw {
            if processors.iter().any(|q| q.id == p.id) {
                self.push(ctx.error(
                    p.at,
                    format!("duplicate processor id `{}`", p.id),
                    "give each processor its own id",
                ));
            }
            if !is_identifier(&p.module) || !modules.insert(p.module.clone()) {
                self.push(ctx.error(
                    p.at,
                    format!(
                        "processor `{}`: module `{}` is not a unique Rust identifier",
                        p.id, p.module
                    ),
                    "use a unique snake_case module name",
                ));
            }
            let documents = p
                .document
                .iter()
                .map(|d| self.document(ctx, &p.id, d, catalogue))
                .collect();
            processors.push(Processor {
                id: p.id.clone(),
                module: p.module.clone(),
                name: p.name.clone(),
                documents,
                identity: None,
                midr: None,
                units: Vec::new(),
                core_pmu: None,
                units_from: None,
                core_events: None,
                metrics: Vec::new(),
                topdown_metrics: self.topdown_metrics(ctx, p),
                fixed_counters: self.fixed_counters(ctx, p),
                discovery_domains: Vec::new(),
                discovery_types: None,
            });
        }
        processors
    }

    /// A `<document>` of processor `pid`, added to the catalogue (document ids are global).
    fn document(
        &mut self,
        ctx: &Ctx,
        pid: &str,
        d: &RawDocument,
        catalogue: &mut Catalogue,
    ) -> Document {
        let doc = Document {
            id: d.id.clone(),
            title: d.title.clone(),
            reference: d.reference.clone(),
        };
        let origin = Arc::new(SourceOrigin::Document {
            id: doc.id.clone(),
            title: doc.title.clone(),
            reference: doc.reference.clone(),
        });
        if catalogue
            .documents
            .insert(d.id.clone(), (pid.to_string(), doc.clone(), origin))
            .is_some()
        {
            self.push(ctx.error(
                d.at,
                format!("duplicate document id `{}`", d.id),
                "document ids are global: give each its own",
            ));
        }
        doc
    }

    /// The public `<source>`s, added to the catalogue; source and document ids share one
    /// namespace.
    fn public_sources(
        &mut self,
        ctx: &Ctx,
        raw: &[RawPublicSource],
        catalogue: &mut Catalogue,
    ) -> Vec<PublicSource> {
        let mut public_sources = Vec::new();
        for s in raw {
            let src = PublicSource {
                id: s.id.clone(),
                title: s.title.clone(),
            };
            let origin = Arc::new(SourceOrigin::Public {
                id: src.id.clone(),
                title: src.title.clone(),
            });
            if catalogue
                .public
                .insert(s.id.clone(), (src.clone(), origin))
                .is_some()
                || catalogue.documents.contains_key(&s.id)
            {
                self.push(ctx.error(
                    s.at,
                    format!("duplicate source id `{}`", s.id),
                    "source and document ids share one namespace: give each its own",
                ));
            }
            public_sources.push(src);
        }
        public_sources
    }

    /// Whether `id` is a public `<source>` of processors.xml; an unknown one is reported at
    /// `at`.
    pub(super) fn public_source(
        &mut self,
        ctx: &Ctx,
        cat: &Catalogue,
        at: usize,
        id: &str,
    ) -> bool {
        let known = cat.public.contains_key(id);
        if !known {
            self.push(ctx.error(
                at,
                format!("unknown source `{id}`"),
                "public sources are declared in processors.xml",
            ));
        }
        known
    }

    /// `topdown-metrics`: 4 or 8 shares in IA32_PERF_METRICS, only with a `core-pmu` (the
    /// register belongs to the architectural core's unit).
    fn topdown_metrics(&mut self, ctx: &Ctx, p: &RawProcessor) -> u8 {
        let Some(v) = p.topdown_metrics.as_deref() else {
            return 0;
        };
        match v.parse::<u8>() {
            Ok(n @ (4 | 8)) if p.core_pmu.is_some() => n,
            Ok(4 | 8) => {
                self.push(ctx.error(
                    p.at,
                    format!("processor {}: topdown-metrics without a core-pmu", p.id),
                    "IA32_PERF_METRICS and fixed counter 3 are registers of the architectural core: add core-pmu=\"architectural\"",
                ));
                0
            }
            _ => {
                self.push(ctx.error(
                    p.at,
                    format!("processor {}: topdown-metrics=\"{v}\" is not 4 or 8", p.id),
                    "4: Ice Lake's level-1 shares; 8: levels 1 and 2 (Sapphire Rapids and later)",
                ));
                0
            }
        }
    }

    /// `fixed-counters`: which of the fixed counters the architectural core describes (0 to 6)
    /// the processor's core has, as a list of numbers and ranges (`0-2,4-6`). Without it, a
    /// core has 0 to 2, and 3 (TOPDOWN.SLOTS) with `topdown-metrics`; without a `core-pmu`,
    /// none.
    fn fixed_counters(&mut self, ctx: &Ctx, p: &RawProcessor) -> u8 {
        let default = if p.core_pmu.is_none() {
            0
        } else if p.topdown_metrics.is_some() {
            0x0F
        } else {
            0x07
        };
        let Some(v) = p.fixed_counters.as_deref() else {
            return default;
        };
        let help = "a list of fixed counters 0 to 6 (those spec/sdm/core.xml describes), e.g. fixed-counters=\"0-2,4-6\", on a processor with core-pmu=\"architectural\"";
        let mask = parse_counter_list(v).filter(|_| p.core_pmu.is_some());
        match mask {
            Some(m) if m & 0x08 != 0 && p.topdown_metrics.is_none() => {
                self.push(ctx.error(
                    p.at,
                    format!("processor {}: fixed-counters=\"{v}\" names fixed counter 3 without topdown-metrics", p.id),
                    "fixed counter 3 (TOPDOWN.SLOTS) comes with IA32_PERF_METRICS: add topdown-metrics, or leave 3 out",
                ));
                default
            }
            Some(m) => m,
            None => {
                self.push(ctx.error(
                    p.at,
                    format!("processor {}: fixed-counters=\"{v}\" is not a list of fixed counters of a core PMU", p.id),
                    help,
                ));
                default
            }
        }
    }

    /// `core-pmu`: the processor whose units are this one's core PMU. It must be another
    /// processor of the file, and one without a core PMU of its own (the link is one step).
    fn core_pmus(&mut self, ctx: &Ctx, processors: &mut [Processor], raw: &[RawProcessor]) {
        let links: Vec<Option<&String>> = raw.iter().map(|r| r.core_pmu.as_ref()).collect();
        let help = "core-pmu names the processor whose units describe this one's core PMU, e.g. core-pmu=\"architectural\"";
        for (i, target) in self.links(ctx, raw, "core-pmu", &links, help) {
            processors[i].core_pmu = Some(target);
        }
    }

    /// `units-from`: the processor whose units this one takes (Cascade Lake takes
    /// Skylake-SP's). It must be another processor of the file, and one that takes no units
    /// itself (the link is one step). Whether both define a unit is `assemble`'s to check.
    fn units_from(&mut self, ctx: &Ctx, processors: &mut [Processor], raw: &[RawProcessor]) {
        let links: Vec<Option<&String>> = raw.iter().map(|r| r.units_from.as_ref()).collect();
        let help = "units-from names the processor whose unit files describe this one's units too, e.g. units-from=\"skylake-sp\"";
        for (i, target) in self.links(ctx, raw, "units-from", &links, help) {
            let module = processors
                .iter()
                .find(|p| p.id == target)
                .map(|p| p.module.clone());
            processors[i].units_from = module.map(|module| ProcessorRef { id: target, module });
        }
    }

    /// A one-step link between processors (`attr`, `links[i]` for processor i): the
    /// accepted links as (processor index, target), the others reported with `help`.
    fn links(
        &mut self,
        ctx: &Ctx,
        raw: &[RawProcessor],
        attr: &str,
        links: &[Option<&String>],
        help: &str,
    ) -> Vec<(usize, String)> {
        let mut accepted = Vec::new();
        for (i, r) in raw.iter().enumerate() {
            let Some(target) = links[i] else { continue };
            let problem = match raw.iter().position(|q| &q.id == target) {
                _ if target == &r.id => Some("names the processor itself".to_string()),
                None => Some("names no processor of processors.xml".to_string()),
                Some(j) if links[j].is_some() => {
                    Some(format!("names a processor that has a {attr} of its own"))
                }
                Some(_) => None,
            };
            match problem {
                Some(why) => self.push(ctx.error(
                    r.at,
                    format!("processor `{}`: {attr} `{target}` {why}", r.id),
                    help,
                )),
                None => accepted.push((i, target.clone())),
            }
        }
        accepted
    }

    /// A `<perf-driver>`: its source is declared, each format file parses as the kernel
    /// writes it and appears once, and each says what it maps onto (a role, a field of the
    /// counter control, a register) or, as its text, why nothing.
    fn perf_driver(
        &mut self,
        ctx: &Ctx,
        raw: &RawPerfDriver,
        catalogue: &Catalogue,
    ) -> Option<PerfDriver> {
        let before = self.errors.len();
        let source_title = match catalogue.public.get(&raw.source) {
            Some((s, _)) => s.title.clone(),
            None => {
                self.push(ctx.error(
                    raw.at,
                    format!(
                        "perf driver `{}`: source `{}` is not a <source> of processors.xml",
                        raw.id, raw.source
                    ),
                    "cite the kernel driver as a declared public source",
                ));
                String::new()
            }
        };
        let mut seen = HashSet::new();
        let formats: Vec<PerfFormat> = raw
            .format
            .iter()
            .filter_map(|f| self.perf_format(ctx, raw, f, &mut seen))
            .collect();
        if self.errors.len() > before {
            return None;
        }
        Some(PerfDriver {
            id: raw.id.clone(),
            module: raw.module.clone(),
            group: raw.group.clone(),
            source: raw.source.clone(),
            source_title,
            formats,
        })
    }

    /// One `<format>` of a driver: it parses as the kernel writes it, appears once (`seen`
    /// holds the names so far), and maps onto one target or says why none.
    fn perf_format<'r>(
        &mut self,
        ctx: &Ctx,
        raw: &RawPerfDriver,
        f: &'r RawPerfFormat,
        seen: &mut HashSet<&'r str>,
    ) -> Option<PerfFormat> {
        if !seen.insert(f.name.as_str()) {
            self.push(ctx.error(
                f.at,
                format!(
                    "perf driver `{}`: format `{}` is given twice",
                    raw.id, f.name
                ),
                "a driver has one format file of each name",
            ));
        }
        let Some(width) = format_width(&f.config) else {
            self.push(ctx.error(
                f.at,
                format!(
                    "perf driver `{}`: format `{}` is `{}`, not WORD:BITS as the kernel writes it",
                    raw.id, f.name, f.config
                ),
                "write e.g. config:0-7, config1:0-31 or config:0-7,21 (ranges lo-hi within 0-63, at most 64 bits)",
            ));
            return None;
        };
        let text = normalize_text(&f.text);
        let targets = [
            f.role.is_some(),
            f.field.is_some(),
            f.register.is_some(),
            !text.is_empty(),
        ];
        if targets.iter().filter(|t| **t).count() != 1 {
            self.push(ctx.error(
                f.at,
                format!(
                    "perf driver `{}`: format `{}` must map onto exactly one of a role, a field or a register, or say why it maps onto nothing",
                    raw.id, f.name
                ),
                "give role=\"event\", field=\"tid_en\" or register=\"C{i}_MSR_PMON_BOX_FILTER\", or the reason as the element's text",
            ));
            return None;
        }
        let target = if let Some(r) = &f.role {
            match Role::parse(r) {
                Some(role) => FormatTarget::Role(role),
                None => {
                    self.push(ctx.error(
                        f.at,
                        format!(
                            "perf driver `{}`: format `{}` maps onto unknown role `{r}`",
                            raw.id, f.name
                        ),
                        "use a role of spec/README.md's role table",
                    ));
                    return None;
                }
            }
        } else if let Some(field) = &f.field {
            FormatTarget::Field(field.clone())
        } else if let Some(reg) = &f.register {
            FormatTarget::Register(reg.clone())
        } else {
            FormatTarget::Unmapped(text)
        };
        Some(PerfFormat {
            name: f.name.clone(),
            config: f.config.clone(),
            width,
            target,
        })
    }

    /// A processor's `<identity>`, or `None` (with errors pushed) if it is malformed.
    fn identity(
        &mut self,
        ctx: &Ctx,
        processor: &str,
        raw: &RawIdentity,
        catalogue: &Catalogue,
    ) -> Option<Identity> {
        let vendor = self.identity_vendor(ctx, processor, raw);
        let family = parse_number(&raw.family).filter(|&n| n <= 0x10E);
        if family.is_none() {
            self.push(ctx.error(
                raw.at,
                format!(
                    "processor `{processor}`: CPUID family `{}` is not a display family (at most 0x10E)",
                    raw.family
                ),
                "write the display family as a number, e.g. family=\"0x6\" for 06_3EH, family=\"0x19\" for AMD's 19h",
            ));
        }
        let models = self.identity_models(ctx, processor, raw);
        let codenames = self.recognition(
            ctx,
            catalogue,
            Recognition {
                processor,
                at: raw.at,
                what: "identity",
                source: &raw.source,
                codenames: &raw.codenames,
                example: "codenames=\"Ivy Bridge-EP, IvyTown\"",
            },
        );
        let steppings = self.identity_steppings(ctx, processor, raw);
        Some(Identity {
            vendor: vendor?,
            family: family? as u32,
            models: models?,
            steppings,
            codenames,
            perfmon: raw.perfmon.clone(),
            source: raw.source.clone(),
        })
    }

    /// What every way of recognising a part (a CPUID `<identity>`, an Arm `<midr>`) carries:
    /// a declared public source, and at least one name. Returns the names.
    pub(super) fn recognition(
        &mut self,
        ctx: &Ctx,
        catalogue: &Catalogue,
        r: Recognition<'_>,
    ) -> Vec<String> {
        if !catalogue.public.contains_key(r.source) {
            self.push(ctx.error(
                r.at,
                format!(
                    "processor `{}`: {} source `{}` is not a <source> of processors.xml",
                    r.processor, r.what, r.source
                ),
                "cite a declared public source for the part's identification",
            ));
        }
        let codenames: Vec<String> = r
            .codenames
            .split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect();
        if codenames.is_empty() {
            self.push(ctx.error(
                r.at,
                format!("processor `{}`: {} has no name", r.processor, r.what),
                &format!(
                    "name the part, comma-separated if it has several names ({})",
                    r.example
                ),
            ));
        }
        codenames
    }

    /// Two processors may not claim one CPUID signature or one perfmon file name: `pmu` could
    /// not tell which spec a machine needs.
    fn unique_identities(&mut self, ctx: &Ctx, processors: &[Processor], raw: &[RawProcessor]) {
        for (i, (p, rp)) in processors.iter().zip(raw).enumerate() {
            let (Some(id), Some(at)) = (&p.identity, rp.identity.as_ref().map(|r| r.at)) else {
                continue;
            };
            for q in &processors[..i] {
                let Some(other) = &q.identity else { continue };
                self.stepping_overlap(ctx, at, (&q.id, other), (&p.id, id));
                if id.perfmon.is_some() && other.perfmon == id.perfmon {
                    self.push(ctx.error(
                        at,
                        format!(
                            "processors `{}` and `{}` both claim the perfmon file name `{}`",
                            q.id,
                            p.id,
                            id.perfmon.as_deref().unwrap_or_default()
                        ),
                        "each perfmon file name prefix names one processor",
                    ));
                }
            }
        }
    }
}

/// How many value bits a format file (`config:0-7,21`) holds, or `None` if it is not
/// WORD:BITS with ranges lo-hi inside 0-63 and at most 64 bits in all.
pub(crate) fn format_width(text: &str) -> Option<u32> {
    let (word, bits) = text.split_once(':')?;
    if !matches!(word, "config" | "config1" | "config2") {
        return None;
    }
    let mut width = 0;
    for part in bits.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let b = part.parse::<u32>().ok()?;
                (b, b)
            }
        };
        if lo > hi || hi > 63 {
            return None;
        }
        width += hi - lo + 1;
    }
    (width <= 64).then_some(width)
}

/// A list of counters 0 to 6 and ranges (`0-2,4-6`) as a bitmap; `None` if any item is not
/// a number or range within 0 to 6, or the list is empty.
fn parse_counter_list(v: &str) -> Option<u8> {
    let mut mask = 0u8;
    for item in v.split(',') {
        let (lo, hi) = match item.trim().split_once('-') {
            Some((a, b)) => (a.trim().parse::<u8>().ok()?, b.trim().parse::<u8>().ok()?),
            None => {
                let n = item.trim().parse::<u8>().ok()?;
                (n, n)
            }
        };
        if lo > hi || hi > 6 {
            return None;
        }
        mask |= (lo..=hi).fold(0, |m, i| m | 1 << i);
    }
    (mask != 0).then_some(mask)
}

#[cfg(test)]
mod fixed_counter_list {
    use super::parse_counter_list;

    #[test]
    fn lists_and_ranges_become_a_bitmap() {
        assert_eq!(parse_counter_list("0-2,4-6"), Some(0b111_0111));
        assert_eq!(parse_counter_list("0, 1,2"), Some(0b111));
        assert_eq!(parse_counter_list("3"), Some(0b1000));
    }

    #[test]
    fn counters_the_core_unit_does_not_describe_are_refused() {
        assert_eq!(parse_counter_list("0-7"), None);
        assert_eq!(parse_counter_list("2-1"), None);
        assert_eq!(parse_counter_list(""), None);
        assert_eq!(parse_counter_list("0-2,x"), None);
    }
}
