
//! Derived metrics: each processor's metrics as data (`<processor>::metrics::METRICS`) and a
//! `no_std` evaluator for their formulas.
//!
//! A formula is stored in postfix form ([`Op`]): operands push a value, operators pop theirs.
//! [`evaluate`] never panics and never returns an infinity or a NaN: a division by zero, a
//! missing count or constant, or an ill-formed formula gives `None` ("n/a"). Both branches of
//! `x if cond else y` are evaluated, but only the chosen one decides the result, so a
//! division by zero in the branch not taken does not make the metric n/a.
//!
//! ```
//! # #[cfg(feature = "xeon-e5-2600-v3")] {
//! use pmu_regs::metrics::{for_processor, Constants};
//!
//! let m = for_processor("xeon-e5-2600-v3")
//!     .iter()
//!     .find(|m| m.name == "memory_bandwidth_read")
//!     .unwrap();
//! let constants = Constants { duration_seconds: Some(2.0), ..Constants::NONE };
//! // 31,250,000 CAS reads of 64 bytes in 2 s: 1,000 MB/s.
//! assert_eq!(m.evaluate(&[Some(31_250_000.0)], &constants), Some(1000.0));
//! // No count, or an interval of zero seconds: n/a.
//! assert_eq!(m.evaluate(&[None], &constants), None);
//! let zero = Constants { duration_seconds: Some(0.0), ..Constants::NONE };
//! assert_eq!(m.evaluate(&[Some(1.0)], &zero), None);
//! # }
//! ```

/// The deepest evaluation stack a formula may need (codegen refuses deeper formulas).
pub const MAX_STACK: usize = 64;

/// A value a formula takes from the machine or the measurement, not from a counter. The
/// names are Intel's, as the metric files write them ([`Constant::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Constant {
    /// `SYSTEM_TSC_FREQ`: the TSC frequency in Hz.
    SystemTscFreq,
    /// `SOCKET_COUNT`: sockets in the system.
    SocketCount,
    /// `CORES_PER_SOCKET`: cores per socket.
    CoresPerSocket,
    /// `CHAS_PER_SOCKET`: CHA boxes per socket.
    ChasPerSocket,
    /// `THREADS_PER_CORE`: hardware threads per core.
    ThreadsPerCore,
    /// `HYPERTHREADING_ON`: 1 when Hyper-Threading is on, else 0.
    HyperthreadingOn,
    /// `CPU_COUNT`: logical CPUs in the system.
    CpuCount,
    /// `DURATIONTIMEINSECONDS`: the measurement interval in seconds.
    DurationSeconds,
    /// `DURATIONTIMEINMILLISECONDS`: the measurement interval in milliseconds.
    DurationMilliseconds,
}

impl Constant {
    /// Every constant.
    pub const ALL: [Constant; 9] = [
        Constant::SystemTscFreq,
        Constant::SocketCount,
        Constant::CoresPerSocket,
        Constant::ChasPerSocket,
        Constant::ThreadsPerCore,
        Constant::HyperthreadingOn,
        Constant::CpuCount,
        Constant::DurationSeconds,
        Constant::DurationMilliseconds,
    ];

    /// The name a formula writes (`SYSTEM_TSC_FREQ`).
    pub const fn name(self) -> &'static str {
        match self {
            Constant::SystemTscFreq => "SYSTEM_TSC_FREQ",
            Constant::SocketCount => "SOCKET_COUNT",
            Constant::CoresPerSocket => "CORES_PER_SOCKET",
            Constant::ChasPerSocket => "CHAS_PER_SOCKET",
            Constant::ThreadsPerCore => "THREADS_PER_CORE",
            Constant::HyperthreadingOn => "HYPERTHREADING_ON",
            Constant::CpuCount => "CPU_COUNT",
            Constant::DurationSeconds => "DURATIONTIMEINSECONDS",
            Constant::DurationMilliseconds => "DURATIONTIMEINMILLISECONDS",
        }
    }
}

/// The constants' values for one evaluation; `None` where unknown (a metric that reads an
/// unknown constant is n/a).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constants {
    /// The TSC frequency in Hz.
    pub tsc_hz: Option<f64>,
    /// Sockets in the system.
    pub socket_count: Option<f64>,
    /// Cores per socket.
    pub cores_per_socket: Option<f64>,
    /// CHA boxes per socket.
    pub chas_per_socket: Option<f64>,
    /// Hardware threads per core.
    pub threads_per_core: Option<f64>,
    /// Logical CPUs in the system.
    pub cpu_count: Option<f64>,
    /// The interval the counts were taken over, in seconds.
    pub duration_seconds: Option<f64>,
}

impl Constants {
    /// Nothing known.
    pub const NONE: Constants = Constants {
        tsc_hz: None,
        socket_count: None,
        cores_per_socket: None,
        chas_per_socket: None,
        threads_per_core: None,
        cpu_count: None,
        duration_seconds: None,
    };

    /// The value of `c`, if known. `HYPERTHREADING_ON` is 1 when there are two or more
    /// threads per core.
    pub fn get(&self, c: Constant) -> Option<f64> {
        match c {
            Constant::SystemTscFreq => self.tsc_hz,
            Constant::SocketCount => self.socket_count,
            Constant::CoresPerSocket => self.cores_per_socket,
            Constant::ChasPerSocket => self.chas_per_socket,
            Constant::ThreadsPerCore => self.threads_per_core,
            Constant::HyperthreadingOn => self
                .threads_per_core
                .map(|t| if t > 1.0 { 1.0 } else { 0.0 }),
            Constant::CpuCount => self.cpu_count,
            Constant::DurationSeconds => self.duration_seconds,
            Constant::DurationMilliseconds => self.duration_seconds.map(|s| s * 1000.0),
        }
    }
}

/// One step of a formula in postfix form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// Push a number.
    Num(f64),
    /// Push the count of the metric's event n ([`MetricInfo::events`]).
    Event(u8),
    /// Push a constant.
    Const(Constant),
    /// Pop x, push -x.
    Neg,
    /// Pop b, a; push a + b.
    Add,
    /// Pop b, a; push a - b.
    Sub,
    /// Pop b, a; push a * b.
    Mul,
    /// Pop b, a; push a / b (n/a when b is 0).
    Div,
    /// Pop b, a; push the smaller.
    Min,
    /// Pop b, a; push the larger.
    Max,
    /// Pop b, a; push 1 if a > b, else 0.
    Gt,
    /// Pop b, a; push 1 if a < b, else 0.
    Lt,
    /// Pop b, a; push 1 if a >= b, else 0.
    Ge,
    /// Pop b, a; push 1 if a <= b, else 0.
    Le,
    /// Pop otherwise, then, cond; push then if cond is not 0, else otherwise.
    Select,
}

/// Where a metric is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricScope {
    /// Per logical CPU: it reads core events only.
    Cpu,
    /// Per socket: the socket's boxes of each unit (and its CPUs, for core events) summed.
    Socket,
}

impl MetricScope {
    /// `cpu` or `socket`.
    pub const fn as_str(self) -> &'static str {
        match self {
            MetricScope::Cpu => "cpu",
            MetricScope::Socket => "socket",
        }
    }
}

/// An event a metric reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricEvent {
    /// The formula's name for it (`a`).
    pub alias: &'static str,
    /// The event's name in the processor's lists (`UNC_M_CAS_COUNT.RD`).
    pub name: &'static str,
    /// The unit that counts it (`IMC`; `CORE` for a core event).
    pub unit: &'static str,
    /// Counter mask the metric adds (0: the event's own).
    pub threshold: u8,
    /// Invert the counter mask.
    pub invert: bool,
    /// Count edges.
    pub edge: bool,
    /// Counted by a counter, or read from the top-down registers.
    pub read: MetricRead,
}

/// How a [`MetricEvent`]'s value is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricRead {
    /// Counted by a general-purpose or uncore counter: the event's count.
    Counted,
    /// `TOPDOWN.SLOTS`: fixed counter 3 (MSR 0x30C) over the interval.
    Slots,
    /// `PERF_METRICS.<CATEGORY>`: the slots of one top-down category, byte `n` of
    /// IA32_PERF_METRICS (MSR 0x329); its value is [`topdown_slots`] of the interval's slots
    /// and the register.
    SlotsShare(u8),
}

impl MetricRead {
    /// The event's value from an interval's fixed counter 3 count (`slots`) and
    /// IA32_PERF_METRICS (`perf_metrics`), both started from 0; `None` for a counted event.
    pub fn topdown_value(self, slots: u64, perf_metrics: u64) -> Option<u64> {
        match self {
            MetricRead::Counted => None,
            MetricRead::Slots => Some(slots),
            MetricRead::SlotsShare(n) => Some(topdown_slots(slots, perf_metrics, n)),
        }
    }
}

/// The slots of the top-down category in byte `byte` of IA32_PERF_METRICS: `slots` x the
/// byte / 0xFF, rounded down, as Linux computes it (arch/x86/events/intel/core.c,
/// icl_get_metrics_event_value). A byte above 7 gives 0.
pub fn topdown_slots(slots: u64, perf_metrics: u64, byte: u8) -> u64 {
    if byte > 7 {
        return 0;
    }
    let share = (perf_metrics >> (u32::from(byte) * 8)) & 0xff;
    // slots < 2^64 and share < 2^8: the product fits 128 bits, the quotient 64.
    (u128::from(slots) * u128::from(share) / 0xff) as u64
}

/// A derived metric: a formula over a processor's events and constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricInfo {
    /// Intel's name (`memory_bandwidth_read`, `Frontend_Bound`).
    pub name: &'static str,
    /// What it measures (empty where the spec gives no description).
    #[cfg(feature = "metadata")]
    pub description: &'static str,
    /// Unit of measure (`MB/sec`, `percent`; empty for a plain ratio).
    pub unit: &'static str,
    /// Category (`BW, MC`, `TMA`).
    pub category: &'static str,
    /// Groups (`TmaL1`, `MemoryBW`), as `perf stat -M` selects them.
    pub groups: &'static [&'static str],
    /// Top-down level (1 outside the hierarchy).
    pub level: u8,
    /// The metric above it in the top-down hierarchy.
    pub parent: Option<&'static str>,
    /// Per CPU or per socket.
    pub scope: MetricScope,
    /// The events it reads; `Op::Event(n)` is `events[n]`.
    pub events: &'static [MetricEvent],
    /// The formula as the spec writes it.
    #[cfg(feature = "metadata")]
    pub formula: &'static str,
    /// The formula in postfix form.
    pub ops: &'static [Op],
    /// The metrics its threshold reads, by name; `Op::Event(n)` of
    /// [`MetricInfo::threshold`] is `threshold_metrics[n]`.
    pub threshold_metrics: &'static [&'static str],
    /// When the value calls for attention (Intel's `Threshold`): a condition over
    /// [`MetricInfo::threshold_metrics`] in postfix form, non-zero when over it; empty for a
    /// metric without one.
    pub threshold: &'static [Op],
    /// The threshold as the spec writes it (empty for none).
    #[cfg(feature = "metadata")]
    pub threshold_formula: &'static str,
}

impl MetricInfo {
    /// The metric's value for `counts` (one per event, in [`MetricInfo::events`] order) and
    /// `constants`; `None` when it is not defined (see [`evaluate`]).
    pub fn evaluate(&self, counts: &[Option<f64>], constants: &Constants) -> Option<f64> {
        evaluate(self.ops, counts, constants)
    }

    /// Whether the metric is over its threshold, given `value_of` each metric the threshold
    /// reads (by name): `None` without a threshold, or where a value it reads is missing.
    pub fn over_threshold(&self, value_of: impl Fn(&str) -> Option<f64>) -> Option<bool> {
        if self.threshold.is_empty() {
            return None;
        }
        let n = self.threshold_metrics.len();
        if n > MAX_STACK {
            return None;
        }
        let mut values = [None; MAX_STACK];
        for (v, m) in values.iter_mut().zip(self.threshold_metrics) {
            *v = value_of(m);
        }
        evaluate(self.threshold, &values[..n], &Constants::NONE).map(|v| v != 0.0)
    }

    /// Whether `selector` names it: its name, category or one of its groups, in any case.
    pub fn is_selected_by(&self, selector: &str) -> bool {
        self.name.eq_ignore_ascii_case(selector)
            || self.category.eq_ignore_ascii_case(selector)
            || self.groups.iter().any(|g| g.eq_ignore_ascii_case(selector))
    }
}

/// A metric of a generated table (`<processor>::metrics::METRICS`), each fact written once:
/// `metric(name, unit, category, scope)`, then `.computed_as(text, postfix ops)`,
/// `.reads(events)` and whichever of `.about(description)`, `.in_groups(..)`, `.at_level(n)`,
/// `.child_of(name)` and `.threshold_when(metrics, text, ops)` it has. The texts are kept with
/// the `metadata` feature only. (The builders' names differ from the fields' so that a link to
/// a field stays one.)
#[allow(dead_code)] // in a spec without metrics
pub(crate) const fn metric(
    name: &'static str,
    unit: &'static str,
    category: &'static str,
    scope: MetricScope,
) -> MetricInfo {
    MetricInfo {
        name,
        #[cfg(feature = "metadata")]
        description: "",
        unit,
        category,
        groups: &[],
        level: 1,
        parent: None,
        scope,
        events: &[],
        #[cfg(feature = "metadata")]
        formula: "",
        ops: &[],
        threshold_metrics: &[],
        threshold: &[],
        #[cfg(feature = "metadata")]
        threshold_formula: "",
    }
}

/// What a generated table adds to [`metric`]'s metric, one builder a fact.
#[allow(dead_code, unused_variables)] // each table uses some; the texts without `metadata`
impl MetricInfo {
    /// Its formula, as the spec writes it (`text`) and in postfix form.
    pub(crate) const fn computed_as(self, text: &'static str, ops: &'static [Op]) -> Self {
        Self {
            #[cfg(feature = "metadata")]
            formula: text,
            ops,
            ..self
        }
    }
    /// The events it reads (`Op::Event(n)` is the n-th).
    pub(crate) const fn reads(self, events: &'static [MetricEvent]) -> Self {
        Self { events, ..self }
    }
    /// What it measures.
    pub(crate) const fn about(self, description: &'static str) -> Self {
        Self {
            #[cfg(feature = "metadata")]
            description,
            ..self
        }
    }
    /// Its groups.
    pub(crate) const fn in_groups(self, groups: &'static [&'static str]) -> Self {
        Self { groups, ..self }
    }
    /// Its top-down level.
    pub(crate) const fn at_level(self, level: u8) -> Self {
        Self { level, ..self }
    }
    /// The metric above it in the top-down hierarchy.
    pub(crate) const fn child_of(self, parent: &'static str) -> Self {
        Self {
            parent: Some(parent),
            ..self
        }
    }
    /// Its threshold: the metrics it reads, the condition as the spec writes it (`text`) and
    /// in postfix form.
    pub(crate) const fn threshold_when(
        self,
        metrics: &'static [&'static str],
        text: &'static str,
        ops: &'static [Op],
    ) -> Self {
        Self {
            threshold_metrics: metrics,
            #[cfg(feature = "metadata")]
            threshold_formula: text,
            threshold: ops,
            ..self
        }
    }
}

/// An event a generated metric reads: `read(alias, event name, unit)`, counted as the list
/// defines it, with a builder for each setting the metric adds.
#[allow(dead_code)] // in a spec without metrics
pub(crate) const fn read(alias: &'static str, name: &'static str, unit: &'static str) -> MetricEvent {
    MetricEvent {
        alias,
        name,
        unit,
        threshold: 0,
        invert: false,
        edge: false,
        read: MetricRead::Counted,
    }
}

/// An event of the core PMU's unit (`CORE`) a generated metric reads: `read(alias, event name,
/// "CORE")`, the unit written once here.
#[allow(dead_code)] // in a spec without metrics
pub(crate) const fn read_core(alias: &'static str, name: &'static str) -> MetricEvent {
    read(alias, name, "CORE")
}

/// The settings a generated metric adds to an event it reads.
#[allow(dead_code)] // each table uses some
impl MetricEvent {
    /// A counter mask.
    pub(crate) const fn cmask(self, threshold: u8) -> Self {
        Self { threshold, ..self }
    }
    /// Invert the counter mask.
    pub(crate) const fn inv(self) -> Self {
        Self {
            invert: true,
            ..self
        }
    }
    /// Count edges.
    pub(crate) const fn edge_detect(self) -> Self {
        Self { edge: true, ..self }
    }
    /// Read from the top-down registers, not counted.
    pub(crate) const fn via(self, read: MetricRead) -> Self {
        Self { read, ..self }
    }
}

/// A finite value, or none.
fn finite(x: f64) -> Option<f64> {
    if x.is_finite() {
        Some(x)
    } else {
        None
    }
}

/// Evaluates a postfix formula: `None` on a division by zero, a missing count or constant, a
/// result that is not finite, or ops that are not a well-formed formula. Never panics.
pub fn evaluate(ops: &[Op], counts: &[Option<f64>], constants: &Constants) -> Option<f64> {
    let mut stack: [Option<f64>; MAX_STACK] = [None; MAX_STACK];
    let mut len = 0usize;
    for op in ops {
        let arity = match op {
            Op::Num(_) | Op::Event(_) | Op::Const(_) => 0,
            Op::Neg => 1,
            Op::Select => 3,
            _ => 2,
        };
        if len < arity || (arity == 0 && len == MAX_STACK) {
            return None;
        }
        len -= arity;
        let args = &stack[len..len + arity];
        let value = match *op {
            Op::Num(n) => finite(n),
            Op::Event(i) => counts.get(usize::from(i)).copied().flatten().and_then(finite),
            Op::Const(c) => constants.get(c).and_then(finite),
            Op::Neg => args[0].map(|x| -x),
            Op::Select => match args[0] {
                Some(c) if c != 0.0 => args[1],
                Some(_) => args[2],
                None => None,
            },
            ref binary => match (args[0], args[1]) {
                (Some(a), Some(b)) => binary_op(binary, a, b),
                _ => None,
            },
        };
        stack[len] = value;
        len += 1;
    }
    if len == 1 {
        stack[0]
    } else {
        None
    }
}

/// `a op b` for a two-operand op, finite or none.
fn binary_op(op: &Op, a: f64, b: f64) -> Option<f64> {
    let flag = |c: bool| Some(if c { 1.0 } else { 0.0 });
    match op {
        Op::Add => finite(a + b),
        Op::Sub => finite(a - b),
        Op::Mul => finite(a * b),
        Op::Div if b == 0.0 => None,
        Op::Div => finite(a / b),
        Op::Min => Some(a.min(b)),
        Op::Max => Some(a.max(b)),
        Op::Gt => flag(a > b),
        Op::Lt => flag(a < b),
        Op::Ge => flag(a >= b),
        Op::Le => flag(a <= b),
        _ => None,
    }
}
