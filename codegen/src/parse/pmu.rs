//! Raw structs of a unit's `<pmu>` element (spec/README.md, "PMU structure"), one to one with
//! the schema. Names of registers and fields stay strings here; the validator resolves them.

use serde::Deserialize;

use super::RawNote;

/// `<pmu>`: a unit's PMU structure.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPmu {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@scope")]
    pub scope: String,
    #[serde(rename = "@discovery-type")]
    pub discovery_type: Option<String>,
    #[serde(default)]
    pub control: Vec<RawRegisterName>,
    #[serde(default)]
    pub status: Vec<RawRegisterName>,
    #[serde(default, rename = "overflow-clear")]
    pub overflow_clear: Vec<RawRegisterName>,
    #[serde(default)]
    pub counters: Vec<RawCounters>,
    #[serde(default)]
    pub counter: Vec<RawCounter>,
    #[serde(default)]
    pub filter: Vec<RawFilter>,
    #[serde(default)]
    pub route: Vec<RawRoute>,
    pub global: Option<RawGlobal>,
    #[serde(default)]
    pub perf: Vec<RawPerf>,
    #[serde(default, rename = "box-count")]
    pub box_count: Option<RawBoxCount>,
    #[serde(default, rename = "socket-bus")]
    pub socket_bus: Option<RawSocketBus>,
    #[serde(default, rename = "stack-bus")]
    pub stack_bus: Option<RawStackBus>,
    #[serde(default, rename = "discovery-ignored")]
    pub discovery_ignored: Option<RawDiscoveryIgnored>,
    #[serde(default, rename = "discovery-count")]
    pub discovery_count: Option<RawDiscoveryCount>,
    #[serde(default, rename = "discovery-broken")]
    pub discovery_broken: Option<RawDiscoveryIgnored>,
    #[serde(default)]
    pub saturation: Option<RawSaturation>,
    #[serde(default, rename = "global-init")]
    pub global_init: Vec<RawGlobalInit>,
    #[serde(default, rename = "clock-event")]
    pub clock_event: Option<RawClockEvent>,
    #[serde(default)]
    pub note: Vec<RawNote>,
}

/// `<clock-event>`: the event (select and unit mask) that counts the unit's own clock, which
/// counts in every enabled interval of a box that works.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClockEvent {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@code")]
    pub code: String,
    #[serde(rename = "@umask")]
    pub umask: String,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<discovery-count>`: how many boxes of the unit the part has, where its discovery table
/// lists another number.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDiscoveryCount {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@boxes")]
    pub boxes: String,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(rename = "$text", default)]
    pub text: String,
}

/// `<saturation>`: the unit's counters stop at their top instead of wrapping; software
/// resets a counter whose bit `reset-at-bit` is set, which leaves that many usable bits.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSaturation {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@reset-at-bit")]
    pub reset_at_bit: String,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(rename = "$text", default)]
    pub text: String,
}

/// `<global-init>`: a field of one of the unit's registers that software writes before
/// counting (the part powers up with another value there, which stops every count).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGlobalInit {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@register")]
    pub register: String,
    #[serde(rename = "@field")]
    pub field: String,
    #[serde(rename = "@write")]
    pub write: String,
    #[serde(rename = "@power-on")]
    pub power_on: String,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(rename = "$text", default)]
    pub text: String,
}

/// `<discovery-ignored>`: the discovery table's entries of the unit's type are known to be
/// wrong; software trusts the spec's description of its boxes instead.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDiscoveryIgnored {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(rename = "$text", default)]
    pub text: String,
}

/// `<stack-bus>`: the register, read on each socket, whose bytes are the root PCI buses of
/// the unit's boxes (one I/O stack each), and its valid bit.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStackBus {
    #[serde(rename = "@_at")]
    pub at: usize,
    /// The concrete name of the register.
    #[serde(rename = "@register")]
    pub register: String,
    /// The field that says whether firmware has set the buses.
    #[serde(rename = "@valid")]
    pub valid: String,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(rename = "$text", default)]
    pub text: String,
}

/// `<socket-bus>`: how software learns which socket owns each PCI bus that holds uncore
/// devices (the node-id registers of the unit's PCI device).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSocketBus {
    #[serde(rename = "@_at")]
    pub at: usize,
    /// The concrete name of the register holding the bus's own node id, and its field.
    #[serde(rename = "@register")]
    pub register: String,
    #[serde(rename = "@field")]
    pub field: String,
    /// The concrete name of the node map: slot n (its n-th field from bit 0) holds the node
    /// id of package n.
    #[serde(rename = "@map")]
    pub map: String,
    /// `none` (every uncore device is on the bus of this device), `next-lower` or
    /// `next-higher`: which device-holding bus a bus without this device takes its socket
    /// from.
    #[serde(rename = "@other-buses")]
    pub other_buses: String,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(rename = "$text", default)]
    pub text: String,
}

/// `<box-count>`: how software learns how many boxes of the unit this part has.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBoxCount {
    #[serde(rename = "@_at")]
    pub at: usize,
    /// `set-bits`, `value`, `value-map`, `cpuid-set-bits`, `cores-per-socket`, `listed`,
    /// `devices` or `discovery`.
    #[serde(rename = "@count")]
    pub count: String,
    /// With `set-bits` and `value`: the concrete register name and the field whose set bits
    /// (or whose value) count.
    #[serde(rename = "@register")]
    pub register: Option<String>,
    #[serde(rename = "@field")]
    pub field: Option<String>,
    /// With `value-map`: `VALUE=BOXES` pairs, space-separated.
    #[serde(rename = "@map")]
    pub map: Option<String>,
    /// With `cpuid-set-bits`: the CPUID bits whose set bits are the boxes present
    /// (`80000022H.ECX[31:0]`).
    #[serde(rename = "@cpuid")]
    pub cpuid: Option<String>,
    /// With `cpuid-set-bits`, optionally: the CPUID bits holding the counters of every box
    /// present together, shared equally (`80000022H.EBX[21:16]`).
    #[serde(rename = "@counters-cpuid")]
    pub counters_cpuid: Option<String>,
    #[serde(rename = "@source")]
    pub source: String,
    #[serde(rename = "$text", default)]
    pub text: String,
}

/// `<perf>`: the Linux perf PMU that counts some counters of some boxes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPerf {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@pmu")]
    pub pmu: String,
    #[serde(rename = "@instances")]
    pub instances: Option<String>,
    #[serde(rename = "@counters")]
    pub counters: Option<String>,
    #[serde(rename = "@driver")]
    pub driver: String,
    #[serde(rename = "@source")]
    pub source: String,
}

/// `<control>`, `<status>`, `<overflow-clear>`: one box-level register.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRegisterName {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@register")]
    pub register: String,
}

/// `<counters>`: an array of counters, control array element n driving counter element n.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCounters {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@control")]
    pub control: Option<String>,
    #[serde(rename = "@counter")]
    pub counter: String,
    #[serde(rename = "@first")]
    pub first: Option<String>,
    #[serde(rename = "@kind")]
    pub kind: Option<String>,
    #[serde(rename = "@alias")]
    pub alias: Option<String>,
    #[serde(rename = "@width-cpuid")]
    pub width_cpuid: Option<String>,
    #[serde(rename = "@event")]
    pub event: Option<String>,
    /// How software sees an overflow (`status`, the default, or `msb-clear`).
    #[serde(rename = "@overflow")]
    pub overflow: Option<String>,
    #[serde(rename = "@overflow-source")]
    pub overflow_source: Option<String>,
}

/// `<counter>`: one counter with an explicit number.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCounter {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@number")]
    pub number: String,
    #[serde(rename = "@index")]
    pub index: Option<String>,
    #[serde(rename = "@control")]
    pub control: Option<String>,
    #[serde(rename = "@counter")]
    pub counter: String,
    #[serde(rename = "@kind")]
    pub kind: Option<String>,
    #[serde(rename = "@event")]
    pub event: Option<String>,
    #[serde(rename = "@perf-name")]
    pub perf_name: Option<String>,
    #[serde(rename = "@perf-umask")]
    pub perf_umask: Option<String>,
    #[serde(rename = "@perf-scale")]
    pub perf_scale: Option<String>,
    #[serde(rename = "@perf-unit")]
    pub perf_unit: Option<String>,
}

/// `<filter>`: a box filter, or a match/mask pair; the text says what it filters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFilter {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@register")]
    pub register: String,
    #[serde(rename = "@mask")]
    pub mask: Option<String>,
    #[serde(rename = "@event")]
    pub event: Option<String>,
    #[serde(rename = "@event-ext")]
    pub event_ext: Option<String>,
    #[serde(rename = "@counters")]
    pub counters: Option<String>,
    #[serde(rename = "$text", default)]
    pub description: String,
}

/// `<route>`: hops above the box for some instances and counters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRoute {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@instances")]
    pub instances: Option<String>,
    #[serde(rename = "@counters")]
    pub counters: Option<String>,
    /// Why no route is known: the counters reach the global level, but no public source
    /// gives the bit (the route then has no `<bit>`).
    #[serde(rename = "@unknown")]
    pub unknown: Option<String>,
    #[serde(default)]
    pub bit: Vec<RawBit>,
}

/// `<bit>`: one hop, by concrete register name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBit {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@register")]
    pub register: String,
    #[serde(rename = "@field")]
    pub field: String,
    #[serde(rename = "@clear")]
    pub clear: Option<String>,
}

/// `<global>`: the processor's global level.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGlobal {
    #[serde(rename = "@_at")]
    pub at: usize,
    #[serde(rename = "@control")]
    pub control: String,
    #[serde(rename = "@status")]
    pub status: String,
    #[serde(rename = "@overflow-clear")]
    pub overflow_clear: Option<String>,
}
