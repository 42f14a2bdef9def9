//! Stage 2's output: the validated register model every emitter reads.
//!
//! Everything here has been checked (see `validate`): numbers are parsed, fields tile their
//! register exactly, references resolve, and addresses are expanded to one per instance and
//! index. Emitters never need to re-check anything. The PMU structure (roles, counters,
//! routes) is in [`pmu`].

pub mod formula;
mod json;
pub mod metric;
pub mod pmu;
pub mod soc;
pub mod sysreg;
pub mod vocab;

use serde::Serialize;
use vocab::{vocabulary, Vocabulary};

/// Every vocabulary, each once.
pub const VOCABULARIES: [&Vocabulary; 7] = [
    &Vendor::VOCABULARY,
    &Space::VOCABULARY,
    &Access::VOCABULARY,
    &pmu::Role::VOCABULARY,
    &pmu::Scope::VOCABULARY,
    &pmu::CounterKind::VOCABULARY,
    &pmu::OverflowSeen::VOCABULARY,
];

/// The whole specification.
#[derive(Debug, Clone, Serialize)]
pub struct Spec {
    /// Processors in `processors.xml` order.
    pub processors: Vec<Processor>,
    /// Public sources cited for facts the Intel documents do not state.
    #[serde(rename = "sources")]
    pub public_sources: Vec<PublicSource>,
    /// SoCs, each the processors whose PMUs it has (`<soc>`).
    pub socs: Vec<soc::Soc>,
}

/// A public source (kernel driver, likwid, PCM).
#[derive(Debug, Clone, Serialize)]
pub struct PublicSource {
    /// Identifier used in `source="..."`.
    pub id: String,
    /// Human-readable title.
    pub title: String,
}

/// One processor family and its units.
#[derive(Debug, Clone, Serialize)]
pub struct Processor {
    /// Identifier (`xeon-7500`).
    pub id: String,
    /// Rust module name (`xeon_7500`).
    pub module: String,
    /// Full name.
    pub name: String,
    /// Intel documents its tables come from.
    pub documents: Vec<Document>,
    /// How software recognises the processor, where the spec says.
    #[serde(skip)]
    pub identity: Option<Identity>,
    /// How software recognises an Arm core (MIDR_EL1), where the spec says.
    #[serde(skip)]
    pub midr: Option<Midr>,
    /// Units, in file-path order.
    #[serde(flatten, serialize_with = "json::global_and_units")]
    pub units: Vec<Unit>,
    /// The processor whose units are this one's core PMU (`processors.xml`'s `core-pmu`):
    /// the architectural PMU for every Intel processor here.
    #[serde(skip)]
    pub core_pmu: Option<String>,
    /// The processor whose units this one takes (`processors.xml`'s `units-from`): its
    /// `units` are copies of that processor's, with this processor's own events. The Rust
    /// emitter re-exports that processor's register types instead of writing them again.
    #[serde(skip)]
    pub units_from: Option<ProcessorRef>,
    /// This processor's own events for a unit of its core PMU (`<proc>/events/core.xml`),
    /// if it has an events file for one.
    pub core_events: Option<CoreEvents>,
    /// Derived metrics (`<proc>/metrics/*.xml`), in file order.
    pub metrics: Vec<metric::Metric>,
    /// How many top-down shares the core's IA32_PERF_METRICS reports (`processors.xml`'s
    /// `topdown-metrics`: 4 on Ice Lake, 8 from Sapphire Rapids), 0 when the core has neither
    /// that register nor fixed counter 3 (TOPDOWN.SLOTS).
    #[serde(skip)]
    pub topdown_metrics: u8,
    /// The core's fixed counters, bit i for IA32_FIXED_CTRi (`processors.xml`'s
    /// `fixed-counters`; by default 0 to 2, and 3 with `topdown-metrics`), 0 without a core PMU.
    #[serde(skip)]
    pub fixed_counters: u8,
    /// Where the part's discovery tables are (`processors.xml`'s `<discovery-domain>`s), in
    /// file order; empty for a part with one table found through the generic device.
    #[serde(serialize_with = "json::discovery_domains")]
    pub discovery_domains: Vec<DiscoveryDomain>,
    /// The discovery types a public source names (`<discovery-types>`): (type, name), and
    /// the source.
    #[serde(skip)]
    pub discovery_types: Option<(Vec<(u16, String)>, String)>,
}

/// How a discovery domain's table is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainPlace {
    /// Through the DVSEC capability of every PCI device (vendor 8086) with this device id.
    PciDevice(u16),
    /// At the physical address this MSR holds.
    Msr(u32),
}

/// One discovery domain of a processor (`<discovery-domain>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryDomain {
    /// Its id (`imh`).
    pub id: String,
    /// How its table is found.
    pub place: DomainPlace,
    /// One table per die (`per="die"`) rather than per socket.
    pub per_die: bool,
    /// The types its tables list that software ignores: (type, name).
    pub ignored: Vec<(u16, String)>,
    /// The 32-bit value software writes to the global control of each of its tables (the
    /// address the table's global state gives) before it uses the table's units
    /// (`global-init`: Diamond Rapids' CBB tables power up frozen); `None`: no such write.
    pub global_init: Option<u32>,
    /// The public source.
    pub source: String,
}

/// Another processor, named by its id and its Rust module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorRef {
    /// Its id (`skylake-sp`).
    pub id: String,
    /// Its Rust module (`skylake_sp`).
    pub module: String,
}

/// A processor's events for a unit of another processor, its core PMU: Intel lists each
/// processor's core events, all counted by the architectural counter controls.
#[derive(Debug, Clone, Serialize)]
pub struct CoreEvents {
    /// The processor whose unit counts them (`architectural`).
    pub processor: String,
    /// That unit's name (`CORE`).
    pub unit: String,
    /// The events, in file order.
    pub events: Vec<Event>,
}

/// An Arm core's identity: the implementer and primary part number its MIDR_EL1 carries
/// (bits 31:24 and 15:4), the product names, and the public source of the numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Midr {
    /// MIDR_EL1.Implementer (0x41: Arm Limited).
    pub implementer: u8,
    /// MIDR_EL1.PartNum (0xD4F: Neoverse V2).
    pub part: u16,
    /// Product and code names, most common first.
    pub codenames: Vec<String>,
    /// The public source of the numbers.
    pub source: String,
}

/// A processor's identity: its CPU vendor and CPUID signatures, its code names and the name
/// of Intel's perfmon event lists for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The CPU vendor (CPUID leaf 0's string).
    pub vendor: Vendor,
    /// CPUID display family (`0x6`, `0x19`).
    pub family: u32,
    /// CPUID display models, as ranges (lowest, highest), ascending and disjoint: one range of
    /// one model (`0x3E` for 06_3EH) for most Intel parts, several for an AMD family's parts.
    pub models: Vec<(u32, u32)>,
    /// The CPUID steppings this processor has, lowest and highest, when another processor
    /// shares its family and model (`0-4` for Skylake-SP, `5-15` for Cascade Lake); `None`:
    /// every stepping.
    pub steppings: Option<(u32, u32)>,
    /// The vendor's code names, most common first (`Ivy Bridge-EP`, `IvyTown`).
    pub codenames: Vec<String>,
    /// The prefix of Intel's perfmon file names for it (`ivytown`), if it has event lists.
    pub perfmon: Option<String>,
    /// The public source of the CPUID signature.
    pub source: String,
}

vocabulary! {
    /// A CPU vendor, spelt as CPUID leaf 0 returns it (and `/proc/cpuinfo`'s `vendor_id`).
    pub enum Vendor {
        /// Intel.
        Intel = "GenuineIntel",
        /// AMD.
        Amd = "AuthenticAMD",
    }
}

/// An Intel document.
#[derive(Debug, Clone, Serialize)]
pub struct Document {
    /// Identifier used in `document="..."`.
    pub id: String,
    /// Title.
    pub title: String,
    /// Intel reference (order) number.
    pub reference: String,
}

/// Where something is in a spec file, for errors found after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The file (shared by everything in it).
    pub path: std::sync::Arc<std::path::Path>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` of `file`, whose path is `path`.
    pub fn of(
        file: &crate::diagnostics::SourceFile,
        path: &std::sync::Arc<std::path::Path>,
        offset: usize,
    ) -> Self {
        let (line, column) = file.position(offset);
        Self {
            path: std::sync::Arc::clone(path),
            line,
            column,
        }
    }
}

/// A unit (box) of a processor.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Short name as the guide uses it (`W`, `HA`).
    pub name: String,
    /// Rust module name (`wbox`).
    pub module: String,
    /// One-line title.
    pub title: String,
    /// Our description.
    pub description: String,
    /// Instances (`S0`, `S1`).
    pub instances: Vec<Instance>,
    /// Registers in file order.
    pub registers: Vec<Register>,
    /// Spec file it came from, relative to the spec directory (`xeon-7500/wbox.xml`).
    pub file: String,
    /// Where the unit element is.
    pub at: Position,
    /// The unit's events (from `<processor>/events/<module>.xml`), in file order.
    pub events: Vec<Event>,
    /// The unit's PMU structure (`<pmu>`), if it declares one.
    pub pmu: Option<pmu::Pmu>,
    /// Where its memory-mapped registers are (`<mmio-window>`), if it has any.
    pub mmio_window: Option<MmioWindow>,
    /// The events a mesh node offers its crosspoint's DTM (`<node-events>`), if any.
    pub node_events: Option<NodeEvents>,
}

/// Where a mesh node's events reach its crosspoint's DTM: what a local counter's
/// input select names (Linux's `CMN__PMEVCNT0_INPUT_SEL_DEV` and `_XP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeInput {
    /// A device node on a port: input 0x10 + (port << 4) + (device << 2) + slot.
    Device,
    /// The crosspoint itself: input 0x04 + slot.
    Crosspoint,
}

/// `<node-events>`: one node type's events, each an event id written into one of the slots
/// of the node's event select and counted by the crosspoint DTM local counter whose input
/// select names that slot.
#[derive(Debug, Clone, Serialize)]
pub struct NodeEvents {
    /// `NODE_INFO.node_type` of the nodes that offer them (the kernel's `type`).
    pub node_type: u16,
    /// The event select register's name, in this unit.
    pub select: String,
    /// The select's slot fields, slot n feeding the DTM's local counter n.
    pub slots: Vec<String>,
    /// How the DTM's input select reaches the node.
    pub input: NodeInput,
    /// The kernel PMU name (`arm_cmn_{i}`) and its driver.
    pub pmu: String,
    /// The perf driver whose formats encode the events.
    #[serde(serialize_with = "json::driver_id")]
    pub driver: std::sync::Arc<pmu::PerfDriver>,
    /// Public source id.
    pub source: String,
    /// The events, in file order.
    pub events: Vec<NodeEvent>,
}

/// One node event: its name (the kernel's), its event id, and the filter it sets.
#[derive(Debug, Clone, Serialize)]
pub struct NodeEvent {
    /// The kernel's name (`hnf_cache_miss`).
    pub name: String,
    /// The id written into a slot (the kernel's `eventid`).
    pub id: u16,
    /// The select's filter field the event's `occupid` goes into, if it takes one.
    pub filter: Option<String>,
    /// The filter's value (the kernel's `occupid`); 0 without a filter.
    pub occupid: u8,
}

/// An event a unit's counters can count.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// Intel's name (`UNC_H_REQUESTS.READS`).
    pub name: String,
    /// The Rust constant name (`REQUESTS_READS`).
    pub ident: String,
    /// Event select.
    pub code: u16,
    /// Unit mask.
    pub umask: u16,
    /// Needs the event-select extension bit (`ev_sel_ext`).
    pub ext_sel: bool,
    /// Bit n set: counter n may count it.
    #[serde(serialize_with = "json::counter_list")]
    pub counters: u32,
    /// The counters that may count it when its core runs one hardware thread (Intel's
    /// `CounterHTOff`): a superset of `counters` whose extra counters the part has only
    /// then (CPUID reports them). 0: the same as `counters`.
    #[serde(serialize_with = "json::counter_list_or_none")]
    pub counters_ht_off: u32,
    /// Filter fields it uses, as Intel's list names them (empty: none).
    pub filters: String,
    /// Public source id.
    pub source: String,
    /// What the event sets beyond its select and umask: the control's threshold (a core
    /// event's counter mask), invert, edge and any-thread roles. All zero for most events.
    #[serde(flatten)]
    pub settings: EventSettings,
    /// The uncore masks it sets besides its select and umask. All zero for most events.
    #[serde(flatten)]
    pub masks: EventMasks,
    /// From a list its vendor calls experimental (Intel's `*_uncore_experimental.json`):
    /// the generated crate builds it only with the `experimental-events` feature, and tools
    /// say so when it is used.
    pub experimental: bool,
    /// The auxiliary register it needs programmed besides its control (the offcore
    /// response, load-latency or front-end MSR of a core event), if any.
    #[serde(rename = "aux_msr")]
    pub aux: Option<AuxMsr>,
}

/// An auxiliary register an event needs, and the value it must hold: a register of the
/// event's unit outside its counter controls (Intel's `MSRIndex` and `MSRValue`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuxMsr {
    /// The register's concrete name (`MSR_OFFCORE_RSP_0`).
    pub register: String,
    /// Its MSR number.
    pub address: u32,
    /// The value the event needs in it; it sets no reserved bit.
    pub value: u64,
}

/// The values an uncore event puts in its control's mask fields, by the role of the field
/// that takes each (Intel's UMaskExt, PortMask and FCMask): without them the event counts
/// something else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EventMasks {
    /// The `umask-ext` role's value (0: none).
    pub umask_ext: u32,
    /// The `port-mask` role's value (0: none).
    pub port_mask: u16,
    /// The `fc-mask` role's value (0: none).
    pub fc_mask: u8,
}

impl EventMasks {
    /// Whether the event sets no mask.
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }

    /// Each mask with the role of the field that takes it.
    pub fn by_role(&self) -> [(pmu::Role, u64); 3] {
        [
            (pmu::Role::UmaskExt, u64::from(self.umask_ext)),
            (pmu::Role::PortMask, u64::from(self.port_mask)),
            (pmu::Role::FcMask, u64::from(self.fc_mask)),
        ]
    }
}

/// The parts of a counter control an event sets besides its select, umask and extension
/// bit, by the role of the field that takes each (Intel's CounterMask, Invert, EdgeDetect
/// and AnyThread).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EventSettings {
    /// The `threshold` role's value (0: none).
    pub threshold: u8,
    /// The `invert` role.
    pub invert: bool,
    /// The `edge` role.
    pub edge: bool,
    /// The `any-thread` role.
    pub any_thread: bool,
}

impl EventSettings {
    /// Whether the event sets nothing beyond its select and umask.
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }
}

/// One instance of a unit.
#[derive(Debug, Clone, Serialize)]
pub struct Instance {
    /// Name (`S0`).
    pub name: String,
    /// What `{i}` becomes in register names.
    pub key: String,
}

vocabulary! {
    /// Address space of a register.
    pub enum Space {
        /// Model-specific register.
        Msr = "msr",
        /// PCI configuration space.
        Pci = "pci",
        /// Memory-mapped, in a window whose physical base PCI configuration registers give.
        Mmio = "mmio",
        /// A byte offset inside a structure the runtime locates first (the uncore discovery
        /// capability in PCI configuration space, a discovery table in memory).
        Table = "table",
        /// An Arm system register, addressed by its encoding (op0, op1, CRn, CRm, op2) and
        /// read and written by `mrs`/`msr` on the CPU whose register it is.
        SysReg = "sysreg",
    }
}

/// A register layout with every address that uses it.
#[derive(Debug, Clone)]
pub struct Register {
    /// Name template with `{i}`/`{n}` placeholders.
    pub name: String,
    /// Rust type name of the layout.
    pub type_name: String,
    /// 32 or 64.
    pub width: u32,
    /// Address space.
    pub space: Space,
    /// Array length.
    pub count: u32,
    /// CPUID bits that say how many of `count` exist, for architectural arrays.
    pub count_cpuid: Option<String>,
    /// Reset value of the whole register (assembled from the fields).
    pub reset: u64,
    /// Where the layout comes from.
    pub sources: Vec<SourceRef>,
    /// Our description.
    pub description: String,
    /// Addresses, one per instance and index, or why none is known.
    pub addresses: Addresses,
    /// Fields, most significant first, tiling the register exactly.
    pub fields: Vec<Field>,
    /// Errata and source conflicts, with how they were resolved.
    pub notes: Vec<Note>,
    /// Where the register element is.
    pub at: Position,
}

impl Register {
    /// The counter control's unit-mask field: the field with the `umask` role (the AMD UMC's
    /// `rd_wr_mask` plays it), or, in a register outside the PMU structure, which carries
    /// no roles, the field named `umask`.
    pub fn umask_field(&self) -> Option<&Field> {
        let by_role = self
            .fields
            .iter()
            .find(|f| f.role.as_ref().is_some_and(|r| r.role == pmu::Role::Umask));
        by_role.or_else(|| self.fields.iter().find(|f| f.name.as_ref() == "umask"))
    }

    /// Bits a safe write must leave zero.
    pub fn reserved_mask(&self) -> u64 {
        self.mask_where(Access::is_reserved)
    }

    /// Bits that read zero and ignore writes.
    pub fn ignored_mask(&self) -> u64 {
        self.mask_where(|a| a == Access::Ig)
    }

    /// Bits software may write.
    pub fn writable_mask(&self) -> u64 {
        self.mask_where(Access::is_writable)
    }

    fn mask_where(&self, keep: impl Fn(Access) -> bool) -> u64 {
        self.fields
            .iter()
            .filter(|f| keep(f.access))
            .fold(0, |m, f| m | f.mask())
    }

    /// The register name without placeholders (`S_MSR_PMON_SUMMARY`), used for
    /// constants that cover every instance.
    pub fn generic_name(&self) -> String {
        strip_placeholders(&self.name)
    }

    /// The concrete name of an address of this register in `unit`.
    pub fn address_name(&self, unit: &Unit, a: &Address) -> String {
        self.concrete_name(&unit.instances[a.instance], a.index)
    }

    /// The name of one instance and index (`S1_MSR_PMON_SUMMARY`, `W_MSR_PMON_EVT_SEL2`).
    pub fn concrete_name(&self, instance: &Instance, index: u32) -> String {
        self.name
            .replace("{i}", &instance.key)
            .replace("{n}", &index.to_string())
    }

    /// The name of one instance with the index placeholder dropped: the name of the constant
    /// (or array of constants) for that instance.
    pub fn instance_name(&self, instance: &Instance) -> String {
        strip_placeholders(&self.name.replace("{i}", &instance.key))
    }
}

/// Removes `{i}`/`{n}` and tidies the underscores they leave behind.
pub fn strip_placeholders(name: &str) -> String {
    let bare = name.replace("{i}", "").replace("{n}", "");
    let parts: Vec<&str> = bare.split('_').filter(|p| !p.is_empty()).collect();
    parts.join("_")
}

/// Where a register's layout is documented.
#[derive(Debug, Clone)]
pub struct SourceRef {
    /// An Intel document or a public source (shared by every register that cites it).
    pub origin: std::sync::Arc<SourceOrigin>,
    /// Table number.
    pub table: Option<String>,
    /// Page.
    pub page: Option<String>,
    /// Section.
    pub section: Option<String>,
}

/// What a source reference points to.
#[derive(Debug, Clone)]
pub enum SourceOrigin {
    /// An Intel document (`processors.xml` `document`).
    Document {
        /// Document id.
        id: String,
        /// Title.
        title: String,
        /// Reference number.
        reference: String,
    },
    /// A public source (`processors.xml` `source`).
    Public {
        /// Source id.
        id: String,
        /// Title.
        title: String,
    },
}

impl SourceRef {
    /// One line for documentation: "Title (ref), Table 2-98, p. 2-127".
    pub fn citation(&self) -> String {
        let mut s = match &*self.origin {
            SourceOrigin::Document {
                title, reference, ..
            } => format!("{title} ({reference})"),
            SourceOrigin::Public { title, .. } => title.clone(),
        };
        if let Some(t) = &self.table {
            s.push_str(&format!(", Table {t}"));
        }
        if let Some(sec) = &self.section {
            s.push_str(&format!(", section {sec}"));
        }
        if let Some(p) = &self.page {
            s.push_str(&format!(", p. {p}"));
        }
        s
    }
}

/// Addresses of a register.
#[derive(Debug, Clone)]
pub enum Addresses {
    /// One per instance and index, in instance order then index order.
    Known(Vec<Address>),
    /// No source gives the address.
    Unknown {
        /// Why, in the spec's words.
        reason: String,
    },
    /// The part's uncore discovery table places it (`<from-table>`): no fixed address, a place
    /// relative to what the table's entry for the box gives.
    FromTable(TablePlacement),
}

/// Which address of a discovery table entry a table-placed register starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TablePlace {
    /// The entry's box control address.
    BoxControl,
    /// The box control plus the entry's counter-control offset.
    CounterControl,
    /// The box control plus the entry's counter offset.
    Counter,
}

impl TablePlace {
    /// Every place, with its spelling in the spec.
    pub const ALL: [(&'static str, TablePlace); 3] = [
        ("box-control", TablePlace::BoxControl),
        ("counter-control", TablePlace::CounterControl),
        ("counter", TablePlace::Counter),
    ];

    /// The spec's spelling.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("", |(n, _)| n)
    }
}

/// Where the discovery table places a register (`<from-table>`): element n of the register is
/// at `place` plus `n * stride` (registers for an MSR, bytes otherwise).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TablePlacement {
    /// Which of the entry's addresses element 0 is at.
    pub place: TablePlace,
    /// The distance between elements of an array (0 for a single register).
    pub stride: u32,
    /// Public source id of the placement.
    pub source: String,
}

/// The address of one instance and index of a register.
#[derive(Debug, Clone)]
pub struct Address {
    /// Position of the instance in the unit's instance list.
    pub instance: usize,
    /// Array index.
    pub index: u32,
    /// Where it is.
    pub location: Location,
    /// Public source id of the address (shared by every element of one address element).
    pub source: std::sync::Arc<str>,
}

/// A location in an address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Location {
    /// MSR number.
    Msr(u32),
    /// PCI config space register.
    Pci {
        /// Vendor-8086 device id.
        device_id: u16,
        /// Device (slot) number on the uncore bus.
        device: u8,
        /// Function number.
        function: u8,
        /// Config-space offset.
        offset: u16,
    },
    /// Byte offset inside a structure found at run time (space `table`).
    Table(u32),
    /// A memory-mapped register: at `offset` in the window of memory controller `controller`,
    /// channel `channel` (the unit's [`MmioWindow`] says where that window is).
    Mmio {
        /// Which controller's base the window is built from.
        controller: u8,
        /// Which channel window of that controller.
        channel: u8,
        /// Byte offset in the channel's window.
        offset: u32,
    },
    /// An Arm system register's encoding (space `sysreg`).
    SysReg(sysreg::Encoding),
}

/// Where a unit's memory-mapped registers are: a window per controller and channel, whose
/// physical base is assembled from PCI configuration registers of one device.
///
/// The window of (controller c, channel h) starts at `base(c) + offset + h * channel_stride`
/// and is `size` bytes long; `base(c)` is the OR of every part's bits, each read from the
/// dword at `part.offset + c * part.controller_stride`, shifted into place.
#[derive(Debug, Clone, Serialize)]
pub struct MmioWindow {
    /// Vendor-8086 device id of the device whose config registers hold the base.
    pub device_id: u16,
    /// Its device (slot) number on the socket's uncore bus.
    pub device: u8,
    /// Its function.
    pub function: u8,
    /// The pieces of the base, in file order.
    pub parts: Vec<MmioBasePart>,
    /// Bytes from the base to channel 0's window.
    pub offset: u64,
    /// Bytes between one channel's window and the next.
    pub channel_stride: u64,
    /// Bytes of one window (what is mapped).
    pub size: u64,
    /// How many controllers (bases) there are.
    pub controllers: u8,
    /// How many channel windows each controller has.
    pub channels: u8,
    /// Public source id of the assembly.
    pub source: String,
    /// Our description.
    pub description: String,
}

/// One piece of an MMIO base: bits `msb:lsb` of the config dword at `offset` (plus
/// `controller_stride` per controller), moved to start at bit `shift` of the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MmioBasePart {
    /// Config-space offset of the dword for controller 0.
    pub offset: u16,
    /// Bytes between one controller's dword and the next (0: one dword for all).
    pub controller_stride: u16,
    /// Lowest bit taken from the dword.
    pub lsb: u32,
    /// Highest bit taken.
    pub msb: u32,
    /// Where bit `lsb` lands in the base.
    pub shift: u32,
}

impl MmioBasePart {
    /// The bits this part sets in the base.
    pub fn base_mask(&self) -> u64 {
        let width = self.msb - self.lsb + 1;
        let ones = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        ones << self.shift
    }
}

impl MmioWindow {
    /// Bytes from controller `c`'s base to a register at `offset` in channel `h`'s window.
    pub fn offset_from_base(&self, channel: u8, offset: u32) -> u64 {
        self.offset + u64::from(channel) * self.channel_stride + u64::from(offset)
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Msr(a) => write!(f, "MSR {a:#X}"),
            Location::Pci {
                device_id,
                device,
                function,
                offset,
            } => write!(
                f,
                "PCI {device_id:#06X} (dev {device} fn {function}) offset {offset:#X}"
            ),
            Location::Mmio {
                controller,
                channel,
                offset,
            } => write!(
                f,
                "MMIO controller {controller} channel {channel} offset {offset:#X}"
            ),
            Location::Table(o) => write!(f, "table offset {o:#X}"),
            Location::SysReg(e) => write!(f, "system register {}", e.generic_name()),
        }
    }
}

vocabulary! {
    /// How software may access a field. See spec/README.md for how the guides' attributes map
    /// here.
    pub enum Access {
        /// Read/write.
        Rw = "rw",
        /// Read/write; hardware also changes it.
        RwV = "rw-v",
        /// Read only.
        Ro = "ro",
        /// Read only; hardware changes it.
        RoV = "ro-v",
        /// Write only.
        Wo = "wo",
        /// Write 1 to clear.
        W1c = "w1c",
        /// Status bits hardware sets: reads show them, writing 1 clears them.
        Rw1c = "rw1c",
        /// Reserved: software must write zero.
        Rsv = "rsv",
        /// Reserved value (E5 `RV` without a must-write-zero statement): reads undefined;
        /// written as zero.
        Rv = "rv",
        /// Reads zero; writes ignored.
        Ig = "ig",
    }
}

impl Access {
    /// Software must keep these bits zero.
    pub fn is_reserved(self) -> bool {
        matches!(self, Access::Rsv | Access::Rv)
    }

    /// Any of the reserved kinds, including ignored bits: no accessors, name may repeat.
    pub fn is_placeholder(self) -> bool {
        matches!(self, Access::Rsv | Access::Rv | Access::Ig)
    }

    /// Software may write the field.
    pub fn is_writable(self) -> bool {
        matches!(
            self,
            Access::Rw | Access::RwV | Access::Wo | Access::W1c | Access::Rw1c
        )
    }

    /// Reading the field tells something.
    pub fn is_readable(self) -> bool {
        matches!(
            self,
            Access::Rw | Access::RwV | Access::Ro | Access::RoV | Access::Rw1c
        )
    }
}

/// A bit field.
#[derive(Debug, Clone)]
pub struct Field {
    /// Name as the guide spells it (may hold `{n}` for bit arrays). Interned: the same names
    /// recur across registers, and a large spec has hundreds of thousands of fields.
    pub name: std::sync::Arc<str>,
    /// Least significant bit of the field's lowest range (where the value's bit 0 lies).
    pub lsb: u32,
    /// Most significant bit of the field's lowest range: for a field of one range, its top bit.
    pub msb: u32,
    /// A field made of several bit ranges (`bits="35:32,7:0"`): every range, most
    /// significant first, the last being `msb:lsb`; the value is their concatenation in that
    /// order. `None` for a field of one range (boxed: rare, and fields are many).
    pub split: Option<Box<[BitRange]>>,
    /// Access kind.
    pub access: Access,
    /// Reset value of the field (its value, not in register position).
    pub reset: u64,
    /// Our description.
    pub description: std::sync::Arc<str>,
    /// Enumerated meanings.
    pub values: Vec<EnumValue>,
    /// For CPUID-sized bit arrays: element width and the CPUID bits giving the count (boxed:
    /// rare, and the model of a large spec holds hundreds of thousands of fields).
    pub repeat: Option<Box<Repeat>>,
    /// Public source of this field, when not the register's first source.
    pub source: Option<std::sync::Arc<str>>,
    /// Its role in the PMU structure, if any (boxed: most fields have none).
    pub role: Option<Box<pmu::FieldRole>>,
    /// What a counter control's field holds while counting when the event leaves it
    /// (`count-default`); `None`: its reset value.
    pub count_default: Option<CountDefault>,
}

/// A counter control field's value while counting when the event leaves it
/// (`count-default="all-ones"` or a number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountDefault {
    /// Every bit set: the field is a mask of the sources the counter observes (threads,
    /// slices), and the event observes them all; a zero mask observes none.
    AllOnes,
    /// This value (the field's own, not in register position).
    Value(u64),
}

impl CountDefault {
    /// The value a field of `width` bits takes.
    pub fn value(self, width: u32) -> u64 {
        match self {
            CountDefault::AllOnes => low_mask(width),
            CountDefault::Value(v) => v,
        }
    }

    /// As the spec writes it: `all-ones` or `0x1`.
    pub fn text(self) -> String {
        match self {
            CountDefault::AllOnes => "all-ones".into(),
            CountDefault::Value(v) => format!("{v:#x}"),
        }
    }
}

impl Field {
    /// The field's bit ranges, most significant first: one for most fields.
    pub fn ranges(&self) -> Vec<BitRange> {
        match &self.split {
            Some(ranges) => ranges.to_vec(),
            None => vec![BitRange {
                msb: self.msb,
                lsb: self.lsb,
            }],
        }
    }

    /// Width in bits (of the value: every range together).
    pub fn width(&self) -> u32 {
        match &self.split {
            Some(ranges) => ranges.iter().map(BitRange::width).sum(),
            None => self.msb - self.lsb + 1,
        }
    }

    /// The field's bits in register position (every range).
    pub fn mask(&self) -> u64 {
        self.ranges().iter().fold(0, |m, r| m | r.mask())
    }

    /// Largest value the field holds.
    pub fn max(&self) -> u64 {
        low_mask(self.width())
    }

    /// Whether the field is made of more than one bit range.
    pub fn is_split(&self) -> bool {
        self.split.is_some()
    }

    /// `value` (the field's value) placed in register position, range by range.
    pub fn place(&self, value: u64) -> u64 {
        let mut shift = 0;
        let mut raw = 0;
        for r in self.ranges().iter().rev() {
            raw |= ((value >> shift) & low_mask(r.width())) << r.lsb;
            shift += r.width();
        }
        raw
    }

    /// "bits 7:0", "bit 22" or "bits 35:32,7:0".
    pub fn bits_phrase(&self) -> String {
        if self.msb == self.lsb && !self.is_split() {
            format!("bit {}", self.lsb)
        } else {
            format!("bits {}", self.bits_text())
        }
    }

    /// "7:0", "22" or "35:32,7:0", as the spec writes it.
    pub fn bits_text(&self) -> String {
        let texts: Vec<String> = self.ranges().iter().map(BitRange::text).collect();
        texts.join(",")
    }

    /// The description to show: the spec's, or for a reserved field without one, what its
    /// access kind means.
    pub fn shown_description(&self) -> &str {
        match (&*self.description, self.access) {
            ("", Access::Ig) => "Reads zero; writes ignored.",
            ("", _) => "Reserved; write zero.",
            (d, _) => d,
        }
    }

    /// The values cover every possible value of the field, so it gets a Rust enum.
    pub fn has_enum(&self) -> bool {
        self.repeat.is_none()
            && !self.values.is_empty()
            && self.width() <= 8
            && self.values.len() as u64 == 1u64 << self.width()
    }
}

/// One contiguous range of a field's bits, in register position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BitRange {
    /// Most significant bit.
    pub msb: u32,
    /// Least significant bit.
    pub lsb: u32,
}

impl BitRange {
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.msb - self.lsb + 1
    }

    /// The range's bits in register position.
    pub fn mask(&self) -> u64 {
        low_mask(self.width()) << self.lsb
    }

    /// "7:0" or "22".
    pub fn text(&self) -> String {
        if self.msb == self.lsb {
            self.lsb.to_string()
        } else {
            format!("{}:{}", self.msb, self.lsb)
        }
    }
}

/// A bit array whose length depends on CPUID.
#[derive(Debug, Clone, Serialize)]
pub struct Repeat {
    /// Bits per element.
    pub element_width: u32,
    /// Number of elements the bit range holds at most.
    pub max_count: u32,
    /// CPUID bits giving the implemented count (`0AH.EAX[15:8]`).
    pub count_cpuid: Option<String>,
}

/// A named value of a field.
#[derive(Debug, Clone, Serialize)]
pub struct EnumValue {
    /// The value.
    pub value: u64,
    /// Name (becomes a Rust variant).
    pub name: String,
    /// Meaning.
    pub description: String,
}

/// A recorded erratum, source conflict or remark.
#[derive(Debug, Clone, Serialize)]
pub struct Note {
    /// `erratum`, `source-conflict` or `info`.
    pub kind: String,
    /// One line.
    pub title: String,
    /// What was decided and why.
    pub text: String,
}

/// The `width` lowest bits set.
pub fn low_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}
