//! Naming: every name codegen derives from a spec name, and the shape of its text. One
//! module, which every emitter (and the validator) calls, so a name is spelled the same way
//! in the Rust crate, the C headers, the tests and the reference pages:
//!
//! - [`case`]: case conversion (`camel_case`, `snake_case`, `constant_case`);
//! - [`rust`]: Rust identifiers (keywords, type, field, enum and constant names, value types);
//! - [`c`]: every C identifier and file name of the headers;
//! - [`wrap`]: word wrapping of comments and doc text, for both languages;
//! - here: names read from the spec (event constants, spec paths, anchors) and tidy spec text.
//!
//! `tests/modules.rs` fails if a case-conversion or word-wrap function is defined anywhere
//! else, or if an emitter converts case itself.

pub mod c;
pub mod case;
pub mod rust;
pub mod wrap;

pub use case::{camel_case, constant_case, screaming_snake_case, snake_case};
pub use rust::{is_keyword, rust_type_name};

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

/// The Markdown anchor of a register in its unit's reference page (`w_msr_pmon_evt_sel`):
/// the name lower-cased, without its placeholders' braces.
pub fn anchor(name: &str) -> String {
    name.to_ascii_lowercase().replace(['{', '}'], "")
}
