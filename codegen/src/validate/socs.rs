//! `<soc>`: a SoC names the processors whose PMUs it has; every name must be a processor of
//! the spec (its cores one identified by a `<midr>`), and its SMCCC SOC_ID, where given, has
//! the form Linux shows (`jep106:036b:0241`) and belongs to one SoC.

use super::processors::Catalogue;
use super::*;
use crate::model::soc::Soc;
use crate::parse::RawSoc;

impl Validator {
    /// Every `<soc>`, checked against the processors.
    pub(super) fn socs(
        &mut self,
        ctx: &Ctx,
        raw: &[RawSoc],
        processors: &[Processor],
        catalogue: &Catalogue,
    ) -> Vec<Soc> {
        let mut socs: Vec<Soc> = Vec::new();
        for r in raw {
            if socs.iter().any(|s| s.id == r.id) {
                self.push(ctx.error(
                    r.at,
                    format!("duplicate SoC id `{}`", r.id),
                    "give each <soc> its own id",
                ));
            }
            self.soc_processors(ctx, r, processors);
            self.known_source(ctx, r.at, &r.source, catalogue);
            let soc_id =
                r.soc_id.as_ref().map(|i| {
                    self.known_source(ctx, i.at, &i.source, catalogue);
                    if !is_soc_id(&i.value) {
                        self.push(ctx.error(
                        i.at,
                        format!("SoC `{}`: soc-id `{}` is not jep106:XXXX:XXXX", r.id, i.value),
                        "write the SMCCC SOC_ID as Linux shows it in /sys/devices/soc0/soc_id: \
                         jep106, the JEP106 bank and identity code, the SoC id, four lowercase \
                         hex digits each",
                    ));
                    }
                    if let Some(other) = socs.iter().find(|s| s.soc_id.as_ref() == Some(&i.value)) {
                        self.push(ctx.error(
                            i.at,
                            format!(
                                "SoCs `{}` and `{}` both claim soc-id {}",
                                other.id, r.id, i.value
                            ),
                            "a SOC_ID names one SoC",
                        ));
                    }
                    (i.value.clone(), i.source.clone())
                });
            socs.push(Soc {
                id: r.id.clone(),
                name: r.name.clone(),
                cores: r.cores.clone(),
                uncore: uncore_ids(r),
                soc_id: soc_id.as_ref().map(|s| s.0.clone()),
                soc_id_source: soc_id.map(|s| s.1),
                source: r.source.clone(),
            });
        }
        socs
    }

    /// The SoC's cores name a processor with a `<midr>`; each uncore id names a processor.
    fn soc_processors(&mut self, ctx: &Ctx, r: &RawSoc, processors: &[Processor]) {
        let known: Vec<&str> = processors.iter().map(|p| p.id.as_str()).collect();
        match processors.iter().find(|p| p.id == r.cores) {
            None => self.push(ctx.error(
                r.at,
                format!(
                    "SoC `{}`: cores `{}` is not a processor of the spec",
                    r.id, r.cores
                ),
                &format!("use one of: {}", known.join(", ")),
            )),
            Some(p) if p.midr.is_none() => self.push(ctx.error(
                r.at,
                format!(
                    "SoC `{}`: cores `{}` is no Arm core (it has no <midr>)",
                    r.id, r.cores
                ),
                "cores names the processor of the SoC's cores, one identified by a <midr>",
            )),
            Some(_) => {}
        }
        for u in uncore_ids(r) {
            if !known.contains(&u.as_str()) {
                self.push(ctx.error(
                    r.at,
                    format!(
                        "SoC `{}`: uncore `{u}` is not a processor of the spec",
                        r.id
                    ),
                    &format!("use one of: {}", known.join(", ")),
                ));
            }
        }
    }

    /// A `source=` that names a public source of processors.xml.
    fn known_source(&mut self, ctx: &Ctx, at: usize, source: &str, catalogue: &Catalogue) {
        if !catalogue.public.contains_key(source) {
            self.push(ctx.error(
                at,
                format!("unknown source `{source}`"),
                "public sources are declared in processors.xml",
            ));
        }
    }
}

/// The `uncore` attribute's processor ids, space-separated.
fn uncore_ids(r: &RawSoc) -> Vec<String> {
    r.uncore
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// `jep106:XXXX:XXXX`, four lowercase hex digits each, as Linux's soc_id attribute reads.
fn is_soc_id(s: &str) -> bool {
    let hex4 = |p: &str| p.len() == 4 && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let parts: Vec<&str> = s.split(':').collect();
    matches!(parts.as_slice(), ["jep106", bank, soc] if hex4(bank) && hex4(soc))
}
