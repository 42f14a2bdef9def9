//! `pmu decode`: a value split into the register's fields.

use pmu_runtime::codec::{self};
use pmu_runtime::session::words;

use crate::failure::Out;
use crate::show::value_only;
use crate::{warn, ValueArgs};
use pmu_runtime::lookup::resolve;
use pmu_runtime::report::register::{decoded_json, decoded_table, event_line, header};

/// `pmu decode`. `processor` picks among registers several processors share, as in
/// `encode`.
pub fn decode(
    register: &str,
    value: &str,
    processor: Option<&str>,
    show: &ValueArgs,
    json_out: bool,
) -> Out {
    let raw = words::number(value)?;
    if let Some(text) = pmu_runtime::perf::mesh::decode_named(register.trim(), raw) {
        return Ok(text);
    }
    let found = resolve(register, crate::detect::processor_named(processor)?)?;
    let d = codec::decode(found.info, raw);
    if show.wanted() {
        return Ok(format!("{}\n", value_only(&d, show)?));
    }
    if json_out {
        return Ok(decoded_json(&d, Default::default(), None, None));
    }
    if d.reserved_set != 0 {
        warn(&format!(
            "{}: reserved bits {:#x} are set",
            register.trim(),
            d.reserved_set
        ));
    }
    Ok(format!(
        "{}{}{}",
        header(&found, raw),
        event_line(&d, None, None),
        decoded_table(&d)
    ))
}
