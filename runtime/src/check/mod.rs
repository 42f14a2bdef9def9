//! `pmu check`, the conformance run for a real machine (issue 39), built as library parts a
//! program can call, one module each; the command only prints them. The first part:
//! [`holders`], what else holds the counters (the NMI watchdog, perf events other processes
//! have open), which a run must name before it trusts a comparison.

pub mod holders;
