//! Splits a value of the architectural IA32_PERFEVTSEL0 into its fields and names the event it
//! selects, as this `pmu decode` does:
//!
//! ```text
//! pmu decode IA32_PERFEVTSEL0 0x43412e
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example decode_value`; CI and
//! `runtime/tests/examples.rs` compare its output with that command's.

use pmu_runtime::codec;
use pmu_runtime::lookup::resolve;
use pmu_runtime::report::register::{decoded_table, event_line, header};
use pmu_runtime::session::words;

/// The register, by name (an MSR number such as `0x186` finds it too).
pub const REGISTER: &str = "IA32_PERFEVTSEL0";
/// The value, as `rdmsr` or a program would give it.
pub const VALUE: &str = "0x43412e";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    print!("{}", report()?);
    Ok(())
}

/// The line naming the register and value, the event it selects, and its fields as a table.
pub fn report() -> Result<String, Box<dyn std::error::Error>> {
    // No processor named: a register several processors share would be refused, naming them.
    let found = resolve(REGISTER, None)?;
    let raw = words::number(VALUE)?;
    let decoded = codec::decode(found.info, raw);
    if decoded.reserved_set != 0 {
        eprintln!(
            "{REGISTER}: reserved bits {:#x} are set",
            decoded.reserved_set
        );
    }
    Ok(header(&found, raw) + &event_line(&decoded, None, None) + &decoded_table(&decoded))
}
