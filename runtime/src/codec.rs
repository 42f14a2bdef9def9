//! Register values to named fields and back, for any register, from the metadata: what
//! `pmu decode` and `pmu encode` print and parse.

use pmu_regs::{Access, FieldInfo, RegisterInfo, Role};

use crate::error::UsageError;

use crate::lookup::suggest;

/// One field of a decoded value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedField {
    /// Field name; for an element of a CPUID-sized bit array, the concrete name (`PMC3_EN`).
    pub name: String,
    /// Most significant bit (of the lowest range, for a field of several bit ranges).
    pub msb: u32,
    /// Least significant bit (of the lowest range, for a field of several bit ranges).
    pub lsb: u32,
    /// For a field of several bit ranges, every range `(msb, lsb)`, most significant first;
    /// empty for a field of one range (`msb:lsb`).
    pub split: &'static [(u32, u32)],
    /// Access kind.
    pub access: Access,
    /// The field's value.
    pub value: u64,
    /// The name of the value, where the guide defines one.
    pub meaning: Option<&'static str>,
    /// What the value means, where the guide defines it.
    pub meaning_description: Option<&'static str>,
}

impl DecodedField {
    /// Its bits as the spec writes them: `22`, `7:0`, or `35:32,7:0` for a field of several
    /// ranges.
    pub fn bits_text(&self) -> String {
        let one = [(self.msb, self.lsb)];
        let ranges = if self.split.is_empty() {
            &one[..]
        } else {
            self.split
        };
        let texts: Vec<String> = ranges
            .iter()
            .map(|&(msb, lsb)| {
                if msb == lsb {
                    lsb.to_string()
                } else {
                    format!("{msb}:{lsb}")
                }
            })
            .collect();
        texts.join(",")
    }
}

/// A register value split into fields.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The register.
    pub register: &'static RegisterInfo,
    /// The raw value.
    pub raw: u64,
    /// Every named field, most significant first (reserved and ignored bits are reported in
    /// the masks below instead).
    pub fields: Vec<DecodedField>,
    /// Bits that must be written as zero but are set.
    pub reserved_set: u64,
    /// Ignored bits that are set (they read as zero on hardware).
    pub ignored_set: u64,
    /// Bits above the register width that are set.
    pub beyond_width: u64,
}

impl Decoded {
    /// Whether the value could be written as it is.
    pub fn is_clean(&self) -> bool {
        self.reserved_set == 0 && self.beyond_width == 0
    }
}

/// Splits `raw` into the fields of `info`.
pub fn decode(info: &'static RegisterInfo, raw: u64) -> Decoded {
    let mut fields = Vec::new();
    for f in info.fields.iter().filter(|f| !f.is_placeholder()) {
        match f.repeat {
            Some(rep) => {
                for n in (0..rep.max_count).rev() {
                    let lsb = f.lsb + n * rep.element_width;
                    let msb = lsb + rep.element_width - 1;
                    let mask = if rep.element_width >= 64 {
                        u64::MAX
                    } else {
                        (1 << rep.element_width) - 1
                    };
                    fields.push(DecodedField {
                        name: f.name.replace("{n}", &n.to_string()),
                        msb,
                        lsb,
                        split: &[],
                        access: f.access,
                        value: (raw >> lsb) & mask,
                        meaning: None,
                        meaning_description: None,
                    });
                }
            }
            None => {
                let value = f.extract(raw);
                let named = f.value_name(value);
                fields.push(DecodedField {
                    name: f.name.to_string(),
                    msb: f.msb,
                    lsb: f.lsb,
                    split: f.split,
                    access: f.access,
                    value,
                    meaning: named.map(|v| v.name),
                    meaning_description: named.map(|v| v.description),
                });
            }
        }
    }
    let beyond_width = if info.width >= 64 {
        0
    } else {
        raw >> info.width << info.width
    };
    Decoded {
        register: info,
        raw,
        fields,
        reserved_set: raw & info.reserved_mask,
        ignored_set: raw & info.ignored_mask,
        beyond_width,
    }
}

/// Parses a number as users type it: `0x1F`, `31`, `0b11111`, with optional `_` separators.
pub fn parse_number(text: &str) -> Result<u64, UsageError> {
    let t = text.trim().replace('_', "");
    let parsed = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        u64::from_str_radix(b, 2)
    } else {
        t.parse::<u64>()
    };
    parsed.map_err(|_| UsageError::BadValue {
        text: text.to_string(),
        expected: "a number: hex (0x1f), decimal (31) or binary (0b11111), at most 64 bits".into(),
    })
}

/// A field to set: the field, and for a bit array the element.
struct FieldTarget {
    field: &'static FieldInfo,
    element: Option<u32>,
}

impl FieldTarget {
    /// Bits the value may have: the element's for a bit array, else the field's (every range
    /// of a field of several).
    fn width(&self) -> u32 {
        match (self.element, self.field.repeat) {
            (Some(_), Some(rep)) => rep.element_width,
            _ => self.field.width(),
        }
    }

    /// `raw` with the target set to `value`, which fits [`FieldTarget::width`].
    fn insert(&self, info: &'static RegisterInfo, raw: u64, value: u64) -> Result<u64, UsageError> {
        match (self.element, self.field.repeat) {
            (Some(n), Some(rep)) => {
                let lsb = self.field.lsb + n * rep.element_width;
                let mask = pmu_regs::support::field_mask(lsb, rep.element_width);
                Ok((raw & !mask) | (value << lsb))
            }
            // The field's own insert gathers nothing and scatters over every range.
            _ => self
                .field
                .insert(info.name, raw, value)
                .map_err(UsageError::FieldTooWide),
        }
    }
}

/// Finds field `name` of `info`: a field name (case-insensitive), or for a CPUID-sized bit
/// array its element's concrete name (`PMC3_EN` for `PMC{n}_EN`).
fn find_field(info: &'static RegisterInfo, name: &str) -> Option<FieldTarget> {
    for f in info.fields.iter().filter(|f| !f.is_placeholder()) {
        match f.repeat {
            None if f.name.eq_ignore_ascii_case(name) => {
                return Some(FieldTarget {
                    field: f,
                    element: None,
                })
            }
            Some(rep) => {
                for n in 0..rep.max_count {
                    if f.name
                        .replace("{n}", &n.to_string())
                        .eq_ignore_ascii_case(name)
                    {
                        return Some(FieldTarget {
                            field: f,
                            element: Some(n),
                        });
                    }
                }
            }
            None => {}
        }
    }
    None
}

/// Every name `find_field` accepts, for suggestions.
fn field_names(info: &'static RegisterInfo) -> Vec<String> {
    let mut names = Vec::new();
    for f in info.fields.iter().filter(|f| !f.is_placeholder()) {
        match f.repeat {
            None => names.push(f.name.to_string()),
            Some(rep) => {
                names.extend((0..rep.max_count).map(|n| f.name.replace("{n}", &n.to_string())))
            }
        }
    }
    names
}

/// Sets fields of `base` from `field=value` assignments. A value is a number or, where the
/// guide names the field's values, one of those names. Refused: an unknown field (the nearest
/// names are suggested), a read-only field, a value too wide for its field.
pub fn encode(
    info: &'static RegisterInfo,
    base: u64,
    assignments: &[(String, String)],
) -> Result<u64, UsageError> {
    encode_for(info, base, assignments, None)
}

/// [`encode`], where `event=NAME` may also name an event of processor `core`'s own core
/// event list ([`events_for`]).
pub fn encode_for(
    info: &'static RegisterInfo,
    base: u64,
    assignments: &[(String, String)],
    core: Option<&str>,
) -> Result<u64, UsageError> {
    let mut raw = base;
    for (name, text) in assignments {
        if name.eq_ignore_ascii_case("event") {
            raw = set_event(info, raw, text, core)?;
            continue;
        }
        let Some(t) = find_field(info, name) else {
            let names = field_names(info);
            return Err(UsageError::UnknownField {
                register: info.name,
                field: name.clone(),
                suggestions: suggest(name, names.iter().map(String::as_str), 3),
                fields: names.join(", "),
            });
        };
        if !t.field.access.is_writable() {
            return Err(UsageError::ReadOnlyField {
                register: info.name,
                field: t.field.name,
                access: t.field.access.as_str(),
            });
        }
        let value = match t
            .field
            .values
            .iter()
            .find(|v| v.name.eq_ignore_ascii_case(text))
        {
            Some(v) => v.value,
            None => parse_number(text).map_err(|_| UsageError::BadValue {
                text: text.clone(),
                expected: if t.field.values.is_empty() {
                    format!("a number for {}", t.field.name)
                } else {
                    format!(
                        "a number or one of {} for {}",
                        t.field
                            .values
                            .iter()
                            .map(|v| v.name)
                            .collect::<Vec<_>>()
                            .join(", "),
                        t.field.name
                    )
                },
            })?,
        };
        let width = t.width();
        if value > pmu_regs::support::field_mask(0, width) {
            return Err(UsageError::FieldTooWide(pmu_regs::FieldTooWide {
                register: info.name,
                field: t.field.name,
                width,
                value,
            }));
        }
        raw = t.insert(info, raw, value)?;
    }
    Ok(raw)
}

/// The events of the unit `info` belongs to.
pub fn unit_events(info: &RegisterInfo) -> &'static [&'static pmu_regs::EventInfo] {
    pmu_regs::PROCESSORS
        .iter()
        .filter(|p| p.id == info.processor)
        .flat_map(|p| p.units.iter())
        .find(|u| u.name == info.unit)
        .map_or(&[], |u| u.events)
}

/// Every processor's own event list for `info`'s unit (the processors whose core PMU it is,
/// `processors.xml`'s `core-pmu`): (processor id, its events).
pub fn core_lists(
    info: &RegisterInfo,
) -> impl Iterator<Item = (&'static str, &'static [&'static pmu_regs::EventInfo])> + '_ {
    pmu_regs::PROCESSORS.iter().filter_map(move |p| {
        p.core_events
            .filter(|c| c.processor == info.processor && c.unit == info.unit)
            .map(|c| (p.id, c.events))
    })
}

/// The events `event=NAME` may name in `info`: for a register of a core PMU with `core`
/// naming the processor it runs on, that processor's own list first, then the unit's own
/// (the architectural events); for any other register, its unit's list.
pub fn events_for(info: &RegisterInfo, core: Option<&str>) -> Vec<&'static pmu_regs::EventInfo> {
    let mut events: Vec<&'static pmu_regs::EventInfo> = core_lists(info)
        .filter(|(p, _)| Some(*p) == core)
        .flat_map(|(_, list)| list.iter().copied())
        .collect();
    events.extend(unit_events(info).iter().copied());
    events
}

/// The event `event=NAME` names in `info` ([`events_for`]'s list, as `encode` finds it), if
/// any: tools say so when it is experimental ([`pmu_regs::EventInfo::experimental`]).
pub fn named_event(
    info: &RegisterInfo,
    name: &str,
    core: Option<&str>,
) -> Option<&'static pmu_regs::EventInfo> {
    events_for(info, core).into_iter().find(|e| names(e, name))
}

/// Whether `e` is the event `name` names: Intel's name or the constant's, in any case
/// (`UNC_H_REQUESTS.READS`, `requests_reads`).
fn names(e: &pmu_regs::EventInfo, name: &str) -> bool {
    let wanted = name.to_ascii_uppercase().replace('.', "_");
    e.name.eq_ignore_ascii_case(name) || {
        let short = e
            .name
            .strip_prefix("UNC_")
            .and_then(|r| r.split_once('_').map(|(_, rest)| rest))
            .unwrap_or(e.name);
        short.to_ascii_uppercase().replace('.', "_") == wanted
    }
}

/// Why `event=NAME` names no event of `info`'s list (`events`): a core event of other
/// processors' lists, a unit with no list, or a name near others.
fn no_such_event(
    info: &'static RegisterInfo,
    events: &[&pmu_regs::EventInfo],
    name: &str,
    core: Option<&str>,
) -> UsageError {
    // A number: `event=` takes a name; the event select field takes the number.
    if let (Some(sel), Ok(_)) = (info.role(Role::Event), parse_number(name)) {
        return UsageError::BadValue {
            text: format!("event={name}"),
            expected: format!(
                "an event name; to set the event select by number, write {}={name}",
                sel.name
            ),
        };
    }
    // A core event of other processors' lists: say which, and how to pick one.
    let others: Vec<&str> = core_lists(info)
        .filter(|(_, list)| list.iter().any(|e| names(e, name)))
        .map(|(p, _)| p)
        .collect();
    if !others.is_empty() {
        let this = match core {
                Some(p) => format!("an event of {p}'s core list or an architectural event ({name} is not one)"),
                None => format!("an architectural event of the {} unit, or, with the processor named, one of its own core events", info.unit),
            };
        return UsageError::BadValue {
                text: name.to_string(),
                expected: format!(
                    "{this}; {name} is a core event of {}: pass --processor with the processor this runs on (on hardware, the detected one is used)",
                    others.join(", ")
                ),
            };
    }
    if events.is_empty() {
        return UsageError::BadValue {
            text: format!("event={name}"),
            expected: format!(
                "field=value pairs: the {} unit has no event list",
                info.unit
            ),
        };
    }
    let near = suggest(name, events.iter().map(|e| e.name), 3);
    let near = if near.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", near.join(", "))
    };
    // A processor's core list leaves out what a general counter cannot count.
    let core = core.filter(|_| core_lists(info).next().is_some());
    let (list, absent) = match core {
        Some(p) => (
            format!("`pmu list --events --unit {} --processor {p}`", info.unit),
            "; events that count only on a fixed counter or only with PEBS are not in the list",
        ),
        None => (format!("`pmu list --events --unit {}`", info.unit), ""),
    };
    UsageError::BadValue {
        text: name.to_string(),
        expected: format!(
            "an event of the {} unit{near}; {list} lists them{absent}",
            info.unit
        ),
    }
}

/// The auxiliary MSR the last `event=NAME` among `assignments` needs programmed besides the
/// control (the offcore response, load-latency or front-end register of a core event), with
/// its value; `None` when no event is named or it needs none. [`encode_for`] has checked the
/// name by then.
pub fn aux_for(
    info: &'static RegisterInfo,
    assignments: &[(String, String)],
    core: Option<&str>,
) -> Option<pmu_regs::AuxMsr> {
    let (_, name) = assignments
        .iter()
        .rev()
        .find(|(field, _)| field.eq_ignore_ascii_case("event"))?;
    events_for(info, core)
        .iter()
        .find(|e| names(e, name))
        .and_then(|e| e.aux)
}

/// `event=NAME`: sets the event select, umask and (where the event needs it) the extension
/// bit from the register's event list ([`events_for`]), and the counter mask, invert, edge
/// and any-thread bits and the uncore masks (unit-mask extension, port and traffic-class
/// masks) where the event sets them.
fn set_event(
    info: &'static RegisterInfo,
    raw: u64,
    name: &str,
    core: Option<&str>,
) -> Result<u64, UsageError> {
    let events = events_for(info, core);
    let Some(event) = events.iter().find(|e| names(e, name)) else {
        return Err(no_such_event(info, &events, name, core));
    };
    // The fields come from the layout's roles, whatever the box calls them.
    let Some(ev_sel) = info.role(Role::Event) else {
        return Err(UsageError::UnsupportedField {
            register: info.name,
            field: "event (it has no event select: name a counter control register)",
        });
    };
    let mut pairs = vec![(ev_sel.name.to_string(), event.code.to_string())];
    if let Some(umask) = info.role(Role::Umask) {
        pairs.push((umask.name.to_string(), event.umask.to_string()));
    }
    match info.role(Role::EventExt) {
        Some(ext) => pairs.push((ext.name.to_string(), u8::from(event.ext_sel).to_string())),
        None if event.ext_sel => {
            return Err(UsageError::UnsupportedField {
                register: info.name,
                field: "event-select extension (the event needs it)",
            })
        }
        None => {}
    }
    for (role, value, what) in event_sets(event) {
        if value == 0 {
            continue;
        }
        match info.role(role) {
            Some(f) => pairs.push((f.name.to_string(), value.to_string())),
            None => {
                return Err(UsageError::UnsupportedField {
                    register: info.name,
                    field: what,
                })
            }
        }
    }
    encode(info, raw, &pairs)
}

/// What an event sets beyond its select, umask and extension bit, by role, with the words a
/// refusal uses: Intel's CounterMask, Invert, EdgeDetect and AnyThread, and an uncore event's
/// unit-mask extension and IIO port and traffic-class masks (UMaskExt, PortMask, FCMask),
/// without which it counts something else. 0 where the event sets nothing.
fn event_sets(event: &pmu_regs::EventInfo) -> [(Role, u64, &'static str); 7] {
    [
        (
            Role::Threshold,
            u64::from(event.threshold),
            "threshold (counter mask, the event sets it)",
        ),
        (
            Role::Invert,
            u64::from(event.invert),
            "invert (the event sets it)",
        ),
        (
            Role::Edge,
            u64::from(event.edge),
            "edge detect (the event sets it)",
        ),
        (
            Role::AnyThread,
            u64::from(event.any_thread),
            "any-thread (the event sets it)",
        ),
        (
            Role::UmaskExt,
            u64::from(event.umask_ext),
            "unit-mask extension (the event sets it)",
        ),
        (
            Role::PortMask,
            u64::from(event.port_mask),
            "port mask (the event sets it)",
        ),
        (
            Role::FcMask,
            u64::from(event.fc_mask),
            "traffic-class mask (the event sets it)",
        ),
    ]
}

/// Splits `field=value` words.
pub fn parse_assignments(words: &[String]) -> Result<Vec<(String, String)>, UsageError> {
    words
        .iter()
        .map(|w| {
            w.split_once('=')
                .map(|(f, v)| (f.trim().to_string(), v.trim().to_string()))
                .filter(|(f, v)| !f.is_empty() && !v.is_empty())
                .ok_or_else(|| UsageError::BadValue {
                    text: w.clone(),
                    expected: "field=value, e.g. ev_sel=0x3c".into(),
                })
        })
        .collect()
}

/// The event a control value selects, by its event list (`UNC_H_REQUESTS.READS`; for a
/// core PMU's control, processor `core`'s own list first): select, umask, extension bit, the
/// counter mask, invert, edge and any-thread bits and the uncore masks (unit-mask extension,
/// port and traffic-class masks) the event sets must all match, and so must its auxiliary
/// MSR: `aux` where the caller knows it (`encode event=NAME`), none otherwise, so a control
/// that many offcore events share is not named as the first of them.
pub fn event_of(
    d: &Decoded,
    core: Option<&str>,
    aux: Option<pmu_regs::AuxMsr>,
) -> Option<&'static pmu_regs::EventInfo> {
    let info = d.register;
    let sel = info.role(Role::Event)?.extract(d.raw);
    let get = |role: Role| info.role(role).map(|f| f.extract(d.raw));
    events_for(info, core).into_iter().find(|e| {
        u64::from(e.code) == sel
            && get(Role::Umask).is_none_or(|u| u == u64::from(e.umask))
            && get(Role::EventExt).is_none_or(|x| x == u64::from(e.ext_sel))
            && get(Role::Threshold).is_none_or(|x| x == u64::from(e.threshold))
            && get(Role::Invert).is_none_or(|x| x == u64::from(e.invert))
            && get(Role::Edge).is_none_or(|x| x == u64::from(e.edge))
            && get(Role::AnyThread).is_none_or(|x| x == u64::from(e.any_thread))
            && get(Role::UmaskExt).is_none_or(|x| x == u64::from(e.umask_ext))
            && get(Role::PortMask).is_none_or(|x| x == u64::from(e.port_mask))
            && get(Role::FcMask).is_none_or(|x| x == u64::from(e.fc_mask))
            && e.aux == aux
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup::find;

    #[test]
    fn decode_names_values_and_flags_reserved_bits() {
        let info = find("W_MSR_PMON_EVT_SEL2").unwrap().info;
        let d = decode(info, 1 << 50 | 1 << 23 | 0x0f01);
        assert_eq!(d.reserved_set, 1 << 50);
        let inv = d.fields.iter().find(|f| f.name == "invert").unwrap();
        assert_eq!((inv.value, inv.meaning), (1, Some("lt")));
        assert!(!d.is_clean());
        let info = find("IA32_PERF_GLOBAL_CTRL").unwrap().info;
        let d = decode(info, 1 << 3);
        assert!(d.fields.iter().any(|f| f.name == "PMC3_EN" && f.value == 1));
    }

    #[test]
    fn encode_accepts_numbers_and_value_names_and_refuses_bad_input() {
        let info = find("W_MSR_PMON_EVT_SEL0").unwrap().info;
        let a =
            parse_assignments(&["ev_sel=0x3c".into(), "INVERT=lt".into(), "en=1".into()]).unwrap();
        assert_eq!(
            encode(info, info.reset, &a).unwrap(),
            0x3c | 1 << 23 | 1 << 22
        );
        let e = encode(info, 0, &[("ev_sle".into(), "1".into())]).unwrap_err();
        assert!(e.to_string().contains("did you mean ev_sel"), "{e}");
        let e = encode(info, 0, &[("umask".into(), "0x100".into())]).unwrap_err();
        assert!(matches!(e, UsageError::FieldTooWide(_)), "{e}");
        let e = encode(info, 0, &[("invert".into(), "maybe".into())]).unwrap_err();
        assert!(e.to_string().contains("ge, lt"), "{e}");
        let status = find("IA32_PERF_GLOBAL_STATUS").unwrap().info;
        let e = encode(status, 0, &[("cond_chgd".into(), "1".into())]).unwrap_err();
        assert!(matches!(e, UsageError::ReadOnlyField { .. }), "{e}");
        let ctrl = find("IA32_PERF_GLOBAL_CTRL").unwrap().info;
        assert_eq!(
            encode(ctrl, 0, &[("pmc2_en".into(), "1".into())]).unwrap(),
            1 << 2
        );
        assert!(parse_assignments(&["ev_sel".into()]).is_err());
    }

    /// A 64-bit control whose 12-bit event select is split over bits 35:32 and 7:0, as AMD's
    /// core `PERF_CTL` is, with a unit mask between them.
    static SPLIT_FIELDS: [FieldInfo; 4] = [
        FieldInfo {
            name: "rsv",
            ident: "rsv",
            lsb: 36,
            msb: 63,
            ..FieldInfo::EMPTY
        },
        FieldInfo {
            name: "ev_sel",
            ident: "ev_sel",
            lsb: 0,
            msb: 7,
            split: &[(35, 32), (7, 0)],
            access: Access::Rw,
            ..FieldInfo::EMPTY
        },
        FieldInfo {
            name: "rsv",
            ident: "rsv",
            lsb: 16,
            msb: 31,
            ..FieldInfo::EMPTY
        },
        FieldInfo {
            name: "umask",
            ident: "umask",
            lsb: 8,
            msb: 15,
            access: Access::Rw,
            ..FieldInfo::EMPTY
        },
    ];

    static SPLIT: RegisterInfo = RegisterInfo {
        processor: "test",
        unit: "T",
        name: "T_SPLIT_CTL",
        type_name: "TSplitCtl",
        width: 64,
        space: pmu_regs::Space::Msr,
        count: 1,
        count_cpuid: None,
        reset: 0,
        reserved_mask: 0xFFFF_FFF0_FFFF_0000,
        ignored_mask: 0,
        writable_mask: 0xF_0000_FFFF,
        description: "A control with a split event select.",
        sources: &[],
        addresses: pmu_regs::Addresses::Unknown("a test register"),
        fields: &SPLIT_FIELDS,
        notes: &[],
    };

    #[test]
    fn a_split_field_decodes_and_encodes_as_one_value() {
        // Event 0x1C0: its bits 11:8 (0x1) in register bits 35:32, 7:0 (0xC0) in 7:0.
        let raw = encode(&SPLIT, 0, &[("ev_sel".into(), "0x1C0".into())]).unwrap();
        assert_eq!(raw, 1 << 32 | 0xC0);
        let raw = encode(&SPLIT, raw, &[("umask".into(), "0x3".into())]).unwrap();
        let d = decode(&SPLIT, raw);
        let event = d.fields.iter().find(|f| f.name == "ev_sel").unwrap();
        assert_eq!(
            (event.value, event.bits_text()),
            (0x1C0, "35:32,7:0".into())
        );
        // Setting it again replaces both ranges and leaves the unit mask alone.
        let raw = encode(&SPLIT, raw, &[("ev_sel".into(), "0x0FF".into())]).unwrap();
        assert_eq!(raw, 0x3FF);
        let e = encode(&SPLIT, 0, &[("ev_sel".into(), "0x1000".into())]).unwrap_err();
        assert!(
            matches!(e, UsageError::FieldTooWide(ref w) if w.width == 12),
            "{e}"
        );
        assert!(decode(&SPLIT, 1 << 40).reserved_set == 1 << 40);
    }

    #[test]
    fn numbers_parse_in_hex_decimal_and_binary() {
        assert_eq!(parse_number("0x1F").unwrap(), 31);
        assert_eq!(parse_number("31").unwrap(), 31);
        assert_eq!(parse_number("0b1_1111").unwrap(), 31);
        assert!(parse_number("0x1_0000_0000_0000_0000").is_err());
        assert!(parse_number("thirty").is_err());
    }
}
