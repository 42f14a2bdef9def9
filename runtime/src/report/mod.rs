//! What the `pmu` command prints, as functions a program can call to print the same: aligned
//! text tables, the spec's registers, events and metrics as `pmu list` lists them, register
//! values decoded as text or JSON, the machine as `pmu detect` describes it, its discovery
//! tables joined with the spec, counts every interval, and derived metrics' values. The
//! binary only parses its arguments and prints what these return.

#[cfg(feature = "export")]
pub mod counts;
pub mod joined;
#[cfg(feature = "perfmon")]
pub mod listing;
pub mod machine;
#[cfg(feature = "export")]
pub mod metric_values;
pub mod register;
pub mod table;

/// `value` (an object, an array of them) as pretty-printed JSON and a newline, as every
/// `--json` listing and decoded value prints it.
pub fn pretty_json(value: impl Into<serde_json::Value>) -> String {
    let text = serde_json::to_string_pretty(&value.into()).expect("JSON values serialise");
    format!("{text}\n")
}
