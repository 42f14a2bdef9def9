//! `cargo run -p codegen -- import-perfmon FILE`: Intel's public perfmon event list (JSON) to
//! our spec's event files, `spec/<processor>/events/<unit>.xml`.
//!
//! Only facts are taken: names, event codes, umasks, counter restrictions, the extension bit
//! and filter names. Intel's descriptions are not copied. Every record is checked against the
//! spec (the unit must exist, the code and umask must fit its control registers, the counters
//! must exist) by validating the spec with the new files, held in memory, before anything is
//! written.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Intel's unit names and ours.
const UNIT_NAMES: &[(&str, &str)] = &[
    ("HA", "HA"),
    ("QPI LL", "QPI"),
    ("CBO", "CBO"),
    ("PCU", "PCU"),
    ("UBOX", "UBOX"),
    ("iMC", "IMC"),
    ("R2PCIe", "R2PCIE"),
    ("R3QPI", "R3QPI"),
    ("SBO", "SBOX"),
    ("IRP", "IRP"),
];

#[derive(Debug, Deserialize)]
struct PerfmonFile {
    #[serde(rename = "Events")]
    events: Vec<PerfmonEvent>,
}

#[derive(Debug, Deserialize)]
struct PerfmonEvent {
    #[serde(rename = "Unit")]
    unit: String,
    #[serde(rename = "EventCode")]
    event_code: String,
    #[serde(rename = "UMask")]
    umask: String,
    #[serde(rename = "EventName")]
    event_name: String,
    #[serde(rename = "Counter")]
    counter: String,
    #[serde(rename = "Filter", default)]
    filter: String,
    #[serde(rename = "ExtSel", default)]
    ext_sel: String,
}

/// What an import did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Events written, per unit (our unit name).
    pub imported: BTreeMap<String, usize>,
    /// Records that could not be mapped, with the reason.
    pub errors: Vec<String>,
    /// Files written.
    pub written: Vec<PathBuf>,
}

impl Report {
    /// The summary the command prints.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for e in &self.errors {
            let _ = writeln!(s, "error: {e}");
        }
        let _ = writeln!(s, "imported:");
        for (unit, n) in &self.imported {
            let _ = writeln!(s, "  {unit:<8} {n:>4} events");
        }
        let _ = writeln!(
            s,
            "{} events imported, {} records not imported, {} files written",
            self.imported.values().sum::<usize>(),
            self.errors.len(),
            self.written.len()
        );
        s
    }
}

/// Why an import failed as a whole.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read or is not Intel's format.
    #[error("cannot read {path}: {message}")]
    Input {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The spec (or the spec with the new events) does not validate.
    #[error("{0}")]
    Spec(#[from] crate::Error),
    /// Writing the event files failed.
    #[error("cannot write {path}: {source}; check the spec directory's permissions and free space, then import again")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The event files an import would write, before anything is validated or written.
#[derive(Debug, Default)]
pub struct Plan {
    /// Per-unit counts and the records that could not be mapped (`written` stays empty).
    pub report: Report,
    /// Each file to write: its path relative to the spec directory, and its content.
    pub files: Vec<(PathBuf, String)>,
}

/// Maps Intel's event list `text` onto the units of `processor` in `spec`: pure, touches no
/// file. `path` only names the input in errors.
pub fn plan(
    text: &str,
    path: &str,
    spec: &crate::model::Spec,
    processor: &str,
) -> Result<Plan, ImportError> {
    let input = |message: String| ImportError::Input {
        path: path.to_string(),
        message,
    };
    let parsed: PerfmonFile = serde_json::from_str(text).map_err(|e| {
        input(format!(
            "not an Intel perfmon event list ({e}); expected {{\"Events\": [...]}}"
        ))
    })?;
    let proc = spec
        .processors
        .iter()
        .find(|p| p.id == processor)
        .ok_or_else(|| {
            input(format!(
                "the spec has no processor `{processor}` (it has {})",
                spec.processors
                    .iter()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;

    let mut report = Report::default();
    // unit module -> (unit name, processor directory, XML lines)
    let mut files: BTreeMap<String, (String, String, Vec<String>)> = BTreeMap::new();
    for (i, e) in parsed.events.iter().enumerate() {
        let record = format!("record {} ({})", i + 1, e.event_name);
        let Some((_, ours)) = UNIT_NAMES.iter().find(|(theirs, _)| *theirs == e.unit) else {
            report.errors.push(format!(
                "{record}: Intel unit `{}` has no counterpart here; known units: {}",
                e.unit,
                UNIT_NAMES
                    .iter()
                    .map(|(t, _)| *t)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            continue;
        };
        let Some(unit) = proc.units.iter().find(|u| u.name == *ours) else {
            report.errors.push(format!("{record}: unit {ours} is not in the spec of {processor} yet; add its registers first"));
            continue;
        };
        // Records the unit cannot count are reported here, one by one, rather than failing the
        // whole import in validation.
        let code = crate::validate::parse_number(&e.event_code);
        let umask = crate::validate::parse_number(&e.umask);
        let counters = crate::validate::counters_mask(&e.counter.replace(' ', ""));
        let ext_sel = e.ext_sel.trim() == "1";
        let refusal = match (
            code,
            umask,
            counters,
            crate::validate::EventCapacity::of(unit),
        ) {
            (None, _, _, _) => Some(format!("event code `{}` is not a number", e.event_code)),
            (_, None, _, _) => Some(format!("umask `{}` is not a number", e.umask)),
            (_, _, None, _) => Some(format!("counters `{}` are not a counter list", e.counter)),
            (_, _, _, None) => Some(format!("unit {ours} has no counter control register")),
            (Some(c), Some(u), Some(m), Some(cap)) => cap.refuse(c, u, m, ext_sel),
        };
        if let Some(why) = refusal {
            report.errors.push(format!("{record}: {why}"));
            continue;
        }
        let dir = unit.file.split('/').next().unwrap_or(processor).to_string();
        let ext = if e.ext_sel.trim() == "1" {
            " ext-sel=\"1\""
        } else {
            ""
        };
        let filters = match e.filter.trim() {
            // Later lists write "na" where there is no filter.
            "" | "null" | "na" => String::new(),
            f => format!(" filters=\"{}\"", xml_escape(f)),
        };
        let line = format!(
            "  <event name=\"{}\" code=\"{}\" umask=\"{}\" counters=\"{}\"{ext}{filters}/>",
            xml_escape(&e.event_name),
            xml_escape(e.event_code.trim()),
            xml_escape(e.umask.trim()),
            xml_escape(&e.counter.replace(' ', ""))
        );
        files
            .entry(unit.module.clone())
            .or_insert_with(|| (unit.name.clone(), dir, Vec::new()))
            .2
            .push(line);
    }

    // Each processor's event list is its own source when processors.xml declares one
    // (`intel-perfmon-<processor>`); the first processor's list keeps the plain id.
    let specific = format!("intel-perfmon-{processor}");
    let source = if spec.public_sources.iter().any(|s| s.id == specific) {
        specific
    } else {
        "intel-perfmon".to_string()
    };
    let mut plan = Plan {
        report,
        files: Vec::new(),
    };
    for (module, (name, dir, lines)) in &files {
        let content = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Imported by the import-perfmon command of codegen: event facts only. -->\n<events processor=\"{processor}\" unit=\"{name}\" source=\"{source}\">\n{}\n</events>\n",
            lines.join("\n")
        );
        plan.files.push((
            Path::new(dir).join("events").join(format!("{module}.xml")),
            content,
        ));
        plan.report.imported.insert(name.clone(), lines.len());
    }
    Ok(plan)
}

/// Reads `file` and writes the event files of `processor` into `spec_dir`.
pub fn import_perfmon(
    file: &Path,
    spec_dir: &Path,
    processor: &str,
) -> Result<Report, ImportError> {
    let text = std::fs::read_to_string(file).map_err(|e| ImportError::Input {
        path: file.display().to_string(),
        message: e.to_string(),
    })?;
    let spec = crate::load_spec(spec_dir)?;
    let Plan { mut report, files } = plan(&text, &file.display().to_string(), &spec, processor)?;

    // Validate the spec with the new files, in memory, through the same path as generation,
    // before touching the real one.
    crate::load::load_dir_with_events(spec_dir, &files)
        .map_err(|e| ImportError::Spec(crate::Error::Spec(e)))?;
    // Every file is written beside its target first and renamed only when all are written,
    // so a full disk or a bad permission leaves the spec as it was, not part-imported.
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (rel, content) in files {
        let path = spec_dir.join(rel);
        let temp = path.with_extension("xml.import-tmp");
        if let Err(source) = write_creating_dir(&temp, &content) {
            for (temp, _) in &staged {
                let _ = std::fs::remove_file(temp);
            }
            let _ = std::fs::remove_file(&temp);
            return Err(ImportError::Io {
                path: path.display().to_string(),
                source,
            });
        }
        staged.push((temp, path));
    }
    for (temp, path) in staged {
        std::fs::rename(&temp, &path).map_err(|source| ImportError::Io {
            path: path.display().to_string(),
            source,
        })?;
        report.written.push(path);
    }
    Ok(report)
}

/// The processor whose `<identity perfmon="..">` prefixes `file`'s name (case-insensitively):
/// `ivytown_uncore.json` belongs to the processor with `perfmon="ivytown"`.
pub fn processor_for_file(file: &Path, spec_dir: &Path) -> Result<String, ImportError> {
    let spec = crate::load_spec(spec_dir)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let known: Vec<(&str, &str)> = spec
        .processors
        .iter()
        .filter_map(|p| Some((p.id.as_str(), p.identity.as_ref()?.perfmon.as_deref()?)))
        .collect();
    known
        .iter()
        .filter(|(_, prefix)| name.starts_with(&format!("{}_", prefix.to_ascii_lowercase())))
        .map(|(id, _)| id.to_string())
        .next()
        .ok_or_else(|| ImportError::Input {
            path: file.display().to_string(),
            message: format!(
                "no processor's perfmon name prefixes this file name (known: {}); pass --processor",
                known
                    .iter()
                    .map(|(id, prefix)| format!("{prefix}_* for {id}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

/// Writes `content` to `path`, creating its `events/` directory if needed.
fn write_creating_dir(path: &Path, content: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().expect("events/ has a parent"))?;
    std::fs::write(path, content)
}
