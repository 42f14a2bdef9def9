//! Types every generated register shares: typed addresses, errors, the [`Register`] trait and
//! the metadata tables that describe each register for tools.

use core::fmt;
use core::marker::PhantomData;

/// A register layout: a newtype over the register's integer, with its metadata.
///
/// Implemented by every generated layout type. Backends use it to read and write any register
/// generically; `from_raw` drops bits that software must keep zero, so a value obtained this way
/// can always be written back.
pub trait Register: Copy + Eq + fmt::Debug + 'static {
    /// Everything the spec says about this register.
    const INFO: &'static RegisterInfo;
    /// Builds the value from raw bits, clearing reserved (must-write-zero) bits and anything
    /// above the register width.
    fn from_raw(raw: u64) -> Self;
    /// The raw bits, zero-extended to 64.
    fn to_raw(self) -> u64;
}

/// The address of an MSR whose layout is `R`.
///
/// The layout type parameter means an MSR address cannot be used where a PCI register is
/// expected, nor read as the wrong layout.
pub struct Msr<R> {
    address: u32,
    name: &'static str,
    layout: PhantomData<fn() -> R>,
}

impl<R> Msr<R> {
    /// An MSR at `address`, called `name` in the guide.
    pub const fn new(address: u32, name: &'static str) -> Self {
        Self {
            address,
            name,
            layout: PhantomData,
        }
    }
    /// The MSR number (the `ECX` operand of `RDMSR`, the offset in `/dev/cpu/N/msr`).
    pub const fn address(self) -> u32 {
        self.address
    }
    /// The register's name for this instance (`W_MSR_PMON_EVT_SEL2`).
    pub const fn name(self) -> &'static str {
        self.name
    }
}

impl<R> Clone for Msr<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for Msr<R> {}
impl<R> PartialEq for Msr<R> {
    fn eq(&self, other: &Self) -> bool {
        self.address == other.address
    }
}
impl<R> Eq for Msr<R> {}
impl<R> fmt::Debug for Msr<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (MSR {:#X})", self.name, self.address)
    }
}

/// A register in PCI configuration space whose layout is `R`.
///
/// The bus is not part of the address: each socket's uncore devices sit on a bus of their own,
/// which the runtime discovers by device id.
pub struct PciRegister<R> {
    device_id: u16,
    device: u8,
    function: u8,
    offset: u16,
    name: &'static str,
    layout: PhantomData<fn() -> R>,
}

impl<R> PciRegister<R> {
    /// A register at `offset` in the config space of device `device`, function `function`,
    /// whose vendor-8086 device id is `device_id`.
    pub const fn new(
        device_id: u16,
        device: u8,
        function: u8,
        offset: u16,
        name: &'static str,
    ) -> Self {
        Self {
            device_id,
            device,
            function,
            offset,
            name,
            layout: PhantomData,
        }
    }
    /// PCI device id (vendor 0x8086).
    pub const fn device_id(self) -> u16 {
        self.device_id
    }
    /// Device (slot) number on the socket's uncore bus.
    pub const fn device(self) -> u8 {
        self.device
    }
    /// Function number.
    pub const fn function(self) -> u8 {
        self.function
    }
    /// Byte offset in configuration space.
    pub const fn offset(self) -> u16 {
        self.offset
    }
    /// The register's name for this instance (`Q_P1_PCI_PMON_CTL0`).
    pub const fn name(self) -> &'static str {
        self.name
    }
}

impl<R> Clone for PciRegister<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for PciRegister<R> {}
impl<R> PartialEq for PciRegister<R> {
    fn eq(&self, other: &Self) -> bool {
        (self.device_id, self.function, self.offset) == (other.device_id, other.function, other.offset)
    }
}
impl<R> Eq for PciRegister<R> {}
impl<R> fmt::Debug for PciRegister<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (PCI {:04x} dev {} fn {} offset {:#x})",
            self.name, self.device_id, self.device, self.function, self.offset
        )
    }
}

/// A value does not fit in the field it was meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldTooWide {
    /// The register layout (`W_MSR_PMON_EVT_SEL{n}`).
    pub register: &'static str,
    /// The field.
    pub field: &'static str,
    /// The field's width in bits.
    pub width: u32,
    /// The value that was given.
    pub value: u64,
}

impl fmt::Display for FieldTooWide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x} does not fit in {}.{}, which is {} bit{} wide (largest value {:#x})",
            self.value,
            self.register,
            self.field,
            self.width,
            if self.width == 1 { "" } else { "s" },
            if self.width >= 64 { u64::MAX } else { (1u64 << self.width) - 1 }
        )
    }
}

impl core::error::Error for FieldTooWide {}

/// A raw value sets bits that software must write as zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReservedBitsSet {
    /// The register layout.
    pub register: &'static str,
    /// The offending bits.
    pub bits: u64,
}

impl fmt::Display for ReservedBitsSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x} sets reserved bits {:#x} of {}, which must be written as zero",
            self.bits, self.bits, self.register
        )?;
        f.write_str("; clear them, or start from the register's RESET value")
    }
}

impl core::error::Error for ReservedBitsSet {}

/// Address space of a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    /// Model-specific register.
    Msr,
    /// PCI configuration space.
    Pci,
}

impl Space {
    /// `"msr"` or `"pci"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Space::Msr => "msr",
            Space::Pci => "pci",
        }
    }
}

/// How software may access a field. See spec/README.md for how the guides' attributes map here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read/write.
    Rw,
    /// Read/write; hardware also changes it.
    RwV,
    /// Read only.
    Ro,
    /// Read only; hardware changes it.
    RoV,
    /// Write only.
    Wo,
    /// Write 1 to clear.
    W1c,
    /// Status bits hardware sets: reads show them, writing 1 clears them.
    Rw1c,
    /// Reserved: software must write zero.
    Rsv,
    /// Reserved value: reads undefined; written as zero.
    Rv,
    /// Reads zero; writes ignored.
    Ig,
}

impl Access {
    /// The spec's spelling (`"rw-v"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Access::Rw => "rw",
            Access::RwV => "rw-v",
            Access::Ro => "ro",
            Access::RoV => "ro-v",
            Access::Wo => "wo",
            Access::W1c => "w1c",
            Access::Rw1c => "rw1c",
            Access::Rsv => "rsv",
            Access::Rv => "rv",
            Access::Ig => "ig",
        }
    }
    /// The access kind the spec spells `name` (`"rw-v"`).
    ///
    /// # Panics
    /// If `name` is not one of the spec's spellings (a compile error in const context).
    pub const fn from_name(name: &str) -> Self {
        match name.as_bytes() {
            b"rw" => Access::Rw,
            b"rw-v" => Access::RwV,
            b"ro" => Access::Ro,
            b"ro-v" => Access::RoV,
            b"wo" => Access::Wo,
            b"w1c" => Access::W1c,
            b"rw1c" => Access::Rw1c,
            b"rsv" => Access::Rsv,
            b"rv" => Access::Rv,
            b"ig" => Access::Ig,
            _ => panic!("unknown access kind"),
        }
    }
    /// Software must keep these bits zero.
    pub const fn is_reserved(self) -> bool {
        matches!(self, Access::Rsv | Access::Rv)
    }
    /// Software may write the field.
    pub const fn is_writable(self) -> bool {
        matches!(
            self,
            Access::Rw | Access::RwV | Access::Wo | Access::W1c | Access::Rw1c
        )
    }
    /// Reading the field tells something.
    pub const fn is_readable(self) -> bool {
        matches!(
            self,
            Access::Rw | Access::RwV | Access::Ro | Access::RoV | Access::Rw1c
        )
    }
}

/// A processor family and its units.
#[derive(Debug)]
pub struct ProcessorInfo {
    /// Identifier (`xeon-7500`).
    pub id: &'static str,
    /// Rust module (`xeon_7500`).
    pub module: &'static str,
    /// Full name.
    pub name: &'static str,
    /// Intel documents the tables come from: (title, reference number).
    pub documents: &'static [(&'static str, &'static str)],
    /// CPUID display family and model (`(0x6, 0x3E)` for 06_3EH), if the spec gives them.
    pub cpuid: Option<(u32, u32)>,
    /// Intel's code names, most common first (`Ivy Bridge-EP`, `IvyTown`).
    pub code_names: &'static [&'static str],
    /// Units (boxes).
    pub units: &'static [&'static UnitInfo],
    /// The level above every box (global control and status), if the processor has one.
    pub global: Option<&'static crate::structure::GlobalInfo>,
    /// The processor's own event list for its core PMU (`processors.xml`'s `core-pmu`: the
    /// architectural CORE unit), if the spec has one.
    pub core_events: Option<&'static crate::core_events::CoreEventsInfo>,
}

/// A unit (box).
#[derive(Debug)]
pub struct UnitInfo {
    /// Processor id.
    pub processor: &'static str,
    /// Name as the guide uses it (`W`, `HA`).
    pub name: &'static str,
    /// Rust module (`wbox`).
    pub module: &'static str,
    /// One line.
    pub title: &'static str,
    /// What the unit does.
    pub description: &'static str,
    /// Instance names (`S0`, `S1`).
    pub instances: &'static [&'static str],
    /// Registers.
    pub registers: &'static [&'static RegisterInfo],
    /// Events the unit's counters can count.
    pub events: &'static [&'static EventInfo],
    /// The unit's PMU structure, if the spec declares one.
    pub pmu: Option<&'static crate::structure::PmuInfo>,
}

/// A register layout and every address that uses it.
#[derive(Debug)]
pub struct RegisterInfo {
    /// Processor id.
    pub processor: &'static str,
    /// Unit name.
    pub unit: &'static str,
    /// Name template: `{i}` is the instance, `{n}` the array index.
    pub name: &'static str,
    /// Rust layout type.
    pub type_name: &'static str,
    /// Width in bits (32 or 64).
    pub width: u32,
    /// Address space.
    pub space: Space,
    /// Array length.
    pub count: u32,
    /// CPUID bits that say how many of `count` a processor implements.
    pub count_cpuid: Option<&'static str>,
    /// Reset value.
    pub reset: u64,
    /// Bits that must be written as zero.
    pub reserved_mask: u64,
    /// Bits that read zero and ignore writes.
    pub ignored_mask: u64,
    /// Bits software may write.
    pub writable_mask: u64,
    /// What the register does.
    pub description: &'static str,
    /// Where the layout comes from.
    pub sources: &'static [&'static str],
    /// Addresses, or why none is known.
    pub addresses: Addresses,
    /// Fields, most significant first, covering every bit once.
    pub fields: &'static [FieldInfo],
    /// Errata and source conflicts, and how they were resolved.
    pub notes: &'static [NoteInfo],
}

impl RegisterInfo {
    /// The field called `name` (case-insensitive), ignoring reserved fields.
    pub fn field(&self, name: &str) -> Option<&'static FieldInfo> {
        self.fields
            .iter()
            .find(|f| !f.is_placeholder() && f.name.eq_ignore_ascii_case(name))
    }

    /// The known addresses (empty when unknown).
    pub fn known_addresses(&self) -> &'static [AddressInfo] {
        match self.addresses {
            Addresses::Known(a) => a,
            Addresses::Unknown(_) => &[],
        }
    }
}

/// Addresses of a register.
#[derive(Debug, Clone, Copy)]
pub enum Addresses {
    /// One per instance and index.
    Known(&'static [AddressInfo]),
    /// No source gives the address; the text says why.
    Unknown(&'static str),
}

/// One instance and index of a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressInfo {
    /// Concrete name (`S1_MSR_PMON_SUMMARY`).
    pub name: &'static str,
    /// Instance name.
    pub instance: &'static str,
    /// Array index.
    pub index: u32,
    /// Where it is.
    pub location: Location,
    /// Public source of the address.
    pub source: &'static str,
}

/// A location in an address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Location {
    /// MSR number.
    Msr(u32),
    /// PCI config-space register.
    Pci {
        /// Vendor-8086 device id.
        device_id: u16,
        /// Device (slot) number.
        device: u8,
        /// Function.
        function: u8,
        /// Config-space offset.
        offset: u16,
    },
}

/// A bit field.
#[derive(Debug)]
pub struct FieldInfo {
    /// Name as in the guide (`{n}` for bit arrays).
    pub name: &'static str,
    /// The Rust name of its accessors (`pmc_en` for `PMC{n}_EN`), which `Debug` prints; the
    /// guide's name for reserved fields.
    pub ident: &'static str,
    /// Least significant bit.
    pub lsb: u32,
    /// Most significant bit.
    pub msb: u32,
    /// Access kind.
    pub access: Access,
    /// Reset value, in field position (not shifted).
    pub reset: u64,
    /// What it does.
    pub description: &'static str,
    /// Named values.
    pub values: &'static [ValueInfo],
    /// For CPUID-sized bit arrays.
    pub repeat: Option<RepeatInfo>,
    /// What the field does for the PMU, if the spec gives it a role.
    pub role: Option<crate::structure::Role>,
    /// The counters the field's elements stand for, lowest bits first (empty: the field
    /// serves the one counter of its register element).
    pub counters: &'static [u32],
}

impl FieldInfo {
    /// Width in bits.
    pub const fn width(&self) -> u32 {
        self.msb - self.lsb + 1
    }
    /// Largest value the field holds.
    pub const fn max(&self) -> u64 {
        if self.width() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width()) - 1
        }
    }
    /// The field's bits in register position.
    pub const fn mask(&self) -> u64 {
        self.max() << self.lsb
    }
    /// The field's value within `raw`.
    pub const fn extract(&self, raw: u64) -> u64 {
        (raw >> self.lsb) & self.max()
    }
    /// `raw` with this field replaced by `value`, or an error naming the field.
    pub fn insert(&self, register: &'static str, raw: u64, value: u64) -> Result<u64, FieldTooWide> {
        if value > self.max() {
            return Err(FieldTooWide {
                register,
                field: self.name,
                width: self.width(),
                value,
            });
        }
        Ok((raw & !self.mask()) | (value << self.lsb))
    }
    /// Reserved or ignored bits: no accessors, and the name may repeat.
    pub const fn is_placeholder(&self) -> bool {
        matches!(self.access, Access::Rsv | Access::Rv | Access::Ig)
    }
    /// The named value `value`, if the guide defines one.
    pub fn value_name(&self, value: u64) -> Option<&'static ValueInfo> {
        self.values.iter().find(|v| v.value == value)
    }
}

/// A named value of a field.
#[derive(Debug)]
pub struct ValueInfo {
    /// The value.
    pub value: u64,
    /// Name.
    pub name: &'static str,
    /// Meaning.
    pub description: &'static str,
}

/// A bit array whose length depends on CPUID.
#[derive(Debug, Clone, Copy)]
pub struct RepeatInfo {
    /// Bits per element.
    pub element_width: u32,
    /// Elements the bit range can hold.
    pub max_count: u32,
    /// CPUID bits giving the implemented count.
    pub count_cpuid: Option<&'static str>,
}

/// An erratum, source conflict or remark recorded in the spec.
#[derive(Debug)]
pub struct NoteInfo {
    /// `erratum`, `source-conflict` or `info`.
    pub kind: &'static str,
    /// One line.
    pub title: &'static str,
    /// What the sources say, what was decided, and why.
    pub text: &'static str,
}

/// An event a unit's counters can count (from Intel's public event list: facts only).
#[derive(Debug, PartialEq, Eq)]
pub struct EventInfo {
    /// Intel's name (`UNC_H_REQUESTS.READS`).
    pub name: &'static str,
    /// Event select.
    pub code: u8,
    /// Unit mask.
    pub umask: u8,
    /// Needs the event-select extension bit.
    pub ext_sel: bool,
    /// Bit n set: counter n may count it.
    pub counters: u32,
    /// Filter fields it uses, as Intel names them ("" for none).
    pub filters: &'static str,
    /// The value it puts in the control's `threshold` role (a core event's counter mask;
    /// 0: none).
    pub threshold: u8,
    /// Sets the control's `invert` role.
    pub invert: bool,
    /// Sets the control's `edge` role.
    pub edge: bool,
    /// Sets the control's `any-thread` role.
    pub any_thread: bool,
}

impl EventInfo {
    /// Whether counter `n` may count this event.
    pub const fn can_count_on(&self, n: u32) -> bool {
        n < 32 && self.counters >> n & 1 != 0
    }
}

/// The bits of a field `width` wide at `lsb`.
pub const fn field_mask(lsb: u32, width: u32) -> u64 {
    (if width >= 64 { u64::MAX } else { (1u64 << width) - 1 }) << lsb
}

/// Bits `msb:lsb` of `raw`, shifted down. Every generated getter is this and a cast.
#[inline(always)]
pub const fn get_bits(raw: u64, msb: u32, lsb: u32) -> u64 {
    (raw >> lsb) & field_mask(0, msb - lsb + 1)
}

/// `raw` with bits `msb:lsb` replaced by `value`. Every generated `with_*` is this.
///
/// # Panics
/// If `value` does not fit in the field (a compile error in const context). For a field exactly
/// as wide as its value type the check cannot fail, and the optimiser removes it.
#[inline(always)]
pub const fn set_bits(raw: u64, msb: u32, lsb: u32, value: u64) -> u64 {
    let max = field_mask(0, msb - lsb + 1);
    assert!(value <= max, "value too wide for its field; the try_with_ method returns an error instead");
    (raw & !(max << lsb)) | (value << lsb)
}

/// `raw` with bits `msb:lsb` replaced by `value`, or an error naming the register and field if
/// `value` does not fit. Every generated `try_with_*` is this.
#[inline(always)]
pub const fn try_set_bits(
    raw: u64,
    msb: u32,
    lsb: u32,
    value: u64,
    register: &'static str,
    field: &'static str,
) -> Result<u64, FieldTooWide> {
    let width = msb - lsb + 1;
    if value > field_mask(0, width) {
        return Err(FieldTooWide { register, field, width, value });
    }
    Ok(set_bits(raw, msb, lsb, value))
}

/// Element `n` of a bit array whose elements are `element_width` bits from `lsb`.
///
/// # Panics
/// If `n` is `count` or more.
#[inline(always)]
pub const fn get_element(raw: u64, lsb: u32, element_width: u32, count: u32, n: u32) -> u64 {
    assert!(n < count, "bit array index out of range");
    let at = lsb + n * element_width;
    get_bits(raw, at + element_width - 1, at)
}

/// `raw` with element `n` of a bit array replaced by `value`.
///
/// # Panics
/// If `n` is `count` or more, or `value` is wider than an element.
#[inline(always)]
pub const fn set_element(raw: u64, lsb: u32, element_width: u32, count: u32, n: u32, value: u64) -> u64 {
    assert!(n < count, "bit array index out of range");
    let at = lsb + n * element_width;
    set_bits(raw, at + element_width - 1, at, value)
}

/// The bits of `fields` that are reserved (must be written as zero).
pub const fn reserved_mask(fields: &[FieldInfo]) -> u64 {
    let (mut mask, mut i) = (0, 0);
    while i < fields.len() {
        if fields[i].access.is_reserved() {
            mask |= fields[i].mask();
        }
        i += 1;
    }
    mask
}

/// The bits of `fields` that read zero and ignore writes.
pub const fn ignored_mask(fields: &[FieldInfo]) -> u64 {
    let (mut mask, mut i) = (0, 0);
    while i < fields.len() {
        if matches!(fields[i].access, Access::Ig) {
            mask |= fields[i].mask();
        }
        i += 1;
    }
    mask
}

/// The bits of `fields` software may write.
pub const fn writable_mask(fields: &[FieldInfo]) -> u64 {
    let (mut mask, mut i) = (0, 0);
    while i < fields.len() {
        if fields[i].access.is_writable() {
            mask |= fields[i].mask();
        }
        i += 1;
    }
    mask
}

/// The reset value the fields add up to.
pub const fn reset_of(fields: &[FieldInfo]) -> u64 {
    let mut value = 0;
    let mut i = 0;
    while i < fields.len() {
        value |= fields[i].reset << fields[i].lsb;
        i += 1;
    }
    value
}

/// A field's description: its doc comment without the leading space, or what its access
/// says for reserved and ignored bits.
pub const fn field_description(doc: &[&'static str], access: Access) -> &'static str {
    match doc {
        [d, ..] => d.trim_ascii_start(),
        [] => match access {
            Access::Ig => "Reads zero; writes ignored.",
            _ => "Reserved; write zero.",
        },
    }
}

/// The named values of a field: `values` if given, else none.
pub const fn field_values(values: &[&'static [ValueInfo]]) -> &'static [ValueInfo] {
    match values {
        [v, ..] => v,
        [] => &[],
    }
}

/// A register's addresses: `known`, unless the spec gives a reason why none is known.
pub const fn addresses(known: &'static [AddressInfo], unknown: &[&'static str]) -> Addresses {
    match unknown {
        [reason, ..] => Addresses::Unknown(reason),
        [] => Addresses::Known(known),
    }
}

/// `Debug` of every layout: each field that is not reserved by its Rust name, a named value by
/// its name, a one-bit field as a bool, anything else in hex.
pub fn debug_fields(f: &mut fmt::Formatter<'_>, type_name: &str, fields: &[FieldInfo], raw: u64) -> fmt::Result {
    let mut s = f.debug_struct(type_name);
    for field in fields.iter().filter(|x| !x.is_placeholder()) {
        let v = field.extract(raw);
        match field.value_name(v) {
            Some(named) => s.field(field.ident, &format_args!("{}", named.name)),
            None if field.width() == 1 => s.field(field.ident, &(v != 0)),
            None => s.field(field.ident, &format_args!("{v:#x}")),
        };
    }
    s.finish()
}

// The macros below are what each generated unit module is written in: one `register!` per
// layout, one line per field, so the generated source reads as the guide's table. Every path
// in them is absolute, so a register type named `Result` or `Msr` cannot capture one.

/// An enum for a field whose values the guide names:
///
/// ```text
/// field_enum! {
///     /// Values of `W_MSR_PMON_EVT_SEL{n}.invert` (bit 23).
///     pub enum WEvtSelInvert {
///         /// count when the event increment is >= thresh
///         Ge = 0 "ge",
///     }
/// }
/// ```
///
/// The string after each value is the guide's name for it.
macro_rules! field_enum {
    (
        #[doc = $doc:literal]
        pub enum $ty:ident {
            $(#[doc = $vdoc:literal] $variant:ident = $value:literal $name:literal,)+
        }
    ) => {
        #[doc = $doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
        #[repr(u8)]
        pub enum $ty {
            $(#[doc = $vdoc] $variant = $value,)+
        }

        impl $ty {
            /// The values with their names and meanings, for tools.
            pub const VALUES: &'static [$crate::support::ValueInfo] = &[$($crate::support::ValueInfo { value: $value, name: $name, description: $vdoc.trim_ascii_start() }),+];

            /// The variant for a field value. Every value of the field is named, so the last
            /// arm only ever sees the last value.
            pub const fn from_bits(v: u8) -> Self {
                field_enum!(@match v, $($variant = $value),+)
            }

            /// The field value.
            pub const fn bits(self) -> u8 {
                self as u8
            }
        }
    };
    (@match $v:ident, $($variant:ident = $value:literal),+) => {
        match $v {
            $($value => Self::$variant,)+
            _ => field_enum!(@last $($variant)+),
        }
    };
    (@last $first:ident $($rest:ident)+) => { field_enum!(@last $($rest)+) };
    (@last $last:ident) => { Self::$last };
}

/// The lowest bit of `bit 23` or `bits 31:24`.
macro_rules! lsb {
    ($msb:literal) => { $msb };
    ($msb:literal : $lsb:literal) => { $lsb };
}

/// The guide's name of a field: its own string if it has one, else its Rust name.
macro_rules! field_name {
    ($name:literal; $($id:ident)?) => { $name };
    (; $id:ident) => { stringify!($id) };
}

/// The accessors of one field, as its value type says (see `register!`).
macro_rules! field_fns {
    ($raw:ident, bool, $msb:literal, $lsb:expr, $reg:expr, $name:expr, $fdoc:literal, $summary:expr, [$($get:ident)?], [$($with:ident)?], [$($try:ident)?]) => {
        $(#[doc = $fdoc] #[doc = ""] #[doc = $summary] #[inline] pub const fn $get(self) -> bool {
            $crate::support::get_bits(self.0 as u64, $msb, $lsb) != 0
        })?
        $(#[doc = "This value with the field set to `v`."] #[doc = ""] #[doc = $fdoc] #[doc = ""] #[doc = $summary] #[inline] pub const fn $with(self, v: bool) -> Self {
            Self($crate::support::set_bits(self.0 as u64, $msb, $lsb, v as u64) as $raw)
        })?
    };
    ($raw:ident, [$t:ident; $count:literal], $msb:literal, $lsb:expr, $reg:expr, $name:expr, $fdoc:literal, $summary:expr, [$($get:ident)?], [$($with:ident)?], [$($try:ident)?]) => {
        $(#[doc = "Element `n` of the bit array:"] #[doc = ""] #[doc = $fdoc] #[doc = ""] #[doc = $summary] #[doc = ""] #[doc = concat!("# Panics\nIf `n` is ", stringify!($count), " or more.")]
        #[inline] pub const fn $get(self, n: u32) -> $t {
            field_fns!(@from $t, $crate::support::get_element(self.0 as u64, $lsb, ($msb + 1 - $lsb) / $count, $count, n))
        })?
        $(#[doc = "This value with element `n` of the bit array set to `v`:"] #[doc = ""] #[doc = $fdoc] #[doc = ""] #[doc = $summary] #[doc = ""] #[doc = concat!("# Panics\nIf `n` is ", stringify!($count), " or more.")]
        #[inline] pub const fn $with(self, n: u32, v: $t) -> Self {
            Self($crate::support::set_element(self.0 as u64, $lsb, ($msb + 1 - $lsb) / $count, $count, n, v as u64) as $raw)
        })?
    };
    ($raw:ident, u8, $($rest:tt)*) => { field_fns!(@int $raw, u8, $($rest)*); };
    ($raw:ident, u16, $($rest:tt)*) => { field_fns!(@int $raw, u16, $($rest)*); };
    ($raw:ident, u32, $($rest:tt)*) => { field_fns!(@int $raw, u32, $($rest)*); };
    ($raw:ident, u64, $($rest:tt)*) => { field_fns!(@int $raw, u64, $($rest)*); };
    (@int $raw:ident, $t:ident, $msb:literal, $lsb:expr, $reg:expr, $name:expr, $fdoc:literal, $summary:expr, [$($get:ident)?], [$($with:ident)?], [$($try:ident)?]) => {
        $(#[doc = $fdoc] #[doc = ""] #[doc = $summary] #[inline] pub const fn $get(self) -> $t {
            $crate::support::get_bits(self.0 as u64, $msb, $lsb) as $t
        })?
        $(#[doc = "This value with the field set to `v`."] #[doc = ""] #[doc = $fdoc] #[doc = ""] #[doc = $summary] #[doc = ""]
        #[doc = "# Panics\nIf `v` does not fit in the field (a compile error in const context)."]
        #[inline] pub const fn $with(self, v: $t) -> Self {
            Self($crate::support::set_bits(self.0 as u64, $msb, $lsb, v as u64) as $raw)
        })?
        $(#[doc = "This value with the field set to `v`, or an error if `v` does not fit."] #[doc = ""] #[doc = $fdoc] #[doc = ""] #[doc = $summary]
        #[inline] pub const fn $try(self, v: $t) -> ::core::result::Result<Self, $crate::support::FieldTooWide> {
            match $crate::support::try_set_bits(self.0 as u64, $msb, $lsb, v as u64, $reg, $name) {
                ::core::result::Result::Ok(raw) => ::core::result::Result::Ok(Self(raw as $raw)),
                ::core::result::Result::Err(e) => ::core::result::Result::Err(e),
            }
        })?
    };
    // Any other type is a `field_enum!`: every value is named.
    ($raw:ident, $t:ident, $msb:literal, $lsb:expr, $reg:expr, $name:expr, $fdoc:literal, $summary:expr, [$($get:ident)?], [$($with:ident)?], [$($try:ident)?]) => {
        $(#[doc = $fdoc] #[doc = ""] #[doc = $summary] #[inline] pub const fn $get(self) -> $t {
            $t::from_bits($crate::support::get_bits(self.0 as u64, $msb, $lsb) as u8)
        })?
        $(#[doc = "This value with the field set to `v`."] #[doc = ""] #[doc = $fdoc] #[doc = ""] #[doc = $summary] #[inline] pub const fn $with(self, v: $t) -> Self {
            Self($crate::support::set_bits(self.0 as u64, $msb, $lsb, v.bits() as u64) as $raw)
        })?
    };
    (@repeat [$t:ident; $count:literal], $msb:literal, $lsb:expr $(, $cpuid:literal)?) => {
        ::core::option::Option::Some($crate::support::RepeatInfo {
            element_width: ($msb + 1 - $lsb) / $count,
            max_count: $count,
            count_cpuid: [$(::core::option::Option::Some($cpuid),)? ::core::option::Option::None][0],
        })
    };
    (@repeat $t:tt, $msb:literal, $lsb:expr) => { ::core::option::Option::None };
    (@from bool, $v:expr) => { $v != 0 };
    (@from $t:ident, $v:expr) => { $v as $t };
}

/// One address: `msr(0xC80)` or `pci(device_id: .., device: .., function: .., offset: ..)`.
macro_rules! location {
    (@ctor msr($addr:literal) $name:literal) => { $crate::support::Msr::new($addr, $name) };
    (@ctor pci(device_id: $id:literal, device: $dev:literal, function: $func:literal, offset: $off:literal) $name:literal) => {
        $crate::support::PciRegister::new($id, $dev, $func, $off, $name)
    };
    (msr($addr:literal)) => { $crate::support::Location::Msr($addr) };
    (pci(device_id: $id:literal, device: $dev:literal, function: $func:literal, offset: $off:literal)) => {
        $crate::support::Location::Pci { device_id: $id, device: $dev, function: $func, offset: $off }
    };
}

/// Declares one register layout: the newtype over its integer, its field table, masks and reset
/// value, a getter and `with_` builder per field, `Debug` from the field table, the
/// [`Register`] impl, rustdoc with the bit table, the metadata static and typed addresses.
///
/// The input reads as the guide's table:
///
/// ```text
/// register! {
///     /// What the register does.
///     pub struct WEvtSel(u64): "W_MSR_PMON_EVT_SEL{n}", MSR[4], unit "W" of "xeon-7500", static W_EVT_SEL_INFO;
///     source "Intel ... Table 2-98, p. 2-127";
///     note "erratum" "One-line title": "What the sources say, what was decided, and why.";
///
///     bit 63 ig "ig" = 0x0;
///     /// Threshold compared with the per-cycle event increment.
///     bits 31:24 rw thresh: u8 = 0x0 { get: thresh, with: with_thresh };
///     /// Selects the sense of the threshold comparison.
///     bit 23 rw invert: WEvtSelInvert = 0x0, values WEvtSelInvert::VALUES { get: invert, with: with_invert };
///
///     "W": const W_MSR_PMON_EVT_SEL: [Msr<WEvtSel>; 4] = [0: msr(0xC90) "W_MSR_PMON_EVT_SEL0" from "likwid", ...];
/// }
/// ```
///
/// A field line: its bits; its access (`rw`, `rw-v`, `ro`, `ro-v`, `wo`, `w1c`, or for
/// reserved and ignored bits `rsv`, `rv`, `ig` and the guide's name); the guide's name when it
/// differs from the Rust name; the value type (`bool`, `u8`..`u64`, a `field_enum!`, or
/// `[bool; 32]` for a bit array sized by CPUID); the reset value; named values; the field's
/// PMU role and the counters its bits stand for; and the accessors. An address line: the instance, the constant, and each address with its public
/// source.
macro_rules! register {
    (
        #[doc = $desc:literal]
        pub struct $ty:ident($raw:ident): $name:literal, $space:ident[$count:literal], unit $unit:literal of $proc:literal, static $info:ident;
        $(count_cpuid $cpuid:literal;)?
        $(source $src:literal;)*
        $(note $nkind:literal $ntitle:literal: $ntext:literal;)*
        $(address unknown: $reason:literal;)?
        $(
            $(
                #[doc = $fdoc:literal]
                $bitkw:ident $msb:literal $(: $lsb:literal)? $acc:ident $(- $accv:ident)? $id:ident $($fname:literal)?: $ft:tt = $reset:literal
                $(, values $vals:path)? $(, cpuid $fcpuid:literal)? $(, role $role:ident [$($ctr:literal),*])?
                { $(get: $get:ident)? $($(,)? with: $with:ident)? $(, try_with: $try:ident)? }
            )?
            $(bit $bbit:literal $bacc:ident $bname:literal = $breset:literal)?
            $(bits $pmsb:literal : $plsb:literal $pacc:ident $pname:literal = $preset:literal)?;
        )+
        $(
            $inst:literal: const $cname:ident: $aty:ty =
                $($sp1:ident $loc1:tt $aname1:literal from $asrc1:literal)?
                $([$($idx:literal: $sp:ident $loc:tt $aname:literal from $asrc:literal),+ $(,)?])?;
        )*
    ) => {
        #[doc = $desc]
        #[doc = ""]
        #[doc = concat!("`", $name, "`: ", stringify!($raw), " ", stringify!($space), " register of the ", $unit, " unit (", $proc, ").")]
        #[doc = ""]
        #[doc = "| Bits | Field | Access | Reset | Description |"]
        #[doc = "|---|---|---|---|---|"]
        $(
            $(#[doc = concat!("| ", stringify!($msb), $(":", stringify!($lsb),)? " | `", field_name!($($fname)?; $id), "` | ", stringify!($acc), $("-", stringify!($accv),)? " | ", stringify!($reset), " |", $fdoc, " |")])?
            $(#[doc = concat!("| ", stringify!($bbit), " | `", $bname, "` | ", stringify!($bacc), " | ", stringify!($breset), " | |")])?
            $(#[doc = concat!("| ", stringify!($pmsb), ":", stringify!($plsb), " | `", $pname, "` | ", stringify!($pacc), " | ", stringify!($preset), " | |")])?
        )+
        #[doc = ""]
        #[doc = "Reserved bits (`rsv`, `rv`) must be written as zero; ignored bits (`ig`) read as zero."]
        #[doc = ""]
        #[doc = "Sources:"]
        $(#[doc = concat!("- ", $src)])*
        $(#[doc = ""] #[doc = concat!("**", $ntitle, "** (", $nkind, "): ", $ntext)])*
        $(#[doc = ""] #[doc = concat!("**Address unknown:** ", $reason)])?
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
        #[repr(transparent)]
        pub struct $ty($raw);

        // A field at bit 0, or a layout without reserved bits, makes some shifts and masks
        // no-ops that the optimiser removes.
        #[allow(clippy::bad_bit_mask, clippy::identity_op, clippy::erasing_op, clippy::unnecessary_cast)]
        impl $ty {
            /// The fields, most significant first, reserved ones included.
            pub const FIELDS: &'static [$crate::support::FieldInfo] = &[$(
                $($crate::support::FieldInfo {
                    name: field_name!($($fname)?; $id),
                    ident: stringify!($id),
                    lsb: lsb!($msb $(: $lsb)?),
                    msb: $msb,
                    access: $crate::support::Access::from_name(concat!(stringify!($acc), $("-", stringify!($accv),)?)),
                    reset: $reset,
                    description: $crate::support::field_description(&[$fdoc], $crate::support::Access::Rw),
                    values: $crate::support::field_values(&[$($vals)?]),
                    repeat: field_fns!(@repeat $ft, $msb, lsb!($msb $(: $lsb)?) $(, $fcpuid)?),
                    role: [$(::core::option::Option::Some($crate::structure::Role::$role),)? ::core::option::Option::None][0],
                    counters: &[$($($ctr),*)?],
                })?
                $($crate::support::FieldInfo {
                    name: $bname,
                    ident: $bname,
                    lsb: $bbit,
                    msb: $bbit,
                    access: $crate::support::Access::from_name(stringify!($bacc)),
                    reset: $breset,
                    description: $crate::support::field_description(&[], $crate::support::Access::from_name(stringify!($bacc))),
                    values: &[],
                    repeat: ::core::option::Option::None,
                    role: ::core::option::Option::None,
                    counters: &[],
                })?
                $($crate::support::FieldInfo {
                    name: $pname,
                    ident: $pname,
                    lsb: $plsb,
                    msb: $pmsb,
                    access: $crate::support::Access::from_name(stringify!($pacc)),
                    reset: $preset,
                    description: $crate::support::field_description(&[], $crate::support::Access::from_name(stringify!($pacc))),
                    values: &[],
                    repeat: ::core::option::Option::None,
                    role: ::core::option::Option::None,
                    counters: &[],
                })?
            ),+];
            /// The value after reset.
            pub const RESET: Self = Self($crate::support::reset_of(Self::FIELDS) as $raw);
            /// Bits software must write as zero (`rsv` and `rv` fields). No safe method sets them.
            pub const RESERVED_MASK: $raw = $crate::support::reserved_mask(Self::FIELDS) as $raw;
            /// Bits that read as zero and ignore writes (`ig` fields).
            pub const IGNORED_MASK: $raw = $crate::support::ignored_mask(Self::FIELDS) as $raw;
            /// Bits software may write (`rw`, `rw-v`, `wo`, `w1c` and `rw1c` fields).
            pub const WRITABLE_MASK: $raw = $crate::support::writable_mask(Self::FIELDS) as $raw;

            /// The value of `raw` with the reserved bits cleared, so that it is always safe
            /// to write. Use [`Self::try_from_bits`] to reject such bits instead.
            #[inline]
            pub const fn from_bits(raw: $raw) -> Self {
                Self(raw & !Self::RESERVED_MASK)
            }

            /// `raw` as it is, or an error if it sets any reserved bit.
            #[inline]
            pub const fn try_from_bits(raw: $raw) -> ::core::result::Result<Self, $crate::support::ReservedBitsSet> {
                if raw & Self::RESERVED_MASK != 0 {
                    ::core::result::Result::Err($crate::support::ReservedBitsSet { register: $name, bits: (raw & Self::RESERVED_MASK) as u64 })
                } else {
                    ::core::result::Result::Ok(Self(raw))
                }
            }

            /// The raw register value.
            #[inline]
            pub const fn bits(self) -> $raw {
                self.0
            }

            $($(field_fns!(
                $raw, $ft, $msb, lsb!($msb $(: $lsb)?), $name, field_name!($($fname)?; $id),
                $fdoc, concat!("`", field_name!($($fname)?; $id), "`: ", stringify!($bitkw), " ", stringify!($msb), $(":", stringify!($lsb),)? ", ", stringify!($acc), $("-", stringify!($accv),)? ", reset ", stringify!($reset), ".")
                ,
                [$($get)?], [$($with)?], [$($try)?]
            );)?)+
        }

        impl ::core::default::Default for $ty {
            /// The reset value.
            fn default() -> Self {
                Self::RESET
            }
        }

        impl ::core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                $crate::support::debug_fields(f, stringify!($ty), Self::FIELDS, self.0 as u64)
            }
        }

        impl $crate::support::Register for $ty {
            const INFO: &'static $crate::support::RegisterInfo = &$info;
            fn from_raw(raw: u64) -> Self {
                Self::from_bits(raw as $raw)
            }
            fn to_raw(self) -> u64 {
                self.0 as u64
            }
        }

        $(
            #[doc = concat!("`", $name, "` of instance ", $inst, ".")]
            pub const $cname: $aty =
                $(location!(@ctor $sp1 $loc1 $aname1))?
                $([$(location!(@ctor $sp $loc $aname)),+])?;
        )*

        static $info: $crate::support::RegisterInfo = $crate::support::RegisterInfo {
            processor: $proc,
            unit: $unit,
            name: $name,
            type_name: stringify!($ty),
            width: <$raw>::BITS,
            space: register!(@space $space),
            count: $count,
            count_cpuid: [$(::core::option::Option::Some($cpuid),)? ::core::option::Option::None][0],
            reset: $ty::RESET.0 as u64,
            reserved_mask: $ty::RESERVED_MASK as u64,
            ignored_mask: $ty::IGNORED_MASK as u64,
            writable_mask: $ty::WRITABLE_MASK as u64,
            description: $desc.trim_ascii_start(),
            sources: &[$($src),*],
            addresses: $crate::support::addresses(&[$(
                $($crate::support::AddressInfo { name: $aname1, instance: $inst, index: 0, location: location!($sp1 $loc1), source: $asrc1 },)?
                $($($crate::support::AddressInfo { name: $aname, instance: $inst, index: $idx, location: location!($sp $loc), source: $asrc },)+)?
            )*], &[$($reason)?]),
            fields: $ty::FIELDS,
            notes: &[$($crate::support::NoteInfo { kind: $nkind, title: $ntitle, text: $ntext }),*],
        };
    };
    (@space MSR) => { $crate::support::Space::Msr };
    (@space PCI) => { $crate::support::Space::Pci };
}

/// A unit's typed events: an `Event` type whose values only this unit's counter controls take
/// (`with_event`), with a constant per event.
// A spec tree with no event lists (the test fixtures) never invokes it.
#[allow(unused_macros)]
macro_rules! unit_events {
    ([$($ctl:ident $ext:ident),+], [$($ident:ident = $name:literal $code:literal $umask:literal $ext_sel:literal $counters:literal $filters:literal),* $(,)?]) => {
        /// An event of this unit. Only this unit's counter controls take it (`with_event`), so
        /// an event of one unit cannot be programmed into another's counter.
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq)]
        pub struct Event(&'static $crate::support::EventInfo);

        impl Event {
            $(
                #[doc = concat!("`", $name, "`: event select ", stringify!($code), ", umask ", stringify!($umask), ", counters ", stringify!($counters), " (bit n: counter n).")]
                pub const $ident: Event = Event(&$crate::support::EventInfo { name: $name, code: $code, umask: $umask, ext_sel: $ext_sel, counters: $counters, filters: $filters, threshold: 0, invert: false, edge: false, any_thread: false });
            )*
        }

        impl Event {
            /// Every event of the unit.
            pub const ALL: &'static [Event] = &[$(Event::$ident),*];
            /// The event's facts.
            pub const fn info(self) -> &'static $crate::support::EventInfo {
                self.0
            }
            /// Whether counter `n` may count it.
            pub const fn can_count_on(self, n: u32) -> bool {
                self.0.can_count_on(n)
            }
        }

        const EVENT_INFOS: &[&$crate::support::EventInfo] = &[$(Event::$ident.0),*];

        $(unit_events!(@with $ctl $ext);)+
    };
    (@with $ctl:ident ext) => {
        impl $ctl {
            /// This value set to count `event`: its event select, umask and extension bit.
            #[inline]
            pub const fn with_event(self, event: Event) -> Self {
                self.with_ev_sel(event.0.code).with_umask(event.0.umask).with_ev_sel_ext(event.0.ext_sel)
            }
        }
    };
    (@with $ctl:ident ext_noumask) => {
        impl $ctl {
            /// This value set to count `event`: its event select and extension bit (this box has
            /// no unit mask; the events it takes have umask 0).
            #[inline]
            pub const fn with_event(self, event: Event) -> Self {
                self.with_ev_sel(event.0.code).with_ev_sel_ext(event.0.ext_sel)
            }
        }
    };
    (@with $ctl:ident noext_noumask) => {
        impl $ctl {
            /// This value set to count `event`: its event select (this box has no unit mask).
            #[inline]
            pub const fn with_event(self, event: Event) -> Self {
                self.with_ev_sel(event.0.code)
            }
        }
    };
    (@with $ctl:ident noext) => {
        impl $ctl {
            /// This value set to count `event`: its event select and umask.
            #[inline]
            pub const fn with_event(self, event: Event) -> Self {
                self.with_ev_sel(event.0.code).with_umask(event.0.umask)
            }
        }
    };
}

