//! The CPU vendor and CPUID models of a processor's `<identity>`: `model="0x3E"` for one
//! model, or `models="0x10-0x1F,0xA0-0xAF"` for the model ranges a vendor gives one product
//! (AMD numbers the parts of one generation by range). Whether two identities claim one
//! machine is `steppings`'s question.

use super::*;
use crate::parse::RawIdentity;

/// The highest CPUID display model (an 8-bit value: CPUID.01H:EAX[19:16] and [7:4]).
const MAX_MODEL: u64 = 0xFF;

/// `lo-hi` or one model, each at most 0xFF, lo at most hi.
fn parse_range(text: &str) -> Option<(u32, u32)> {
    let one = |t: &str| parse_number(t.trim()).filter(|&n| n <= MAX_MODEL);
    let (lo, hi) = match text.split_once('-') {
        Some((lo, hi)) => (one(lo)?, one(hi)?),
        None => (one(text)?, one(text)?),
    };
    (lo <= hi).then_some((lo as u32, hi as u32))
}

/// A comma-separated list of model ranges, ascending and disjoint; `Err` holds what is wrong.
fn parse_list(text: &str) -> Result<Vec<(u32, u32)>, String> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for part in text.split(',') {
        let Some((lo, hi)) = parse_range(part) else {
            return Err(format!("`{}` is not a model range", part.trim()));
        };
        if let Some(&(plo, phi)) = ranges.last() {
            if lo <= phi {
                return Err(format!(
                    "{lo:#04X}-{hi:#04X} does not follow {plo:#04X}-{phi:#04X}"
                ));
            }
        }
        ranges.push((lo, hi));
    }
    Ok(ranges)
}

/// Whether two lists of model ranges share a model.
pub(super) fn overlap(a: &[(u32, u32)], b: &[(u32, u32)]) -> Option<u32> {
    a.iter()
        .flat_map(|&(alo, ahi)| {
            b.iter()
                .map(move |&(blo, bhi)| (alo.max(blo), ahi.min(bhi)))
        })
        .find(|(lo, hi)| lo <= hi)
        .map(|(lo, _)| lo)
}

impl Validator {
    /// The identity's vendor: `GenuineIntel` unless it says otherwise; `None` (with an error
    /// pushed) for a vendor the spec does not know.
    pub(super) fn identity_vendor(
        &mut self,
        ctx: &Ctx,
        processor: &str,
        raw: &RawIdentity,
    ) -> Option<Vendor> {
        let Some(text) = raw.vendor.as_deref() else {
            return Some(Vendor::Intel);
        };
        let vendor = Vendor::parse(text);
        if vendor.is_none() {
            let known: Vec<&str> = Vendor::ALL.iter().map(|(_, n)| *n).collect();
            self.push(ctx.error(
                raw.at,
                format!("processor `{processor}`: unknown vendor `{text}`"),
                &format!(
                    "write CPUID leaf 0's vendor string, one of: {}",
                    known.join(", ")
                ),
            ));
        }
        vendor
    }

    /// The identity's models: `model` or `models`, exactly one of them; `None` (with an error
    /// pushed) when neither, both, or a malformed one is given.
    pub(super) fn identity_models(
        &mut self,
        ctx: &Ctx,
        processor: &str,
        raw: &RawIdentity,
    ) -> Option<Vec<(u32, u32)>> {
        let problem = match (&raw.model, &raw.models) {
            (Some(m), None) => match parse_number(m).filter(|&n| n <= MAX_MODEL) {
                Some(n) => return Some(vec![(n as u32, n as u32)]),
                None => format!("CPUID model `{m}` is not a display model (at most 0xFF)"),
            },
            (None, Some(list)) => match parse_list(list) {
                Ok(ranges) => return Some(ranges),
                Err(why) => format!("models `{list}`: {why}"),
            },
            (Some(_), Some(_)) => "identity gives both model and models".to_string(),
            (None, None) => "identity gives no model".to_string(),
        };
        self.push(ctx.error(
            raw.at,
            format!("processor `{processor}`: {problem}"),
            "give model=\"0x3E\" for one model, or models=\"0x10-0x1F,0xA0-0xAF\" for ascending, disjoint ranges lo-hi of display models up to 0xFF",
        ));
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lists_are_ascending_disjoint_ranges_up_to_0xff() {
        assert_eq!(parse_list("0x3E"), Ok(vec![(0x3E, 0x3E)]));
        assert_eq!(
            parse_list("0x10-0x1F, 0xA0-0xAF"),
            Ok(vec![(0x10, 0x1F), (0xA0, 0xAF)])
        );
        assert_eq!(parse_list("0-0xFF"), Ok(vec![(0, 0xFF)]));
        for bad in [
            "",
            "0x1F-0x10",
            "0x100",
            "0x10-0x1F,0x1F",
            "0x20,0x10",
            "x",
            "1-2-3",
        ] {
            assert!(parse_list(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn overlap_finds_the_lowest_shared_model() {
        assert_eq!(overlap(&[(0x10, 0x1F)], &[(0x18, 0x30)]), Some(0x18));
        assert_eq!(overlap(&[(0x10, 0x1F)], &[(0x20, 0x30)]), None);
        assert_eq!(overlap(&[(1, 1), (5, 9)], &[(2, 4), (9, 9)]), Some(9));
    }
}
