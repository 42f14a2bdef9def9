//! The kernel's generic events (`cycles`, `cpu-clock`, ...), defined by `type` and `config`
//! rather than by a PMU's format: what perf's event language names and what the encoder
//! accepts as a term of the software PMU, which lists no events.

/// `perf_event_attr.type` of the kernel's generic hardware events (`PERF_TYPE_HARDWARE`).
pub const TYPE_HARDWARE: u32 = 0;
/// `perf_event_attr.type` of the kernel's software events (`PERF_TYPE_SOFTWARE`), also the
/// `type` of the `software` PMU in sysfs.
pub const TYPE_SOFTWARE: u32 = 1;

/// A generic event the kernel defines by `type` and `config` rather than by a PMU's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generic {
    /// The name perf takes (`cycles`); the first of a row's aliases is the one perf prints.
    pub name: &'static str,
    /// [`TYPE_HARDWARE`] or [`TYPE_SOFTWARE`].
    pub type_: u32,
    /// `perf_event_attr.config`: `PERF_COUNT_HW_*` or `PERF_COUNT_SW_*`.
    pub config: u64,
}

const fn hw(name: &'static str, config: u64) -> Generic {
    Generic {
        name,
        type_: TYPE_HARDWARE,
        config,
    }
}

const fn sw(name: &'static str, config: u64) -> Generic {
    Generic {
        name,
        type_: TYPE_SOFTWARE,
        config,
    }
}

/// The generic events and their aliases, from the kernel's `enum perf_hw_id` and
/// `enum perf_sw_ids` (include/uapi/linux/perf_event.h) and the names perf's parser gives
/// them (tools/perf/util/parse-events.c, `event_symbols_hw`/`event_symbols_sw`).
pub const GENERIC: &[Generic] = &[
    hw("cycles", 0),
    hw("cpu-cycles", 0),
    hw("instructions", 1),
    hw("cache-references", 2),
    hw("cache-misses", 3),
    hw("branches", 4),
    hw("branch-instructions", 4),
    hw("branch-misses", 5),
    hw("bus-cycles", 6),
    hw("stalled-cycles-frontend", 7),
    hw("idle-cycles-frontend", 7),
    hw("stalled-cycles-backend", 8),
    hw("idle-cycles-backend", 8),
    hw("ref-cycles", 9),
    sw("cpu-clock", 0),
    sw("task-clock", 1),
    sw("page-faults", 2),
    sw("faults", 2),
    sw("context-switches", 3),
    sw("cs", 3),
    sw("cpu-migrations", 4),
    sw("migrations", 4),
    sw("minor-faults", 5),
    sw("major-faults", 6),
    sw("alignment-faults", 7),
    sw("emulation-faults", 8),
    sw("dummy", 9),
];

/// The generic event called `name` (case-insensitive, as perf reads them).
pub fn generic(name: &str) -> Option<&'static Generic> {
    GENERIC.iter().find(|g| g.name.eq_ignore_ascii_case(name))
}
