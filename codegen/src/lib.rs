//! pmu-regs code generator: XML register specs in, a type-safe `no_std` crate and its
//! documentation out.
//!
//! The pipeline has one module per stage:
//! [`parse`] (XML -> raw structs) -> [`validate`] (raw -> [`model`], or every error) ->
//! [`emit`] (model -> files in memory) -> [`output`] (compare with, or atomically replace,
//! `generated/`). [`diagnostics`] holds the errors that point into spec files.

pub mod diagnostics;
pub mod emit;
pub mod model;
pub mod output;
pub mod parse;
pub mod validate;

use std::path::Path;

use diagnostics::Diagnostic;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is invalid; every problem found is listed.
    #[error("{}", diagnostics::render(.0))]
    Spec(Vec<Diagnostic>),
    /// A documentation template failed to render (a bug in codegen).
    #[error("rendering the documentation failed: {0}")]
    Docs(#[from] tera::Error),
    /// Reading or writing `generated/` failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Parses and validates the spec directory.
pub fn load_spec(spec_dir: &Path) -> Result<model::Spec, Error> {
    let raw = parse::parse_spec_dir(spec_dir).map_err(Error::Spec)?;
    validate::validate(&raw).map_err(Error::Spec)
}

/// Everything `generated/` should contain for the spec in `spec_dir`.
pub fn render(spec_dir: &Path) -> Result<emit::Tree, Error> {
    let spec = load_spec(spec_dir)?;
    Ok(emit::generate(&spec)?)
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `generated/` already matched the spec; nothing was written.
    UpToDate {
        /// Number of files.
        files: usize,
    },
    /// `generated/` was replaced.
    Written {
        /// Number of files.
        files: usize,
        /// The files that changed.
        changed: Vec<output::Stale>,
    },
}

/// Regenerates `out_dir` from `spec_dir`. On any error `out_dir` is left exactly as it was.
pub fn generate(spec_dir: &Path, out_dir: &Path) -> Result<Outcome, Error> {
    let tree = render(spec_dir)?;
    let io = |action, path: &Path| {
        let path = path.display().to_string();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    };
    let changed = output::compare(&tree, out_dir).map_err(io("cannot read", out_dir))?;
    if changed.is_empty() {
        return Ok(Outcome::UpToDate { files: tree.len() });
    }
    output::write_atomically(&tree, out_dir).map_err(io("cannot write", out_dir))?;
    Ok(Outcome::Written {
        files: tree.len(),
        changed,
    })
}

/// The files of `out_dir` that differ from what `spec_dir` produces (empty: up to date).
pub fn check(spec_dir: &Path, out_dir: &Path) -> Result<Vec<output::Stale>, Error> {
    let tree = render(spec_dir)?;
    output::compare(&tree, out_dir).map_err(|source| Error::Io {
        action: "cannot read",
        path: out_dir.display().to_string(),
        source,
    })
}
