//! The simulated uncore of one processor, driven entirely by the structure its spec
//! declares ([`Boxes`]): counters count when their control, their box and the global level
//! enable them and the box is not frozen; a carry out of the counter's top bit sets its
//! overflow bit and, along its route, every summary and global bit above it; a counter whose
//! control asks for it raises a PMI, which freezes the uncore where the global level says a
//! PMI does (clearing its enable, or raising the freeze signal that stops every box whose
//! freeze enable is set; its freeze and unfreeze commands raise and lift it too). Resets, freezes, overflow clears (at any level) and packet filters act as their
//! roles say. No box, register or field is named here.

use std::collections::HashMap;

use pmu_regs::{Access, BitRef, CounterKind, FieldInfo, Location, Role, Scope};

use super::regs::RegFile;
use super::workload::StreamMasks;
use super::{Journal, PmiRecord, PmiSource};
use crate::boxes::{hop_reg, Boxes, Counter, PmuBox, Reg};

pub use crate::boxes::FIXED_EVENT;

/// An event to inject into a box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UncoreEvent {
    /// Box instance (`"C3"`, `"W"`, `"HA"`, `"CH2"`).
    pub instance: &'static str,
    /// Event select; [`FIXED_EVENT`] for the box's fixed-event counters.
    pub ev_sel: u16,
    /// Unit mask, compared where the control has one; `None` matches any.
    pub umask: Option<u16>,
}

/// A bit of the overflow hierarchy above a box, and the counters that feed it.
#[derive(Debug)]
struct Hop {
    bit: BitRef,
    /// (box index, counter number).
    feeders: Vec<(usize, u32)>,
}

/// Per-socket state beyond register values.
#[derive(Debug, Default, Clone)]
pub(crate) struct SocketState {
    pub regs: RegFile,
    /// The global controls of the part's discovery domain tables (`super::domains`).
    pub domain_globals: Vec<super::domains::DomainGlobal>,
    /// Write-only bits last written, by register location (a box control's freeze bits are
    /// write-only on some processors, but the box remembers them).
    written: HashMap<Location, u64>,
    /// Overflow latches of counters whose box has no status bit (the route's first hop is
    /// theirs alone): (box index, counter number).
    latched: Vec<(usize, u32)>,
    /// Events left until the global level freezes after a PMI.
    pending_freeze: Option<u64>,
    /// A PMI was raised and not yet handled.
    pub pmi: bool,
    /// The freeze signal is asserted.
    signal: bool,
    /// Counters that wrapped, by register name, with the injected event number.
    pub overflows: Vec<(&'static str, u64)>,
}

/// The model of one processor's uncore.
#[derive(Debug)]
pub(crate) struct Model {
    pub boxes: &'static Boxes,
    hops: Vec<Hop>,
    /// The boxes that never count (`SimConfig::broken`), by position.
    broken: Vec<usize>,
    /// The boxes whose reset-counters field leaves the counters (`SimConfig::no_reset`).
    no_reset: Vec<usize>,
}

fn bit_key(b: &BitRef) -> (usize, &'static str, u32, u32) {
    (
        b.register as *const _ as usize,
        b.instance,
        b.index,
        b.field.lsb,
    )
}

fn same_bit(a: &BitRef, b: &BitRef) -> bool {
    bit_key(a) == bit_key(b)
}

impl Model {
    /// The model of `boxes`, those named in `broken` never counting and those named in
    /// `no_reset` keeping their counts when told to reset them.
    pub fn new(boxes: &'static Boxes, broken: &[&str], no_reset: &[&str]) -> Self {
        let mut hops: Vec<Hop> = Vec::new();
        for (bi, b) in boxes.boxes.iter().enumerate() {
            for c in &b.counters {
                for hop in c.route.map_or(&[][..], |r| r.hops) {
                    match hops.iter_mut().find(|h| same_bit(&h.bit, &hop.bit)) {
                        Some(h) => h.feeders.push((bi, c.number())),
                        None => hops.push(Hop {
                            bit: hop.bit,
                            feeders: vec![(bi, c.number())],
                        }),
                    }
                }
            }
        }
        let named = |names: &[&str]| -> Vec<usize> {
            boxes
                .boxes
                .iter()
                .enumerate()
                .filter(|(_, b)| names.iter().any(|n| n.eq_ignore_ascii_case(b.instance)))
                .map(|(bi, _)| bi)
                .collect()
        };
        Self {
            boxes,
            hops,
            broken: named(broken),
            no_reset: named(no_reset),
        }
    }

    fn pmu_box(&self, bi: usize) -> &'static PmuBox {
        &self.boxes.boxes[bi]
    }

    /// The box called `instance`.
    pub fn find(&self, instance: &str) -> Option<usize> {
        self.boxes
            .boxes
            .iter()
            .position(|b| b.instance.eq_ignore_ascii_case(instance))
    }

    /// Every box instance.
    pub fn instances(&self) -> Vec<&'static str> {
        self.boxes.boxes.iter().map(|b| b.instance).collect()
    }

    /// A field's value, write-only fields as last written.
    fn field(&self, st: &SocketState, reg: &Reg, f: &FieldInfo) -> u64 {
        let v = st.regs.get(reg) | st.written.get(&reg.addr.location).copied().unwrap_or(0);
        f.extract(v)
    }

    fn frozen(&self, st: &SocketState, b: &PmuBox) -> bool {
        let Some((reg, freeze)) = b.box_field(Role::Freeze) else {
            return false;
        };
        let frozen = self.field(st, &reg, freeze) != 0 || st.signal;
        match b.box_field(Role::FreezeEnable) {
            Some((r, f)) => frozen && self.field(st, &r, f) != 0,
            None => frozen,
        }
    }

    fn enabled(&self, st: &SocketState, b: &PmuBox, c: &Counter) -> bool {
        // Free-running counters have no enable and no freeze: they always count.
        if c.info.kind == CounterKind::FreeRunning {
            return true;
        }
        if let Some(ctl) = c.control {
            let v = st.regs.get(&ctl);
            let mut bits = [Role::Enable, Role::RingEnable]
                .iter()
                .filter_map(|r| c.control_bits(*r))
                .peekable();
            // A control without an enable field leaves it to the box's counter-enable bit.
            let on = bits.peek().is_none() || bits.any(|bits| bits.extract(v) != 0);
            if !on || observes_nothing(ctl.info, v) {
                return false;
            }
        }
        if let Some((reg, bits)) = b.box_bit(Role::CounterEnable, c.number()) {
            if bits.extract(st.regs.get(&reg)) == 0 {
                return false;
            }
        }
        if let Some(g) = &self.boxes.global {
            if let Some(f) = g.info.field(Role::GlobalEnable) {
                if f.extract(st.regs.get(&g.control)) == 0 {
                    return false;
                }
            }
        }
        !self.frozen(st, b) && !super::quirks::held(self.boxes, &st.regs, &st.domain_globals, b)
    }

    fn selects(
        &self,
        st: &SocketState,
        c: &Counter,
        ev: &UncoreEvent,
        masks: Option<&StreamMasks>,
    ) -> bool {
        if c.info.kind != CounterKind::General {
            // A free-running counter the kernel selects by unit mask counts only its own
            // event; an injection without a unit mask reaches every fixed-event counter.
            return ev.ev_sel == FIXED_EVENT
                && match (c.info.perf_event, ev.umask) {
                    (Some(p), Some(m)) => m == u16::from(p.umask),
                    _ => true,
                };
        }
        let Some(ctl) = c.control else { return false };
        let v = st.regs.get(&ctl);
        let is = |role: Role, want: u64| c.control_bits(role).is_some_and(|b| b.extract(v) == want);
        if !is(Role::Event, u64::from(ev.ev_sel)) {
            return false;
        }
        // Where the control has a mask field, the stream's value must be there.
        let masked = masks.is_none_or(|m| {
            m.by_role()
                .iter()
                .all(|&(role, want)| c.control_bits(role).is_none() || is(role, want))
        });
        if !masked {
            return false;
        }
        match (ev.umask, c.control_bits(Role::Umask)) {
            (Some(m), Some(b)) => b.extract(v) == u64::from(m),
            _ => true,
        }
    }

    /// Counts `count` events in every counter of box `bi` that `counts` picks, handling
    /// overflow, PMI and freeze exactly at the event where they happen.
    #[allow(clippy::too_many_arguments)]
    fn advance(
        &self,
        socket: usize,
        st: &mut SocketState,
        bi: usize,
        count: u64,
        skew: u64,
        journal: &mut Journal,
        counts: &dyn Fn(&SocketState, &Counter) -> bool,
    ) {
        let b = self.pmu_box(bi);
        // A broken box (the fault profile): its counters never move.
        if self.broken.contains(&bi) {
            return;
        }
        let mut remaining = count;
        while remaining > 0 {
            if st.pending_freeze == Some(0) {
                self.freeze(st);
            }
            let active: Vec<&Counter> = b
                .counters
                .iter()
                .filter(|c| self.enabled(st, b, c) && counts(st, c))
                .collect();
            // Advance in one step up to the next thing that happens: an overflow, the
            // freeze, or the end of the injection.
            let mut step = remaining;
            for c in active.iter().filter(|_| !super::quirks::saturates(b)) {
                let max = c.info.max() as u128 + 1;
                let now = u128::from(self.count(st, c));
                step = step.min((max - now).min(u128::from(u64::MAX)) as u64);
            }
            if let Some(n) = st.pending_freeze {
                step = step.min(n.max(1));
            }
            journal.seq.0 += step;
            remaining -= step;
            if let Some(n) = st.pending_freeze.as_mut() {
                *n = n.saturating_sub(step);
            }
            for c in active {
                let max = c.info.max() as u128 + 1;
                let sum = u128::from(self.count(st, c)) + u128::from(step);
                self.set_count(st, c, super::quirks::after_count(b, sum, max));
                if sum >= max && !super::quirks::saturates(b) {
                    self.overflow(socket, st, bi, c, skew, journal);
                }
            }
        }
        if st.pending_freeze == Some(0) {
            self.freeze(st);
        }
    }

    fn count(&self, st: &SocketState, c: &Counter) -> u64 {
        let raw = st.regs.get(&c.counter);
        c.count_bits().map_or(raw, |b| b.extract(raw))
    }

    fn set_count(&self, st: &mut SocketState, c: &Counter, v: u64) {
        let raw = st.regs.get(&c.counter);
        let new = match c.count_bits() {
            Some(b) => b.insert(c.counter.name(), raw, v & b.max()).unwrap_or(raw),
            None => v,
        };
        st.regs.put(&c.counter, new);
    }

    /// Runs the workload `w` from cycle `from` to `to` (of the core clock for a per-CPU box,
    /// the uncore clock for the others) in every box of `scope`: each enabled general
    /// counter counts what its control selects (event, unit mask, threshold, invert, edge,
    /// user, kernel, any-thread, by their roles: [`super::counting`]), each fixed counter
    /// the box's clock ticks, each free-running counter its own event.
    #[allow(clippy::too_many_arguments)]
    pub fn run_workload(
        &self,
        scope: Scope,
        socket: usize,
        st: &mut SocketState,
        w: &super::running::ResolvedWorkload,
        (from, to): (u64, u64),
        skew: u64,
        journal: &mut Journal,
    ) {
        for (bi, b) in self.boxes.boxes.iter().enumerate() {
            // A broken box (the fault profile) counts nothing under a workload either.
            if b.scope() != scope || self.broken.contains(&bi) {
                continue;
            }
            if self.frozen(st, b) {
                continue;
            }
            for (ci, c) in b.counters.iter().enumerate() {
                if !self.enabled(st, b, c) {
                    continue;
                }
                let Some((pattern, filter)) = self.workload_event(st, b, c, w) else {
                    continue;
                };
                let count = pattern
                    .count_until(&filter, to)
                    .saturating_sub(pattern.count_until(&filter, from));
                if count == 0 {
                    continue;
                }
                // Short of a carry out of the top bit (and of a pending freeze), the count
                // just adds; otherwise the exact path handles the overflow where it happens.
                let now = self.count(st, c);
                let room = c.info.max().saturating_sub(now);
                if count <= room && st.pending_freeze.is_none() {
                    self.set_count(st, c, now + count);
                    journal.seq.0 += count;
                    continue;
                }
                self.advance(socket, st, bi, count, skew, journal, &|_, other| {
                    std::ptr::eq(other, &b.counters[ci])
                });
            }
        }
    }

    /// What counter `c` of box `b` counts under the workload: its event's pattern and the
    /// filter its control sets.
    fn workload_event(
        &self,
        st: &SocketState,
        b: &PmuBox,
        c: &Counter,
        w: &super::running::ResolvedWorkload,
    ) -> Option<(super::counting::CyclePattern, super::counting::Filter)> {
        use super::counting::Filter;
        if c.info.kind != CounterKind::General {
            // A fixed counter ticks with the box's clock; a free-running one counts the
            // event the kernel names it by.
            let p = match c.info.perf_event {
                Some(e) if c.info.kind == CounterKind::FreeRunning => {
                    w.uncore(b.unit.name, 0xff, u16::from(e.umask))
                }
                _ => w.clock(),
            };
            return Some((p, Filter::ALL));
        }
        let v = st.regs.get(&c.control?);
        let get = |role: Role| c.control_bits(role).map(|bits| bits.extract(v));
        let flag = |role: Role, absent: bool| get(role).map_or(absent, |x| x != 0);
        let filter = Filter {
            cmask: get(Role::Threshold).unwrap_or(0).min(255) as u8,
            invert: flag(Role::Invert, false),
            edge: flag(Role::Edge, false),
            user: flag(Role::User, true),
            kernel: flag(Role::Kernel, true),
            any_thread: flag(Role::AnyThread, false),
        };
        let event = get(Role::Event)? as u16;
        let umask = get(Role::Umask).unwrap_or(0) as u16;
        Some((w.uncore(b.unit.name, event, umask), filter))
    }

    /// Injects `count` events of `ev`, with `masks` where the stream has them (`None`: counted
    /// whatever the controls' mask fields hold). Returns `false` if the box does not exist.
    #[allow(clippy::too_many_arguments)]
    pub fn inject(
        &self,
        socket: usize,
        st: &mut SocketState,
        ev: &UncoreEvent,
        masks: Option<&StreamMasks>,
        count: u64,
        skew: u64,
        journal: &mut Journal,
    ) -> bool {
        let Some(bi) = self.find(ev.instance) else {
            return false;
        };
        self.advance(socket, st, bi, count, skew, journal, &|st, c| {
            self.selects(st, c, ev, masks)
        });
        true
    }

    /// Sends `count` packets with header words `words` through box `instance`: counters
    /// whose control selects a filter's event count those every filter of the box accepts
    /// (word i compared with filter i under its mask). `None` if the box has no filter.
    #[allow(clippy::too_many_arguments)]
    pub fn inject_filtered(
        &self,
        socket: usize,
        st: &mut SocketState,
        instance: &str,
        words: &[u64],
        count: u64,
        skew: u64,
        journal: &mut Journal,
    ) -> Option<()> {
        let bi = self.find(instance)?;
        let b = self.pmu_box(bi);
        let filters: Vec<_> = b.pmu.filters.iter().filter(|f| f.event.is_some()).collect();
        if filters.is_empty() {
            return None;
        }
        let reg = |r: &'static pmu_regs::RegisterInfo| Reg::of(r, b.instance, 0);
        let accepted = filters.iter().enumerate().all(|(i, f)| {
            let word = words.get(i).copied().unwrap_or(0);
            let m = reg(f.register).map_or(0, |r| st.regs.get(&r));
            let k = f.mask.and_then(reg).map_or(u64::MAX, |r| st.regs.get(&r));
            (word ^ m) & k == 0
        });
        if !accepted {
            journal.seq.0 += count;
            return Some(());
        }
        let f = filters[0];
        self.advance(socket, st, bi, count, skew, journal, &|st, c| {
            let Some(ctl) = c.control else { return false };
            let v = st.regs.get(&ctl);
            let event = c.control_bits(Role::Event).map(|b| b.extract(v));
            let ext = c.control_bits(Role::EventExt).map_or(0, |b| b.extract(v));
            event == f.event.map(u64::from) && ext == u64::from(f.event_ext)
        });
        Some(())
    }

    /// A carry out of the counter's top bit.
    fn overflow(
        &self,
        socket: usize,
        st: &mut SocketState,
        bi: usize,
        c: &Counter,
        skew: u64,
        journal: &mut Journal,
    ) {
        let b = self.pmu_box(bi);
        st.overflows.push((c.counter.name(), journal.seq.0));
        match b.box_bit(Role::Overflow, c.number()) {
            Some((reg, bits)) => {
                let v = st.regs.get(&reg);
                st.regs.put(&reg, v | bits.mask());
            }
            None if c.route.is_some() && !st.latched.contains(&(bi, c.number())) => {
                st.latched.push((bi, c.number()));
            }
            None => {}
        }
        let pmi = c.control.is_some_and(|ctl| {
            c.control_bits(Role::OverflowEnable)
                .is_some_and(|bits| bits.extract(st.regs.get(&ctl)) != 0)
        });
        if !pmi {
            return;
        }
        st.pmi = true;
        if b.scope() == Scope::Cpu {
            // A per-CPU box's state is its CPU's (`socket` is the CPU here): the interrupt
            // goes to the local APIC of that CPU, and nothing freezes.
            journal.pmis.push(PmiRecord {
                event: journal.seq.0,
                source: PmiSource::Core {
                    cpu: socket as u32,
                    counter: c.counter.name().to_string(),
                },
                core: Some(socket as u32),
            });
            return;
        }
        let core = self.boxes.global.and_then(|g| {
            g.info
                .field(Role::PmiSelect)
                .map(|f| f.extract(st.regs.get(&g.control)) as u32)
        });
        journal.pmis.push(PmiRecord {
            event: journal.seq.0,
            source: PmiSource::Uncore {
                socket,
                instance: b.instance,
                counter: c.counter.name(),
            },
            core,
        });
        if let Some(g) = &self.boxes.global {
            let freezes = match g.info.pmi_freeze() {
                Some((freeze_on_pmi, _)) => freeze_on_pmi.extract(st.regs.get(&g.control)) != 0,
                // The freeze-signal model: every enabled overflow broadcasts the freeze.
                None => g.info.freeze_signal().is_some(),
            };
            if freezes && st.pending_freeze.is_none() {
                st.pending_freeze = Some(skew);
            }
        }
    }

    fn freeze(&self, st: &mut SocketState) {
        if let Some(g) = &self.boxes.global {
            if let Some((_, enable)) = g.info.pmi_freeze() {
                let v = st.regs.get(&g.control);
                st.regs.put(&g.control, v & !enable.mask());
            } else if g.info.freeze_signal().is_some() {
                st.signal = true;
            }
        }
        st.pending_freeze = None;
    }

    /// Whether counter `n` of box `bi` has its overflow recorded at box level.
    fn overflowed(&self, st: &SocketState, bi: usize, n: u32) -> bool {
        match self.pmu_box(bi).box_bit(Role::Overflow, n) {
            Some((reg, bits)) => bits.extract(st.regs.get(&reg)) != 0,
            None => st.latched.contains(&(bi, n)),
        }
    }

    /// A hop bit: set while any counter routed through it has its overflow recorded.
    pub fn hop_bit(&self, st: &SocketState, bit: &BitRef) -> Option<bool> {
        let hop = self.hops.iter().find(|h| same_bit(&h.bit, bit))?;
        Some(
            hop.feeders
                .iter()
                .any(|&(bi, n)| self.overflowed(st, bi, n)),
        )
    }

    /// The hop bits set in registers no public source gives an address for, as
    /// `REGISTER.field`.
    pub fn hidden_bits(&self, st: &SocketState) -> Vec<&'static str> {
        self.hops
            .iter()
            .filter(|h| h.bit.address().is_none())
            .filter(|h| self.hop_bit(st, &h.bit) == Some(true))
            .map(|h| h.bit.name())
            .collect()
    }

    /// The value a read returns: the stored value with the hop bits of this register as
    /// the counters below them make them.
    pub fn read(&self, st: &SocketState, reg: &Reg) -> u64 {
        let mut v = st.regs.get(reg);
        for h in &self.hops {
            let Some(r) = hop_reg(&h.bit) else { continue };
            if r.addr.location != reg.addr.location {
                continue;
            }
            let set = self.hop_bit(st, &h.bit) == Some(true);
            v = (v & !h.bit.field.mask()) | if set { h.bit.field.mask() } else { 0 };
        }
        v
    }

    /// Side effects of a write whose stored value and action bits (write-only and
    /// write-1-to-clear bits written as 1) are known.
    pub fn after_write(&self, st: &mut SocketState, reg: &Reg, raw: u64, actions: u64) {
        let loc = reg.addr.location;
        if actions != 0 || reg.info.fields.iter().any(|f| f.access == Access::Wo) {
            st.written.insert(loc, actions);
        }
        let stored = st.regs.get(reg);
        let acting = |f: &FieldInfo| f.extract(actions | stored) != 0;
        self.after_global_write(st, loc, actions, acting);
        let cleared = self.cleared_by(loc, actions);
        self.after_box_write(st, loc, raw, actions, cleared);
    }

    /// A write to the global control: a global reset resets every counter and control of
    /// the uncore (the global control keeps what was just written); the freeze-signal
    /// model's commands raise or lift the freeze of every box that lets it take effect.
    fn after_global_write(
        &self,
        st: &mut SocketState,
        loc: Location,
        actions: u64,
        acting: impl Fn(&FieldInfo) -> bool,
    ) {
        let Some(g) = self
            .boxes
            .global
            .as_ref()
            .filter(|g| g.control.addr.location == loc)
        else {
            return;
        };
        if g.info.field(Role::GlobalReset).is_some_and(acting) {
            self.reset_all(st, loc);
        }
        if let Some((freeze, unfreeze)) = g.info.freeze_signal() {
            if freeze.extract(actions) != 0 {
                st.signal = true;
            }
            if unfreeze.extract(actions) != 0 {
                st.signal = false;
                st.pending_freeze = None;
            }
        }
    }

    /// The counters (box, number) whose overflow a write at `loc` clears through a hop of
    /// their route: clearing a hop clears the counters below it, so the hierarchy stays
    /// consistent.
    fn cleared_by(&self, loc: Location, actions: u64) -> Vec<(usize, u32)> {
        let mut cleared = Vec::new();
        for (bi, b) in self.boxes.boxes.iter().enumerate() {
            for c in &b.counters {
                let Some(route) = c.route else { continue };
                let hit = route.hops.iter().filter_map(|h| h.clear).any(|clr| {
                    hop_reg(&clr).is_some_and(|r| r.addr.location == loc)
                        && clr.field.extract(actions) != 0
                });
                if hit {
                    cleared.push((bi, c.number()));
                }
            }
        }
        cleared
    }

    /// A write to a box's registers: its overflow clears, its resets and its counter
    /// controls' reset bits; then the overflow of every counter in `cleared` is cleared.
    fn after_box_write(
        &self,
        st: &mut SocketState,
        loc: Location,
        raw: u64,
        actions: u64,
        mut cleared: Vec<(usize, u32)>,
    ) {
        for (bi, b) in self.boxes.boxes.iter().enumerate() {
            // Box-level overflow clear.
            for clear in b.clears.iter().filter(|r| r.addr.location == loc) {
                for c in &b.counters {
                    if let Some(bits) = clear.info.role_bits(Role::OverflowClear, c.number()) {
                        if bits.extract(actions) != 0 {
                            cleared.push((bi, c.number()));
                        }
                    }
                }
            }
            // Box control: resets (a box of the no-reset fault profile keeps its counts).
            if let Some((r, f)) = b.box_field(Role::ResetCounters) {
                if r.addr.location == loc && f.extract(raw) != 0 && !self.no_reset.contains(&bi) {
                    for c in &b.counters {
                        st.regs.put(&c.counter, 0);
                    }
                }
            }
            if let Some((r, f)) = b.box_field(Role::ResetControls) {
                if r.addr.location == loc && f.extract(raw) != 0 {
                    for ctl in b.counters.iter().filter_map(|c| c.control) {
                        st.regs.put(&ctl, 0);
                    }
                }
            }
            // A counter control's reset bit.
            for c in &b.counters {
                if let (Some(ctl), Some(bits)) = (c.control, c.control_bits(Role::Reset)) {
                    if ctl.addr.location == loc && bits.extract(raw) != 0 {
                        self.set_count(st, c, 0);
                    }
                }
            }
        }
        for (bi, n) in cleared {
            st.latched.retain(|l| *l != (bi, n));
            if let Some((reg, bits)) = self.pmu_box(bi).box_bit(Role::Overflow, n) {
                let v = st.regs.get(&reg);
                st.regs.put(&reg, v & !bits.mask());
            }
        }
    }

    fn reset_all(&self, st: &mut SocketState, keep: Location) {
        for b in &self.boxes.boxes {
            for c in &b.counters {
                st.regs.put(&c.counter, 0);
                if let Some(ctl) = c.control {
                    st.regs.put(&ctl, 0);
                }
            }
            for r in b.controls.iter().chain(&b.statuses) {
                if r.addr.location != keep {
                    st.regs.put(r, 0);
                }
            }
        }
        if let Some(g) = &self.boxes.global {
            st.regs.put(&g.status, 0);
        }
        st.latched.clear();
        st.pending_freeze = None;
        st.pmi = false;
    }

    /// Raises or drops the freeze signal.
    pub fn set_freeze_signal(&self, st: &mut SocketState, on: bool) {
        st.signal = on;
    }

    /// Whether box `instance` is frozen now.
    pub fn is_frozen(&self, st: &SocketState, instance: &str) -> Option<bool> {
        self.find(instance)
            .map(|bi| self.frozen(st, self.pmu_box(bi)))
    }

    /// Clears the PMI latch (what handling the interrupt does).
    pub fn acknowledge_pmi(&self, st: &mut SocketState) {
        st.pmi = false;
    }

    /// The boxes with a packet filter that selects an event.
    pub fn filtered_instances(&self) -> Vec<&'static str> {
        self.boxes
            .boxes
            .iter()
            .filter(|b| b.pmu.filters.iter().any(|f| f.event.is_some()))
            .map(|b| b.instance)
            .collect()
    }
}

/// Whether control value `v` leaves one of the control's source masks (a field whose count
/// default is all ones: AMD's L3 thread and slice masks) at zero: the counter then observes
/// no thread or slice, and counts nothing, as the hardware does.
fn observes_nothing(control: &pmu_regs::RegisterInfo, v: u64) -> bool {
    control
        .fields
        .iter()
        .any(|f| f.count_default == Some(pmu_regs::CountDefault::AllOnes) && f.extract(v) == 0)
}
