//! An Arm core's `<midr>`: the implementer (MIDR_EL1 bits 31:24) and primary part number
//! (bits 15:4) that software reads to know which core it runs on, as x86 parts are known by
//! their CPUID signature. Two processors may not claim one (implementer, part): `pmu` could
//! not tell which spec a core needs.

use super::processors::{Catalogue, Recognition};
use super::*;
use crate::parse::RawMidr;

impl Validator {
    /// The `<midr>` of every processor that has one, checked and unique.
    pub(super) fn midrs(
        &mut self,
        ctx: &Ctx,
        processors: &mut [Processor],
        raw: &[RawProcessor],
        catalogue: &Catalogue,
    ) {
        for i in 0..processors.len() {
            let Some(r) = &raw[i].midr else { continue };
            let Some(m) = self.midr(ctx, &processors[i].id, r, catalogue) else {
                continue;
            };
            if processors[i].identity.is_some() {
                self.push(ctx.error(
                    r.at,
                    format!(
                        "processor `{}` has both a CPUID <identity> and a <midr>",
                        processors[i].id
                    ),
                    "an x86 part has an <identity>, an Arm core a <midr>: keep the one its \
                     architecture has",
                ));
            }
            if let Some(q) = processors[..i].iter().find(|q| {
                q.midr
                    .as_ref()
                    .is_some_and(|o| (o.implementer, o.part) == (m.implementer, m.part))
            }) {
                self.push(ctx.error(
                    r.at,
                    format!(
                        "processors `{}` and `{}` both claim MIDR implementer {:#04x}, part {:#05x}",
                        q.id, processors[i].id, m.implementer, m.part
                    ),
                    "each (implementer, part number) names one core",
                ));
            }
            processors[i].midr = Some(m);
        }
    }

    /// One `<midr>`, or `None` (with errors pushed) if it is malformed.
    fn midr(
        &mut self,
        ctx: &Ctx,
        processor: &str,
        raw: &RawMidr,
        catalogue: &Catalogue,
    ) -> Option<Midr> {
        let implementer = parse_number(&raw.implementer).filter(|&n| n <= 0xFF);
        if implementer.is_none() {
            self.push(ctx.error(
                raw.at,
                format!(
                    "processor `{processor}`: MIDR implementer `{}` is not an 8-bit number",
                    raw.implementer
                ),
                "write MIDR_EL1 bits 31:24 as a number, e.g. implementer=\"0x41\" for Arm Limited",
            ));
        }
        let part = parse_number(&raw.part).filter(|&n| n <= 0xFFF);
        if part.is_none() {
            self.push(ctx.error(
                raw.at,
                format!(
                    "processor `{processor}`: MIDR part number `{}` is not a 12-bit number",
                    raw.part
                ),
                "write MIDR_EL1 bits 15:4 as a number, e.g. part=\"0xD4F\" for Neoverse V2",
            ));
        }
        let codenames = self.recognition(
            ctx,
            catalogue,
            Recognition {
                processor,
                at: raw.at,
                what: "MIDR",
                source: &raw.source,
                codenames: &raw.codenames,
                example: "codenames=\"Neoverse V2\"",
            },
        );
        Some(Midr {
            implementer: u8::try_from(implementer?).ok()?,
            part: u16::try_from(part?).ok()?,
            codenames,
            source: raw.source.clone(),
        })
    }
}
