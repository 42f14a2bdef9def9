//! Word wrapping, the one rule for every comment and doc text codegen writes: words are
//! filled into lines of at most a given width (a word longer than that stays whole on a line
//! of its own), counted in characters.
//!
//! - [`lines`]: plain text, each line of the input wrapped on its own (C comments, doc text
//!   built as token streams);
//! - [`comment`], [`doc`], [`doc_item`]: Rust comment lines written with their marker, where
//!   a word that would make Markdown start a block never starts a line.

use std::fmt::Write;

/// How wide a doc comment line may be, its indentation and `/// ` included.
pub const DOC_WIDTH: usize = 100;

/// Words of one line of text filled into lines of at most `width` characters. With
/// `markdown`, a word that would start a Markdown block (see [`starts_block`]) takes the last
/// word of the line before along rather than start a line itself.
fn fill(text: &str, width: usize, markdown: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let columns = |s: &str| s.chars().count();
    for word in text.split_whitespace() {
        if !line.is_empty() && columns(&line) + 1 + columns(word) > width {
            let cut = if markdown && starts_block(word) {
                line.rfind(' ').map_or(line.len(), |i| i + 1)
            } else {
                line.len()
            };
            let carried = line.split_off(cut);
            if line.trim_end().is_empty() {
                // Nothing before the carried word: keep the line whole.
                line.push_str(&carried);
            } else {
                lines.push(line.trim_end().to_string());
                line = carried;
            }
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` in lines of at most `width` characters: every line of the input is wrapped on its
/// own, so line breaks and blank lines are kept.
pub fn lines(text: &str, width: usize) -> Vec<String> {
    text.lines().flat_map(|l| fill(l, width, false)).collect()
}

/// [`lines`], joined: each line ends with a newline.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width.max(1));
    for line in lines(text, width) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `text` as doc comment lines of at most [`DOC_WIDTH`] columns, each `indent` and `/// `
/// first.
pub fn doc(out: &mut String, indent: &str, text: &str) {
    comment(out, &format!("{indent}///"), text);
}

/// `text` as comment lines of at most [`DOC_WIDTH`] columns, each `marker` (`///`, `//!`)
/// and a space first. A word longer than a line stays whole; a word that would start a
/// Markdown list or heading (`-`, `+`, `#`, `1.`) never starts a line.
pub fn comment(out: &mut String, marker: &str, text: &str) {
    comment_hanging(out, marker, "", text);
}

/// A Markdown list item (`- text`) as doc comment lines, continuation lines indented under
/// the text.
pub fn doc_item(out: &mut String, indent: &str, text: &str) {
    comment_hanging(out, &format!("{indent}///"), "  ", &format!("- {text}"));
}

/// [`comment`], with `hang` before every line but the first.
fn comment_hanging(out: &mut String, marker: &str, hang: &str, text: &str) {
    let width = DOC_WIDTH - marker.len() - 1 - hang.len();
    for (i, line) in fill(text, width, true).iter().enumerate() {
        if line.is_empty() {
            let _ = writeln!(out, "{marker}");
        } else {
            let pad = if i == 0 { "" } else { hang };
            let _ = writeln!(out, "{marker} {pad}{line}");
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_fill_lines_and_a_long_word_stands_alone() {
        assert_eq!(lines("a bb ccc", 4), ["a bb", "ccc"]);
        assert_eq!(lines("abcdefgh x", 4), ["abcdefgh", "x"]);
        // Line breaks and blank lines of the input are kept.
        assert_eq!(wrap("a b\n\nc", 10), "a b\n\nc\n");
        // Columns are characters, not bytes: "é é" is three columns.
        assert_eq!(lines("é é", 3), ["é é"]);
    }

    #[test]
    fn a_markdown_list_marker_never_starts_a_comment_line() {
        // 94 + 1 + 1 columns fill the 96 a `/// ` line leaves; the `-` would start the next.
        let long = "a".repeat(94);
        let mut out = String::new();
        comment(&mut out, "///", &format!("{long} b - x"));
        assert_eq!(out, format!("/// {long}\n/// b - x\n"));
        // A list item's later lines hang under its text: 94 columns after `/// ` and the hang.
        let word = "a".repeat(91);
        let mut item = String::new();
        doc_item(&mut item, "", &format!("{word} y"));
        assert_eq!(item, format!("/// - {word}\n///   y\n"));
    }
}
