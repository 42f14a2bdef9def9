//! A register value alone, for scripts (`-f`, `-x`, `-d`); the rest of how `decode`, `encode`,
//! `read` and `write` show a value is the library's [`pmu_runtime::report::register`].

use pmu_runtime::codec::Decoded;

use crate::{Failure, ValueArgs};

/// Value-only output: one field (by name or bit range) or the whole value, bare hex (as
/// rdmsr prints it) or decimal.
pub(crate) fn value_only(d: &Decoded, show: &ValueArgs) -> Result<String, Failure> {
    let value = match &show.field {
        None => d.raw,
        Some(f) => {
            let range = f
                .split_once(':')
                .map_or(Some((f.as_str(), f.as_str())), Some);
            let bits = range.and_then(|(m, l)| {
                Some((m.trim().parse::<u32>().ok()?, l.trim().parse::<u32>().ok()?))
            });
            match bits {
                Some((msb, lsb)) if msb >= lsb && msb < d.register.width => {
                    let width = msb - lsb + 1;
                    let mask = if width >= 64 {
                        u64::MAX
                    } else {
                        (1 << width) - 1
                    };
                    (d.raw >> lsb) & mask
                }
                Some(_) => {
                    return Err(Failure::usage(format!(
                        "-f {f}: give MSB:LSB with MSB >= LSB, inside the {}-bit register",
                        d.register.width
                    )))
                }
                None => match d
                    .fields
                    .iter()
                    .find(|x| x.name.eq_ignore_ascii_case(f.trim()))
                {
                    Some(x) => x.value,
                    None => {
                        return Err(Failure::usage(format!(
                            "{} has no field {f}; its fields are {}, or give bits as MSB:LSB",
                            d.register.name,
                            d.fields
                                .iter()
                                .map(|x| x.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )))
                    }
                },
            }
        }
    };
    Ok(if show.decimal {
        value.to_string()
    } else {
        format!("{value:x}")
    })
}
