//! Uses pmu-regs with no standard library, as a kernel module or hypervisor would: registers
//! built in const context, typed addresses, the metadata table, and the checked setters.
//! If pmu-regs ever needs `std` or an allocator, this crate stops compiling.
#![no_std]

use pmu_regs::arch::core::{Ia32PerfEvtSel, IA32_PERFEVTSEL};
use pmu_regs::xeon_7500::ubox::UGlobalCtl;
use pmu_regs::{FieldTooWide, Register};

/// An event select built at compile time.
pub const CYCLES: Ia32PerfEvtSel = Ia32PerfEvtSel::RESET
    .with_ev_sel(0x3C)
    .with_usr(true)
    .with_os(true)
    .with_en(true);

/// The MSR to write it to, for counter `n`.
pub fn evtsel_msr(n: usize) -> Option<u32> {
    IA32_PERFEVTSEL.get(n).map(|m| m.address())
}

/// A guest-supplied core number, checked rather than trusted.
pub fn pmi_to_core(core: u8) -> Result<u32, FieldTooWide> {
    UGlobalCtl::RESET
        .try_with_pmi_core_sel(core)
        .map(|v| v.bits())
}

/// Counts registers without allocating.
pub fn register_count() -> usize {
    pmu_regs::PROCESSORS
        .iter()
        .flat_map(|p| p.units.iter())
        .map(|u| u.registers.len())
        .sum()
}

/// What a virtual PMU does with a guest's write: drop what must stay zero.
pub fn sanitise_evtsel(guest: u64) -> u64 {
    Ia32PerfEvtSel::from_raw(guest).bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn works_without_std() {
        assert_eq!(CYCLES.bits(), 0x43_003C);
        assert_eq!(evtsel_msr(1), Some(0x187));
        assert!(pmi_to_core(16).is_err());
        assert!(register_count() > 50);
        assert_eq!(sanitise_evtsel(1 << 40 | 0x3C), 0x3C);
    }
}
