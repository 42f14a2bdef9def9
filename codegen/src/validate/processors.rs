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
                units: Vec::new(),
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
        SpecContext {
            processors,
            public_sources,
            catalogue,
        }
    }
}
