//! Which spec describes the machine: the processor whose CPUID signature (from the spec's
//! `<identity>`, `pmu_regs::processor_for_cpuid`) matches the running CPU's. Generic over
//! every processor in the spec; nothing here names one.

use pmu_regs::support::ProcessorInfo;

/// The CPUID display family and model of the first CPU in `/proc/cpuinfo` text (`cpu family`
/// and `model` lines), or `None` if the text has neither.
pub fn signature_from_cpuinfo(text: &str) -> Option<(u32, u32)> {
    let value = |key: &str| {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .and_then(|(_, v)| v.trim().parse::<u32>().ok())
    };
    Some((value("cpu family")?, value("model")?))
}

/// The `stepping` of the first CPU in `/proc/cpuinfo` text, if it has that line.
pub fn stepping_from_cpuinfo(text: &str) -> Option<u32> {
    text.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == "stepping")
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// The processor of the spec that `/proc/cpuinfo` text describes, if the spec has one. The
/// stepping decides where two processors share a model (06_55H: Skylake-SP, Cascade Lake).
pub fn processor_from_cpuinfo(text: &str) -> Option<&'static ProcessorInfo> {
    let (family, model) = signature_from_cpuinfo(text)?;
    match stepping_from_cpuinfo(text) {
        Some(stepping) => pmu_regs::processor_for_signature(family, model, stepping),
        None => pmu_regs::processor_for_cpuid(family, model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpuinfo(family: u32, model: u32) -> String {
        format!("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: test\n\nprocessor\t: 1\ncpu family\t: {family}\nmodel\t\t: {model}\n")
    }

    fn cpuinfo_stepping(family: u32, model: u32, stepping: u32) -> String {
        format!("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: test\nstepping\t: {stepping}\n\n")
    }

    #[test]
    fn each_signature_in_the_spec_finds_its_processor() {
        let with_cpuid: Vec<_> = pmu_regs::PROCESSORS
            .iter()
            .filter(|p| p.cpuid.is_some())
            .collect();
        assert!(
            with_cpuid.len() >= 3,
            "the spec identifies its uncore processors"
        );
        for p in with_cpuid {
            let (f, m) = p.cpuid.unwrap();
            // Every stepping the processor has finds it; where its steppings are given, the
            // model alone does not.
            let (lo, hi) = p.steppings.unwrap_or((0, 15));
            for s in lo..=hi {
                assert_eq!(
                    processor_from_cpuinfo(&cpuinfo_stepping(f, m, s)).map(|q| q.id),
                    Some(p.id)
                );
            }
            let by_model = processor_from_cpuinfo(&cpuinfo(f, m)).map(|q| q.id);
            assert_eq!(by_model, p.steppings.is_none().then_some(p.id));
            assert!(!p.code_names.is_empty(), "{} has code names", p.id);
        }
    }

    #[test]
    fn ivy_bridge_ep_is_06_3e() {
        // 62 = 0x3E, the E5-2600 v2 (Ivy Bridge-EP) signature.
        let p = processor_from_cpuinfo(&cpuinfo(6, 62)).expect("06_3EH is in the spec");
        assert_eq!(p.id, "xeon-e5-2600-v2");
        assert!(p.code_names.contains(&"IvyTown"));
    }

    #[test]
    fn skylake_sp_and_cascade_lake_are_told_apart_by_stepping() {
        // 85 = 0x55: Skylake-SP at steppings 0-4, Cascade Lake from 5 (Intel's mapfile.csv).
        let id = |s| processor_from_cpuinfo(&cpuinfo_stepping(6, 85, s)).map(|p| p.id);
        assert_eq!(id(4), Some("skylake-sp"));
        assert_eq!(id(7), Some("cascade-lake"));
        assert_eq!(stepping_from_cpuinfo(&cpuinfo_stepping(6, 85, 7)), Some(7));
        // Without its stepping, a 06_55H machine is not guessed.
        assert!(processor_from_cpuinfo(&cpuinfo(6, 0x55)).is_none());
    }

    #[test]
    fn ice_lake_sp_is_found_by_its_model() {
        let p = processor_from_cpuinfo(&cpuinfo(6, 0x6A)).expect("06_6AH is in the spec");
        assert_eq!(p.id, "ice-lake-sp");
    }

    #[test]
    fn unknown_or_missing_signatures_find_nothing() {
        // 06_01H (the Pentium Pro) is in no spec.
        assert!(processor_from_cpuinfo(&cpuinfo(6, 0x01)).is_none());
        assert!(processor_from_cpuinfo("processor : 0\nmodel name : no family\n").is_none());
        assert_eq!(signature_from_cpuinfo(""), None);
    }
}
