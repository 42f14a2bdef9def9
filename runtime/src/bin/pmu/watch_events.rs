//! `watch --event TEXT` read with the grammar `encode` uses: `event=NAME`, named values
//! (`invert=lt`) and numbers by the one number rule, checked against the counter's own
//! control register. The words a user types (`ev_sel`, `umask`, `thresh`, `invert`, `edge`,
//! `ext`) name roles ([`Role`]); the control's field playing each role is found in the
//! generated metadata, so every box of every processor reads the same way whatever its
//! guide calls the field (`edge_det`, `edge_detect`, `thresh`, `threshold`, ...).

use pmu_regs::{RegisterInfo, Role};
use pmu_runtime::boxes::EventSelect;
use pmu_runtime::boxes::{FieldSettings, PmuBox, FIXED_EVENT};
use pmu_runtime::codec;
use pmu_runtime::error::UsageError;

use crate::failure::Failure;
use crate::grammar;

/// What `--event` takes, for messages.
pub const ACCEPTED: &str = "event=NAME or ev_sel=N, and umask, thresh, invert, edge, ext, any, \
     the uncore masks umask_ext, port_mask (ch_mask) and fc_mask, and by name the filters a \
     control gives a count default (an L3 thread_mask)";

/// Whether `key` names a field that some counter control of the spec gives a count default
/// (the filters `--event` may set by name, such as a thread or slice mask).
fn is_filter_field(key: &str) -> bool {
    pmu_regs::PROCESSORS
        .iter()
        .flat_map(|p| p.units.iter())
        .flat_map(|u| u.registers.iter())
        .flat_map(|r| r.fields.iter())
        .any(|f| f.count_default.is_some() && f.name.eq_ignore_ascii_case(key))
}

/// The role a word of `--event` sets; `None` for `event=NAME` (an event by name). Filter
/// fields set by name ([`is_filter_field`]) are looked for first.
fn role_of(key: &str, value: &str) -> Result<Option<Role>, Failure> {
    Ok(Some(match key.to_ascii_lowercase().as_str() {
        // `event=0x3c` is the event select, as perf writes it; `event=NAME` a named event.
        "event" if value.trim().starts_with(|c: char| c.is_ascii_digit()) => Role::Event,
        "event" => return Ok(None),
        "ev_sel" => Role::Event,
        "umask" => Role::Umask,
        "thresh" | "threshold" => Role::Threshold,
        "invert" => Role::Invert,
        "edge" | "edge_det" | "edge_detect" => Role::Edge,
        "ext" | "ev_sel_ext" | "event_ext" => Role::EventExt,
        "any" | "any_thread" => Role::AnyThread,
        "umask_ext" => Role::UmaskExt,
        "port_mask" | "ch_mask" => Role::PortMask,
        "fc_mask" => Role::FcMask,
        "offcore_rsp" | "ldlat" | "frontend" => {
            return Err(Failure::usage(format!(
                "`{key}` is an auxiliary MSR's value, which --event takes from a named event \
                 (event=NAME sets it: `pmu list --events --unit CORE` shows each event's in \
                 SETTINGS); `pmu encode` with --perf gives perf's {key} term"
            )))
        }
        _ => {
            return Err(Failure::usage(format!(
                "`{key}` cannot be given to --event (watch sets the enables itself); it takes \
                 {ACCEPTED}"
            )))
        }
    }))
}

/// `--event` text as the grammar takes it: a bare event name (`INST_RETIRED.ANY_P`, as perf
/// users type it) is `event=NAME`; anything with an `=` as it is.
pub fn named(text: &str) -> std::borrow::Cow<'_, str> {
    let word = text.trim();
    if word.is_empty() || word.contains(['=', ',']) {
        text.into()
    } else {
        format!("event={word}").into()
    }
}

/// Checks the words of one `--event` that do not depend on the box: each is `key=value`
/// with a key `--event` takes. Run before any box is looked up, so a typo is reported as
/// such whatever `--unit` says.
pub fn check_words(text: &str) -> Result<(), Failure> {
    let mut has_event = false;
    for part in text.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(Failure::usage(format!(
                "`{part}` is not key=value; --event takes {ACCEPTED}, e.g. ev_sel=0x01,umask=0x04"
            )));
        };
        let k = k.trim();
        if !is_filter_field(k) {
            has_event |= matches!(role_of(k, v)?, None | Some(Role::Event));
        }
    }
    if !has_event {
        return Err(Failure::usage(format!(
            "`{text}` has no event: give event=NAME (`pmu list --events --unit UNIT`) or ev_sel=N"
        )));
    }
    Ok(())
}

/// Parses one `--event` for a counter whose control register is `control`: into the
/// settings [`EventSelect`] carries, `None` where the text leaves the box's reset value.
/// `event=NAME` may name an event of processor `core`'s own core list (the detected or
/// named processor) when `control` is a core PMU's.
pub fn parse(
    control: &'static RegisterInfo,
    text: &str,
    core: Option<&str>,
) -> Result<EventSelect, Failure> {
    check_words(text)?;
    let field = |role: Role| control.role(role).map(|f| f.name);
    let mut words = Vec::new();
    let mut given: Vec<Role> = Vec::new();
    let mut by_name = false;
    // The counters the named event's list allows it: on a core without Hyper-Threading,
    // more for some (Intel's CounterHTOff). The session places it only on counters the part
    // reports (`Counting::limit_general`), which with Hyper-Threading on are the others.
    let mut counters = None;
    let mut fields = FieldSettings::NONE;
    for part in text.split(',') {
        let (k, v) = part.split_once('=').expect("checked above");
        let k = k.trim();
        if is_filter_field(k) {
            fields = filter(control, fields, k, v)?;
            continue;
        }
        match role_of(k, v)? {
            None => {
                by_name = true;
                counters = pmu_runtime::codec::named_event(control, v.trim(), core)
                    .map(|e| e.counters_without_ht());
                super::commands::note_if_experimental(control, v.trim(), core);
                words.push(format!("event={v}"));
            }
            Some(role) => {
                given.push(role);
                // A role the control lacks keeps the word the user typed, so the codec's
                // refusal names it (`B0_MSR_PMON_EVT_SEL0 has no field umask`).
                words.push(format!("{}={v}", field(role).unwrap_or(k)));
            }
        }
    }
    let pairs = grammar::assignments(control, &words)?;
    let raw = codec::encode_for(control, 0, &pairs, core)?;
    // `event=NAME` sets the event select, the umask and the extension bit from the list, and
    // the counter mask, invert, edge and any-thread bits and the uncore masks where the
    // event has them; and names the auxiliary MSR it needs, with its value.
    let aux = codec::aux_for(control, &pairs, core);
    let set = |role: Role| {
        let value = control.role(role).map(|f| f.extract(raw));
        let from_event = by_name
            && match role {
                Role::Umask | Role::EventExt => true,
                Role::Threshold
                | Role::Invert
                | Role::Edge
                | Role::AnyThread
                | Role::UmaskExt
                | Role::PortMask
                | Role::FcMask => value.is_some_and(|v| v != 0),
                _ => false,
            };
        (given.contains(&role) || from_event)
            .then_some(value)
            .flatten()
    };
    let event = control.role(Role::Event).map_or(0, |f| f.extract(raw));
    Ok(EventSelect {
        ev_sel: u16::try_from(event).map_err(|_| {
            Failure::usage(format!(
                "`{text}` selects event {event:#x}, wider than watch programs (16 bits)"
            ))
        })?,
        // The field's width bounds the value (a unit mask is at most 12 bits).
        umask: set(Role::Umask).map(|v| v as u16),
        thresh: set(Role::Threshold).map(|v| v as u8),
        invert: set(Role::Invert).map(|v| v != 0),
        edge_detect: set(Role::Edge).map(|v| v != 0),
        event_ext: set(Role::EventExt).map(|v| v != 0),
        any_thread: set(Role::AnyThread).map(|v| v != 0),
        // The fields' widths bound the masks (32, 12 and 3 bits at most).
        umask_ext: set(Role::UmaskExt).map(|v| v as u32),
        port_mask: set(Role::PortMask).map(|v| v as u16),
        fc_mask: set(Role::FcMask).map(|v| v as u8),
        fields,
        counters,
        aux,
    })
}

/// `fields` with the filter field `key` of `control` set to `value`: a field the control
/// gives a count default, the value a number that fits it.
fn filter(
    control: &'static RegisterInfo,
    mut fields: FieldSettings,
    key: &str,
    value: &str,
) -> Result<FieldSettings, Failure> {
    let Some(field) = control
        .fields
        .iter()
        .find(|f| f.count_default.is_some() && f.name.eq_ignore_ascii_case(key))
    else {
        let own: Vec<&str> = control
            .fields
            .iter()
            .filter(|f| f.count_default.is_some())
            .map(|f| f.name)
            .collect();
        return Err(Failure::usage(format!(
            "`{key}` is not a filter of {}: {}",
            control.name,
            if own.is_empty() {
                "it has none --event can set by name".to_string()
            } else {
                format!("its filters are {}", own.join(", "))
            }
        )));
    };
    let n = grammar::number(value.trim())?;
    if n > field.max() {
        return Err(Failure::usage(format!(
            "`{key}={}` does not fit {}.{}, {} bits wide (at most {:#x})",
            value.trim(),
            control.name,
            field.name,
            field.width(),
            field.max()
        )));
    }
    if !fields.set(field.name, n) {
        return Err(Failure::usage(format!(
            "`{key}` is one filter too many: --event sets at most {} by name",
            FieldSettings::CAPACITY
        )));
    }
    Ok(fields)
}

/// `--event` on a box with free-running counters: `event=NAME` naming one by the event the
/// kernel publishes for it (`bw_in_port0`), or `event=0xff,umask=N` as perf writes it. `None`
/// when the text selects no free-running counter of the box (it is then read as an event for
/// a general counter). A free-running counter has no control: nothing else can be set.
pub fn free_running(pmu_box: &PmuBox, text: &str) -> Option<EventSelect> {
    let (mut ev_sel, mut umask) = (None, None);
    for part in text.split(',') {
        let (k, v) = part.split_once('=')?;
        let v = v.trim();
        match k.trim().to_ascii_lowercase().as_str() {
            "event" | "ev_sel" => match grammar::number(v) {
                Ok(n) => ev_sel = u16::try_from(n).ok(),
                Err(_) => {
                    let p = pmu_box.free_running_named(v)?.info.perf_event?;
                    ev_sel = Some(FIXED_EVENT);
                    umask = Some(u16::from(p.umask));
                }
            },
            "umask" => umask = grammar::number(v).ok().and_then(|n| u16::try_from(n).ok()),
            _ => return None,
        }
    }
    let sel = EventSelect {
        umask,
        ..EventSelect::event(ev_sel?)
    };
    pmu_box.free_running(&sel).map(|_| sel)
}

/// The refusal of `text` on a box of free-running counters only, whose events it does not
/// name: the closest of their names, and every event the box offers.
pub fn no_free_running(pmu_box: &PmuBox, text: &str) -> UsageError {
    let names = pmu_box
        .counters
        .iter()
        .filter_map(|c| c.info.perf_event.map(|p| p.name));
    let given = text.rsplit('=').next().unwrap_or(text);
    let close = pmu_runtime::lookup::suggest(given, names, 1);
    let hint = match close.first() {
        Some(name) => format!(" (did you mean event={name}?)"),
        None => String::new(),
    };
    UsageError::BadValue {
        text: text.to_string(),
        expected: format!(
            "an event of {}, which has only free-running counters{hint}: {}",
            pmu_box.instance,
            pmu_box.offers()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmu_regs::{CounterKind, PROCESSORS};
    use pmu_runtime::boxes::Boxes;

    /// `event=NAME` of a processor's core list carries the counter mask, invert and
    /// any-thread bits into the selection, and the counter's control value programs them.
    #[test]
    fn a_core_event_by_name_carries_its_settings_into_the_control() {
        let arch = PROCESSORS.iter().find(|p| p.id == "architectural").unwrap();
        let boxes = Boxes::of(arch);
        let c = boxes.boxes[0]
            .counters
            .iter()
            .find(|c| c.info.kind == CounterKind::General)
            .unwrap();
        let info = c.control.unwrap().info;
        let sel = parse(
            info,
            "event=UOPS_ISSUED.CORE_STALL_CYCLES",
            Some("xeon-e5-2600"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (
                sel.ev_sel,
                sel.umask,
                sel.thresh,
                sel.invert,
                sel.edge_detect,
                sel.any_thread
            ),
            (0x0e, Some(1), Some(1), Some(true), None, Some(true))
        );
        let raw = c.control_value(&sel, false).unwrap();
        // cmask 1, inv, en, any, os, usr, umask 1, event 0x0e.
        assert_eq!(raw, 0x01e3_010e);
        // Without the processor the name is refused, naming who has it.
        let e = parse(info, "event=UOPS_ISSUED.CORE_STALL_CYCLES", None).unwrap_err();
        assert!(
            e.to_string()
                .contains("is a core event of xeon-7500, xeon-e5-2600"),
            "{e}"
        );
    }

    /// An uncore event that needs its unit-mask extension or the IIO port masks carries them,
    /// so it is not counted as another event; one without sets none.
    #[test]
    fn an_event_with_an_uncore_mask_carries_it() {
        let icx = PROCESSORS.iter().find(|p| p.id == "ice-lake-sp").unwrap();
        let boxes = Boxes::of(icx);
        let control = |unit: &str| {
            boxes
                .boxes
                .iter()
                .find(|b| b.unit.name == unit)
                .and_then(|b| b.counters.iter().find_map(|c| c.control))
                .unwrap_or_else(|| panic!("no {unit} control"))
                .info
        };
        let sel = parse(control("CHA"), "event=UNC_CHA_TOR_INSERTS.IA_MISS", None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (sel.ev_sel, sel.umask, sel.umask_ext),
            (0x35, Some(0x01), Some(0xc001fe))
        );
        let sel = parse(
            control("IIO"),
            "event=UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0",
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((sel.port_mask, sel.fc_mask), (Some(0x1), Some(0x7)));
        let sel = parse(control("CHA"), "event=UNC_CHA_CLOCKTICKS", None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((sel.ev_sel, sel.umask), (0x00, Some(0)));
        assert_eq!(
            (sel.umask_ext, sel.port_mask, sel.fc_mask),
            (None, None, None)
        );
    }

    /// Every general counter control of every box of every processor reads each word by the
    /// role its field plays, whatever the guide calls the field; a word whose role the
    /// control lacks is refused naming it.
    #[test]
    fn every_control_reads_the_words_by_role() {
        let mut checked = 0;
        for p in PROCESSORS {
            for b in &Boxes::of(p).boxes {
                for c in b
                    .counters
                    .iter()
                    .filter(|c| c.info.kind == CounterKind::General)
                {
                    let Some(ctl) = c.control else { continue };
                    let info = ctl.info;
                    let sel = parse(info, "ev_sel=0x10", None).unwrap_or_else(|e| panic!("{e}"));
                    assert_eq!(sel.ev_sel, 0x10);
                    assert_eq!((sel.umask, sel.thresh, sel.edge_detect), (None, None, None));
                    for (word, role) in [
                        ("umask", Role::Umask),
                        ("thresh", Role::Threshold),
                        ("invert", Role::Invert),
                        ("edge", Role::Edge),
                        ("ext", Role::EventExt),
                        ("any", Role::AnyThread),
                    ] {
                        let text = format!("ev_sel=0x10,{word}=1");
                        match (info.role(role), parse(info, &text, None)) {
                            (Some(_), Ok(sel)) => {
                                let got = match role {
                                    Role::Umask => sel.umask.map(u64::from),
                                    Role::Threshold => sel.thresh.map(u64::from),
                                    Role::Invert => sel.invert.map(u64::from),
                                    Role::Edge => sel.edge_detect.map(u64::from),
                                    Role::AnyThread => sel.any_thread.map(u64::from),
                                    _ => sel.event_ext.map(u64::from),
                                };
                                assert_eq!(got, Some(1), "{} {text}", info.name);
                            }
                            (None, Err(e)) => {
                                assert!(e.to_string().contains(word), "{} {text}: {e}", info.name)
                            }
                            (field, result) => panic!(
                                "{} {text}: field {:?}, parse {:?}",
                                info.name,
                                field.map(|f| f.name),
                                result.map_err(|e| e.to_string())
                            ),
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked} controls");
    }
}
