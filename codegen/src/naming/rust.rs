//! Rust identifiers of the generated crate: keywords, register type names, field accessors,
//! value enums and their variants, constants, and the value type of a field.

use super::case::{camel_case, screaming_snake_case, snake_case};
use crate::model::{Field, Register};

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
        "BitRange",
        "BitRanges",
        "BitArray",
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

/// Rust identifiers for a field: getter name and type name fragment.
pub fn field_ident(field: &Field) -> String {
    let name = snake_case(&field.name.replace("{n}", ""));
    // Keywords and names that clash with the layout's own items.
    if is_keyword(&name) || matches!(name.as_str(), "bits" | "from_bits" | "try_from_bits") {
        format!("{name}_")
    } else {
        name
    }
}

/// `SCREAMING_SNAKE` name of a layout's metadata static in its unit module (`CHA_CTL_INFO`).
pub fn info_ident(reg: &Register) -> String {
    format!("{}_INFO", screaming_snake_case(&reg.type_name))
}

/// The constant holding a register's notes when the `noted!` macro writes them
/// (`CHA_BOX_FILTER0_INFO_NOTES`).
pub fn notes_ident(reg: &Register) -> String {
    format!("{}_NOTES", info_ident(reg))
}

/// The enum type of a field with exhaustive named values.
pub fn enum_ident(reg: &Register, field: &Field) -> String {
    format!("{}{}", reg.type_name, camel_case(&field.name))
}

/// The enum variant for a named value: CamelCase, with a `V` before a leading digit (`3v3` ->
/// `V3v3`) and a `_` after `Self`, so any name the validator accepts is an identifier.
pub fn variant_ident(name: &str) -> String {
    let v = camel_case(name);
    if v.is_empty() || v.starts_with(|c: char| c.is_ascii_digit()) {
        format!("V{v}")
    } else if v == "Self" {
        "Self_".into()
    } else {
        v
    }
}

/// The constant of a field's partial value list (values that do not name every value):
/// `W_MSR_PMON_EVT_SEL_EV_SEL_VALUES`.
pub fn values_const_ident(reg: &Register, f: &Field) -> String {
    format!(
        "{}_{}_VALUES",
        screaming_snake_case(&reg.type_name),
        screaming_snake_case(&f.name.replace("{n}", ""))
    )
}

/// The constant of a field of a register type in a processor's `pmu` module
/// (`S_SUMMARY_OV_MB`); `module` is given where the type is shared by several units, which
/// then each prefix it with their own (`CBOX_...`).
pub fn field_const_ident(reg: &Register, f: &Field, module: Option<&str>) -> String {
    let mut name = screaming_snake_case(&reg.type_name);
    if let Some(m) = module {
        name = format!("{}_{name}", super::constant_case(m));
    }
    bit_const_ident(&name, f)
}

/// The constant of an overflow bit: the concrete register, then the field
/// (`S0_MSR_PMON_SUMMARY_OV_MB`).
pub fn bit_const_ident(register: &str, f: &Field) -> String {
    let field = field_ident(f).to_ascii_uppercase();
    format!("{register}_{}", field.trim_end_matches('_'))
}

/// The position constant of a field on its register type (`WEvtSel::THRESH_BITS`): its Rust
/// name in capitals and `_BITS`, a suffix no other constant of a register type has (its own
/// `RESET`..., the role traits' `UMASK`...), so none is shadowed.
pub fn field_bits_ident(f: &Field) -> String {
    let name = field_ident(f).trim_end_matches('_').to_ascii_uppercase();
    format!("{name}_BITS")
}

/// The `PmuInfo` static of a unit in its processor's `pmu` module (`CBOX`).
pub fn pmu_static_ident(module: &str) -> String {
    super::constant_case(module)
}

/// The shared perf entry of a unit's boxes (`CBOX_PERF`).
pub fn shared_perf_ident(module: &str) -> String {
    format!("{}_PERF", super::constant_case(module))
}

/// The static of a perf driver in a processor's `pmu` module (`PERF_SNBEP_GENERIC`).
pub fn perf_driver_ident(id: &str) -> String {
    format!("PERF_{}", super::constant_case(id))
}

/// The constant of an event module for an auxiliary MSR its events set
/// (`MSR_OFFCORE_RSP_0` -> `AUX_MSR_OFFCORE_RSP_0`).
pub fn aux_msr_ident(register: &str) -> String {
    format!("AUX_{}", super::constant_case(register))
}

/// The narrowest unsigned integer type holding `width` bits: the value type of a field's
/// accessors (one bit is a `bool` there; see [`value_type`]).
pub fn int_type(width: u32) -> &'static str {
    match width {
        0..=8 => "u8",
        9..=16 => "u16",
        17..=32 => "u32",
        _ => "u64",
    }
}

/// The value type of a field of `width` bits without named values: `bool` for one bit, else
/// [`int_type`].
pub fn value_type(width: u32) -> &'static str {
    if width == 1 {
        "bool"
    } else {
        int_type(width)
    }
}

/// The value type of a field's accessors: `bool` for one bit (an element of a bit array
/// included), the narrowest integer, or the field's enum.
pub fn accessor_type(reg: &Register, f: &Field) -> String {
    if let Some(rep) = &f.repeat {
        return value_type(rep.element_width).into();
    }
    if f.has_enum() {
        return enum_ident(reg, f);
    }
    value_type(f.width()).into()
}
