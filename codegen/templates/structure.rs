//! The PMU structure the spec declares: which registers of a box are its counters and
//! controls, which field plays which role, and where each counter's overflow goes.
//!
//! Everything here is resolved at generation time: a [`CounterInfo`] points at the
//! [`RegisterInfo`] of its control and counter, a [`Hop`] at the [`FieldInfo`] of the status
//! bit it sets. Code that drives "a counter" reads this instead of register or field names.
//!
//! A `&RegisterInfo` is a reference to the register's one static, so `core::ptr::eq` tells
//! two apart. A `&FieldInfo` points at the right field's content, but the compiler may copy
//! the field table it lives in: compare fields by `lsb` (or name) within a register, not by
//! address.
//!
//! ```
//! # #[cfg(feature = "xeon-7500")] {
//! use pmu_regs::{xeon_7500, Role};
//!
//! let cbox = xeon_7500::cbox::UNIT.pmu.unwrap();
//! let c3 = cbox.counter(3).unwrap();
//! assert_eq!(c3.width, 48);
//! let control = c3.control.unwrap();
//! assert_eq!(control.address("C5").unwrap().name, "C5_MSR_PMON_EVT_SEL3");
//! assert_eq!(control.register.role(Role::Enable).unwrap().name, "en");
//! // C-box 5 reports to S-box 1, which reports to the U-box's global status.
//! let route = cbox.route("C5", 3).unwrap();
//! assert_eq!(route.hops[0].bit.name(), "S1_MSR_PMON_SUMMARY.ov_c_l");
//! assert_eq!(route.hops[1].bit.name(), "U_MSR_PMON_GLOBAL_STATUS.ov_s1");
//! # }
//! ```

use crate::support::{AddressInfo, FieldInfo, FieldTooWide, NoteInfo, Register, RegisterInfo};

// @vocabulary Role

// @vocabulary Scope

// @vocabulary CounterKind

// @vocabulary OverflowSeen

/// One element of a register array (index 0 for a single register).
#[derive(Debug, Clone, Copy)]
pub struct RegRef {
    /// The register layout and its addresses.
    pub register: &'static RegisterInfo,
    /// Array index.
    pub index: u32,
}

impl RegRef {
    /// Element `index` of `register`.
    pub const fn new(register: &'static RegisterInfo, index: u32) -> Self {
        Self { register, index }
    }

    /// The address of this element in box instance `instance`.
    pub fn address(&self, instance: &str) -> Option<&'static AddressInfo> {
        self.register
            .known_addresses()
            .iter()
            .find(|a| a.instance == instance && a.index == self.index)
    }
}

/// A counter of every box of a unit.
#[derive(Debug)]
pub struct CounterInfo {
    /// Its number in the box: its bit in the box's bitmap fields (32+i for architectural
    /// fixed counter i).
    pub number: u32,
    /// General, fixed or free-running.
    pub kind: CounterKind,
    /// Counting bits (the width of the counter's [`Role::Count`] field).
    pub width: u32,
    /// CPUID bits giving the implemented width (architectural counters).
    pub width_cpuid: Option<&'static str>,
    /// Its control (none for a free-running counter). A control shared by several counters
    /// (IA32_FIXED_CTR_CTRL) has role fields whose `counters` say which counter they serve.
    pub control: Option<RegRef>,
    /// Its counter register.
    pub counter: RegRef,
    /// A full-width write alias (IA32_A_PMCn).
    pub alias: Option<RegRef>,
    /// What a fixed or free-running counter counts.
    pub event: Option<&'static str>,
    /// A free-running counter's event as the kernel's perf driver publishes it.
    pub perf_event: Option<CounterPerfEvent>,
    /// How software sees its overflow: by its box's status, or by its top bit.
    pub overflow: OverflowSeen,
    /// The public source of an overflow rule other than [`OverflowSeen::Status`] (a
    /// `processors.xml` source id).
    pub overflow_source: Option<&'static str>,
}

/// A free-running counter's event in the kernel's perf driver: the PMU's `events/NAME` file
/// reads `event=0xff,umask=UMASK`, and `NAME.scale` and `NAME.unit` turn a count into the
/// unit (`bw_in_port0`: 3.814697266e-6 MiB per count).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterPerfEvent {
    /// The sysfs event name.
    pub name: &'static str,
    /// The unit mask that selects this counter; the event select is always 0xff.
    pub umask: u8,
    /// The factor from a count to [`unit`](Self::unit), as the kernel writes it.
    pub scale: Option<&'static str>,
    /// The unit of a scaled count (`MiB`).
    pub unit: Option<&'static str>,
}

impl CounterPerfEvent {
    /// The scale as a number (1 where the kernel gives none).
    pub fn scale_factor(&self) -> f64 {
        self.scale.and_then(|s| s.parse().ok()).unwrap_or(1.0)
    }
}

impl CounterInfo {
    /// A general-purpose counter: `control` selects what `counter` counts.
    pub const fn general(number: u32, width: u32, control: RegRef, counter: RegRef) -> Self {
        Self {
            number,
            kind: CounterKind::General,
            width,
            width_cpuid: None,
            control: Some(control),
            counter,
            alias: None,
            event: None,
            perf_event: None,
            overflow: OverflowSeen::Status,
            overflow_source: None,
        }
    }

    /// A fixed counter: `control` only enables it (say what it counts with
    /// [`counting`](Self::counting)).
    pub const fn fixed(number: u32, width: u32, control: RegRef, counter: RegRef) -> Self {
        Self {
            kind: CounterKind::Fixed,
            ..Self::general(number, width, control, counter)
        }
    }

    /// A free-running counter: no control at all.
    pub const fn free_running(number: u32, width: u32, counter: RegRef) -> Self {
        Self {
            kind: CounterKind::FreeRunning,
            control: None,
            ..Self::general(number, width, counter, counter)
        }
    }

    /// This counter counting the fixed event `event`.
    pub const fn counting(self, event: &'static str) -> Self {
        Self {
            event: Some(event),
            ..self
        }
    }

    /// This counter with a full-width write alias.
    pub const fn with_alias(self, alias: RegRef) -> Self {
        Self {
            alias: Some(alias),
            ..self
        }
    }

    /// This free-running counter with the event the kernel's perf driver publishes for it.
    pub const fn with_perf_event(self, perf_event: CounterPerfEvent) -> Self {
        Self {
            perf_event: Some(perf_event),
            ..self
        }
    }

    /// This counter with its implemented width given by CPUID bits `cpuid`.
    pub const fn with_width_cpuid(self, cpuid: &'static str) -> Self {
        Self {
            width_cpuid: Some(cpuid),
            ..self
        }
    }

    /// This counter with its overflow seen as `seen` says (the spec's `overflow`), by the
    /// rule public source `source` gives.
    pub const fn overflow_seen(self, seen: OverflowSeen, source: &'static str) -> Self {
        Self {
            overflow: seen,
            overflow_source: Some(source),
            ..self
        }
    }

    /// The field of this counter's control playing `role`, with the bits it has for this
    /// counter.
    pub fn control_bits(&self, role: Role) -> Option<RoleBits> {
        self.control?.register.role_bits(role, self.number)
    }

    /// The counting bits.
    pub fn count_bits(&self) -> Option<RoleBits> {
        self.counter.register.role_bits(Role::Count, self.number)
    }

    /// The largest count before the counter wraps.
    pub const fn max(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }
}

/// A filter register, or a match/mask pair, of a box.
#[derive(Debug)]
pub struct FilterInfo {
    /// The filter register (the match register of a pair).
    pub register: &'static RegisterInfo,
    /// The mask register of a match/mask pair.
    pub mask: Option<&'static RegisterInfo>,
    /// The event select that counts what the filter accepts (none: the events whose event
    /// list entry names the filter).
    pub event: Option<u8>,
    /// That event needs the event-select extension bit.
    pub event_ext: bool,
    /// The counters it applies to (empty: all).
    pub counters: &'static [u32],
    /// What it filters.
    pub description: &'static str,
}

/// One bit of the overflow hierarchy: a field of one instance (and array element) of a
/// register, possibly of another unit.
#[derive(Debug, Clone, Copy)]
pub struct BitRef {
    /// The register.
    pub register: &'static RegisterInfo,
    /// The box instance whose register it is.
    pub instance: &'static str,
    /// Array index.
    pub index: u32,
    /// The one-bit field.
    pub field: &'static FieldInfo,
    /// Concrete register name (`S1_MSR_PMON_SUMMARY`).
    pub register_name: &'static str,
    /// `REGISTER.field` (`S1_MSR_PMON_SUMMARY.ov_c_l`), for messages.
    pub qualified: &'static str,
}

impl BitRef {
    /// Its address, or `None` when no source gives one (the Xeon 7500 S-box summaries).
    pub fn address(&self) -> Option<&'static AddressInfo> {
        RegRef {
            register: self.register,
            index: self.index,
        }
        .address(self.instance)
    }

    /// `REGISTER.field`, for messages.
    pub fn name(&self) -> &'static str {
        self.qualified
    }
}

/// A hop of an overflow route: the bit it sets and the bit that clears it.
#[derive(Debug, Clone, Copy)]
pub struct Hop {
    /// The status or summary bit the overflow sets.
    pub bit: BitRef,
    /// The bit that clears it (none where the hierarchy clears it from below).
    pub clear: Option<BitRef>,
}

/// Where overflows of some counters of some boxes go above their box's own status, bottom
/// to top; the last hop is in the global status.
#[derive(Debug)]
pub struct RouteInfo {
    /// The box instances it applies to.
    pub instances: &'static [&'static str],
    /// The counters it applies to.
    pub counters: &'static [u32],
    /// The hops.
    pub hops: &'static [Hop],
}

/// A unit's PMU structure: the same for every box (instance) of the unit.
#[derive(Debug)]
pub struct PmuInfo {
    /// Processor id.
    pub processor: &'static str,
    /// Unit name.
    pub unit: &'static str,
    /// Per socket or per CPU.
    pub scope: Scope,
    /// The box type the uncore discovery table lists this unit's boxes under (Sapphire Rapids
    /// on); box id k is instance k. `None`: the unit is not in a discovery table.
    pub discovery_type: Option<u16>,
    /// Box-level control registers ([`Role::CounterEnable`], [`Role::Freeze`], ...).
    pub controls: &'static [&'static RegisterInfo],
    /// Box-level status registers ([`Role::Overflow`]).
    pub statuses: &'static [&'static RegisterInfo],
    /// Box-level overflow-clear registers ([`Role::OverflowClear`]).
    pub overflow_clears: &'static [&'static RegisterInfo],
    /// Counters, by number.
    pub counters: &'static [CounterInfo],
    /// Filters.
    pub filters: &'static [FilterInfo],
    /// Overflow routes above the box.
    pub routes: &'static [RouteInfo],
    /// The Linux perf PMUs that count the boxes (empty where the kernel has none).
    pub perf: &'static [PerfInfo],
    /// How software learns how many of the boxes this part has; `None`: every part has
    /// every box listed.
    pub box_count: Option<BoxCountInfo>,
    /// How software learns which socket owns each uncore PCI bus, on the unit whose device
    /// holds the node-id registers; `None` on every other unit.
    pub socket_bus: Option<SocketBusInfo>,
    /// Which root PCI bus each box serves, read from a register on each socket (the spec's
    /// `<stack-bus>`: Skylake-SP's IIO stacks); `None` on every other unit.
    pub stack_bus: Option<StackBusInfo>,
    /// The discovery table's entries of this unit's type are known to be wrong; the spec's
    /// boxes are trusted instead. `None`: the table is believed.
    pub discovery_ignored: Option<DiscoveryIgnoredInfo>,
    /// The part has this many of the unit's boxes whatever its discovery table lists (the
    /// spec's `<discovery-count>`); `None`: the table's count is believed.
    pub discovery_count: Option<DiscoveryCountInfo>,
    /// The unit's boxes do not count on the parts whose table lists them, and software does
    /// not use them (the spec's `<discovery-broken>`); `None`: they are used.
    pub discovery_broken: Option<DiscoveryIgnoredInfo>,
    /// The counters saturate at their top instead of wrapping, and software resets them
    /// early (the spec's `<saturation>`); `None`: they wrap at their width.
    pub saturation: Option<SaturationInfo>,
    /// Fields software writes before counting, because the part powers up with a value
    /// there that stops every count (the spec's `<global-init>`); empty for most units.
    pub global_init: &'static [GlobalInitInfo],
    /// The event that counts the unit's own clock (the spec's `<clock-event>`: Intel's
    /// `UNC_CHA_CLOCKTICKS`); a box that counts nothing with it over an enabled interval is
    /// broken. `None` where no source names one.
    pub clock_event: Option<ClockEventInfo>,
    /// Decisions about the structure, with their sources.
    pub notes: &'static [NoteInfo],
}

/// How software learns which socket owns each PCI bus that holds uncore devices (the spec's
/// `<socket-bus>`): on every bus that has the node-id device, the package is the position of
/// the slot of the node map that holds the bus's own node id; a bus without the device
/// belongs with the nearest bus that has it, as [`OtherBuses`] says.
#[derive(Debug, Clone, Copy)]
pub struct SocketBusInfo {
    /// The field holding the bus's own node id (its register names the device).
    pub node_id: BitRef,
    /// The node map's slots: slot n holds the node id of package n.
    pub slots: &'static [BitRef],
    /// Which bus with the device a bus without it belongs with.
    pub other_buses: OtherBuses,
    /// The public source of the rule (a `processors.xml` source id).
    pub source: &'static str,
    /// The rule in words, for messages.
    pub description: &'static str,
}

impl SocketBusInfo {
    /// The package a bus belongs to, from the node id and the map read there: the first
    /// slot holding the node id, or `None` when no slot does.
    pub fn package_of(&self, node_id: u64, map: u64) -> Option<u32> {
        let own = self.node_id.field.extract(node_id);
        self.slots
            .iter()
            .position(|s| s.field.extract(map) == own)
            .map(|n| n as u32)
    }
}

/// Which root PCI bus each box of a unit serves (the spec's `<stack-bus>`): a register read
/// on a CPU of each socket holds one byte per box, box k's in `buses[k]`, meaningful only
/// while its `valid` bit is set (Linux's skx_iio_get_topology gives up the mapping when it
/// is clear).
#[derive(Debug, Clone, Copy)]
pub struct StackBusInfo {
    /// The bit that says firmware has set the buses.
    pub valid: BitRef,
    /// The bus fields, box k's at position k (the unit's instance order).
    pub buses: &'static [BitRef],
    /// The public source of the rule (a `processors.xml` source id).
    pub source: &'static str,
    /// The rule in words, for messages.
    pub description: &'static str,
}

impl StackBusInfo {
    /// Whether the register's raw value has its valid bit set (firmware set the buses).
    pub fn is_valid(&self, raw: u64) -> bool {
        self.valid.field.extract(raw) != 0
    }

    /// Box `k`'s bus in the register's raw value; `None` while the valid bit is clear or
    /// past the unit's boxes.
    pub fn bus_of(&self, raw: u64, k: usize) -> Option<u8> {
        let b = self.buses.get(k).filter(|_| self.is_valid(raw))?;
        Some((b.field.extract(raw) & 0xff) as u8)
    }
}

/// Which bus with the node-id device a bus without it belongs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherBuses {
    /// None: every uncore device of a socket is on the bus of the node-id device.
    None,
    /// The nearest lower-numbered bus that has the device.
    NextLower,
    /// The nearest higher-numbered bus that has the device.
    NextHigher,
}

/// How software learns how many boxes of a unit a part has: boxes 0 to n-1 of the unit's
/// instances are present, the others are not (the spec's `<box-count>`).
#[derive(Debug, Clone, Copy)]
pub struct BoxCountInfo {
    /// What is read.
    pub rule: BoxCountRule,
    /// The public source of the rule (a `processors.xml` source id).
    pub source: &'static str,
    /// The rule in words, for messages.
    pub description: &'static str,
}

/// What is read to learn which boxes of a unit a part has.
#[derive(Debug, Clone, Copy)]
pub enum BoxCountRule {
    /// The number of set bits of one or more fields (each of one register instance),
    /// summed: one bit per box present.
    SetBits(&'static [BitRef]),
    /// The value of one field; zero means the part does not say (software then takes the
    /// discovery table's count).
    Value(BitRef),
    /// The count one field's value maps to, `(value, boxes)`; a value the map lacks: every
    /// box listed.
    ValueMap(BitRef, &'static [(u64, u32)]),
    /// The number of set bits of CPUID bits (`active`, written as `count-cpuid` is:
    /// `80000022H.ECX[31:0]`), one bit per box present; `counters`, where given, the CPUID
    /// bits holding the counters of every box present together, shared equally among them
    /// (Linux's amd_uncore_umc_ctx_init: EBX[21:16] / the active controllers).
    CpuidSetBits {
        /// The bits whose set bits are the boxes present.
        active: &'static str,
        /// The bits holding the counters of all the boxes present.
        counters: Option<&'static str>,
    },
    /// The number of cores of the socket (one box per core).
    CoresPerSocket,
    /// Every part has every box the unit lists.
    Listed,
    /// The boxes present are those whose PCI devices (config space, or the device holding
    /// a memory-mapped window's base) are found on the socket: a set, not a count.
    Devices,
    /// The part's discovery table lists the boxes present.
    Discovery,
}

impl BoxCountRule {
    /// The count the values read from the rule's registers give, one value per field in
    /// order (`SetBits`: the set bits of every field, summed; `Value`: the field's value;
    /// `ValueMap`: the count the field's value maps to, `None` for a value the map lacks:
    /// every box listed).
    pub fn count_from(&self, raws: &[u64]) -> Option<u32> {
        match self {
            BoxCountRule::SetBits(bits) => Some(
                bits.iter()
                    .zip(raws)
                    .map(|(b, &raw)| b.field.extract(raw).count_ones())
                    .sum(),
            ),
            BoxCountRule::Value(b) => raws
                .first()
                .map(|&raw| u32::try_from(b.field.extract(raw)).unwrap_or(u32::MAX)),
            BoxCountRule::ValueMap(b, map) => {
                let value = b.field.extract(*raws.first()?);
                map.iter().find(|(v, _)| *v == value).map(|&(_, n)| n)
            }
            BoxCountRule::CpuidSetBits { .. }
            | BoxCountRule::CoresPerSocket
            | BoxCountRule::Listed
            | BoxCountRule::Devices
            | BoxCountRule::Discovery => None,
        }
    }
}

/// The discovery table's entries of a unit's type are known to be wrong (a firmware bug a
/// public source works around), so software trusts the spec's description of the boxes
/// (the spec's `<discovery-ignored>`); or the boxes are known not to count, so software does
/// not use them (`<discovery-broken>`).
#[derive(Debug, Clone, Copy)]
pub struct DiscoveryIgnoredInfo {
    /// The public source that ignores them (a `processors.xml` source id).
    pub source: &'static str,
    /// What is wrong with the entries, in words, for messages.
    pub description: &'static str,
}

/// How many boxes of a unit the part has where its discovery table lists another number (the
/// spec's `<discovery-count>`): boxes 0 to `boxes - 1`.
#[derive(Debug, Clone, Copy)]
pub struct DiscoveryCountInfo {
    /// How many boxes the part has.
    pub boxes: u32,
    /// The public source that corrects the count (a `processors.xml` source id).
    pub source: &'static str,
    /// What is wrong with the table's count, in words, for messages.
    pub description: &'static str,
}

/// The event that counts a unit's own clock (the spec's `<clock-event>`): it counts in every
/// interval a working box is enabled, so a session reports a box whose clock event counted
/// nothing as broken instead of showing its zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockEventInfo {
    /// Event select.
    pub code: u16,
    /// Unit mask.
    pub umask: u16,
    /// The public source that names it (a `processors.xml` source id: the vendor's event
    /// list).
    pub source: &'static str,
}

/// Counters that stop at their top instead of wrapping (the spec's `<saturation>`): a later
/// reading shows no change, so software resets a counter to zero whenever bit `reset_bit`
/// reads 1, and takes deltas over `reset_bit` bits.
#[derive(Debug, Clone, Copy)]
pub struct SaturationInfo {
    /// The bit whose setting makes software reset the counter; the usable width.
    pub reset_bit: u32,
    /// The public source that resets them (a `processors.xml` source id).
    pub source: &'static str,
    /// What the hardware does and what software does, in words, for messages.
    pub description: &'static str,
}

/// A field software writes before counting (the spec's `<global-init>`): the part powers up
/// with `power_on` there, which stops every count, and counting needs `write`. A session
/// saves the register first and puts it back when it ends.
#[derive(Debug)]
pub struct GlobalInitInfo {
    /// The register.
    pub register: &'static RegisterInfo,
    /// The box instance whose register it is.
    pub instance: &'static str,
    /// The field written.
    pub field: &'static FieldInfo,
    /// `REGISTER.field`, for messages.
    pub qualified: &'static str,
    /// The value written before counting.
    pub write: u64,
    /// The value the part powers up with.
    pub power_on: u64,
    /// The public source that writes it (a `processors.xml` source id).
    pub source: &'static str,
    /// Why, in words, for messages.
    pub description: &'static str,
}

/// The Linux perf PMU (in `/sys/bus/event_source/devices`) that counts some counters of one
/// box, as the kernel driver names it.
#[derive(Debug)]
pub struct PerfInfo {
    /// The box (instance).
    pub instance: &'static str,
    /// The kernel's PMU name (`uncore_cbox_3`, `cpu`).
    pub pmu: &'static str,
    /// The box's counters it counts; the kernel numbers them from 0 in this order.
    pub counters: &'static [u32],
    /// The public source of the name (a `processors.xml` source id).
    pub source: &'static str,
    /// The driver that registers it, and its format.
    pub driver: &'static PerfDriverInfo,
}

impl PerfInfo {
    /// This entry for box `instance`, whose PMU the kernel calls `pmu`: how the generated
    /// tables write the PMUs of a unit's boxes, which differ only in those two.
    pub const fn of_box(self, instance: &'static str, pmu: &'static str) -> Self {
        Self {
            instance,
            pmu,
            ..self
        }
    }
}

/// A Linux perf driver's format for a kind of box: the `format/*` files its PMUs have.
#[derive(Debug)]
pub struct PerfDriverInfo {
    /// The spec's identifier (`snbep-generic`).
    pub id: &'static str,
    /// The kernel module or driver that registers the PMUs (`intel_uncore`).
    pub module: &'static str,
    /// The driver's attribute list the formats come from (`snbep_uncore_formats_attr`).
    pub group: &'static str,
    /// The public source (a `processors.xml` source id).
    pub source: &'static str,
    /// That source's title (`Linux kernel, arch/x86/events/intel/uncore_snbep.c`).
    pub source_title: &'static str,
    /// Its format fields, in the driver's order.
    pub formats: &'static [PerfFormatInfo],
}

/// One `format/<name>` file of a driver, and what of the spec it sets.
#[derive(Debug)]
pub struct PerfFormatInfo {
    /// The file name (`event`, `filter_tid`).
    pub name: &'static str,
    /// Its contents as the kernel writes them (`config:0-7,21`).
    pub config: &'static str,
    /// What it sets.
    pub target: FormatTarget,
}

/// What a perf format field sets: exactly one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatTarget {
    /// The counter control's field playing this role.
    Role(Role),
    /// The counter control's field of this name.
    Field(&'static str),
    /// The box register (a filter) of this name template.
    Register(&'static str),
    /// Nothing the spec describes; why.
    Unmapped(&'static str),
}

/// A box-level bit of one counter: the register, its field, and the bits for the counter.
#[derive(Debug, Clone, Copy)]
pub struct BoxBit {
    /// The register.
    pub register: &'static RegisterInfo,
    /// The field and the counter's bits in it.
    pub bits: RoleBits,
}

impl PmuInfo {
    /// The counter numbered `number`.
    pub fn counter(&self, number: u32) -> Option<&'static CounterInfo> {
        let counters: &'static [CounterInfo] = self.counters;
        counters.iter().find(|c| c.number == number)
    }

    /// The route of counter `counter` of box `instance`, if its overflow goes above the box.
    pub fn route(&self, instance: &str, counter: u32) -> Option<&'static RouteInfo> {
        let routes: &'static [RouteInfo] = self.routes;
        routes
            .iter()
            .find(|r| r.instances.contains(&instance) && r.counters.contains(&counter))
    }

    /// The box-level bit playing `role` for counter `counter`, among the box's controls,
    /// statuses and overflow clears.
    pub fn box_bit(&self, role: Role, counter: u32) -> Option<BoxBit> {
        let lists: [&'static [&'static RegisterInfo]; 3] =
            [self.controls, self.statuses, self.overflow_clears];
        lists.iter().flat_map(|l| l.iter()).find_map(|r| {
            r.role_bits(role, counter).map(|bits| BoxBit { register: r, bits })
        })
    }

    /// The box-level field playing a whole-box `role` ([`Role::Freeze`], ...).
    pub fn box_field(&self, role: Role) -> Option<(&'static RegisterInfo, &'static FieldInfo)> {
        self.controls
            .iter()
            .find_map(|r| r.role(role).map(|f| (*r, f)))
    }
}

/// The processor-wide level above every box.
#[derive(Debug)]
pub struct GlobalInfo {
    /// The unit whose registers these are.
    pub unit: &'static str,
    /// Its instance.
    pub instance: &'static str,
    /// Global control ([`Role::GlobalEnable`], [`Role::FreezeOnPmi`], ...).
    pub control: &'static RegisterInfo,
    /// Global status: the last hop of every route.
    pub status: &'static RegisterInfo,
    /// Global overflow clear.
    pub overflow_clear: Option<&'static RegisterInfo>,
}

impl GlobalInfo {
    /// The global-control field playing `role`.
    pub fn field(&self, role: Role) -> Option<&'static FieldInfo> {
        self.control.role(role)
    }

    /// What a PMI freezes: when the returned `freeze-on-pmi` field is set, a PMI clears the
    /// returned `global-enable` field.
    pub fn pmi_freeze(&self) -> Option<(&'static FieldInfo, &'static FieldInfo)> {
        Some((self.field(Role::FreezeOnPmi)?, self.field(Role::GlobalEnable)?))
    }

    /// The freeze-signal model (Xeon E5 v2 and later): an overflow of a counter whose
    /// overflow enable is set raises the freeze signal, which stops every box whose
    /// [`Role::FreezeEnable`] is set; the returned `global-freeze` field raises it by software
    /// and the `global-unfreeze` field lifts it. Both are write-only pulses: the freeze state
    /// cannot be read back.
    pub fn freeze_signal(&self) -> Option<(&'static FieldInfo, &'static FieldInfo)> {
        Some((self.field(Role::GlobalFreeze)?, self.field(Role::GlobalUnfreeze)?))
    }
}

/// A role field and the bits it has for one counter: the whole field, or one element of a
/// bitmap or shared field. A field of several bit ranges is always whole (the validator
/// gives no counters list to one), and these methods then cover every range.
#[derive(Debug, Clone, Copy)]
pub struct RoleBits {
    /// The field.
    pub field: &'static FieldInfo,
    /// Lowest bit, in register position (of the lowest range, for a field of several).
    pub lsb: u32,
    /// Width of the counter's share.
    pub width: u32,
}

impl RoleBits {
    /// Whether these are a field of several bit ranges, which the field itself gathers and
    /// scatters.
    const fn is_split(&self) -> bool {
        !self.field.split.is_empty()
    }

    /// The mask of these bits in register position.
    pub const fn mask(&self) -> u64 {
        if self.is_split() {
            self.field.mask()
        } else {
            self.max() << self.lsb
        }
    }

    /// Largest value.
    pub const fn max(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// The value within `raw`.
    pub const fn extract(&self, raw: u64) -> u64 {
        if self.is_split() {
            self.field.extract(raw)
        } else {
            (raw >> self.lsb) & self.max()
        }
    }

    /// `raw` with these bits set to `value`, or an error naming the field if it is too wide.
    pub fn insert(&self, register: &'static str, raw: u64, value: u64) -> Result<u64, FieldTooWide> {
        if self.is_split() {
            return self.field.insert(register, raw, value);
        }
        if value > self.max() {
            return Err(FieldTooWide {
                register,
                field: self.field.name,
                width: self.width,
                value,
            });
        }
        Ok((raw & !self.mask()) | (value << self.lsb))
    }
}

impl FieldInfo {
    /// The element of this field that stands for `counter`, if it names counters.
    pub fn element_of(&self, counter: u32) -> Option<u32> {
        self.counters
            .iter()
            .position(|&c| c == counter)
            .map(|p| p as u32)
    }
}

impl RegisterInfo {
    /// Element `index` of this register.
    pub const fn at(&'static self, index: u32) -> RegRef {
        RegRef::new(self, index)
    }

    /// The field called exactly `name`, for the named field constants of the generated `pmu`
    /// modules: evaluated at compile time there, so a name the register lacks stops the build.
    ///
    /// # Panics
    /// If the register has no field called `name`.
    pub const fn field_named(&'static self, name: &str) -> &'static FieldInfo {
        let table: &'static [FieldInfo] = self.fields;
        let mut i = 0;
        while i < table.len() {
            if str_eq(table[i].name, name) {
                return &table[i];
            }
            i += 1;
        }
        panic!("the register has no field of that name")
    }

    /// The field playing `role` (the first, if several fields share it).
    pub fn role(&self, role: Role) -> Option<&'static FieldInfo> {
        let fields: &'static [FieldInfo] = self.fields;
        fields.iter().find(|f| f.role == Some(role))
    }

    /// The bits playing `role` for counter `counter`: a field that names its counters gives
    /// the counter's element; a field that names none serves every counter of the register.
    pub fn role_bits(&self, role: Role, counter: u32) -> Option<RoleBits> {
        let fields: &'static [FieldInfo] = self.fields;
        fields.iter().filter(|f| f.role == Some(role)).find_map(|f| {
            if f.counters.is_empty() {
                return Some(RoleBits {
                    field: f,
                    lsb: f.lsb,
                    width: f.width(),
                });
            }
            let element = f.element_of(counter)?;
            let width = match f.repeat {
                Some(r) => r.element_width,
                None => f.width() / f.counters.len() as u32,
            };
            Some(RoleBits {
                field: f,
                lsb: f.lsb + element * width,
                width,
            })
        })
    }
}

/// Typed access to a layout through its roles: implemented by every register layout.
///
/// A role the layout lacks has width 0: reading it gives `None`, and writing any value but 0
/// is an error, so code written for one box runs on another without field names.
pub trait RoleAccess: Register {
    /// This value with the bits playing `role` for `counter` set to `value`.
    fn try_with_role(self, role: Role, counter: u32, value: u64) -> Result<Self, FieldTooWide> {
        match Self::INFO.role_bits(role, counter) {
            Some(bits) => bits
                .insert(Self::INFO.name, self.to_raw(), value)
                .map(Self::from_raw),
            None if value == 0 => Ok(self),
            None => Err(FieldTooWide {
                register: Self::INFO.name,
                field: "(no field with this role)",
                width: 0,
                value,
            }),
        }
    }

    /// The value of the bits playing `role` for `counter`, if the layout has them.
    fn role_value(self, role: Role, counter: u32) -> Option<u64> {
        Self::INFO
            .role_bits(role, counter)
            .map(|b| b.extract(self.to_raw()))
    }
}

impl<R: Register> RoleAccess for R {}

/// A per-counter event-select layout (a control with [`Role::Event`] and [`Role::Enable`]):
/// program "a counter" of any box without its field names.
///
/// ```
/// # #[cfg(all(feature = "xeon-7500", feature = "xeon-e5-2600"))] {
/// use pmu_regs::{CounterControl, xeon_7500::cbox::CEvtSel, xeon_e5_2600::qpi::QpiCtl};
///
/// fn count<C: CounterControl>(event: u8, umask: u8) -> C {
///     C::reset().try_with_event(event.into()).unwrap().try_with_umask(umask.into()).unwrap().with_enable(true)
/// }
/// assert!(count::<CEvtSel>(0x01, 0x0f).enabled());
/// assert_eq!(count::<QpiCtl>(0x38, 0).event(), 0x38);
/// # }
/// ```
pub trait CounterControl: Register {
    /// The [`Role::Enable`] field.
    const ENABLE: &'static FieldInfo;
    /// The [`Role::Event`] field.
    const EVENT: &'static FieldInfo;
    /// The [`Role::Umask`] field, if the layout has one.
    const UMASK: Option<&'static FieldInfo>;
    /// The [`Role::EventExt`] field, if any.
    const EVENT_EXT: Option<&'static FieldInfo>;
    /// The [`Role::Threshold`] field, if any.
    const THRESHOLD: Option<&'static FieldInfo>;
    /// The [`Role::Invert`] field, if any.
    const INVERT: Option<&'static FieldInfo>;
    /// The [`Role::Edge`] field, if any.
    const EDGE: Option<&'static FieldInfo>;
    /// The [`Role::OverflowEnable`] field, if any.
    const OVERFLOW_ENABLE: Option<&'static FieldInfo>;

    /// The reset value.
    fn reset() -> Self {
        Self::from_raw(Self::INFO.reset)
    }
    /// Whether counting is enabled.
    fn enabled(self) -> bool {
        Self::ENABLE.extract(self.to_raw()) != 0
    }
    /// This value with counting enabled or disabled.
    fn with_enable(self, on: bool) -> Self {
        set(self, Self::ENABLE, u64::from(on))
    }
    /// The event select.
    fn event(self) -> u64 {
        Self::EVENT.extract(self.to_raw())
    }
    /// This value with event select `v`, or an error if it does not fit.
    fn try_with_event(self, v: u64) -> Result<Self, FieldTooWide> {
        try_set(self, Some(Self::EVENT), v)
    }
    /// This value with unit mask `v` (a layout without a unit mask takes only 0).
    fn try_with_umask(self, v: u64) -> Result<Self, FieldTooWide> {
        try_set(self, Self::UMASK, v)
    }
    /// This value with the event-select extension bit (only `false` without one).
    fn try_with_event_ext(self, on: bool) -> Result<Self, FieldTooWide> {
        try_set(self, Self::EVENT_EXT, u64::from(on))
    }
    /// This value with threshold `v` (only 0 without a threshold).
    fn try_with_threshold(self, v: u64) -> Result<Self, FieldTooWide> {
        try_set(self, Self::THRESHOLD, v)
    }
    /// This value with the threshold comparison inverted (only `false` without one).
    fn try_with_invert(self, on: bool) -> Result<Self, FieldTooWide> {
        try_set(self, Self::INVERT, u64::from(on))
    }
    /// This value counting edges (only `false` without edge detection).
    fn try_with_edge(self, on: bool) -> Result<Self, FieldTooWide> {
        try_set(self, Self::EDGE, u64::from(on))
    }
    /// This value signalling overflow (only `false` without a PMI enable).
    fn try_with_overflow_enable(self, on: bool) -> Result<Self, FieldTooWide> {
        try_set(self, Self::OVERFLOW_ENABLE, u64::from(on))
    }
}

/// A counter layout (a register with a [`Role::Count`] field).
pub trait CounterValue: Register {
    /// The [`Role::Count`] field.
    const COUNT: &'static FieldInfo;

    /// The count.
    fn count(self) -> u64 {
        Self::COUNT.extract(self.to_raw())
    }
    /// A counter value holding `v`, or an error if it does not fit the counter.
    fn try_from_count(v: u64) -> Result<Self, FieldTooWide> {
        try_set(Self::from_raw(0), Some(Self::COUNT), v)
    }
}

/// A box-control layout (a register with whole-box roles such as [`Role::Freeze`]).
pub trait BoxControl: Register {
    /// [`Role::Freeze`], if any.
    const FREEZE: Option<&'static FieldInfo>;
    /// [`Role::FreezeEnable`], if any.
    const FREEZE_ENABLE: Option<&'static FieldInfo>;
    /// [`Role::ResetCounters`], if any.
    const RESET_COUNTERS: Option<&'static FieldInfo>;
    /// [`Role::ResetControls`], if any.
    const RESET_CONTROLS: Option<&'static FieldInfo>;

    /// This value with the box frozen or running (only `false` without a freeze bit).
    fn try_with_freeze(self, on: bool) -> Result<Self, FieldTooWide> {
        try_set(self, Self::FREEZE, u64::from(on))
    }
    /// This value with freezing enabled (only `false` without the bit).
    fn try_with_freeze_enable(self, on: bool) -> Result<Self, FieldTooWide> {
        try_set(self, Self::FREEZE_ENABLE, u64::from(on))
    }
    /// This value resetting the box's counters (only `false` without the bit).
    fn try_with_reset_counters(self, on: bool) -> Result<Self, FieldTooWide> {
        try_set(self, Self::RESET_COUNTERS, u64::from(on))
    }
    /// This value resetting the box's controls (only `false` without the bit).
    fn try_with_reset_controls(self, on: bool) -> Result<Self, FieldTooWide> {
        try_set(self, Self::RESET_CONTROLS, u64::from(on))
    }
}

/// `a == b`, in const context.
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

fn set<R: Register>(r: R, f: &'static FieldInfo, v: u64) -> R {
    R::from_raw((r.to_raw() & !f.mask()) | ((v & f.max()) << f.lsb))
}

fn try_set<R: Register>(r: R, f: Option<&'static FieldInfo>, v: u64) -> Result<R, FieldTooWide> {
    match f {
        Some(f) => f.insert(R::INFO.name, r.to_raw(), v).map(R::from_raw),
        None if v == 0 => Ok(r),
        None => Err(FieldTooWide {
            register: R::INFO.name,
            field: "(no field with this role)",
            width: 0,
            value: v,
        }),
    }
}
