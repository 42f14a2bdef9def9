//! The boxes of a processor as its spec's structure declares them ([`pmu_regs::PmuInfo`]),
//! with every register resolved to the address of each box instance: what the simulator,
//! the sampling code and `pmu watch` drive, for any processor, without naming a box or a
//! register.
//!
//! ```
//! use pmu_regs::Role;
//! use pmu_runtime::boxes::Boxes;
//!
//! let boxes = Boxes::of(&pmu_regs::xeon_7500::PROCESSOR);
//! let r = boxes.find("R").unwrap();
//! // The R-box's upper counters report through their own route.
//! let c9 = r.counter(9).unwrap();
//! assert_ne!(c9.route.unwrap().hops[0].bit.name(), r.counter(0).unwrap().route.unwrap().hops[0].bit.name());
//! assert!(r.box_bit(Role::CounterEnable, 9).is_some());
//! ```

use std::collections::HashMap;

use crate::error::UsageError;
use std::sync::{Mutex, OnceLock};

use pmu_regs::{
    AddressInfo, BitRef, CounterInfo, FieldInfo, GlobalInfo, Location, PmuInfo, ProcessorInfo,
    RegRef, RegisterInfo, Role, RoleBits, RouteInfo, Scope, UnitInfo,
};

/// The event select that stands for a box's fixed-event counters (the Xeon 7500 W-box's
/// uncore clock, the E5-2600 PCU's residency counters) where an event must be named: the
/// simulator counts an injected event with this code on them, and sampling asks for it.
pub const FIXED_EVENT: u16 = 0xFF;

/// One register instance (and array element): its layout and its address.
#[derive(Debug, Clone, Copy)]
pub struct Reg {
    /// The layout.
    pub info: &'static RegisterInfo,
    /// The instance's address.
    pub addr: &'static AddressInfo,
}

impl Reg {
    /// The instance of `register` in box `instance` (array element `index`), if it has an
    /// address.
    pub fn of(register: &'static RegisterInfo, instance: &str, index: u32) -> Option<Reg> {
        RegRef { register, index }
            .address(instance)
            .map(|addr| Reg {
                info: register,
                addr,
            })
    }

    /// The concrete name (`C3_MSR_PMON_EVT_SEL0`).
    pub fn name(&self) -> &'static str {
        self.addr.name
    }

    /// The MSR number, for an MSR.
    pub fn msr(&self) -> Option<u32> {
        match self.addr.location {
            Location::Msr(a) => Some(a),
            Location::Pci { .. }
            | Location::Mmio { .. }
            | Location::Table(_)
            | Location::SysReg(_) => None,
        }
    }
}

/// A counter of one box instance.
#[derive(Debug, Clone, Copy)]
pub struct Counter {
    /// What the spec says about it.
    pub info: &'static CounterInfo,
    /// Its control register (none for a free-running counter).
    pub control: Option<Reg>,
    /// Its counter register.
    pub counter: Reg,
    /// Where its overflow goes above the box (none where the box reports no overflow).
    pub route: Option<&'static RouteInfo>,
}

impl Counter {
    /// Its number in the box.
    pub fn number(&self) -> u32 {
        self.info.number
    }

    /// The bits of its control playing `role`.
    pub fn control_bits(&self, role: Role) -> Option<RoleBits> {
        self.info.control_bits(role)
    }

    /// The bits of its counter register that count.
    pub fn count_bits(&self) -> Option<RoleBits> {
        self.info.count_bits()
    }
}

/// What to count, in the terms the boxes' control registers use: one value for counting,
/// sampling and the perf encoder alike. Settings a box does not have (a umask on the B-box,
/// a threshold on the M-box) are refused rather than dropped; `None` leaves the control's
/// reset value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventSelect {
    /// Event select (the control's event role). A fixed counter counts only its own event,
    /// selected as [`FIXED_EVENT`]. Up to 16 bits: AMD's core select is 12 bits, its Data
    /// Fabric select 14, each a field of several bit ranges.
    pub ev_sel: u16,
    /// Unit mask (12 bits on AMD's PerfMonV2 Data Fabric).
    pub umask: Option<u16>,
    /// Threshold compared with the per-cycle increment.
    pub thresh: Option<u8>,
    /// Invert the threshold comparison.
    pub invert: Option<bool>,
    /// Count rising edges instead of cycles.
    pub edge_detect: Option<bool>,
    /// The event-select extension bit some events need (Intel's event lists mark them).
    pub event_ext: Option<bool>,
    /// Count the event on both hardware threads of the core (a core control's any-thread
    /// bit; some of Intel's core events set it).
    pub any_thread: Option<bool>,
    /// Count in user mode (the control's `user` role: USR, bit 16 of Intel's
    /// IA32_PERFEVTSELx and AMD's PerfEvtSeln); `None`: yes. `Some(false)` is perf's `:k`.
    pub user: Option<bool>,
    /// Count in the kernel (the `kernel` role: OS, bit 17); `None`: yes. `Some(false)` is
    /// perf's `:u`.
    pub kernel: Option<bool>,
    /// Filters no role covers that the event sets by field name (AMD's L3 thread and slice
    /// masks): each replaces the field's count default (`FieldInfo::count_default`). Only
    /// fields with a count default may be set this way.
    pub fields: FieldSettings,
    /// The counters the event may count on, bit n for counter n, where its list restricts
    /// them (an occupancy event of Intel's lists counts only on counter 0); `None`: any.
    pub counters: Option<u32>,
    /// The unit-mask extension some uncore events need (Intel's UMaskExt: a CHA's TOR
    /// opcode and cache-state match), written through the control's `umask-ext` role.
    pub umask_ext: Option<u32>,
    /// The IIO port mask (Intel's PortMask), through the control's `port-mask` role.
    pub port_mask: Option<u16>,
    /// The IIO traffic-class mask (Intel's FCMask), through the control's `fc-mask` role.
    pub fc_mask: Option<u8>,
    /// The auxiliary MSR a core event needs, and its value (Intel's `MSRIndex` and
    /// `MSRValue`: the offcore response, load-latency or front-end register). A counting
    /// session writes it beside the control and puts it back when it closes.
    pub aux: Option<pmu_regs::AuxMsr>,
}

/// Fields of a counter's control set by name, at most [`FieldSettings::CAPACITY`]: what an
/// [`EventSelect`] gives the filters no role covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FieldSettings([Option<(&'static str, u64)>; FieldSettings::CAPACITY]);

impl FieldSettings {
    /// How many fields one selection sets by name (AMD's Zen 3 L3 controls have five
    /// filters).
    pub const CAPACITY: usize = 6;

    /// No field set.
    pub const NONE: Self = Self([None; Self::CAPACITY]);

    /// Sets field `name` to `value` (replacing an earlier value); `false` when full.
    pub fn set(&mut self, name: &'static str, value: u64) -> bool {
        let slot = match self
            .0
            .iter()
            .position(|s| s.is_some_and(|(n, _)| n == name))
        {
            Some(i) => i,
            None => match self.0.iter().position(Option::is_none) {
                Some(i) => i,
                None => return false,
            },
        };
        self.0[slot] = Some((name, value));
        true
    }

    /// The value given to field `name`, if any.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every field set, as `(name, value)`.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.0.iter().flatten().copied()
    }
}

impl EventSelect {
    /// Event `ev_sel` with every other setting left at its reset value.
    pub const fn event(ev_sel: u16) -> Self {
        Self {
            ev_sel,
            umask: None,
            thresh: None,
            invert: None,
            edge_detect: None,
            event_ext: None,
            any_thread: None,
            user: None,
            kernel: None,
            fields: FieldSettings::NONE,
            counters: None,
            umask_ext: None,
            port_mask: None,
            fc_mask: None,
            aux: None,
        }
    }

    /// Whether the event may count on counter `n`.
    pub fn may_count_on(&self, n: u32) -> bool {
        self.counters
            .is_none_or(|m| n < u32::BITS && (m >> n) & 1 == 1)
    }

    /// The same event with field `name` (one with a count default) set to `value`, as
    /// [`FieldSettings::set`].
    pub fn with_field(mut self, name: &'static str, value: u64) -> Self {
        self.fields.set(name, value);
        self
    }

    /// The same event with a unit mask.
    pub const fn with_umask(mut self, umask: u16) -> Self {
        self.umask = Some(umask);
        self
    }
}

impl Counter {
    /// The control value that counts `sel` on this counter, with its overflow signal (the
    /// PMI) on if `pmi`: each setting written through the field playing its role, counting
    /// in every privilege level where the control tells them apart, enabled (its enable, or
    /// its ring-level enables where it has those instead). From the roles alone, so a setting
    /// the control lacks is refused before any access. Counting, sampling and the perf
    /// encoder all program a counter with this.
    pub fn control_value(&self, sel: &EventSelect, pmi: bool) -> crate::error::Result<u64> {
        let Some(ctl) = self.control else {
            return Err(UsageError::UnsupportedField {
                register: self.counter.name(),
                field: "control (a free-running counter cannot be programmed)",
            }
            .into());
        };
        let name = ctl.name();
        let mut raw = ctl.info.reset;
        let mut set = |role: Role, value: u64, setting: &'static str| -> crate::error::Result<()> {
            match self.control_bits(role) {
                Some(bits) => raw = bits.insert(name, raw, value)?,
                None if value == 0 => {}
                None => {
                    return Err(UsageError::UnsupportedField {
                        register: name,
                        field: setting,
                    }
                    .into())
                }
            }
            Ok(())
        };
        if self.info.kind == pmu_regs::CounterKind::General {
            set(Role::Event, u64::from(sel.ev_sel), "event select")?;
        } else if sel.ev_sel != FIXED_EVENT || sel.umask.is_some() || sel.thresh.is_some() {
            return Err(UsageError::UnsupportedField {
                register: name,
                field: "event select (a fixed counter counts only its own event, selected as 0xFF)",
            }
            .into());
        }
        let flag = |v: Option<bool>| v.map_or(0, u64::from);
        set(Role::Umask, sel.umask.map_or(0, u64::from), "umask")?;
        set(
            Role::Threshold,
            sel.thresh.map_or(0, u64::from),
            "threshold",
        )?;
        set(Role::Invert, flag(sel.invert), "invert")?;
        set(Role::Edge, flag(sel.edge_detect), "edge detect")?;
        set(
            Role::EventExt,
            flag(sel.event_ext),
            "event-select extension",
        )?;
        set(Role::AnyThread, flag(sel.any_thread), "any-thread")?;
        set(
            Role::UmaskExt,
            sel.umask_ext.map_or(0, u64::from),
            "unit-mask extension",
        )?;
        set(
            Role::PortMask,
            sel.port_mask.map_or(0, u64::from),
            "port mask",
        )?;
        set(
            Role::FcMask,
            sel.fc_mask.map_or(0, u64::from),
            "traffic-class mask",
        )?;
        set(
            Role::OverflowEnable,
            u64::from(pmi),
            "overflow (PMI) enable",
        )?;
        for (role, on) in self.privileges(sel)? {
            if self.control_bits(role).is_some() {
                set(role, u64::from(on), "privilege level")?;
            }
        }
        if let Some((role, value)) = self.enable_setting() {
            set(role, value, "enable")?;
        }
        count_defaults(ctl, raw, &sel.fields)
    }

    /// What starts the counter in its control: its enable bit, its ring-enable bits (every
    /// ring), or nothing where the box's counter-enable bit starts it (Arm's PMCNTENSET_EL0).
    fn enable_setting(&self) -> Option<(Role, u64)> {
        match (
            self.control_bits(Role::Enable),
            self.control_bits(Role::RingEnable),
        ) {
            (None, Some(ring)) => Some((Role::RingEnable, ring.max())),
            (None, None) => None,
            _ => Some((Role::Enable, 1)),
        }
    }
}

impl Counter {
    /// Whether `sel` counts in user mode and in the kernel (both unless it says otherwise),
    /// by role; refused where it counts in neither, or leaves one out on a control that does
    /// not tell the modes apart (it would count both).
    fn privileges(&self, sel: &EventSelect) -> crate::error::Result<[(Role, bool); 2]> {
        let register = self.control.map_or(self.counter.name(), |c| c.name());
        let (user, kernel) = (sel.user.unwrap_or(true), sel.kernel.unwrap_or(true));
        if !user && !kernel {
            return Err(UsageError::UnsupportedField {
                register,
                field: "privilege level (neither user mode nor the kernel: it would count nothing)",
            }
            .into());
        }
        for (role, on) in [(Role::User, user), (Role::Kernel, kernel)] {
            if !on && self.control_bits(role).is_none() {
                return Err(UsageError::UnsupportedField {
                    register,
                    field: "privilege level (the control counts every mode alike)",
                }
                .into());
            }
        }
        Ok([(Role::User, user), (Role::Kernel, kernel)])
    }
}

/// The control value `raw` with every field that has a count default set to the value
/// `fields` gives it, or else to its default: the filters (thread and slice masks) that
/// count nothing at their reset value. A field `fields` names that has no count default in
/// this control is refused.
fn count_defaults(ctl: Reg, raw: u64, fields: &FieldSettings) -> crate::error::Result<u64> {
    let name = ctl.name();
    if let Some((field, _)) = fields.iter().find(|(f, _)| {
        !ctl.info
            .fields
            .iter()
            .any(|i| i.name == *f && i.count_default.is_some())
    }) {
        return Err(UsageError::UnsupportedField {
            register: name,
            field,
        }
        .into());
    }
    let mut raw = raw;
    for f in ctl.info.fields {
        let Some(default) = f.count_default else {
            continue;
        };
        let value = fields.get(f.name).unwrap_or(default.value(f.width()));
        raw = f.insert(name, raw, value)?;
    }
    Ok(raw)
}

/// A box as a session counts it: where (the CPU it is reached through, its socket) and
/// which events, in the order the selection gives them.
#[derive(Debug, Clone, Copy)]
pub struct CountedBox<'a> {
    /// The box.
    pub pmu_box: &'a PmuBox,
    /// The CPU it is reached through.
    pub cpu: u32,
    /// Its socket.
    pub socket: u32,
    /// The events counted on it.
    pub events: &'a [EventSelect],
}

/// One box (an instance of a unit) and its resolved registers.
#[derive(Debug, Clone)]
pub struct PmuBox {
    /// The unit (box kind).
    pub unit: &'static UnitInfo,
    /// Its structure.
    pub pmu: &'static PmuInfo,
    /// The instance name (`C3`, `CH2`, `CPU`).
    pub instance: &'static str,
    /// Its position among the unit's instances.
    pub position: usize,
    /// Counters, by number.
    pub counters: Vec<Counter>,
    /// Box-level controls, statuses and overflow clears with addresses in this instance.
    pub controls: Vec<Reg>,
    /// See [`Self::controls`].
    pub statuses: Vec<Reg>,
    /// See [`Self::controls`].
    pub clears: Vec<Reg>,
}

impl PmuBox {
    /// Whether its counters are system registers (Arm's), which only code on the CPU reaches:
    /// user space counts them through the kernel's perf PMU, and the simulator does not model
    /// them.
    pub fn through_perf_only(&self) -> bool {
        self.counters
            .iter()
            .any(|c| matches!(c.counter.addr.location, Location::SysReg(_)))
    }

    /// Whether its counters are in a page a firmware table places (space `table`: a
    /// CoreSight PMU the APMT lists, NVIDIA's SCF): no machine of ours has it at a fixed
    /// address, so only `crate::cspmu` (through the place the table gives) and the kernel's
    /// perf PMU reach it.
    pub fn placed_by_firmware(&self) -> bool {
        self.counters
            .iter()
            .any(|c| matches!(c.counter.addr.location, Location::Table(_)))
    }

    /// Counter `number`.
    pub fn counter(&self, number: u32) -> Option<&Counter> {
        self.counters.iter().find(|c| c.number() == number)
    }

    /// The free-running counter `sel` selects, as the kernel's perf driver does: event
    /// [`FIXED_EVENT`] with the unit mask the spec gives the counter (`bw_in_port0`:
    /// `event=0xff,umask=0x20`).
    pub fn free_running(&self, sel: &EventSelect) -> Option<&Counter> {
        if sel.ev_sel != FIXED_EVENT {
            return None;
        }
        let umask = sel.umask?;
        self.counters.iter().find(|c| {
            c.info.kind == pmu_regs::CounterKind::FreeRunning
                && c.info
                    .perf_event
                    .is_some_and(|p| u16::from(p.umask) == umask)
        })
    }

    /// The free-running counter whose kernel event is `name` (`bw_in_port0`).
    pub fn free_running_named(&self, name: &str) -> Option<&Counter> {
        self.counters
            .iter()
            .find(|c| c.info.perf_event.is_some_and(|p| p.name == name))
    }

    /// The counter that counts each of `sels`, in order: a free-running counter where the
    /// event selects one ([`Self::free_running`]), else the next general counter; events
    /// beyond the general counters take turns on them (the `k`-th on counter `k mod n`).
    /// Refused when the box has no general counter for an event, when a free-running
    /// counter is asked for twice, or when turns would mix with free-running counters on
    /// one box (turns rotate every event of a box).
    pub fn assign(&self, sels: &[EventSelect]) -> Result<Vec<&Counter>, UsageError> {
        if self.table_placed() && self.counters.is_empty() {
            return Err(UsageError::NoSuchCounter {
                counter: format!("a counter of {} at a known address", self.instance),
                available: "none here: the part's discovery table places this box (the spec's \
                            <from-table>), and it has not been placed from a joined table \
                            (pmu_runtime::table_placed); `pmu discover` shows where the table \
                            puts it, and the kernel's perf PMU counts it (--backend perf)"
                    .to_string(),
            });
        }
        let general: Vec<&Counter> = self
            .counters
            .iter()
            .filter(|c| c.info.kind == pmu_regs::CounterKind::General && c.control.is_some())
            .collect();
        let free_running = sels
            .iter()
            .filter(|s| self.free_running(s).is_some())
            .count();
        let on_general = sels.len() - free_running;
        if free_running > 0 && on_general > general.len() {
            return Err(UsageError::NoSuchCounter {
                counter: format!(
                    "{on_general} events on the general counters of {} beside free-running ones",
                    self.instance
                ),
                available: format!(
                    "{}; counting in turns does not take free-running counters: count them in \
                     a run of their own",
                    self.offers()
                ),
            });
        }
        let mut out: Vec<&Counter> = Vec::with_capacity(sels.len());
        let mut k = 0;
        for (i, sel) in sels.iter().enumerate() {
            let c = match self.free_running(sel) {
                Some(c) if out.iter().any(|o| o.number() == c.number()) => {
                    return Err(UsageError::DuplicateCounter {
                        counter: format!("{} counter {}", self.instance, c.number()),
                    })
                }
                Some(c) => c,
                None => {
                    let c = general.get(k % general.len().max(1)).copied();
                    k += 1;
                    c.ok_or_else(|| UsageError::NoSuchCounter {
                        counter: format!(
                            "general counter for event {} in {}",
                            i + 1,
                            self.instance
                        ),
                        available: self.offers(),
                    })?
                }
            };
            out.push(c);
        }
        Ok(out)
    }

    /// Whether the part's uncore discovery table places this box: its unit's structure
    /// registers have no fixed address, only a place relative to the box's table entry (the
    /// spec's `<from-table>`), so the box has no resolved registers here.
    pub fn table_placed(&self) -> bool {
        table_placed(self.pmu)
    }

    /// What the box offers events, for messages: its general counters, and the kernel
    /// events of its free-running ones.
    pub fn offers(&self) -> String {
        let general = self
            .counters
            .iter()
            .filter(|c| c.info.kind == pmu_regs::CounterKind::General && c.control.is_some())
            .count();
        let free: Vec<String> = self
            .counters
            .iter()
            .filter_map(|c| c.info.perf_event)
            .map(|p| format!("{} (event=0xff,umask=0x{:x})", p.name, p.umask))
            .collect();
        match (general, free.is_empty()) {
            (g, true) => format!("{g} general counters"),
            (0, false) => format!("the free-running counters {}", free.join(", ")),
            (g, false) => format!(
                "{g} general counters and the free-running counters {}",
                free.join(", ")
            ),
        }
    }

    /// The box-level register and bits playing `role` for counter `number`.
    pub fn box_bit(&self, role: Role, number: u32) -> Option<(Reg, RoleBits)> {
        self.controls
            .iter()
            .chain(&self.statuses)
            .chain(&self.clears)
            .find_map(|r| r.info.role_bits(role, number).map(|b| (*r, b)))
    }

    /// The box-level control field playing a whole-box `role` (freeze, resets).
    pub fn box_field(&self, role: Role) -> Option<(Reg, &'static FieldInfo)> {
        self.controls
            .iter()
            .find_map(|r| r.info.role(role).map(|f| (*r, f)))
    }

    /// Per socket or per CPU.
    pub fn scope(&self) -> Scope {
        self.pmu.scope
    }

    /// The names a user may give it: the instance (`C3`), and the unit's name with the
    /// instance's position (`CBO3`), or the unit's name alone when it has one instance
    /// (`PCU`, `CORE`).
    pub fn names(&self) -> Vec<String> {
        let mut names = vec![self.instance.to_string()];
        if self.unit.instances.len() == 1 {
            names.push(self.unit.name.to_string());
        } else {
            names.push(format!("{}{}", self.unit.name, self.position));
        }
        names.dedup();
        names
    }
}

/// The global level of a processor, resolved.
#[derive(Debug, Clone, Copy)]
pub struct Global {
    /// What the spec says.
    pub info: &'static GlobalInfo,
    /// Global control.
    pub control: Reg,
    /// Global status.
    pub status: Reg,
    /// Global overflow clear.
    pub clear: Option<Reg>,
}

/// Every box of a processor.
#[derive(Debug)]
pub struct Boxes {
    /// The processor.
    pub processor: &'static ProcessorInfo,
    /// Its boxes, unit by unit, instance by instance.
    pub boxes: Vec<PmuBox>,
    /// Its global level, if it has one.
    pub global: Option<Global>,
}

impl Boxes {
    /// The boxes of `processor`, built once per processor.
    pub fn of(processor: &'static ProcessorInfo) -> &'static Boxes {
        static CACHE: OnceLock<Mutex<HashMap<usize, &'static Boxes>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let key = processor as *const ProcessorInfo as usize;
        let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
        // One leak per processor for the life of the program: the metadata is static too.
        map.entry(key)
            .or_insert_with(|| Box::leak(Box::new(Self::build(processor))))
    }

    fn build(processor: &'static ProcessorInfo) -> Boxes {
        let mut boxes = Vec::new();
        for unit in processor.units {
            let Some(pmu) = unit.pmu else { continue };
            for (position, &instance) in unit.instances.iter().enumerate() {
                let resolve = |regs: &'static [&'static RegisterInfo]| -> Vec<Reg> {
                    regs.iter()
                        .flat_map(|r| {
                            r.known_addresses()
                                .iter()
                                .filter(|a| a.instance == instance)
                                .map(|addr| Reg { info: r, addr })
                        })
                        .collect()
                };
                let counters = pmu
                    .counters
                    .iter()
                    .filter_map(|c| {
                        Some(Counter {
                            info: c,
                            control: c
                                .control
                                .and_then(|r| Reg::of(r.register, instance, r.index)),
                            counter: Reg::of(c.counter.register, instance, c.counter.index)?,
                            route: pmu.route(instance, c.number),
                        })
                    })
                    .collect();
                boxes.push(PmuBox {
                    unit,
                    pmu,
                    instance,
                    position,
                    counters,
                    controls: resolve(pmu.controls),
                    statuses: resolve(pmu.statuses),
                    clears: resolve(pmu.overflow_clears),
                });
            }
        }
        let global = processor.global.and_then(|g| {
            Some(Global {
                info: g,
                control: Reg::of(g.control, g.instance, 0)?,
                status: Reg::of(g.status, g.instance, 0)?,
                clear: g.overflow_clear.and_then(|c| Reg::of(c, g.instance, 0)),
            })
        });
        Boxes {
            processor,
            boxes,
            global,
        }
    }

    /// The box called `name` (see [`PmuBox::names`]), ignoring case.
    pub fn find(&self, name: &str) -> Option<&PmuBox> {
        self.boxes
            .iter()
            .find(|b| b.names().iter().any(|n| n.eq_ignore_ascii_case(name)))
    }

    /// Every box's names, for messages (`C3/CBO3`).
    pub fn names(&self) -> Vec<String> {
        self.boxes.iter().map(|b| b.names().join("/")).collect()
    }
}

/// Whether the discovery table places the boxes of `pmu` (its box control or a counter is
/// `<from-table>` in the spec: the validator makes the structure all or nothing).
pub fn table_placed(pmu: &PmuInfo) -> bool {
    let placed = |r: &RegisterInfo| matches!(r.addresses, pmu_regs::Addresses::FromTable(_));
    pmu.controls.iter().any(|r| placed(r))
        || pmu.counters.iter().any(|c| placed(c.counter.register))
}

/// A route hop's register, as a [`Reg`], when it has an address.
pub fn hop_reg(bit: &BitRef) -> Option<Reg> {
    bit.address().map(|addr| Reg {
        info: bit.register,
        addr,
    })
}
