//! Every C identifier and file name the C headers use.
//!
//! The rules take plain strings (a processor's module, a register's or field's spec name), so
//! that a consumer holding only the `pmu_regs` metadata (the C test in `tests/`) derives the
//! same names:
//!
//! - prefix: `PMU_<MODULE>_` for macros and `pmu_<module>_` for functions, so headers of two
//!   processors can be included together (`PMU_XEON_7500_`, `pmu_arch_`);
//! - a register instance and index: its concrete name (`W_MSR_PMON_EVT_SEL2`); MSRs name the
//!   MSR number directly, PCI registers add `_DEVICE_ID`, `_DEVICE`, `_FUNCTION`, `_OFFSET`;
//! - a layout: the register name without placeholders (`W_MSR_PMON_EVT_SEL`), then `_RESET`,
//!   `_RESERVED_MASK`, `_IGNORED_MASK`, `_WRITABLE_MASK`, `_WIDTH`, `_COUNT`;
//! - a field: the layout, then the field name as the Rust accessor spells it (`ev_sel`), then
//!   `_SHIFT`, `_WIDTH`, `_MASK`, `_MAX`, and `<layout>_<field>_get`/`_set` functions;
//! - an event: `<UNIT>_EVENT_<constant>` (the Rust constant name), then `_CODE`, `_UMASK`,
//!   `_EXT_SEL`, `_COUNTERS`.

use super::case::{constant_case, snake_case};

/// The common header, which every processor header includes.
pub const COMMON_HEADER: &str = "pmu_regs_common.h";

/// Prefix of everything the common header defines.
pub const COMMON_PREFIX: &str = "PMU_REGS_";

/// The file name of a processor's header (`pmu_regs_xeon_7500.h`).
pub fn header_file(module: &str) -> String {
    format!("pmu_regs_{}.h", constant_case(module).to_ascii_lowercase())
}

/// The include guard of a header file (`PMU_REGS_XEON_7500_H`).
pub fn include_guard(file: &str) -> String {
    constant_case(file)
}

/// The macro prefix of a processor (`PMU_XEON_7500_`).
pub fn macro_prefix(module: &str) -> String {
    format!("PMU_{}_", constant_case(module))
}

/// The function prefix of a processor (`pmu_xeon_7500_`).
pub fn function_prefix(module: &str) -> String {
    macro_prefix(module).to_ascii_lowercase()
}

/// A field's name as in identifiers: the Rust accessor's spelling without the bit-array
/// placeholder (`PERFEVTSEL{n}_InUse` -> `PERFEVTSEL_IN_USE`).
pub fn field_part(field: &str) -> String {
    constant_case(&snake_case(&field.replace("{n}", "")))
}

/// The macro naming a register instance's MSR number, or the stem of its PCI macros
/// (`PMU_XEON_7500_W_MSR_PMON_EVT_SEL2`).
pub fn address(module: &str, concrete_name: &str) -> String {
    format!("{}{}", macro_prefix(module), constant_case(concrete_name))
}

/// The function-like macro giving element `n` of a regularly spaced array of one instance:
/// the MSR number, or for PCI the offset (`PMU_XEON_7500_W_MSR_PMON_EVT_SEL(n)`,
/// `PMU_XEON_E5_2600_HA_PCI_PMON_CTL_OFFSET(n)`).
pub fn array_address(module: &str, instance_name: &str, pci: bool) -> String {
    let base = address(module, instance_name);
    if pci {
        format!("{base}_OFFSET")
    } else {
        base
    }
}

/// The stem of a layout's macros (`PMU_XEON_7500_W_MSR_PMON_EVT_SEL`); `generic_name` is the
/// register name without placeholders.
pub fn layout(module: &str, generic_name: &str) -> String {
    format!("{}{}", macro_prefix(module), constant_case(generic_name))
}

/// The stem of a field's macros (`PMU_XEON_7500_W_MSR_PMON_EVT_SEL_EV_SEL`).
pub fn field(module: &str, generic_name: &str, field: &str) -> String {
    format!("{}_{}", layout(module, generic_name), field_part(field))
}

/// A named value of a field (`PMU_XEON_7500_W_MSR_PMON_EVT_SEL_INVERT_GE`).
pub fn field_value(module: &str, generic_name: &str, field_name: &str, value: &str) -> String {
    format!(
        "{}_{}",
        field(module, generic_name, field_name),
        constant_case(value)
    )
}

/// The extract function of a field (`pmu_xeon_7500_w_msr_pmon_evt_sel_ev_sel_get`).
pub fn getter(module: &str, generic_name: &str, field_name: &str) -> String {
    format!(
        "{}_get",
        field(module, generic_name, field_name).to_ascii_lowercase()
    )
}

/// The insert function of a field (`pmu_xeon_7500_w_msr_pmon_evt_sel_ev_sel_set`).
pub fn setter(module: &str, generic_name: &str, field_name: &str) -> String {
    format!(
        "{}_set",
        field(module, generic_name, field_name).to_ascii_lowercase()
    )
}

/// The stem of an event's macros (`PMU_XEON_E5_2600_HA_EVENT_REQUESTS_READS`); `ident` is the
/// event's Rust constant name.
pub fn event(module: &str, unit: &str, ident: &str) -> String {
    format!(
        "{}{}_EVENT_{}",
        macro_prefix(module),
        constant_case(unit),
        constant_case(ident)
    )
}

/// The stem of a unit's memory-mapped window macros (`PMU_ICE_LAKE_SP_IMC_MMIO_WINDOW`).
pub fn mmio_window(module: &str, unit: &str) -> String {
    format!(
        "{}{}_MMIO_WINDOW",
        macro_prefix(module),
        constant_case(unit)
    )
}

/// The stem of a metric's macros (`PMU_SKYLAKE_SP_METRIC_MEMORY_BANDWIDTH_READ`).
pub fn metric(module: &str, name: &str) -> String {
    format!("{}METRIC_{}", macro_prefix(module), constant_case(name))
}

/// A metric's evaluating function (`pmu_skylake_sp_metric_memory_bandwidth_read`); its steps
/// are this with `_steps`.
pub fn metric_function(module: &str, name: &str) -> String {
    metric(module, name).to_ascii_lowercase()
}

/// The macro suffix of a mask role's value (`umask-ext` -> `UMASK_EXT`, `port-mask`,
/// `fc-mask`).
pub fn mask_suffix(role: &str) -> String {
    constant_case(role)
}

/// The stem of a discovery domain's macros (`PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_IMH`).
pub fn discovery_domain(module: &str, id: &str) -> String {
    format!(
        "{}DISCOVERY_DOMAIN_{}",
        macro_prefix(module),
        constant_case(id)
    )
}

/// The macro giving the discovery type a domain's tables list and software ignores, under the
/// type's name as the kernel spells it (`PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_CBB_IGNORED_SB2UCIE`).
pub fn discovery_domain_ignored(module: &str, id: &str, type_name: &str) -> String {
    let name: String = type_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{}_IGNORED_{name}", discovery_domain(module, id))
}

/// The macro giving how many discovery domains a processor has
/// (`PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAINS`).
pub fn discovery_domain_count(module: &str) -> String {
    format!("{}DISCOVERY_DOMAINS", macro_prefix(module))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rules() {
        assert_eq!(header_file("xeon_7500"), "pmu_regs_xeon_7500.h");
        assert_eq!(include_guard(COMMON_HEADER), "PMU_REGS_COMMON_H");
        assert_eq!(
            address("xeon_7500", "W_MSR_PMON_EVT_SEL2"),
            "PMU_XEON_7500_W_MSR_PMON_EVT_SEL2"
        );
        assert_eq!(
            field("arch", "IA32_PERF_GLOBAL_INUSE", "PERFEVTSEL{n}_InUse"),
            "PMU_ARCH_IA32_PERF_GLOBAL_INUSE_PERFEVTSEL_IN_USE"
        );
        assert_eq!(
            getter("xeon_7500", "W_MSR_PMON_EVT_SEL", "ev_sel"),
            "pmu_xeon_7500_w_msr_pmon_evt_sel_ev_sel_get"
        );
        assert_eq!(
            event("xeon_e5_2600", "HA", "REQUESTS_READS"),
            "PMU_XEON_E5_2600_HA_EVENT_REQUESTS_READS"
        );
        assert_eq!(
            array_address("xeon_e5_2600", "HA_PCI_PMON_CTL", true),
            "PMU_XEON_E5_2600_HA_PCI_PMON_CTL_OFFSET"
        );
        assert_eq!(
            mmio_window("ice_lake_sp", "IMC"),
            "PMU_ICE_LAKE_SP_IMC_MMIO_WINDOW"
        );
    }
}
