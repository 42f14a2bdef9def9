//! The simulated Xeon E5-2600 (Sandy Bridge-EP) Home Agent and QPI boxes: box freeze and
//! resets, per-counter reset, 48-bit counters that wrap and keep counting, and the QPI packet
//! match/mask facility with event 0x38 (CTO_COUNT).

use std::collections::HashMap;

use pmu_regs::ProcessorInfo;

use super::regs::{self, Index, Reg, RegFile};
use super::{Seq, COUNTER_MODULUS_48};

/// Event select of CTO_COUNT, the QPI event that counts packets matching the filter (with
/// `ev_sel_ext` set, as Intel's event list gives it).
pub const CTO_COUNT: u8 = 0x38;

#[derive(Debug, Clone)]
struct Counter {
    ctl: Reg,
    ctr: Reg,
}

#[derive(Debug, Clone)]
struct BoxModel {
    instance: &'static str,
    box_ctl: Reg,
    counters: Vec<Counter>,
    /// (MATCH0, MATCH1, MASK0, MASK1) for QPI ports.
    filter: Option<[Reg; 4]>,
}

/// An event to inject into an E5-2600 box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PciEvent {
    /// Box instance: `"HA"`, `"P0"`, `"P1"`.
    pub instance: &'static str,
    /// Event select.
    pub ev_sel: u8,
    /// Unit mask; `None` matches any.
    pub umask: Option<u8>,
}

/// A QPI packet header as the match/mask registers see it: the bits that MATCH0/MASK0 and
/// MATCH1/MASK1 compare. Build them with the generated `QpiPktMatch0`/`QpiPktMatch1` layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpiPacket {
    /// Compared under MASK0 with MATCH0.
    pub word0: u32,
    /// Compared under MASK1 with MATCH1.
    pub word1: u32,
}

/// Write-only box-control state: reads return zero, but the box remembers.
#[derive(Debug, Default, Clone, Copy)]
struct Freeze {
    frz_en: bool,
    frz: bool,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct SocketState {
    pub regs: RegFile,
    freeze: HashMap<&'static str, Freeze>,
    /// A freeze signal (the global freeze a PMI raises) is asserted.
    signal: bool,
    /// Counters that wrapped, by concrete name, with the event at which they did.
    pub overflows: Vec<(&'static str, u64)>,
}

#[derive(Debug)]
pub(crate) struct Model {
    boxes: Vec<BoxModel>,
}

impl Model {
    pub fn new(processor: &'static ProcessorInfo, index: &Index) -> Self {
        let mut boxes = Vec::new();
        for unit in processor.units {
            for &instance in unit.instances {
                let regs: Vec<Reg> = unit
                    .registers
                    .iter()
                    .flat_map(|info| {
                        info.known_addresses()
                            .iter()
                            .filter(move |a| a.instance == instance)
                            .map(move |addr| Reg { info, addr })
                    })
                    .collect();
                let Some(box_ctl) = regs
                    .iter()
                    .find(|r| r.info.name.contains("BOX_CTL"))
                    .copied()
                else {
                    continue;
                };
                let ctls = regs
                    .iter()
                    .filter(|r| r.field("en").is_some() && r.field("ev_sel").is_some());
                let ctrs = regs.iter().filter(|r| r.field("event_count").is_some());
                let counters = ctls
                    .zip(ctrs)
                    .map(|(ctl, ctr)| Counter {
                        ctl: *ctl,
                        ctr: *ctr,
                    })
                    .collect();
                let named = |part: &str| regs.iter().find(|r| r.info.name.ends_with(part)).copied();
                let filter = match (
                    named("MATCH0"),
                    named("MATCH1"),
                    named("MASK0"),
                    named("MASK1"),
                ) {
                    (Some(a), Some(b), Some(c), Some(d)) => Some([a, b, c, d]),
                    _ => None,
                };
                boxes.push(BoxModel {
                    instance,
                    box_ctl,
                    counters,
                    filter,
                });
            }
        }
        let _ = index;
        Self { boxes }
    }

    fn frozen(st: &SocketState, b: &BoxModel) -> bool {
        let f = st.freeze.get(b.instance).copied().unwrap_or_default();
        f.frz_en && (f.frz || st.signal)
    }

    fn enabled(st: &SocketState, b: &BoxModel, c: &Counter) -> bool {
        regs::get(c.ctl.info, st.regs.get(&c.ctl), "en") != 0 && !Self::frozen(st, b)
    }

    fn advance(st: &mut SocketState, c: &Counter, n: u64, seq: u64) {
        let old = st.regs.get(&c.ctr) & (COUNTER_MODULUS_48 - 1);
        let sum = old + n;
        let wraps = sum / COUNTER_MODULUS_48;
        // Each wrap happens at a known event: the first after (2^48 - old) events.
        for k in 0..wraps.min(4) {
            let at = seq + (COUNTER_MODULUS_48 - old) + k * COUNTER_MODULUS_48;
            st.overflows.push((c.ctr.addr.name, at));
        }
        st.regs.put(&c.ctr, sum & (COUNTER_MODULUS_48 - 1));
    }

    /// Counts `count` events of `ev` in every enabled, unfrozen counter that selects it.
    pub fn inject(&self, st: &mut SocketState, ev: &PciEvent, count: u64, seq: &mut Seq) -> bool {
        let Some(b) = self.boxes.iter().find(|b| b.instance == ev.instance) else {
            return false;
        };
        for c in &b.counters {
            let ctl = st.regs.get(&c.ctl);
            let sel_ok = regs::get(c.ctl.info, ctl, "ev_sel") == u64::from(ev.ev_sel);
            let umask_ok = ev
                .umask
                .is_none_or(|m| regs::get(c.ctl.info, ctl, "umask") == u64::from(m));
            if sel_ok && umask_ok && Self::enabled(st, b, c) {
                Self::advance(st, c, count, seq.0);
            }
        }
        seq.0 += count;
        true
    }

    /// Sends `count` copies of `packet` through QPI port `instance`; counters programmed with
    /// CTO_COUNT count those the match/mask filter accepts.
    pub fn inject_packet(
        &self,
        st: &mut SocketState,
        instance: &str,
        packet: QpiPacket,
        count: u64,
        seq: &mut Seq,
    ) -> bool {
        let Some(b) = self.boxes.iter().find(|b| b.instance == instance) else {
            return false;
        };
        let Some([m0, m1, k0, k1]) = b.filter else {
            return false;
        };
        let matches = {
            let (m0, m1, k0, k1) = (
                st.regs.get(&m0),
                st.regs.get(&m1),
                st.regs.get(&k0),
                st.regs.get(&k1),
            );
            (u64::from(packet.word0) ^ m0) & k0 == 0 && (u64::from(packet.word1) ^ m1) & k1 == 0
        };
        if matches {
            for c in &b.counters {
                let ctl = st.regs.get(&c.ctl);
                // CTO_COUNT is event 0x38 with the extension bit set (Intel's event list).
                let cto = regs::get(c.ctl.info, ctl, "ev_sel") == u64::from(CTO_COUNT)
                    && regs::get(c.ctl.info, ctl, "ev_sel_ext") == 1;
                if cto && Self::enabled(st, b, c) {
                    Self::advance(st, c, count, seq.0);
                }
            }
        }
        seq.0 += count;
        true
    }

    /// Raises or drops the freeze signal for every box of the socket.
    pub fn set_freeze_signal(&self, st: &mut SocketState, on: bool) {
        st.signal = on;
    }

    /// Side effects of write-only bits: freeze, resets.
    pub fn after_write(&self, st: &mut SocketState, reg: &Reg, raw: u64) {
        for b in &self.boxes {
            if b.box_ctl.addr.location == reg.addr.location {
                let info = reg.info;
                let f = st.freeze.entry(b.instance).or_default();
                f.frz_en = regs::get(info, raw, "frz_en") != 0;
                f.frz = regs::get(info, raw, "frz") != 0;
                if regs::get(info, raw, "rst_ctrs") != 0 {
                    for c in &b.counters {
                        st.regs.put(&c.ctr, 0);
                    }
                }
                if regs::get(info, raw, "rst_ctrl") != 0 {
                    for c in &b.counters {
                        st.regs.put(&c.ctl, 0);
                    }
                }
                return;
            }
            for c in &b.counters {
                if c.ctl.addr.location == reg.addr.location && regs::get(reg.info, raw, "rst") != 0
                {
                    st.regs.put(&c.ctr, 0);
                }
            }
        }
    }

    /// Every box instance modelled.
    pub fn instances(&self) -> Vec<&'static str> {
        self.boxes.iter().map(|b| b.instance).collect()
    }

    /// The instances with a packet filter.
    pub fn filtered_instances(&self) -> Vec<&'static str> {
        self.boxes
            .iter()
            .filter(|b| b.filter.is_some())
            .map(|b| b.instance)
            .collect()
    }

    /// Whether box `instance` is frozen now.
    pub fn is_frozen(&self, st: &SocketState, instance: &str) -> Option<bool> {
        self.boxes
            .iter()
            .find(|b| b.instance == instance)
            .map(|b| Self::frozen(st, b))
    }
}
