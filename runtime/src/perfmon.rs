//! Event descriptions from Intel's perfmon JSON files (`haswellx_uncore.json`, ...), matched
//! to the spec's events, and what an event sets beyond its code and umask. `pmu list --events
//! --perfmon FILE` shows them; a library user reads a file with [`Descriptions::read`].
//!
//! ```
//! use pmu_runtime::perfmon::{counter_bits, settings_text, Descriptions};
//!
//! let dir = std::env::temp_dir().join(format!("perfmon-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("ivytown_uncore.json");
//! std::fs::write(&path, r#"{"Events": [{"EventName": "UNC_C_CLOCKTICKS",
//!     "BriefDescription": "Uncore clocks", "EventCode": "0x0", "UMask": "0x0"}]}"#)?;
//! let d = Descriptions::read(&path, None)?;
//! let p = pmu_regs::PROCESSORS.iter().find(|p| p.id == d.processor()).unwrap();
//! let (unit, e) = p.units.iter()
//!     .find_map(|u| u.events.iter().find(|e| e.name == "UNC_C_CLOCKTICKS").map(|e| (u.name, *e)))
//!     .unwrap();
//! assert_eq!(d.of(p.id, unit, e), Some("Uncore clocks"));
//! assert_eq!(counter_bits(0b1010), [1, 3]);
//! assert_eq!(settings_text(e), "");
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pmu_regs::{EventInfo, PROCESSORS};
use serde_json::Value;

/// Why a perfmon file was not read.
#[derive(Debug)]
pub enum PerfmonError {
    /// The file's name says it is another processor's list than the one named.
    OtherProcessor {
        /// The file.
        path: PathBuf,
        /// The processor its name says.
        file: &'static str,
        /// The processor named.
        named: &'static str,
    },
    /// Neither the file's name nor the caller says which processor it describes.
    UnknownProcessor {
        /// The file.
        path: PathBuf,
    },
    /// The file could not be read (missing, too large, not text, too slow).
    Read(crate::bounded::BoundedError),
    /// The file is not JSON.
    NotJson {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        error: serde_json::Error,
    },
    /// The JSON has no array of events.
    NoEvents {
        /// The file.
        path: PathBuf,
    },
}

impl PerfmonError {
    /// Whether the caller named the wrong thing (rather than the file being unreadable).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::OtherProcessor { .. } | Self::UnknownProcessor { .. }
        )
    }
}

impl std::fmt::Display for PerfmonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::OtherProcessor { path, file, named } => write!(
                f,
                "{} is the event list of {file}, not of {named}: its descriptions would \
                 describe another processor's events of the same names; give {named}'s own \
                 list, or --processor {file}",
                path.display()
            ),
            Self::UnknownProcessor { path } => write!(
                f,
                "cannot tell which processor {} describes (Intel names its files after the \
                 code name: {}); give --processor",
                path.display(),
                perfmon_file_example()
            ),
            Self::Read(e) => write!(
                f,
                "cannot read {e}; give the path of one of Intel's perfmon JSON files"
            ),
            Self::NotJson { path, error } => write!(
                f,
                "{} is not an Intel perfmon event list (JSON): {error}",
                path.display()
            ),
            Self::NoEvents { path } => write!(
                f,
                "{} has no \"Events\" array: it is not an Intel perfmon event list",
                path.display()
            ),
        }
    }
}

impl std::error::Error for PerfmonError {}

/// Event descriptions from an Intel perfmon JSON file: by name, and by (code, umask) for
/// the architectural events, whose names in the spec are the SDM's.
#[derive(Debug)]
pub struct Descriptions {
    /// The processor the list describes: its descriptions go to its events only, since
    /// processors share event names (`UNC_H_REQUESTS.READS` on E5-2600 v2, v3 and v4).
    processor: &'static str,
    by_name: HashMap<String, String>,
    by_code: HashMap<(u64, u64), String>,
}

/// The processor Intel's perfmon file `path` describes: the one whose code name its file
/// name starts with (`haswellx_uncore.json`: Haswell-X, `ivytown_core.json`: IvyTown), which
/// `named` must agree with; `named` alone for a renamed file.
pub fn perfmon_processor(
    path: &Path,
    named: Option<&'static str>,
) -> Result<&'static str, PerfmonError> {
    let file = path.file_name().map_or(String::new(), |f| {
        let f = f.to_string_lossy();
        squash(f.split('_').next().unwrap_or_default())
    });
    let by_file = PROCESSORS
        .iter()
        .find(|p| p.code_names.iter().any(|c| squash(c) == file))
        .map(|p| p.id);
    match (by_file, named) {
        (Some(file), Some(named)) if file != named => Err(PerfmonError::OtherProcessor {
            path: path.to_path_buf(),
            file,
            named,
        }),
        (Some(p), _) | (None, Some(p)) => Ok(p),
        (None, None) => Err(PerfmonError::UnknownProcessor {
            path: path.to_path_buf(),
        }),
    }
}

/// A code name as Intel's file names write it: letters and digits, lower case.
fn squash(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// A perfmon file name the code-name match accepts, for the message that explains it: the
/// first code name of the last processor with Intel's identity and an event list
/// (`{code name}_uncore.json`, squashed and lower case as Intel writes them).
pub fn perfmon_file_example() -> String {
    PROCESSORS
        .iter()
        .rev()
        .filter(|p| {
            p.identity
                .is_some_and(|i| i.vendor == pmu_regs::Vendor::Intel)
        })
        .filter(|p| p.units.iter().any(|u| !u.events.is_empty()))
        .find_map(|p| p.code_names.first())
        .map(|c| format!("{}_uncore.json", squash(c)))
        .unwrap_or_default()
}

impl Descriptions {
    /// Reads Intel's perfmon file `path` (at most [`crate::bounded::MAX_EVENT_LIST_BYTES`]),
    /// the list of `processor` or of the processor its name says ([`perfmon_processor`]).
    pub fn read(path: &Path, processor: Option<&'static str>) -> Result<Self, PerfmonError> {
        let processor = perfmon_processor(path, processor)?;
        let limit = crate::bounded::MAX_EVENT_LIST_BYTES;
        let text = crate::bounded::read_text(path, limit).map_err(PerfmonError::Read)?;
        let v: Value = serde_json::from_str(&text).map_err(|error| PerfmonError::NotJson {
            path: path.to_path_buf(),
            error,
        })?;
        let events =
            v.get("Events")
                .unwrap_or(&v)
                .as_array()
                .ok_or_else(|| PerfmonError::NoEvents {
                    path: path.to_path_buf(),
                })?;
        let mut d = Descriptions {
            processor,
            by_name: HashMap::new(),
            by_code: HashMap::new(),
        };
        let num = |e: &Value, k: &str| {
            e.get(k).and_then(Value::as_str).and_then(|s| {
                u64::from_str_radix(s.trim_start_matches("0x").split(',').next()?, 16).ok()
            })
        };
        for e in events {
            let (Some(name), Some(text)) = (
                e.get("EventName").and_then(Value::as_str),
                e.get("BriefDescription").and_then(Value::as_str),
            ) else {
                continue;
            };
            d.by_name
                .insert(name.to_ascii_uppercase(), text.to_string());
            if let (Some(c), Some(u)) = (num(e, "EventCode"), num(e, "UMask")) {
                d.by_code.entry((c, u)).or_insert_with(|| text.to_string());
            }
        }
        Ok(d)
    }

    /// The processor (spec id) whose list this is.
    pub fn processor(&self) -> &'static str {
        self.processor
    }

    /// The description of event `e` of `unit` in processor `processor`'s lists, if this is
    /// that processor's file (or, for the architectural events, its core's).
    pub fn of(&self, processor: &str, unit: &str, e: &EventInfo) -> Option<&str> {
        // The architectural events are every processor's: its file describes them too.
        let core_of = |id: &str| {
            PROCESSORS
                .iter()
                .find(|p| p.id == id)
                .and_then(|p| p.core_events)
                .map(|c| c.processor)
        };
        if processor != self.processor && core_of(self.processor) != Some(processor) {
            return None;
        }
        self.by_name
            .get(&e.name.to_ascii_uppercase())
            .or_else(|| {
                per_cpu_unit(processor, unit)
                    .then(|| self.by_code.get(&(u64::from(e.code), u64::from(e.umask))))
                    .flatten()
            })
            .map(String::as_str)
    }
}

/// Whether `unit` of `processor` is counted per CPU (its PMU's scope is the CPU's).
pub fn per_cpu_unit(processor: &str, unit: &str) -> bool {
    PROCESSORS
        .iter()
        .filter(|p| p.id == processor)
        .flat_map(|p| p.units.iter())
        .find(|u| u.name == unit)
        .and_then(|u| u.pmu)
        .is_some_and(|p| p.scope == pmu_regs::Scope::Cpu)
}

/// The set bits of a counter mask, ascending.
pub fn counter_bits(mask: u32) -> Vec<u32> {
    (0..32).filter(|n| mask >> n & 1 != 0).collect()
}

/// What an event sets beyond its select and umask (`cmask=4 inv edge any`; an uncore event's
/// `umask_ext=0xc001fe`, `port_mask=0x1 fc_mask=0x7`), or "".
pub fn settings_text(e: &EventInfo) -> String {
    let mut parts = Vec::new();
    if e.threshold != 0 {
        parts.push(format!("cmask={}", e.threshold));
    }
    for (set, name) in [(e.invert, "inv"), (e.edge, "edge"), (e.any_thread, "any")] {
        if set {
            parts.push(name.to_string());
        }
    }
    for (value, name) in [
        (e.umask_ext, "umask_ext"),
        (u32::from(e.port_mask), "port_mask"),
        (u32::from(e.fc_mask), "fc_mask"),
    ] {
        if value != 0 {
            parts.push(format!("{name}={value:#x}"));
        }
    }
    // The auxiliary MSR, as `encode` prints it (`MSR_OFFCORE_RSP_0=0x10001`).
    if let Some(a) = e.aux {
        parts.push(format!("{}={:#x}", a.register, a.value));
    }
    parts.join(" ")
}
