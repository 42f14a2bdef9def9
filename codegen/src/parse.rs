//! Stage 1: XML text -> raw, unvalidated structs that mirror the schema one to one.
//!
//! quick-xml's serde support does not report where an element was, so before deserializing we
//! pass over the document once with the streaming reader and give every start tag an extra
//! attribute, `_at`, holding its byte offset. Each raw struct keeps that offset, and the validator
//! turns it into `file:line:column`. The same pass records element and attribute names so that a
//! serde "unknown field" error can be pointed at the line that caused it.

// The raw structs mirror spec/README.md element for element and attribute for attribute;
// documenting each field again here would only repeat it.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use serde::Deserialize;

use crate::diagnostics::{Diagnostic, SourceFile};

pub mod metrics;
pub mod pmu;

/// `processors.xml`: processors, their documents, and cited public sources.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProcessors {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(default)]
    pub processor: Vec<RawProcessor>,
    #[serde(default)]
    pub source: Vec<RawPublicSource>,
    #[serde(default, rename = "perf-driver")]
    pub perf_driver: Vec<RawPerfDriver>,
    /// `<soc>`s: SoCs as compositions of the processors above.
    #[serde(default)]
    pub soc: Vec<RawSoc>,
}

/// `<soc id=".." name=".." cores=".." uncore=".." source="..">` with an optional
/// `<soc-id value="jep106:036b:0241" source=".."/>`: a SoC as the processors whose PMUs it has.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSoc {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@id")]
    pub id: String,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@cores")]
    pub cores: String,
    #[serde(rename = "@uncore", default)]
    pub uncore: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(rename = "soc-id", default)]
    pub soc_id: Option<RawSocId>,
}

/// `<soc-id value="jep106:BBII:SSSS" source=".."/>`: the SMCCC SOC_ID Linux shows in
/// `/sys/devices/soc0/soc_id`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSocId {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@value")]
    pub value: String,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<perf-driver>`: a Linux perf driver's format for a kind of box.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPerfDriver {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@id")]
    pub id: String,
    #[serde(rename = "@module")]
    pub module: String,
    #[serde(rename = "@group")]
    pub group: String,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(default)]
    pub format: Vec<RawPerfFormat>,
}

/// `<format>`: one `format/*` file and what it maps onto (or, as text, why nothing).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPerfFormat {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@config")]
    pub config: String,
    #[serde(rename = "@role")]
    pub role: Option<String>,
    #[serde(rename = "@field")]
    pub field: Option<String>,
    #[serde(rename = "@register")]
    pub register: Option<String>,
    #[serde(rename = "$text", default)]
    pub text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProcessor {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@id")]
    pub id: String,
    #[serde(rename = "@module")]
    pub module: String,
    #[serde(rename = "@name")]
    pub name: String,
    /// The processor whose units describe this one's core PMU (`architectural`): its events
    /// files may name those units.
    #[serde(rename = "@core-pmu", default)]
    pub core_pmu: Option<String>,
    /// The processor whose unit files describe this one's units too (`skylake-sp` for
    /// Cascade Lake): this one has no unit files of those names.
    #[serde(rename = "@units-from", default)]
    pub units_from: Option<String>,
    /// How many top-down shares the core's IA32_PERF_METRICS reports (4 or 8); absent when
    /// the core has neither it nor fixed counter 3.
    #[serde(rename = "@topdown-metrics", default)]
    pub topdown_metrics: Option<String>,
    /// The core's fixed counters (`0-2,4-6`), where they are not the default: 0 to 2, and 3
    /// with `topdown-metrics`.
    #[serde(rename = "@fixed-counters", default)]
    pub fixed_counters: Option<String>,
    #[serde(default)]
    pub document: Vec<RawDocument>,
    #[serde(default)]
    pub identity: Option<RawIdentity>,
    /// `<midr>`: how an Arm core is recognised (MIDR_EL1's implementer and part number).
    #[serde(default)]
    pub midr: Option<RawMidr>,
    /// `<discovery-domain>`s: where the part's discovery tables are.
    #[serde(rename = "discovery-domain", default)]
    pub discovery_domain: Vec<RawDiscoveryDomain>,
    /// `<discovery-types>`: the discovery types a public source names.
    #[serde(rename = "discovery-types", default)]
    pub discovery_types: Option<RawDiscoveryTypes>,
}

/// `<discovery-domain id=".." pci-device=".." (or msr="..") per="socket|die" ignore="0x13=MSE"
/// global-init="0x0" source=".."/>`: one discovery domain of a processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDiscoveryDomain {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@id")]
    pub id: String,
    #[serde(rename = "@pci-device", default)]
    pub pci_device: Option<String>,
    #[serde(rename = "@msr", default)]
    pub msr: Option<String>,
    #[serde(rename = "@per")]
    pub per: String,
    #[serde(rename = "@ignore", default)]
    pub ignore: Option<String>,
    #[serde(rename = "@global-init", default)]
    pub global_init: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<discovery-types names="4=PCU 5=UBOX" source=".."/>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDiscoveryTypes {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@names")]
    pub names: String,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<midr implementer="0x41" part="0xD4F" codenames=".." source=".."/>`: how software
/// recognises an Arm core, by the implementer and primary part number of its MIDR_EL1.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMidr {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@implementer")]
    pub implementer: String,
    #[serde(rename = "@part")]
    pub part: String,
    #[serde(rename = "@codenames")]
    pub codenames: String,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<identity vendor=".." family=".." model=".." (or models="..") codenames=".." perfmon=".."
/// source=".."/>`: how software
/// recognises the processor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIdentity {
    #[serde(rename = "@_at")]
    pub at: usize,
    /// CPUID leaf 0's vendor string; `GenuineIntel` when absent.
    #[serde(rename = "@vendor", default)]
    pub vendor: Option<String>,
    #[serde(rename = "@family")]
    pub family: String,
    /// One model (`0x3E`); exactly one of `model` and `models` is given.
    #[serde(rename = "@model", default)]
    pub model: Option<String>,
    /// Model ranges (`0x10-0x1F,0xA0-0xAF`).
    #[serde(rename = "@models", default)]
    pub models: Option<String>,
    #[serde(rename = "@steppings", default)]
    pub steppings: Option<String>,
    #[serde(rename = "@codenames")]
    pub codenames: String,
    #[serde(rename = "@perfmon", default)]
    pub perfmon: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDocument {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@id")]
    pub id: String,
    #[serde(rename = "@title")]
    pub title: String,
    #[serde(rename = "@reference")]
    pub reference: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPublicSource {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@id")]
    pub id: String,
    #[serde(rename = "@title")]
    pub title: String,
}

/// One unit file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUnit {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@processor")]
    pub processor: String,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@module")]
    pub module: String,
    #[serde(rename = "@title")]
    pub title: String,
    pub description: String,
    #[serde(default)]
    pub instance: Vec<RawInstance>,
    #[serde(rename = "mmio-window", default)]
    pub mmio_window: Vec<RawMmioWindow>,
    #[serde(default)]
    pub register: Vec<RawRegister>,
    pub pmu: Option<pmu::RawPmu>,
    #[serde(rename = "node-events")]
    pub node_events: Option<RawNodeEvents>,
}

/// `<node-events>`: the events a mesh node offers its crosspoint's DTM (spec/README.md,
/// "Mesh node events").
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNodeEvents {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@node-type")]
    pub node_type: String,
    #[serde(rename = "@select")]
    pub select: String,
    #[serde(rename = "@slots")]
    pub slots: String,
    #[serde(rename = "@input")]
    pub input: String,
    #[serde(rename = "@perf-driver")]
    pub perf_driver: String,
    #[serde(rename = "@pmu")]
    pub pmu: String,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(default)]
    pub event: Vec<RawNodeEvent>,
}

/// `<event>` of `<node-events>`: a name, its event id, and the filter it sets.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNodeEvent {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@id")]
    pub id: String,
    #[serde(rename = "@filter")]
    pub filter: Option<String>,
    #[serde(rename = "@occupid")]
    pub occupid: Option<String>,
}

/// `<mmio-window>`: where the unit's memory-mapped registers are (spec/README.md, "Memory-mapped
/// registers").
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMmioWindow {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@offset")]
    pub offset: String,
    #[serde(rename = "@channel-stride")]
    pub channel_stride: Option<String>,
    #[serde(rename = "@size")]
    pub size: String,
    #[serde(rename = "@controllers")]
    pub controllers: String,
    #[serde(rename = "@channels")]
    pub channels: String,
    #[serde(rename = "@source")]
    pub source: String,
    pub description: String,
    pub base: RawMmioBase,
}

/// `<base>`: the device whose config registers hold the window's base, and the pieces.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMmioBase {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@device-id")]
    pub device_id: String,
    #[serde(rename = "@device")]
    pub device: String,
    #[serde(rename = "@function")]
    pub function: String,
    #[serde(default)]
    pub part: Vec<RawMmioPart>,
}

/// `<part>`: bits of one config dword and where they land in the base.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMmioPart {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@offset")]
    pub offset: String,
    #[serde(rename = "@controller-stride")]
    pub controller_stride: Option<String>,
    #[serde(rename = "@bits")]
    pub bits: String,
    #[serde(rename = "@shift")]
    pub shift: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstance {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@number")]
    pub number: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRegister {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@type")]
    pub type_name: Option<String>,
    #[serde(rename = "@width")]
    pub width: String,
    #[serde(rename = "@space")]
    pub space: String,
    #[serde(rename = "@count")]
    pub count: Option<String>,
    #[serde(rename = "@count-cpuid")]
    pub count_cpuid: Option<String>,
    #[serde(rename = "@reset")]
    pub reset: Option<String>,
    #[serde(default)]
    pub source: Vec<RawSourceRef>,
    pub description: String,
    #[serde(default)]
    pub msr: Vec<RawMsr>,
    #[serde(default)]
    pub pci: Vec<RawPci>,
    #[serde(default)]
    pub mmio: Vec<RawMmio>,
    #[serde(default)]
    pub table: Vec<RawTable>,
    #[serde(default)]
    pub sysreg: Vec<RawSysReg>,
    #[serde(rename = "address-unknown")]
    pub address_unknown: Option<RawAddressUnknown>,
    #[serde(rename = "from-table")]
    pub from_table: Option<RawFromTable>,
    #[serde(default)]
    pub field: Vec<RawField>,
    #[serde(default)]
    pub note: Vec<RawNote>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSourceRef {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@document")]
    pub document: Option<String>,
    #[serde(rename = "@source")]
    pub source: Option<String>,
    #[serde(rename = "@table")]
    pub table: Option<String>,
    #[serde(rename = "@page")]
    pub page: Option<String>,
    #[serde(rename = "@section")]
    pub section: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMsr {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@instance")]
    pub instance: String,
    #[serde(rename = "@index")]
    pub index: Option<String>,
    #[serde(rename = "@address")]
    pub address: String,
    #[serde(rename = "@stride")]
    pub stride: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<table>`: a register at a byte offset inside a structure the runtime locates (the uncore
/// discovery capability, a discovery table entry).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTable {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@instance")]
    pub instance: String,
    #[serde(rename = "@index")]
    pub index: Option<String>,
    #[serde(rename = "@offset")]
    pub offset: String,
    #[serde(rename = "@stride")]
    pub stride: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<sysreg>`: an Arm system register by its encoding (op0, op1, CRn, CRm, op2); `stride`
/// counts in the packed encoding (op2 first, carrying into CRm), see `model::sysreg`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSysReg {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@instance")]
    pub instance: String,
    #[serde(rename = "@index")]
    pub index: Option<String>,
    #[serde(rename = "@op0")]
    pub op0: String,
    #[serde(rename = "@op1")]
    pub op1: String,
    #[serde(rename = "@crn")]
    pub crn: String,
    #[serde(rename = "@crm")]
    pub crm: String,
    #[serde(rename = "@op2")]
    pub op2: String,
    #[serde(rename = "@stride")]
    pub stride: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPci {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@instance")]
    pub instance: String,
    #[serde(rename = "@index")]
    pub index: Option<String>,
    #[serde(rename = "@device-id")]
    pub device_id: String,
    #[serde(rename = "@device")]
    pub device: String,
    #[serde(rename = "@function")]
    pub function: String,
    #[serde(rename = "@offset")]
    pub offset: String,
    #[serde(rename = "@stride")]
    pub stride: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<mmio>`: a register's offset in the window of one controller and channel.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMmio {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@instance")]
    pub instance: String,
    #[serde(rename = "@index")]
    pub index: Option<String>,
    #[serde(rename = "@controller")]
    pub controller: String,
    #[serde(rename = "@channel")]
    pub channel: Option<String>,
    #[serde(rename = "@offset")]
    pub offset: String,
    #[serde(rename = "@stride")]
    pub stride: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAddressUnknown {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@reason")]
    pub reason: String,
}

/// `<from-table>`: the discovery table places the register, relative to its box's entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFromTable {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@place")]
    pub place: String,
    #[serde(rename = "@stride")]
    pub stride: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawField {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@bits")]
    pub bits: String,
    #[serde(rename = "@access")]
    pub access: String,
    #[serde(rename = "@reset")]
    pub reset: String,
    #[serde(rename = "@source")]
    pub source: Option<String>,
    #[serde(rename = "@repeat")]
    pub repeat: Option<String>,
    #[serde(rename = "@count-cpuid")]
    pub count_cpuid: Option<String>,
    #[serde(rename = "@role")]
    pub role: Option<String>,
    #[serde(rename = "@counters")]
    pub counters: Option<String>,
    #[serde(rename = "@count-default")]
    pub count_default: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub value: Vec<RawValue>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawValue {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@value")]
    pub value: String,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@description")]
    pub description: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNote {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@kind")]
    pub kind: String,
    #[serde(rename = "@title")]
    pub title: String,
    #[serde(rename = "$text")]
    pub text: String,
}

/// An events file: `<events processor=".." unit="..">` with one `<event>` per event.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvents {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@processor")]
    pub processor: String,
    #[serde(rename = "@unit")]
    pub unit: String,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(default)]
    pub event: Vec<RawEvent>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@code")]
    pub code: String,
    #[serde(rename = "@umask")]
    pub umask: String,
    #[serde(rename = "@counters")]
    pub counters: String,
    /// The counters that may count it when its core runs one hardware thread (Intel's
    /// `CounterHTOff`), where they are more than `counters`.
    #[serde(rename = "@counters-ht-off")]
    pub counters_ht_off: Option<String>,
    #[serde(rename = "@ext-sel")]
    pub ext_sel: Option<String>,
    #[serde(rename = "@filters")]
    pub filters: Option<String>,
    /// The value of the control's `threshold` role (a core event's counter mask).
    #[serde(rename = "@threshold")]
    pub threshold: Option<String>,
    /// Sets the control's `invert` role.
    #[serde(rename = "@invert")]
    pub invert: Option<String>,
    /// Sets the control's `edge` role.
    #[serde(rename = "@edge")]
    pub edge: Option<String>,
    /// Sets the control's `any-thread` role.
    #[serde(rename = "@any-thread")]
    pub any_thread: Option<String>,
    /// The value of the control's `umask-ext` role (Intel's UMaskExt).
    #[serde(rename = "@umask-ext")]
    pub umask_ext: Option<String>,
    /// The value of the control's `port-mask` role (Intel's PortMask).
    #[serde(rename = "@port-mask")]
    pub port_mask: Option<String>,
    /// The value of the control's `fc-mask` role (Intel's FCMask).
    #[serde(rename = "@fc-mask")]
    pub fc_mask: Option<String>,
    /// "1": the event comes from a list its vendor calls experimental (Intel's
    /// `*_uncore_experimental.json`: not validated, counts may be wrong).
    #[serde(rename = "@experimental")]
    pub experimental: Option<String>,
    /// The auxiliary register the event needs programmed besides its control (a register of
    /// its unit by concrete name: `MSR_OFFCORE_RSP_0`), with `msr-value`.
    #[serde(rename = "@msr")]
    pub msr: Option<String>,
    /// The value the auxiliary register must hold (Intel's `MSRValue`).
    #[serde(rename = "@msr-value")]
    pub msr_value: Option<String>,
}

/// Parsed `processors.xml` together with the text it came from.
pub struct ParsedProcessors {
    /// The file, for turning offsets into positions.
    pub file: SourceFile,
    /// Its content.
    pub raw: RawProcessors,
}

/// A parsed unit file together with the text it came from.
pub struct ParsedUnit {
    /// The file, for turning offsets into positions.
    pub file: SourceFile,
    /// Its content.
    pub raw: RawUnit,
}

/// The whole spec directory, parsed but not validated.
pub struct RawSpec {
    /// `processors.xml`.
    pub processors: ParsedProcessors,
    /// Every unit file, in path order (so output is deterministic).
    pub units: Vec<ParsedUnit>,
}

/// Reads `processors.xml` and every `*/*.xml` unit file below `dir`.
///
/// All files are parsed even when one fails, so a single run reports every broken file.
pub fn parse_spec_dir(dir: &Path) -> Result<RawSpec, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let processors_path = dir.join("processors.xml");
    let processors = match SourceFile::read(&processors_path) {
        Ok(file) => match parse_document::<RawProcessors>(&file, "processors") {
            Ok(raw) => Some(ParsedProcessors { file, raw }),
            Err(e) => {
                errors.push(e);
                None
            }
        },
        Err(e) => {
            errors.push(e);
            None
        }
    };

    let mut units = Vec::new();
    match unit_paths(dir) {
        Ok(paths) => {
            for path in paths {
                match SourceFile::read(&path).and_then(|file| {
                    parse_document::<RawUnit>(&file, "unit").map(|raw| (file, raw))
                }) {
                    Ok((file, raw)) => units.push(ParsedUnit { file, raw }),
                    Err(e) => errors.push(e),
                }
            }
        }
        Err(e) => errors.push(e),
    }

    match processors {
        Some(processors) if errors.is_empty() => Ok(RawSpec { processors, units }),
        _ => Err(errors),
    }
}

/// Events files: `DIR/<processor>/events/*.xml`, sorted.
pub(crate) fn event_paths(dir: &Path) -> Vec<PathBuf> {
    processor_subdir_paths(dir, "events")
}

/// Metrics files: `DIR/<processor>/metrics/*.xml`, sorted.
pub(crate) fn metric_paths(dir: &Path) -> Vec<PathBuf> {
    processor_subdir_paths(dir, "metrics")
}

/// `DIR/<processor>/<sub>/*.xml`, sorted.
fn processor_subdir_paths(dir: &Path, sub: &str) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return paths;
    };
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path().join(sub)))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        if let Ok(entries) = std::fs::read_dir(&sub) {
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "xml"))
                .collect();
            files.sort();
            paths.extend(files);
        }
    }
    paths
}

/// Unit files: `DIR/<processor>/*.xml`, sorted.
pub(crate) fn unit_paths(dir: &Path) -> Result<Vec<PathBuf>, Diagnostic> {
    let io_err = |path: &Path, e: std::io::Error| {
        Diagnostic::file(path, format!("cannot read the spec directory: {e}"))
            .help("pass the directory that holds processors.xml with --spec")
    };
    let mut paths = Vec::new();
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io_err(dir, e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&sub)
            .map_err(|e| io_err(&sub, e))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "xml"))
            .collect();
        files.sort();
        paths.extend(files);
    }
    Ok(paths)
}

/// One element or attribute name seen by the annotating pass, with where it was.
struct NameSite {
    name: String,
    is_attribute: bool,
    offset: usize,
    /// For an attribute, its element; for an element, its parent.
    owner: String,
}

/// Parses one document whose root element must be `root`.
pub fn parse_document<T: for<'de> Deserialize<'de>>(
    file: &SourceFile,
    root: &str,
) -> Result<T, Diagnostic> {
    let (annotated, root_seen) = annotate_offsets(file)?;
    if root_seen.as_deref() != Some(root) {
        return Err(file
            .error_at(
                0,
                format!(
                    "the root element is <{}>, expected <{root}>",
                    root_seen.unwrap_or_default()
                ),
            )
            .help("unit files start with <unit>, and spec/processors.xml with <processors>"));
    }
    quick_xml::de::from_str::<T>(&annotated)
        .map_err(|e| serde_error(file, &e.to_string(), &name_sites(file)))
}

/// Copies the document with an `_at="<byte offset>"` attribute added to every start tag.
///
/// The attribute is spliced into the original text just before each tag's `>` (or `/>`), so
/// everything else, comments and entities included, is copied byte for byte.
fn annotate_offsets(file: &SourceFile) -> Result<(String, Option<String>), Diagnostic> {
    let text = file.text.as_str();
    // SourceFile drops one byte-order mark; the reader would skip a second one without
    // counting it, and every offset after it would be wrong.
    if text.starts_with('\u{feff}') {
        return Err(file
            .error_at(
                0,
                "the file starts with two byte-order marks (U+FEFF)".to_string(),
            )
            .help("remove the second one; XML allows one, before the declaration"));
    }
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(false);
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut copied = 0;
    let mut root = None;
    loop {
        let offset = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| {
            file.error_at(
                reader.error_position() as usize,
                format!("malformed XML: {e}"),
            )
            .help("fix the XML syntax; `xmllint --noout FILE` shows the same problem")
        })?;
        let end = reader.buffer_position() as usize;
        let (start, closing) = match &event {
            Event::Eof => break,
            Event::Start(start) => (start, 1),
            Event::Empty(start) => (start, 2),
            _ => continue,
        };
        let tag_offset = tag_start(text, offset);
        if root.is_none() {
            root = Some(String::from_utf8_lossy(start.name().as_ref()).into_owned());
        }
        if start.try_get_attribute("_at").ok().flatten().is_some() {
            return Err(file.error_at(tag_offset, "the attribute `_at` is reserved".to_string()));
        }
        let insert_at = end - closing;
        // The reader's positions are byte offsets of `text`; should one ever not be, report it
        // rather than slice inside a character.
        let Some(between) = text.get(copied..insert_at) else {
            return Err(file
                .error_at(
                    tag_offset,
                    "the XML reader lost its place in this file".to_string(),
                )
                .help("check the file for stray byte-order marks or control characters"));
        };
        out.push_str(between);
        out.push_str(" _at=\"");
        out.push_str(&tag_offset.to_string());
        out.push('"');
        copied = insert_at;
    }
    out.push_str(&text[copied..]);
    Ok((out, root))
}

/// The offset of the tag the reader has just read: its position before `read_event()` can sit
/// on whitespace before the tag, so step to the '<'.
fn tag_start(text: &str, offset: usize) -> usize {
    text.get(offset..)
        .and_then(|t| t.find('<'))
        .map_or(offset, |i| offset + i)
}

/// Every element and attribute name with where it is: read again only when serde reports an
/// error, to point at the line that caused it.
fn name_sites(file: &SourceFile) -> Vec<NameSite> {
    let mut reader = Reader::from_str(&file.text);
    let mut sites = Vec::new();
    let mut open: Vec<String> = Vec::new();
    loop {
        let offset = reader.buffer_position() as usize;
        let (start, push) = match reader.read_event() {
            Ok(Event::Start(s)) => (s, true),
            Ok(Event::Empty(s)) => (s, false),
            Ok(Event::End(_)) => {
                open.pop();
                continue;
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => continue,
        };
        let tag_offset = tag_start(&file.text, offset);
        let parent = open.last().cloned().unwrap_or_default();
        if let Ok(name) = record_sites(file, &start, tag_offset, &parent, &mut sites) {
            if push {
                open.push(name);
            }
        }
    }
    sites
}

/// Records an element's name and its attributes' names, refusing the reserved `_at`.
fn record_sites(
    file: &SourceFile,
    start: &BytesStart<'_>,
    offset: usize,
    parent: &str,
    sites: &mut Vec<NameSite>,
) -> Result<String, Diagnostic> {
    let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
    sites.push(NameSite {
        name: name.clone(),
        is_attribute: false,
        offset,
        owner: parent.to_string(),
    });
    for attr in start.attributes() {
        let attr = attr.map_err(|e| file.error_at(offset, format!("malformed attribute: {e}")))?;
        let key = String::from_utf8_lossy(attr.key.as_ref()).into_owned();
        if key == "_at" {
            return Err(file.error_at(offset, "the attribute `_at` is reserved".to_string()));
        }
        sites.push(NameSite {
            name: key,
            is_attribute: true,
            offset,
            owner: name.clone(),
        });
    }
    Ok(name)
}

/// Turns a serde error into a diagnostic with the best position we can find.
fn serde_error(file: &SourceFile, message: &str, sites: &[NameSite]) -> Diagnostic {
    // quick-xml says e.g. "unknown field `@colour`, expected one of ..." or
    // "missing field `@bits`"; the name between backticks tells us what to look for.
    let quoted = message
        .split('`')
        .nth(1)
        .map(str::to_string)
        .unwrap_or_default();
    if message.starts_with("unknown field") {
        let (is_attribute, name) = match quoted.strip_prefix('@') {
            Some(attr) => (true, attr),
            None => (false, quoted.as_str()),
        };
        // The expected list names attributes with `@` and elements without; offer the kind
        // that was wrong.
        let expected: Vec<String> = message
            .split_once("expected ")
            .map(|(_, rest)| rest)
            .unwrap_or_default()
            .split(", ")
            .map(|s| {
                s.trim()
                    .trim_start_matches("one of ")
                    .trim_matches('`')
                    .to_string()
            })
            .filter(|s| s != "@_at" && !s.is_empty() && s.starts_with('@') == is_attribute)
            .map(|s| format!("`{}`", s.trim_start_matches('@')))
            .collect();
        let site = sites
            .iter()
            .find(|s| s.is_attribute == is_attribute && s.name == name);
        let offset = site.map_or(0, |s| s.offset);
        let owner = site.map(|s| s.owner.as_str()).unwrap_or_default();
        let (what, place) = if is_attribute {
            ("attribute", format!("`{name}` on <{owner}>"))
        } else {
            ("element", format!("<{name}> inside <{owner}>"))
        };
        let help = if expected.is_empty() {
            format!("<{owner}> takes no {what}s here; see spec/README.md")
        } else {
            format!(
                "<{owner}> takes {what}s {}; see spec/README.md",
                expected.join(", ")
            )
        };
        return file
            .error_at(offset, format!("unknown {what} {place}"))
            .help(help);
    }
    if message.starts_with("missing field") {
        let name = quoted.trim_start_matches('@');
        return file
            .error_at(0, format!("a required element or attribute `{name}` is missing"))
            .help("see spec/README.md for what each element requires; xmllint --schema spec/schema.xsd shows the element");
    }
    file.error_at(
        0,
        format!("the file does not match the spec format: {message}"),
    )
    .help("check it against spec/schema.xsd with xmllint")
}
