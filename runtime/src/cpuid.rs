//! CPUID: leaf 0AH, how many architectural counters a logical CPU has and how wide they are
//! (shared by the simulator, which reports one, and the core sampling code, which reads one);
//! the bits a spec's `count-cpuid` names ([`CpuidBits`]: how many of a register array's
//! elements the part has, in any leaf); and leaves 0 and 1, the vendor and signature
//! `identify` matches against the spec.

/// CPUID leaf 0AH as the four registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpuid0A {
    /// EAX.
    pub eax: u32,
    /// EBX (event availability; all zero: every architectural event available).
    pub ebx: u32,
    /// ECX.
    pub ecx: u32,
    /// EDX.
    pub edx: u32,
}

impl From<[u32; 4]> for Cpuid0A {
    /// The leaf from its output registers `[EAX, EBX, ECX, EDX]`.
    fn from([eax, ebx, ecx, edx]: [u32; 4]) -> Self {
        Cpuid0A { eax, ebx, ecx, edx }
    }
}

impl Cpuid0A {
    /// Architectural performance-monitoring version (`EAX[7:0]`).
    pub fn version(&self) -> u8 {
        self.eax as u8
    }
    /// General-purpose counters per logical CPU (`EAX[15:8]`).
    pub fn counters(&self) -> u8 {
        (self.eax >> 8) as u8
    }
    /// Width of the general-purpose counters (`EAX[23:16]`).
    pub fn width(&self) -> u8 {
        (self.eax >> 16) as u8
    }
    /// Fixed counters (`EDX[4:0]`).
    pub fn fixed_counters(&self) -> u8 {
        (self.edx & 0x1F) as u8
    }
    /// Width of the fixed counters (`EDX[12:5]`).
    pub fn fixed_width(&self) -> u8 {
        ((self.edx >> 5) & 0xFF) as u8
    }

    /// Whether fixed counter `i` exists. From version 5, `ECX` is a bitmap of the fixed
    /// counters besides the first `EDX[4:0]`: counter i exists if `ECX[i]` is set or `i` is
    /// below that count (SDM Vol. 3B, "Architectural Performance Monitoring Version 5"; KVM's
    /// selftests test a vCPU's fixed counters the same way). Before version 5 `ECX` is
    /// reserved and only the count says.
    pub fn fixed_counter(&self, i: u32) -> bool {
        let in_bitmap = self.version() >= 5 && i < 32 && self.ecx >> i & 1 == 1;
        in_bitmap || i < u32::from(self.fixed_counters())
    }

    /// The fixed counters that exist, as [`Self::fixed_counter`] says: bit i for counter i.
    pub fn fixed_counter_mask(&self) -> u32 {
        (0..32)
            .filter(|&i| self.fixed_counter(i))
            .fold(0, |m, i| m | 1 << i)
    }
}

/// Bits of one CPUID leaf's register, as the spec's `count-cpuid` writes them
/// (`0AH.EAX[15:8]`, `80000022H.EBX[3:0]`): where a part says how many elements of a register
/// array it implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuidBits {
    /// The leaf (EAX on entry).
    pub leaf: u32,
    /// The output register: 0 EAX, 1 EBX, 2 ECX, 3 EDX.
    pub register: usize,
    /// Most significant bit.
    pub msb: u32,
    /// Least significant bit.
    pub lsb: u32,
}

impl CpuidBits {
    /// Reads `0AH.EAX[15:8]`; `None` for anything else (the validator admits only this form).
    pub fn parse(text: &str) -> Option<Self> {
        let (leaf, rest) = text.split_once('.')?;
        let leaf = u32::from_str_radix(leaf.strip_suffix('H')?, 16).ok()?;
        let register = ["EAX[", "EBX[", "ECX[", "EDX["]
            .iter()
            .position(|p| rest.starts_with(p))?;
        let (msb, lsb) = rest.get(4..)?.strip_suffix(']')?.split_once(':')?;
        let (msb, lsb): (u32, u32) = (msb.parse().ok()?, lsb.parse().ok()?);
        (lsb <= msb && msb < 32).then_some(CpuidBits {
            leaf,
            register,
            msb,
            lsb,
        })
    }

    /// The bits' value in a leaf's output registers `[EAX, EBX, ECX, EDX]`.
    pub fn extract(&self, regs: [u32; 4]) -> u32 {
        let width = self.msb - self.lsb + 1;
        let mask = if width == 32 {
            u32::MAX
        } else {
            (1 << width) - 1
        };
        (regs[self.register] >> self.lsb) & mask
    }

    /// `regs` with the bits set to `value` (truncated to their width).
    pub fn insert(&self, mut regs: [u32; 4], value: u32) -> [u32; 4] {
        let width = self.msb - self.lsb + 1;
        let mask = if width == 32 {
            u32::MAX
        } else {
            (1 << width) - 1
        };
        let r = &mut regs[self.register];
        *r = (*r & !(mask << self.lsb)) | ((value & mask) << self.lsb);
        regs
    }
}

/// CPUID leaf `leaf` (sub-leaf 0) of the processor this code runs on, as `[EAX, EBX, ECX,
/// EDX]`; `None` where there is no CPUID or the processor's highest leaf of that range (basic
/// or extended) is below it.
pub fn host_cpuid(leaf: u32) -> Option<[u32; 4]> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let max = raw_cpuid::cpuid!(leaf & 0x8000_0000).eax;
        if leaf > max {
            return None;
        }
        let r = raw_cpuid::cpuid!(leaf);
        Some([r.eax, r.ebx, r.ecx, r.edx])
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        let _ = leaf;
        None
    }
}

/// CPUID leaf 0AH of the processor this code runs on, or `None` if it has none (not x86, or
/// no architectural performance monitoring).
pub fn host_cpuid_0a() -> Option<Cpuid0A> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let id = raw_cpuid::CpuId::new();
        if id.get_vendor_info()?.as_str() != "GenuineIntel" {
            return None;
        }
        let leaf = raw_cpuid::cpuid!(0x0A);
        Some(Cpuid0A {
            eax: leaf.eax,
            ebx: leaf.ebx,
            ecx: leaf.ecx,
            edx: leaf.edx,
        })
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        None
    }
}

/// The processor this code runs on as CPUID leaves 0 and 1 give it: the vendor string
/// (`GenuineIntel`, `AuthenticAMD`), display family, display model and stepping; `None` where
/// there is no CPUID (not x86).
pub fn host_signature() -> Option<(String, u32, u32, u32)> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let id = raw_cpuid::CpuId::new();
        let vendor = id.get_vendor_info()?.as_str().to_string();
        let f = id.get_feature_info()?;
        let base_family = u32::from(f.base_family_id());
        Some((
            vendor,
            display_family(base_family, u32::from(f.extended_family_id())),
            display_model(
                base_family,
                u32::from(f.base_model_id()),
                u32::from(f.extended_model_id()),
            ),
            u32::from(f.stepping_id()),
        ))
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        None
    }
}

/// The display family from leaf 1's family fields: the extended family is added only to base
/// family 0xF (Intel SDM Vol. 2A, CPUID; AMD APM Vol. 3, CPUID Fn0000_0001_EAX), so AMD's
/// family 19h is 0xF + 0xA.
pub fn display_family(base_family: u32, extended_family: u32) -> u32 {
    if base_family == 0xF {
        base_family + extended_family
    } else {
        base_family
    }
}

/// The display model from leaf 1's model fields: the extended model is the high nibble for
/// base families 0x6 and 0xF (the same sources), so Skylake-SP's model is 0x55.
pub fn display_model(base_family: u32, base_model: u32, extended_model: u32) -> u32 {
    if base_family == 0x6 || base_family == 0xF {
        extended_model << 4 | base_model
    } else {
        base_model
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_cpuid_bits_read_as_the_spec_writes_them() {
        let amd = CpuidBits::parse("80000022H.EBX[15:10]").unwrap();
        assert_eq!(
            (amd.leaf, amd.register, amd.msb, amd.lsb),
            (0x8000_0022, 1, 15, 10)
        );
        // Linux's cpuid_0x80000022_ebx: 6 core PMCs (3:0), 16 LBR entries (9:4), 4 DF (15:10).
        let regs = [0, 6 | 16 << 4 | 4 << 10, 0, 0];
        assert_eq!(amd.extract(regs), 4);
        assert_eq!(amd.extract(amd.insert(regs, 2)), 2);
        assert_eq!(amd.insert(regs, 2)[1] & 0x3FF, 6 | 16 << 4);
        let intel = CpuidBits::parse("0AH.EAX[15:8]").unwrap();
        assert_eq!(intel.extract([0x0030_0803, 0, 0, 0]), 8);
        for bad in [
            "0A.EAX[15:8]",
            "0AH.EEX[1:0]",
            "0AH.EAX[8:15]",
            "0AH.EAX[32:0]",
            "ZZH.EAX[1:0]",
        ] {
            assert_eq!(CpuidBits::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn fixed_counters_are_the_count_and_from_version_5_the_bitmap() {
        let leaf = |version: u32, ecx: u32, count: u32| Cpuid0A {
            eax: version,
            ebx: 0,
            ecx,
            edx: count | 48 << 5,
        };
        // Version 4, three fixed counters: 0-2; a stray ECX bit is reserved, not a counter.
        assert_eq!(leaf(4, 0b1000, 3).fixed_counter_mask(), 0b0111);
        // Version 5 with a count of 4 (Ice Lake): 0-3.
        assert_eq!(leaf(5, 0, 4).fixed_counter_mask(), 0b1111);
        // Version 5, a count of 0 and the bitmap 0b101 (a hypervisor hiding counter 1).
        let holes = leaf(5, 0b101, 0);
        assert!(holes.fixed_counter(0) && !holes.fixed_counter(1) && holes.fixed_counter(2));
        // The two together: counters below the count, and those the bitmap adds.
        assert_eq!(leaf(5, 0b1000_0000, 3).fixed_counter_mask(), 0b1000_0111);
        assert!(!leaf(5, u32::MAX, 0).fixed_counter(32));
    }

    #[test]
    fn display_family_and_model_follow_the_vendors_rules() {
        // AMD EPYC 7713 (family 19h, model 01h): base family 0xF, extended 0xA.
        assert_eq!(display_family(0xF, 0xA), 0x19);
        assert_eq!(display_model(0xF, 0x1, 0x0), 0x01);
        // AMD family 17h model 31h (Zen 2 EPYC).
        assert_eq!(display_model(0xF, 0x1, 0x3), 0x31);
        // Intel 06_55H: the extended family is not added to 6; the extended model is.
        assert_eq!(display_family(0x6, 0x0), 0x6);
        assert_eq!(display_model(0x6, 0x5, 0x5), 0x55);
        // Other families keep the base model.
        assert_eq!(display_model(0x5, 0x4, 0x3), 0x4);
    }
}
