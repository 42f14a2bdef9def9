//! Runtime support for the registers in [`pmu_regs`]: backends and sampling logic.
//!
//! This crate is the home of the MSR (`/dev/cpu/N/msr`), PCI-config-space and simulated-PMU
//! backends and of the guides' sampling procedures; they arrive with the runtime issue. For now
//! it offers register lookup by name over the generated metadata, which every later part uses.

use pmu_regs::{AddressInfo, RegisterInfo, PROCESSORS};

/// Finds a register instance by its concrete name (`W_MSR_PMON_EVT_SEL2`), ignoring case.
pub fn find_register(name: &str) -> Option<(&'static RegisterInfo, &'static AddressInfo)> {
    PROCESSORS
        .iter()
        .flat_map(|p| p.units.iter())
        .flat_map(|u| u.registers.iter())
        .find_map(|r| {
            r.known_addresses()
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(name))
                .map(|a| (*r, a))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_instances_case_insensitively() {
        let (reg, addr) = find_register("w_msr_pmon_evt_sel2").expect("W-box event select 2");
        assert_eq!(reg.type_name, "WEvtSel");
        assert_eq!(addr.location, pmu_regs::Location::Msr(0xC94));
        assert!(find_register("W_MSR_PMON_EVT_SEL9").is_none());
    }
}
