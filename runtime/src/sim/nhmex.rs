//! The simulated Xeon 7500 (Nehalem-EX) uncore: counters, three levels of enable, the
//! overflow hierarchy, PMIs to the U-box, and the freeze that clears `en_all`.

use super::regs::{self, Reg, RegFile};
use super::{Journal, PmiRecord, PmiSource, COUNTER_MODULUS_48};
use crate::catalog::{self, Nhm, NhmBox as BoxModel, NhmCounter as Counter};

/// An event to inject into a Xeon 7500 box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UncoreEvent {
    /// Box instance (`"C3"`, `"W"`, `"S1"`, `"R"`).
    pub instance: &'static str,
    /// Event select (`ev_sel`, or `inc_sel` in the M-box). 0xFF on the W-box is the uncore
    /// clock, counted by the fixed counter.
    pub ev_sel: u8,
    /// Unit mask, compared where the control has a `umask` field; `None` matches any.
    pub umask: Option<u8>,
}

/// The simulated Xeon 7500 uncore, over the shared catalog of its registers.
#[derive(Debug)]
pub(crate) struct Model {
    nhm: &'static Nhm,
}

/// Per-socket state beyond register values.
#[derive(Debug, Default, Clone)]
pub(crate) struct SocketState {
    pub regs: RegFile,
    /// Events left until the U-box freezes (clears `en_all`) after a PMI with `frz_all`.
    pending_freeze: Option<u64>,
    /// The U-box has received a PMI (what U_MSR_PMON_GLOBAL_SUMMARY.pmi reports).
    pub pmi: bool,
}

impl Model {
    pub fn new() -> Self {
        Self {
            nhm: catalog::nhm(),
        }
    }

    fn counter_enabled(&self, st: &SocketState, b: &BoxModel, c: &Counter) -> bool {
        let ctl = st.regs.get(&c.ctl);
        if regs::get(c.ctl.info, ctl, "en") == 0 {
            return false;
        }
        let u = st.regs.get(&self.nhm.u_ctl);
        if regs::get(self.nhm.u_ctl.info, u, "en_all") == 0 {
            return false;
        }
        if b.unit == "U" {
            return regs::get(self.nhm.u_ctl.info, u, "en") != 0;
        }
        if c.fixed {
            return b
                .ctl
                .first()
                .is_some_and(|r| regs::get(r.info, st.regs.get(r), "fixed_en") != 0);
        }
        b.half(&b.ctl, c)
            .is_some_and(|(r, bit)| regs::get(r.info, st.regs.get(&r), "ctr_en") >> bit & 1 != 0)
    }

    fn matches(c: &Counter, ctl: u64, ev: &UncoreEvent) -> bool {
        let info = c.ctl.info;
        if c.fixed {
            return ev.ev_sel == 0xFF;
        }
        let sel = if info.field("ev_sel").is_some() {
            "ev_sel"
        } else {
            "inc_sel"
        };
        if regs::get(info, ctl, sel) != u64::from(ev.ev_sel) {
            return false;
        }
        match (ev.umask, info.field("umask")) {
            (Some(m), Some(f)) => f.extract(ctl) == u64::from(m),
            _ => true,
        }
    }

    /// Counts `count` events of `ev`, handling overflow, PMI and freeze exactly at the event
    /// where they happen. Returns `false` if the instance does not exist.
    pub fn inject(
        &self,
        socket: usize,
        st: &mut SocketState,
        ev: &UncoreEvent,
        count: u64,
        skew: u64,
        journal: &mut Journal,
    ) -> bool {
        let Some(b) = self.nhm.boxed(ev.instance) else {
            return false;
        };
        let mut remaining = count;
        while remaining > 0 {
            if st.pending_freeze == Some(0) {
                self.freeze(st);
            }
            let active: Vec<&Counter> = b
                .counters
                .iter()
                .filter(|c| {
                    self.counter_enabled(st, b, c) && Self::matches(c, st.regs.get(&c.ctl), ev)
                })
                .collect();
            // Advance in one step up to the next thing that happens: an overflow, the
            // freeze, or the end of the injection.
            let mut step = remaining;
            for c in &active {
                step =
                    step.min(COUNTER_MODULUS_48 - (st.regs.get(&c.ctr) & (COUNTER_MODULUS_48 - 1)));
            }
            if let Some(n) = st.pending_freeze {
                step = step.min(n);
            }
            journal.seq.0 += step;
            remaining -= step;
            if let Some(n) = st.pending_freeze.as_mut() {
                *n -= step;
            }
            for c in active {
                let old = st.regs.get(&c.ctr) & (COUNTER_MODULUS_48 - 1);
                let new = (old + step) & (COUNTER_MODULUS_48 - 1);
                st.regs.put(&c.ctr, new);
                if new < old || (step > 0 && new == 0) {
                    self.overflow(socket, st, b, c, skew, journal);
                }
            }
        }
        if st.pending_freeze == Some(0) {
            self.freeze(st);
        }
        true
    }

    /// A carry out of bit 47: set the box status bit, and with `pmi_en` send a PMI to the
    /// U-box, which with `frz_all` freezes after `skew` more events.
    fn overflow(
        &self,
        socket: usize,
        st: &mut SocketState,
        b: &BoxModel,
        c: &Counter,
        skew: u64,
        journal: &mut Journal,
    ) {
        if b.unit == "U" {
            let v = st.regs.get(&self.nhm.u_status);
            st.regs.put(
                &self.nhm.u_status,
                regs::set(self.nhm.u_status.info, v, "ov_u", 1),
            );
        } else if c.fixed {
            if let Some(r) = b.status.first() {
                let v = st.regs.get(r);
                st.regs.put(r, regs::set(r.info, v, "ov_fixed", 1));
            }
        } else if let Some((r, bit)) = b.half(&b.status, c) {
            let v = st.regs.get(&r);
            let ov = regs::get(r.info, v, "ov") | (1 << bit);
            st.regs.put(&r, regs::set(r.info, v, "ov", ov));
        }
        let ctl = st.regs.get(&c.ctl);
        if regs::get(c.ctl.info, ctl, "pmi_en") == 0 {
            return;
        }
        let u = st.regs.get(&self.nhm.u_ctl);
        st.pmi = true;
        journal.pmis.push(PmiRecord {
            event: journal.seq.0,
            source: PmiSource::Uncore {
                socket,
                instance: b.instance,
                counter: c.ctr.addr.name,
            },
            core: Some(regs::get(self.nhm.u_ctl.info, u, "pmi_core_sel") as u32),
        });
        if regs::get(self.nhm.u_ctl.info, u, "frz_all") != 0 && st.pending_freeze.is_none() {
            st.pending_freeze = Some(skew);
        }
    }

    fn freeze(&self, st: &mut SocketState) {
        let u = st.regs.get(&self.nhm.u_ctl);
        st.regs.put(
            &self.nhm.u_ctl,
            regs::set(self.nhm.u_ctl.info, u, "en_all", 0),
        );
        st.pending_freeze = None;
    }

    /// Whether any status bit routed through S-box `s` is set (the S-box summary's view).
    fn s_pending(&self, st: &SocketState, s: u8, field: Option<&str>) -> bool {
        self.nhm.boxes.iter().any(|b| {
            b.counters.iter().any(|c| {
                c.route.s_box == Some(s)
                    && field.is_none_or(|f| c.route.summary_field == Some(f))
                    && self.counter_overflowed(st, b, c)
            })
        })
    }

    fn counter_overflowed(&self, st: &SocketState, b: &BoxModel, c: &Counter) -> bool {
        if b.unit == "U" {
            return regs::get(
                self.nhm.u_status.info,
                st.regs.get(&self.nhm.u_status),
                "ov_u",
            ) != 0;
        }
        if c.fixed {
            return b
                .status
                .first()
                .is_some_and(|r| regs::get(r.info, st.regs.get(r), "ov_fixed") != 0);
        }
        b.half(&b.status, c)
            .is_some_and(|(r, bit)| regs::get(r.info, st.regs.get(&r), "ov") >> bit & 1 != 0)
    }

    /// S{s}_MSR_PMON_SUMMARY as the hardware would compute it. No public source gives its
    /// MSR number, so it is reachable only through the simulator.
    pub fn summary(&self, st: &SocketState, s: u8) -> Vec<&'static str> {
        ["ov_r", "ov_s", "ov_mb", "ov_c_l", "ov_c_r"]
            .into_iter()
            .filter(|f| self.s_pending(st, s, Some(f)))
            .collect()
    }

    /// The value a read returns, for registers whose value is derived rather than stored.
    pub fn read(&self, st: &SocketState, reg: &Reg) -> u64 {
        let v = st.regs.get(reg);
        if reg.addr.location != self.nhm.u_status.addr.location {
            return v;
        }
        // ov_w, ov_s0 and ov_s1 reflect the boxes below them: clearing a box's overflow
        // clears them too (guide p. 2-3). ov_u is the U-box counter's own latch.
        let info = self.nhm.u_status.info;
        let w = self.nhm.boxes.iter().any(|b| {
            b.instance == "W" && b.counters.iter().any(|c| self.counter_overflowed(st, b, c))
        });
        let v = regs::set(info, v, "ov_w", u64::from(w));
        let v = regs::set(info, v, "ov_s0", u64::from(self.s_pending(st, 0, None)));
        regs::set(info, v, "ov_s1", u64::from(self.s_pending(st, 1, None)))
    }

    /// Side effects of a write whose stored value and action bits are known.
    pub fn after_write(&self, st: &mut SocketState, reg: &Reg, actions: u64) {
        let loc = reg.addr.location;
        if loc == self.nhm.u_ovf.addr.location {
            let info = reg.info;
            let set = |f: &str| regs::get(info, actions, f) != 0;
            if set("clr_ov_u") {
                let v = st.regs.get(&self.nhm.u_status);
                st.regs.put(
                    &self.nhm.u_status,
                    regs::set(self.nhm.u_status.info, v, "ov_u", 0),
                );
            }
            // Clearing at the top clears the counters below, so the hierarchy stays
            // consistent. Each counter follows its own route: the R-box's two halves report
            // to different S-boxes.
            for b in &self.nhm.boxes {
                for c in &b.counters {
                    let r = c.route;
                    let clear = match r.s_box {
                        None if r.u_status_field == "ov_w" => set("clr_ov_w"),
                        Some(0) => set("clr_ov_s0"),
                        Some(1) => set("clr_ov_s1"),
                        _ => false,
                    };
                    if clear {
                        self.clear_counter_overflow(st, b, c);
                    }
                }
            }
            return;
        }
        if loc == self.nhm.u_ctl.addr.location {
            let v = st.regs.get(reg);
            if regs::get(reg.info, v, "rst_all") != 0 {
                // rst_all resets every counter and control of the uncore; the U-box control
                // itself keeps what was just written.
                for b in &self.nhm.boxes {
                    for c in &b.counters {
                        st.regs.put(&c.ctr, 0);
                        st.regs.put(&c.ctl, 0);
                    }
                    for r in b.status.iter().chain(&b.ctl) {
                        if r.addr.location != loc {
                            st.regs.put(r, 0);
                        }
                    }
                }
                st.regs.put(&self.nhm.u_status, 0);
                st.pending_freeze = None;
                st.pmi = false;
            }
            return;
        }
        for b in &self.nhm.boxes {
            for (i, ovf) in b.ovf.iter().enumerate() {
                if ovf.addr.location != loc {
                    continue;
                }
                if let Some(status) = b.status.get(i) {
                    let sv = st.regs.get(status);
                    let ov =
                        regs::get(status.info, sv, "ov") & !regs::get(reg.info, actions, "clr_ov");
                    let mut sv = regs::set(status.info, sv, "ov", ov);
                    if regs::get(reg.info, actions, "clr_ov_fixed") != 0 {
                        sv = regs::set(status.info, sv, "ov_fixed", 0);
                    }
                    st.regs.put(status, sv);
                }
            }
        }
    }

    /// Clears one counter's bit in its box's status.
    fn clear_counter_overflow(&self, st: &mut SocketState, b: &BoxModel, c: &Counter) {
        if c.fixed {
            if let Some(r) = b.status.first() {
                let v = st.regs.get(r);
                st.regs.put(r, regs::set(r.info, v, "ov_fixed", 0));
            }
        } else if let Some((r, bit)) = b.half(&b.status, c) {
            let v = st.regs.get(&r);
            let ov = regs::get(r.info, v, "ov") & !(1 << bit);
            st.regs.put(&r, regs::set(r.info, v, "ov", ov));
        }
    }

    /// Clears the PMI latch (what reading U_MSR_PMON_GLOBAL_SUMMARY and handling the PMI
    /// does on hardware).
    pub fn acknowledge_pmi(&self, st: &mut SocketState) {
        st.pmi = false;
    }

    /// Every box instance name.
    pub fn instances(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.nhm.boxes.iter().map(|b| b.instance)
    }
}
