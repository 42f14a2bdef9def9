//! Core events: the events of a core PMU's counter controls (`IA32_PERFEVTSELx`), one list
//! per processor. Every processor of the spec counts its core events with the architectural
//! PMU (`processors.xml`'s `core-pmu`), so each list's events go into the same control:
//! `arch::core::Ia32PerfEvtSel::with_event` takes an event of `arch::core::Event` (the SDM's
//! architectural events) and of any processor's `core::Event` (Intel's list for it). An
//! uncore event has another type and does not compile there.

use core::fmt;
use core::marker::PhantomData;

use crate::support::EventInfo;

/// An event of a core PMU's counter controls, from the event list `L` marks (each list's
/// module declares its `List` and names `CoreEvent<List>` `Event`).
pub struct CoreEvent<L: 'static>(&'static EventInfo, PhantomData<fn() -> L>);

impl<L> CoreEvent<L> {
    /// The event with these facts (for the generated lists).
    pub(crate) const fn new(info: &'static EventInfo) -> Self {
        Self(info, PhantomData)
    }

    /// The event's facts.
    pub const fn info(self) -> &'static EventInfo {
        self.0
    }

    /// Whether counter `n` may count it.
    pub const fn can_count_on(self, n: u32) -> bool {
        self.0.can_count_on(n)
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
        self.0 == other.0
    }
}

impl<L> Eq for CoreEvent<L> {}

impl<L> fmt::Debug for CoreEvent<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CoreEvent").field(&self.0.name).finish()
    }
}

/// A processor's own event list for a unit of its core PMU.
#[derive(Debug)]
pub struct CoreEventsInfo {
    /// The processor whose unit counts them (`architectural`).
    pub processor: &'static str,
    /// That unit (`CORE`).
    pub unit: &'static str,
    /// The events.
    pub events: &'static [&'static EventInfo],
}

/// A core event list: `List`, `Event` (= `CoreEvent<List>`) with a constant per event, `ALL`
/// and `EVENT_INFOS`; with a control and its setters by role (event, umask, threshold,
/// invert, edge, any-thread), `with_event` on that control for an event of any list.
macro_rules! core_events {
    ([$($ctl:ident { $ev:ident, $umask:ident, $thr:ident, $inv:ident, $edge:ident, $any:ident }),*], [$($ident:ident = $name:literal $code:literal $umask_v:literal $counters:literal $threshold:literal $invert:literal $edge_v:literal $any_v:literal),* $(,)?]) => {
        /// Marks this module's event list: its events are [`Event`]s, `CoreEvent<List>`.
        pub enum List {}

        /// An event of this list. Any core event list's events go into the core PMU's counter
        /// control (`with_event`); an uncore event does not compile there.
        pub type Event = $crate::core_events::CoreEvent<List>;

        impl Event {
            $(
                #[doc = concat!("`", $name, "`: event select ", stringify!($code), ", umask ", stringify!($umask_v), ", counter mask ", stringify!($threshold), ", invert ", stringify!($invert), ", edge ", stringify!($edge_v), ", any thread ", stringify!($any_v), ", counters ", stringify!($counters), " (bit n: counter n).")]
                pub const $ident: Event = $crate::core_events::CoreEvent::new(&$crate::support::EventInfo { name: $name, code: $code, umask: $umask_v, ext_sel: false, counters: $counters, filters: "", threshold: $threshold, invert: $invert, edge: $edge_v, any_thread: $any_v });
            )*
            /// Every event of the list.
            pub const ALL: &'static [Event] = &[$(Event::$ident),*];
        }

        const EVENT_INFOS: &[&$crate::support::EventInfo] = &[$(Event::$ident.info()),*];

        $(
            impl $ctl {
                /// This value set to count `event`, an event of any core event list: its event
                /// select and umask, and the counter mask, invert, edge-detect and any-thread
                /// settings the list gives it (each set, to 0 where the event has none).
                #[inline]
                pub const fn with_event<L>(self, event: $crate::core_events::CoreEvent<L>) -> Self {
                    let e = event.info();
                    self.$ev(e.code).$umask(e.umask).$thr(e.threshold).$inv(e.invert).$edge(e.edge).$any(e.any_thread)
                }
            }
        )*
    };
}
