//! The words of a command line that say what to count, read as `pmu watch`, `pmu serve` and
//! a configuration file's lines read them: numbers as an msr-tools user types them
//! ([`NUMBER_RULE`]), `field=value` lists ([`assignments`]), and events in `--event`'s grammar
//! ([`event`]): `event=NAME`, named values (`invert=lt`) and numbers, checked against the
//! counter's own control register. The words (`ev_sel`, `umask`, `thresh`, `invert`, `edge`,
//! `ext`) name roles ([`Role`]); the control's field playing each role is found in the
//! generated metadata, so every box of every processor reads the same way whatever its guide
//! calls the field (`edge_det`, `edge_detect`, `thresh`, `threshold`, ...).
//!
//! ```
//! use pmu_runtime::session::{words, Selection};
//! assert_eq!(words::number("0x1f")?, 31);
//! let selection = Selection::of_named_boxes(
//!     &["xeon-e5-2600:IMC2"],
//!     &["event=UNC_M_CAS_COUNT.RD"],
//!     None,
//!     None,
//! )?;
//! assert_eq!(selection.boxes()[0].events[0].ev_sel, 0x04);
//! # Ok::<(), pmu_runtime::UsageError>(())
//! ```

use pmu_regs::{RegisterInfo, Role};

use crate::boxes::{EventSelect, FieldSettings, PmuBox, FIXED_EVENT};
use crate::codec;
use crate::error::UsageError;

/// A request refused with `message`.
fn refused(message: String) -> UsageError {
    UsageError::Refused(message)
}

/// The number rule, for `--help`.
pub const NUMBER_RULE: &str = "Numbers: 0x1f is hex, 0d31 decimal, 0b11111 binary. A bare number \
with a hex letter (1f, 4300c0) is hex, as rdmsr prints it. A bare number of two or more digits \
and no letter (430076) is refused as ambiguous: write 0x430076 or 0d430076. A single digit (0-9) \
is the same in both.";

/// Parses a number by [`NUMBER_RULE`]. Negative and too-large numbers say so.
pub fn number(text: &str) -> Result<u64, UsageError> {
    let t = text.trim().replace('_', "");
    if t.starts_with('-') {
        return Err(refused(format!(
            "`{text}` is negative; register and field values are unsigned (0 or more)"
        )));
    }
    let lower = t.to_ascii_lowercase();
    let (digits, radix, explicit) = if let Some(h) = lower.strip_prefix("0x") {
        (h, 16, true)
    } else if let Some(d) = lower.strip_prefix("0d") {
        (d, 10, true)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (b, 2, true)
    } else {
        (lower.as_str(), 16, false)
    };
    let valid = |c: char| c.is_digit(radix);
    if digits.is_empty() || !digits.chars().all(valid) {
        return Err(refused(format!(
            "`{text}` is not a number; write hex as 0x1f (or 1f), decimal as 0d31, binary as 0b11111"
        )));
    }
    if !explicit && digits.len() > 1 && digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(refused(format!(
            "`{text}` is ambiguous: rdmsr prints hex without 0x, so it could be 0x{digits} or \
             decimal {digits}; write 0x{digits} or 0d{digits}"
        )));
    }
    u64::from_str_radix(digits, radix).map_err(|_| {
        refused(format!(
            "`{text}` is too large: values are at most 64 bits (0xffff_ffff_ffff_ffff)"
        ))
    })
}

/// Checks `field=value` words for `info` and rewrites every number in the one form the
/// library's codec reads unambiguously (hex with 0x). Refused: a word that is not
/// `field=value`, a field given twice, `event=NAME` together with a field it sets, a field
/// that names reserved or ignored bits, a number that breaks [`NUMBER_RULE`].
pub fn assignments(
    info: &RegisterInfo,
    words: &[String],
) -> Result<Vec<(String, String)>, UsageError> {
    let mut out: Vec<(String, String)> = Vec::new();
    for w in words {
        let Some((f, v)) = w.split_once('=') else {
            return Err(refused(format!(
                "`{w}` is not field=value (e.g. ev_sel=0x3c)"
            )));
        };
        let (f, v) = (f.trim(), v.trim());
        if f.is_empty() || v.is_empty() {
            return Err(refused(format!(
                "`{w}` is not field=value (e.g. ev_sel=0x3c)"
            )));
        }
        if let Some((prev, _)) = out.iter().find(|(p, _)| p.eq_ignore_ascii_case(f)) {
            return Err(refused(format!(
                "{prev} is given twice; give each field once"
            )));
        }
        if let Some(p) = info
            .fields
            .iter()
            .find(|p| p.is_placeholder() && p.name.eq_ignore_ascii_case(f))
        {
            let bits = if p.msb == p.lsb {
                format!("bit {}", p.lsb)
            } else {
                format!("bits {}:{}", p.msb, p.lsb)
            };
            return Err(refused(format!(
                "{}.{} names {} ({}), which cannot be set; leave it out",
                info.name,
                p.name,
                bits,
                match p.access.as_str() {
                    "ig" => "ignored",
                    _ => "reserved",
                }
            )));
        }
        let named = info
            .fields
            .iter()
            .filter(|x| x.name.eq_ignore_ascii_case(f))
            .any(|x| x.values.iter().any(|n| n.name.eq_ignore_ascii_case(v)));
        let value = if f.eq_ignore_ascii_case("event") || named || !starts_like_number(v) {
            v.to_string()
        } else {
            format!("{:#x}", number(v)?)
        };
        out.push((f.to_string(), value));
    }
    if let Some((_, name)) = out.iter().find(|(f, _)| f.eq_ignore_ascii_case("event")) {
        // The fields playing the roles an event of the list sets.
        let set_by_event = |f: &str| {
            [Role::Event, Role::Umask, Role::EventExt]
                .iter()
                .filter_map(|r| info.role(*r))
                .any(|x| x.name.eq_ignore_ascii_case(f))
        };
        if let Some((f, _)) = out.iter().find(|(f, _)| set_by_event(f)) {
            return Err(refused(format!(
                "event={name} sets {f} itself; give either event=NAME or {f}=..., not both"
            )));
        }
    }
    Ok(out)
}

/// Whether a value is meant as a number (rather than a value name such as `lt` or `usr`).
fn starts_like_number(v: &str) -> bool {
    v.starts_with(|c: char| c.is_ascii_digit() || c == '-')
        || v.chars().all(|c| c.is_ascii_hexdigit() || c == '_')
}

/// What `--event` takes, for messages.
pub const ACCEPTED: &str = "event=NAME or ev_sel=N, and umask, thresh, invert, edge, ext, any, \
     usr and os (0 to leave out user mode or the kernel: perf's :k and :u), \
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
fn role_of(key: &str, value: &str) -> Result<Option<Role>, UsageError> {
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
        "usr" | "user" => Role::User,
        "os" | "kernel" => Role::Kernel,
        "umask_ext" => Role::UmaskExt,
        "port_mask" | "ch_mask" => Role::PortMask,
        "fc_mask" => Role::FcMask,
        "offcore_rsp" | "ldlat" | "frontend" => {
            return Err(refused(format!(
                "`{key}` is an auxiliary MSR's value, which --event takes from a named event \
                 (event=NAME sets it: `pmu list --events --unit CORE` shows each event's in \
                 SETTINGS); `pmu encode` with --perf gives perf's {key} term"
            )))
        }
        _ => {
            return Err(refused(format!(
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
pub fn check_words(text: &str) -> Result<(), UsageError> {
    let mut has_event = false;
    for part in text.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(refused(format!(
                "`{part}` is not key=value; --event takes {ACCEPTED}, e.g. ev_sel=0x01,umask=0x04"
            )));
        };
        let k = k.trim();
        if !is_filter_field(k) {
            has_event |= matches!(role_of(k, v)?, None | Some(Role::Event));
        }
    }
    if !has_event {
        return Err(refused(format!(
            "`{text}` has no event: give event=NAME (`pmu list --events --unit UNIT`) or ev_sel=N"
        )));
    }
    Ok(())
}

/// What one event's words set, before its control value is made.
struct Said {
    /// The control's fields and their values, as the codec takes them.
    pairs: Vec<(String, String)>,
    /// The roles set by their own word (not by an event's name).
    given: Vec<Role>,
    /// Whether the event is named (`event=NAME`).
    by_name: bool,
    /// The counters the named event's list allows it: on a core without Hyper-Threading,
    /// more for some (Intel's CounterHTOff). The session places it only on counters the part
    /// reports (`Counting::limit_general`), which with Hyper-Threading on are the others.
    counters: Option<u32>,
    /// The filters set by name.
    fields: FieldSettings,
}

/// Parses one `--event` for a counter whose control register is `control`: into the
/// settings [`EventSelect`] carries, `None` where the text leaves the box's reset value.
/// `event=NAME` may name an event of processor `core`'s own core list (the detected or
/// named processor) when `control` is a core PMU's.
pub fn event(
    control: &'static RegisterInfo,
    text: &str,
    core: Option<&str>,
) -> Result<EventSelect, UsageError> {
    check_words(text)?;
    let field = |role: Role| control.role(role).map(|f| f.name);
    let mut words = Vec::new();
    let mut said = Said {
        pairs: Vec::new(),
        given: Vec::new(),
        by_name: false,
        counters: None,
        fields: FieldSettings::NONE,
    };
    for part in text.split(',') {
        let (k, v) = part.split_once('=').expect("checked above");
        let k = k.trim();
        if is_filter_field(k) {
            said.fields = filter(control, said.fields, k, v)?;
            continue;
        }
        match role_of(k, v)? {
            None => {
                said.by_name = true;
                said.counters =
                    codec::named_event(control, v.trim(), core).map(|e| e.counters_without_ht());
                words.push(format!("event={v}"));
            }
            Some(role) => {
                said.given.push(role);
                // A role the control lacks keeps the word the user typed, so the codec's
                // refusal names it (`B0_MSR_PMON_EVT_SEL0 has no field umask`).
                words.push(format!("{}={v}", field(role).unwrap_or(k)));
            }
        }
    }
    said.pairs = assignments(control, &words)?;
    select(control, said, core, text)
}

/// The settings a derived metric adds to the event it reads (`:c1`, `:i1`, `:e1` in Intel's
/// metric lists): zero and `false` leave the event's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modifiers {
    /// Counter mask (0: the event's own).
    pub threshold: u8,
    /// Invert the counter mask.
    pub invert: bool,
    /// Count edges.
    pub edge: bool,
}

/// Event `name` of `control`'s list (or of processor `core`'s core list) with `modifiers`:
/// what `event=NAME,thresh=N,invert=1,edge=1` selects, made from the names themselves.
pub fn named_event(
    control: &'static RegisterInfo,
    name: &str,
    modifiers: Modifiers,
    core: Option<&str>,
) -> Result<EventSelect, UsageError> {
    let mut said = Said {
        pairs: vec![("event".to_string(), name.to_string())],
        given: Vec::new(),
        by_name: true,
        counters: codec::named_event(control, name, core).map(|e| e.counters_without_ht()),
        fields: FieldSettings::NONE,
    };
    for (role, value) in [
        (Role::Threshold, u64::from(modifiers.threshold)),
        (Role::Invert, u64::from(modifiers.invert)),
        (Role::Edge, u64::from(modifiers.edge)),
    ] {
        if value != 0 {
            let field = control.role(role).map_or(role.as_str(), |f| f.name);
            said.pairs.push((field.to_string(), format!("{value:#x}")));
            said.given.push(role);
        }
    }
    select(control, said, core, name)
}

/// The [`EventSelect`] of what `said` sets on `control` (`text` names it in messages).
fn select(
    control: &'static RegisterInfo,
    said: Said,
    core: Option<&str>,
    text: &str,
) -> Result<EventSelect, UsageError> {
    let raw = codec::encode_for(control, 0, &said.pairs, core)?;
    // `event=NAME` sets the event select, the umask and the extension bit from the list, and
    // the counter mask, invert, edge and any-thread bits and the uncore masks where the
    // event has them; and names the auxiliary MSR it needs, with its value.
    let aux = codec::aux_for(control, &said.pairs, core);
    let set = |role: Role| {
        let value = control.role(role).map(|f| f.extract(raw));
        let from_event = said.by_name
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
        (said.given.contains(&role) || from_event)
            .then_some(value)
            .flatten()
    };
    let event = control.role(Role::Event).map_or(0, |f| f.extract(raw));
    Ok(EventSelect {
        ev_sel: u16::try_from(event).map_err(|_| {
            refused(format!(
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
        user: set(Role::User).map(|v| v != 0),
        kernel: set(Role::Kernel).map(|v| v != 0),
        // The fields' widths bound the masks (32, 12 and 3 bits at most).
        umask_ext: set(Role::UmaskExt).map(|v| v as u32),
        port_mask: set(Role::PortMask).map(|v| v as u16),
        fc_mask: set(Role::FcMask).map(|v| v as u8),
        fields: said.fields,
        counters: said.counters,
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
) -> Result<FieldSettings, UsageError> {
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
        return Err(refused(format!(
            "`{key}` is not a filter of {}: {}",
            control.name,
            if own.is_empty() {
                "it has none --event can set by name".to_string()
            } else {
                format!("its filters are {}", own.join(", "))
            }
        )));
    };
    let n = number(value.trim())?;
    if n > field.max() {
        return Err(refused(format!(
            "`{key}={}` does not fit {}.{}, {} bits wide (at most {:#x})",
            value.trim(),
            control.name,
            field.name,
            field.width(),
            field.max()
        )));
    }
    if !fields.set(field.name, n) {
        return Err(refused(format!(
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
            "event" | "ev_sel" => match number(v) {
                Ok(n) => ev_sel = u16::try_from(n).ok(),
                Err(_) => {
                    let named = free_running_named(pmu_box, v)?;
                    (ev_sel, umask) = (Some(named.ev_sel), named.umask);
                }
            },
            "umask" => umask = number(v).ok().and_then(|n| u16::try_from(n).ok()),
            _ => return None,
        }
    }
    let sel = EventSelect {
        umask,
        ..EventSelect::event(ev_sel?)
    };
    pmu_box.free_running(&sel).map(|_| sel)
}

/// The free-running counter of `pmu_box` that the kernel's event `name` names
/// (`bw_in_port0`), selected as perf selects it (`event=0xff,umask=N`); `None` if none is.
pub fn free_running_named(pmu_box: &PmuBox, name: &str) -> Option<EventSelect> {
    let p = pmu_box.free_running_named(name)?.info.perf_event?;
    let sel = EventSelect {
        umask: Some(u16::from(p.umask)),
        ..EventSelect::event(FIXED_EVENT)
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
    let close = crate::lookup::suggest(given, names, 1);
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

    #[test]
    fn the_number_rule() {
        let ok = |t: &str| number(t).map_err(|e| e.to_string()).unwrap();
        assert_eq!(ok("0x1F"), 31);
        assert_eq!(ok("1f"), 31);
        assert_eq!(ok("0d31"), 31);
        assert_eq!(ok("0b1_1111"), 31);
        assert_eq!(ok("7"), 7);
        assert!(number("31").is_err());
        assert!(number("-1").unwrap_err().to_string().contains("negative"));
        assert!(number("0x1_0000_0000_0000_0000")
            .unwrap_err()
            .to_string()
            .contains("too large"));
    }

    use crate::boxes::Boxes;
    use pmu_regs::{CounterKind, PROCESSORS};

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
        let sel = event(
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
        let e = event(info, "event=UOPS_ISSUED.CORE_STALL_CYCLES", None).unwrap_err();
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
        let sel = event(control("CHA"), "event=UNC_CHA_TOR_INSERTS.IA_MISS", None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (sel.ev_sel, sel.umask, sel.umask_ext),
            (0x35, Some(0x01), Some(0xc001fe))
        );
        let sel = event(
            control("IIO"),
            "event=UNC_IIO_DATA_REQ_OF_CPU.MEM_READ.PART0",
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((sel.port_mask, sel.fc_mask), (Some(0x1), Some(0x7)));
        let sel = event(control("CHA"), "event=UNC_CHA_CLOCKTICKS", None)
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
                    let sel = event(info, "ev_sel=0x10", None).unwrap_or_else(|e| panic!("{e}"));
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
                        match (info.role(role), event(info, &text, None)) {
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
