//! CPUID: leaf 0AH, how many architectural counters a logical CPU has and how wide they are
//! (shared by the simulator, which reports one, and the core sampling code, which reads one);
//! and leaves 0 and 1, the vendor and signature `identify` matches against the spec.

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
