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
