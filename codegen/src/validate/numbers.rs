//! Numbers, bit ranges, identifiers and CPUID references as the spec writes them.

/// "0,1,2,3" or "0-3" or "2" -> a bit mask of counters (public for the importer).
pub fn counters_mask(text: &str) -> Option<u32> {
    parse_counters(text)
}

/// "0,1,2,3" or "0-3" or "2" -> a bit mask of counters.
pub(crate) fn parse_counters(text: &str) -> Option<u32> {
    let mut mask = 0u32;
    for (lo, hi) in counter_ranges(text)? {
        if hi >= 32 {
            return None;
        }
        for n in lo..=hi {
            mask |= 1 << n;
        }
    }
    (mask != 0).then_some(mask)
}

/// `"0-3,5"` -> `[0, 1, 2, 3, 5]`: ascending, no repeats, below 1024, or `None`.
pub(crate) fn parse_counter_list(text: &str) -> Option<Vec<u32>> {
    let mut out: Vec<u32> = Vec::new();
    for (lo, hi) in counter_ranges(text)? {
        if hi > 1023 || out.last().is_some_and(|&l| l >= lo) {
            return None;
        }
        out.extend(lo..=hi);
    }
    (!out.is_empty()).then_some(out)
}

/// The comma-separated parts of a counter list, each `lo-hi` or one number, as (lo, hi) with
/// lo <= hi; `None` if a part is neither.
fn counter_ranges(text: &str) -> Option<Vec<(u32, u32)>> {
    let part = |part: &str| {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        (lo <= hi).then_some((lo, hi))
    };
    text.split(',').map(str::trim).map(part).collect()
}

/// Parses `0x`-prefixed hex or decimal.
pub fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None => s.parse().ok(),
    }
}

/// Parses `msb:lsb` or a single bit.
pub(crate) fn parse_bits(s: &str) -> Option<(u32, u32)> {
    match s.split_once(':') {
        Some((m, l)) => Some((m.trim().parse().ok()?, l.trim().parse().ok()?)),
        None => {
            let b = s.trim().parse().ok()?;
            Some((b, b))
        }
    }
}

/// The settings attributes of an event as written (`threshold`, `invert`, `edge`,
/// `any-thread`), each absent or its text. A metric's event has no `any-thread`.
pub(crate) struct SettingsText<'a> {
    pub(crate) threshold: Option<&'a str>,
    pub(crate) invert: Option<&'a str>,
    pub(crate) edge: Option<&'a str>,
    pub(crate) any_thread: Option<&'a str>,
}

/// The one rule for an event's settings, in an events file or a metric: the threshold a
/// number from 0 to 255, each flag 0 or 1, an absent one 0.
pub(crate) fn event_settings(
    written: &SettingsText<'_>,
) -> Result<crate::model::EventSettings, String> {
    let flag = |name: &str, v: Option<&str>| match v {
        None | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(format!("{name} `{other}` is not 0 or 1")),
    };
    let threshold = match written.threshold {
        None => 0,
        Some(t) => parse_number(t)
            .and_then(|n| u8::try_from(n).ok())
            .ok_or_else(|| format!("threshold `{t}` is not a number from 0 to 255"))?,
    };
    Ok(crate::model::EventSettings {
        threshold,
        invert: flag("invert", written.invert)?,
        edge: flag("edge", written.edge)?,
        any_thread: flag("any-thread", written.any_thread)?,
    })
}

pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(crate) fn is_cpuid_bits(s: &str) -> bool {
    // 0AH.EAX[15:8]
    let Some((leaf, rest)) = s.split_once('.') else {
        return false;
    };
    let leaf_ok = leaf.len() > 1
        && leaf.ends_with('H')
        && leaf[..leaf.len() - 1]
            .chars()
            .all(|c| c.is_ascii_hexdigit());
    let reg_ok = ["EAX[", "EBX[", "ECX[", "EDX["]
        .iter()
        .any(|p| rest.starts_with(p))
        && rest.ends_with(']')
        && parse_bits(&rest[4..rest.len() - 1]).is_some_and(|(m, l)| m >= l && m < 32);
    leaf_ok && reg_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_masks_take_any_order_below_32() {
        assert_eq!(parse_counters("0-3"), Some(0b1111));
        assert_eq!(parse_counters(" 3 , 0-1,1"), Some(0b1011));
        assert_eq!(parse_counters("31"), Some(1 << 31));
        for bad in ["", "32", "3-1", "x", "0-", "0,,1"] {
            assert_eq!(parse_counters(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn counter_lists_are_ascending_without_repeats_below_1024() {
        assert_eq!(parse_counter_list("0-3,5"), Some(vec![0, 1, 2, 3, 5]));
        assert_eq!(parse_counter_list(" 32 "), Some(vec![32]));
        assert_eq!(parse_counter_list("1023"), Some(vec![1023]));
        for bad in ["", "1024", "3-1", "2,1", "1,1", "0-3,3", "x", "0,,1"] {
            assert_eq!(parse_counter_list(bad), None, "{bad:?}");
        }
    }
}
