//! Finding registers by name in the generated metadata.

use pmu_regs::{AddressInfo, Addresses, Location, RegisterInfo, PROCESSORS};

use crate::error::UsageError;

/// A register found by name: its layout, and the instance when the name was concrete.
#[derive(Debug, Clone, Copy)]
pub struct FoundRegister {
    /// The register layout.
    pub info: &'static RegisterInfo,
    /// The instance and index, when the name named one (`W_MSR_PMON_EVT_SEL2`); `None` for a
    /// layout name (`W_MSR_PMON_EVT_SEL{n}`, `WEvtSel`) or a register with no known address.
    pub address: Option<&'static AddressInfo>,
}

fn registers() -> impl Iterator<Item = &'static RegisterInfo> {
    PROCESSORS
        .iter()
        .flat_map(|p| p.units.iter())
        .flat_map(|u| u.registers.iter().copied())
}

/// Every name a user may type for a register: each concrete instance name, the template, and
/// the Rust layout type.
fn names(r: &'static RegisterInfo) -> impl Iterator<Item = &'static str> {
    let concrete = match r.addresses {
        Addresses::Known(a) => a.iter().map(|a| a.name).collect::<Vec<_>>(),
        Addresses::Unknown(_) | Addresses::FromTable(_) => Vec::new(),
    };
    concrete.into_iter().chain([r.name, r.type_name])
}

/// Finds a register by concrete name (`W_MSR_PMON_EVT_SEL2`), template (`W_MSR_PMON_EVT_SEL{n}`)
/// or layout type (`WEvtSel`), ignoring case. A name two processors share (`C0_MSR_PMON_CTR0`
/// is both a Xeon 7500 and an E5-2600 register) must be prefixed with the processor:
/// `xeon-e5-2600:C0_MSR_PMON_CTR0`. An unknown name gets the closest names suggested.
pub fn find(name: &str) -> Result<FoundRegister, UsageError> {
    let (processor, bare) = match name.split_once(':') {
        Some((p, n)) => (Some(p), n),
        None => (None, name),
    };
    let mut matches: Vec<FoundRegister> = Vec::new();
    for info in
        registers().filter(|r| processor.is_none_or(|p| r.processor.eq_ignore_ascii_case(p)))
    {
        if let Some(a) = info
            .known_addresses()
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(bare))
        {
            matches.push(FoundRegister {
                info,
                address: Some(a),
            });
        } else if info.name.eq_ignore_ascii_case(bare) || info.type_name.eq_ignore_ascii_case(bare)
        {
            matches.push(FoundRegister {
                info,
                address: None,
            });
        }
    }
    match matches.len() {
        1 => Ok(matches[0]),
        0 => Err(UsageError::UnknownRegister {
            name: name.to_string(),
            suggestions: suggest(bare, registers().flat_map(names), 3),
        }),
        _ => Err(UsageError::BadValue {
            text: name.to_string(),
            expected: format!(
                "one register; several processors have it, so prefix one: {}",
                matches
                    .iter()
                    .map(|m| format!("{}:{bare}", m.info.processor))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// The `max` candidates closest to `name` by edit distance (case-insensitive), closest first;
/// only those close enough to be a plausible typo.
pub fn suggest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
    max: usize,
) -> Vec<String> {
    let target = name.to_ascii_uppercase();
    let target_len = target.chars().count();
    let limit = (target_len / 3).max(2);
    // Among equally close names, the one sharing the longest start comes first: typos are
    // mostly at the end (`CHA30` means `CHA3` before `CHA0`).
    let mut scored: Vec<(usize, std::cmp::Reverse<usize>, &'a str)> = candidates
        // The distance is at least the difference in length: skip what cannot be close.
        .filter(|c| c.chars().count().abs_diff(target_len) <= limit)
        .map(|c| {
            let upper = c.to_ascii_uppercase();
            let shared = target
                .chars()
                .zip(upper.chars())
                .take_while(|(a, b)| a == b)
                .count();
            (edit_distance(&target, &upper), std::cmp::Reverse(shared), c)
        })
        .filter(|(d, _, _)| *d <= limit)
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.2 == b.2);
    scored
        .into_iter()
        .take(max)
        .map(|(_, _, c)| c.to_string())
        .collect()
}

/// The error for a processor name that matched none: the processors whose id begins with
/// `name` (`skylake` for `skylake-sp`), then those close to it by edit distance.
pub fn unknown_processor(name: &str) -> UsageError {
    let lower = name.to_ascii_lowercase();
    let mut suggestions: Vec<String> = PROCESSORS
        .iter()
        .filter(|p| !lower.is_empty() && p.id.starts_with(&lower))
        .map(|p| p.id.to_string())
        .collect();
    for s in suggest(name, PROCESSORS.iter().map(|p| p.id), 3) {
        if !suggestions.contains(&s) {
            suggestions.push(s);
        }
    }
    suggestions.truncate(3);
    UsageError::UnknownProcessor {
        name: name.to_string(),
        suggestions,
        processors: PROCESSORS
            .iter()
            .map(|p| p.id)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Levenshtein distance.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// A register by name, by MSR number (`0x186`), or, for a name two processors share, the
/// one this machine has (`detected`).
pub fn resolve(register: &str, detected: Option<&str>) -> Result<FoundRegister, UsageError> {
    let name = register.trim();
    if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        let address = u32::from_str_radix(hex, 16).map_err(|_| {
            UsageError::Refused(format!("`{register}` is not an MSR number (0x186)"))
        })?;
        let found: Vec<FoundRegister> = PROCESSORS
            .iter()
            .flat_map(|p| p.units.iter())
            .flat_map(|u| u.registers.iter().copied())
            .flat_map(|info| {
                info.known_addresses()
                    .iter()
                    .filter(move |a| a.location == Location::Msr(address))
                    .map(move |a| FoundRegister {
                        info,
                        address: Some(a),
                    })
            })
            .collect();
        let here: Vec<FoundRegister> = found
            .iter()
            .copied()
            .filter(|f| detected.is_none_or(|p| f.info.processor == p))
            .collect();
        return match (found.len(), here.len()) {
            (0, _) => Err(UsageError::Refused(format!(
                "no register in the specs is at MSR {address:#X}; `pmu list` shows every register \
                 and its address (pmu reads only registers it can decode)"
            ))),
            (1, _) => Ok(found[0]),
            (_, 1) => Ok(here[0]),
            _ => Err(UsageError::Refused(format!(
                "MSR {address:#X} is {}; name one of them",
                found
                    .iter()
                    .map(|f| format!(
                        "{}:{}",
                        f.info.processor,
                        f.address.map_or(f.info.name, |a| a.name)
                    ))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ))),
        };
    }
    if let (Some(p), false) = (detected, name.contains(':')) {
        if let Ok(f) = find(&format!("{p}:{name}")) {
            return Ok(f);
        }
    }
    find(name)
}

/// A box and an event it counts, for messages that show a selection: the first box, in the
/// spec's order, of a unit with an event list, prefixed with its processor
/// (`processor:instance`, event name). Found in the spec, so the example always selects.
pub fn counter_example() -> (String, &'static str) {
    PROCESSORS
        .iter()
        .flat_map(|p| p.units.iter().map(move |u| (p.id, *u)))
        .find_map(|(p, u)| {
            let event = u.events.first()?;
            let instance = u.instances.first()?;
            u.pmu?;
            Some((format!("{p}:{instance}"), event.name))
        })
        .unwrap_or_default()
}

/// The processor `name` names, by id or module in any case (`xeon-e5-2600`, `xeon_e5_2600`),
/// or `None` when no name is given.
pub fn processor_named(name: Option<&str>) -> Result<Option<&'static str>, UsageError> {
    name.map(|name| processor(name).map(|p| p.id)).transpose()
}

/// The processor `name` names, by id or module in any case (see [`processor_named`]).
pub fn processor(name: &str) -> Result<&'static pmu_regs::ProcessorInfo, UsageError> {
    PROCESSORS
        .iter()
        .copied()
        .find(|p| {
            [p.id, p.module]
                .iter()
                .any(|n| n.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| unknown_processor(name))
}

/// What `pmu list PATTERN` selects, as `perf list PATTERN` reads a pattern: case-insensitive,
/// `*` and `?` as in a shell glob, and a pattern without them matches anywhere in the text
/// (`cas` finds `UNC_M_CAS_COUNT.RD`). Lowercased.
#[derive(Debug, Clone)]
pub struct Pattern {
    glob: Vec<char>,
}

impl Pattern {
    /// `text`, as a glob if it has `*` or `?`, otherwise as a substring (`*text*`).
    pub fn new(text: &str) -> Self {
        let lower = text.to_lowercase();
        let glob = if lower.contains(['*', '?']) {
            lower
        } else {
            format!("*{lower}*")
        };
        Pattern {
            glob: glob.chars().collect(),
        }
    }

    /// Whether any of `texts` matches.
    pub fn matches_any(&self, texts: &[&str]) -> bool {
        texts.iter().any(|t| {
            let t: Vec<char> = t.to_lowercase().chars().collect();
            glob(&self.glob, &t)
        })
    }
}

/// Glob matching with `*` (any run) and `?` (any one character), iteratively: the last `*`
/// seen is retried one character further on a mismatch, so it is linear in practice and
/// never recurses.
fn glob(pattern: &[char], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// Whether `want` (none: anything) is one of `names`, in any case.
pub fn matches(want: Option<&str>, names: &[&str]) -> bool {
    want.is_none_or(|w| names.iter().any(|n| n.eq_ignore_ascii_case(w)))
}

/// Why `--processor`/`--unit` selected nothing, naming only what was asked about.
pub fn nothing_selected(processor: Option<&str>, unit: Option<&str>) -> UsageError {
    let Some(p) = PROCESSORS
        .iter()
        .find(|p| processor.is_none_or(|w| matches(Some(w), &[p.id, p.module])))
    else {
        return unknown_processor(processor.unwrap_or_default());
    };
    let unit = unit.unwrap_or_default();
    let owners: Vec<&str> = PROCESSORS
        .iter()
        .filter(|q| {
            q.units
                .iter()
                .any(|u| matches(Some(unit), &[u.name, u.module]))
        })
        .map(|q| q.id)
        .collect();
    match processor {
        Some(_) => {
            let units: Vec<&str> = p.units.iter().map(|u| u.name).collect();
            let elsewhere = if owners.is_empty() {
                String::new()
            } else {
                format!(" ({unit} is a unit of {})", owners.join(", "))
            };
            UsageError::Refused(format!(
                "{} has no unit {unit}{elsewhere}; its units are {}",
                p.id,
                units.join(", ")
            ))
        }
        None => UsageError::Refused(format!(
            "there is no unit {unit}; `pmu list --summary` shows every processor's units"
        )),
    }
}

/// The units `--processor` and `--unit` select (`pmu list`), or a usage error naming what exists.
pub fn selected_units(
    processor: Option<&str>,
    unit: Option<&str>,
) -> Result<Vec<(&'static str, &'static pmu_regs::UnitInfo)>, UsageError> {
    let units = matching_units(processor, unit);
    if units.is_empty() {
        return Err(nothing_selected(processor, unit));
    }
    Ok(units)
}

/// The units the filters select, in processor order; none is not an error here.
pub fn matching_units(
    processor: Option<&str>,
    unit: Option<&str>,
) -> Vec<(&'static str, &'static pmu_regs::UnitInfo)> {
    PROCESSORS
        .iter()
        .filter(|p| matches(processor, &[p.id, p.module]))
        .flat_map(|p| {
            p.units
                .iter()
                .filter(|u| matches(unit, &[u.name, u.module]))
                .map(move |u| (p.id, *u))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmu_regs::Location;

    #[test]
    fn edit_distance_and_suggestions() {
        assert_eq!(edit_distance("KITTEN", "SITTING"), 3);
        assert_eq!(edit_distance("", "ABC"), 3);
        assert_eq!(edit_distance("ABC", "ABC"), 0);
        let names = [
            "W_MSR_PMON_CTR0",
            "W_MSR_PMON_CTR1",
            "U_MSR_PMON_GLOBAL_CTL",
        ];
        assert_eq!(
            suggest("w_msr_pmon_ctr", names.iter().copied(), 3),
            ["W_MSR_PMON_CTR0", "W_MSR_PMON_CTR1"]
        );
        assert!(suggest("ctr", names.iter().copied(), 3).is_empty());
    }

    #[test]
    fn equally_close_names_sharing_the_start_come_first() {
        let boxes = ["CHA0", "CHA10", "CHA20", "CHA3"];
        assert_eq!(suggest("cha30", boxes.iter().copied(), 2), ["CHA3", "CHA0"]);
    }

    #[test]
    fn a_processor_name_suggests_those_it_begins_then_close_ones() {
        let msg = unknown_processor("skylake").to_string();
        assert_eq!(
            msg,
            "there is no processor skylake; did you mean skylake-sp?"
        );
        let msg = unknown_processor("xeon-7501").to_string();
        assert!(msg.ends_with("did you mean xeon-7500?"), "{msg}");
        let msg = unknown_processor("zzz").to_string();
        assert!(msg.contains("the processors are xeon-7500, "), "{msg}");
    }

    #[test]
    fn finds_instances_templates_and_types_case_insensitively() {
        let f = find("w_msr_pmon_evt_sel2").unwrap();
        assert_eq!(f.info.type_name, "WEvtSel");
        assert_eq!(f.address.unwrap().location, Location::Msr(0xC94));
        let f = find("WEvtSel").unwrap();
        assert!(f.address.is_none());
        let f = find("xeon-e5-2600:Q_P1_PCI_PMON_CTL3").unwrap();
        assert_eq!(f.address.unwrap().instance, "P1");
    }

    #[test]
    fn names_two_processors_share_need_the_processor() {
        let e = find("C0_MSR_PMON_CTR0").unwrap_err().to_string();
        assert!(
            e.contains("xeon-7500:C0_MSR_PMON_CTR0") && e.contains("xeon-e5-2600:C0_MSR_PMON_CTR0"),
            "{e}"
        );
        let f = find("xeon-e5-2600:c0_msr_pmon_ctr0").unwrap();
        assert_eq!(f.info.processor, "xeon-e5-2600");
        assert_eq!(
            find("xeon-7500:C0_MSR_PMON_CTR0").unwrap().info.processor,
            "xeon-7500"
        );
    }

    #[test]
    fn a_typo_gets_the_nearest_names() {
        let Err(UsageError::UnknownRegister { suggestions, .. }) = find("W_MSR_PMON_EVT_SLE2")
        else {
            panic!("a typo must not match");
        };
        assert_eq!(
            suggestions.first().map(String::as_str),
            Some("W_MSR_PMON_EVT_SEL2")
        );
        let msg = find("W_MSR_PMON_EVT_SEL9").unwrap_err().to_string();
        assert!(msg.contains("did you mean"), "{msg}");
        let Err(UsageError::UnknownRegister { suggestions, .. }) = find("completely different")
        else {
            panic!()
        };
        assert!(suggestions.is_empty());
    }
}

#[cfg(test)]
mod pattern_tests {
    use super::Pattern;

    #[test]
    fn patterns_match_substrings_and_globs() {
        let cas = Pattern::new("cas");
        assert!(cas.matches_any(&["UNC_M_CAS_COUNT.RD"]));
        assert!(!cas.matches_any(&["UNC_M_ACT_COUNT"]));
        assert!(Pattern::new("unc_m_*.rd").matches_any(&["UNC_M_CAS_COUNT.RD"]));
        assert!(!Pattern::new("unc_m_*.wr").matches_any(&["UNC_M_CAS_COUNT.RD"]));
        assert!(Pattern::new("C?_MSR*").matches_any(&["C3_MSR_PMON_CTL0"]));
        assert!(Pattern::new("*").matches_any(&[""]));
        assert!(!Pattern::new("x").matches_any(&[]));
    }
}
