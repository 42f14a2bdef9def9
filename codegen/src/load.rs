//! Reading the spec directory: walks it, parses every file and validates it, units in
//! parallel on all cores. The rules themselves are `validate`'s; this module only decides
//! what is read, from where, and on which thread.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diagnostics::{Diagnostic, SourceFile};
use crate::model::Spec;
use crate::parse::{
    event_paths, metric_paths, parse_document, unit_paths, ParsedProcessors, ParsedUnit, RawEvents,
    RawProcessors, RawUnit,
};
use crate::validate::{UnitResult, Validator};

/// Parses and validates the spec directory one unit file at a time, on all cores: a unit's
/// raw structs and text are dropped as soon as it is validated, so memory holds the model,
/// not every file twice.
pub fn load_dir(dir: &Path) -> Result<Spec, Vec<Diagnostic>> {
    load_dir_with_events(dir, &[])
}

/// [`load_dir`], with `events` (paths relative to `dir`, and contents) read from memory
/// instead of the disk: a file of that path on disk is replaced, a new one is added. The
/// importer validates the events it is about to write this way, through the same path as
/// generation, before writing anything.
pub fn load_dir_with_events(
    dir: &Path,
    events: &[(PathBuf, String)],
) -> Result<Spec, Vec<Diagnostic>> {
    load_dir_with_files(dir, events, &[])
}

/// [`load_dir_with_events`], with metrics files read from memory as well (the metrics
/// importer validates the file it is about to write this way).
pub fn load_dir_with_files(
    dir: &Path,
    events: &[(PathBuf, String)],
    metrics: &[(PathBuf, String)],
) -> Result<Spec, Vec<Diagnostic>> {
    let processors_path = dir.join("processors.xml");
    let processors = SourceFile::read(&processors_path)
        .and_then(|file| {
            parse_document::<RawProcessors>(&file, "processors")
                .map(|raw| ParsedProcessors { file, raw })
        })
        .map_err(|e| vec![e])?;
    let mut v = Validator::default();
    let mut ctx = v.processors(&processors);
    let paths = unit_paths(dir).map_err(|e| vec![e])?;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(paths.len().max(1));
    // (unit, its errors) per path, in path order.
    let mut results: Vec<UnitResult> = (0..paths.len()).map(|_| (None, Vec::new())).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (paths, ctx) = (&paths, &ctx);
                scope.spawn(move || {
                    let mut out = Vec::new();
                    for (i, path) in paths.iter().enumerate().skip(w).step_by(workers) {
                        let mut v = Validator::default();
                        let unit = match SourceFile::read(path).and_then(|file| {
                            parse_document::<RawUnit>(&file, "unit")
                                .map(|raw| ParsedUnit { file, raw })
                        }) {
                            Ok(parsed) => v.resolve_unit(&parsed, ctx),
                            Err(e) => {
                                v.push(e);
                                None
                            }
                        };
                        out.push((i, unit, v.errors));
                    }
                    out
                })
            })
            .collect();
        for h in handles {
            // A worker only panics on a bug in the validator; surface it as such.
            for (i, unit, errors) in h.join().expect("a validator thread panicked") {
                results[i] = (unit, errors);
            }
        }
    });
    let mut units = Vec::with_capacity(results.len());
    for (unit, errors) in results {
        v.errors.extend(errors);
        units.push(unit);
    }
    v.assemble(&mut ctx, units);
    // Events files: those on disk, with the in-memory ones in their place (or added), in path
    // order.
    let mut files: BTreeMap<PathBuf, Option<&str>> =
        event_paths(dir).into_iter().map(|p| (p, None)).collect();
    for (rel, text) in events {
        files.insert(dir.join(rel), Some(text.as_str()));
    }
    for (path, text) in files {
        let file = match text {
            Some(t) => Ok(SourceFile::new(path, t.to_string())),
            None => SourceFile::read(&path),
        };
        match file
            .and_then(|file| parse_document::<RawEvents>(&file, "events").map(|raw| (file, raw)))
        {
            Ok((file, raw)) => v.events(&file, &raw, &mut ctx),
            Err(e) => v.push(e),
        }
    }
    v.clock_events(&ctx.processors);
    // Metrics files, once every event is known.
    load_metrics(&mut v, &mut ctx, dir, metrics);
    v.metric_parents(&ctx.processors);
    v.finish(ctx)
}

/// Reads and validates the metrics files (those on disk, with `metrics`, paths relative to
/// `dir`, in their place or added), in path order.
fn load_metrics(
    v: &mut Validator,
    ctx: &mut crate::validate::SpecContext,
    dir: &Path,
    metrics: &[(PathBuf, String)],
) {
    let mut files: BTreeMap<PathBuf, Option<&str>> =
        metric_paths(dir).into_iter().map(|p| (p, None)).collect();
    for (rel, text) in metrics {
        files.insert(dir.join(rel), Some(text.as_str()));
    }
    for (path, text) in files {
        let file = match text {
            Some(t) => Ok(SourceFile::new(path, t.to_string())),
            None => SourceFile::read(&path),
        };
        match file.and_then(|file| {
            parse_document::<crate::parse::metrics::RawMetrics>(&file, "metrics")
                .map(|raw| (file, raw))
        }) {
            Ok((file, raw)) => v.metrics(&file, &raw, ctx),
            Err(e) => v.push(e),
        }
    }
}
