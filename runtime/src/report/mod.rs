//! What the `pmu` command prints, as functions a program can call to print the same: aligned
//! text tables, the spec's registers, events and metrics as `pmu list` lists them, register
//! values decoded as text or JSON, the machine as `pmu detect` describes it, and counts every
//! interval. The binary only parses its arguments and prints
//! what these return.

#[cfg(feature = "export")]
pub mod counts;
#[cfg(feature = "perfmon")]
pub mod listing;
pub mod machine;
pub mod register;
pub mod table;
