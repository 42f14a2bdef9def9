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
            Access::Rsv => "rsv",
            Access::Rv => "rv",
            Access::Ig => "ig",
        }
    }
    /// Software must keep these bits zero.
    pub const fn is_reserved(self) -> bool {
        matches!(self, Access::Rsv | Access::Rv)
    }
    /// Software may write the field.
    pub const fn is_writable(self) -> bool {
        matches!(self, Access::Rw | Access::RwV | Access::Wo | Access::W1c)
    }
    /// Reading the field tells something.
    pub const fn is_readable(self) -> bool {
        matches!(self, Access::Rw | Access::RwV | Access::Ro | Access::RoV)
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
    /// Units (boxes).
    pub units: &'static [&'static UnitInfo],
    /// The level above every box (global control and status), if the processor has one.
    pub global: Option<&'static crate::structure::GlobalInfo>,
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

/// Writes `raw` field by field, for the layouts' `Debug`.
pub fn debug_fields(f: &mut fmt::Formatter<'_>, type_name: &str, fields: &[FieldInfo], raw: u64) -> fmt::Result {
    let mut s = f.debug_struct(type_name);
    for field in fields.iter().filter(|x| !x.is_placeholder()) {
        s.field(field.name, &format_args!("{:#x}", field.extract(raw)));
    }
    s.finish()
}

// The macros below are what each generated unit module is written in: one `register!` per
// register layout, one line per field and per instance, so the generated source stays a
// readable table while the expansion gives every accessor its own const fn and rustdoc.

/// An enum for a field whose values the guide names.
macro_rules! field_enum {
    ($ty:ident, $doc:literal, $([$variant:ident = $value:literal, $name:literal, $vdoc:literal]),+) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum $ty {
            $(#[doc = $vdoc] $variant = $value,)+
        }

        impl $ty {
            /// The values with their names and meanings, for tools.
            pub const VALUES: &'static [ValueInfo] = &[$(ValueInfo { value: $value, name: $name, description: $vdoc }),+];

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

/// Field metadata values: `[]` for none, `[Path]` for a `VALUES` list.
macro_rules! field_values {
    ([]) => { &[] };
    ([$values:path]) => { $values };
}

/// Field metadata for CPUID-sized bit arrays.
macro_rules! field_repeat {
    (rep($($g:ident)?, $($w:ident, $s:ident)?: $t:ident, $ew:literal, $max:literal, $cpuid:expr)) => {
        Some(RepeatInfo { element_width: $ew, max_count: $max, count_cpuid: $cpuid })
    };
    ($kind:ident $args:tt) => { None };
}

/// Converts raw field bits to a value type.
macro_rules! field_from_raw {
    (bool, $bits:expr) => { $bits != 0 };
    ($t:ident, $bits:expr) => { $bits as $t };
}

/// The accessors of one field, as its kind says (see `register!`).
macro_rules! field_methods {
    ($raw:ident, [$fname:literal, $bits:literal, $accs:literal, $reset:literal, $fdesc:literal], $lsb:literal, $width:literal, $reg:literal, none()) => {};
    // Plain values (bool, or an integer exactly as wide as its type).
    ($raw:ident, [$fname:literal, $bits:literal, $accs:literal, $reset:literal, $fdesc:literal], $lsb:literal, $width:literal, $reg:literal, val($($g:ident)?, $($w:ident, $s:ident)?: $t:ident)) => {
        $(
            #[doc = field_doc!($fname, $bits, $accs, $reset, $fdesc)]
            #[inline]
            pub const fn $g(self) -> $t {
                field_from_raw!($t, (self.0 >> $lsb) & (field_mask(0, $width) as $raw))
            }
        )?
        $(
            #[doc = concat!("This value with `", $fname, "` set to `v`.\n\n", field_doc!($fname, $bits, $accs, $reset, $fdesc))]
            #[inline]
            pub const fn $w(self, v: $t) -> Self {
                Self((self.0 & !(field_mask($lsb, $width) as $raw)) | ((v as $raw) << $lsb))
            }
            #[doc = concat!("Sets `", $fname, "` to `v`.\n\n", field_doc!($fname, $bits, $accs, $reset, $fdesc))]
            #[inline]
            pub const fn $s(&mut self, v: $t) {
                *self = self.$w(v);
            }
        )?
    };
    // Integers narrower than their type: the plain setter panics on a too-wide value (a
    // compile error in const context); the checked one returns an error.
    ($raw:ident, [$fname:literal, $bits:literal, $accs:literal, $reset:literal, $fdesc:literal], $lsb:literal, $width:literal, $reg:literal, narrow($($g:ident)?, $($w:ident, $s:ident, $tw:ident)?: $t:ident)) => {
        field_methods!($raw, [$fname, $bits, $accs, $reset, $fdesc], $lsb, $width, $reg, val($($g)?,: $t));
        $(
            #[doc = concat!("This value with `", $fname, "` set to `v`.\n\n", field_doc!($fname, $bits, $accs, $reset, $fdesc), "\n\n# Panics\nIf `v` does not fit in ", stringify!($width), " bits (a compile error in const context); [`Self::", stringify!($tw), "`] returns an error instead.")]
            #[inline]
            pub const fn $w(self, v: $t) -> Self {
                assert!((v as u64) <= field_mask(0, $width), "{}", concat!("value too wide for ", $reg, ".", $fname, " (", stringify!($width), " bits)"));
                Self((self.0 & !(field_mask($lsb, $width) as $raw)) | ((v as $raw) << $lsb))
            }
            #[doc = concat!("Sets `", $fname, "` to `v`.\n\n", field_doc!($fname, $bits, $accs, $reset, $fdesc), "\n\n# Panics\nIf `v` does not fit in ", stringify!($width), " bits.")]
            #[inline]
            pub const fn $s(&mut self, v: $t) {
                *self = self.$w(v);
            }
            #[doc = concat!("This value with `", $fname, "` set to `v`, or an error if `v` does not fit in ", stringify!($width), " bits.")]
            #[inline]
            pub const fn $tw(self, v: $t) -> Result<Self, FieldTooWide> {
                if (v as u64) > field_mask(0, $width) {
                    return Err(FieldTooWide { register: $reg, field: $fname, width: $width, value: v as u64 });
                }
                Ok(Self((self.0 & !(field_mask($lsb, $width) as $raw)) | ((v as $raw) << $lsb)))
            }
        )?
    };
    // Fields whose values are all named: the enum is the value type.
    ($raw:ident, [$fname:literal, $bits:literal, $accs:literal, $reset:literal, $fdesc:literal], $lsb:literal, $width:literal, $reg:literal, named($($g:ident)?, $($w:ident, $s:ident)?: $t:ident)) => {
        $(
            #[doc = field_doc!($fname, $bits, $accs, $reset, $fdesc)]
            #[inline]
            pub const fn $g(self) -> $t {
                $t::from_bits(((self.0 >> $lsb) & (field_mask(0, $width) as $raw)) as u8)
            }
        )?
        $(
            #[doc = concat!("This value with `", $fname, "` set to `v`.\n\n", field_doc!($fname, $bits, $accs, $reset, $fdesc))]
            #[inline]
            pub const fn $w(self, v: $t) -> Self {
                Self((self.0 & !(field_mask($lsb, $width) as $raw)) | ((v.bits() as $raw) << $lsb))
            }
            #[doc = concat!("Sets `", $fname, "` to `v`.\n\n", field_doc!($fname, $bits, $accs, $reset, $fdesc))]
            #[inline]
            pub const fn $s(&mut self, v: $t) {
                *self = self.$w(v);
            }
        )?
    };
    // CPUID-sized bit arrays: the accessors take the element index.
    ($raw:ident, [$fname:literal, $bits:literal, $accs:literal, $reset:literal, $fdesc:literal], $lsb:literal, $width:literal, $reg:literal, rep($($g:ident)?, $($w:ident, $s:ident)?: $t:ident, $ew:literal, $max:literal, $cpuid:expr)) => {
        $(
            #[doc = concat!("Element `n` of ", field_doc!($fname, $bits, $accs, $reset, $fdesc), "\n\n# Panics\nIf `n` is ", stringify!($max), " or more.")]
            #[inline]
            pub const fn $g(self, n: u32) -> $t {
                assert!(n < $max, "{}", concat!("index out of range for ", $reg, ".", $fname));
                field_from_raw!($t, (self.0 >> ($lsb + n * $ew)) & (field_mask(0, $ew) as $raw))
            }
        )?
        $(
            #[doc = concat!("This value with element `n` of `", $fname, "` set to `v`.\n\n# Panics\nIf `n` is ", stringify!($max), " or more.")]
            #[inline]
            pub const fn $w(self, n: u32, v: $t) -> Self {
                assert!(n < $max, "{}", concat!("index out of range for ", $reg, ".", $fname));
                let shift = $lsb + n * $ew;
                Self((self.0 & !((field_mask(0, $ew) as $raw) << shift)) | (((v as $raw) & (field_mask(0, $ew) as $raw)) << shift))
            }
            #[doc = concat!("Sets element `n` of `", $fname, "` to `v`.\n\n# Panics\nIf `n` is ", stringify!($max), " or more.")]
            #[inline]
            pub const fn $s(&mut self, n: u32, v: $t) {
                *self = self.$w(n, v);
            }
        )?
    };
}

/// One address constant: a single register, or an array of them.
macro_rules! register_addresses {
    ($(#[$m:meta])* one, $cname:ident, $addr:ty, $ctor:expr) => {
        $(#[$m])*
        pub const $cname: $addr = $ctor;
    };
    ($(#[$m:meta])* many, $cname:ident, $addr:ty, $($ctor:expr),+) => {
        $(#[$m])*
        pub const $cname: $addr = [$($ctor),+];
    };
}

/// The rustdoc summary of one field.
macro_rules! field_doc {
    ($fname:literal, $bits:literal, $accs:literal, $reset:literal, $fdesc:literal) => {
        concat!("`", $fname, "` (bits ", $bits, ", ", $accs, ", reset ", stringify!($reset), "): ", $fdesc)
    };
}

/// Declares one register layout: the newtype, its masks, reset value, accessors, `Debug`,
/// [`Register`] impl, rustdoc (with the bit table), metadata, and typed address constants.
///
/// Input, written by codegen: a header (type, raw integer, name template, width, space,
/// array length, CPUID count, processor, unit, metadata static, and the all-instances
/// constant), the description, the sources, the notes, one `field` line per field (reserved
/// ones included) and one `at` line per instance.
macro_rules! register {
    (
        $ty:ident($raw:ident, $bits_width:literal) $name:literal $space:ident[$count:literal] $cpuid:expr, $proc:literal $unit:literal $info:ident $(all $all:ident: $all_ty:ty = [$($all_items:ident),*])?;
        $desc:literal;
        $(source $src:literal;)*
        $(note $nkind:literal $ntitle:literal $ntext:literal;)*
        $(unknown $reason:literal;)?
        $(field $acc:ident $accs:literal $fname:literal $bits:literal [$lsb:literal, $width:literal] $reset:literal $fdesc:literal $vals:tt $kind:ident $args:tt $(role $role:ident [$($ctr:literal),*])?;)+
        $(at $shape:ident $cname:ident $inst:literal: $addr_ty:ty = [$($idx:literal $loc:tt $aname:literal $asrc:literal),+];)*
    ) => {
        #[doc = $desc]
        #[doc = ""]
        #[doc = concat!("`", $name, "`: ", stringify!($bits_width), "-bit ", register!(@space $space), " register of the ", $unit, " unit (", $proc, ").")]
        #[doc = ""]
        #[doc = "| Bits | Field | Access | Reset | Description |"]
        #[doc = "|---|---|---|---|---|"]
        $(#[doc = concat!("| ", $bits, " | `", $fname, "` | ", $accs, " | ", stringify!($reset), " | ", $fdesc, " |")])+
        #[doc = ""]
        #[doc = "Sources:"]
        $(#[doc = concat!("- ", $src)])*
        $(#[doc = ""] #[doc = concat!("**", $ntitle, "** (", $nkind, "): ", $ntext)])*
        $(#[doc = ""] #[doc = concat!("**Address unknown:** ", $reason)])?
        #[derive(Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $ty($raw);

        // Every field gets the same shapes (shift, mask, cast); for a field at bit 0, or a
        // layout without reserved bits, some are no-ops that the optimiser removes.
        #[allow(clippy::bad_bit_mask, clippy::identity_op, clippy::erasing_op, clippy::unnecessary_cast)]
        impl $ty {
            /// The fields, most significant first, reserved ones included.
            pub const FIELDS: &'static [FieldInfo] = &[$(FieldInfo {
                name: $fname,
                lsb: $lsb,
                msb: $lsb + $width - 1,
                access: Access::$acc,
                reset: $reset,
                description: $fdesc,
                values: field_values!($vals),
                repeat: field_repeat!($kind $args),
                role: register!(@role $($role)?),
                counters: &[$($($ctr),*)?],
            }),+];
            /// The value after reset.
            pub const RESET: Self = Self(reset_of(Self::FIELDS) as $raw);
            /// Bits software must write as zero (`rsv` and `rv` fields). No safe method sets them.
            pub const RESERVED_MASK: $raw = reserved_mask(Self::FIELDS) as $raw;
            /// Bits that read as zero and ignore writes (`ig` fields).
            pub const IGNORED_MASK: $raw = ignored_mask(Self::FIELDS) as $raw;
            /// Bits software may write (`rw`, `rw-v`, `wo` and `w1c` fields).
            pub const WRITABLE_MASK: $raw = writable_mask(Self::FIELDS) as $raw;

            /// The value of `raw` with the reserved bits cleared, so that it is always safe
            /// to write. Use [`Self::try_from_bits`] to reject such bits instead.
            #[inline]
            pub const fn from_bits(raw: $raw) -> Self {
                Self(raw & !Self::RESERVED_MASK)
            }

            /// `raw` as it is, or an error if it sets any reserved bit.
            #[inline]
            pub const fn try_from_bits(raw: $raw) -> Result<Self, ReservedBitsSet> {
                if raw & Self::RESERVED_MASK != 0 {
                    Err(ReservedBitsSet { register: $name, bits: (raw & Self::RESERVED_MASK) as u64 })
                } else {
                    Ok(Self(raw))
                }
            }

            /// The raw register value.
            #[inline]
            pub const fn bits(self) -> $raw {
                self.0
            }

            $(field_methods!($raw, [$fname, $bits, $accs, $reset, $fdesc], $lsb, $width, $name, $kind $args);)+
        }

        impl Default for $ty {
            /// The reset value.
            fn default() -> Self {
                Self::RESET
            }
        }

        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                debug_fields(f, stringify!($ty), Self::FIELDS, self.0 as u64)
            }
        }

        impl Register for $ty {
            const INFO: &'static RegisterInfo = &$info;
            fn from_raw(raw: u64) -> Self {
                Self::from_bits(raw as $raw)
            }
            fn to_raw(self) -> u64 {
                self.0 as u64
            }
        }

        $(
            register_addresses!(
                #[doc = concat!("`", $name, "` of instance ", $inst, "; addresses and their sources:")]
                $(#[doc = concat!("- `", $aname, "`: ", register!(@loc_doc $space $loc), " (", $asrc, ")")])+
                $shape, $cname, $addr_ty, $(register!(@ctor $space $loc $aname)),+
            );
        )*
        $(
            #[doc = concat!("`", $name, "` of every instance, in instance order.")]
            pub const $all: $all_ty = [$($all_items),*];
        )?

        static $info: RegisterInfo = RegisterInfo {
            processor: $proc,
            unit: $unit,
            name: $name,
            type_name: stringify!($ty),
            width: $bits_width,
            space: register!(@space_value $space),
            count: $count,
            count_cpuid: $cpuid,
            reset: $ty::RESET.0 as u64,
            reserved_mask: $ty::RESERVED_MASK as u64,
            ignored_mask: $ty::IGNORED_MASK as u64,
            writable_mask: $ty::WRITABLE_MASK as u64,
            description: $desc,
            sources: &[$($src),*],
            addresses: register!(@addresses $space [$($reason)?] [$($($inst $idx $loc $aname $asrc),+),*]),
            fields: $ty::FIELDS,
            notes: &[$(NoteInfo { kind: $nkind, title: $ntitle, text: $ntext }),*],
        };
    };
    (@role) => { None };
    (@role $role:ident) => { Some(crate::structure::Role::$role) };
    (@space msr) => { "MSR" };
    (@space pci) => { "PCI" };
    (@space_value msr) => { Space::Msr };
    (@space_value pci) => { Space::Pci };
    (@ctor msr $addr:literal $aname:literal) => { Msr::new($addr, $aname) };
    (@ctor pci ($id:literal, $dev:literal, $func:literal, $off:literal) $aname:literal) => { PciRegister::new($id, $dev, $func, $off, $aname) };
    (@loc_doc msr $addr:literal) => { concat!("MSR ", stringify!($addr)) };
    (@loc_doc pci ($id:literal, $dev:literal, $func:literal, $off:literal)) => {
        concat!("PCI ", stringify!($id), " dev ", stringify!($dev), " fn ", stringify!($func), " offset ", stringify!($off))
    };
    (@location msr $addr:literal) => { Location::Msr($addr) };
    (@location pci ($id:literal, $dev:literal, $func:literal, $off:literal)) => {
        Location::Pci { device_id: $id, device: $dev, function: $func, offset: $off }
    };
    (@addresses $space:ident [$reason:literal] []) => { Addresses::Unknown($reason) };
    (@addresses $space:ident [] [$($inst:literal $idx:literal $loc:tt $aname:literal $asrc:literal),*]) => {
        Addresses::Known(&[$(AddressInfo {
            name: $aname,
            instance: $inst,
            index: $idx,
            location: register!(@location $space $loc),
            source: $asrc,
        }),*])
    };
}

/// A unit's typed events: an `Event` type whose values only this unit's counter controls take
/// (`with_event`), with a constant per event.
// A spec tree with no event lists (the test fixtures) never invokes it.
#[allow(unused_macros)]
macro_rules! unit_events {
    ([$($ctl:ident $ext:ident),+], [$($ident:ident = $name:literal $code:literal $umask:literal $ext_sel:literal $counters:literal $filters:literal),* $(,)?]) => {
        /// An event of this unit. Only this unit's counter controls take it (`with_event`), so
        /// an event of one unit cannot be programmed into another's counter.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Event(&'static EventInfo);

        impl Event {
            $(
                #[doc = concat!("`", $name, "`: event select ", stringify!($code), ", umask ", stringify!($umask), ", counters ", stringify!($counters), " (bit n: counter n).")]
                pub const $ident: Event = Event(&EventInfo { name: $name, code: $code, umask: $umask, ext_sel: $ext_sel, counters: $counters, filters: $filters });
            )*
        }

        impl Event {
            /// Every event of the unit.
            pub const ALL: &'static [Event] = &[$(Event::$ident),*];
            /// The event's facts.
            pub const fn info(self) -> &'static EventInfo {
                self.0
            }
            /// Whether counter `n` may count it.
            pub const fn can_count_on(self, n: u32) -> bool {
                self.0.can_count_on(n)
            }
        }

        const EVENT_INFOS: &[&EventInfo] = &[$(Event::$ident.0),*];

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

/// A unit's metadata: its registers' metadata statics, in order, and its events.
macro_rules! unit_info {
    ($proc:literal, $name:literal, $module:literal, $title:literal, $desc:literal, [$($inst:literal),+], [$($info:ident),*], $events:expr, $pmu:expr) => {
        /// Metadata of this unit and its registers.
        pub static UNIT: UnitInfo = UnitInfo {
            processor: $proc,
            name: $name,
            module: $module,
            title: $title,
            description: $desc,
            instances: &[$($inst),+],
            registers: &[$(&$info),*],
            events: $events,
            pmu: $pmu,
        };
    };
}
