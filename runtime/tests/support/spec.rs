//! The spec's processors by id, as the tests name them.

/// The processor of the spec whose id is `id`.
pub fn processor(id: &str) -> &'static pmu_regs::ProcessorInfo {
    pmu_regs::PROCESSORS
        .iter()
        .copied()
        .find(|p| p.id == id)
        .unwrap_or_else(|| panic!("{id} is in the spec"))
}
