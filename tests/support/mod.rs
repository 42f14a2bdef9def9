//! What several workspace-level tests share.

/// Whether a processor of the spec describes only layouts of structures found at run time
/// (the discovery table, the CMN mesh's node configuration, ACPI's APMT): every register is
/// in the table space and no unit is a box of the structure model. Tests that walk boxes or
/// core events skip these processors by this one rule rather than by a list of names.
pub fn layouts_only(p: &pmu_regs::ProcessorInfo) -> bool {
    !p.units.is_empty()
        && p.units.iter().all(|u| {
            u.pmu.is_none()
                && u.registers
                    .iter()
                    .all(|r| r.space == pmu_regs::Space::Table)
        })
}
