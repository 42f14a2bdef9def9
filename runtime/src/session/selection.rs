//! What a session counts: boxes of one processor with the events of their counters (or a
//! kernel PMU's events by name), on which sockets, through which CPU. Typed, not text: a
//! command line parses its words into this (the `pmu` command's `--unit`/`--event`), a
//! program builds it directly.

use pmu_regs::{ProcessorInfo, PROCESSORS};

use crate::boxes::EventSelect;
use crate::boxes::{Boxes, PmuBox};
use crate::discovery::{BoxStatus, Joined};
use crate::error::UsageError;
use crate::perf::EventSpec;

/// Which sockets to count on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// One socket.
    One(u32),
    /// Every socket of the machine.
    All,
}

/// One box and what its general counters count: the i-th event on the i-th free counter, or,
/// with more events than counters, the events in turns ([`super::turns`]).
#[derive(Debug, Clone)]
pub struct BoxEvents {
    /// The processor's boxes the box is one of.
    pub boxes: &'static Boxes,
    /// The box.
    pub pmu_box: &'static PmuBox,
    /// The event selects, in the order of [`Selection::events`].
    pub events: Vec<EventSelect>,
}

impl BoxEvents {
    /// Whether the box's counters are reached through the socket's uncore devices, not a
    /// CPU: in PCI configuration space, or memory-mapped in a window whose base is there.
    pub fn in_pci(&self) -> bool {
        self.pmu_box.counters.iter().any(|c| {
            matches!(
                c.counter.addr.location,
                pmu_regs::Location::Pci { .. } | pmu_regs::Location::Mmio { .. }
            )
        })
    }
}

/// What is counted: boxes of the spec, or events in perf's own language.
#[derive(Debug, Clone)]
pub enum Counted {
    /// Boxes of one processor, each with its events.
    Boxes(Vec<BoxEvents>),
    /// Events as `perf stat -e` takes them (`msr/tsc/`, `cpu-clock`, `cycles:u`), one per
    /// entry of [`Selection::events`], counted through the kernel's PMUs.
    Perf(Vec<EventSpec>),
}

/// What a [`super::Session`] counts.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The boxes (or the perf events).
    pub counted: Counted,
    /// The events as the caller names them, one per event of each box: each series carries
    /// its event's name.
    pub events: Vec<String>,
    /// The sockets.
    pub sockets: Sockets,
    /// The CPU to reach MSR boxes through (instead of one of the socket's), and to open a
    /// kernel PMU without a cpumask on.
    pub cpu: Option<u32>,
    /// With [`Sockets::All`]: count a per-CPU PMU (the core PMU, a kernel PMU without a
    /// cpumask such as `msr`) on every online CPU, as `perf stat -a` does, not on one CPU
    /// per socket. Each series then names its CPU ([`super::SeriesInfo::cpu`]).
    pub every_cpu: bool,
}

impl Selection {
    /// Refuses, before anything is written, a box the part's discovery table (joined with the
    /// spec in `joined`) does not list, or one it disagrees with, unless `take_mismatch`: the
    /// spec's addresses would then program registers the part may not have where the spec
    /// says. Boxes of units without a discovery type are not checked. A session does this
    /// itself with every table the part publishes ([`super::Options::allow_mismatch`]).
    pub fn check_discovered(&self, joined: &Joined, take_mismatch: bool) -> Result<(), UsageError> {
        refuse_undiscovered(self.boxes().iter(), joined, take_mismatch)
    }

    /// `events` (named by `names`, one per event) on every box of `boxes`, on socket 0.
    /// The boxes must be of one processor and have a counter for every event: the
    /// free-running counter it selects (`event=0xff,umask=0x20`), or a general one (where
    /// there are fewer general counters than events, the session counts them in turns).
    pub fn of_boxes(
        boxes: &[(&'static Boxes, &'static PmuBox)],
        names: &[&str],
        events: &[EventSelect],
    ) -> Result<Self, UsageError> {
        if names.len() != events.len() {
            return Err(UsageError::BadValue {
                text: format!("{} names for {} events", names.len(), events.len()),
                expected: "one name per event".into(),
            });
        }
        let selection = Selection {
            counted: Counted::Boxes(
                boxes
                    .iter()
                    .map(|&(boxes, pmu_box)| BoxEvents {
                        boxes,
                        pmu_box,
                        events: events.to_vec(),
                    })
                    .collect(),
            ),
            events: names.iter().map(|n| n.to_string()).collect(),
            sockets: Sockets::One(0),
            cpu: None,
            every_cpu: false,
        };
        selection.check()?;
        Ok(selection)
    }

    /// Events in perf's language (`msr/tsc/,cpu-clock`: each entry may be a list, as
    /// `perf stat -e` takes it), on socket 0. Each event is checked to read; what it names is
    /// looked up when the session opens.
    pub fn of_perf_events(lists: &[&str]) -> Result<Self, crate::perf::PerfError> {
        let (names, specs) = crate::perf::syntax::parse_lists(lists)?.into_iter().unzip();
        Ok(Selection {
            counted: Counted::Perf(specs),
            events: names,
            sockets: Sockets::One(0),
            cpu: None,
            every_cpu: false,
        })
    }

    /// The same selection on `sockets`.
    pub fn on(mut self, sockets: Sockets) -> Self {
        self.sockets = sockets;
        self
    }

    /// The processor whose boxes these are; for perf events, the first processor of the
    /// spec, whose registers are not touched.
    pub fn processor(&self) -> &'static ProcessorInfo {
        match &self.counted {
            Counted::Boxes(b) => b.first().map_or(PROCESSORS[0], |b| b.boxes.processor),
            Counted::Perf(_) => PROCESSORS[0],
        }
    }

    /// The boxes (none for perf events).
    pub fn boxes(&self) -> &[BoxEvents] {
        match &self.counted {
            Counted::Boxes(b) => b,
            Counted::Perf(_) => &[],
        }
    }

    /// Checks what can be checked without a machine: boxes of one processor, each given
    /// once, with a counter for each of its events: the free-running counter an event
    /// selects, or a general one (a box with more events than general counters counts them
    /// in turns).
    pub fn check(&self) -> Result<(), UsageError> {
        let boxes = self.boxes();
        for (i, b) in boxes.iter().enumerate() {
            if b.boxes.processor.id != self.processor().id {
                return Err(UsageError::BadValue {
                    text: format!("{} of {}", b.pmu_box.instance, b.boxes.processor.id),
                    expected: format!(
                        "a box of {}: count one processor at a time",
                        self.processor().id
                    ),
                });
            }
            if boxes[..i]
                .iter()
                .any(|o| std::ptr::eq(o.pmu_box, b.pmu_box))
            {
                return Err(UsageError::DuplicateCounter {
                    counter: format!("box {}", b.pmu_box.instance),
                });
            }
            // A counter for each event: the free-running one it selects, or a general one
            // (in turns where there are more events than general counters). A box the
            // discovery table places gets its counters when the session places it.
            if !(b.pmu_box.table_placed() && b.pmu_box.counters.is_empty()) {
                b.pmu_box.assign(&b.events)?;
            }
        }
        Ok(())
    }
}

/// The first of `boxes` that `joined` shows missing from the part's discovery table, or
/// disagreeing with the spec, refused with what the table says against the spec (and the
/// spec's source); none with `take_mismatch`.
pub(super) fn refuse_undiscovered<'a>(
    boxes: impl Iterator<Item = &'a BoxEvents>,
    joined: &Joined,
    take_mismatch: bool,
) -> Result<(), UsageError> {
    if take_mismatch {
        return Ok(());
    }
    for b in boxes {
        let Some(j) = joined.of(b.pmu_box) else {
            continue;
        };
        let why = match &j.status {
            BoxStatus::Matching
            | BoxStatus::Unknown
            | BoxStatus::Ignored { .. }
            | BoxStatus::CountedByPart { .. }
            | BoxStatus::CorrectedCount { .. } => continue,
            BoxStatus::Missing => "the table does not list it".to_string(),
            BoxStatus::Broken { .. } => j.status.detail(),
            BoxStatus::Disagreeing(d) => d
                .iter()
                .map(|d| {
                    format!(
                        "{}: table {}, spec {} ({})",
                        d.what, d.table, d.spec, d.source
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        };
        return Err(UsageError::NotAsDiscovered {
            name: b.pmu_box.instance.to_string(),
            why,
        });
    }
    Ok(())
}

/// The box `unit` names: an instance (`C3`, `CH2`, `HA`), a unit with the instance's
/// position (`CBO3`, `IMC2`), or a single-instance unit (`PCU`, `CORE`); a name two
/// processors share takes the processor as a prefix (`xeon-7500:C3`), or means `scope`'s
/// (the processor named elsewhere or detected). A name that matches nothing is refused
/// with the closest box names of the prefix's processor (else `scope`'s, else any).
pub fn find_box(
    unit: &str,
    scope: Option<&str>,
) -> Result<(&'static Boxes, &'static PmuBox), UsageError> {
    let (prefix, name) = match unit.split_once(':') {
        Some((p, n)) => (Some(p), n),
        None => (None, unit),
    };
    if let Some(p) = prefix {
        if !PROCESSORS.iter().any(|x| x.id.eq_ignore_ascii_case(p)) {
            return Err(crate::lookup::unknown_processor(p));
        }
    }
    let found: Vec<(&'static Boxes, &'static PmuBox)> = PROCESSORS
        .iter()
        .filter(|p| prefix.is_none_or(|x| p.id.eq_ignore_ascii_case(x)))
        .map(|p| Boxes::of(p))
        .filter_map(|b| b.find(name).map(|x| (b, x)))
        .collect();
    // A name only another processor's uncore has is not a box of the scope's processor
    // (the core PMU's boxes serve every processor).
    if let (None, Some(d), [(b, x)]) = (prefix, scope, found.as_slice()) {
        if b.processor.id != d && x.scope() != pmu_regs::Scope::Cpu {
            return Err(unknown_box(name, Some(d)));
        }
    }
    let narrowed: Vec<_> = match (found.len(), scope) {
        (2.., Some(d)) => found
            .iter()
            .copied()
            .filter(|(b, _)| in_scope(b.processor.id, d))
            .collect(),
        _ => found.clone(),
    };
    match (narrowed.as_slice(), found.as_slice()) {
        ([one], _) => Ok(*one),
        (_, []) => Err(unknown_box(name, prefix.or(scope))),
        ([], _) if prefix.is_none() && scope.is_some() => Err(unknown_box(name, scope)),
        (_, several) => Err(UsageError::BadValue {
            text: unit.to_string(),
            expected: format!(
                "one box; several processors have it, so prefix one: {}",
                several
                    .iter()
                    .map(|(b, _)| format!("{}:{name}", b.processor.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// Whether a box of processor `owner` can be counted on processor `scope`: its own boxes, and
/// its core PMU's (the architectural CORE unit of every Xeon).
fn in_scope(owner: &str, scope: &str) -> bool {
    owner == scope
        || PROCESSORS
            .iter()
            .any(|p| p.id == scope && p.core_events.is_some_and(|c| c.processor == owner))
}

/// The refusal of box `name`, with the closest names among `processor`'s boxes (or every
/// processor's, when none is known or it names no processor).
fn unknown_box(name: &str, processor: Option<&str>) -> UsageError {
    let processor =
        processor.and_then(|x| PROCESSORS.iter().find(|p| p.id.eq_ignore_ascii_case(x)));
    let names: Vec<String> = PROCESSORS
        .iter()
        .filter(|p| processor.is_none_or(|x| std::ptr::eq(*p, x)))
        .flat_map(|p| Boxes::of(p).boxes.iter().flat_map(PmuBox::names))
        .collect();
    UsageError::UnknownBox {
        name: name.to_string(),
        processor: processor.map(|p| p.id.to_string()),
        suggestions: crate::lookup::suggest(name, names.iter().map(String::as_str), 3),
    }
}
