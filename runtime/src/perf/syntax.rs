//! perf's own event language, as `perf stat -e` takes it, so an event list can be pasted:
//!
//! - `PMU/TERMS/` with an optional `u` or `k` modifier: `msr/tsc/`, `cpu/event=0x3c/u`,
//!   `uncore_imc_0/event=0x4,umask=0x3/` (terms are the PMU's named events and format terms,
//!   read by [`super::encode::from_terms`]);
//! - the kernel's generic events by name: `cycles`, `instructions`, `cpu-clock`,
//!   `task-clock`, ... ([`GENERIC`]), with an optional `:u` or `:k`;
//! - a bare name one PMU lists in its `events/` directory (`tsc`).
//!
//! A list separates events with commas outside the slashes (`msr/tsc/,cpu-clock`); perf's
//! group braces (`{cycles,instructions}`) are accepted and dropped: the session groups the
//! events of one PMU on its own.

use super::encode::{from_terms, PerfEvent};
use super::error::PerfError;
pub use super::generic::{generic, Generic, GENERIC, TYPE_HARDWARE, TYPE_SOFTWARE};
use super::sysfs::{EventSources, KernelPmu};

/// One event of a list, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventSpec {
    /// `PMU/TERMS/` with its modifier.
    Pmu {
        /// The PMU (`msr`).
        pmu: String,
        /// The terms between the slashes (`tsc`, `event=0x3c,umask=0x1`).
        terms: String,
        /// `u` (user mode only) or `k` (kernel only).
        modifier: Option<char>,
    },
    /// A generic event's name or a name a PMU lists, with its modifier.
    Name {
        /// The name (`cycles`, `tsc`).
        name: String,
        /// `u` or `k`.
        modifier: Option<char>,
    },
}

/// Splits an event list at the commas outside `PMU/.../`, dropping group braces.
pub fn split_list(text: &str) -> Result<Vec<String>, PerfError> {
    let mut events = Vec::new();
    let mut current = String::new();
    let mut slashes = 0;
    for c in text.chars() {
        match c {
            '/' => {
                slashes += 1;
                current.push(c);
            }
            // A comma between a PMU's slashes separates its terms, not events.
            ',' if slashes % 2 == 0 => events.push(std::mem::take(&mut current)),
            '{' | '}' if slashes % 2 == 0 => {}
            _ => current.push(c),
        }
        if c == ',' && slashes % 2 == 0 {
            slashes = 0;
        }
    }
    events.push(current);
    let events: Vec<String> = events.iter().map(|e| e.trim().to_string()).collect();
    if let Some(empty) = events.iter().position(String::is_empty) {
        return Err(bad(
            text,
            &format!("event {} of the list is empty", empty + 1),
        ));
    }
    Ok(events)
}

/// Every event of `lists` (each a list as `perf stat -e` takes it), read: each with its
/// text as written.
pub fn parse_lists(lists: &[&str]) -> Result<Vec<(String, EventSpec)>, PerfError> {
    let mut events = Vec::new();
    for list in lists {
        for text in split_list(list)? {
            let spec = EventSpec::parse(&text)?;
            events.push((text, spec));
        }
    }
    Ok(events)
}

fn bad(text: &str, problem: &str) -> PerfError {
    PerfError::BadEventSyntax {
        text: text.to_string(),
        problem: problem.to_string(),
    }
}

/// The modifier after an event (`u`, `k`, or none), refusing perf's others by name.
fn modifier(text: &str, whole: &str) -> Result<Option<char>, PerfError> {
    match text {
        "" => Ok(None),
        "u" => Ok(Some('u')),
        "k" => Ok(Some('k')),
        other => Err(bad(
            whole,
            &format!(
                "modifier `{other}` is not taken: counting takes u (user mode only) or k (the \
                 kernel only)"
            ),
        )),
    }
}

impl EventSpec {
    /// Reads one event (not a list: see [`split_list`]).
    pub fn parse(text: &str) -> Result<Self, PerfError> {
        let text = text.trim();
        if let Some((pmu, rest)) = text.split_once('/') {
            let Some((terms, after)) = rest.rsplit_once('/') else {
                return Err(bad(text, "a PMU's terms end with a slash: PMU/TERMS/"));
            };
            if pmu.is_empty() || terms.trim().is_empty() {
                return Err(bad(
                    text,
                    "write PMU/TERMS/, e.g. msr/tsc/ or cpu/event=0x3c/",
                ));
            }
            let after = after.strip_prefix(':').unwrap_or(after);
            return Ok(EventSpec::Pmu {
                pmu: pmu.trim().to_string(),
                terms: terms.trim().to_string(),
                modifier: modifier(after, text)?,
            });
        }
        let (name, after) = text.split_once(':').unwrap_or((text, ""));
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '=') {
            return Err(bad(
                text,
                "an event is a name (cycles, tsc) or PMU/TERMS/ (msr/tsc/, cpu/event=0x3c/)",
            ));
        }
        Ok(EventSpec::Name {
            name: name.to_string(),
            modifier: modifier(after, text)?,
        })
    }

    /// The PMU and the perf event this names on the machine `sources` describes. A generic
    /// hardware event is the kernel's `PERF_TYPE_HARDWARE` (counted by whatever core PMU the
    /// machine has); a name is looked up as a generic event, then in every PMU's `events/`.
    pub fn resolve(&self, sources: &EventSources) -> Result<(KernelPmu, PerfEvent), PerfError> {
        match self {
            EventSpec::Pmu {
                pmu,
                terms,
                modifier,
            } => {
                let pmu = sources.pmu(pmu, "a kernel driver this machine does not have")?;
                let mut event = from_terms(&pmu, terms)?;
                event.modifier = *modifier;
                Ok((pmu, event))
            }
            EventSpec::Name { name, modifier } => {
                let (pmu, mut event) = match generic(name) {
                    Some(g) => generic_event(sources, g)?,
                    None => named_event(sources, name)?,
                };
                event.modifier = *modifier;
                Ok((pmu, event))
            }
        }
    }
}

/// The PMU a generic event is opened on: the `software` PMU of sysfs for a software event
/// (its `type` is the kernel's), and `PERF_TYPE_HARDWARE` for a hardware one, which has no
/// directory of its own.
fn generic_event(sources: &EventSources, g: &Generic) -> Result<(KernelPmu, PerfEvent), PerfError> {
    let pmu = match g.type_ {
        TYPE_SOFTWARE if sources.has("software") => sources.pmu("software", "the kernel")?,
        type_ => KernelPmu {
            name: if type_ == TYPE_SOFTWARE {
                "software"
            } else {
                "hardware"
            }
            .into(),
            type_,
            formats: Vec::new(),
            cpumask: Vec::new(),
            events: Default::default(),
        },
    };
    let event = PerfEvent {
        pmu: pmu.name.clone(),
        terms: vec![("config".into(), g.config)],
        config: [g.config, 0, 0],
        modifier: None,
    };
    Ok((pmu, event))
}

/// The PMU that lists event `name` in its `events/` directory: it must be exactly one.
fn named_event(sources: &EventSources, name: &str) -> Result<(KernelPmu, PerfEvent), PerfError> {
    let mut found = Vec::new();
    let mut known: Vec<String> = GENERIC.iter().map(|g| g.name.to_string()).collect();
    for pmu_name in sources.names() {
        let Ok(pmu) = sources.pmu(&pmu_name, "the kernel") else {
            continue;
        };
        known.extend(pmu.events.keys().cloned());
        if pmu.events.contains_key(name) {
            found.push(pmu);
        }
    }
    match found.len() {
        1 => {
            let pmu = found.remove(0);
            let event = from_terms(&pmu, name)?;
            Ok((pmu, event))
        }
        0 => {
            known.sort();
            known.dedup();
            Err(PerfError::UnknownName {
                name: name.to_string(),
                suggestions: crate::lookup::suggest(name, known.iter().map(String::as_str), 4),
            })
        }
        _ => Err(bad(
            name,
            &format!(
                "several PMUs list it ({}); name one: {}/{name}/",
                found
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                found[0].name
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_split_at_commas_outside_slashes() {
        let list = split_list("msr/tsc/,uncore_imc_0/event=0x4,umask=0x3/,cycles:u").unwrap();
        assert_eq!(
            list,
            ["msr/tsc/", "uncore_imc_0/event=0x4,umask=0x3/", "cycles:u"]
        );
        assert_eq!(
            split_list("{cycles,instructions},cpu-clock").unwrap(),
            ["cycles", "instructions", "cpu-clock"]
        );
        assert!(split_list("cycles,,instructions").is_err());
    }

    #[test]
    fn events_read_with_their_modifiers() {
        assert_eq!(
            EventSpec::parse("cpu/event=0x3c/u").unwrap(),
            EventSpec::Pmu {
                pmu: "cpu".into(),
                terms: "event=0x3c".into(),
                modifier: Some('u')
            }
        );
        assert_eq!(
            EventSpec::parse("cycles:k").unwrap(),
            EventSpec::Name {
                name: "cycles".into(),
                modifier: Some('k')
            }
        );
        for wrong in ["msr/tsc", "/tsc/", "msr//", "cycles:pp", "event=0x3c"] {
            assert!(EventSpec::parse(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn generic_names_have_the_kernels_numbers() {
        let g = generic("Task-Clock").unwrap();
        assert_eq!((g.type_, g.config), (TYPE_SOFTWARE, 1));
        assert_eq!(generic("instructions").unwrap().config, 1);
        assert!(generic("instruction").is_none());
    }
}
