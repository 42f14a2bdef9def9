//! Names: the Rust identifiers codegen derives from spec names, and tidy spec text. One
//! module, so every emitter spells a name the same way.

/// The Rust constant for an Intel event name: `UNC_H_REQUESTS.READS` -> `REQUESTS_READS`.
pub fn event_ident(name: &str) -> String {
    let rest = name
        .strip_prefix("UNC_")
        .and_then(|r| r.split_once('_').map(|(_, rest)| rest))
        .unwrap_or(name);
    let mut ident: String = rest
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert(0, '_');
    }
    ident
}

/// Collapses runs of whitespace (XML text is indented) into single spaces.
pub fn normalize_text(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

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

/// The path of a unit file relative to the spec directory: its last two components.
pub(crate) fn relative_spec_path(path: &std::path::Path) -> String {
    let parts: Vec<String> = path
        .components()
        .rev()
        .take(2)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// Rust keywords (strict, reserved and 2018+): a generated function or field accessor with
/// one of these names gets a `_` suffix.
pub fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "as" | "break"
            | "const"
            | "continue"
            | "crate"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "Self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "async"
            | "await"
            | "dyn"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
            | "union"
            | "raw"
            | "safe"
    )
}

/// A register type name that would shadow, inside its generated module, a name the module
/// uses: the prelude's (`Result`, `Option`, `Default`...), the crate's support types (`Msr`,
/// `Register`, `Layout`...), the unit's `Event`, a keyword (`Self`), or a name ending in
/// `Layout` (the suffix of every layout enum). Such a type gets a `Reg` suffix.
pub fn rust_type_name(name: String) -> String {
    const TAKEN: &[&str] = &[
        "Result",
        "Option",
        "Some",
        "None",
        "Ok",
        "Err",
        "Default",
        "Clone",
        "Copy",
        "Send",
        "Sync",
        "Sized",
        "Unpin",
        "Drop",
        "Fn",
        "FnMut",
        "FnOnce",
        "Iterator",
        "IntoIterator",
        "Extend",
        "PartialEq",
        "Eq",
        "PartialOrd",
        "Ord",
        "AsRef",
        "AsMut",
        "Into",
        "From",
        "TryFrom",
        "TryInto",
        "FromIterator",
        "Debug",
        "Hash",
        "Self",
        "Register",
        "Msr",
        "PciRegister",
        "FieldTooWide",
        "ReservedBitsSet",
        "Space",
        "Access",
        "ProcessorInfo",
        "UnitInfo",
        "RegisterInfo",
        "Addresses",
        "AddressInfo",
        "Location",
        "FieldInfo",
        "ValueInfo",
        "RepeatInfo",
        "NoteInfo",
        "EventInfo",
        "Event",
        "Layout",
        "Reg32",
        "Reg64",
        "Role",
        "CoreEvent",
        "List",
    ];
    // `{Type}Layout` is the name of every type's layout enum, so no register type may end in
    // `Layout` itself (`CsLayout` would be the layout of `Cs`).
    if TAKEN.contains(&name.as_str()) || name.ends_with("Layout") {
        name + "Reg"
    } else {
        name
    }
}
