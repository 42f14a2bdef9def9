//! `cargo run -p codegen -- import-perfmon FILE`: a public event list (JSON) to our spec's
//! event files, `spec/<processor>/events/<unit>.xml`. Two flavours are read: Intel's perfmon
//! lists (`{"Events": [...]}`), and Linux perf's `tools/perf/pmu-events` lists (a bare array
//! of records, one file per topic: FILE may then be the directory, whose `*.json` files are
//! read as one list). Both name the same facts (`EventName`, `EventCode`, `UMask`, `Unit`);
//! Linux's leave `Counter` out where any counter counts the event, and mix metrics (records
//! with a `MetricName` and no `EventCode`) into the same files.
//!
//! Only facts are taken: names, event codes, umasks, counter restrictions (with
//! Hyper-Threading on and, where the list gives more, off), the extension bit,
//! filter names and, for core events, the counter mask, invert, edge-detect and any-thread
//! settings. Intel's descriptions are not copied. Core lists (`*_core.json`, records without
//! a `Unit`) go to the processor's `CORE` unit, which `processors.xml`'s `core-pmu` says is
//! the architectural one: `<processor>/events/core.xml`. A core record that needs an auxiliary
//! MSR (Intel's `MSRIndex`/`MSRValue`: offcore response, PEBS load latency, front end) names
//! the unit's register at that address (`msr="MSR_OFFCORE_RSP_0" msr-value=".."`). Records the
//! spec cannot program (fixed-counter-only events, PEBS-only events, the plain offcore response
//! without a value) are reported with their reason. Every record is checked against the
//! spec (the unit must exist, the code and umask must fit its control registers, the counters
//! must exist) by validating the spec with the new files, held in memory, before anything is
//! written.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The lists' unit names and ours.
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
    // Ice Lake-SP.
    ("M2PCIe", "M2PCIE"),
    // Granite Rapids' list spells the memory controller's unit `IMC`.
    ("IMC", "IMC"),
    // Granite Rapids' mesh-to-memory box (M2M's successor).
    ("B2CMI", "B2CMI"),
    // Granite Rapids' table-placed boxes: mesh to UPI link, mesh to CXL.
    ("B2UPI", "B2UPI"),
    ("B2CXL", "B2CXL"),
    // Linux's pmu-events lists for AMD Zen: the L3, Data Fabric and memory-controller PMCs.
    ("L3PMC", "L3"),
    ("DFPMC", "DF"),
    ("UMCPMC", "UMC"),
];

/// Which list a source comes from: it decides the source id an events file cites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavour {
    /// Intel's perfmon repository: `{"Events": [...]}`.
    IntelPerfmon,
    /// Linux perf's `tools/perf/pmu-events`: a bare array.
    LinuxPmuEvents,
}

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
    /// Absent in a Linux list's metric records.
    #[serde(rename = "EventCode", default)]
    event_code: String,
    /// Absent in Linux lists where the unit mask is 0.
    #[serde(rename = "UMask", default)]
    umask: String,
    /// Absent in a Linux list's metric records, which have a `MetricName` instead.
    #[serde(rename = "EventName", default)]
    event_name: String,
    /// Absent in Linux lists: any counter of the unit counts the event.
    #[serde(rename = "Counter", default)]
    counter: String,
    /// Core lists up to Cascade Lake: the counters when the core runs one hardware thread
    /// (`0,1,2,3,4,5,6,7` where `Counter` is `0,1,2,3`).
    #[serde(rename = "CounterHTOff", default)]
    counter_ht_off: String,
    #[serde(rename = "MetricName", default)]
    metric_name: String,
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
    /// Later uncore lists: `PGMABLE` (a general counter), `FIXED` (the box's fixed counter) or
    /// `FREERUN` (a free-running counter, which takes no event select).
    #[serde(rename = "CounterType", default)]
    counter_type: String,
    /// "1": Intel keeps the record under an old name (Skylake-SP lists both UNC_C_CLOCKTICKS
    /// and UNC_CHA_CLOCKTICKS).
    #[serde(rename = "Deprecated", default)]
    deprecated: String,
    /// Linux's AMD lists: the UMC read/write mask (the UMC's unit mask, [`Self::umask`]) and
    /// the L3 core, slice and thread selection an event needs besides its code and unit mask.
    #[serde(rename = "RdWrMask", default)]
    rd_wr_mask: String,
    #[serde(rename = "EnAllCores", default)]
    en_all_cores: String,
    #[serde(rename = "EnAllSlices", default)]
    en_all_slices: String,
    #[serde(rename = "SliceId", default)]
    slice_id: String,
    #[serde(rename = "ThreadMask", default)]
    thread_mask: String,
    /// Whether the record comes from an experimental list (`*_experimental.json`; Intel's
    /// records do not say so themselves).
    #[serde(skip)]
    experimental: bool,
}

impl PerfmonEvent {
    /// The unit mask, `0x00` where the list leaves it out. Linux's AMD lists give a UMC
    /// event's unit mask as `RdWrMask`: the UMC's counter control has no other sub-event
    /// field, and its read/write mask (bits 9:8, perf's `rdwrmask`) plays the umask role
    /// in the spec (spec/amd-zen4/umc.xml). The E-core lists (Sierra and Clearwater Forest)
    /// write an offcore response event with one code and two umasks (`0xB7`, `0x01,0x02`),
    /// one per offcore response MSR (`0x1a6,0x1a7`), as Linux's `intel_grt_extra_regs` and
    /// `intel_cmt_extra_regs` pair
    /// `0x01b7` with MSR_OFFCORE_RSP_0 and `0x02b7` with MSR_OFFCORE_RSP_1: as with the two
    /// codes of the core lists (`aux_of`), the first umask goes with the first register.
    fn umask(&self) -> &str {
        match (self.umask.trim(), self.rd_wr_mask.trim()) {
            ("", "") => "0x00",
            ("", rd_wr) => rd_wr,
            (u, _) if u.contains(',') && self.msr_index.contains(',') => {
                u.split(',').next().unwrap_or(u).trim()
            }
            (u, _) => u,
        }
    }
}

/// What makes two records count the same thing: unit, code, umask and the settings (a core
/// record's counter mask, invert, edge and any-thread bits and extra MSRs among them).
fn alias_key(e: &PerfmonEvent) -> [String; 13] {
    let n =
        |s: &str| crate::validate::parse_number(s).map_or(s.trim().to_string(), |v| v.to_string());
    [
        e.unit.clone(),
        n(&e.event_code),
        n(e.umask()),
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
/// beside RS.EMPTY_COUNT). A main list's record is looked up in the main lists only.
fn live_twin(i: usize, all: &[PerfmonEvent]) -> Option<&str> {
    let e = &all[i];
    if e.deprecated.trim() != "1" {
        return None;
    }
    let key = alias_key(e);
    // A main list's record is an alias only of a main list's record: an experimental list's
    // newer name does not take the place of a validated one.
    let same = |o: &&PerfmonEvent| (e.experimental || !o.experimental) && alias_key(o) == key;
    all.iter()
        .filter(same)
        .find(|o| o.deprecated.trim() != "1")
        .or_else(|| all[i + 1..].iter().find(same))
        .map(|o| o.event_name.as_str())
}

/// Intel's old event names and what each is now called: every deprecated record of `lists`
/// (a processor's core, uncore and experimental lists) that has a live twin, by name
/// (`UNC_IIO_PAYLOAD_BYTES_IN.MEM_READ.PART0` to `UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0`).
/// The events files hold only the live names; a metric written over an old one is read
/// through this map (`import_metrics`).
pub fn deprecated_names(lists: &[ListText]) -> Result<BTreeMap<String, String>, ImportError> {
    let (_, events, _) = read_records(lists)?;
    Ok(events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((e.event_name.clone(), live_twin(i, &events)?.to_string())))
        .collect())
}

/// Reads one list file (or a directory of them, as `import-perfmon` does).
pub fn read_list_file(file: &Path) -> Result<String, ImportError> {
    read_list(file).map_err(|message| ImportError::Input {
        path: file.display().to_string(),
        message,
    })
}

/// Why an uncore record cannot be one of the spec's events yet: it needs a setting the events
/// format has no attribute for (a filter value, the AMD lists' selections), and importing it
/// without would count something else. (The umask extension and the IIO masks are events'
/// `umask-ext`, `port-mask` and `fc-mask`: [`masks_of`].)
fn uncore_refusal(e: &PerfmonEvent) -> Option<(&'static str, String)> {
    match e.counter_type.trim() {
        "FIXED" => return Some((
            "fixed or free-running counter only",
            "counts only on the box's fixed counter, which has no event select: the fixed counter is a counter of the unit's structure (`<counter kind=\"fixed\">`), not an event".into(),
        )),
        "FREERUN" => return Some((
            "fixed or free-running counter only",
            "counts only on a free-running counter, which takes no event select: free-running counters are counters of the unit's structure, not events of its programmable counters".into(),
        )),
        _ => {}
    }
    let nonzero = |s: &str| !matches!(s.trim(), "" | "0" | "0x0" | "0x00" | "null" | "na");
    let needs: Vec<String> = [
        ("FILTER_VALUE", &e.filter_value),
        ("EnAllCores", &e.en_all_cores),
        ("EnAllSlices", &e.en_all_slices),
        ("SliceId", &e.slice_id),
        ("ThreadMask", &e.thread_mask),
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

/// The control bit Intel's `UMaskExt` starts at: Intel PCM programs it as
/// `UNC_PMON_CTL_UMASK_EXT(x) = x << 32` (types.h), and Linux's umask formats carry it in
/// `config:32-` (`umask_ext2` to `umask_ext5`, uncore_snbep.c).
const UMASK_EXT_LSB: u32 = 32;

/// A record's UMaskExt, PortMask and FCMask as the values of the unit's `umask-ext`,
/// `port-mask` and `fc-mask` roles. Where the unit's controls have no `umask-ext` field but
/// the record's UMaskExt only repeats, bit for bit, what its PortMask and FCMask put into the
/// port-mask and fc-mask fields (Granite Rapids' IIO list gives both), the masks carry it.
/// Whether the unit takes the masks is checked with its other facts ([`fit_refusal`]).
fn masks_of(
    e: &PerfmonEvent,
    caps: Option<crate::validate::EventCapacity>,
) -> Result<crate::model::EventMasks, Refusal> {
    fn number<T: TryFrom<u64>>(name: &str, v: &str) -> Result<T, Refusal> {
        let v = match v.trim() {
            "" | "null" | "na" => "0",
            v => v,
        };
        crate::validate::parse_number(v)
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| {
                (
                    "does not fit the unit's controls",
                    format!(
                        "{name} `{v}` is not a number of {} bits",
                        8 * std::mem::size_of::<T>()
                    ),
                )
            })
    }
    let mut masks = crate::model::EventMasks {
        umask_ext: number("UMaskExt", &e.umask_ext)?,
        port_mask: number("PortMask", &e.port_mask)?,
        fc_mask: number("FCMask", &e.fc_mask)?,
    };
    let Some(cap) = caps else {
        return Ok(masks);
    };
    // Roles in the order of `EventMasks::by_role`: umask-ext, port-mask, fc-mask.
    let placed = |value: u64, role: usize| cap.mask_lsb[role].map(|lsb| value << lsb);
    if masks.umask_ext != 0 && cap.mask_max[0] == 0 {
        let others = placed(u64::from(masks.port_mask), 1)
            .zip(placed(u64::from(masks.fc_mask), 2))
            .map(|(p, f)| p | f);
        if others == Some(u64::from(masks.umask_ext) << UMASK_EXT_LSB) {
            masks.umask_ext = 0;
        }
    }
    Ok(masks)
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
    if e.event_code.contains(',') && !nonzero(&e.msr_index) {
        return Some((
            "offcore response without a value",
            format!(
                "has two event codes ({}), one per offcore response MSR, and no MSRValue: what the register selects is left to the user, so there is no one event to import",
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

/// The auxiliary MSR a core record needs (Intel's `MSRIndex` and `MSRValue`), as a register
/// of its unit (`candidates`), and the event code that goes with it; `None` where it needs
/// none. Intel writes the offcore response events with two codes and two MSRs
/// (`0xB7, 0xBB` and `0x1a6,0x1a7`): the same event programmed through either register, the
/// first code with the first MSR. The first pair is imported (perf's `intel_fixup_er` moves an
/// event to the other pair when the first register is taken).
fn aux_of(
    e: &PerfmonEvent,
    candidates: &[crate::validate::AuxCandidate],
) -> Result<(String, Option<crate::model::AuxMsr>), Refusal> {
    let first = |s: &str| s.split(',').next().unwrap_or("").trim().to_string();
    let code = first(&e.event_code);
    let index = e.msr_index.trim();
    if matches!(index, "" | "0" | "0x0" | "0x00" | "null" | "na") {
        return Ok((code, None));
    }
    let needs = |why: String| {
        (
            "needs an MSR the unit lacks",
            format!(
                "needs MSR {index} programmed with {} besides the event select: {why}",
                e.msr_value.trim()
            ),
        )
    };
    let address = crate::validate::parse_number(&first(index))
        .ok_or_else(|| needs(format!("`{index}` is not an MSR number")))?;
    let value = crate::validate::parse_number(e.msr_value.trim())
        .ok_or_else(|| needs(format!("MSRValue `{}` is not a number", e.msr_value)))?;
    let Some(register) = candidates
        .iter()
        .find(|c| u64::from(c.address) == address && !c.structural)
    else {
        return Err(needs(format!(
            "the unit has no auxiliary register at {address:#x}; add it to the unit first"
        )));
    };
    crate::validate::resolve_aux(candidates, &register.name, value)
        .map(|aux| (code, Some(aux)))
        .map_err(|(why, _)| ("MSR value does not fit the register", why))
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
    /// Of those, the events from an experimental list, per unit.
    pub experimental: BTreeMap<String, usize>,
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
            match self.experimental.get(unit) {
                Some(x) => {
                    let _ = writeln!(s, "  {unit:<8} {n:>4} events ({x} experimental)");
                }
                None => {
                    let _ = writeln!(s, "  {unit:<8} {n:>4} events");
                }
            }
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

/// One event list to import: its text, and its path (which names it in reports and errors,
/// and says whether it is an experimental list: [`is_experimental_list`]).
#[derive(Debug, Clone, Copy)]
pub struct ListText<'a> {
    /// The JSON.
    pub text: &'a str,
    /// Where it was read from.
    pub path: &'a str,
}

/// Whether `path` names one of Intel's experimental lists (`skylakex_uncore_experimental.json`):
/// Intel publishes them beside the main lists for events it has not validated, and its
/// records do not say so themselves.
pub fn is_experimental_list(path: &str) -> bool {
    Path::new(path).file_stem().is_some_and(|n| {
        n.to_string_lossy()
            .to_ascii_lowercase()
            .ends_with("_experimental")
    })
}

/// Maps Intel's event list `text` onto the units of `processor` in `spec`: pure, touches no
/// file. `path` only names the input in errors.
pub fn plan(
    text: &str,
    path: &str,
    spec: &crate::model::Spec,
    processor: &str,
) -> Result<Plan, ImportError> {
    plan_lists(&[ListText { text, path }], spec, processor)
}

/// The records of `lists`, main lists first and experimental ones after (each marked), with
/// where each came from ("list record N"), and the first list's flavour.
fn read_records(
    lists: &[ListText],
) -> Result<(Flavour, Vec<PerfmonEvent>, Vec<String>), ImportError> {
    let input = |path: &str, message: String| ImportError::Input {
        path: path.to_string(),
        message,
    };
    let mut ordered: Vec<&ListText> = lists.iter().collect();
    ordered.sort_by_key(|l| is_experimental_list(l.path));
    if ordered.first().is_none_or(|l| is_experimental_list(l.path)) {
        return Err(input(
            lists.first().map_or("", |l| l.path),
            "an experimental list is imported together with its main list (an import rewrites the units' events files): pass both, e.g. import-perfmon X_uncore.json X_uncore_experimental.json".into(),
        ));
    }
    let (mut flavour, mut events, mut origins) = (None, Vec::new(), Vec::new());
    for list in &ordered {
        let (this, records) = parse_list(list.text).map_err(|m| input(list.path, m))?;
        flavour.get_or_insert(this);
        let experimental = is_experimental_list(list.path);
        let name = Path::new(list.path)
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        for (i, mut e) in records.into_iter().enumerate() {
            e.experimental = experimental;
            origins.push(if lists.len() > 1 {
                format!("{name} record {}", i + 1)
            } else {
                format!("record {}", i + 1)
            });
            events.push(e);
        }
    }
    let flavour = flavour.expect("a main list was read first");
    Ok((flavour, events, origins))
}

/// Maps several lists of one processor at once (its main list and its experimental list)
/// onto its units: each unit's events file gets the main list's events, then the
/// experimental list's, marked `experimental="1"`. A record of an experimental list whose
/// name the main list has too is reported, not imported (the main list's is kept); a
/// deprecated record's live twin is looked for in the main lists, and for an experimental
/// record in the experimental lists too (`live_twin`); a record whose constant name an
/// imported record of its unit has and that counts the same is reported (`another_name`).
pub fn plan_lists(
    lists: &[ListText],
    spec: &crate::model::Spec,
    processor: &str,
) -> Result<Plan, ImportError> {
    let path = lists.first().map_or("", |l| l.path);
    let (flavour, events, origins) = read_records(lists)?;
    let proc = spec
        .processors
        .iter()
        .find(|p| p.id == processor)
        .ok_or_else(|| ImportError::Input {
            path: path.to_string(),
            message: format!(
                "the spec has no processor `{processor}` (it has {})",
                spec.processors
                    .iter()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })?;
    let (report, files) = sort_records(spec, processor, &events, &origins);
    // The directory of the processor's spec (its unit files'), for its events files; a
    // processor taking another's units (`units-from`) keeps its events in its own directory.
    let proc_dir = proc
        .units
        .first()
        .filter(|_| proc.units_from.is_none())
        .and_then(|u| u.file.split('/').next())
        .unwrap_or(processor);
    let mut plan = Plan {
        report,
        files: Vec::new(),
    };
    for (module, (name, lines)) in &files {
        let source = events_source(spec, processor, name, flavour, path);
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

/// Unit module -> (unit name, the XML lines of its events file).
type UnitLines = BTreeMap<String, (String, Vec<String>)>;

/// Each record mapped onto its unit's events file, in list order, or reported with why not.
fn sort_records(
    spec: &crate::model::Spec,
    processor: &str,
    events: &[PerfmonEvent],
    origins: &[String],
) -> (Report, UnitLines) {
    let main_names: std::collections::HashSet<&str> = events
        .iter()
        .filter(|e| !e.experimental)
        .map(|e| e.event_name.as_str())
        .collect();
    let mut report = Report::default();
    let mut files = UnitLines::new();
    // (unit module, constant name) -> the record imported under it
    let mut constants: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.event_code.trim().is_empty() && !e.metric_name.trim().is_empty() {
            let record = format!("{} ({})", origins[i], e.metric_name);
            report.errors.push(format!(
                "{record}: a metric (a formula over events), not an event; metrics are not imported by import-perfmon"
            ));
            *report
                .not_imported
                .entry("metric, not an event")
                .or_default() += 1;
            continue;
        }
        let mapped = if e.experimental && main_names.contains(e.event_name.as_str()) {
            Err((
                "experimental, in the main list too",
                "the main list has an event of this name too; the main list's is imported, not marked experimental".to_string(),
            ))
        } else {
            map_record(spec, processor, e, live_twin(i, events))
                .and_then(|m| claim_constant(&mut constants, m, i, events))
        };
        match mapped {
            Ok(m) => {
                if e.experimental {
                    *report.experimental.entry(m.unit.clone()).or_default() += 1;
                }
                files
                    .entry(m.module)
                    .or_insert_with(|| (m.unit, Vec::new()))
                    .1
                    .push(m.line)
            }
            Err((kind, why)) => {
                let record = format!("{} ({})", origins[i], e.event_name);
                report.errors.push(format!("{record}: {why}"));
                *report.not_imported.entry(kind).or_default() += 1;
            }
        }
    }
    (report, files)
}

/// Record `i`, mapped as `m`, takes its constant name in its unit, unless a record imported
/// before under that name counts the same (then it is that record's other name).
fn claim_constant(
    constants: &mut BTreeMap<(String, String), usize>,
    m: Mapped,
    i: usize,
    events: &[PerfmonEvent],
) -> Result<Mapped, Refusal> {
    let e = &events[i];
    let key = (m.module.clone(), crate::naming::event_ident(&e.event_name));
    match constants.get(&key) {
        Some(&first) if alias_key(e) == alias_key(&events[first]) => {
            Err(another_name(e, &events[first]))
        }
        // Two events whose constants clash: the validator refuses the import.
        Some(_) => Ok(m),
        None => {
            constants.insert(key, i);
            Ok(m)
        }
    }
}

/// The records of `text`, in either flavour.
fn parse_list(text: &str) -> Result<(Flavour, Vec<PerfmonEvent>), String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Array(_)) => serde_json::from_str(text)
            .map(|events| (Flavour::LinuxPmuEvents, events))
            .map_err(|e| format!("not a Linux pmu-events list ({e})")),
        _ => serde_json::from_str::<PerfmonFile>(text)
            .map(|f| (Flavour::IntelPerfmon, f.events))
            .map_err(|e| {
                format!(
                    "not an event list ({e}); expected Intel's {{\"Events\": [...]}} or Linux pmu-events' [...]"
                )
            }),
    }
}

/// Why record `e` is not imported when an imported record of its unit, `first`, counts the
/// same under a name with the same constant name (Sapphire Rapids' experimental list has
/// `UNC_M2M_IMC_WRITES.CH0.NI` and `UNC_M2M_IMC_WRITES.CH0_NI`, both live). Records that
/// count different things under clashing names are left to the validator, which refuses
/// the import: one of them needs a name by hand.
fn another_name(e: &PerfmonEvent, first: &PerfmonEvent) -> Refusal {
    (
        "another name of an imported event",
        format!(
            "counts the same as {}, imported, and its constant name {} would be the same",
            first.event_name,
            crate::naming::event_ident(&e.event_name)
        ),
    )
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
    let ours = match our_unit(e)? {
        CORE_UNIT => own_core_unit(spec, processor).unwrap_or(CORE_UNIT),
        other => other,
    };
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
    let refusal = if e.unit.trim().is_empty() {
        core_refusal(e)
    } else {
        uncore_refusal(e)
    };
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    let (code, aux) = if e.unit.trim().is_empty() {
        let candidates = spec
            .processors
            .iter()
            .filter(|p| p.id == owner)
            .flat_map(|p| &p.units)
            .find(|u| u.name == unit_name)
            .map(crate::validate::aux_candidates)
            .unwrap_or_default();
        aux_of(e, &candidates)?
    } else {
        (e.event_code.trim().to_string(), None)
    };
    // Records the unit cannot count are reported here, one by one, rather than failing the
    // whole import in validation.
    let settings = settings_of(e);
    let masks = masks_of(e, caps)?;
    if let Some(why) = fit_refusal(e, &code, ours, caps, &settings) {
        return Err(("does not fit the unit's controls", why));
    }
    if let Some(why) = caps.and_then(|c| c.refuse_masks(&masks)) {
        return Err(("needs a mask field the unit's controls lack", why));
    }
    let module = spec
        .processors
        .iter()
        .filter(|p| p.id == owner)
        .flat_map(|p| &p.units)
        .find(|u| u.name == unit_name)
        .map_or_else(|| unit_name.to_ascii_lowercase(), |u| u.module.clone());
    let counters = match (e.counter.trim(), caps) {
        ("", Some(cap)) => format!("0-{}", cap.counters.saturating_sub(1)),
        (c, _) => c.replace(' ', ""),
    };
    Ok(Mapped {
        module,
        unit: unit_name,
        line: event_line(
            e,
            &code,
            &counters,
            &settings.unwrap_or_default(),
            &masks,
            aux.as_ref(),
        ),
    })
}

/// The processor's own per-CPU unit (`<pmu scope="cpu">`), where a core list's events go
/// when the processor describes its core PMU itself rather than through a `core-pmu`.
fn own_core_unit<'a>(spec: &'a crate::model::Spec, processor: &str) -> Option<&'a str> {
    spec.processors
        .iter()
        .find(|p| p.id == processor)?
        .units
        .iter()
        .find(|u| {
            u.pmu
                .as_ref()
                .is_some_and(|p| p.scope == crate::model::pmu::Scope::Cpu)
        })
        .map(|u| u.name.as_str())
}

/// Our name for the record's unit: Intel's, translated, or the core unit for core lists.
fn our_unit(e: &PerfmonEvent) -> Result<&'static str, Refusal> {
    // (A core record's unit is resolved against the processor by the caller.)
    if e.unit.trim().is_empty() {
        return Ok(CORE_UNIT);
    }
    match UNIT_NAMES.iter().find(|(theirs, _)| *theirs == e.unit) {
        Some((_, ours)) => Ok(ours),
        None => Err((
            "unknown unit",
            format!(
                "the list's unit `{}` has no counterpart here; known units: {}",
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
    code: &str,
    ours: &str,
    caps: Option<crate::validate::EventCapacity>,
    settings: &Result<crate::model::EventSettings, String>,
) -> Option<String> {
    let code_text = code;
    let code = crate::validate::parse_number(code);
    let umask = crate::validate::parse_number(e.umask());
    let counters = match (e.counter.trim(), caps) {
        // No `Counter`: every counter of the unit.
        ("", Some(cap)) => Some(if cap.counters >= 32 {
            u32::MAX
        } else {
            (1u32 << cap.counters) - 1
        }),
        (c, _) => crate::validate::counters_mask(&c.replace(' ', "")),
    };
    let ext_sel = e.ext_sel.trim() == "1";
    match (code, umask, counters, caps, settings) {
        (None, _, _, _, _) => Some(format!("event code `{code_text}` is not a number")),
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
fn event_line(
    e: &PerfmonEvent,
    code: &str,
    counters: &str,
    settings: &crate::model::EventSettings,
    masks: &crate::model::EventMasks,
    aux: Option<&crate::model::AuxMsr>,
) -> String {
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
    let ht_off = e.counter_ht_off.replace(' ', "");
    let mask = |text: &str| crate::validate::counters_mask(text);
    if !ht_off.is_empty() && mask(&ht_off) != mask(counters) {
        let _ = write!(extra, " counters-ht-off=\"{}\"", xml_escape(&ht_off));
    }
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
    for (role, value) in masks.by_role() {
        if value != 0 {
            let _ = write!(extra, " {}=\"{value:#x}\"", role.as_str());
        }
    }
    if e.experimental {
        extra.push_str(" experimental=\"1\"");
    }
    if let Some(a) = aux {
        let _ = write!(
            extra,
            " msr=\"{}\" msr-value=\"{:#x}\"",
            xml_escape(&a.register),
            a.value
        );
    }
    format!(
        "  <event name=\"{}\" code=\"{}\" umask=\"{}\" counters=\"{}\"{ext}{filters}{extra}/>",
        xml_escape(&e.event_name),
        xml_escape(code),
        xml_escape(e.umask()),
        xml_escape(counters)
    )
}

/// The source an events file of `unit` cites. Each processor's event list is its own source
/// when processors.xml declares one (`intel-perfmon-<processor>`); the first processor's list
/// keeps the plain id. Core lists cite `intel-perfmon-core` where it is declared. A Linux
/// pmu-events list cites `linux-pmu-events-<its directory>` (`amdzen4`: the processor's
/// `perfmon` name, or a directory of the list's `path`), else `linux-pmu-events`.
fn events_source(
    spec: &crate::model::Spec,
    processor: &str,
    unit: &str,
    flavour: Flavour,
    path: &str,
) -> String {
    let declared = |id: &str| spec.public_sources.iter().any(|s| s.id == id);
    if flavour == Flavour::LinuxPmuEvents {
        let perfmon = spec
            .processors
            .iter()
            .find(|p| p.id == processor)
            .and_then(|p| p.identity.as_ref()?.perfmon.clone());
        let dirs = Path::new(path)
            .components()
            .rev()
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        return perfmon
            .into_iter()
            .chain(dirs)
            .map(|d| format!("linux-pmu-events-{d}"))
            .find(|id| declared(id))
            .unwrap_or_else(|| "linux-pmu-events".to_string());
    }
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
    import_perfmon_lists(&[file.to_path_buf()], spec_dir, processor)
}

/// Reads `files` (a main list, and its experimental list) and writes the event files of
/// `processor` into `spec_dir`, every unit's events from all of them ([`plan_lists`]).
pub fn import_perfmon_lists(
    files: &[PathBuf],
    spec_dir: &Path,
    processor: &str,
) -> Result<Report, ImportError> {
    let mut texts = Vec::new();
    for file in files {
        let text = read_list(file).map_err(|message| ImportError::Input {
            path: file.display().to_string(),
            message,
        })?;
        texts.push((file.display().to_string(), text));
    }
    let lists: Vec<ListText> = texts
        .iter()
        .map(|(path, text)| ListText { text, path })
        .collect();
    let spec = crate::load_spec(spec_dir)?;
    let Plan { mut report, files } = plan_lists(&lists, &spec, processor)?;

    report.written = write_event_files(spec_dir, files)?;
    Ok(report)
}

/// Validates the spec in `spec_dir` with `files` (event files, relative to it) in memory,
/// through the same path as generation, then writes them: each beside its target first,
/// renamed only when all are written, so a full disk or a bad permission leaves the spec as
/// it was, not part-imported. Returns the paths written.
pub fn write_event_files(
    spec_dir: &Path,
    files: Vec<(PathBuf, String)>,
) -> Result<Vec<PathBuf>, ImportError> {
    crate::load::load_dir_with_events(spec_dir, &files)
        .map_err(|e| ImportError::Spec(crate::Error::Spec(e)))?;
    let mut written = Vec::new();
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
        written.push(path);
    }
    Ok(written)
}

/// The text of `file`, or, for a directory (a Linux pmu-events directory such as `amdzen4/`),
/// the records of its `*.json` files, in name order, as one array.
fn read_list(file: &Path) -> Result<String, String> {
    if !file.is_dir() {
        return std::fs::read_to_string(file).map_err(|e| e.to_string());
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(file)
        .map_err(|e| e.to_string())?
        .filter_map(|d| Some(d.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err("the directory has no *.json event list".into());
    }
    let mut all = Vec::new();
    for p in &paths {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Array(records)) => all.extend(records),
            _ => {
                return Err(format!(
                    "{}: not a Linux pmu-events list (a JSON array); a directory is read only in that flavour",
                    p.display()
                ))
            }
        }
    }
    Ok(serde_json::Value::Array(all).to_string())
}

/// The processor whose `<identity perfmon="..">` prefixes `file`'s name (case-insensitively):
/// `ivytown_uncore.json` belongs to the processor with `perfmon="ivytown"`, and a Linux
/// pmu-events directory `amdzen4/` to the one with `perfmon="amdzen4"`.
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
        .filter(|(_, prefix)| {
            let prefix = prefix.to_ascii_lowercase();
            name.starts_with(&format!("{prefix}_")) || name == prefix
        })
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
