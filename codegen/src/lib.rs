//! pmu-regs code generator: XML register specs in, a type-safe `no_std` crate and its
//! documentation out.
//!
//! The pipeline has one module per stage:
//! [`parse`] (XML -> raw structs) -> [`validate`] (raw -> [`model`], or every error) ->
//! [`emit`] (model -> files in memory) -> [`output`] (compare with, or atomically replace,
//! `generated/`). [`load`] reads the spec directory through the first two stages on all
//! cores; [`diagnostics`] holds the errors that point into spec files; [`naming`] holds every
//! naming rule (case, keywords, Rust and C identifiers, word wrapping) that the validator and
//! every emitter call.

// Functions read in one sitting: at most 80 lines (clippy.toml), with no `allow`.
#![warn(clippy::too_many_lines)]

pub mod diagnostics;
pub mod emit;
pub mod import;
pub mod import_arm;
pub mod import_metrics;
pub mod load;
pub mod model;
pub mod naming;
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
    #[error("rendering the documentation failed: {0}; this is a bug in codegen's templates, not in the spec: please report it with the spec that shows it")]
    Docs(#[from] tera::Error),
    /// Two things of the spec would get the same name in the C headers.
    #[error("{0}")]
    CName(emit::c::NameClash),
    /// Reading or writing `generated/` failed.
    #[error("{action} {path}: {source}; check the path, its permissions and the free space (nothing in the output directory was changed)")]
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
    load::load_dir(spec_dir).map_err(Error::Spec)
}

impl From<emit::EmitError> for Error {
    fn from(e: emit::EmitError) -> Self {
        match e {
            emit::EmitError::Docs(e) => Error::Docs(e),
            emit::EmitError::CName(e) => Error::CName(e),
            emit::EmitError::Io(source) => Error::Io {
                action: "cannot write",
                path: "the staging directory".into(),
                source,
            },
        }
    }
}

/// Everything `generated/` should contain for the spec in `spec_dir`, in memory.
pub fn render(spec_dir: &Path) -> Result<emit::Tree, Error> {
    let spec = load_spec(spec_dir)?;
    Ok(emit::generate(&spec)?)
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `generated/` already matched the spec; nothing was written.
    UpToDate,
    /// `generated/` was replaced.
    Written {
        /// The files that changed.
        changed: Vec<output::Stale>,
    },
}

fn run(spec_dir: &Path, out_dir: &Path, write: bool) -> Result<Vec<output::Stale>, Error> {
    let spec = load_spec(spec_dir)?;
    write_tree(out_dir, write, |sink| emit::generate_into(&spec, sink))
}

/// Compares (and with `write`, replaces) `out_dir` with the files `produce` puts into the
/// sink. The new tree is built beside `out_dir` and swapped in only when `produce` has
/// finished: if it fails part-way (or the process dies), `out_dir` keeps every old file and
/// none of the new ones.
pub fn write_tree(
    out_dir: &Path,
    write: bool,
    produce: impl FnOnce(&mut dyn emit::Sink) -> Result<(), emit::EmitError>,
) -> Result<Vec<output::Stale>, Error> {
    let mut staged = output::Staged::new(out_dir, write);
    if let Err(e) = produce(&mut staged) {
        staged.abandon();
        return Err(e.into());
    }
    staged.finish().map_err(|source| Error::Io {
        action: if write { "cannot write" } else { "cannot read" },
        path: out_dir.display().to_string(),
        source,
    })
}

/// Regenerates `out_dir` from `spec_dir`, atomically: on any error `out_dir` is left exactly
/// as it was, and it is replaced only when something differs.
pub fn generate(spec_dir: &Path, out_dir: &Path) -> Result<Outcome, Error> {
    let changed = run(spec_dir, out_dir, true)?;
    Ok(if changed.is_empty() {
        Outcome::UpToDate
    } else {
        Outcome::Written { changed }
    })
}

/// The files of `out_dir` that differ from what `spec_dir` produces (empty: up to date).
/// Writes nothing.
pub fn check(spec_dir: &Path, out_dir: &Path) -> Result<Vec<output::Stale>, Error> {
    run(spec_dir, out_dir, false)
}
