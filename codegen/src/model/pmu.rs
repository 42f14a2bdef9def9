//! The validated PMU structure of a unit: field roles, counters, box-level registers, filters,
//! overflow routes and the processor's global level (spec/README.md, "PMU structure").
//!
//! Registers are named by their position in the unit's register list (and fields by their
//! position in the register's field list), so emitters resolve them without matching names.

use serde::Serialize;

use super::vocab::vocabulary;

vocabulary! {
    /// What a field does for the PMU (the spec's `role` attribute).
    pub enum Role {
        /// Counter control: the counter counts while set.
        Enable = "enable",
        /// Counter control: two bits enabling counting in ring 0 (bit 0) and rings 1-3 (bit 1),
        /// as the architectural fixed counters' `enN` fields do.
        RingEnable = "ring-enable",
        /// Counter control: event select.
        Event = "event",
        /// Counter control: event-select extension bit.
        EventExt = "event-ext",
        /// Counter control: unit mask.
        Umask = "umask",
        /// Counter control: threshold (counter mask) compared with the per-cycle increment.
        Threshold = "threshold",
        /// Counter control: invert the threshold comparison.
        Invert = "invert",
        /// Counter control: count rising edges.
        Edge = "edge",
        /// Counter control: signal an overflow (PMI) when the counter wraps.
        OverflowEnable = "overflow-enable",
        /// Counter control: write 1 to reset the counter.
        Reset = "reset",
        /// Counter control: count in user mode (rings 1-3).
        User = "user",
        /// Counter control: count in kernel mode (ring 0).
        Kernel = "kernel",
        /// Counter control: count events of both hardware threads of the core.
        AnyThread = "any-thread",
        /// Counter control: the unit-mask extension, further sub-event selection bits some
        /// uncore events set (Intel's `UMaskExt`).
        UmaskExt = "umask-ext",
        /// Counter control: the port (channel) mask of the IIO events that take one (Intel's
        /// `PortMask`).
        PortMask = "port-mask",
        /// Counter control: the traffic-class (flow-control) mask of the IIO events that take
        /// one (Intel's `FCMask`).
        FcMask = "fc-mask",
        /// Counter: the counting bits; the field's width is the counter's width.
        Count = "count",
        /// Box control: bit n enables counter n.
        CounterEnable = "counter-enable",
        /// Box control: freeze every counter of the box.
        Freeze = "freeze",
        /// Box control: let a freeze (written or signalled) take effect.
        FreezeEnable = "freeze-enable",
        /// Box control: reset every counter of the box.
        ResetCounters = "reset-counters",
        /// Box control: reset every counter control of the box.
        ResetControls = "reset-controls",
        /// Box (or global) status: bit n says counter n overflowed.
        Overflow = "overflow",
        /// Box (or global) overflow clear: writing 1 to bit n clears counter n's overflow bit.
        OverflowClear = "overflow-clear",
        /// Global control: no counter of the processor counts unless set.
        GlobalEnable = "global-enable",
        /// Global control: reset every counter of the processor.
        GlobalReset = "global-reset",
        /// Global control: a PMI clears the [`Role::GlobalEnable`] field (freezes every
        /// counter).
        FreezeOnPmi = "freeze-on-pmi",
        /// Global control: which cores receive the overflow PMI.
        PmiSelect = "pmi-select",
        /// Global control: writing 1 freezes every box whose [`Role::FreezeEnable`] field is
        /// set (write-only; the freeze state cannot be read back).
        GlobalFreeze = "global-freeze",
        /// Global control: writing 1 lifts the freeze, whether written or raised by an
        /// overflow.
        GlobalUnfreeze = "global-unfreeze",
        /// Global control, read-only: how many general counters the part implements, of those
        /// the unit lists (Arm's PMCR_EL0.N); a reader counts on no more, and the spec's reset
        /// value is the part's documented number.
        CounterCount = "counter-count",
    }
}

/// The register kind a role belongs to, and the access and width it requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleClass {
    /// A counter control register.
    CounterControl,
    /// A counter register.
    Counter,
    /// A box control register.
    BoxControl,
    /// A box status register.
    BoxStatus,
    /// A box overflow-clear register.
    BoxOverflowClear,
    /// The global control register.
    GlobalControl,
}

impl Role {
    /// The kind of register the role belongs to.
    pub fn class(self) -> RoleClass {
        use Role::*;
        match self {
            Enable | RingEnable | Event | EventExt | Umask | Threshold | Invert | Edge
            | OverflowEnable | Reset | User | Kernel | AnyThread | UmaskExt | PortMask | FcMask => {
                RoleClass::CounterControl
            }
            Count => RoleClass::Counter,
            CounterEnable | Freeze | FreezeEnable | ResetCounters | ResetControls => {
                RoleClass::BoxControl
            }
            Overflow => RoleClass::BoxStatus,
            OverflowClear => RoleClass::BoxOverflowClear,
            GlobalEnable | GlobalReset | FreezeOnPmi | PmiSelect | GlobalFreeze
            | GlobalUnfreeze | CounterCount => RoleClass::GlobalControl,
        }
    }

    /// The width of one element (one counter's share) the role requires, if fixed.
    pub fn element_width(self) -> Option<u32> {
        use Role::*;
        match self {
            Event | Umask | Threshold | UmaskExt | PortMask | FcMask | Count | PmiSelect
            | CounterCount => None,
            RingEnable => Some(2),
            _ => Some(1),
        }
    }

    /// Roles that name, per bit, the counters they stand for (bitmaps over counters).
    pub fn is_bitmap(self) -> bool {
        matches!(
            self,
            Role::CounterEnable | Role::Overflow | Role::OverflowClear
        )
    }

    /// Whether a field with access `a` can play this role, and if not, what it needs.
    pub fn access_problem(self, a: super::Access) -> Option<&'static str> {
        use super::Access::*;
        let ok = match self {
            // rw-v for counters software loads; ro-v for free-running ones, which it cannot.
            Role::Count => matches!(a, RwV | RoV),
            Role::Overflow => a.is_readable(),
            Role::OverflowClear => matches!(a, W1c | Wo),
            Role::Reset => matches!(a, Wo | W1c | Rw | RwV),
            Role::GlobalFreeze | Role::GlobalUnfreeze => a == Wo,
            Role::CounterCount => a == Ro,
            _ => a.is_writable(),
        };
        if ok {
            return None;
        }
        Some(match self {
            Role::Count => {
                "a counter's count bits are rw-v (software loads them, hardware counts), or ro-v \
                 for a free-running counter"
            }
            Role::Overflow => "an overflow bit must be readable (ro-v or rw-v)",
            Role::OverflowClear => "an overflow-clear bit is w1c or wo",
            Role::GlobalFreeze | Role::GlobalUnfreeze => {
                "a global freeze or unfreeze bit is wo: writing 1 acts, and nothing reads back"
            }
            Role::CounterCount => {
                "a counter count is ro: the part reports it, with its documented value as reset"
            }
            _ => "a control role needs a writable field (rw, rw-v, wo)",
        })
    }
}

/// One field's part in the PMU: its role and, for shared or bitmap fields, the counters its
/// elements stand for (element k, from the least significant, is counter `counters[k]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRole {
    /// The role.
    pub role: Role,
    /// Counter numbers in ascending bit order; empty when the field serves the one counter of
    /// its register element.
    pub counters: Vec<u32>,
}

vocabulary! {
    /// Whether a box is per socket (uncore) or per logical CPU (core PMU).
    pub enum Scope {
        /// One box per socket.
        Socket = "socket",
        /// One box per logical CPU.
        Cpu = "cpu",
        /// One box per L3 cache (on AMD, per core complex: CCX), reached through any logical
        /// CPU that shares that L3.
        L3 = "l3",
    }
}

vocabulary! {
    /// What sort of counter.
    pub enum CounterKind {
        /// Programmable: counts the event its control selects.
        General = "general",
        /// Counts one fixed event; its control (if any) only enables it.
        Fixed = "fixed",
        /// Counts one fixed event and has no control at all.
        FreeRunning = "free-running",
    }
}

vocabulary! {
    /// How software sees that a counter overflowed.
    pub enum OverflowSeen {
        /// By its bit in the box's overflow status (and the route above the box), where the
        /// box has one; a counter whose box has no status is not seen at all.
        Status = "status",
        /// By the counter's most significant bit reading 0: preloaded with 2^width - N (N at
        /// most 2^(width-1)), the counter keeps that bit set until it wraps, and no status
        /// bit records the overflow (AMD's core counters before PerfMonV2).
        MsbClear = "msb-clear",
    }
}

/// One element of a register of the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegIndex {
    /// Position in the unit's register list.
    pub register: usize,
    /// Array index.
    pub index: u32,
}

/// A counter of every box of the unit.
#[derive(Debug, Clone)]
pub struct Counter {
    /// Its number within the box (its bit in the box's bitmap fields).
    pub number: u32,
    /// General, fixed or free-running.
    pub kind: CounterKind,
    /// Width in bits (the width of its `count` field).
    pub width: u32,
    /// CPUID bits that give the implemented width, for architectural counters.
    pub width_cpuid: Option<String>,
    /// Its control register element (none for a free-running counter).
    pub control: Option<RegIndex>,
    /// Its counter register element.
    pub counter: RegIndex,
    /// A full-width write alias of the counter (IA32_A_PMCn).
    pub alias: Option<RegIndex>,
    /// What a fixed or free-running counter counts.
    pub event: Option<String>,
    /// A free-running counter's event as the kernel's perf driver names it.
    pub perf: Option<CounterPerf>,
    /// How software sees its overflow.
    pub overflow: OverflowSeen,
    /// The public source of a rule other than [`OverflowSeen::Status`].
    pub overflow_source: Option<String>,
}

/// A free-running counter's event in the kernel's perf driver: `events/NAME` reads
/// `event=0xff,umask=UMASK`, with `NAME.scale` and `NAME.unit` where the driver gives them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterPerf {
    /// The sysfs event name (`bw_in_port0`).
    pub name: String,
    /// The unit mask that selects this counter (the event select is always 0xff).
    pub umask: u8,
    /// The factor from a count to the unit, as the kernel writes it (`3.814697266e-6`).
    pub scale: Option<String>,
    /// The unit a scaled count is in (`MiB`).
    pub unit: Option<String>,
}

/// A filter register (or a match/mask pair) and what it applies to.
#[derive(Debug, Clone)]
pub struct Filter {
    /// The filter register, or the match register of a pair.
    pub register: usize,
    /// The mask register of a match/mask pair.
    pub mask: Option<usize>,
    /// The event select of the event that counts what the filter accepts (none: every event
    /// whose event-list entry names the filter).
    pub event: Option<u8>,
    /// That event needs the event-select extension bit.
    pub event_ext: bool,
    /// The counters it applies to (empty: all of the box's).
    pub counters: Vec<u32>,
    /// What it filters, in our words.
    pub description: String,
}

/// One bit of the overflow hierarchy in some unit of the processor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitRef {
    /// Position of the unit in the processor's unit list.
    pub unit: usize,
    /// Position of the register in that unit.
    pub register: usize,
    /// Position of the instance in that unit.
    pub instance: usize,
    /// Array index.
    pub index: u32,
    /// Position of the field in the register.
    pub field: usize,
}

/// A hop of an overflow route: the bit set, and the bit that clears it (if one exists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// The status or summary bit the overflow sets.
    pub bit: BitRef,
    /// The bit that clears it, when the hierarchy has one.
    pub clear: Option<BitRef>,
}

/// Where the overflows of some counters of some boxes go above their box's own status.
#[derive(Debug, Clone)]
pub struct Route {
    /// Instance positions it applies to.
    pub instances: Vec<usize>,
    /// Counter numbers it applies to.
    pub counters: Vec<u32>,
    /// Hops, bottom to top; the last is in the global status.
    pub hops: Vec<Hop>,
}

/// The processor-wide level above every box.
#[derive(Debug, Clone)]
pub struct Global {
    /// Global control register (of the unit that declares it).
    pub control: usize,
    /// Global status register.
    pub status: usize,
    /// Global overflow-clear register.
    pub overflow_clear: Option<usize>,
}

/// A unit's PMU structure.
#[derive(Debug, Clone)]
pub struct Pmu {
    /// Per socket or per CPU.
    pub scope: Scope,
    /// The box type the uncore discovery table gives this unit's boxes (Sapphire Rapids on);
    /// box id k is the unit's k-th instance.
    pub discovery_type: Option<u16>,
    /// Box-level control registers.
    pub controls: Vec<usize>,
    /// Box-level status registers.
    pub statuses: Vec<usize>,
    /// Box-level overflow-clear registers.
    pub overflow_clears: Vec<usize>,
    /// Counters, by number.
    pub counters: Vec<Counter>,
    /// Filters.
    pub filters: Vec<Filter>,
    /// Overflow routes (resolved once every unit of the processor is known).
    pub routes: Vec<Route>,
    /// The processor's global level, if this unit declares it.
    pub global: Option<Global>,
    /// The Linux perf PMUs that count the boxes.
    pub perf: Vec<PerfPmu>,
    /// How software learns how many of the boxes this part has (`<box-count>`); `None`: a
    /// part has every box the unit lists.
    pub box_count: Option<BoxCount>,
    /// How software learns which socket owns each uncore PCI bus (`<socket-bus>`, on the
    /// unit whose device holds the node-id registers).
    pub socket_bus: Option<SocketBus>,
    /// Which PCI bus each box serves, read from a register on each socket (`<stack-bus>`:
    /// Skylake-SP's IIO stacks); `None` on every other unit.
    pub stack_bus: Option<StackBus>,
    /// The discovery table's entries of this unit's type are known to be wrong, and the
    /// spec is trusted instead (`<discovery-ignored>`; only with a `discovery_type`).
    pub discovery_ignored: Option<DiscoveryIgnored>,
    /// The part has this many of the unit's boxes whatever its discovery table lists
    /// (`<discovery-count>`; only with a `discovery_type`).
    pub discovery_count: Option<DiscoveryCount>,
    /// The unit's boxes do not count on the parts whose table lists them, and software does
    /// not use them (`<discovery-broken>`; only with a `discovery_type`).
    pub discovery_broken: Option<DiscoveryIgnored>,
    /// The counters saturate instead of wrapping, and software resets them early
    /// (`<saturation>`); `None`: they wrap at their width.
    pub saturation: Option<Saturation>,
    /// What software writes before counting, because the part powers up with a value there
    /// that stops every count (`<global-init>`).
    pub global_init: Vec<GlobalInit>,
    /// The event that counts the unit's clock (`<clock-event>`): a box that counts nothing
    /// with it over an enabled interval is broken.
    pub clock_event: Option<ClockEvent>,
    /// Decisions about the structure and their sources.
    pub notes: Vec<super::Note>,
}

/// How many boxes of a unit the part has where its discovery table lists another number (a
/// firmware bug a public source corrects), with its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiscoveryCount {
    /// Boxes 0 to `boxes - 1` are there.
    pub boxes: u32,
    /// The public source that corrects the count.
    pub source: String,
    /// What is wrong with the table's count, in our words.
    pub description: String,
}

/// The event that counts a unit's own clock (the spec's `<clock-event>`, as the vendor's event
/// list names it: Intel's `UNC_CHA_CLOCKTICKS`): it counts in every interval a working box is
/// enabled, so a box whose clock event counts nothing is broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockEvent {
    /// Event select.
    pub code: u16,
    /// Unit mask.
    pub umask: u16,
    /// The public source (the event list that names it).
    pub source: String,
    /// Where it is written, for the check against the processors' event lists.
    pub at: super::Position,
}

/// Counters that stop at their top instead of wrapping (a hardware behaviour a public source
/// works around): software resets a counter to zero when bit `reset_bit` reads 1, so deltas
/// are taken over `reset_bit` bits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Saturation {
    /// The bit whose setting makes software reset the counter; also the usable width.
    pub reset_bit: u32,
    /// The public source that resets them.
    pub source: String,
    /// What the hardware does and what software does about it, in our words.
    pub description: String,
}

/// A field software writes before counting: the part powers up with `power_on` there, which
/// stops every count, and counting needs `write`. A session saves the register first and
/// puts it back when it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalInit {
    /// The register, by position in the unit (not an array; the unit has one instance).
    pub register: usize,
    /// The field, by position in the register.
    pub field: usize,
    /// The value written before counting.
    pub write: u64,
    /// The value the part powers up with.
    pub power_on: u64,
    /// The public source that writes it.
    pub source: String,
    /// Why, in our words.
    pub description: String,
}

/// Why the discovery table's entries of a unit's type are not believed, or its boxes not used
/// (a firmware or hardware bug a public source works around), with its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiscoveryIgnored {
    /// The public source that ignores them.
    pub source: String,
    /// What is wrong with them, in our words.
    pub description: String,
}

/// How software learns, on a given part, which boxes of a unit it has: with a count, boxes 0
/// to n-1 of the unit's instances are there and the rest are not; with `Devices`, those
/// whose devices are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxCount {
    /// What is read.
    pub rule: BoxCountRule,
    /// The public source of the rule.
    pub source: String,
    /// The rule in our words.
    pub description: String,
}

/// What is read to learn a unit's box count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoxCountRule {
    /// The number of set bits of one or more fields of registers of the processor, summed
    /// (one bit per box present: the Skylake-SP CHAs in CAPID6, Ice Lake-SP's in CAPID6 and
    /// CAPID7).
    SetBits(Vec<BitRef>),
    /// The value of one field (the Sapphire Rapids CHA count in MSR 0x2FFE); zero means the
    /// part does not say (software falls back to the discovery table's count).
    Value(BitRef),
    /// The count one field's value maps to, every box listed for a value the map lacks
    /// (the E5-2600 v3 S-boxes: 2 when CAPID4's chop field is 0).
    ValueMap(BitRef, Vec<(u64, u32)>),
    /// The number of set bits of CPUID bits (one bit per box present: Zen 4's active memory
    /// controllers in 80000022H ECX), and optionally the CPUID bits holding the counters of
    /// the boxes present together, shared equally among them (80000022H EBX\[21:16\]).
    CpuidSetBits {
        /// The bits, as `count-cpuid` writes them (`80000022H.ECX[31:0]`).
        active: String,
        /// The counters of every box present, together (`80000022H.EBX[21:16]`).
        counters: Option<String>,
    },
    /// The number of cores of the socket (one box per core: the E5-2600 v3/v4 C-boxes).
    CoresPerSocket,
    /// Every part of the processor has every box the unit lists (the source counts them as
    /// fixed: the Skylake-SP PCU).
    Listed,
    /// The boxes present are those whose PCI devices are found on the socket (their config
    /// space, or the device holding a memory-mapped window's base), as Linux registers a box
    /// per device it finds: a set, not a count (a missing channel need not be the last).
    Devices,
    /// The part's discovery table lists the boxes present (Sapphire Rapids on).
    Discovery,
}

/// Which root PCI bus each box of a unit serves (one I/O stack per box): a register read on
/// each socket holds one byte per box, box k's at bits 8k+7:8k, meaningful once its valid bit
/// is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackBus {
    /// The bit that says firmware has set the buses.
    pub valid: BitRef,
    /// The bus fields, box k's at position k (the unit's instance order).
    pub buses: Vec<BitRef>,
    /// The public source of the rule.
    pub source: String,
    /// The rule in our words.
    pub description: String,
}

/// How software learns which socket owns each PCI bus holding uncore devices: every bus
/// with the unit's device reads its own node id and the node map there; the package is the
/// slot of the map that holds that node id. A bus without the device takes the socket of
/// the nearest bus with it, below or above as `other_buses` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketBus {
    /// The field holding this bus's own node id.
    pub node_id: BitRef,
    /// The node map's slots, slot n first at position n (package n's node id).
    pub slots: Vec<BitRef>,
    /// Where a bus without the device takes its socket from.
    pub other_buses: OtherBuses,
    /// The public source of the rule.
    pub source: String,
    /// The rule in our words.
    pub description: String,
}

/// Which bus with the node-id device a bus without it belongs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherBuses {
    /// None: every uncore device of a socket is on the bus of the node-id device.
    None,
    /// The nearest lower-numbered bus that has the device (Linux `reverse = false`).
    NextLower,
    /// The nearest higher-numbered bus that has the device (Linux `reverse = true`).
    NextHigher,
}

/// A Linux perf PMU counting some counters of one box.
#[derive(Debug, Clone)]
pub struct PerfPmu {
    /// The box (index into the unit's instances).
    pub instance: usize,
    /// The kernel's PMU name (`uncore_cbox_3`).
    pub pmu: String,
    /// The box's counters it counts.
    pub counters: Vec<u32>,
    /// The public source of the name.
    pub source: String,
    /// The driver's format for the box (`processors.xml` `<perf-driver>`).
    pub driver: std::sync::Arc<PerfDriver>,
}

/// A Linux perf driver's format for a kind of box: its `format/*` files.
#[derive(Debug, Clone)]
pub struct PerfDriver {
    /// Identifier the units' `<perf driver="..">` name.
    pub id: String,
    /// The kernel module (or driver) that registers the PMU (`intel_uncore`).
    pub module: String,
    /// The driver's attribute list the formats come from (`snbep_uncore_formats_attr`).
    pub group: String,
    /// The public source (a `processors.xml` source id).
    pub source: String,
    /// The source's title, for messages.
    pub source_title: String,
    /// Its format fields, in the driver's order.
    pub formats: Vec<PerfFormat>,
}

/// One `format/<name>` file: where its bits go, and what of ours it maps onto.
#[derive(Debug, Clone)]
pub struct PerfFormat {
    /// The file name (`event`, `filter_tid`).
    pub name: String,
    /// Its contents as the kernel writes them (`config:0-7,21`).
    pub config: String,
    /// How many value bits it holds.
    pub width: u32,
    /// What it maps onto.
    pub target: FormatTarget,
}

/// What a format field sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatTarget {
    /// The counter control's field playing this role.
    Role(Role),
    /// The counter control's field of this name.
    Field(String),
    /// A register of the box (a filter), by name template.
    Register(String),
    /// Nothing the spec describes; why.
    Unmapped(String),
}
