//! MIDR_EL1, the Main ID Register by which an Arm core says what it is, as x86 parts say it
//! with CPUID: its implementer (bits 31:24, 0x41 for Arm Limited), variant (23:20),
//! architecture (19:16), primary part number (15:4) and revision (3:0) (Linux,
//! `arch/arm64/include/asm/cputype.h`). Linux shows it two ways: the register itself in
//! `/sys/devices/system/cpu/cpuN/regs/identification/midr_el1`, and its fields as
//! `/proc/cpuinfo`'s `CPU implementer`, `CPU variant`, `CPU part` and `CPU revision` lines.
//! The spec's `<midr>` says which implementer and part each Arm core of it is
//! ([`pmu_regs::processor_for_midr`]).

use std::path::Path;

/// One core's MIDR_EL1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Midr(pub u32);

impl Midr {
    /// The register from its fields, as the architecture places them.
    pub fn from_fields(
        implementer: u32,
        variant: u32,
        architecture: u32,
        part: u32,
        revision: u32,
    ) -> Self {
        Midr(
            (implementer & 0xFF) << 24
                | (variant & 0xF) << 20
                | (architecture & 0xF) << 16
                | (part & 0xFFF) << 4
                | revision & 0xF,
        )
    }

    /// Implementer, bits 31:24 (0x41: Arm Limited).
    pub fn implementer(self) -> u32 {
        self.0 >> 24
    }

    /// Variant, bits 23:20: the `r` of `r0p1`.
    pub fn variant(self) -> u32 {
        self.0 >> 20 & 0xF
    }

    /// Primary part number, bits 15:4 (0xD4F: Neoverse V2).
    pub fn part(self) -> u32 {
        self.0 >> 4 & 0xFFF
    }

    /// Revision, bits 3:0: the `p` of `r0p1`.
    pub fn revision(self) -> u32 {
        self.0 & 0xF
    }

    /// The spec's core with this implementer and part number, if the spec describes it and
    /// its feature is built.
    pub fn processor(self) -> Option<&'static pmu_regs::ProcessorInfo> {
        pmu_regs::processor_for_midr(u64::from(self.0))
    }

    /// Whether some core of the spec has this implementer (whatever its part).
    pub fn known_implementer(self) -> bool {
        pmu_regs::PROCESSORS
            .iter()
            .filter_map(|p| p.midr)
            .any(|m| u32::from(m.implementer) == self.implementer())
    }

    /// `MIDR_EL1 0x410fd4f1: implementer 0x41, part 0xd4f, r0p1`.
    pub fn describe(self) -> String {
        format!(
            "MIDR_EL1 {:#010x}: implementer {:#04x}, part {:#05x}, r{}p{}",
            self.0,
            self.implementer(),
            self.part(),
            self.variant(),
            self.revision()
        )
    }

    /// The register Linux shows in `ROOT/sys/devices/system/cpu/cpu0/regs/identification/midr_el1`
    /// (`0x00000000410fd4f1`: 64 bits, the upper 32 reserved), if that file is there and holds
    /// a hex number.
    pub fn from_sysfs(root: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(
            root.join("sys/devices/system/cpu/cpu0/regs/identification/midr_el1"),
        )
        .ok()?;
        let hex = text.trim().strip_prefix("0x")?;
        let value = u64::from_str_radix(hex, 16).ok()?;
        u32::try_from(value).ok().map(Midr)
    }

    /// The register from the first CPU's block of `/proc/cpuinfo` text on arm64 Linux
    /// (`CPU implementer\t: 0x41`, `CPU architecture: 8`, `CPU variant\t: 0x0`, `CPU part\t:
    /// 0xd4f`, `CPU revision\t: 1`), if it has the implementer and part lines. The kernel
    /// prints `CPU architecture: 8` for every AArch64 core, where the register holds 0xF.
    pub fn from_cpuinfo(text: &str) -> Option<Self> {
        let first = crate::identify::first_cpu_fields(text);
        let number = |key: &str| {
            let v = first.iter().find(|(k, _)| *k == key)?.1;
            match v.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => v.parse().ok(),
            }
        };
        let implementer = number("CPU implementer")?;
        let part = number("CPU part")?;
        (implementer <= 0xFF && part <= 0xFFF).then(|| {
            Midr::from_fields(
                implementer,
                number("CPU variant").unwrap_or(0) & 0xF,
                0xF,
                part,
                number("CPU revision").unwrap_or(0) & 0xF,
            )
        })
    }

    /// What to do on an Arm core of a known implementer whose part no spec describes: the
    /// cores the spec has, and that the architecture's common events are numbered alike on
    /// every PMUv3 core.
    pub fn unknown_core(self) -> String {
        let cores: Vec<String> = pmu_regs::PROCESSORS
            .iter()
            .filter_map(|p| {
                let m = p.midr?;
                (u32::from(m.implementer) == self.implementer())
                    .then(|| format!("{} (part {:#05x})", p.id, m.part))
            })
            .collect();
        format!(
            "no spec describes this Arm core (part {:#05x}) yet; the spec has {}. The \
             architecture's common events (below 0x40) are numbered alike on every PMUv3 \
             core that has them, so the events of one of those (`pmu encode \
             {}:PMEVTYPER0_EL0 event=CPU_CYCLES --perf`) count them here through perf; \
             `--sim` runs the commands on a simulated PMU",
            self.part(),
            cores.join(", "),
            cores
                .first()
                .and_then(|c| c.split(' ').next())
                .unwrap_or("neoverse-v2")
        )
    }
}
