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
    /// The settings the generated lists leave out (`..Event::BASE`): no counter mask, no
    /// invert, edge or any-thread.
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
