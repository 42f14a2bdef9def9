//! `cargo run -p codegen -- import-perfmon FILE`: Intel's public perfmon event list (JSON) to
//! our spec's event files, `spec/<processor>/events/<unit>.xml`.
//!
//! Only facts are taken: names, event codes, umasks, counter restrictions, the extension bit,
//! filter names and, for core events, the counter mask, invert, edge-detect and any-thread
//! settings. Intel's descriptions are not copied. Core lists (`*_core.json`, records without
//! a `Unit`) go to the processor's `CORE` unit, which `processors.xml`'s `core-pmu` says is
//! the architectural one: `<processor>/events/core.xml`. Records the spec cannot program
//! (fixed-counter-only events, events that need another MSR such as the offcore response
//! or PEBS load-latency registers, PEBS-only events) are reported with their reason. Every record is checked against the
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
    // Skylake-SP and Cascade Lake.
    ("CHA", "CHA"),
    ("IIO", "IIO"),
    ("M2M", "M2M"),
    ("UPI LL", "UPI"),
    ("M3UPI", "M3UPI"),
];

#[derive(Debug, Deserialize)]
struct PerfmonFile {
    #[serde(rename = "Events")]
    events: Vec<PerfmonEvent>,
}

#[derive(Debug, Deserialize)]
struct PerfmonEvent {
    /// Absent in core lists: their events belong to the core PMU.
    #[serde(rename = "Unit", default)]
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
    #[serde(rename = "CounterMask", default)]
    counter_mask: String,
    #[serde(rename = "Invert", default)]
    invert: String,
    #[serde(rename = "EdgeDetect", default)]
    edge_detect: String,
    #[serde(rename = "AnyThread", default)]
    any_thread: String,
    /// The MSRs an event needs programmed besides its control (`0x1a6,0x1a7`, the offcore
    /// response registers; `0x3F6`, the PEBS load-latency threshold); "0" or "0x00": none.
    #[serde(rename = "MSRIndex", default)]
    msr_index: String,
    #[serde(rename = "MSRValue", default)]
    msr_value: String,
    /// "2": the event counts only as a PEBS event.
    #[serde(rename = "PEBS", default)]
    pebs: String,
    /// Skylake-SP and later uncore lists: the IIO port and traffic-class masks, the unit-mask
    /// extension and the value the event's filter register needs; "0x00": none.
    #[serde(rename = "PortMask", default)]
    port_mask: String,
    #[serde(rename = "FCMask", default)]
    fc_mask: String,
    #[serde(rename = "UMaskExt", default)]
    umask_ext: String,
    #[serde(rename = "FILTER_VALUE", default)]
    filter_value: String,
    /// "1": Intel keeps the record under an old name (Skylake-SP lists both UNC_C_CLOCKTICKS
    /// and UNC_CHA_CLOCKTICKS).
    #[serde(rename = "Deprecated", default)]
    deprecated: String,
}

/// What makes two records count the same thing: unit, code, umask and the settings (a core
/// record's counter mask, invert, edge and any-thread bits and extra MSRs among them).
fn alias_key(e: &PerfmonEvent) -> [String; 13] {
    let n =
        |s: &str| crate::validate::parse_number(s).map_or(s.trim().to_string(), |v| v.to_string());
    [
        e.unit.clone(),
        n(&e.event_code),
        n(&e.umask),
        n(&e.port_mask),
        n(&e.fc_mask),
        n(&e.umask_ext),
        n(&e.filter_value),
        n(&e.counter_mask),
        n(&e.invert),
        n(&e.edge_detect),
        n(&e.any_thread),
        n(&e.msr_index),
        n(&e.msr_value),
    ]
}

/// The record that deprecated record `i` is an old name of: one that counts the same and is
/// not deprecated, or else a later deprecated one (the list's newest name). Importing both
/// would give one event two names (Sapphire Rapids' core list has RS_EMPTY.COUNT, deprecated,
/// beside RS.EMPTY_COUNT).
fn live_twin(i: usize, all: &[PerfmonEvent]) -> Option<&str> {
    let e = &all[i];
    if e.deprecated.trim() != "1" {
        return None;
    }
    let key = alias_key(e);
    let same = |o: &&PerfmonEvent| alias_key(o) == key;
    all.iter()
        .filter(same)
        .find(|o| o.deprecated.trim() != "1")
        .or_else(|| all[i + 1..].iter().find(same))
        .map(|o| o.event_name.as_str())
}

/// Why an uncore record cannot be one of the spec's events yet: it needs a setting the events
/// format has no attribute for (the IIO masks, the umask extension, a filter value), and
/// importing it without would count something else.
fn uncore_refusal(e: &PerfmonEvent) -> Option<(&'static str, String)> {
    let nonzero = |s: &str| !matches!(s.trim(), "" | "0" | "0x0" | "0x00" | "null" | "na");
    let needs: Vec<String> = [
        ("PortMask", &e.port_mask),
        ("FCMask", &e.fc_mask),
        ("UMaskExt", &e.umask_ext),
        ("FILTER_VALUE", &e.filter_value),
    ]
    .into_iter()
    .filter(|(_, v)| nonzero(v))
    .map(|(k, v)| format!("{k} {}", v.trim()))
    .collect();
    (!needs.is_empty()).then(|| {
        (
            "needs a setting events cannot record",
            format!(
                "needs {} besides its code and umask, which an events file cannot record yet",
                needs.join(", ")
            ),
        )
    })
}

/// Our unit for records without Intel's `Unit` (the core lists).
const CORE_UNIT: &str = "CORE";

/// Why a core record cannot be one of the spec's events, before its numbers are looked at:
/// its kind (for the report's counts) and the reason.
fn core_refusal(e: &PerfmonEvent) -> Option<(&'static str, String)> {
    let nonzero = |s: &str| !matches!(s.trim(), "" | "0" | "0x0" | "0x00" | "null" | "na");
    if let Some(n) = e.counter.trim().strip_prefix("Fixed counter") {
        return Some((
            "fixed counter only",
            format!(
                "counts only on fixed counter{n}, which has no event select: the fixed counters and their control are registers of the CORE unit, not events"
            ),
        ));
    }
    if nonzero(&e.msr_index) {
        return Some((
            "needs another MSR",
            format!(
                "needs MSR {} programmed with {} besides the event select (the offcore response or PEBS load-latency registers), which the spec does not describe",
                e.msr_index.trim(),
                e.msr_value.trim()
            ),
        ));
    }
    if e.event_code.contains(',') {
        return Some((
            "needs another MSR",
            format!(
                "has two event codes ({}), one per offcore response MSR (0x1A6, 0x1A7), which the spec does not describe",
                e.event_code.trim()
            ),
        ));
    }
    if e.pebs.trim() == "2" {
        return Some((
            "PEBS only",
            "counts only as a precise (PEBS) event, and the spec does not describe PEBS (IA32_PEBS_ENABLE, the DS area)".into(),
        ));
    }
    None
}

/// A core record's counter mask, invert, edge-detect and any-thread settings.
fn settings_of(e: &PerfmonEvent) -> Result<crate::model::EventSettings, String> {
    let flag = |name: &str, v: &str| match v.trim() {
        "" | "0" => Ok(false),
        "1" => Ok(true),
        other => Err(format!("{name} `{other}` is not 0 or 1")),
    };
    let threshold = match e.counter_mask.trim() {
        "" => 0,
        t => crate::validate::parse_number(t)
            .and_then(|n| u8::try_from(n).ok())
            .ok_or_else(|| format!("counter mask `{t}` is not a number from 0 to 255"))?,
    };
    Ok(crate::model::EventSettings {
        threshold,
        invert: flag("Invert", &e.invert)?,
        edge: flag("EdgeDetect", &e.edge_detect)?,
        any_thread: flag("AnyThread", &e.any_thread)?,
    })
}

/// What an import did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Events written, per unit (our unit name).
    pub imported: BTreeMap<String, usize>,
    /// Records that could not be mapped, with the reason.
    pub errors: Vec<String>,
    /// How many records were not imported, by kind of reason.
    pub not_imported: BTreeMap<&'static str, usize>,
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
        if !self.not_imported.is_empty() {
            let _ = writeln!(s, "not imported:");
            for (kind, n) in &self.not_imported {
                let _ = writeln!(s, "  {n:>4} {kind}");
            }
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
    // unit module -> (unit name, XML lines)
    let mut files: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for (i, e) in parsed.events.iter().enumerate() {
        match map_record(spec, processor, e, live_twin(i, &parsed.events)) {
            Ok(m) => files
                .entry(m.module)
                .or_insert_with(|| (m.unit, Vec::new()))
                .1
                .push(m.line),
            Err((kind, why)) => {
                let record = format!("record {} ({})", i + 1, e.event_name);
                report.errors.push(format!("{record}: {why}"));
                *report.not_imported.entry(kind).or_default() += 1;
            }
        }
    }
    // The directory of the processor's spec (its unit files'), for its events files.
    let proc_dir = proc
        .units
        .first()
        .and_then(|u| u.file.split('/').next())
        .unwrap_or(processor);
    let mut plan = Plan {
        report,
        files: Vec::new(),
    };
    for (module, (name, lines)) in &files {
        let source = events_source(spec, processor, name);
        let content = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Imported by the import-perfmon command of codegen: event facts only. -->\n<events processor=\"{processor}\" unit=\"{name}\" source=\"{source}\">\n{}\n</events>\n",
            lines.join("\n")
        );
        plan.files.push((
            Path::new(proc_dir)
                .join("events")
                .join(format!("{module}.xml")),
            content,
        ));
        plan.report.imported.insert(name.clone(), lines.len());
    }
    Ok(plan)
}

/// Why a record is not imported: its kind (for the report's counts) and the reason.
type Refusal = (&'static str, String);

/// Where an imported record goes: its unit's module (the file), the unit's name, and the
/// record's XML line.
struct Mapped {
    module: String,
    unit: String,
    line: String,
}

/// One record of Intel's list, mapped onto a unit of `processor` (or its core PMU) and
/// checked against what that unit's controls take; `twin` names the live record a deprecated
/// one is an old name of.
fn map_record(
    spec: &crate::model::Spec,
    processor: &str,
    e: &PerfmonEvent,
    twin: Option<&str>,
) -> Result<Mapped, Refusal> {
    let ours = our_unit(e)?;
    // The one rule for which unit an events file may name (the processor's own, or its core
    // PMU's).
    let Ok((unit_name, owner, caps)) =
        crate::validate::events_unit(&spec.processors, processor, ours)
    else {
        return Err((
            "unit not in the spec",
            format!("unit {ours} is not in the spec of {processor} yet; add its registers first"),
        ));
    };
    if let Some(twin) = twin {
        return Err((
            "deprecated alias",
            format!("Intel marks it deprecated; {twin} counts the same and is imported"),
        ));
    }
    let refusal = if ours == CORE_UNIT {
        core_refusal(e)
    } else {
        uncore_refusal(e)
    };
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    // Records the unit cannot count are reported here, one by one, rather than failing the
    // whole import in validation.
    let settings = settings_of(e);
    if let Some(why) = fit_refusal(e, ours, caps, &settings) {
        return Err(("does not fit the unit's controls", why));
    }
    let module = spec
        .processors
        .iter()
        .filter(|p| p.id == owner)
        .flat_map(|p| &p.units)
        .find(|u| u.name == unit_name)
        .map_or_else(|| unit_name.to_ascii_lowercase(), |u| u.module.clone());
    Ok(Mapped {
        module,
        unit: unit_name,
        line: event_line(e, &settings.unwrap_or_default()),
    })
}

/// Our name for the record's unit: Intel's, translated, or the core unit for core lists.
fn our_unit(e: &PerfmonEvent) -> Result<&'static str, Refusal> {
    if e.unit.trim().is_empty() {
        return Ok(CORE_UNIT);
    }
    match UNIT_NAMES.iter().find(|(theirs, _)| *theirs == e.unit) {
        Some((_, ours)) => Ok(ours),
        None => Err((
            "unknown Intel unit",
            format!(
                "Intel unit `{}` has no counterpart here; known units: {}",
                e.unit,
                UNIT_NAMES
                    .iter()
                    .map(|(t, _)| *t)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Why unit `ours`, whose controls take `caps`, cannot count the record, if it cannot.
fn fit_refusal(
    e: &PerfmonEvent,
    ours: &str,
    caps: Option<crate::validate::EventCapacity>,
    settings: &Result<crate::model::EventSettings, String>,
) -> Option<String> {
    let code = crate::validate::parse_number(&e.event_code);
    let umask = crate::validate::parse_number(&e.umask);
    let counters = crate::validate::counters_mask(&e.counter.replace(' ', ""));
    let ext_sel = e.ext_sel.trim() == "1";
    match (code, umask, counters, caps, settings) {
        (None, _, _, _, _) => Some(format!("event code `{}` is not a number", e.event_code)),
        (_, None, _, _, _) => Some(format!("umask `{}` is not a number", e.umask)),
        (_, _, None, _, _) => Some(format!("counters `{}` are not a counter list", e.counter)),
        (_, _, _, None, _) => Some(format!("unit {ours} has no counter control register")),
        (_, _, _, _, Err(why)) => Some(why.clone()),
        (Some(c), Some(u), Some(m), Some(cap), Ok(set)) => cap
            .refuse(c, u, m, ext_sel)
            .or_else(|| cap.refuse_settings(set)),
    }
}

/// The record as a line of our events file: facts only.
fn event_line(e: &PerfmonEvent, settings: &crate::model::EventSettings) -> String {
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
    let mut extra = String::new();
    if settings.threshold != 0 {
        let _ = write!(extra, " threshold=\"{}\"", settings.threshold);
    }
    for (set, name) in [
        (settings.invert, "invert"),
        (settings.edge, "edge"),
        (settings.any_thread, "any-thread"),
    ] {
        if set {
            let _ = write!(extra, " {name}=\"1\"");
        }
    }
    format!(
        "  <event name=\"{}\" code=\"{}\" umask=\"{}\" counters=\"{}\"{ext}{filters}{extra}/>",
        xml_escape(&e.event_name),
        xml_escape(e.event_code.trim()),
        xml_escape(e.umask.trim()),
        xml_escape(&e.counter.replace(' ', ""))
    )
}

/// The source an events file of `unit` cites. Each processor's event list is its own source
/// when processors.xml declares one (`intel-perfmon-<processor>`); the first processor's list
/// keeps the plain id. Core lists cite `intel-perfmon-core` where it is declared.
fn events_source(spec: &crate::model::Spec, processor: &str, unit: &str) -> String {
    let declared = |id: &str| spec.public_sources.iter().any(|s| s.id == id);
    let specific = format!("intel-perfmon-{processor}");
    if unit == CORE_UNIT && declared("intel-perfmon-core") {
        "intel-perfmon-core".to_string()
    } else if declared(&specific) {
        specific
    } else {
        "intel-perfmon".to_string()
    }
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
