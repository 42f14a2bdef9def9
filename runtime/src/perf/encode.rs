//! A counter's event selection, as our spec describes its control register, translated into
//! a perf event: `config`/`config1`/`config2` through the PMU's format, and the event string
//! `perf` itself accepts (`uncore_ha/event=0x1,umask=0x3/`).

use std::fmt;

use pmu_regs::{
    AuxMsr, CounterPerfEvent, FieldInfo, FormatTarget, PerfDriverInfo, RegisterInfo, Role,
};

use super::error::{FormatWayOut, PerfError};
use super::format::{parse_terms, FormatField};
use super::sysfs::KernelPmu;

/// Our control fields whose kernel format field has another name. Every other field is looked
/// up under its own name (`umask`, `tid_en`, `occ_sel`, `inc_sel`, `pc`).
const ALIASES: &[(&str, &str)] = &[
    ("ev_sel", "event"),
    ("edge_detect", "edge"),
    ("edge_det", "edge"),
    ("invert", "inv"),
    ("threshold", "thresh"),
    ("any_thread", "any"),
    ("occ_edge_det", "occ_edge"),
];

/// Fields perf sets itself when it schedules the event (enable, per-counter reset).
const PERF_SETS: &[&str] = &["en", "rst"];

/// Fields that ask for an overflow interrupt: sampling, which the perf backend does not do.
const SAMPLING: &[&str] = &["pmi_en", "int"];

/// What the kernel calls the fixed counter of an uncore box (`UNCORE_FIXED_EVENT`).
pub const UNCORE_FIXED_EVENT: u64 = 0xff;

/// A perf event: the PMU, the format terms, and the words they make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfEvent {
    /// The PMU's name.
    pub pmu: String,
    /// Format terms in the order they are printed (`event`, `umask`, then the rest).
    pub terms: Vec<(String, u64)>,
    /// `[config, config1, config2]`.
    pub config: [u64; 3],
    /// Count only user mode (`u`) or only the kernel (`k`): the core PMU's usr/os bits.
    pub modifier: Option<char>,
}

impl fmt::Display for PerfEvent {
    /// The event string `perf stat -e` takes: `uncore_ha/event=0x1,umask=0x3/`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|(k, v)| format!("{k}={v:#x}"))
            .collect();
        write!(f, "{}/{}/", self.pmu, terms.join(","))?;
        if let Some(m) = self.modifier {
            write!(f, "{m}")?;
        }
        Ok(())
    }
}

impl PerfEvent {
    /// The event as `pmu encode --perf --json` prints it: the register and value it was
    /// made from, the PMU, the string and the three words, on one line.
    #[cfg(feature = "json")]
    pub fn json_line(&self, register: &str, value: u64) -> String {
        let v = serde_json::json!({"register": register, "value": value, "pmu": self.pmu,
            "event": self.to_string(), "config": self.config[0], "config1": self.config[1],
            "config2": self.config[2]});
        format!("{v}\n")
    }
}

/// The name of the format among `formats` that sets counter-control field `field`: the
/// kernel's usual name for it (`ALIASES`), else the one the spec's perf drivers map it to
/// ([`mapped_name`]), else the field's own name.
fn kernel_name<'a>(field: &'a str, formats: &[FormatField]) -> &'a str {
    let name = ALIASES
        .iter()
        .find(|(ours, _)| ours.eq_ignore_ascii_case(field))
        .map_or(field, |(_, k)| k);
    if formats.iter().any(|f| f.name == name) {
        return name;
    }
    mapped_name(field, formats).unwrap_or(name)
}

fn set(
    pmu: &str,
    formats: &[FormatField],
    terms: &mut Vec<(String, u64)>,
    words: &mut [u64; 3],
    name: &str,
    value: u64,
) -> Result<(), PerfError> {
    let f = formats
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| PerfError::FieldNotInFormat {
            pmu: pmu.to_string(),
            field: name.to_string(),
            available: names(formats),
            way_out: FormatWayOut::RawBackend,
        })?;
    f.place(value, words)
        .ok_or_else(|| PerfError::ValueTooWide {
            pmu: pmu.to_string(),
            field: name.to_string(),
            value,
            format: f.spec(),
        })?;
    match terms.iter_mut().find(|(k, _)| k == name) {
        Some(t) => t.1 = value,
        None => terms.push((name.to_string(), value)),
    }
    Ok(())
}

fn names(formats: &[FormatField]) -> String {
    let n: Vec<&str> = formats.iter().map(|f| f.name.as_str()).collect();
    n.join(", ")
}

/// Orders terms as perf users write them: event, umask, then the rest as the format lists.
fn order(terms: &mut [(String, u64)]) {
    let rank = |k: &str| match k {
        "event" => 0,
        "umask" => 1,
        _ => 2,
    };
    terms.sort_by_key(|(k, _)| rank(k));
}

/// Whether `info` is a fixed counter's control: one with no field of the event-select role
/// (its counter counts one event, whatever the control holds).
fn selects_no_event(info: &RegisterInfo) -> bool {
    info.role(Role::Event).is_none()
}

/// Translates a value of a counter control register (`raw`, laid out as `info`) into a perf
/// event of PMU `pmu` with format `formats`. `counter` is the kernel's counter number, for
/// boxes whose format selects it (the Xeon 7500 B-box's `counter`).
///
/// Every non-zero field must have a place in the format, with the width the spec gives it;
/// `en` and `rst` are left to perf; an overflow-interrupt bit is refused (counting only).
/// A fixed-counter control becomes the kernel's fixed event (`event=0xff`).
pub fn from_control(
    info: &RegisterInfo,
    raw: u64,
    pmu: &str,
    formats: &[FormatField],
    counter: Option<u32>,
) -> Result<PerfEvent, PerfError> {
    let mut terms = Vec::new();
    let mut words = [0u64; 3];
    let mut modifier = None;
    let fixed = selects_no_event(info);
    if fixed {
        set(
            pmu,
            formats,
            &mut terms,
            &mut words,
            "event",
            UNCORE_FIXED_EVENT,
        )?;
        if formats.iter().any(|f| f.name == "umask") {
            set(pmu, formats, &mut terms, &mut words, "umask", 0)?;
        }
    }
    let (mut usr, mut os) = (false, false);
    let ext = info.field("ev_sel_ext").map_or(0, |f| f.extract(raw));
    let folded = folded_umask_ext(info, formats);
    let umask_ext = folded.map_or(0, |f| f.extract(raw));
    for field in info.fields.iter().filter(|f| !f.is_placeholder()) {
        let value = field.extract(raw);
        match field.name.to_ascii_lowercase().as_str() {
            "usr" => usr = value != 0,
            "os" => os = value != 0,
            _ if folded.is_some_and(|f| f.name == field.name) => {}
            _ => {
                let ext = if field.role == Some(Role::Umask) {
                    umask_ext
                } else {
                    ext
                };
                if let Some((name, value)) = term(info, field, value, ext, pmu, formats)? {
                    set(pmu, formats, &mut terms, &mut words, &name, value)?;
                }
            }
        }
    }
    if ext != 0 && !terms.iter().any(|(k, _)| k == "event") {
        return Err(PerfError::FieldNotInFormat {
            pmu: pmu.to_string(),
            field: format!("ev_sel_ext ({})", info.name),
            available: names(formats),
            way_out: FormatWayOut::RawBackend,
        });
    }
    if let (Some(c), true) = (counter, formats.iter().any(|f| f.name == "counter")) {
        set(
            pmu,
            formats,
            &mut terms,
            &mut words,
            "counter",
            u64::from(c),
        )?;
    }
    if usr != os {
        modifier = Some(if usr { 'u' } else { 'k' });
    }
    order(&mut terms);
    Ok(PerfEvent {
        pmu: pmu.to_string(),
        terms,
        config: words,
        modifier,
    })
}

/// Adds the auxiliary MSR an event needs (`aux`: the offcore response, load-latency or
/// front-end register) to `event`, as the format term `driver` maps onto that register
/// (Linux's `offcore_rsp`, `ldlat`, `frontend`, all in `config1`): the kernel programs the
/// register from it. Refused by name where the format has no such term.
pub fn with_aux(
    event: &mut PerfEvent,
    formats: &[FormatField],
    driver: &PerfDriverInfo,
    aux: AuxMsr,
) -> Result<(), PerfError> {
    let Some(format) = driver
        .formats
        .iter()
        .find(|f| matches!(f.target, FormatTarget::Register(r) if names_register(r, aux.register)))
    else {
        return Err(PerfError::FieldNotInFormat {
            pmu: event.pmu.clone(),
            field: format!("{} (the auxiliary MSR the event needs)", aux.register),
            available: names(formats),
            way_out: FormatWayOut::RawBackend,
        });
    };
    set(
        &event.pmu.clone(),
        formats,
        &mut event.terms,
        &mut event.config,
        format.name,
        aux.value,
    )?;
    order(&mut event.terms);
    Ok(())
}

/// Whether a format's register `template` (`MSR_OFFCORE_RSP_{n}`, `MSR_PEBS_FRONTEND`) names
/// the concrete `register` (`MSR_OFFCORE_RSP_1`).
pub fn names_register(template: &str, register: &str) -> bool {
    match template.split_once("{n}") {
        None => template == register,
        Some((before, after)) => register
            .strip_prefix(before)
            .and_then(|rest| rest.strip_suffix(after))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
    }
}

/// The format among `formats` that the spec's perf drivers map counter-control field
/// `field` to by name (`<format field=...>` in processors.xml: `threadmask` sets AMD's L3
/// `thread_mask`), where the kernel's name is not the field's.
fn mapped_name(field: &str, formats: &[FormatField]) -> Option<&'static str> {
    pmu_regs::PROCESSORS
        .iter()
        .flat_map(|p| p.units.iter())
        .filter_map(|u| u.pmu)
        .flat_map(|pmu| pmu.perf.iter())
        .flat_map(|perf| perf.driver.formats.iter())
        .find(|f| {
            matches!(f.target, FormatTarget::Field(n) if n.eq_ignore_ascii_case(field))
                && formats.iter().any(|x| x.name == f.name)
        })
        .map(|f| f.name)
}

/// The term one field of a control value (`value`, with the extension bit `ext`) becomes
/// in `pmu`'s format: `None` for what perf sets itself, a field that cannot be written, or
/// a zero the event need not say; an error for what the format cannot express.
fn term(
    info: &RegisterInfo,
    field: &FieldInfo,
    value: u64,
    ext: u64,
    pmu: &str,
    formats: &[FormatField],
) -> Result<Option<(String, u64)>, PerfError> {
    let ours = field.name.to_ascii_lowercase();
    if PERF_SETS.contains(&ours.as_str()) || ours == "ev_sel_ext" {
        return Ok(None);
    }
    if SAMPLING.contains(&ours.as_str()) {
        if value != 0 {
            return Err(PerfError::NotForCounting {
                field: format!("{}.{}", info.name, field.name),
            });
        }
        return Ok(None);
    }
    if !field.access.is_writable() {
        return Ok(None);
    }
    let name = kernel_name(&ours, formats);
    let always = name == "event" || name == "umask";
    let Some(f) = formats.iter().find(|f| f.name == name) else {
        if value == 0 {
            return Ok(None);
        }
        let (pmu, field, available) = (
            pmu.to_string(),
            format!("{} ({})", field.name, info.name),
            names(formats),
        );
        // Raw access is the way out for other spaces; a system register has none.
        let way_out = if info.space == pmu_regs::Space::SysReg {
            FormatWayOut::PerfModifiers
        } else {
            FormatWayOut::RawBackend
        };
        return Err(PerfError::FieldNotInFormat {
            pmu,
            field,
            available,
            way_out,
        });
    };
    let mut value = value;
    let mut width = field.width();
    if name == "umask" && ext != 0 {
        // The unit-mask extension above the umask, in a wider umask term
        // ([`folded_umask_ext`]): refused below where the term is too narrow for it.
        value |= ext << width;
        width = u64::BITS - value.leading_zeros();
    }
    if name == "event" && ext != 0 {
        // The extension bit is the event's ninth bit (QPI: `config:0-7,21`).
        if f.width() <= width {
            return Err(PerfError::FieldNotInFormat {
                pmu: pmu.to_string(),
                field: format!("ev_sel_ext ({})", info.name),
                available: names(formats),
                way_out: FormatWayOut::RawBackend,
            });
        }
        value |= ext << field.width();
        width += 1;
    }
    if value == 0 && !always {
        return Ok(None);
    }
    // A wider event or umask format holds the field in its lowest bits and an extension
    // above (QPI `config:0-7,21`; Skylake-SP UPI `umask` = `config:8-15,32-43,45-55`).
    let extended = (name == "event" || name == "umask") && f.width() > width;
    if f.width() != width && !extended {
        return Err(PerfError::FormatMismatch {
            pmu: pmu.to_string(),
            field: format!("{} ({})", field.name, info.name),
            format: f.spec(),
            width,
        });
    }
    Ok(Some((name.to_string(), value)))
}

/// The control's unit-mask extension field (the `umask-ext` role) where the kernel's format
/// has no term of its name: the kernel then carries it in its `umask` term, above the
/// umask's bits (Linux's `umask_ext2`, Ice Lake-SP's CHA `umask` = `config:8-15,32-57`).
fn folded_umask_ext(info: &RegisterInfo, formats: &[FormatField]) -> Option<&'static FieldInfo> {
    let field = info.role(Role::UmaskExt)?;
    let ours = field.name.to_ascii_lowercase();
    let own = kernel_name(&ours, formats);
    (!formats.iter().any(|f| f.name == own)).then_some(field)
}

/// The reverse of [`from_control`], as a kernel driver reads an event: the counter control
/// value (laid out as `info`) that `config` asks for through `formats`, without the bits
/// perf sets itself (`en`, `rst`) and the privilege bits (`usr`, `os`). A config bit no
/// field of the control takes, or a value too wide for its field, is refused.
pub fn to_control(
    info: &RegisterInfo,
    config: &[u64; 3],
    pmu: &str,
    formats: &[FormatField],
) -> Result<u64, PerfError> {
    let mut raw = info.reset;
    let mut taken = [0u64; 3];
    let ext = info.field("ev_sel_ext");
    let folded = folded_umask_ext(info, formats);
    let fixed = selects_no_event(info);
    for field in info.fields.iter().filter(|f| !f.is_placeholder()) {
        let ours = field.name.to_ascii_lowercase();
        if PERF_SETS.contains(&ours.as_str())
            || SAMPLING.contains(&ours.as_str())
            || ["usr", "os", "ev_sel_ext"].contains(&ours.as_str())
            || !field.access.is_writable()
        {
            continue;
        }
        let name = kernel_name(&ours, formats);
        let Some(f) = formats.iter().find(|f| f.name == name) else {
            continue;
        };
        // A format field of another width is not this field (the driver's PCU `occ_edge`
        // is config:14-51, not the one bit `occ_edge_det` is): `from_control` never sets it.
        // A wider umask holds the field in its lowest bits (Skylake-SP UPI); a value above
        // them is refused below as too wide.
        let extended = name == "umask" && f.width() > field.width();
        if f.width() != field.width() && name != "event" && !extended {
            continue;
        }
        let mut value = f.extract(config);
        taken[f.word as usize] |= f.word_mask();
        raw = put_high_bits(info, field, f, (name, &mut value), (folded, ext), raw, pmu)?;
        raw = field
            .insert(info.name, raw, value)
            .map_err(|_| PerfError::ValueTooWide {
                pmu: pmu.to_string(),
                field: format!("{} ({})", field.name, info.name),
                value,
                format: f.spec(),
            })?;
    }
    if fixed {
        // The fixed counter's event (and a zero umask) select nothing in its control.
        for name in ["event", "umask"] {
            if let Some(f) = formats.iter().find(|f| f.name == name) {
                taken[f.word as usize] |= f.word_mask();
            }
        }
    }
    if let Some(f) = formats.iter().find(|f| f.name == "counter") {
        // The kernel's counter select (the Xeon 7500 B-box) says where, not what.
        taken[f.word as usize] |= f.word_mask();
    }
    every_bit_taken(info, config, &taken, pmu, formats)?;
    Ok(raw)
}

/// Where a umask or event term is wider than its field, puts the bits above the field in the
/// control's extension (the folded unit-mask extension, or the event-select extension: QPI's
/// `config:0-7,21`), leaving the field's own bits in `value`; refuses what no extension holds.
fn put_high_bits(
    info: &RegisterInfo,
    field: &FieldInfo,
    f: &FormatField,
    (name, value): (&str, &mut u64),
    (folded, ext): (Option<&FieldInfo>, Option<&FieldInfo>),
    mut raw: u64,
    pmu: &str,
) -> Result<u64, PerfError> {
    let too_wide = |field: String, value: u64| PerfError::ValueTooWide {
        pmu: pmu.to_string(),
        field,
        value,
        format: f.spec(),
    };
    if let (true, Some(e)) = (name == "umask" && *value > field.max(), folded) {
        // The umask term's bits above the umask are the unit-mask extension.
        let high = *value >> field.width();
        *value &= field.max();
        raw = e
            .insert(info.name, raw, high)
            .map_err(|_| too_wide(format!("{} ({})", e.name, info.name), high))?;
    }
    if name == "event" && *value > field.max() {
        // The event's bits above the select are the extension (QPI: `config:0-7,21`).
        let high = *value >> field.width();
        *value &= field.max();
        match ext {
            Some(e) if high <= e.max() => raw = (raw & !e.mask()) | (high << e.lsb),
            _ => {
                let whole = high << field.width() | *value;
                return Err(too_wide(format!("{} ({})", field.name, info.name), whole));
            }
        }
    }
    Ok(raw)
}

/// Refuses a `config` word with a bit no format field of the control `taken` took.
fn every_bit_taken(
    info: &RegisterInfo,
    config: &[u64; 3],
    taken: &[u64; 3],
    pmu: &str,
    formats: &[FormatField],
) -> Result<(), PerfError> {
    for (w, (&c, &t)) in config.iter().zip(taken).enumerate() {
        if c & !t != 0 {
            return Err(PerfError::FieldNotInFormat {
                pmu: pmu.to_string(),
                field: format!(
                    "{}:{:#x} (no field of {} takes those bits)",
                    ["config", "config1", "config2"][w],
                    c & !t,
                    info.name
                ),
                available: names(formats),
                way_out: FormatWayOut::RawBackend,
            });
        }
    }
    Ok(())
}

/// The terms of a free-running counter's event as the kernel's driver publishes it in its
/// PMU's `events/` directory (`bw_in_port0` on `uncore_iio_free_running_0`): the event select
/// 0xff that every free-running event shares, and the unit mask the spec gives the counter.
/// [`from_terms`] turns them into the event through the PMU's format files.
pub fn free_running_terms(event: &CounterPerfEvent) -> String {
    format!("event=0xff,umask={:#x}", event.umask)
}

/// Builds an event of `pmu` from what a user types: a name the PMU lists in `events/`
/// (`tsc`), format terms (`event=0x3c,umask=0x1`), or both (`tsc,edge=1`). Raw `config=`,
/// `config1=` and `config2=` terms are taken as perf takes them.
pub fn from_terms(pmu: &KernelPmu, text: &str) -> Result<PerfEvent, PerfError> {
    let mut terms = Vec::new();
    let mut words = [0u64; 3];
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if !part.contains('=') {
            if let Some(ev) = pmu.events.get(part) {
                for (k, v) in ev {
                    set_term(pmu, &mut terms, &mut words, k, *v)?;
                }
                continue;
            }
            // The software PMU lists no events: its events are the kernel's generic ones
            // (`software/cpu-clock/`), chosen by config alone.
            if let Some(g) = super::generic::generic(part).filter(|g| g.type_ == pmu.type_) {
                set_term(pmu, &mut terms, &mut words, "config", g.config)?;
                continue;
            }
            if pmu.format(part).is_none() {
                return Err(PerfError::UnknownEvent {
                    pmu: pmu.name.clone(),
                    event: part.to_string(),
                    available: if pmu.events.is_empty() {
                        "(none)".into()
                    } else {
                        pmu.events.keys().cloned().collect::<Vec<_>>().join(", ")
                    },
                });
            }
        }
        let parsed = parse_terms(part).map_err(|e| PerfError::FieldNotInFormat {
            pmu: pmu.name.clone(),
            field: format!("{} ({})", e.text, e.problem),
            available: pmu.format_names(),
            way_out: FormatWayOut::RawBackend,
        })?;
        for (k, v) in parsed {
            set_term(pmu, &mut terms, &mut words, &k, v)?;
        }
    }
    order(&mut terms);
    Ok(PerfEvent {
        pmu: pmu.name.clone(),
        terms,
        config: words,
        modifier: None,
    })
}

fn set_term(
    pmu: &KernelPmu,
    terms: &mut Vec<(String, u64)>,
    words: &mut [u64; 3],
    name: &str,
    value: u64,
) -> Result<(), PerfError> {
    let raw = match name {
        "config" => Some(0),
        "config1" => Some(1),
        "config2" => Some(2),
        _ => None,
    };
    if let Some(i) = raw {
        words[i] = value;
        terms.push((name.to_string(), value));
        return Ok(());
    }
    set(&pmu.name, &pmu.formats, terms, words, name, value)
}
