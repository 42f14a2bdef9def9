//! The lookup/usage layer's error: a name, value or request the caller got wrong.

use std::fmt;

/// Something the caller asked for does not exist or cannot be done as asked.
#[derive(Debug)]
pub enum UsageError {
    /// A name matched no register.
    UnknownRegister {
        /// The name given.
        name: String,
        /// Close matches.
        suggestions: Vec<String>,
    },
    /// A register has no field of that name.
    UnknownField {
        /// The register.
        register: &'static str,
        /// The name given.
        field: String,
        /// Close matches.
        suggestions: Vec<String>,
        /// Every field name, for the message.
        fields: String,
    },
    /// The field cannot be written.
    ReadOnlyField {
        /// The register.
        register: &'static str,
        /// The field.
        field: &'static str,
        /// Its access kind.
        access: &'static str,
    },
    /// A value that could not be parsed.
    BadValue {
        /// What was given.
        text: String,
        /// What was expected.
        expected: String,
    },
    /// The part's uncore discovery table does not list a box, or disagrees with the spec
    /// about it, or cannot be read: it is not programmed unless the caller takes it
    /// (`Options::allow_mismatch`, `--allow-mismatch`).
    NotAsDiscovered {
        /// The box.
        name: String,
        /// What the table says against the spec.
        why: String,
    },
    /// A register name without an instance where one is needed.
    NeedsInstance {
        /// The name given.
        name: String,
        /// The instances there are.
        instances: String,
    },
    /// The register has no such field, so the requested setting cannot be made.
    UnsupportedField {
        /// The register.
        register: &'static str,
        /// The setting asked for.
        field: &'static str,
    },
    /// A value does not fit its field.
    FieldTooWide(pmu_regs::FieldTooWide),
    /// No such counter.
    NoSuchCounter {
        /// What was asked for (`C3 counter 9`, `IA32_PMC6`).
        counter: String,
        /// What exists.
        available: String,
    },
    /// No such box (or no such box in the model asked about).
    NoSuchBox {
        /// What was asked for (`C9`, `the QPI port P2`).
        name: String,
        /// What exists.
        available: String,
    },
    /// No such socket or CPU on this machine.
    NoSuchPlace {
        /// What was asked for (`socket 3`, `CPU 9`).
        place: String,
        /// What exists.
        available: String,
    },
    /// A box name matched no box (of the processor named, or of any).
    UnknownBox {
        /// The name given, without its processor prefix.
        name: String,
        /// The processor it was looked up in (prefix, `--processor` or detected), if any.
        processor: Option<String>,
        /// Close box names in that processor (or in any).
        suggestions: Vec<String>,
    },
    /// A processor name matched no processor.
    UnknownProcessor {
        /// The name given.
        name: String,
        /// Processors it may have meant.
        suggestions: Vec<String>,
        /// Every processor, shown when nothing is close.
        processors: String,
    },
    /// The same counter was given twice in one request.
    DuplicateCounter {
        /// The counter.
        counter: String,
    },
    /// An event's auxiliary MSR (the offcore response, load-latency or front-end register)
    /// cannot be programmed as the event needs: another event counted with it needs another
    /// value there, or the box has no such register.
    AuxMsr {
        /// The register (`MSR_OFFCORE_RSP_0`).
        register: &'static str,
        /// Why, and what to do.
        why: String,
    },
    /// A request that cannot be done as asked, in a message that says why and what to do
    /// instead (an `--event` word the grammar does not take, a box given twice).
    Refused(String),
}

impl UsageError {
    /// `name` is a layout of several registers (`W_MSR_PMON_EVT_SEL{n}`): the error lists
    /// the first six of its `addresses` by name, and `...` when there are more.
    pub fn needs_instance(name: &str, addresses: &[pmu_regs::AddressInfo]) -> Self {
        let mut names: Vec<&str> = addresses.iter().map(|a| a.name).take(6).collect();
        if addresses.len() > 6 {
            names.push("...");
        }
        UsageError::NeedsInstance {
            name: name.to_string(),
            instances: names.join(", "),
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::UnknownRegister { name, suggestions } => {
                write!(f, "no register is called {name}")?;
                if suggestions.is_empty() {
                    f.write_str("; `pmu list` shows every register")
                } else {
                    write!(f, "; did you mean {}?", suggestions.join(", "))
                }
            }
            UsageError::UnknownField { register, field, suggestions, fields } => {
                write!(f, "{register} has no field {field}")?;
                if suggestions.is_empty() {
                    write!(f, "; its fields are: {fields}")
                } else {
                    write!(f, "; did you mean {}?", suggestions.join(", "))
                }
            }
            UsageError::ReadOnlyField { register, field, access } => write!(f, "{register}.{field} is {access} (read-only) and cannot be set; leave it out"),
            UsageError::BadValue { text, expected } => write!(f, "`{text}` is not valid here: expected {expected}"),
            UsageError::NotAsDiscovered { name, why } => write!(f, "box {name} is not as this part's discovery table describes it ({why}), so it is not programmed; `pmu discover` shows the table beside the spec, and --allow-mismatch programs it as the spec says"),
            UsageError::NeedsInstance { name, instances } => write!(f, "{name} names a register layout, not one register; name an instance: {instances}"),
            UsageError::UnsupportedField { register, field } => write!(f, "{register} has no {field} field; this box cannot take that setting, so leave it out"),
            UsageError::FieldTooWide(e) => write!(f, "{e}"),
            UsageError::NoSuchCounter { counter, available } => write!(f, "there is no {counter}; available: {available}"),
            UsageError::NoSuchBox { name, available } => write!(f, "there is no box {name}; available: {available}"),
            UsageError::NoSuchPlace { place, available } => write!(f, "there is no {place}; available: {available}"),
            UsageError::UnknownBox { name, processor, suggestions } => {
                match processor {
                    Some(p) => write!(f, "{p} has no box {name}")?,
                    None => write!(f, "no processor has a box {name}")?,
                }
                if !suggestions.is_empty() {
                    write!(f, "; did you mean {}?", suggestions.join(", "))?;
                }
                match processor {
                    Some(p) => write!(f, "\n`pmu list --summary --processor {p}` lists its units"),
                    None => write!(f, "\n`pmu list --summary` lists each processor's units; prefix the processor (`{}`) to look in one", shared_box_example()),
                }
            }
            UsageError::UnknownProcessor { name, suggestions, processors } => {
                write!(f, "there is no processor {name}")?;
                if suggestions.is_empty() {
                    write!(f, "; the processors are {processors}")
                } else {
                    write!(f, "; did you mean {}?", suggestions.join(", "))
                }
            }
            UsageError::DuplicateCounter { counter } => write!(f, "{counter} is given more than once; give each counter once (one event and interval per counter)"),
            UsageError::AuxMsr { register, why } => write!(f, "auxiliary MSR {register}: {why}"),
            UsageError::Refused(message) => f.write_str(message),
        }
    }
}

/// A box name more than one processor has, prefixed with the first of them
/// (`processor:instance`), for messages that explain the prefix; any box, when no name is
/// shared. Found in the spec, so the example is always a real box.
fn shared_box_example() -> String {
    let boxes = || {
        pmu_regs::PROCESSORS.iter().flat_map(|p| {
            p.units
                .iter()
                .flat_map(move |u| u.instances.iter().map(move |i| (p.id, *i)))
        })
    };
    let shared = boxes().find(|(p, i)| boxes().any(|(q, j)| q != *p && j == *i));
    shared
        .or_else(|| boxes().next())
        .map_or_else(String::new, |(p, i)| format!("{p}:{i}"))
}

// Nothing below a usage error: the message is the whole story.
impl std::error::Error for UsageError {}
