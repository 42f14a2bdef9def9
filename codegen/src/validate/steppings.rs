//! CPUID steppings in a processor's `<identity>`: two processors of one vendor may share a
//! family and model (Skylake-SP and Cascade Lake are both 06_55H) only when their stepping
//! ranges are disjoint, so that a machine's vendor, family, model and stepping name one spec.

use super::*;
use crate::model::Identity;
use crate::parse::RawIdentity;

/// The highest CPUID stepping: the stepping is four bits (CPUID.01H:EAX[3:0]).
const MAX_STEPPING: u32 = 0xF;

/// `lo-hi` or one stepping, each a number from 0 to 15, lo at most hi.
fn parse(text: &str) -> Option<(u32, u32)> {
    let one = |t: &str| parse_number(t.trim()).filter(|&n| n <= u64::from(MAX_STEPPING));
    let (lo, hi) = match text.split_once('-') {
        Some((lo, hi)) => (one(lo)?, one(hi)?),
        None => (one(text)?, one(text)?),
    };
    (lo <= hi).then_some((lo as u32, hi as u32))
}

/// The stepping range an identity covers: its `steppings`, or every stepping.
fn range(id: &Identity) -> (u32, u32) {
    id.steppings.unwrap_or((0, MAX_STEPPING))
}

impl Validator {
    /// The `steppings` of a raw identity, or `None` (with an error pushed when it is there but
    /// malformed).
    pub(super) fn identity_steppings(
        &mut self,
        ctx: &Ctx,
        processor: &str,
        raw: &RawIdentity,
    ) -> Option<(u32, u32)> {
        let text = raw.steppings.as_deref()?;
        let parsed = parse(text);
        if parsed.is_none() {
            self.push(ctx.error(
                raw.at,
                format!("processor `{processor}`: steppings `{text}` is not a stepping range"),
                "write the lowest and highest CPUID stepping, 0 to 15, as steppings=\"0-4\" (or one stepping, \"5\")",
            ));
        }
        parsed
    }

    /// Two identities claiming one family and model with overlapping steppings (an identity
    /// without `steppings` covers all sixteen): an error at `at`, the later one's identity.
    pub(super) fn stepping_overlap(
        &mut self,
        ctx: &Ctx,
        at: usize,
        (first, a): (&str, &Identity),
        (second, b): (&str, &Identity),
    ) {
        let ((alo, ahi), (blo, bhi)) = (range(a), range(b));
        let shared = super::models::overlap(&a.models, &b.models);
        let Some(model) = shared.filter(|_| (a.vendor, a.family) == (b.vendor, b.family)) else {
            return;
        };
        if ahi < blo || bhi < alo {
            return;
        }
        let vendor = match a.vendor {
            Vendor::Intel => String::new(),
            other => format!("{} ", other.as_str()),
        };
        let claim = format!(
            "processors `{first}` and `{second}` both claim CPUID {vendor}{:02X}_{model:02X}H",
            a.family
        );
        self.push(if a.steppings.is_none() && b.steppings.is_none() {
            ctx.error(
                at,
                claim,
                "each CPUID signature names one processor; fix the family or model",
            )
        } else {
            ctx.error(
                at,
                format!("{claim}, with steppings {alo}-{ahi} and {blo}-{bhi} overlapping"),
                "each CPUID signature names one processor; give each processor of one family and model its own steppings=\"lo-hi\", disjoint from the others'",
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn stepping_ranges_parse() {
        assert_eq!(parse("0-4"), Some((0, 4)));
        assert_eq!(parse("5-15"), Some((5, 15)));
        assert_eq!(parse("0x5-0xF"), Some((5, 15)));
        assert_eq!(parse("7"), Some((7, 7)));
        for bad in ["", "4-0", "0-16", "x", "1-2-3", "-1"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
