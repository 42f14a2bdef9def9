//! Core events: the events of a core PMU's counter controls (`IA32_PERFEVTSELx`), one list
//! per processor. Every processor of the spec counts its core events with the architectural
//! PMU (`processors.xml`'s `core-pmu`), so each list's events go into the same control:
//! `arch::core::Ia32PerfEvtSel::with_event` takes an event of `arch::core::Event` (the SDM's
//! architectural events) and of any processor's `core::Event` (Intel's list for it). An
//! uncore event has another type and does not compile there.

use core::fmt;
use core::marker::PhantomData;

use crate::support::AuxMsr;
#[cfg(feature = "metadata")]
use crate::support::EventInfo;

/// An event of a core PMU's counter controls, from the event list `L` marks (each list's
/// module declares its `List` and names `CoreEvent<List>` `Event`): the settings `with_event`
/// programs, and with the `metadata` feature its row in the list's table of facts.
pub struct CoreEvent<L: 'static> {
    pub(crate) code: u16,
    pub(crate) umask: u8,
    pub(crate) threshold: u8,
    pub(crate) invert: bool,
    pub(crate) edge: bool,
    pub(crate) any_thread: bool,
    pub(crate) aux: Option<AuxMsr>,
    /// Its row in the list's `EVENT_INFOS`.
    pub(crate) row: u16,
    pub(crate) list: PhantomData<fn() -> L>,
}

impl<L> CoreEvent<L> {
    /// No event: no counter mask, no invert, edge or any-thread (what `from_rows` fills an
    /// array with before it decodes the rows).
    #[allow(dead_code)] // in a spec without core event lists
    pub(crate) const BASE: Self = Self {
        code: 0,
        umask: 0,
        threshold: 0,
        invert: false,
        edge: false,
        any_thread: false,
        aux: None,
        row: 0,
        list: PhantomData,
    };

    /// The event of row `row` of a list's table (`rows`, then `experimental`).
    #[allow(dead_code)] // in a spec without core event lists
    pub(crate) const fn from_row(rows: &[EventRow], experimental: &[EventRow], row: u16) -> Self {
        let r = event_row(rows, experimental, row);
        Self {
            code: r.code,
            umask: r.umask as u8,
            threshold: r.threshold,
            invert: r.invert,
            edge: r.edge,
            any_thread: r.any_thread,
            aux: r.aux,
            row,
            list: PhantomData,
        }
    }

    /// The `N` events of a list's table (`rows`, then `experimental`): its `ALL`.
    #[allow(dead_code)] // in a spec without core event lists
    pub(crate) const fn from_rows<const N: usize>(
        rows: &[EventRow],
        experimental: &[EventRow],
    ) -> [Self; N] {
        let mut out = [Self::BASE; N];
        let mut i = 0;
        while i < N {
            out[i] = Self::from_row(rows, experimental, i as u16);
            i += 1;
        }
        out
    }

    /// Event select (wider than a byte where the control's is).
    pub const fn code(self) -> u16 {
        self.code
    }
    /// Unit mask.
    pub const fn umask(self) -> u8 {
        self.umask
    }
    /// Counter mask (the control's `threshold` role; 0: none).
    pub const fn threshold(self) -> u8 {
        self.threshold
    }
    /// Whether it sets the control's `invert` role.
    pub const fn invert(self) -> bool {
        self.invert
    }
    /// Whether it sets the control's `edge` role.
    pub const fn edge(self) -> bool {
        self.edge
    }
    /// Whether it sets the control's `any-thread` role.
    pub const fn any_thread(self) -> bool {
        self.any_thread
    }
    /// The auxiliary MSR the event needs programmed besides the control, with its value
    /// (the offcore response, load-latency or front-end register), if any: `with_event`
    /// programs the control only, so whoever writes the control writes this register too.
    pub const fn aux_msr(self) -> Option<AuxMsr> {
        self.aux
    }
}

/// One row of a generated event table (a list's or a unit's `EVENT_ROWS`): everything the
/// vendor's list says about one event, written once. The event's constant
/// (`Event::LD_BLOCKS_ADDRESS_ALIAS = Event::row(0)`), `Event::ALL` and, with the `metadata`
/// feature, the `EventInfo` table are decoded from these rows by `const fn`s. A row is written
/// `ev(name, event select, umask, counters)` (bit n of counters: counter n may count it), with
/// a builder for each setting an event has besides (`.threshold(1)`, `.invert()`,
/// `.aux(MSR_OFFCORE_RSP_0, 0x10808)`, ...). Experimental events are in a table of their own,
/// `EXPERIMENTAL_ROWS` (built with `experimental-events` only), numbered after `EVENT_ROWS`.
#[derive(Clone, Copy)]
#[allow(dead_code)] // without `metadata`, the name and counters are read by nothing
pub(crate) struct EventRow {
    pub(crate) name: &'static str,
    pub(crate) code: u16,
    pub(crate) umask: u16,
    pub(crate) counters: u32,
    pub(crate) counters_ht_off: u32,
    pub(crate) ext_sel: bool,
    pub(crate) filters: &'static str,
    pub(crate) threshold: u8,
    pub(crate) invert: bool,
    pub(crate) edge: bool,
    pub(crate) any_thread: bool,
    pub(crate) umask_ext: u32,
    pub(crate) port_mask: u16,
    pub(crate) fc_mask: u8,
    pub(crate) aux: Option<AuxMsr>,
}

/// A row of an event table: the event `name` (the vendor's), its event select `code`, `umask`
/// and the `counters` that may count it; nothing else set.
#[allow(dead_code)] // in a spec without events
pub(crate) const fn ev(name: &'static str, code: u16, umask: u16, counters: u32) -> EventRow {
    EventRow {
        name,
        code,
        umask,
        counters,
        counters_ht_off: 0,
        ext_sel: false,
        filters: "",
        threshold: 0,
        invert: false,
        edge: false,
        any_thread: false,
        umask_ext: 0,
        port_mask: 0,
        fc_mask: 0,
        aux: None,
    }
}

/// An event table and the typed constant of each of its events, from one list of rows:
/// `event_table! { TABLE, Index, first row, "doc suffix", counters, ht_off; IDENT = ev(name,
/// event select, umask).builder(..), .. }` makes `const TABLE: &[EventRow]` of the rows and, in
/// an `impl Event`, `pub const IDENT: Event` for each, decoded from its row (`Event::row`), its
/// doc the vendor's name from the row (and the suffix). The name and settings are written once,
/// in the row; the counters that may count an event (and those without Hyper-Threading) are
/// the table's, written once for it, unless the row says otherwise (`.on(..)`, `.ht_off(..)`).
/// The row number is the row's place, counted by the variants of the private enum `Index`
/// (from `first`: experimental rows are numbered after `EVENT_ROWS`).
macro_rules! event_table {
    ($(#[$meta:meta])* $table:ident, $index:ident, $first:expr, $suffix:literal, $counters:expr, $ht_off:expr;
     $($id:ident = ev($name:literal, $code:expr, $umask:expr) $(.$set:ident($($val:expr),*))*),* $(,)?) => {
        $(#[$meta])*
        const $table: &[$crate::core_events::EventRow] = &[$(
            $crate::core_events::ev($name, $code, $umask, $counters).ht_off($ht_off)$(.$set($($val),*))*
        ),*];
        /// Each row's number, in the order of the table.
        #[allow(non_camel_case_types, dead_code, clippy::upper_case_acronyms)]
        #[repr(i32)]
        enum $index {
            _BeforeFirstRow = $first as i32 - 1,
            $($id),*
        }
        impl Event {
            $(#[doc = concat!("`", $name, "`", $suffix, ".")]
            pub const $id: Event = Event::row($index::$id as u16);)*
        }
    };
}
#[allow(unused_imports)] // in a spec without events
pub(crate) use event_table;

/// The settings a row adds to `ev(..)`, one builder each (a row names only those it has).
#[allow(dead_code)] // each table uses some
impl EventRow {
    /// The counters that may count it without Hyper-Threading (Intel's `CounterHTOff`).
    pub(crate) const fn ht_off(self, counters: u32) -> Self {
        Self { counters_ht_off: counters, ..self }
    }
    /// The counters that may count it, where they are not its table's.
    pub(crate) const fn on(self, counters: u32) -> Self {
        Self { counters, ..self }
    }
    /// Needs the event-select extension bit.
    pub(crate) const fn ext_sel(self) -> Self {
        Self { ext_sel: true, ..self }
    }
    /// The filter fields it uses, as the vendor names them.
    pub(crate) const fn filters(self, filters: &'static str) -> Self {
        Self { filters, ..self }
    }
    /// Its counter mask (the control's `threshold` role).
    pub(crate) const fn threshold(self, threshold: u8) -> Self {
        Self { threshold, ..self }
    }
    /// Sets the control's `invert` role.
    pub(crate) const fn invert(self) -> Self {
        Self { invert: true, ..self }
    }
    /// Sets the control's `edge` role.
    pub(crate) const fn edge(self) -> Self {
        Self { edge: true, ..self }
    }
    /// Sets the control's `any-thread` role.
    pub(crate) const fn any_thread(self) -> Self {
        Self { any_thread: true, ..self }
    }
    /// Its unit-mask extension (Intel's UMaskExt).
    pub(crate) const fn umask_ext(self, umask_ext: u32) -> Self {
        Self { umask_ext, ..self }
    }
    /// Its port mask (Intel's PortMask).
    pub(crate) const fn port_mask(self, port_mask: u16) -> Self {
        Self { port_mask, ..self }
    }
    /// Its traffic-class mask (Intel's FCMask).
    pub(crate) const fn fc_mask(self, fc_mask: u8) -> Self {
        Self { fc_mask, ..self }
    }
    /// The auxiliary MSR `msr` (its name and address; the module's constant of it) holding
    /// `value` while the event counts.
    pub(crate) const fn aux(self, msr: AuxMsr, value: u64) -> Self {
        Self {
            aux: Some(AuxMsr { value, ..msr }),
            ..self
        }
    }
}

/// Row `n` of a table written as `rows` then `experimental` (numbered after `rows`).
#[allow(dead_code)] // in a spec without events
pub(crate) const fn event_row(rows: &[EventRow], experimental: &[EventRow], n: u16) -> EventRow {
    let n = n as usize;
    if n < rows.len() {
        rows[n]
    } else {
        experimental[n - rows.len()]
    }
}

/// The facts of `N` rows of `rows` from row `from` (`experimental`: rows of an experimental
/// table): a chunk of a table's `EVENT_INFOS`. The tables are decoded in chunks of at most 64
/// rows, each its own constant: rustc's code generation takes a time that grows with the square
/// of the rows of one constant (3 s for Cascade Lake's 1,800 core events in one).
#[cfg(feature = "metadata")]
#[allow(dead_code)] // in a spec without events
pub(crate) const fn event_infos<const N: usize>(
    rows: &[EventRow],
    from: usize,
    experimental: bool,
) -> [EventInfo; N] {
    let mut out = [EventInfo::BASE; N];
    let mut i = 0;
    while i < N {
        let r = rows[from + i];
        out[i] = EventInfo {
            name: r.name,
            code: r.code,
            umask: r.umask,
            ext_sel: r.ext_sel,
            counters: r.counters,
            counters_ht_off: r.counters_ht_off,
            filters: r.filters,
            threshold: r.threshold,
            invert: r.invert,
            edge: r.edge,
            any_thread: r.any_thread,
            umask_ext: r.umask_ext,
            port_mask: r.port_mask,
            fc_mask: r.fc_mask,
            experimental,
            aux: r.aux,
        };
        i += 1;
    }
    out
}

/// A reference to each of the `N` facts of `chunks`, in order: the `&[&EventInfo]` shape of
/// `EVENT_INFOS`.
#[cfg(feature = "metadata")]
#[allow(dead_code)] // in a spec without events
pub(crate) const fn event_info_refs<const N: usize>(
    chunks: &[&'static [EventInfo]],
) -> [&'static EventInfo; N] {
    let mut out = [&EventInfo::BASE; N];
    let (mut c, mut i) = (0, 0);
    while c < chunks.len() {
        let mut j = 0;
        while j < chunks[c].len() {
            out[i] = &chunks[c][j];
            i += 1;
            j += 1;
        }
        c += 1;
    }
    out
}

/// A core event list: the marker type `L` of [`CoreEvent<L>`], with its table of facts.
#[cfg(feature = "metadata")]
pub trait EventList: 'static {
    /// The list's events, in the order of its `ALL`.
    const EVENT_INFOS: &'static [&'static EventInfo];
}

#[cfg(feature = "metadata")]
impl<L: EventList> CoreEvent<L> {
    /// The event's facts.
    pub const fn info(self) -> &'static EventInfo {
        L::EVENT_INFOS[self.row as usize]
    }

    /// Whether counter `n` may count it.
    pub const fn can_count_on(self, n: u32) -> bool {
        self.info().can_count_on(n)
    }
}

impl<L> Clone for CoreEvent<L> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<L> Copy for CoreEvent<L> {}

impl<L> PartialEq for CoreEvent<L> {
    fn eq(&self, other: &Self) -> bool {
        self.row == other.row
    }
}

impl<L> Eq for CoreEvent<L> {}

/// The event's name (with the `metadata` feature), or its event select and umask.
#[cfg(feature = "metadata")]
impl<L: EventList> fmt::Debug for CoreEvent<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CoreEvent").field(&self.info().name).finish()
    }
}

/// The event's name (with the `metadata` feature), or its event select and umask.
#[cfg(not(feature = "metadata"))]
impl<L> fmt::Debug for CoreEvent<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CoreEvent({:#04x}, umask {:#04x})", self.code, self.umask)
    }
}

/// A processor's own event list for a unit of its core PMU.
#[cfg(feature = "metadata")]
#[derive(Debug)]
pub struct CoreEventsInfo {
    /// The processor whose unit counts them (`architectural`).
    pub processor: &'static str,
    /// That unit (`CORE`).
    pub unit: &'static str,
    /// The events.
    pub events: &'static [&'static EventInfo],
}
