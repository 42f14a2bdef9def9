//! The one grammar every subcommand reads: numbers as an msr-tools user types them, and
//! `field=value` lists (with `event=NAME`) checked for what would otherwise be silently
//! overridden.

use pmu_regs::{RegisterInfo, Role};

use crate::failure::Failure;

/// The number rule, for `--help`.
pub const NUMBER_RULE: &str = "Numbers: 0x1f is hex, 0d31 decimal, 0b11111 binary. A bare number \
with a hex letter (1f, 4300c0) is hex, as rdmsr prints it. A bare number of two or more digits \
and no letter (430076) is refused as ambiguous: write 0x430076 or 0d430076. A single digit (0-9) \
is the same in both.";

/// Parses a number by [`NUMBER_RULE`]. Negative and too-large numbers say so.
pub fn number(text: &str) -> Result<u64, Failure> {
    let t = text.trim().replace('_', "");
    if t.starts_with('-') {
        return Err(Failure::usage(format!(
            "`{text}` is negative; register and field values are unsigned (0 or more)"
        )));
    }
    let lower = t.to_ascii_lowercase();
    let (digits, radix, explicit) = if let Some(h) = lower.strip_prefix("0x") {
        (h, 16, true)
    } else if let Some(d) = lower.strip_prefix("0d") {
        (d, 10, true)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (b, 2, true)
    } else {
        (lower.as_str(), 16, false)
    };
    let valid = |c: char| c.is_digit(radix);
    if digits.is_empty() || !digits.chars().all(valid) {
        return Err(Failure::usage(format!(
            "`{text}` is not a number; write hex as 0x1f (or 1f), decimal as 0d31, binary as 0b11111"
        )));
    }
    if !explicit && digits.len() > 1 && digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(Failure::usage(format!(
            "`{text}` is ambiguous: rdmsr prints hex without 0x, so it could be 0x{digits} or \
             decimal {digits}; write 0x{digits} or 0d{digits}"
        )));
    }
    u64::from_str_radix(digits, radix).map_err(|_| {
        Failure::usage(format!(
            "`{text}` is too large: values are at most 64 bits (0xffff_ffff_ffff_ffff)"
        ))
    })
}

/// Checks `field=value` words for `info` and rewrites every number in the one form the
/// library's codec reads unambiguously (hex with 0x). Refused: a word that is not
/// `field=value`, a field given twice, `event=NAME` together with a field it sets, a field
/// that names reserved or ignored bits, a number that breaks [`NUMBER_RULE`].
pub fn assignments(
    info: &RegisterInfo,
    words: &[String],
) -> Result<Vec<(String, String)>, Failure> {
    let mut out: Vec<(String, String)> = Vec::new();
    for w in words {
        let Some((f, v)) = w.split_once('=') else {
            return Err(Failure::usage(format!(
                "`{w}` is not field=value (e.g. ev_sel=0x3c)"
            )));
        };
        let (f, v) = (f.trim(), v.trim());
        if f.is_empty() || v.is_empty() {
            return Err(Failure::usage(format!(
                "`{w}` is not field=value (e.g. ev_sel=0x3c)"
            )));
        }
        if let Some((prev, _)) = out.iter().find(|(p, _)| p.eq_ignore_ascii_case(f)) {
            return Err(Failure::usage(format!(
                "{prev} is given twice; give each field once"
            )));
        }
        if let Some(p) = info
            .fields
            .iter()
            .find(|p| p.is_placeholder() && p.name.eq_ignore_ascii_case(f))
        {
            let bits = if p.msb == p.lsb {
                format!("bit {}", p.lsb)
            } else {
                format!("bits {}:{}", p.msb, p.lsb)
            };
            return Err(Failure::usage(format!(
                "{}.{} names {} ({}), which cannot be set; leave it out",
                info.name,
                p.name,
                bits,
                match p.access.as_str() {
                    "ig" => "ignored",
                    _ => "reserved",
                }
            )));
        }
        let named = info
            .fields
            .iter()
            .filter(|x| x.name.eq_ignore_ascii_case(f))
            .any(|x| x.values.iter().any(|n| n.name.eq_ignore_ascii_case(v)));
        let value = if f.eq_ignore_ascii_case("event") || named || !starts_like_number(v) {
            v.to_string()
        } else {
            format!("{:#x}", number(v)?)
        };
        out.push((f.to_string(), value));
    }
    if let Some((_, name)) = out.iter().find(|(f, _)| f.eq_ignore_ascii_case("event")) {
        // The fields playing the roles an event of the list sets.
        let set_by_event = |f: &str| {
            [Role::Event, Role::Umask, Role::EventExt]
                .iter()
                .filter_map(|r| info.role(*r))
                .any(|x| x.name.eq_ignore_ascii_case(f))
        };
        if let Some((f, _)) = out.iter().find(|(f, _)| set_by_event(f)) {
            return Err(Failure::usage(format!(
                "event={name} sets {f} itself; give either event=NAME or {f}=..., not both"
            )));
        }
    }
    Ok(out)
}

/// Whether a value is meant as a number (rather than a value name such as `lt` or `usr`).
fn starts_like_number(v: &str) -> bool {
    v.starts_with(|c: char| c.is_ascii_digit() || c == '-')
        || v.chars().all(|c| c.is_ascii_hexdigit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_rule() {
        let ok = |t: &str| number(t).map_err(|e| e.to_string()).unwrap();
        assert_eq!(ok("0x1F"), 31);
        assert_eq!(ok("1f"), 31);
        assert_eq!(ok("0d31"), 31);
        assert_eq!(ok("0b1_1111"), 31);
        assert_eq!(ok("7"), 7);
        assert!(number("31").is_err());
        assert!(number("-1").unwrap_err().to_string().contains("negative"));
        assert!(number("0x1_0000_0000_0000_0000")
            .unwrap_err()
            .to_string()
            .contains("too large"));
    }
}
