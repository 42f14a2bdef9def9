//! `pmu list PATTERN`: which names and descriptions a pattern selects, as `perf list PATTERN`
//! reads one: case-insensitive, `*` and `?` as in a shell glob, and a pattern without them
//! matches anywhere in the text (`cas` finds `UNC_M_CAS_COUNT.RD`); and the processors and
//! units `--processor` and `--unit` name.

use pmu_regs::PROCESSORS;

use crate::failure::Failure;

/// A pattern as the user typed it, lowercased.
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

pub fn matches(want: Option<&str>, names: &[&str]) -> bool {
    want.is_none_or(|w| names.iter().any(|n| n.eq_ignore_ascii_case(w)))
}

/// Why `--processor`/`--unit` selected nothing, naming only what was asked about.
pub fn nothing_selected(processor: Option<&str>, unit: Option<&str>) -> Failure {
    let Some(p) = PROCESSORS
        .iter()
        .find(|p| processor.is_none_or(|w| matches(Some(w), &[p.id, p.module])))
    else {
        return pmu_runtime::lookup::unknown_processor(processor.unwrap_or_default()).into();
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
            Failure::usage(format!(
                "{} has no unit {unit}{elsewhere}; its units are {}",
                p.id,
                units.join(", ")
            ))
        }
        None => Failure::usage(format!(
            "there is no unit {unit}; `pmu list --summary` shows every processor's units"
        )),
    }
}

/// The units `list` selects, or a usage error naming what exists.
pub fn selected_units(
    processor: Option<&str>,
    unit: Option<&str>,
) -> Result<Vec<(&'static str, &'static pmu_regs::UnitInfo)>, Failure> {
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
    use super::Pattern;

    #[test]
    fn substrings_and_globs() {
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
