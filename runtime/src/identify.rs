//! Which spec describes the machine: the processor whose identity (the spec's `<identity>`:
//! vendor, CPUID display family, model ranges and steppings; `pmu_regs::processor_for_*`)
//! matches the running CPU's. Generic over every processor and vendor in the spec; nothing
//! here names one.

use pmu_regs::support::ProcessorInfo;
use pmu_regs::Vendor;

/// A CPU as software identifies it: CPUID leaf 0's vendor string, the display family and
/// model, and the stepping where known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSignature {
    /// `GenuineIntel`, `AuthenticAMD`, ... (`/proc/cpuinfo`'s `vendor_id`).
    pub vendor: String,
    /// CPUID display family (`cpu family`).
    pub family: u32,
    /// CPUID display model (`model`).
    pub model: u32,
    /// CPUID stepping (`stepping`), which tells apart processors of one model (06_55H:
    /// Skylake-SP and Cascade Lake).
    pub stepping: Option<u32>,
}

impl CpuSignature {
    /// The vendor, if the spec knows it.
    pub fn known_vendor(&self) -> Option<Vendor> {
        Vendor::from_name(&self.vendor)
    }

    /// The processor of the spec with this signature, if the spec has one (and its feature
    /// is built). Without a stepping, only a processor whose model alone decides is found.
    pub fn processor(&self) -> Option<&'static ProcessorInfo> {
        let vendor = self.known_vendor()?;
        match self.stepping {
            Some(s) => pmu_regs::processor_for_signature(vendor, self.family, self.model, s),
            None => pmu_regs::processor_for_cpuid(vendor, self.family, self.model),
        }
    }
}

/// The `key: value` lines of the first CPU's block of `/proc/cpuinfo` text, trimmed. The
/// first block is enough: a machine has one kind of processor.
pub(crate) fn first_cpu_fields(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect()
}

/// The signature of the first CPU in `/proc/cpuinfo` text (its `vendor_id`, `cpu family`,
/// `model` and `stepping` lines), or `None` if its block lacks the family or model. A text
/// without `vendor_id` is taken as Intel's, as the spec's identities are by default.
pub fn signature_from_cpuinfo(text: &str) -> Option<CpuSignature> {
    let first = first_cpu_fields(text);
    let value = |key: &str| first.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let number = |key: &str| value(key).and_then(|v| v.parse::<u32>().ok());
    Some(CpuSignature {
        vendor: value("vendor_id")
            .unwrap_or(Vendor::Intel.as_str())
            .to_string(),
        family: number("cpu family")?,
        model: number("model")?,
        stepping: number("stepping"),
    })
}

/// The signature of the processor this code runs on, read with CPUID (raw-cpuid), for
/// programs that do not read `/proc/cpuinfo`; `None` where there is no CPUID.
pub fn host_signature() -> Option<CpuSignature> {
    let (vendor, family, model, stepping) = crate::cpuid::host_signature()?;
    Some(CpuSignature {
        vendor,
        family,
        model,
        stepping: Some(stepping),
    })
}

/// The processor of the spec that `/proc/cpuinfo` text describes, if the spec has one. The
/// vendor and family decide first; the stepping decides where two processors share a model
/// (06_55H: Skylake-SP, Cascade Lake).
pub fn processor_from_cpuinfo(text: &str) -> Option<&'static ProcessorInfo> {
    signature_from_cpuinfo(text)?.processor()
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

    fn cpuinfo_of(vendor: &str, family: u32, model: u32, stepping: u32) -> String {
        format!("processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: test\nstepping\t: {stepping}\n\n")
    }

    #[test]
    fn each_signature_in_the_spec_finds_its_processor() {
        let identified: Vec<_> = pmu_regs::PROCESSORS
            .iter()
            .filter_map(|p| Some((p, p.identity?)))
            .collect();
        assert!(
            identified.len() >= 3,
            "the spec identifies its uncore processors"
        );
        for (p, id) in identified {
            let vendor = id.vendor.as_str();
            // Every model and stepping the processor has finds it, under its vendor only;
            // where its steppings are given, the model alone does not.
            let (lo, hi) = id.steppings.unwrap_or((0, 15));
            for &(first, last) in id.models {
                for m in [first, (first + last) / 2, last] {
                    for s in lo..=hi {
                        let text = cpuinfo_of(vendor, id.family, m, s);
                        assert_eq!(processor_from_cpuinfo(&text).map(|q| q.id), Some(p.id));
                        let other = cpuinfo_of("CentaurHauls", id.family, m, s);
                        assert_eq!(processor_from_cpuinfo(&other).map(|q| q.id), None);
                    }
                    let sig = CpuSignature {
                        vendor: vendor.to_string(),
                        family: id.family,
                        model: m,
                        stepping: None,
                    };
                    let by_model = sig.processor().map(|q| q.id);
                    assert_eq!(by_model, id.steppings.is_none().then_some(p.id));
                }
            }
            assert!(!p.code_names.is_empty(), "{} has code names", p.id);
        }
    }

    #[test]
    fn the_vendor_line_is_read_and_defaults_to_intel() {
        let amd = signature_from_cpuinfo(&cpuinfo_of("AuthenticAMD", 25, 17, 1)).unwrap();
        assert_eq!(
            amd,
            CpuSignature {
                vendor: "AuthenticAMD".into(),
                family: 0x19,
                model: 0x11,
                stepping: Some(1)
            }
        );
        assert_eq!(amd.known_vendor(), Some(Vendor::Amd));
        let bare = signature_from_cpuinfo("cpu family : 6\nmodel : 62\n").unwrap();
        assert_eq!(bare.known_vendor(), Some(Vendor::Intel));
        // An AMD part with Intel's numbers is not an Intel part.
        assert!(processor_from_cpuinfo(&cpuinfo_of("AuthenticAMD", 6, 62, 4)).is_none());
    }

    #[test]
    fn cpuid_and_proc_cpuinfo_agree_on_this_machine() {
        // Where both exist (an x86 Linux machine), CPUID's signature is what the kernel shows.
        let (Some(host), Ok(text)) = (host_signature(), std::fs::read_to_string("/proc/cpuinfo"))
        else {
            return;
        };
        assert_eq!(signature_from_cpuinfo(&text), Some(host));
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
        assert_eq!(
            signature_from_cpuinfo(&cpuinfo_stepping(6, 85, 7)).and_then(|s| s.stepping),
            Some(7)
        );
        // Without its stepping, a 06_55H machine is not guessed.
        assert!(processor_from_cpuinfo(&cpuinfo(6, 0x55)).is_none());
    }

    #[test]
    fn ice_lake_sp_is_found_by_its_model() {
        let p = processor_from_cpuinfo(&cpuinfo(6, 0x6A)).expect("06_6AH is in the spec");
        assert_eq!(p.id, "ice-lake-sp");
        // Ice Lake-D (06_6CH): Linux gives it the same uncore (icx_uncore_init).
        let d = processor_from_cpuinfo(&cpuinfo(6, 0x6C)).expect("06_6CH is in the spec");
        assert_eq!(d.id, "ice-lake-sp");
    }

    #[test]
    fn unknown_or_missing_signatures_find_nothing() {
        // 06_01H (the Pentium Pro) is in no spec.
        assert!(processor_from_cpuinfo(&cpuinfo(6, 0x01)).is_none());
        assert!(processor_from_cpuinfo("processor : 0\nmodel name : no family\n").is_none());
        assert_eq!(signature_from_cpuinfo(""), None);
    }
}
