//! Numbers, bit ranges, identifiers and CPUID references as the spec writes them.

/// "0,1,2,3" or "0-3" or "2" -> a bit mask of counters (public for the importer).
pub fn counters_mask(text: &str) -> Option<u32> {
    parse_counters(text)
}

/// "0,1,2,3" or "0-3" or "2" -> a bit mask of counters.
pub(crate) fn parse_counters(text: &str) -> Option<u32> {
    let mut mask = 0u32;
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if lo > hi || hi >= 32 {
            return None;
        }
        for n in lo..=hi {
            mask |= 1 << n;
        }
    }
    (mask != 0).then_some(mask)
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
