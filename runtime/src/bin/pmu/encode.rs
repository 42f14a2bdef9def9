//! `pmu encode`: a register value built from field=value pairs.

use pmu_regs::RegisterInfo;
use pmu_runtime::codec::{self};
use pmu_runtime::session::words;
use serde_json::json;

use crate::detect::processor_named;
use crate::failure::Out;
use crate::show::value_only;
use crate::{detect, ValueArgs};
use pmu_runtime::lookup::{resolve, FoundRegister};
use pmu_runtime::report::register::{aux_line, decoded_json, decoded_table, event_line, header};

/// Says on stderr, once per event and run, that `event=NAME` names an experimental event
/// (from Intel's experimental list): it is programmed like any other, and its counts may be
/// wrong. Standard output stays the value alone, for scripts.
pub fn note_if_experimental(info: &RegisterInfo, name: &str, core: Option<&str>) {
    static SAID: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let Some(e) = codec::named_event(info, name, core).filter(|e| e.experimental) else {
        return;
    };
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if !said.contains(&e.name) {
        said.push(e.name);
        use std::io::Write;
        // As `warn`: a closed stderr is no reason to fail.
        let _ = writeln!(
            std::io::stderr(),
            "note: {} is experimental: it comes from Intel's experimental event list, whose counts Intel has not validated",
            e.name
        );
    }
}

/// Notes each experimental event `selection` names by `event=NAME` (see
/// [`note_if_experimental`]), as the control of each box's counters reads the name.
pub fn note_experimental_events(selection: &pmu_runtime::session::Selection, core: Option<&str>) {
    for b in selection.boxes() {
        let Some(control) = b.pmu_box.counters.iter().find_map(|c| c.control) else {
            continue;
        };
        for text in &selection.events {
            for part in words::named(text).split(',') {
                match part.split_once('=') {
                    Some((k, v)) if k.trim().eq_ignore_ascii_case("event") => {
                        note_if_experimental(control.info, v.trim(), core)
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The processor whose core events `event=NAME` may name (`processor`, else the one `root`
/// describes), and the register `register` names. Only a processor named on the command line
/// picks among registers several processors share, as in `decode`: the same name means the
/// same register on every machine.
pub fn core_and_register(
    register: &str,
    processor: Option<&str>,
    root: Option<&std::path::Path>,
) -> Result<(Option<&'static str>, FoundRegister), crate::Failure> {
    let named = processor_named(processor)?;
    let core = named.or_else(|| detect::detected(false, root));
    Ok((core, resolve(register, named)?))
}

/// `pmu encode`. `event=NAME` may name a core event of `processor` (by default, the
/// processor /proc/cpuinfo under `root` names); a register several processors have needs
/// `processor` (or a prefix), as in `decode`. With `show`, only the value (or a field).
pub fn encode(
    register: &str,
    fields: &[String],
    (processor, root): (Option<&str>, Option<&std::path::Path>),
    show: &ValueArgs,
    json_out: bool,
) -> Out {
    let (core, found) = core_and_register(register, processor, root)?;
    let assignments = words::assignments(found.info, fields)?;
    let raw = codec::encode_for(found.info, found.info.reset, &assignments, core)?;
    for (key, value) in &assignments {
        if key == "event" {
            note_if_experimental(found.info, value, core);
        }
    }
    let aux = codec::aux_for(found.info, &assignments, core);
    let d = codec::decode(found.info, raw);
    // The value alone (`-x`, `-d`, `-f`), for `wrmsr -p0 0x186 $(pmu encode ... -x)`.
    if show.wanted() {
        return Ok(format!("{}\n", value_only(&d, show)?));
    }
    if json_out {
        let mut extra = serde_json::Map::new();
        if let Some(a) = aux {
            extra.insert(
                "aux_msr".into(),
                json!({"register": a.register, "address": a.address,
                       "address_hex": format!("{:#x}", a.address), "value": a.value,
                       "value_hex": format!("{:#x}", a.value)}),
            );
        }
        return Ok(decoded_json(&d, extra, core, aux));
    }
    Ok(format!(
        "{}{}{}{}",
        header(&found, raw),
        event_line(&d, core, aux),
        aux_line(aux),
        decoded_table(&d)
    ))
}
