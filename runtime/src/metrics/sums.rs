//! One interval's counts of a plan's events, summed where its metrics are evaluated: per
//! socket (every box of the unit, and every CPU for core events), or per CPU for metrics
//! that read core events only (`pmu watch --metric -A`, like `perf stat -M -A`). Both `pmu
//! watch --metric` and the exporter's gauges sum through this.

use super::Plan;
use crate::session::TopdownSample;

/// Where a plan's metrics are evaluated: a socket, or one logical CPU on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MetricSite {
    /// The socket.
    pub socket: u32,
    /// The logical CPU; `None`: the socket's boxes and CPUs summed.
    pub cpu: Option<u32>,
}

/// A count summed over the parts at one place, with the smallest share of the interval a
/// part ran (`None`: every part ran the whole time; 0: a part could not be read, so the
/// sum is missing).
pub type Summed = (u64, Option<f64>);

/// One interval's sums of a plan's events at each place, as [`Plan::evaluate`] takes them.
#[derive(Debug, Clone)]
pub struct Sums {
    events: usize,
    per_cpu: bool,
    places: Vec<(MetricSite, Vec<Summed>)>,
}

impl Sums {
    /// No counts yet for `plan`'s events. `per_cpu`: a place per CPU, for a plan whose
    /// metrics are all per CPU ([`Plan::per_cpu`]); otherwise a place per socket.
    pub fn new(plan: &Plan, per_cpu: bool) -> Self {
        Sums {
            events: plan.events.len(),
            per_cpu,
            places: Vec::new(),
        }
    }

    /// Where a series of `socket`, counted on `cpu` (`None`: a box of the socket), goes.
    pub fn site_of(&self, socket: u32, cpu: Option<u32>) -> MetricSite {
        MetricSite {
            socket,
            cpu: if self.per_cpu { cpu } else { None },
        }
    }

    /// The sums at `place`, all zero until something is added.
    fn at(&mut self, place: MetricSite) -> &mut Vec<Summed> {
        let i = match self.places.iter().position(|(p, _)| *p == place) {
            Some(i) => i,
            None => {
                self.places.push((place, vec![(0, None); self.events]));
                self.places.len() - 1
            }
        };
        &mut self.places[i].1
    }

    /// Adds one series' change over the interval to event `event` at the series' place:
    /// `Some((delta, running fraction))`, or `None` where it could not be read (the sum is
    /// then missing, so its metrics are n/a). An event index outside the plan is ignored.
    pub fn add(
        &mut self,
        socket: u32,
        cpu: Option<u32>,
        event: usize,
        change: Option<(u64, Option<f64>)>,
    ) {
        let place = self.site_of(socket, cpu);
        let Some(slot) = self.at(place).get_mut(event) else {
            return;
        };
        match change {
            Some((delta, ratio)) => {
                slot.0 = slot.0.saturating_add(delta);
                // A sum is as complete as its least-running part.
                slot.1 = match (slot.1, ratio) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            None => slot.1 = Some(0.0),
        }
    }

    /// Each place's sums in order of place, the plan's top-down values
    /// ([`Plan::topdown`]) appended from `topdown`'s samples there; a place whose metrics read
    /// only the top-down registers comes from those samples alone.
    pub fn finish(
        mut self,
        plan: &Plan,
        topdown: &[TopdownSample],
    ) -> Vec<(MetricSite, Vec<Summed>)> {
        if !plan.topdown.is_empty() {
            for t in topdown {
                let place = self.site_of(t.socket, Some(t.cpu));
                self.at(place);
            }
        }
        self.places.sort_by_key(|(p, _)| *p);
        for (place, sums) in &mut self.places {
            sums.extend(plan.topdown_counts(topdown, *place));
        }
        self.places
    }
}
