//! `cargo run -p codegen -- import-arm FILE`: Arm's machine-readable PMU event list for one
//! core (ARM-software/data, `pmu/<core>.json`, Apache-2.0) to the spec's events file of that
//! core's PMU, `spec/<processor>/events/<unit>.xml`.
//!
//! Only facts are taken: each event's name and number. The list says which PMU architecture
//! the core has (`pmu_architecture`, which must be PMUv3) and its MIDR (`cpuid`); Arm's
//! descriptions are not copied. Every event goes to the processor's per-CPU unit (`<pmu
//! scope="cpu">`), countable on each of its general counters; the file cites the source
//! `arm-data-<processor>`, which `processors.xml` must declare. As for Intel's lists, the
//! spec is validated with the new file, in memory, before anything is written, so an event
//! number the unit's event field cannot hold refuses the whole import.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::import::{write_event_files, ImportError};
use crate::model::pmu::{CounterKind, Scope};
use crate::model::Spec;

/// Arm's list, as far as it is read.
#[derive(Deserialize)]
struct ArmList {
    /// The core's name (`Neoverse V2`).
    cpu: String,
    /// The PMU architecture (`pmuv3`).
    pmu_architecture: Option<String>,
    events: Vec<ArmEvent>,
}

/// One event of Arm's list.
#[derive(Deserialize)]
struct ArmEvent {
    /// The event number `PMEVTYPER<n>_EL0.evtCount` takes.
    code: u64,
    /// Arm's name (`INST_RETIRED`).
    name: String,
}

/// What an import did.
#[derive(Debug)]
pub struct ArmReport {
    /// The core the list describes, as the list names it.
    pub cpu: String,
    /// How many events were imported.
    pub imported: usize,
    /// The files written.
    pub written: Vec<PathBuf>,
}

impl ArmReport {
    /// The report as the command prints it.
    pub fn render(&self) -> String {
        let mut out = format!("{}: {} events imported\n", self.cpu, self.imported);
        for w in &self.written {
            out.push_str(&format!("wrote {}\n", w.display()));
        }
        out
    }
}

/// The events file Arm's list `text` (read from `path`, which only names it in errors) makes
/// for `processor` of `spec`: its path relative to the spec directory, its text, and how many
/// events it holds. Pure: touches no file.
pub fn plan_arm(
    text: &str,
    path: &str,
    spec: &Spec,
    processor: &str,
) -> Result<(PathBuf, String, usize), ImportError> {
    let input = |message: String| ImportError::Input {
        path: path.to_string(),
        message,
    };
    let list: ArmList = serde_json::from_str(text)
        .map_err(|e| input(format!("not one of Arm's PMU event lists ({e})")))?;
    if list.pmu_architecture.as_deref() != Some("pmuv3") {
        return Err(input(format!(
            "the list's PMU architecture is {:?}, and only PMUv3 lists describe the core PMU this spec has",
            list.pmu_architecture
        )));
    }
    let p = spec
        .processors
        .iter()
        .find(|p| p.id == processor)
        .ok_or_else(|| {
            input(format!(
                "no processor `{processor}` in processors.xml; add it (and its core PMU) first"
            ))
        })?;
    let (unit, pmu) = p
        .units
        .iter()
        .find_map(|u| Some((u, u.pmu.as_ref().filter(|m| m.scope == Scope::Cpu)?)))
        .ok_or_else(|| {
            input(format!(
                "{processor} has no per-CPU unit (<pmu scope=\"cpu\">) for the events"
            ))
        })?;
    let source = format!("arm-data-{processor}");
    if !spec.public_sources.iter().any(|s| s.id == source) {
        return Err(input(format!(
            "processors.xml declares no source `{source}`; add <source id=\"{source}\" title=\"...\"/> naming the list"
        )));
    }
    let general: Vec<u32> = pmu
        .counters
        .iter()
        .filter(|c| c.kind == CounterKind::General)
        .map(|c| c.number)
        .collect();
    let counters = counter_ranges(&general);
    let lines: Vec<String> = list
        .events
        .iter()
        .map(|e| {
            format!(
                "  <event name=\"{}\" code=\"{:#06x}\" umask=\"0x00\" counters=\"{counters}\"/>",
                xml_escape(&e.name),
                e.code
            )
        })
        .collect();
    let text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Imported by the import-arm command of codegen from Arm's list for {}: event names and numbers only. -->\n<events processor=\"{processor}\" unit=\"{}\" source=\"{source}\">\n{}\n</events>\n",
        xml_escape(&list.cpu),
        unit.name,
        lines.join("\n")
    );
    let rel = PathBuf::from(processor)
        .join("events")
        .join(format!("{}.xml", unit.module));
    Ok((rel, text, list.events.len()))
}

/// Reads Arm's list `file` and writes the events file of `processor` into `spec_dir`.
pub fn import_arm(file: &Path, spec_dir: &Path, processor: &str) -> Result<ArmReport, ImportError> {
    let path = file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|e| ImportError::Input {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let spec = crate::load_spec(spec_dir)?;
    let (rel, content, imported) = plan_arm(&text, &path, &spec, processor)?;
    let cpu = serde_json::from_str::<ArmList>(&text).map_or_else(|_| String::new(), |l| l.cpu);
    let written = write_event_files(spec_dir, vec![(rel, content)])?;
    Ok(ArmReport {
        cpu,
        imported,
        written,
    })
}

/// `0-30` for counters 0 to 30; runs joined with commas.
fn counter_ranges(numbers: &[u32]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for n in sorted {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == n => *hi = n,
            _ => runs.push((n, n)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect();
    parts.join(",")
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::counter_ranges;

    #[test]
    fn counters_are_written_as_runs() {
        assert_eq!(counter_ranges(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
        assert_eq!(counter_ranges(&[4]), "4");
    }
}
