//! Counting in turns: a box given more events than it has general counters counts them in
//! turns, as perf multiplexes a PMU's events. Turn `t` puts events `t*k .. t*k + k` (modulo
//! the `n` events) on the box's `k` counters, so over `n / gcd(n, k)` turns every event is
//! on a counter equally often. Each event keeps the events it counted while on a counter and
//! the time it was on one; a count is scaled by the time enabled over the time running, and
//! the running fraction is reported beside it (perf's `time_enabled`/`time_running`).
//!
//! An event its list keeps to some counters (an occupancy event only on counter 0) takes
//! one of those within its turn: the turn's events are placed on the counters as
//! [`crate::counters::place`] places them. Where a window's events have no such placement,
//! or fewer events than counters cannot all have one at once (three events kept to two
//! counters, two that need one auxiliary MSR with different values), the events take turns
//! in groups that can (`groups`) instead of windows.
//!
//! Every control value of every turn is made (and so checked) when the session opens, before
//! the first write; a rotation writes only those values, onto counters the session already
//! programmed, so closing the session still puts back every register as it was.

use std::time::Duration;

use crate::boxes::EventSelect;
use crate::counters::delta;
use crate::counters::Counting;
use crate::error::{Result, UsageError};
use crate::machine::Machine;

use super::{Reading, Times};

/// The turns of one box's events.
pub(super) struct Turns {
    /// The counters the events take turns on, in slot order.
    counters: Vec<u32>,
    /// Their widths, for a wrap-correct count across a turn.
    widths: Vec<u32>,
    /// Per event, its control value on each slot's counter.
    controls: Vec<Vec<u64>>,
    /// The events, for the auxiliary MSRs each turn writes.
    sels: Vec<EventSelect>,
    /// Per distinct turn (as many as come before the first comes round again), its
    /// events on the counters: (slot, event), in slot order.
    turns: Vec<Vec<(usize, usize)>>,
    /// The turn on the counters now.
    turn: usize,
    /// When the turn began, and each slot's counter value then.
    began: Duration,
    start: Vec<u64>,
    /// When counting began (every event is enabled from then on).
    first: Duration,
    /// Per event: what it counted while on a counter, and for how long.
    counted: Vec<u64>,
    running: Vec<Duration>,
}

/// The events on the counters in turn `turn` of `n` events over `k` counters: (slot, event).
pub fn turn_events(turn: usize, n: usize, k: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..k.min(n)).map(move |slot| (slot, (turn * k + slot) % n))
}

/// How many distinct turns `n` events over `k` counters take: `n / gcd(n, k)`.
pub fn turn_count(n: usize, k: usize) -> usize {
    if n <= k || k == 0 {
        return 1;
    }
    let (mut a, mut b) = (n, k);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    n / a
}

/// Whether `sels` take turns on `counters`: more events than counters, events that cannot
/// all have a counter their lists allow at once (three events kept to two counters), or
/// events that need one auxiliary MSR with different values.
pub fn needs_turns(sels: &[EventSelect], counters: &[u32]) -> bool {
    let all: Vec<&EventSelect> = sels.iter().collect();
    sels.len() > counters.len() || fits(counters, &all).is_none()
}

/// Where `events` go on `counters` if they can count at once: each on a counter its list
/// allows ([`crate::counters::place`]), all agreeing on their auxiliary MSRs
/// ([`crate::counters::aux_agree`]).
fn fits(counters: &[u32], events: &[&EventSelect]) -> Option<Vec<usize>> {
    if !crate::counters::aux_agree(events) {
        return None;
    }
    crate::counters::place(counters, events)
}

/// `events` (indices into `sels`) placed on `counters`, each on one its list allows:
/// (slot, event) in slot order; `None` when they have no placement.
fn placed(
    events: Vec<usize>,
    sels: &[EventSelect],
    counters: &[u32],
) -> Option<Vec<(usize, usize)>> {
    let chosen: Vec<&EventSelect> = events.iter().map(|&e| &sels[e]).collect();
    let slots = fits(counters, &chosen)?;
    let mut placed: Vec<(usize, usize)> = slots.into_iter().zip(events).collect();
    placed.sort_unstable();
    Some(placed)
}

/// The windows of [`turn_events`], each placed: without restrictions event `turn * k + slot`
/// takes slot `slot`; `None` when some window's events have no placement.
fn windows(sels: &[EventSelect], counters: &[u32]) -> Option<Vec<Vec<(usize, usize)>>> {
    (0..turn_count(sels.len(), counters.len()))
        .map(|t| {
            let events = turn_events(t, sels.len(), counters.len()).map(|(_, e)| e);
            placed(events.collect(), sels, counters)
        })
        .collect()
}

/// Turns for events whose lists keep them off the windows of [`turn_events`], or that need
/// one auxiliary MSR with different values: each event, in order, joins the first turn it can
/// be placed in beside the events already there (and agrees with on auxiliary MSRs), or opens
/// a new one; then each turn also takes every other event that fits beside its own, so a
/// counter is left idle only where no event can use it. An event no counter of the box may
/// count is refused, naming it.
fn groups(
    sels: &[EventSelect],
    counters: &[u32],
    instance: &str,
) -> Result<Vec<Vec<(usize, usize)>>> {
    // Whether event `e` can count beside the events of `turn`.
    let joins = |turn: &[usize], e: usize| {
        let with: Vec<&EventSelect> = turn.iter().chain([&e]).map(|&i| &sels[i]).collect();
        fits(counters, &with).is_some()
    };
    let mut turns: Vec<Vec<usize>> = Vec::new();
    for e in 0..sels.len() {
        match turns.iter_mut().find(|t| joins(t, e)) {
            Some(turn) => turn.push(e),
            None if joins(&[], e) => turns.push(vec![e]),
            None => {
                return Err(UsageError::NoSuchCounter {
                    counter: format!(
                        "counter of {instance} that event {} may count on (its list allows \
                         none of counters {:?})",
                        e + 1,
                        counters
                    ),
                    available: format!("{} general counters", counters.len()),
                }
                .into())
            }
        }
    }
    // A counter a turn leaves free counts an event of another turn that fits beside the
    // turn's events: that event runs longer, and its count is scaled by its own time.
    for turn in &mut turns {
        for e in 0..sels.len() {
            if !turn.contains(&e) && joins(turn, e) {
                turn.push(e);
            }
        }
    }
    Ok(turns
        .into_iter()
        .map(|events| placed(events, sels, counters).expect("placed when grouped"))
        .collect())
}

impl Turns {
    /// The turns of `sels` over `counting`'s general counters (those the part has,
    /// [`Counting::limit_general`]), every control value made first: `None` when every event
    /// has a counter of its own.
    pub fn plan(counting: &Counting<'_, Machine>, sels: &[EventSelect]) -> Result<Option<Self>> {
        let general = counting.general_counters();
        let k = general.len();
        // A box counting a free-running counter takes no turns ([`PmuBox::assign`] refused
        // more general events than counters beside one).
        let box_ = counting.pmu_box();
        let counters: Vec<u32> = general.iter().map(|c| c.number()).collect();
        if !needs_turns(sels, &counters) || sels.iter().any(|s| box_.free_running(s).is_some()) {
            return Ok(None);
        }
        let controls = sels
            .iter()
            .map(|s| general.iter().map(|c| c.control_value(s, false)).collect())
            .collect::<Result<Vec<Vec<u64>>>>()?;
        // Windows where there are more events than counters and each window can be placed;
        // groups otherwise.
        let windows = (sels.len() > k).then(|| windows(sels, &counters)).flatten();
        let turns = match windows {
            Some(turns) => turns,
            None => groups(sels, &counters, box_.instance)?,
        };
        // A saturating counter's readings wrap where the session resets it.
        let widths = counters
            .iter()
            .map(|&n| counting.counter_width(n))
            .collect::<Result<_>>()?;
        Ok(Some(Turns {
            counters,
            widths,
            controls,
            sels: sels.to_vec(),
            turns,
            turn: 0,
            began: Duration::ZERO,
            start: vec![0; k],
            first: Duration::ZERO,
            counted: vec![0; sels.len()],
            running: vec![Duration::ZERO; sels.len()],
        }))
    }

    /// The events of the first turn in slot order, to program the counters with
    /// ([`crate::counters::Counting::program`] places them on the slots' counters, in order).
    pub fn first_turn(&self, sels: &[EventSelect]) -> Vec<EventSelect> {
        self.turns[0].iter().map(|&(_, e)| sels[e]).collect()
    }

    /// The counter event `event` is on in the first turn it has (its series' label).
    pub fn counter_of(&self, event: usize) -> u32 {
        let slot = self
            .turns
            .iter()
            .flatten()
            .find(|&&(_, e)| e == event)
            .map_or(0, |&(slot, _)| slot);
        self.counters[slot]
    }

    /// How many events take turns.
    pub fn events(&self) -> usize {
        self.counted.len()
    }

    /// Counting begins at `at`: the counters' values now are where the first turn starts.
    pub fn begin(&mut self, counting: &Counting<'_, Machine>, at: Duration) -> Result<()> {
        self.first = at;
        self.began = at;
        self.counted.iter_mut().for_each(|c| *c = 0);
        self.running.iter_mut().for_each(|r| *r = Duration::ZERO);
        self.mark(counting)
    }

    fn mark(&mut self, counting: &Counting<'_, Machine>) -> Result<()> {
        for (slot, &n) in self.counters.iter().enumerate() {
            self.start[slot] = counting.read_counter(n)?;
        }
        Ok(())
    }

    /// Credits the turn on the counters with what they counted up to `at`.
    pub fn settle(&mut self, counting: &Counting<'_, Machine>, at: Duration) -> Result<()> {
        let ran = at.saturating_sub(self.began);
        for &(slot, event) in &self.turns[self.turn] {
            let now = counting.read_counter(self.counters[slot])?;
            let d = delta(self.start[slot], now, self.widths[slot]);
            self.counted[event] = self.counted[event].wrapping_add(d);
            self.running[event] += ran;
            self.start[slot] = now;
        }
        self.began = at;
        Ok(())
    }

    /// Ends the turn on the counters at `at` and puts the next one on: its events'
    /// auxiliary MSRs, then their controls.
    pub fn rotate(&mut self, counting: &mut Counting<'_, Machine>, at: Duration) -> Result<()> {
        self.settle(counting, at)?;
        self.turn = (self.turn + 1) % self.turns.len();
        let turn: Vec<EventSelect> = self.turns[self.turn]
            .iter()
            .map(|&(_, e)| self.sels[e])
            .collect();
        counting.reprogram_aux(&turn)?;
        for &(slot, event) in &self.turns[self.turn] {
            counting.reprogram(self.counters[slot], self.controls[event][slot])?;
        }
        self.mark(counting)
    }

    /// Event `event`'s reading as of the last settle at `at`: its count scaled by the time
    /// enabled over the time running, with both times and the events it counted itself.
    pub fn reading(&self, event: usize, at: Duration) -> Reading {
        let enabled = at.saturating_sub(self.first);
        let running = self.running[event].min(enabled);
        let counted = self.counted[event];
        Reading {
            value: scale(counted, enabled, running).unwrap_or(0),
            running_ratio: Some(ratio(enabled, running)),
            times: Some(Times { enabled, running }),
            counted: Some(counted),
        }
    }
}

/// `count` scaled by `enabled / running` (`count` itself when it ran the whole time);
/// `None` when it never ran.
pub fn scale(count: u64, enabled: Duration, running: Duration) -> Option<u64> {
    if running.is_zero() {
        return (count == 0 && enabled.is_zero()).then_some(0);
    }
    if running >= enabled {
        return Some(count);
    }
    let scaled = u128::from(count) * enabled.as_nanos() / running.as_nanos();
    Some(u64::try_from(scaled).unwrap_or(u64::MAX))
}

/// The share of `enabled` that `running` is (1 for an empty interval).
pub fn ratio(enabled: Duration, running: Duration) -> f64 {
    if enabled.is_zero() {
        1.0
    } else {
        (running.as_secs_f64() / enabled.as_secs_f64()).min(1.0)
    }
}
