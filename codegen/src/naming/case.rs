//! Case conversion of spec names: `CamelCase` types, `snake_case` accessors, `CONSTANT_CASE`
//! macros and statics.

/// `W_MSR_PMON_EVT_SEL` -> `WMsrPmonEvtSel`.
pub fn camel_case(s: &str) -> String {
    s.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let lower = p.to_ascii_lowercase();
            let mut c = lower.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// `PERFEVTSEL_InUse` -> `perfevtsel_in_use`; `FW_WRITE` -> `fw_write`.
pub fn snake_case(s: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1);
            let boundary = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase()));
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    let collapsed: Vec<&str> = out.split('_').filter(|p| !p.is_empty()).collect();
    collapsed.join("_")
}

/// `SCREAMING_SNAKE` of a name in any case: `WMsrPmonEvtSel` -> `W_MSR_PMON_EVT_SEL`,
/// `PERFEVTSEL_InUse` -> `PERFEVTSEL_IN_USE` (its snake case, upper-cased).
pub fn screaming_snake_case(s: &str) -> String {
    snake_case(s).to_ascii_uppercase()
}

/// `[A-Za-z0-9]` kept and upper-cased, anything else `_`: `xeon_7500` -> `XEON_7500`,
/// `umask-ext` -> `UMASK_EXT`. For names already split into words (modules, ids, roles).
pub fn constant_case(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_case_spells_the_same_words() {
        assert_eq!(camel_case("W_MSR_PMON_EVT_SEL"), "WMsrPmonEvtSel");
        assert_eq!(snake_case("PERFEVTSEL_InUse"), "perfevtsel_in_use");
        assert_eq!(screaming_snake_case("WMsrPmonEvtSel"), "W_MSR_PMON_EVT_SEL");
        assert_eq!(constant_case("umask-ext"), "UMASK_EXT");
        assert_eq!(constant_case("xeon_7500"), "XEON_7500");
    }
}
