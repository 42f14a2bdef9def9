//! What can go wrong on the perf path, each with what to do next.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What to do about a field the PMU's format lacks ([`PerfError::FieldNotInFormat`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatWayOut {
    /// Program the register directly: `--backend raw` reaches MSR, PCI and MMIO registers.
    RawBackend,
    /// A filter field of an Arm system register (exception levels, security states): no raw
    /// path reaches it, and perf sets those bits from the event's modifiers (`:u`, `:k`).
    PerfModifiers,
}

/// An error of the perf backend.
#[derive(Debug)]
pub enum PerfError {
    /// The kernel has no PMU of that name.
    PmuAbsent {
        /// The PMU (`uncore_ha`).
        pmu: String,
        /// The directory that is missing.
        path: PathBuf,
        /// The kernel driver that provides it.
        driver: String,
    },
    /// A sysfs file could not be read.
    Sysfs {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A sysfs file does not say what the kernel writes there.
    BadSysfs {
        /// The file.
        path: PathBuf,
        /// What it says.
        text: String,
        /// What is wrong.
        problem: String,
    },
    /// A field of the selection has no place in the PMU's format.
    FieldNotInFormat {
        /// The PMU.
        pmu: String,
        /// Our field and its register (`ev_sel_ext (PCU_MSR_PMON_CTL{n})`), or the term given.
        field: String,
        /// The format fields the PMU has.
        available: String,
        /// What to do instead.
        way_out: FormatWayOut,
    },
    /// A value does not fit the PMU's format field.
    ValueTooWide {
        /// The PMU.
        pmu: String,
        /// The format field.
        field: String,
        /// The value.
        value: u64,
        /// The format (`config:24-28`).
        format: String,
    },
    /// The PMU's format field does not cover our field's bits as the spec describes them.
    FormatMismatch {
        /// The PMU.
        pmu: String,
        /// Our field.
        field: String,
        /// The kernel's format of it.
        format: String,
        /// Our field's width.
        width: u32,
    },
    /// A setting perf does not make for a counting event.
    NotForCounting {
        /// Our field (`pmi_en`).
        field: String,
    },
    /// An event in perf's syntax that does not read (`msr/tsc`, `cycles:pp`).
    BadEventSyntax {
        /// The event as given.
        text: String,
        /// What is wrong, and what to write instead.
        problem: String,
    },
    /// A name that is neither a generic event nor an event any PMU of this machine lists.
    UnknownName {
        /// The name given.
        name: String,
        /// The closest generic events and PMU events.
        suggestions: Vec<String>,
    },
    /// A generic hardware event (`cycles`) on a kernel without a core PMU to count it.
    NoHardwareEvents {
        /// The event.
        event: String,
        /// The OS error.
        source: io::Error,
    },
    /// A named event the PMU does not list.
    UnknownEvent {
        /// The PMU.
        pmu: String,
        /// The name given.
        event: String,
        /// The events it has.
        available: String,
    },
    /// `perf_event_open` was refused for lack of privilege.
    NoPermission {
        /// The event.
        event: String,
        /// The CPU it was opened on.
        cpu: Option<u32>,
        /// `/proc/sys/kernel/perf_event_paranoid`, if it could be read.
        paranoid: Option<i32>,
        /// The OS error.
        source: io::Error,
    },
    /// The counter is held by someone else (`EBUSY`).
    Busy {
        /// The event.
        event: String,
        /// The box (PMU).
        pmu: String,
        /// The OS error.
        source: io::Error,
    },
    /// The box cannot count this many events at once, or not these together.
    TooManyEvents {
        /// The event that did not fit.
        event: String,
        /// The box (PMU).
        pmu: String,
        /// How many of the box's events were opened before it.
        opened: usize,
        /// The OS error.
        source: io::Error,
    },
    /// The driver refused the event's configuration (`EINVAL`, `ENOENT`, ...).
    Rejected {
        /// The event.
        event: String,
        /// The PMU.
        pmu: String,
        /// The OS error.
        source: io::Error,
    },
    /// Reading, enabling or disabling an open counter failed.
    Io {
        /// What was being done.
        op: &'static str,
        /// The event.
        event: String,
        /// The OS error.
        source: io::Error,
    },
    /// A unit or instance the kernel has no PMU for.
    NoPmuName {
        /// What was asked for.
        what: String,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for PerfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PerfError::PmuAbsent { pmu, path, driver } => write!(
                f,
                "the kernel has no PMU {pmu} ({} does not exist): its driver, {driver}, is not loaded or does not support this processor (virtual machines expose no uncore PMUs); load it, or count through the registers with --backend raw",
                path.display()
            ),
            PerfError::Sysfs { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            PerfError::BadSysfs { path, text, problem } => write!(
                f,
                "{} says `{text}`, which is not what the kernel writes there ({problem}); is --root pointing at a sysfs tree?",
                path.display()
            ),
            PerfError::FieldNotInFormat { pmu, field, available, way_out } => {
                write!(
                    f,
                    "{pmu} has no format field for {field}, so perf cannot program it; its fields are: {available}. "
                )?;
                match way_out {
                    FormatWayOut::RawBackend => write!(f, "Leave {field} out, or use --backend raw"),
                    FormatWayOut::PerfModifiers => write!(
                        f,
                        "The register is an Arm system register, which only perf reaches: leave {field} out, and choose what is counted with perf's modifiers instead (`:u` user only, `:k` kernel only)"
                    ),
                }
            }
            PerfError::ValueTooWide { pmu, field, value, format } => write!(
                f,
                "{value:#x} does not fit {pmu}'s {field} ({format}); use a smaller value"
            ),
            PerfError::FormatMismatch { pmu, field, format, width } => write!(
                f,
                "{pmu}'s format places {field} at {format}, which does not match the {width}-bit field the spec describes, so perf would program other bits than meant; leave {field} at 0, or use --backend raw"
            ),
            PerfError::NotForCounting { field } => write!(
                f,
                "{field} asks for an overflow interrupt (sampling), which the perf backend does not program: it counts. Clear {field}, or sample with --backend raw"
            ),
            PerfError::BadEventSyntax { text, problem } => {
                write!(f, "`{text}` is not an event perf's syntax describes: {problem}")
            }
            PerfError::UnknownName { name, suggestions } => {
                write!(f, "no generic event and no PMU of this machine is called {name}")?;
                if !suggestions.is_empty() {
                    write!(f, "; did you mean {}?", suggestions.join(", "))?;
                }
                write!(f, " (`pmu list --backends` and /sys/bus/event_source/devices/*/events list the PMUs' events)")
            }
            PerfError::NoHardwareEvents { event, source } => write!(
                f,
                "{event}: this machine's kernel has no core PMU to count generic hardware events ({source}); a virtual machine often has none. Software events (cpu-clock, task-clock) and the PMUs under /sys/bus/event_source/devices can still be counted"
            ),
            PerfError::UnknownEvent { pmu, event, available } => write!(
                f,
                "{pmu} lists no event {event}; its events are: {available}. Or give format terms: event=0x..,umask=0x.."
            ),
            PerfError::NoPermission { event, cpu, paranoid, source } => {
                let on = cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default();
                let now = match paranoid {
                    Some(p) => format!("kernel.perf_event_paranoid is {p}"),
                    None => "kernel.perf_event_paranoid could not be read".into(),
                };
                write!(
                    f,
                    "not permitted to open {event}{on} ({source}): {now}, and counting a whole CPU (or an uncore box) needs it at 0 or below, or the capability CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8); run `sysctl kernel.perf_event_paranoid=0`, or give the program CAP_PERFMON"
                )
            }
            PerfError::Busy { event, pmu, source } => write!(
                f,
                "{event} cannot be counted: a counter of {pmu} is busy ({source}); another program (or the NMI watchdog) holds it; stop it and try again"
            ),
            PerfError::TooManyEvents { event, pmu, opened, source } => write!(
                f,
                "{event} does not fit in {pmu} beside the {opened} event(s) already opened there ({source}): the box has too few counters for them, or the event can only count on a counter that is taken; count fewer events on {pmu} at once"
            ),
            PerfError::Rejected { event, pmu, source } => write!(
                f,
                "{pmu} refused {event} ({source}): the driver does not accept this configuration (a bit it masks, or an event this box does not have); check the event against `pmu list --events`"
            ),
            PerfError::Io { op, event, source } => write!(
                f,
                "cannot {op} {event}: {source}; the kernel dropped the event (its CPU went offline, or its driver was unloaded): start counting again"
            ),
            PerfError::NoPmuName { what, reason } => {
                write!(f, "{what} has no perf PMU: {reason}; or count it with --backend raw")
            }
        }
    }
}

impl std::error::Error for PerfError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PerfError::Sysfs { source, .. }
            | PerfError::NoPermission { source, .. }
            | PerfError::Busy { source, .. }
            | PerfError::TooManyEvents { source, .. }
            | PerfError::Rejected { source, .. }
            | PerfError::NoHardwareEvents { source, .. }
            | PerfError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

// The base error knows no backend: this one arrives as a driver error, boxed.
impl PerfError {
    /// Whether the caller got the event wrong (a command line exits with the usage status 2):
    /// a name no PMU lists, or a syntax perf does not read. What this machine's PMUs lack
    /// (a format field, hardware events) is a runtime failure.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            PerfError::UnknownName { .. }
                | PerfError::UnknownEvent { .. }
                | PerfError::BadEventSyntax { .. }
        )
    }
}

impl From<PerfError> for crate::error::Error {
    fn from(e: PerfError) -> Self {
        crate::error::Error::Driver(Box::new(e))
    }
}
