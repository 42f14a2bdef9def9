//! Errors that point at a place in a spec file, and the files they point into.

use std::fmt;
use std::path::{Path, PathBuf};

/// A spec file's text, kept so byte offsets can become line and column numbers.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as it was given.
    pub path: PathBuf,
    /// The whole file.
    pub text: String,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// Reads a file; an unreadable file becomes a diagnostic naming it.
    pub fn read(path: &Path) -> Result<Self, Diagnostic> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Diagnostic::file(path, format!("cannot read the file: {e}"))
                .help("check that the path exists and is a readable UTF-8 XML file")
        })?;
        Ok(Self::new(path.to_path_buf(), text))
    }

    /// Wraps text that is already in memory.
    pub fn new(path: PathBuf, mut text: String) -> Self {
        // A byte-order mark is not content, and the XML reader skips it without counting it:
        // dropping it keeps every offset the reader reports a byte offset of `text`.
        if text.starts_with('\u{feff}') {
            text.drain(..'\u{feff}'.len_utf8());
        }
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        // Parser offsets can land inside a character (a byte-order mark, say); count from the
        // start of that character.
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let column = self.text[start..offset].chars().count() + 1;
        (line + 1, column)
    }

    /// A diagnostic at a byte offset of this file.
    pub fn error_at(&self, offset: usize, message: String) -> Diagnostic {
        let (line, column) = self.position(offset);
        Diagnostic {
            path: self.path.clone(),
            line,
            column,
            message,
            help: None,
        }
    }
}

/// One problem found in the spec: where it is, what is wrong, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file.
    pub path: PathBuf,
    /// 1-based line; 0 when the problem concerns the whole file.
    pub line: usize,
    /// 1-based column; 0 when the problem concerns the whole file.
    pub column: usize,
    /// What is wrong, naming the register and field involved.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic about a whole file (it could not be read, or a directory is missing).
    pub fn file(path: &Path, message: String) -> Self {
        Self {
            path: path.to_path_buf(),
            line: 0,
            column: 0,
            message,
            help: None,
        }
    }

    /// Adds advice on how to fix the problem.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: error: {}", self.path.display(), self.message)?;
        } else {
            write!(
                f,
                "{}:{}:{}: error: {}",
                self.path.display(),
                self.line,
                self.column,
                self.message
            )?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// Renders a list of diagnostics the way the command line prints them.
pub fn render(diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&d.to_string());
        out.push('\n');
    }
    out.push_str(&format!(
        "{} error{} in the spec\n",
        diagnostics.len(),
        if diagnostics.len() == 1 { "" } else { "s" }
    ));
    out
}
