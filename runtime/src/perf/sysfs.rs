//! A PMU as the kernel describes it in `/sys/bus/event_source/devices/<name>/`: `type`,
//! `format/*`, `cpumask` and `events/*`. The directory is configurable so that tests can
//! build trees of PMUs this machine does not have.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::error::PerfError;
use super::format::{parse_cpu_list, parse_terms, FormatField};

/// Where the kernel lists its PMUs: `/sys/bus/event_source/devices`, or a tree a test built.
#[derive(Debug, Clone)]
pub struct EventSources {
    root: PathBuf,
}

impl Default for EventSources {
    fn default() -> Self {
        Self::with_root("/sys/bus/event_source/devices")
    }
}

impl EventSources {
    /// PMUs under `root` (the directory that holds one directory per PMU).
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a PMU of that name exists.
    pub fn has(&self, name: &str) -> bool {
        self.root.join(name).join("type").is_file()
    }

    /// The names of every PMU present, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| self.has(n))
            .collect();
        names.sort();
        names
    }

    /// Reads PMU `name`. `driver` names the kernel driver that would provide it, for the
    /// error when it is absent.
    pub fn pmu(&self, name: &str, driver: &str) -> Result<KernelPmu, PerfError> {
        let dir = self.root.join(name);
        if !dir.join("type").is_file() {
            return Err(PerfError::PmuAbsent {
                pmu: name.to_string(),
                path: dir,
                driver: driver.to_string(),
            });
        }
        let read = |p: PathBuf| {
            fs::read_to_string(&p).map_err(|source| PerfError::Sysfs { path: p, source })
        };
        let type_path = dir.join("type");
        let text = read(type_path.clone())?;
        let type_ = text
            .trim()
            .parse::<u32>()
            .map_err(|_| PerfError::BadSysfs {
                path: type_path,
                text: text.trim().to_string(),
                problem: "expected the PMU's type number".into(),
            })?;
        let mut formats = Vec::new();
        for (file, text) in read_dir_files(&dir.join("format"))? {
            let field = FormatField::parse(&file, &text).map_err(|e| PerfError::BadSysfs {
                path: dir.join("format").join(&file),
                text: e.text.clone(),
                problem: e.problem.to_string(),
            })?;
            formats.push(field);
        }
        let mut events = BTreeMap::new();
        for (file, text) in read_dir_files(&dir.join("events"))? {
            // `cas_count_read.scale` and `.unit` describe an event; they are not events.
            if file.contains('.') {
                continue;
            }
            let terms = parse_terms(&text).map_err(|e| PerfError::BadSysfs {
                path: dir.join("events").join(&file),
                text: e.text.clone(),
                problem: e.problem.to_string(),
            })?;
            events.insert(file, terms);
        }
        // A PMU without a cpumask (software, msr) counts on any CPU.
        let mask_path = dir.join("cpumask");
        let cpumask = match fs::read_to_string(&mask_path) {
            Ok(text) => parse_cpu_list(&text).map_err(|e| PerfError::BadSysfs {
                path: mask_path,
                text: e.text.clone(),
                problem: e.problem.to_string(),
            })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(PerfError::Sysfs {
                    path: mask_path,
                    source,
                })
            }
        };
        Ok(KernelPmu {
            name: name.to_string(),
            type_,
            formats,
            cpumask,
            events,
        })
    }
}

/// The regular files of a directory with their contents, sorted by name; none if it is absent.
fn read_dir_files(dir: &Path) -> Result<Vec<(String, String)>, PerfError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(PerfError::Sysfs {
                path: dir.to_path_buf(),
                source,
            })
        }
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_file() {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let text = fs::read_to_string(&path).map_err(|source| PerfError::Sysfs { path, source })?;
        files.push((name, text));
    }
    files.sort();
    Ok(files)
}

/// One PMU: its type number for `perf_event_attr.type`, its format, the CPUs to open its
/// events on, and the events the kernel names.
#[derive(Debug, Clone)]
pub struct KernelPmu {
    /// Its name (`uncore_ha`, `msr`, `cpu`).
    pub name: String,
    /// `perf_event_attr.type`.
    pub type_: u32,
    /// Its format fields, sorted by name.
    pub formats: Vec<FormatField>,
    /// The CPUs its `cpumask` names: one per socket for an uncore PMU; empty for a PMU that
    /// counts on any CPU.
    pub cpumask: Vec<u32>,
    /// Its named events (`events/tsc` -> `event=0x00`).
    pub events: BTreeMap<String, Vec<(String, u64)>>,
}

impl KernelPmu {
    /// The format field called `name`.
    pub fn format(&self, name: &str) -> Option<&FormatField> {
        self.formats.iter().find(|f| f.name == name)
    }

    /// The format field names, for messages.
    pub fn format_names(&self) -> String {
        let names: Vec<&str> = self.formats.iter().map(|f| f.name.as_str()).collect();
        if names.is_empty() {
            "(none: its events are chosen by config alone)".into()
        } else {
            names.join(", ")
        }
    }
}
