//! `pmu check`, the conformance run for a real machine (issue 39), built as library parts a
//! program can call, one module each; the command only prints them:
//! [`holders`], what else holds the counters (the NMI watchdog, perf events other processes
//! have open), which a run must name before it trusts a comparison; [`outcome`], a run's
//! rows, table, verdict and JSON; [`simulated`], the run on the simulator, with
//! [`raw_vs_perf`], each box counted again through the simulated kernel's perf PMU, and
//! [`reset`], each box's reset-counters control clearing its counters; [`against_perf`],
//! this machine's kernel counts through the runtime's perf backend against the real
//! `perf stat`; [`here`], the run on this machine; [`dump`], the discovery tables saved for a
//! bug report; [`buses`], the PCI bus each box serves where the part holds it (Skylake-SP's
//! IIO stacks), against the kernel's own mapping.

#[cfg(target_os = "linux")]
pub mod against_perf;
#[cfg(target_os = "linux")]
pub mod buses;
pub mod dump;
#[cfg(target_os = "linux")]
pub mod here;
pub mod holders;
pub mod outcome;
#[cfg(target_os = "linux")]
pub mod raw_vs_perf;
#[cfg(target_os = "linux")]
pub mod reset;
#[cfg(target_os = "linux")]
pub mod simulated;
