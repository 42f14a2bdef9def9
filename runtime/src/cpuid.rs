//! CPUID leaf 0AH: how many architectural counters a logical CPU has and how wide they are.
//! Shared by the simulator (which reports one) and the core sampling code (which reads one).

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
