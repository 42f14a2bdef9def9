//! What happens on the simulated machine while something counts it: streams of events, each
//! into one box (or one CPU's core counters) at a [`Rate`], advanced by the clock of whoever
//! runs them ([`super::Sim::advance`]). A stream's events up to a time are a function of that
//! time alone, so how often the clock is read (a counting interval) changes how the events
//! are split between readings, never how many there are.

use std::time::Duration;

use pmu_regs::Scope;

use crate::boxes::CountedBox;

/// Events per second, rising by `ramp` events per second every second: by time `t` (in
/// seconds) a stream has had `floor(per_second * t + ramp * t^2 / 2)` events. Exact integer
/// arithmetic, so a schedule gives the same counts on every machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rate {
    /// Events per second at time 0.
    pub per_second: u64,
    /// How much the rate rises each second (0: a steady rate).
    pub ramp: u64,
}

impl Rate {
    /// A steady `n` events per second.
    pub const fn steady(n: u64) -> Self {
        Rate {
            per_second: n,
            ramp: 0,
        }
    }

    /// Events from time 0 to `t` (saturating at `u64::MAX`).
    pub fn events_until(&self, t: Duration) -> u64 {
        const NS: u128 = 1_000_000_000;
        let ns = t.as_nanos();
        // (per_second * ns * 2e9 + ramp * ns^2) / 2e18, in integers.
        let linear = u128::from(self.per_second)
            .checked_mul(ns)
            .and_then(|v| v.checked_mul(2 * NS));
        let square = u128::from(self.ramp)
            .checked_mul(ns)
            .and_then(|v| v.checked_mul(ns));
        match linear
            .zip(square)
            .and_then(|(a, b)| a.checked_add(b))
            .map(|v| v / (2 * NS * NS))
        {
            Some(v) => u64::try_from(v).unwrap_or(u64::MAX),
            None => u64::MAX,
        }
    }
}

/// Where a stream's events happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamTarget {
    /// A box of a socket's uncore (`"C3"`, `"CH2"`).
    Uncore {
        /// The socket.
        socket: usize,
        /// The box instance.
        instance: &'static str,
    },
    /// The architectural counters of one logical CPU.
    Core {
        /// The CPU.
        cpu: u32,
    },
    /// A per-L3 box (`scope="l3"`) of the L3 that a CPU shares.
    L3 {
        /// A CPU sharing the L3.
        cpu: u32,
        /// The box instance.
        instance: &'static str,
    },
}

/// One stream of events: an event select (and unit mask) happening in one place at a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    /// Where.
    pub target: StreamTarget,
    /// The event select.
    pub ev_sel: u16,
    /// The unit mask (`None`: matches any).
    pub umask: Option<u16>,
    /// How often.
    pub rate: Rate,
    /// What an uncore event's stream puts in the control's mask fields (Intel's UMaskExt,
    /// PortMask, FCMask): a counter counts it only where those fields hold the same, as the
    /// hardware counts the TOR requests or IIO ports the masks select. `None`: any.
    pub masks: Option<StreamMasks>,
    /// A core event's auxiliary MSR and the value that selects this stream's events (the
    /// offcore response: which requests and responses count): the core counts them only
    /// while the register holds it, as the hardware counts what the register selects.
    pub aux: Option<pmu_regs::AuxMsr>,
}

/// The values an uncore event puts in its control's fields with the `umask-ext`,
/// `port-mask` and `fc-mask` roles, 0 where it sets none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamMasks {
    /// Intel's UMaskExt.
    pub umask_ext: u32,
    /// Intel's PortMask.
    pub port_mask: u16,
    /// Intel's FCMask.
    pub fc_mask: u8,
}

impl StreamMasks {
    /// Each value by the role of the field that takes it.
    pub fn by_role(&self) -> [(pmu_regs::Role, u64); 3] {
        [
            (pmu_regs::Role::UmaskExt, u64::from(self.umask_ext)),
            (pmu_regs::Role::PortMask, u64::from(self.port_mask)),
            (pmu_regs::Role::FcMask, u64::from(self.fc_mask)),
        ]
    }
}

/// A stream of events a backend runs: [`super::Sim::start_stream`] hands out the
/// simulator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub(super) u64);

impl StreamId {
    /// Stream number `n` of a backend that numbers its own.
    pub const fn new(n: u64) -> Self {
        StreamId(n)
    }

    /// The stream's number.
    pub const fn number(self) -> u64 {
        self.0
    }
}

/// On the simulator, TOPDOWN.SLOTS runs this many times as fast as the pace's next event.
pub const SLOTS_PER_EVENT: u64 = 1000;

/// The streams running, with the events each has had so far.
#[derive(Debug, Default)]
pub(super) struct Streams {
    pub next: u64,
    /// (id, stream, events injected so far).
    pub running: Vec<(StreamId, Stream, u64)>,
    /// The named workloads running.
    pub named: Vec<super::running::Running>,
}

impl super::Sim {
    /// Runs a stream of each event of every box in `counted` into that box, event `i` at
    /// `rate(i)`, and TOPDOWN.SLOTS on each of `topdown_cpus` at [`SLOTS_PER_EVENT`] times
    /// the rate of the event after the longest box's last, so the slots outnumber the counted
    /// events, as on hardware: the demonstration workload a counting session runs.
    pub fn run_counted(
        &self,
        counted: &[CountedBox<'_>],
        rate: &dyn Fn(usize) -> Rate,
        topdown_cpus: &[u32],
    ) -> Vec<StreamId> {
        let mut streams = Vec::new();
        for b in counted {
            for (i, sel) in b.events.iter().enumerate() {
                let target = match b.pmu_box.scope() {
                    Scope::Cpu => StreamTarget::Core { cpu: b.cpu },
                    Scope::L3 => StreamTarget::L3 {
                        cpu: b.cpu,
                        instance: b.pmu_box.instance,
                    },
                    Scope::Socket => StreamTarget::Uncore {
                        socket: b.socket as usize,
                        instance: b.pmu_box.instance,
                    },
                };
                streams.push(self.start_stream(Stream {
                    target,
                    ev_sel: sel.ev_sel,
                    umask: sel.umask,
                    rate: rate(i),
                    masks: Some(StreamMasks {
                        umask_ext: sel.umask_ext.unwrap_or(0),
                        port_mask: sel.port_mask.unwrap_or(0),
                        fc_mask: sel.fc_mask.unwrap_or(0),
                    }),
                    aux: sel.aux,
                }));
            }
        }
        let after_last = counted.iter().map(|b| b.events.len()).max().unwrap_or(0);
        let r = rate(after_last);
        let slots_rate = Rate {
            per_second: r.per_second.saturating_mul(SLOTS_PER_EVENT),
            ramp: r.ramp.saturating_mul(SLOTS_PER_EVENT),
        };
        for &cpu in topdown_cpus {
            streams.push(self.start_stream(Stream {
                target: StreamTarget::Core { cpu },
                ev_sel: super::SLOTS_EVENT.0,
                umask: Some(super::SLOTS_EVENT.1),
                rate: slots_rate,
                masks: None,
                aux: None,
            }));
        }
        streams
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_a_function_of_time_alone() {
        let steady = Rate::steady(1000);
        assert_eq!(steady.events_until(Duration::from_millis(500)), 500);
        // The same total however the span is cut.
        let ramp = Rate {
            per_second: 101_850,
            ramp: 370_000,
        };
        let step = Duration::from_millis(10);
        // 1000 n + 37 n (n + 1) / 2 events by n steps of 10 ms.
        for n in 1..50u64 {
            assert_eq!(
                ramp.events_until(step * n as u32),
                1000 * n + 37 * n * (n + 1) / 2
            );
        }
        assert_eq!(Rate::steady(u64::MAX).events_until(Duration::MAX), u64::MAX);
    }
}
