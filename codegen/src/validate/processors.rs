//! `processors.xml`: processors, their documents and the public sources every unit cites.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::*;

/// Lookup tables built from processors.xml.
pub(crate) struct Catalogue {
    /// document id -> (processor id, document, the origin registers share)
    pub(super) documents: HashMap<String, (String, Document, Arc<SourceOrigin>)>,
    /// source id -> (source, the origin registers share)
    pub(super) public: HashMap<String, (PublicSource, Arc<SourceOrigin>)>,
}

impl Validator {
    pub(crate) fn processors(&mut self, parsed: &ParsedProcessors) -> SpecContext {
        let pf = &parsed.file;
        let ctx = Ctx {
            file: pf,
            register: None,
        };
        let mut processors: Vec<Processor> = Vec::new();
        let mut catalogue = Catalogue {
            documents: HashMap::new(),
            public: HashMap::new(),
        };
        let mut modules = HashSet::new();
        for p in &parsed.raw.processor {
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
            let mut documents = Vec::new();
            for d in &p.document {
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
                    .insert(d.id.clone(), (p.id.clone(), doc.clone(), origin))
                    .is_some()
                {
                    self.push(ctx.error(
                        d.at,
                        format!("duplicate document id `{}`", d.id),
                        "document ids are global: give each its own",
                    ));
                }
                documents.push(doc);
            }
            processors.push(Processor {
                id: p.id.clone(),
                module: p.module.clone(),
                name: p.name.clone(),
                documents,
                identity: None,
                units: Vec::new(),
                core_pmu: None,
                core_events: None,
            });
        }
        let mut public_sources = Vec::new();
        for s in &parsed.raw.source {
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
        for (p, raw) in processors.iter_mut().zip(&parsed.raw.processor) {
            if let Some(raw) = &raw.identity {
                p.identity = self.identity(&ctx, &p.id, raw, &catalogue);
            }
        }
        self.unique_identities(&ctx, &processors, &parsed.raw.processor);
        self.core_pmus(&ctx, &mut processors, &parsed.raw.processor);
        SpecContext {
            processors,
            public_sources,
            catalogue,
        }
    }

    /// `core-pmu`: the processor whose units are this one's core PMU. It must be another
    /// processor of the file, and one without a core PMU of its own (the link is one step).
    fn core_pmus(&mut self, ctx: &Ctx, processors: &mut [Processor], raw: &[RawProcessor]) {
        let ids: Vec<(String, bool)> = raw
            .iter()
            .map(|r| (r.id.clone(), r.core_pmu.is_some()))
            .collect();
        for (p, r) in processors.iter_mut().zip(raw) {
            let Some(core) = &r.core_pmu else { continue };
            let problem = match ids.iter().find(|(id, _)| id == core) {
                _ if core == &p.id => Some("names the processor itself"),
                None => Some("names no processor of processors.xml"),
                Some((_, true)) => Some("names a processor that has a core-pmu of its own"),
                Some(_) => None,
            };
            match problem {
                Some(why) => self.push(ctx.error(
                    r.at,
                    format!("processor `{}`: core-pmu `{core}` {why}", p.id),
                    "core-pmu names the processor whose units describe this one's core PMU, e.g. core-pmu=\"architectural\"",
                )),
                None => p.core_pmu = Some(core.clone()),
            }
        }
    }

    /// A processor's `<identity>`, or `None` (with errors pushed) if it is malformed.
    fn identity(
        &mut self,
        ctx: &Ctx,
        processor: &str,
        raw: &RawIdentity,
        catalogue: &Catalogue,
    ) -> Option<Identity> {
        let number = |text: &str, max: u64| parse_number(text).filter(|&n| n <= max);
        let (Some(family), Some(model)) = (number(&raw.family, 0x10E), number(&raw.model, 0xFF))
        else {
            self.push(ctx.error(
                raw.at,
                format!(
                    "processor `{processor}`: CPUID family `{}` / model `{}` is not a display family (at most 0x10E) and model (at most 0xFF)",
                    raw.family, raw.model
                ),
                "write the display family and model as numbers, e.g. family=\"0x6\" model=\"0x3E\" for 06_3EH",
            ));
            return None;
        };
        if !catalogue.public.contains_key(&raw.source) {
            self.push(ctx.error(
                raw.at,
                format!(
                    "processor `{processor}`: identity source `{}` is not a <source> of processors.xml",
                    raw.source
                ),
                "cite a declared public source for the CPUID signature",
            ));
        }
        let codenames: Vec<String> = raw
            .codenames
            .split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect();
        if codenames.is_empty() {
            self.push(ctx.error(
                raw.at,
                format!("processor `{processor}`: identity has no code name"),
                "list Intel's code names, comma-separated (codenames=\"Ivy Bridge-EP, IvyTown\")",
            ));
        }
        Some(Identity {
            family: family as u32,
            model: model as u32,
            codenames,
            perfmon: raw.perfmon.clone(),
            source: raw.source.clone(),
        })
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
                if (other.family, other.model) == (id.family, id.model) {
                    self.push(ctx.error(
                        at,
                        format!(
                            "processors `{}` and `{}` both claim CPUID {:02X}_{:02X}H",
                            q.id, p.id, id.family, id.model
                        ),
                        "each CPUID signature names one processor; fix the family or model",
                    ));
                }
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
