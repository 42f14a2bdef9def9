//! Comment text for the generated Rust: doc comments wrapped at 100 columns.

use std::fmt::Write;

/// How wide a doc comment line may be, its indentation and `/// ` included.
pub const DOC_WIDTH: usize = 100;

/// `text` as doc comment lines of at most `DOC_WIDTH` columns, each `indent` and `/// `
/// first.
pub fn doc(out: &mut String, indent: &str, text: &str) {
    wrap(out, &format!("{indent}///"), text);
}

/// `text` as comment lines of at most `DOC_WIDTH` columns, each `marker` (`///`, `//!`)
/// and a space first. A word longer than a line stays whole; a word that would start a
/// Markdown list or heading (`-`, `+`, `#`, `1.`) never starts a line.
pub fn wrap(out: &mut String, marker: &str, text: &str) {
    wrap_hanging(out, marker, "", text);
}

/// A Markdown list item (`- text`) as doc comment lines, continuation lines indented under
/// the text.
pub fn doc_item(out: &mut String, indent: &str, text: &str) {
    wrap_hanging(out, &format!("{indent}///"), "  ", &format!("- {text}"));
}

/// [`wrap`], with `hang` before every line but the first.
fn wrap_hanging(out: &mut String, marker: &str, hang: &str, text: &str) {
    let width = DOC_WIDTH - marker.len() - 1 - hang.len();
    let mut first = true;
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            // A word that must not start a line takes the last word of this one along.
            let cut = if starts_block(word) {
                line.rfind(' ').map_or(line.len(), |i| i + 1)
            } else {
                line.len()
            };
            let carried = line.split_off(cut);
            if !line.trim_end().is_empty() {
                let pad = if first { "" } else { hang };
                let _ = writeln!(out, "{marker} {pad}{}", line.trim_end());
                first = false;
                line = carried;
            } else {
                line.push_str(&carried);
            }
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if line.is_empty() {
        let _ = writeln!(out, "{marker}");
    } else {
        let pad = if first { "" } else { hang };
        let _ = writeln!(out, "{marker} {pad}{line}");
    }
}

/// Whether `word` at the start of a line would make Markdown start a block: a list item
/// (`-`, `+`, `*`, `1.`, `1)`), a heading (`#`) or a table row (`|`).
fn starts_block(word: &str) -> bool {
    let numbered = word.len() > 1
        && word.ends_with(['.', ')'])
        && word[..word.len() - 1].bytes().all(|b| b.is_ascii_digit());
    matches!(word, "-" | "+" | "*") || word.starts_with(['#', '|']) || numbered
}

/// The narrowest unsigned integer type holding `width` bits: the value type of a field's
/// accessors (one bit is a `bool` there; see `layout`).
pub(super) fn int_name(width: u32) -> &'static str {
    match width {
        0..=8 => "u8",
        9..=16 => "u16",
        17..=32 => "u32",
        _ => "u64",
    }
}
