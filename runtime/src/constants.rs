//! The constants metrics read (`SYSTEM_TSC_FREQ`, `SOCKET_COUNT`, `CHAS_PER_SOCKET`, ...),
//! from the part, each with where it came from, so a report can show them and a reader can
//! tell a measured figure from an assumed one.
//!
//! - Sockets, CPUs and cores per socket: the topology (sysfs, or the simulated machine's).
//! - Threads per core: `/sys/devices/system/cpu/smt/active` (on the simulator 2 where the
//!   part has SMT, its sibling threads running the workload in step), else CPUs over cores.
//! - The TSC frequency: CPUID leaf 15H (crystal clock times the TSC/crystal ratio, SDM Vol. 3B
//!   18.7.3), else the kernel's `tsc_freq_khz` where it exports one, else CPUID leaf 16H's
//!   base frequency (the TSC runs at the base frequency on the parts that lack leaf 15H's
//!   crystal clock), else the `@ 2.30GHz` of the brand string in `/proc/cpuinfo`. Under a
//!   root other than `/` (a directory tree standing in for a machine) only its files are read,
//!   never the CPUID of the machine running the command. The simulator's TSC runs at
//!   [`SIM_TSC_HZ`].
//! - CHA boxes per socket: the part's own count where the spec says how to read it
//!   ([`crate::part::box_count`]), else the number of CHA boxes the spec lists.

use std::path::Path;

use pmu_regs::metrics::Constants;
use pmu_regs::{BoxCountRule, ProcessorInfo, Scope, UnitInfo};

use crate::machine::Machine;
use crate::topology::Topology;

/// The simulated machine's TSC frequency, in Hz: a round 2 GHz.
pub const SIM_TSC_HZ: f64 = 2.0e9;

/// One constant's value (`None`: unknown, so a metric reading it is n/a) and where it came
/// from (or why it is unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Known {
    /// The value.
    pub value: Option<f64>,
    /// Where it came from (`CPUID 15H`, `topology`), or why it is unknown.
    pub source: String,
}

impl Known {
    fn of(value: f64, source: impl Into<String>) -> Self {
        Known {
            value: Some(value),
            source: source.into(),
        }
    }

    fn unknown(why: impl Into<String>) -> Self {
        Known {
            value: None,
            source: why.into(),
        }
    }
}

/// The constants of one machine, each with its source.
#[derive(Debug, Clone, PartialEq)]
pub struct PartConstants {
    /// `SYSTEM_TSC_FREQ`, in Hz.
    pub tsc_hz: Known,
    /// `SOCKET_COUNT`.
    pub socket_count: Known,
    /// `CPU_COUNT`: logical CPUs online.
    pub cpu_count: Known,
    /// `CORES_PER_SOCKET`.
    pub cores_per_socket: Known,
    /// `THREADS_PER_CORE`.
    pub threads_per_core: Known,
    /// `CHAS_PER_SOCKET`.
    pub chas_per_socket: Known,
}

impl PartConstants {
    /// Reads the constants of `machine` (a processor of the spec), whose files are under
    /// `root` (`/` for the real machine).
    pub fn read(machine: &Machine, processor: &'static ProcessorInfo, root: &Path) -> Self {
        let sim = machine.sim().is_some();
        let topology = machine.topology();
        let (socket_count, cpu_count, cores_per_socket) = match &topology {
            Ok(t) => from_topology(t),
            Err(e) => {
                let why = format!("topology not read: {e}");
                (
                    Known::unknown(why.clone()),
                    Known::unknown(why.clone()),
                    Known::unknown(why),
                )
            }
        };
        let threads_per_core = if let Some(sim) = machine.sim() {
            Known::of(
                f64::from(sim.threads_per_core()),
                "the simulator: sibling threads in step where the part has SMT",
            )
        } else {
            smt(root, &cpu_count, &cores_per_socket, &socket_count)
        };
        let tsc_hz = if sim {
            Known::of(SIM_TSC_HZ, "the simulator's")
        } else {
            tsc(root)
        };
        PartConstants {
            tsc_hz,
            socket_count,
            cpu_count,
            cores_per_socket,
            threads_per_core,
            chas_per_socket: chas(machine, processor),
        }
    }

    /// The values, for evaluating metrics (the interval's length is left unset).
    pub fn constants(&self) -> Constants {
        Constants {
            tsc_hz: self.tsc_hz.value,
            socket_count: self.socket_count.value,
            cores_per_socket: self.cores_per_socket.value,
            chas_per_socket: self.chas_per_socket.value,
            threads_per_core: self.threads_per_core.value,
            cpu_count: self.cpu_count.value,
            duration_seconds: None,
        }
    }

    /// Each constant as formulas name it, with its value and source.
    pub fn rows(&self) -> [(&'static str, &Known); 6] {
        [
            ("SOCKET_COUNT", &self.socket_count),
            ("CPU_COUNT", &self.cpu_count),
            ("CORES_PER_SOCKET", &self.cores_per_socket),
            ("THREADS_PER_CORE", &self.threads_per_core),
            ("CHAS_PER_SOCKET", &self.chas_per_socket),
            ("SYSTEM_TSC_FREQ", &self.tsc_hz),
        ]
    }

    /// One comment line for a report's head: `# constants: SOCKET_COUNT=2 (topology) ...`.
    pub fn header(&self) -> String {
        let mut line = "# constants:".to_string();
        for (name, k) in self.rows() {
            match k.value {
                Some(v) => line.push_str(&format!(" {name}={v} ({})", k.source)),
                None => line.push_str(&format!(" {name}=unknown ({})", k.source)),
            }
        }
        line
    }
}

fn from_topology(t: &Topology) -> (Known, Known, Known) {
    let sockets: Vec<u32> = t.sockets().collect();
    let cpus = t.cpus().len();
    let cores = sockets.first().and_then(|&s| t.cores(s));
    (
        Known::of(sockets.len() as f64, "topology"),
        Known::of(cpus as f64, "topology"),
        match cores {
            Some(c) if c > 0 => Known::of(f64::from(c), "topology: socket 0's core ids"),
            _ => Known::unknown("the topology gives no core ids"),
        },
    )
}

/// Threads per core: the kernel's SMT switch, else CPUs over cores.
fn smt(root: &Path, cpus: &Known, cores: &Known, sockets: &Known) -> Known {
    let path = root.join("sys/devices/system/cpu/smt/active");
    if let Ok(s) = std::fs::read_to_string(&path) {
        let on = s.trim() == "1";
        // With SMT on, the topology's CPUs over cores says how many threads (2 on Intel's).
        let threads = match (cpus.value, cores.value, sockets.value) {
            (Some(c), Some(k), Some(s)) if on && k * s > 0.0 => (c / (k * s)).round().max(2.0),
            _ if on => 2.0,
            _ => 1.0,
        };
        return Known::of(threads, "/sys/devices/system/cpu/smt/active");
    }
    match (cpus.value, cores.value, sockets.value) {
        (Some(c), Some(k), Some(s)) if k * s > 0.0 => {
            Known::of((c / (k * s)).round().max(1.0), "topology: CPUs over cores")
        }
        _ => Known::unknown("neither smt/active nor core ids readable"),
    }
}

/// The caching-and-home agents `CHAS_PER_SOCKET` counts, found by the structure rather than
/// by a unit's name: a socket's most numerous boxes, where the part reports how many it has
/// itself (capability bits, a count field, its discovery table). Parts before them count
/// their caching agents by cores and have none.
fn caching_agents(processor: &'static ProcessorInfo) -> Option<&'static UnitInfo> {
    let unit = processor
        .units
        .iter()
        .filter(|u| u.pmu.is_some_and(|p| p.scope == Scope::Socket))
        .max_by_key(|u| u.instances.len())?;
    let reported = unit.pmu?.box_count.is_some_and(|c| {
        matches!(
            c.rule,
            BoxCountRule::SetBits(_) | BoxCountRule::Value(_) | BoxCountRule::Discovery
        )
    });
    reported.then_some(*unit)
}

/// The CHA boxes of one socket: read from the part where the spec says how, else listed.
fn chas(machine: &Machine, processor: &'static ProcessorInfo) -> Known {
    let Some(unit) = caching_agents(processor) else {
        return Known::unknown(format!("{} has no CHA boxes", processor.id));
    };
    if let Some(pmu) = unit.pmu.filter(|p| p.box_count.is_some()) {
        match crate::part::box_count(machine, pmu, 0) {
            Ok(Some(n)) => {
                return Known::of(
                    f64::from(n.present_count()),
                    format!("socket 0's part: {}", n.read),
                )
            }
            Ok(None) => {}
            Err(e) => {
                return Known::of(
                    unit.instances.len() as f64,
                    format!("the spec lists them; the part's count not read: {e}"),
                )
            }
        }
    }
    Known::of(unit.instances.len() as f64, "the spec lists them")
}

/// The TSC frequency of the machine under `root`.
fn tsc(root: &Path) -> Known {
    if root == Path::new("/") {
        if let Some(k) = tsc_cpuid_15h() {
            return k;
        }
    }
    let khz = root.join("sys/devices/system/cpu/cpu0/tsc_freq_khz");
    if let Some(v) = std::fs::read_to_string(&khz)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0)
    {
        return Known::of(v * 1e3, "the kernel's tsc_freq_khz");
    }
    if root == Path::new("/") {
        if let Some(k) = tsc_cpuid_16h() {
            return k;
        }
    }
    match std::fs::read_to_string(root.join("proc/cpuinfo"))
        .ok()
        .and_then(|s| brand_ghz(&s))
    {
        Some(ghz) => Known::of(ghz * 1e9, "the brand string in /proc/cpuinfo"),
        None => Known::unknown(
            "no CPUID 15H/16H frequency, no tsc_freq_khz, no `@ GHz` in /proc/cpuinfo",
        ),
    }
}

/// The `@ 2.30GHz` of the first `model name` line, in GHz.
pub fn brand_ghz(cpuinfo: &str) -> Option<f64> {
    let line = cpuinfo.lines().find(|l| l.starts_with("model name"))?;
    let (_, after) = line.rsplit_once('@')?;
    let ghz = after
        .trim()
        .strip_suffix("GHz")?
        .trim()
        .parse::<f64>()
        .ok()?;
    (ghz.is_finite() && ghz > 0.0).then_some(ghz)
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn tsc_cpuid_15h() -> Option<Known> {
    let hz = raw_cpuid::CpuId::new().get_tsc_info()?.tsc_frequency()?;
    (hz > 0).then(|| Known::of(hz as f64, "CPUID 15H"))
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn tsc_cpuid_16h() -> Option<Known> {
    let mhz = raw_cpuid::CpuId::new()
        .get_processor_frequency_info()?
        .processor_base_frequency();
    (mhz > 0).then(|| Known::of(f64::from(mhz) * 1e6, "CPUID 16H base frequency"))
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn tsc_cpuid_15h() -> Option<Known> {
    None
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn tsc_cpuid_16h() -> Option<Known> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_brand_string_gives_the_nominal_frequency() {
        let info = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU E5-2699 v3 @ 2.30GHz\n";
        assert_eq!(brand_ghz(info), Some(2.3));
        assert_eq!(brand_ghz("model name\t: AMD EPYC 7B13\n"), None);
        assert_eq!(brand_ghz("model name\t: X @ -1GHz\n"), None);
    }

    #[test]
    fn a_tree_gives_its_files_and_never_this_machines_cpuid() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(tsc(dir.path()).value, None);
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(
            dir.path().join("proc/cpuinfo"),
            "model name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\n",
        )
        .unwrap();
        assert_eq!(tsc(dir.path()).value, Some(2.4e9));
        let cpu0 = dir.path().join("sys/devices/system/cpu/cpu0");
        std::fs::create_dir_all(&cpu0).unwrap();
        std::fs::write(cpu0.join("tsc_freq_khz"), "2394454\n").unwrap();
        let k = tsc(dir.path());
        assert_eq!(k.value, Some(2_394_454_000.0));
        assert!(k.source.contains("tsc_freq_khz"), "{}", k.source);
    }

    /// The structure finds the units Intel's guides call the caching-and-home agents (CHA,
    /// from Skylake-SP on; on Diamond Rapids the compute dies' CBO, Linux's dmr_uncore_cbo)
    /// on every processor, and none on those before them or AMD's.
    #[test]
    fn the_caching_agents_are_the_units_the_guides_call_cha() {
        for p in pmu_regs::PROCESSORS {
            let name = if p.id == "diamond-rapids" {
                "CBO"
            } else {
                "CHA"
            };
            let by_name = p.units.iter().find(|u| u.name == name).map(|u| u.name);
            assert_eq!(caching_agents(p).map(|u| u.name), by_name, "{}", p.id);
        }
        let with_chas = pmu_regs::PROCESSORS
            .iter()
            .filter(|p| caching_agents(p).is_some())
            .count();
        assert!(with_chas >= 5, "{with_chas}");
    }

    #[test]
    fn the_simulator_has_every_constant() {
        let p = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == "skylake-sp")
            .unwrap();
        let c = PartConstants::read(&Machine::simulating(p), p, Path::new("/"));
        let v = c.constants();
        assert_eq!(v.tsc_hz, Some(SIM_TSC_HZ));
        assert_eq!(v.socket_count, Some(2.0));
        // Skylake-SP has SMT: two threads a core.
        assert_eq!(v.threads_per_core, Some(2.0));
        // Sierra Forest's E-cores have one.
        let e = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == "sierra-forest")
            .unwrap();
        let one = PartConstants::read(&Machine::simulating(e), e, Path::new("/")).constants();
        assert_eq!(one.threads_per_core, Some(1.0));
        assert!(v.chas_per_socket.unwrap() >= 1.0, "{c:?}");
        assert!(c
            .header()
            .contains("SYSTEM_TSC_FREQ=2000000000 (the simulator's)"));
    }
}
