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
    /// Everything the spec says about this register (with the `metadata` feature).
    #[cfg(feature = "metadata")]
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

/// How the physical base of a unit's memory-mapped windows is assembled, and where each
/// controller's and channel's window lies (the spec's `<mmio-window>`).
///
/// The base of controller `c` is the OR of every [`MmioBasePart`], each taking bits of one
/// dword of the PCI config space of device `device_id` (`device`, `function`, on the socket's
/// uncore bus). Channel `h`'s window starts at `base + offset + h * channel_stride` and is
/// `size` bytes long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmioWindow {
    /// Vendor-8086 device id of the device holding the base.
    pub device_id: u16,
    /// Its device (slot) number.
    pub device: u8,
    /// Its function.
    pub function: u8,
    /// The pieces of the base.
    pub parts: &'static [MmioBasePart],
    /// Bytes from the base to channel 0's window.
    pub offset: u64,
    /// Bytes from one channel's window to the next.
    pub channel_stride: u64,
    /// Bytes of one window.
    pub size: u64,
    /// How many controllers (bases).
    pub controllers: u8,
    /// How many channel windows per controller.
    pub channels: u8,
}

impl MmioWindow {
    /// The base of `controller`, from its config dwords: `read_dword(offset)` reads the dword at
    /// a config-space offset of the base's device.
    pub fn base<E>(
        &self,
        controller: u8,
        mut read_dword: impl FnMut(u16) -> Result<u32, E>,
    ) -> Result<u64, E> {
        let mut base = 0;
        for part in self.parts {
            base |= part.apply(read_dword(part.dword_offset(controller))?);
        }
        Ok(base)
    }

    /// Where channel `channel`'s window starts, given its controller's base.
    pub const fn window_start(&self, base: u64, channel: u8) -> u64 {
        base + self.offset + channel as u64 * self.channel_stride
    }
}

/// One piece of an [`MmioWindow`]'s base: bits `msb:lsb` of a config dword, moved so that bit
/// `lsb` lands on bit `shift` of the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmioBasePart {
    /// Config-space offset of controller 0's dword.
    pub offset: u16,
    /// Bytes between one controller's dword and the next (0: one dword serves all).
    pub controller_stride: u16,
    /// Lowest bit taken.
    pub lsb: u8,
    /// Highest bit taken.
    pub msb: u8,
    /// Where bit `lsb` lands in the base.
    pub shift: u8,
}

impl MmioBasePart {
    /// The config-space offset of `controller`'s dword.
    pub const fn dword_offset(&self, controller: u8) -> u16 {
        self.offset + controller as u16 * self.controller_stride
    }

    /// What this part contributes to the base, from its dword.
    pub const fn apply(&self, dword: u32) -> u64 {
        let width = (self.msb - self.lsb + 1) as u32;
        let bits = (dword as u64 >> self.lsb) & (u64::MAX >> (64 - width));
        bits << self.shift
    }
}

/// A memory-mapped register whose layout is `R`: at `offset` in the window of one controller
/// and channel of its unit's [`MmioWindow`].
///
/// The physical address depends on the part (the base is read from PCI config space at run
/// time): [`MmioRegister::address`] computes it from the controller's base.
pub struct MmioRegister<R> {
    window: &'static MmioWindow,
    controller: u8,
    channel: u8,
    offset: u32,
    name: &'static str,
    layout: PhantomData<fn() -> R>,
}

impl<R> MmioRegister<R> {
    /// A register at `offset` in channel `channel`'s window of controller `controller`.
    pub const fn new(
        window: &'static MmioWindow,
        controller: u8,
        channel: u8,
        offset: u32,
        name: &'static str,
    ) -> Self {
        Self {
            window,
            controller,
            channel,
            offset,
            name,
            layout: PhantomData,
        }
    }
    /// The window layout it lies in.
    pub const fn window(self) -> &'static MmioWindow {
        self.window
    }
    /// The controller whose base the window is built on.
    pub const fn controller(self) -> u8 {
        self.controller
    }
    /// The channel window.
    pub const fn channel(self) -> u8 {
        self.channel
    }
    /// Byte offset in the channel's window.
    pub const fn offset(self) -> u32 {
        self.offset
    }
    /// The physical address, given the controller's base ([`MmioWindow::base`]).
    pub const fn address(self, base: u64) -> u64 {
        self.window.window_start(base, self.channel) + self.offset as u64
    }
    /// The register's name for this instance.
    pub const fn name(self) -> &'static str {
        self.name
    }
}

impl<R> Clone for MmioRegister<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for MmioRegister<R> {}
impl<R> PartialEq for MmioRegister<R> {
    fn eq(&self, other: &Self) -> bool {
        (self.window, self.controller, self.channel, self.offset)
            == (other.window, other.controller, other.channel, other.offset)
    }
}
impl<R> Eq for MmioRegister<R> {}
impl<R> fmt::Debug for MmioRegister<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (MMIO controller {} channel {} offset {:#x})",
            self.name, self.controller, self.channel, self.offset
        )
    }
}

/// A register at a byte offset inside a structure the runtime finds first, whose layout is `R`
/// (space `table`): the uncore discovery capability in PCI configuration space, or an entry of
/// the discovery table in memory. The offset counts from the structure's start.
pub struct TableOffset<R> {
    offset: u32,
    name: &'static str,
    layout: PhantomData<fn() -> R>,
}

impl<R> TableOffset<R> {
    /// A register `offset` bytes into its structure, called `name` in the sources.
    pub const fn new(offset: u32, name: &'static str) -> Self {
        Self {
            offset,
            name,
            layout: PhantomData,
        }
    }
    /// Byte offset from the start of the structure.
    pub const fn offset(self) -> u32 {
        self.offset
    }
    /// The register's name (`UNIT_DISCOVERY_TABLE1`).
    pub const fn name(self) -> &'static str {
        self.name
    }
}

impl<R> Clone for TableOffset<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for TableOffset<R> {}
impl<R> PartialEq for TableOffset<R> {
    fn eq(&self, other: &Self) -> bool {
        self.offset == other.offset
    }
}
impl<R> Eq for TableOffset<R> {}
impl<R> fmt::Debug for TableOffset<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (table offset {:#x})", self.name, self.offset)
    }
}

/// The encoding of an Arm system register: the five numbers an `mrs` or `msr` instruction
/// carries (Arm Architecture Reference Manual, system instruction class encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SysRegEncoding {
    /// op0 (2 or 3).
    pub op0: u8,
    /// op1 (0-7).
    pub op1: u8,
    /// CRn (0-15).
    pub crn: u8,
    /// CRm (0-15).
    pub crm: u8,
    /// op2 (0-7).
    pub op2: u8,
}

impl SysRegEncoding {
    /// The encoding `S<op0>_<op1>_C<crn>_C<crm>_<op2>`.
    pub const fn new(op0: u8, op1: u8, crn: u8, crm: u8, op2: u8) -> Self {
        Self {
            op0,
            op1,
            crn,
            crm,
            op2,
        }
    }
    /// The value of Linux's `sys_reg(op0, op1, crn, crm, op2)`: the five numbers at bits
    /// 20:19, 18:16, 15:12, 11:8 and 7:5, where the instruction carries them.
    pub const fn linux_encoding(self) -> u32 {
        ((self.op0 as u32) << 19)
            | ((self.op1 as u32) << 16)
            | ((self.crn as u32) << 12)
            | ((self.crm as u32) << 8)
            | ((self.op2 as u32) << 5)
    }
    /// The instruction `mrs x<rt>, <register>` (reads the register into `x<rt>`), for a
    /// `.inst` directive where the assembler lacks the register's name: Linux's `mrs_s`
    /// emits `0xd5200000 | sys_reg | rt`. `rt` above 31 is taken modulo 32.
    pub const fn mrs_instruction(self, rt: u8) -> u32 {
        0xD520_0000 | self.linux_encoding() | (rt as u32 & 0x1F)
    }
    /// The instruction `msr <register>, x<rt>` (writes `x<rt>`): Linux's `msr_s` emits
    /// `0xd5000000 | sys_reg | rt`.
    pub const fn msr_instruction(self, rt: u8) -> u32 {
        0xD500_0000 | self.linux_encoding() | (rt as u32 & 0x1F)
    }
}

impl fmt::Display for SysRegEncoding {
    /// The generic name every assembler accepts: `S3_3_C9_C12_0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "S{}_{}_C{}_C{}_{}",
            self.op0, self.op1, self.crn, self.crm, self.op2
        )
    }
}

/// An Arm system register whose layout is `R` (space `sysreg`), read and written on the CPU
/// whose register it is by `mrs` and `msr`. The crate emits no inline assembly (it builds on
/// every target); a program on AArch64 reads the register with its own `asm!` (the name, or
/// the generic name [`SysRegEncoding`]'s `Display` gives) or through the kernel's perf
/// interface, which is the only way user space reaches most of them.
pub struct SysReg<R> {
    encoding: SysRegEncoding,
    name: &'static str,
    layout: PhantomData<fn() -> R>,
}

impl<R> SysReg<R> {
    /// The register at `encoding`, called `name` (`PMCR_EL0`) by the architecture.
    pub const fn new(encoding: SysRegEncoding, name: &'static str) -> Self {
        Self {
            encoding,
            name,
            layout: PhantomData,
        }
    }
    /// Its encoding.
    pub const fn encoding(self) -> SysRegEncoding {
        self.encoding
    }
    /// Its architectural name, which assemblers that know it take in `mrs`/`msr`.
    pub const fn name(self) -> &'static str {
        self.name
    }
}

impl<R> Clone for SysReg<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for SysReg<R> {}
impl<R> PartialEq for SysReg<R> {
    fn eq(&self, other: &Self) -> bool {
        self.encoding == other.encoding
    }
}
impl<R> Eq for SysReg<R> {}
impl<R> fmt::Debug for SysReg<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.encoding)
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

// @vocabulary Space

// @vocabulary Access

impl Access {
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

// @vocabulary Vendor

#[cfg(feature = "metadata")]
/// How software recognises a processor: its CPU vendor and CPUID signature (display family,
/// models and, where processors share a model, steppings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuIdentity {
    /// The CPU vendor (CPUID leaf 0's string).
    pub vendor: Vendor,
    /// CPUID display family (`0x6`; `0x19` for AMD's family 19h).
    pub family: u32,
    /// CPUID display models, as ranges (lowest, highest), ascending and disjoint:
    /// `&[(0x3E, 0x3E)]` for 06_3EH.
    pub models: &'static [(u32, u32)],
    /// The CPUID steppings it has, lowest and highest (`(0, 4)` for Skylake-SP), when another
    /// processor shares its family and model; `None`: every stepping.
    pub steppings: Option<(u32, u32)>,
}

#[cfg(feature = "metadata")]
impl CpuIdentity {
    /// Whether a CPU of this vendor, display family and model is this processor, given its
    /// stepping; with no stepping, only when the model alone decides (no `steppings`).
    pub fn matches(&self, vendor: Vendor, family: u32, model: u32, stepping: Option<u32>) -> bool {
        let model_in = self.models.iter().any(|&(lo, hi)| lo <= model && model <= hi);
        let stepping_in = match (self.steppings, stepping) {
            (None, _) => true,
            (Some((lo, hi)), Some(s)) => lo <= s && s <= hi,
            (Some(_), None) => false,
        };
        self.vendor == vendor && self.family == family && model_in && stepping_in
    }
}

#[cfg(feature = "metadata")]
/// How software recognises an Arm core: the implementer and primary part number of its
/// MIDR_EL1 (Main ID Register), the values `/proc/cpuinfo` shows as `CPU implementer` and
/// `CPU part`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MidrIdentity {
    /// MIDR_EL1.Implementer, bits 31:24 (`0x41`: Arm Limited).
    pub implementer: u8,
    /// MIDR_EL1.PartNum, bits 15:4 (`0xD4F`: Neoverse V2).
    pub part: u16,
    /// The public source of the numbers (a `processors.xml` source id).
    pub source: &'static str,
}

#[cfg(feature = "metadata")]
impl MidrIdentity {
    /// Whether a core whose MIDR_EL1 reads `midr` is this one: its implementer (bits 31:24)
    /// and part number (bits 15:4) are; the variant (23:20), architecture (19:16) and
    /// revision (3:0) say which release of the core it is, and do not decide.
    pub const fn matches(&self, midr: u64) -> bool {
        (midr >> 24) & 0xFF == self.implementer as u64 && (midr >> 4) & 0xFFF == self.part as u64
    }
}

#[cfg(feature = "metadata")]
/// A SoC as the processors whose PMUs it has (`<soc>` in the spec): its cores', and its
/// mesh's and CoreSight PMUs', each named by processor id (a processor whose feature is not
/// built is not in [`crate::PROCESSORS`]).
#[derive(Debug)]
pub struct SocInfo {
    /// Identifier (`nvidia-grace`).
    pub id: &'static str,
    /// Human-readable name.
    pub name: &'static str,
    /// The processor id of its cores (`neoverse-v2`).
    pub cores: &'static str,
    /// The processor ids of its other PMUs.
    pub uncore: &'static [&'static str],
    /// The SMCCC SOC_ID Linux shows in `/sys/devices/soc0/soc_id` and the public source of
    /// the value, where one gives it.
    pub soc_id: Option<(&'static str, &'static str)>,
    /// The public source of the composition (a `processors.xml` source id).
    pub source: &'static str,
}

#[cfg(feature = "metadata")]
impl SocInfo {
    /// Whether `soc_id` (as read from `/sys/devices/soc0/soc_id`, surrounding white space
    /// ignored, hex digits in either case) is this SoC's SMCCC SOC_ID.
    pub fn claims(&self, soc_id: &str) -> bool {
        self.soc_id
            .is_some_and(|(v, _)| v.eq_ignore_ascii_case(soc_id.trim()))
    }
}

#[cfg(feature = "metadata")]
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
    /// How software recognises it (vendor, CPUID family, models, steppings), if the spec says.
    pub identity: Option<CpuIdentity>,
    /// How software recognises an Arm core (MIDR_EL1's implementer and part number), if the
    /// spec says.
    pub midr: Option<MidrIdentity>,
    /// The vendor's code names (or an Arm core's product names), most common first
    /// (`Ivy Bridge-EP`, `IvyTown`).
    pub code_names: &'static [&'static str],
    /// Units (boxes).
    pub units: &'static [&'static UnitInfo],
    /// The level above every box (global control and status), if the processor has one.
    pub global: Option<&'static crate::structure::GlobalInfo>,
    /// The processor's own event list for its core PMU (`processors.xml`'s `core-pmu`: the
    /// architectural CORE unit), if the spec has one.
    pub core_events: Option<&'static crate::core_events::CoreEventsInfo>,
    /// How many top-down shares its core's IA32_PERF_METRICS (MSR 0x329) reports next to
    /// fixed counter 3, TOPDOWN.SLOTS (`processors.xml`'s `topdown-metrics`): 4 on Ice
    /// Lake-SP, 8 from Sapphire Rapids; 0 where the core has neither register.
    pub topdown_metrics: u8,
    /// The fixed counters its core has, bit i for IA32_FIXED_CTRi (`processors.xml`'s
    /// `fixed-counters`): 0 to 2 (0x07), with 3, TOPDOWN.SLOTS, where the core has
    /// `topdown_metrics` (0x0F), 0 to 2 and 4 to 6 on Clearwater Forest (0x77); 0 without an
    /// Intel core PMU. CPUID leaf 0AH says which a part has; this is what the spec expects.
    pub fixed_counters: u8,
    /// Where the part's uncore discovery tables are, one entry per domain
    /// (`processors.xml`'s `<discovery-domain>`); empty for a part with one table per socket
    /// found through the generic discovery device (0x09A7), or none.
    pub discovery_domains: &'static [DiscoveryDomain],
    /// The discovery types a public source names for the part, as (type, name)
    /// (`<discovery-types>`), and that source; empty where its units' `discovery-type`s say.
    pub discovery_types: (&'static [(u16, &'static str)], &'static str),
}

#[cfg(feature = "metadata")]
/// How a discovery domain's table is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainPlace {
    /// Through the discovery capability of every Intel PCI device with this device id.
    PciDevice(u16),
    /// At the physical address this MSR holds (read once per socket or die).
    Msr(u32),
}

#[cfg(feature = "metadata")]
/// One uncore discovery domain: a set of tables found one way, with its own corrections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscoveryDomain {
    /// Its id (`imh`, `cbb`).
    pub id: &'static str,
    /// How its tables are found.
    pub place: DomainPlace,
    /// One table per die (`true`) or per socket.
    pub per_die: bool,
    /// The types its tables list that software ignores as broken: (type, name).
    pub ignored: &'static [(u16, &'static str)],
    /// The 32-bit value software writes to the global control of each of this domain's tables
    /// (at the address the table's global state gives) before it uses the table's units, and
    /// puts back when done: Diamond Rapids' CBB tables power up with freeze_all set, which
    /// stops every count of the domain (`global-init`); `None` where no write is needed.
    pub global_init: Option<u32>,
    /// The public source of all this (a `processors.xml` source id).
    pub source: &'static str,
}

#[cfg(feature = "metadata")]
impl ProcessorInfo {
    /// Whether a CPU of `vendor`, display family `family` and model `model` (and `stepping`,
    /// where known) is this processor, as [`CpuIdentity::matches`] decides; never, for a
    /// processor the spec gives no identity.
    pub fn identifies(&self, vendor: Vendor, family: u32, model: u32, stepping: Option<u32>) -> bool {
        match self.identity {
            Some(id) => id.matches(vendor, family, model, stepping),
            None => false,
        }
    }
}

#[cfg(feature = "metadata")]
/// What a crosspoint DTM local counter's input select names to reach a node's events
/// (Linux's `CMN__PMEVCNT0_INPUT_SEL_DEV` and `_XP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeInput {
    /// A device node on a port: input 0x10 + (port << 4) + (device << 2) + slot.
    Device,
    /// The crosspoint itself: input 0x04 + slot.
    Crosspoint,
}

#[cfg(feature = "metadata")]
/// The events one type of mesh node offers its crosspoint's DTM (the spec's
/// `<node-events>`): event `id` written into slot n of the node's event select is counted by
/// the DTM's local counter n whose input select names the node.
#[derive(Debug)]
pub struct NodeEventsInfo {
    /// `NODE_INFO.node_type` of the nodes (the perf driver's `type`).
    pub node_type: u16,
    /// The event select register.
    pub select: &'static RegisterInfo,
    /// The select's slot fields, slot n feeding local counter n.
    pub slots: &'static [&'static str],
    /// How the DTM's input select reaches the node.
    pub input: NodeInput,
    /// The kernel PMU (`arm_cmn_0`).
    pub pmu: &'static str,
    /// The perf driver whose formats (`type`, `eventid`, `occupid`) encode the events.
    pub driver: &'static crate::structure::PerfDriverInfo,
    /// Public source id.
    pub source: &'static str,
    /// The events.
    pub events: &'static [NodeEventInfo],
}

#[cfg(feature = "metadata")]
/// One mesh node event: the kernel's name, its event id, and the filter it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeEventInfo {
    /// The kernel's name (`hnf_cache_miss`).
    pub name: &'static str,
    /// The event id (the perf driver's `eventid`).
    pub id: u16,
    /// The select field the filter value goes into, if the event takes one.
    pub filter: Option<&'static str>,
    /// The filter value (the perf driver's `occupid`); 0 without a filter.
    pub occupid: u8,
}

#[cfg(feature = "metadata")]
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
    /// Where its memory-mapped registers are, if it has any.
    pub mmio_window: Option<&'static MmioWindow>,
}

#[cfg(feature = "metadata")]
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

#[cfg(feature = "metadata")]
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
            Addresses::Unknown(_) | Addresses::FromTable(_) => &[],
        }
    }
}

#[cfg(feature = "metadata")]
/// Addresses of a register.
#[derive(Debug, Clone, Copy)]
pub enum Addresses {
    /// One per instance and index.
    Known(&'static [AddressInfo]),
    /// No source gives the address; the text says why.
    Unknown(&'static str),
    /// The part's uncore discovery table places it, relative to its box's entry.
    FromTable(TablePlacement),
}

#[cfg(feature = "metadata")]
/// Which address of a discovery table entry a table-placed register starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TablePlace {
    /// The entry's box control address.
    BoxControl,
    /// The box control plus the entry's counter-control offset.
    CounterControl,
    /// The box control plus the entry's counter offset.
    Counter,
}

#[cfg(feature = "metadata")]
/// Where the discovery table places a register: element n at [`TablePlace`] plus
/// `n * stride` (registers apart for an MSR, bytes apart otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TablePlacement {
    /// Which of the entry's addresses element 0 is at.
    pub place: TablePlace,
    /// The distance between elements of an array (0 for a single register).
    pub stride: u32,
    /// Public source of the placement.
    pub source: &'static str,
}

#[cfg(feature = "metadata")]
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

#[cfg(feature = "metadata")]
impl AddressInfo {
    /// A row: the generated tables' shorthand for the struct literal.
    pub const fn new(
        name: &'static str,
        instance: &'static str,
        index: u32,
        location: Location,
        source: &'static str,
    ) -> Self {
        Self { name, instance, index, location, source }
    }

    /// A row of an MSR: [`Location::Msr`] at `address`.
    pub const fn msr(name: &'static str, instance: &'static str, index: u32, address: u32, source: &'static str) -> Self {
        Self::new(name, instance, index, Location::Msr(address), source)
    }

    /// A row of a PCI register: [`Location::Pci`] of `(device_id, device, function, offset)`.
    pub const fn pci(
        name: &'static str,
        instance: &'static str,
        index: u32,
        (device_id, device, function, offset): (u16, u8, u8, u16),
        source: &'static str,
    ) -> Self {
        Self::new(name, instance, index, Location::Pci { device_id, device, function, offset }, source)
    }

    /// The rows of a register with one address per instance, read from its typed MSRs:
    /// `table[i]` is instance `instances[i]`, index 0; every row cites `source`. The generated
    /// tables use it so that each address and name is written once, in the typed constant.
    pub const fn msrs<R, const T: usize>(
        table: &[Msr<R>],
        instances: &[&'static str],
        source: &'static str,
    ) -> [Self; T] {
        assert!(table.len() == T && instances.len() == T, "one typed MSR per instance");
        let mut rows = [Self::msr("", "", 0, 0, ""); T];
        let mut k = 0;
        while k < T {
            rows[k] = Self::msr(table[k].name, instances[k], 0, table[k].address, source);
            k += 1;
        }
        rows
    }

    /// The rows of a register array, read from its typed MSRs: `table[i][n]` is instance
    /// `instances[i]`, index `n`, in that order; every row cites `source`.
    pub const fn msr_arrays<R, const N: usize, const T: usize>(
        table: &[[Msr<R>; N]],
        instances: &[&'static str],
        source: &'static str,
    ) -> [Self; T] {
        assert!(table.len() * N == T && instances.len() == table.len(), "N typed MSRs per instance");
        let mut rows = [Self::msr("", "", 0, 0, ""); T];
        let mut k = 0;
        while k < T {
            let m = &table[k / N][k % N];
            rows[k] = Self::msr(m.name, instances[k / N], (k % N) as u32, m.address, source);
            k += 1;
        }
        rows
    }

    /// [`Self::msrs`] for PCI registers.
    pub const fn pcis<R, const T: usize>(
        table: &[PciRegister<R>],
        instances: &[&'static str],
        source: &'static str,
    ) -> [Self; T] {
        assert!(table.len() == T && instances.len() == T, "one typed register per instance");
        let mut rows = [Self::msr("", "", 0, 0, ""); T];
        let mut k = 0;
        while k < T {
            rows[k] = Self::pci_row(&table[k], instances[k], 0, source);
            k += 1;
        }
        rows
    }

    /// [`Self::msr_arrays`] for PCI registers.
    pub const fn pci_arrays<R, const N: usize, const T: usize>(
        table: &[[PciRegister<R>; N]],
        instances: &[&'static str],
        source: &'static str,
    ) -> [Self; T] {
        assert!(table.len() * N == T && instances.len() == table.len(), "N typed registers per instance");
        let mut rows = [Self::msr("", "", 0, 0, ""); T];
        let mut k = 0;
        while k < T {
            rows[k] = Self::pci_row(&table[k / N][k % N], instances[k / N], (k % N) as u32, source);
            k += 1;
        }
        rows
    }

    const fn pci_row<R>(p: &PciRegister<R>, instance: &'static str, index: u32, source: &'static str) -> Self {
        Self::pci(p.name, instance, index, (p.device_id, p.device, p.function, p.offset), source)
    }
}

#[cfg(feature = "metadata")]
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
    /// Memory-mapped: at `offset` in the window of `controller` and `channel` (the unit's
    /// [`UnitInfo::mmio_window`] says where that window is).
    Mmio {
        /// Controller whose base the window is built on.
        controller: u8,
        /// Channel window.
        channel: u8,
        /// Byte offset in the window.
        offset: u32,
    },    /// Byte offset inside a structure found at run time (space `table`).
    Table(u32),
    /// An Arm system register (space `sysreg`).
    SysReg(SysRegEncoding),
}

#[cfg(feature = "metadata")]
/// A bit field.
#[derive(Debug)]
pub struct FieldInfo {
    /// Name as in the guide (`{n}` for bit arrays).
    pub name: &'static str,
    /// The Rust name of its accessors (`pmc_en` for `PMC{n}_EN`), which `Debug` prints; the
    /// guide's name for reserved fields.
    pub ident: &'static str,
    /// Least significant bit (of the lowest range, for a field of several ranges: where the
    /// value's bit 0 lies).
    pub lsb: u32,
    /// Most significant bit (of the lowest range, for a field of several ranges).
    pub msb: u32,
    /// For a field made of several bit ranges (`bits="35:32,7:0"`), every range as
    /// `(msb, lsb)`, most significant first: the value is their concatenation in that order.
    /// Empty for a field of one range, `msb:lsb`. [`FieldInfo::ranges`] lists either kind.
    pub split: &'static [(u32, u32)],
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
    /// What the field of a counter's control holds while counting when the event leaves it
    /// (the spec's `count-default`); `None`: its reset value.
    pub count_default: Option<CountDefault>,
}

/// What a counter control's field holds while counting when the event leaves it: the
/// filters no role covers, such as the thread and slice masks of AMD's L3 counters, which
/// count nothing at their reset value of zero.
#[cfg(feature = "metadata")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountDefault {
    /// Every bit set: the field is a mask of the sources the counter observes (threads,
    /// slices), and the event observes them all. A zero mask observes none.
    AllOnes,
    /// This value (the field's own, not in register position).
    Value(u64),
}

#[cfg(feature = "metadata")]
impl CountDefault {
    /// The value it gives a field of `width` bits.
    pub const fn value(self, width: u32) -> u64 {
        match self {
            CountDefault::AllOnes => field_mask(0, width),
            CountDefault::Value(v) => v,
        }
    }
}

#[cfg(feature = "metadata")]
impl FieldInfo {
    /// The defaults the generated tables leave out (`..FieldInfo::EMPTY`): reset 0, no
    /// named values, no repeat, no role, no counters. Its name, bits and access mean nothing.
    pub const EMPTY: FieldInfo = FieldInfo {
        name: "",
        ident: "",
        lsb: 0,
        msb: 0,
        split: &[],
        access: Access::Rsv,
        reset: 0,
        description: "",
        values: &[],
        repeat: None,
        role: None,
        counters: &[],
        count_default: None,
    };

    /// A row that sets only these and whose accessors are called `name` (`ident` = `name`);
    /// the rest is [`FieldInfo::EMPTY`]'s.
    pub const fn row(
        name: &'static str,
        lsb: u32,
        msb: u32,
        access: Access,
        description: &'static str,
    ) -> Self {
        Self { name, ident: name, lsb, msb, access, description, ..Self::EMPTY }
    }

    /// A row like [`FieldInfo::row`]'s for a reserved or ignored field the spec describes no
    /// further: its description says what its access means, written once here.
    pub const fn reserved(name: &'static str, lsb: u32, msb: u32, access: Access) -> Self {
        let description = match access {
            Access::Ig => "Reads zero; writes ignored.",
            _ => "Reserved; write zero.",
        };
        Self::row(name, lsb, msb, access, description)
    }

    /// The field's bit ranges as `(msb, lsb)`, most significant first: one for most fields.
    pub fn ranges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let one = self.split.is_empty().then_some((self.msb, self.lsb));
        one.into_iter().chain(self.split.iter().copied())
    }
    /// Width in bits (of the value: every range together).
    pub const fn width(&self) -> u32 {
        if self.split.is_empty() {
            self.msb - self.lsb + 1
        } else {
            ranges_width(self.split)
        }
    }
    /// Largest value the field holds.
    pub const fn max(&self) -> u64 {
        field_mask(0, self.width())
    }
    /// The field's bits in register position (every range).
    pub const fn mask(&self) -> u64 {
        if self.split.is_empty() {
            self.max() << self.lsb
        } else {
            ranges_mask(self.split)
        }
    }
    /// The field's value within `raw` (its ranges gathered, for a field of several).
    pub const fn extract(&self, raw: u64) -> u64 {
        if self.split.is_empty() {
            (raw >> self.lsb) & self.max()
        } else {
            get_ranges(raw, self.split)
        }
    }
    /// `raw` with this field replaced by `value` (scattered over its ranges, for a field of
    /// several), or an error naming the field.
    pub fn insert(&self, register: &'static str, raw: u64, value: u64) -> Result<u64, FieldTooWide> {
        if value > self.max() {
            return Err(FieldTooWide {
                register,
                field: self.name,
                width: self.width(),
                value,
            });
        }
        if self.split.is_empty() {
            Ok((raw & !self.mask()) | (value << self.lsb))
        } else {
            Ok(set_ranges(raw, self.split, value))
        }
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

#[cfg(feature = "metadata")]
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

#[cfg(feature = "metadata")]
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

#[cfg(feature = "metadata")]
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

#[cfg(feature = "metadata")]
/// An event a unit's counters can count (from Intel's public event list: facts only).
#[derive(Debug, PartialEq, Eq)]
pub struct EventInfo {
    /// Intel's name (`UNC_H_REQUESTS.READS`).
    pub name: &'static str,
    /// Event select (wider than 8 bits where the unit's event select is: AMD's 12-bit one).
    pub code: u16,
    /// Unit mask.
    pub umask: u16,
    /// Needs the event-select extension bit.
    pub ext_sel: bool,
    /// Bit n set: counter n may count it (with Hyper-Threading on, for a core event).
    pub counters: u32,
    /// Bit n set: counter n may count it when its core runs one hardware thread (Intel's
    /// `CounterHTOff`), where the list gives more counters than `counters`; 0 otherwise.
    /// The counters it adds exist only on such a core, which reports them in CPUID
    /// (`0AH.EAX[15:8]`: 8 general counters instead of 4). See [`Self::counters_without_ht`].
    pub counters_ht_off: u32,
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
    /// The value it puts in the control's `umask-ext` role (Intel's UMaskExt; 0: none).
    pub umask_ext: u32,
    /// The value it puts in the control's `port-mask` role (Intel's PortMask; 0: none).
    pub port_mask: u16,
    /// The value it puts in the control's `fc-mask` role (Intel's FCMask; 0: none).
    pub fc_mask: u8,
    /// From a list its vendor calls experimental (Intel's `*_uncore_experimental.json`,
    /// whose counts Intel has not validated). Such events are built only with the
    /// `experimental-events` feature.
    pub experimental: bool,
    /// The auxiliary MSR it needs programmed besides its control (Intel's `MSRIndex` and
    /// `MSRValue`: the offcore response, load-latency or front-end register), if any.
    pub aux: Option<AuxMsr>,
}

/// An auxiliary MSR a core event needs, and the value it must hold while the event counts:
/// the event counts nothing meaningful without it. The value sets no reserved bit of the
/// register (the spec's validator checked it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuxMsr {
    /// The register's name in the spec (`MSR_OFFCORE_RSP_0`).
    pub register: &'static str,
    /// Its MSR number (`0x1A6`).
    pub address: u32,
    /// The value the event needs in it.
    pub value: u64,
}

#[cfg(feature = "metadata")]
impl EventInfo {
    /// The facts every event starts from: no settings, no masks, no filter, no auxiliary
    /// MSR. The generated tables write each event as its name, code, umask and counters and
    /// whatever else differs from this (`EventInfo { name: .., ..EventInfo::BASE }`).
    pub const BASE: EventInfo = EventInfo {
        name: "",
        code: 0,
        umask: 0,
        ext_sel: false,
        counters: 0,
        counters_ht_off: 0,
        filters: "",
        threshold: 0,
        invert: false,
        edge: false,
        any_thread: false,
        umask_ext: 0,
        port_mask: 0,
        fc_mask: 0,
        experimental: false,
        aux: None,
    };

    /// Whether counter `n` may count this event (with Hyper-Threading on, for a core event).
    pub const fn can_count_on(&self, n: u32) -> bool {
        n < 32 && self.counters >> n & 1 != 0
    }

    /// The counters that may count it when its core runs one hardware thread:
    /// [`Self::counters_ht_off`] where the list gives them, else [`Self::counters`]. The
    /// counters this adds exist only without Hyper-Threading, so a tool places the event on
    /// those of them the part reports: with Hyper-Threading on, that is [`Self::counters`].
    pub const fn counters_without_ht(&self) -> u32 {
        if self.counters_ht_off != 0 {
            self.counters_ht_off
        } else {
            self.counters
        }
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

/// The value of a field made of several bit ranges: `ranges` as `(msb, lsb)`, most
/// significant first, gathered in that order (`&[(35, 32), (7, 0)]`: value bits 11:8 from
/// register bits 35:32, 7:0 from 7:0). Every generated getter of such a field is this.
#[inline(always)]
pub const fn get_ranges(raw: u64, ranges: &[(u32, u32)]) -> u64 {
    let mut value = 0;
    let mut i = 0;
    while i < ranges.len() {
        let (msb, lsb) = ranges[i];
        // Each range of a field of several is under 64 bits wide: the shift cannot overflow.
        value = (value << (msb - lsb + 1)) | get_bits(raw, msb, lsb);
        i += 1;
    }
    value
}

/// `raw` with the field of several bit ranges `ranges` (as in [`get_ranges`]) set to `value`,
/// its low bits scattered into the last range, the next into the one before, and so on.
/// Every generated `with_*` of such a field is this.
///
/// # Panics
/// If `value` does not fit in the ranges together (a compile error in const context).
#[inline(always)]
pub const fn set_ranges(raw: u64, ranges: &[(u32, u32)], value: u64) -> u64 {
    assert!(
        value <= field_mask(0, ranges_width(ranges)),
        "value too wide for its field; the try_with_ method returns an error instead"
    );
    let (mut raw, mut shift, mut i) = (raw, 0, ranges.len());
    while i > 0 {
        i -= 1;
        let (msb, lsb) = ranges[i];
        let width = msb - lsb + 1;
        raw = set_bits(raw, msb, lsb, (value >> shift) & field_mask(0, width));
        shift += width;
    }
    raw
}

/// `raw` with the field of several bit ranges `ranges` set to `value`, or an error naming the
/// register and field if `value` does not fit. Every generated `try_with_*` of such a field is
/// this.
#[inline(always)]
pub const fn try_set_ranges(
    raw: u64,
    ranges: &[(u32, u32)],
    value: u64,
    register: &'static str,
    field: &'static str,
) -> Result<u64, FieldTooWide> {
    let width = ranges_width(ranges);
    if value > field_mask(0, width) {
        return Err(FieldTooWide { register, field, width, value });
    }
    Ok(set_ranges(raw, ranges, value))
}

/// The width of a field of several bit ranges: their widths summed.
pub const fn ranges_width(ranges: &[(u32, u32)]) -> u32 {
    let (mut width, mut i) = (0, 0);
    while i < ranges.len() {
        width += ranges[i].0 - ranges[i].1 + 1;
        i += 1;
    }
    width
}

/// The register bits of a field of several bit ranges.
pub const fn ranges_mask(ranges: &[(u32, u32)]) -> u64 {
    let (mut mask, mut i) = (0, 0);
    while i < ranges.len() {
        let (msb, lsb) = ranges[i];
        mask |= field_mask(lsb, msb - lsb + 1);
        i += 1;
    }
    mask
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

/// Where a field of one bit range lies in its register: bits `msb:lsb`. Each field of a
/// generated register has one (`WEvtSel::THRESH_BITS`), the one place its position is written
/// besides its `FieldInfo` row: the field's getter and builders read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BitRange {
    /// Most significant bit.
    pub msb: u32,
    /// Least significant bit: where the value's bit 0 lies.
    pub lsb: u32,
}

impl BitRange {
    /// Bits `msb:lsb`.
    pub const fn new(msb: u32, lsb: u32) -> Self {
        Self { msb, lsb }
    }

    /// The number of bits.
    pub const fn width(self) -> u32 {
        self.msb - self.lsb + 1
    }

    /// The field's value in `raw`, shifted down ([`get_bits`]).
    #[inline(always)]
    pub const fn get(self, raw: u64) -> u64 {
        get_bits(raw, self.msb, self.lsb)
    }

    /// Whether the field is non-zero in `raw`: the getter of a one-bit field.
    #[inline(always)]
    pub const fn is_set(self, raw: u64) -> bool {
        self.get(raw) != 0
    }

    /// `raw` with the field set to `value` ([`set_bits`]).
    ///
    /// # Panics
    /// If `value` does not fit in the field (a compile error in const context).
    #[inline(always)]
    pub const fn set(self, raw: u64, value: u64) -> u64 {
        set_bits(raw, self.msb, self.lsb, value)
    }

    /// `raw` with the field set to `value`, or an error naming the register and field if
    /// `value` does not fit ([`try_set_bits`]).
    #[inline(always)]
    pub const fn try_set(
        self,
        raw: u64,
        value: u64,
        register: &'static str,
        field: &'static str,
    ) -> Result<u64, FieldTooWide> {
        try_set_bits(raw, self.msb, self.lsb, value, register, field)
    }
}

/// Where a field made of several bit ranges lies (`bits="35:32,7:0"`): each range as
/// `(msb, lsb)`, most significant first, as [`get_ranges`] takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BitRanges(pub &'static [(u32, u32)]);

impl BitRanges {
    /// The number of bits, every range together.
    pub const fn width(self) -> u32 {
        ranges_width(self.0)
    }

    /// The field's value in `raw`, its ranges gathered ([`get_ranges`]).
    #[inline(always)]
    pub const fn get(self, raw: u64) -> u64 {
        get_ranges(raw, self.0)
    }

    /// `raw` with the field set to `value`, scattered over its ranges ([`set_ranges`]).
    ///
    /// # Panics
    /// If `value` does not fit in the field (a compile error in const context).
    #[inline(always)]
    pub const fn set(self, raw: u64, value: u64) -> u64 {
        set_ranges(raw, self.0, value)
    }

    /// `raw` with the field set to `value`, or an error naming the register and field if
    /// `value` does not fit ([`try_set_ranges`]).
    #[inline(always)]
    pub const fn try_set(
        self,
        raw: u64,
        value: u64,
        register: &'static str,
        field: &'static str,
    ) -> Result<u64, FieldTooWide> {
        try_set_ranges(raw, self.0, value, register, field)
    }
}

/// Where a bit array lies: `count` elements of `element_width` bits from `lsb` up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BitArray {
    /// The lowest bit of element 0.
    pub lsb: u32,
    /// The bits of one element.
    pub element_width: u32,
    /// The most elements the register has room for.
    pub count: u32,
}

impl BitArray {
    /// `count` elements of `element_width` bits from `lsb` up.
    pub const fn new(lsb: u32, element_width: u32, count: u32) -> Self {
        Self { lsb, element_width, count }
    }

    /// Element `n` in `raw` ([`get_element`]).
    ///
    /// # Panics
    /// If `n` is `count` or more.
    #[inline(always)]
    pub const fn get(self, raw: u64, n: u32) -> u64 {
        get_element(raw, self.lsb, self.element_width, self.count, n)
    }

    /// Whether element `n` is non-zero in `raw`: the getter of an array of one-bit elements.
    ///
    /// # Panics
    /// If `n` is `count` or more.
    #[inline(always)]
    pub const fn is_set(self, raw: u64, n: u32) -> bool {
        self.get(raw, n) != 0
    }

    /// `raw` with element `n` set to `value` ([`set_element`]).
    ///
    /// # Panics
    /// If `n` is `count` or more, or `value` is wider than an element.
    #[inline(always)]
    pub const fn set(self, raw: u64, n: u32, value: u64) -> u64 {
        set_element(raw, self.lsb, self.element_width, self.count, n, value)
    }
}

#[cfg(feature = "metadata")]
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

/// A register layout: the metadata and masks of one register, as the type parameter of its
/// value type ([`Reg32`] or [`Reg64`]).
///
/// Every generated register is a type alias such as `pub type WEvtSel = Reg64<WEvtSelLayout>`:
/// the layout (an empty enum) carries the facts, the value type carries the bits, and the
/// generated `impl WEvtSel { .. }` adds one getter and one `with_` builder per field. What
/// every register shares (`RESET`, `from_bits`, `Debug`, [`Register`]) is written once below.
pub trait Layout: 'static {
    /// The register's name in the guide (`W_MSR_PMON_EVT_SEL{n}`).
    const NAME: &'static str;
    /// Everything the spec says about this register (with the `metadata` feature).
    #[cfg(feature = "metadata")]
    const INFO: &'static RegisterInfo;
    /// The fields, most significant first, reserved ones included (with the `metadata`
    /// feature).
    #[cfg(feature = "metadata")]
    const FIELDS: &'static [FieldInfo];
    /// The value after reset.
    const RESET: u64;
    /// Bits software must write as zero (`rsv` and `rv` fields).
    const RESERVED_MASK: u64;
    /// Bits that read as zero and ignore writes (`ig` fields).
    const IGNORED_MASK: u64;
    /// Bits software may write (`rw`, `rw-v`, `wo`, `w1c` and `rw1c` fields).
    const WRITABLE_MASK: u64;
}

/// Defines a register value type over `$raw`; used twice, for 32- and 64-bit registers.
macro_rules! register_value {
    ($(#[$doc:meta])* $name:ident($raw:ident)) => {
        $(#[$doc])*
        #[repr(transparent)]
        pub struct $name<L>($raw, PhantomData<fn() -> L>);

        impl<L: Layout> $name<L> {
            /// The value after reset.
            pub const RESET: Self = Self(L::RESET as $raw, PhantomData);
            /// Bits software must write as zero (`rsv` and `rv` fields). No safe method sets them.
            pub const RESERVED_MASK: $raw = L::RESERVED_MASK as $raw;
            /// Bits that read as zero and ignore writes (`ig` fields).
            pub const IGNORED_MASK: $raw = L::IGNORED_MASK as $raw;
            /// Bits software may write (`rw`, `rw-v`, `wo`, `w1c` and `rw1c` fields).
            pub const WRITABLE_MASK: $raw = L::WRITABLE_MASK as $raw;
            /// The fields, most significant first, reserved ones included (with the `metadata`
            /// feature).
            #[cfg(feature = "metadata")]
            pub const FIELDS: &'static [FieldInfo] = L::FIELDS;

            /// The value of `raw` with the reserved bits cleared, so that it is always safe to
            /// write. Use [`Self::try_from_bits`] to reject such bits instead.
            #[inline]
            pub const fn from_bits(raw: $raw) -> Self {
                Self(raw & !Self::RESERVED_MASK, PhantomData)
            }

            /// `raw` as it is, or an error if it sets any reserved bit.
            #[inline]
            pub const fn try_from_bits(raw: $raw) -> Result<Self, ReservedBitsSet> {
                if raw & Self::RESERVED_MASK != 0 {
                    Err(ReservedBitsSet { register: L::NAME, bits: (raw & Self::RESERVED_MASK) as u64 })
                } else {
                    Ok(Self(raw, PhantomData))
                }
            }

            /// The raw register value.
            #[inline]
            pub const fn bits(self) -> $raw {
                self.0
            }

            /// The bits widened to 64, for the generated accessors' shared helpers.
            // Unused for Reg32 when no processor feature is on (the architectural PMU's
            // registers are all 64-bit).
            #[allow(dead_code)]
            #[inline(always)]
            pub(crate) const fn raw64(self) -> u64 {
                self.0 as u64
            }

            /// This value with the bits `raw`, which a generated accessor computed from this
            /// value by changing one field: reserved bits stay as they were (clear).
            #[allow(dead_code)]
            #[inline(always)]
            pub(crate) const fn with_raw64(self, raw: u64) -> Self {
                Self(raw as $raw, PhantomData)
            }

            /// [`Self::with_raw64`] of the bits a generated `try_with_` computed, or its error.
            #[allow(dead_code)]
            #[inline(always)]
            pub(crate) const fn try_with_raw64(self, raw: Result<u64, FieldTooWide>) -> Result<Self, FieldTooWide> {
                match raw {
                    Ok(raw) => Ok(self.with_raw64(raw)),
                    Err(e) => Err(e),
                }
            }
        }

        impl<L> Clone for $name<L> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<L> Copy for $name<L> {}
        impl<L> PartialEq for $name<L> {
            fn eq(&self, other: &Self) -> bool {
                self.0 == other.0
            }
        }
        impl<L> Eq for $name<L> {}
        impl<L> core::hash::Hash for $name<L> {
            fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
                self.0.hash(state)
            }
        }
        impl<L: Layout> Default for $name<L> {
            /// The reset value.
            fn default() -> Self {
                Self::RESET
            }
        }
        /// Each field by name (with the `metadata` feature); without it, the register's name
        /// and the raw bits.
        impl<L: Layout> fmt::Debug for $name<L> {
            #[cfg(feature = "metadata")]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                debug_fields(f, L::INFO.type_name, L::FIELDS, self.0 as u64)
            }
            #[cfg(not(feature = "metadata"))]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:#x})", L::NAME, self.0)
            }
        }
        impl<L: Layout> Register for $name<L> {
            #[cfg(feature = "metadata")]
            const INFO: &'static RegisterInfo = L::INFO;
            fn from_raw(raw: u64) -> Self {
                Self::from_bits(raw as $raw)
            }
            fn to_raw(self) -> u64 {
                self.0 as u64
            }
        }
    };
}

register_value! {
    /// The value of a 32-bit register of layout `L` (most PCI registers).
    Reg32(u32)
}

register_value! {
    /// The value of a 64-bit register of layout `L` (MSRs and 64-bit PCI counters).
    Reg64(u64)
}

/// Writes a register type's notes once: each note is a paragraph of the type's documentation
/// (`**title** (kind): text`) and, with the `metadata` feature, a [`NoteInfo`] of the constant
/// `$notes` that the register's [`RegisterInfo::notes`] names.
macro_rules! noted {
    (
        $notes:ident = [$(($kind:literal, $title:literal, $text:literal)),+ $(,)?];
        $(#[$attr:meta])*
        $vis:vis type $name:ident = $ty:ty;
    ) => {
        $(#[$attr])*
        $(
            #[doc = ""]
            #[doc = concat!("**", $title, "** (", $kind, "): ", $text)]
        )+
        $vis type $name = $ty;

        #[cfg(feature = "metadata")]
        const $notes: &[NoteInfo] = &[$(NoteInfo { kind: $kind, title: $title, text: $text }),+];
    };
}
pub(crate) use noted;
