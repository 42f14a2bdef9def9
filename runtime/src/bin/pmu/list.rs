//! `pmu list`: registers, events, derived metrics, a summary per unit, and a pattern search
//! over registers and events. The library's [`pmu_runtime::report::listing`] builds each
//! listing; this picks it and adds what reads files (Intel's perfmon descriptions).

use pmu_runtime::lookup::{processor_named, Pattern};
use pmu_runtime::perfmon::{Descriptions, PerfmonError};
use pmu_runtime::report::listing;

use crate::failure::Out;
use crate::Failure;

/// `pmu list PATTERN`: the registers, then the events, whose names or descriptions the
/// pattern matches (as `perf list PATTERN`); refused when nothing does.
pub fn search(
    processor: Option<&str>,
    unit: Option<&str>,
    pattern: &Pattern,
    text: &str,
    json_out: bool,
) -> Out {
    let registers = listing::registers(processor, unit, Some(pattern), json_out)?;
    // No event matching is no failure here while a register matches.
    let events = events(processor, unit, None, Some(pattern), json_out).unwrap_or_default();
    let empty = |out: &str| {
        if json_out {
            out.trim() == "[]"
        } else {
            out.lines().count() <= 1
        }
    };
    match (empty(&registers), empty(&events)) {
        // Nothing matched: a usage error (exit 2), as in every list.
        (true, true) => Err(Failure::usage(format!(
            "no register or event name matches {text}; `*` and `?` glob, and a pattern without \
             them matches anywhere in a name (pmu list cas)"
        ))),
        (false, true) => Ok(registers),
        (true, false) => Ok(events),
        (false, false) if json_out => Ok(format!(
            "{{\"registers\": {}, \"events\": {}}}\n",
            registers.trim(),
            events.trim()
        )),
        (false, false) => Ok(format!("{registers}\n{events}")),
    }
}

/// `pmu list --events`: every unit's events, the architectural ones included, and every
/// processor's own core events, with Intel's descriptions when `perfmon` names Intel's
/// event list.
pub fn events(
    processor: Option<&str>,
    unit: Option<&str>,
    perfmon: Option<&std::path::Path>,
    pattern: Option<&Pattern>,
    json_out: bool,
) -> Out {
    let lists = listing::event_lists(processor, unit)?;
    let named = processor_named(processor)?;
    let descriptions = perfmon
        .map(|path| Descriptions::read(path, named))
        .transpose()
        .map_err(failure)?;
    Ok(listing::events(
        &lists,
        descriptions.as_ref(),
        pattern,
        json_out,
    )?)
}

/// A perfmon file's error as a failure: naming the wrong processor is a usage error.
fn failure(e: PerfmonError) -> Failure {
    if e.is_usage() {
        Failure::usage(e.to_string())
    } else {
        Failure::operation(e.to_string())
    }
}
