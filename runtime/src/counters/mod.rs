//! Counting on any box of any processor, driven by the structure its spec declares: program
//! counters through their controls' roles, enable them at box and global level, read them,
//! and put everything back. Beneath the sampling procedures, the counting sessions and the
//! simulated perf driver, all of which program boxes through it; it reaches registers only
//! through the access traits ([`Registers`]).
//!
//! ```
//! use pmu_runtime::boxes::Boxes;
//! use pmu_runtime::counters::Counting;
//! use pmu_runtime::boxes::EventSelect;
//! use pmu_runtime::sim::{Sim, SimConfig, UncoreEvent};
//!
//! let sim = Sim::new(SimConfig::default());
//! let boxes = Boxes::of(&pmu_regs::xeon_7500::PROCESSOR);
//! let mut c3 = Counting::open(&sim, boxes, boxes.find("C3").unwrap(), 0, 0, None)?;
//! let n = c3.program(&[EventSelect::event(0x01)])?[0];
//! sim.inject_uncore(0, UncoreEvent { instance: "C3", ev_sel: 0x01, umask: None }, 42)?;
//! assert_eq!(c3.read_counter(n)?, 42);
//! c3.close()?; // every register as it was
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

mod aux_msr;

pub use aux_msr::aux_agree;
use std::sync::{Arc, Mutex};

use pmu_regs::{CounterKind, Role, Scope};

use crate::access::{MmioAccess, MsrAccess, PciAccess, Site, UncoreDevices, UncoreSummary};
use crate::boxes::{Boxes, Counter, EventSelect, Global, PmuBox, Reg};
use crate::error::{Error, Result, UsageError};
use crate::ownership::{check_idle_on, Lease, Ownership, Pmu};
use crate::quirks::{global_inits, saturation_bit, Quirks};

/// Everything the procedures that program boxes need of a backend: MSRs, PCI configuration
/// space, the uncore's summary signals, and claims on PMUs. Every backend with the four has
/// it.
pub trait Registers: MsrAccess + PciAccess + MmioAccess + UncoreSummary + Ownership {}

impl<B: MsrAccess + PciAccess + MmioAccess + UncoreSummary + Ownership + ?Sized> Registers for B {}

/// Where a session's registers are reached: MSRs through a CPU, PCI registers through the
/// socket's devices.
pub(crate) struct RegIo<'a, B: ?Sized> {
    pub backend: &'a B,
    pub cpu: u32,
    pub socket: usize,
    pub devices: Option<UncoreDevices>,
}

impl<B: MsrAccess + PciAccess + MmioAccess + ?Sized> RegIo<'_, B> {
    pub fn place(&self, reg: &Reg) -> Result<Site> {
        // A PCI or memory-mapped box the discovery table placed is where its socket's table says.
        if let Some(site) = crate::table_placed::site(reg.addr, self.socket) {
            return site.map_err(|why| {
                UsageError::BadValue {
                    text: reg.name().to_string(),
                    expected: why,
                }
                .into()
            });
        }
        match reg.addr.location {
            pmu_regs::Location::Msr(_) => Ok(Site::Cpu(self.cpu)),
            pmu_regs::Location::Pci {
                device_id,
                device,
                function,
                ..
            } => {
                let devices = self.devices.as_ref().ok_or(UsageError::BadValue {
                    text: reg.name().to_string(),
                    expected: "the socket's uncore PCI devices (this box is in PCI space)".into(),
                })?;
                Ok(Site::Device(devices.bdf_at(
                    self.socket,
                    device_id,
                    device,
                    function,
                    reg.name(),
                )?))
            }
            pmu_regs::Location::Mmio { .. } => {
                let devices = self.devices.as_ref().ok_or(UsageError::BadValue {
                    text: reg.name().to_string(),
                    expected: "the socket's uncore PCI devices (this box's window base is in PCI config space)".into(),
                })?;
                Ok(crate::access::place_of(
                    self.backend,
                    devices,
                    self.socket,
                    reg.info,
                    reg.addr,
                )?)
            }
            pmu_regs::Location::Table(_) => Err(UsageError::BadValue {
                text: reg.name().to_string(),
                expected: "a box register at a fixed address (this one is at an offset in a \
                           structure found at run time: a discovery-table layout, which `pmu \
                           discover` reads, or a CoreSight PMU's page the APMT places, which the \
                           kernel's perf PMU counts: `pmu encode ... --perf` gives its event)"
                    .into(),
            }
            .into()),
            pmu_regs::Location::SysReg(_) => Err(UsageError::BadValue {
                text: reg.name().to_string(),
                expected: crate::access::SYSREG_NOT_RAW.into(),
            }
            .into()),
        }
    }

    pub fn read(&self, reg: &Reg) -> Result<u64> {
        Ok(crate::access::read_by_info(
            self.backend,
            reg.info,
            reg.addr,
            self.place(reg)?,
        )?)
    }

    pub fn write(&self, reg: &Reg, raw: u64) -> Result<()> {
        Ok(crate::access::write_by_info(
            self.backend,
            reg.info,
            reg.addr,
            self.place(reg)?,
            raw,
        )?)
    }
}

/// Runs `program`; if it fails, runs `undo` and reports both failures if that fails too.
pub fn rolled_back<T>(
    program: impl FnOnce() -> Result<T>,
    undo: impl FnOnce() -> Result<()>,
) -> Result<T> {
    match program() {
        Ok(v) => Ok(v),
        Err(error) => match undo() {
            Ok(()) => Err(error),
            Err(cleanup) => Err(Error::Cleanup {
                error: Box::new(error),
                cleanup: Box::new(cleanup),
            }),
        },
    }
}

/// The counters of one box, owned by this session while the value lives.
pub struct Counting<'a, B: Registers + ?Sized> {
    io: RegIo<'a, B>,
    pmu_box: &'static PmuBox,
    global: Option<&'static Global>,
    programmed: Vec<u32>,
    /// How many of the box's general counters the part has, where fewer than the spec's
    /// ([`Self::limit_general`]).
    on_part: Option<usize>,
    /// The auxiliary MSRs this session set for its events, and their values.
    aux: Vec<(Reg, u64)>,
    saved: Vec<(Reg, u64)>,
    boxes: &'static Boxes,
    claimed: Pmu,
    lease: Arc<Lease>,
    /// Which of the spec's quirks this session handles.
    quirks: Quirks,
    /// Saturating counters ([`saturation_bit`]): what each counted before its last reset,
    /// by counter number, so readings go on from there.
    bases: Mutex<Vec<(u32, u64)>>,
}

impl<'a, B: Registers + ?Sized> Counting<'a, B> {
    /// Claims `pmu_box` of `boxes`, reached through `cpu` (for MSRs; the CPU itself for a
    /// per-CPU box) and, for a box in PCI space, its device on `socket` among `devices`.
    /// Boxes under one global control (the Xeon 7500's) share one claim per socket.
    pub fn open(
        backend: &'a B,
        boxes: &'static Boxes,
        pmu_box: &'static PmuBox,
        cpu: u32,
        socket: usize,
        devices: Option<UncoreDevices>,
    ) -> Result<Self> {
        let pmu = Pmu::of_box(boxes, pmu_box, cpu, socket);
        let lease = Arc::new(backend.claim(&pmu)?);
        Ok(Self::with_lease(
            backend, boxes, pmu_box, cpu, socket, devices, pmu, lease,
        ))
    }

    /// Opens another box beside this one. Where both belong to one PMU (two boxes of a Xeon
    /// 7500 socket, under its one global control) the new session shares this one's claim;
    /// otherwise it claims its own. Close the later one first: each puts back what it found.
    pub fn open_beside(
        &self,
        pmu_box: &'static PmuBox,
        cpu: u32,
        socket: usize,
        devices: Option<UncoreDevices>,
    ) -> Result<Self> {
        let pmu = Pmu::of_box(self.boxes, pmu_box, cpu, socket);
        if pmu == self.claimed {
            return Ok(Self::with_lease(
                self.io.backend,
                self.boxes,
                pmu_box,
                cpu,
                socket,
                devices,
                pmu,
                Arc::clone(&self.lease),
            ));
        }
        Self::open(self.io.backend, self.boxes, pmu_box, cpu, socket, devices)
    }

    /// Whether a session on `pmu_box` (through `cpu`, on `socket`) would claim the PMU this
    /// one holds, so that [`Self::open_beside`] shares the claim.
    pub fn shares_pmu(&self, pmu_box: &'static PmuBox, cpu: u32, socket: usize) -> bool {
        Pmu::of_box(self.boxes, pmu_box, cpu, socket) == self.claimed
    }

    #[allow(clippy::too_many_arguments)]
    fn with_lease(
        backend: &'a B,
        boxes: &'static Boxes,
        pmu_box: &'static PmuBox,
        cpu: u32,
        socket: usize,
        devices: Option<UncoreDevices>,
        claimed: Pmu,
        lease: Arc<Lease>,
    ) -> Self {
        // Per-CPU boxes have their own global level (IA32_PERF_GLOBAL_CTRL is a box control
        // there); an uncore's global level governs every box of the socket.
        let global = match pmu_box.scope() {
            Scope::Socket => boxes.global.as_ref(),
            Scope::Cpu | Scope::L3 => None,
        };
        Self {
            io: RegIo {
                backend,
                cpu,
                socket,
                devices,
            },
            pmu_box,
            global,
            programmed: Vec::new(),
            on_part: None,
            aux: Vec::new(),
            saved: Vec::new(),
            boxes,
            claimed,
            lease,
            quirks: Quirks::ALL,
            bases: Mutex::new(Vec::new()),
        }
    }

    /// Which of the spec's quirks this session handles ([`Quirks::ALL`] unless set); set it
    /// before programming.
    pub fn set_quirks(&mut self, quirks: Quirks) {
        self.quirks = quirks;
    }

    /// The `<global-init>` registers this session writes when it programs: every one of the
    /// processor's, for a box of the uncore (per socket), with [`Quirks::global_init`].
    fn global_init(&self) -> Vec<(Reg, &'static pmu_regs::GlobalInitInfo)> {
        if !self.quirks.global_init || self.pmu_box.scope() != Scope::Socket {
            return Vec::new();
        }
        global_inits(self.boxes)
    }

    /// The bit at which this box's counters are reset, where they saturate and
    /// [`Quirks::saturation`] is on.
    fn saturation(&self) -> Option<u32> {
        saturation_bit(self.pmu_box).filter(|_| self.quirks.saturation)
    }

    /// The box.
    pub fn pmu_box(&self) -> &'static PmuBox {
        self.pmu_box
    }

    fn read(&self, reg: &Reg) -> Result<u64> {
        self.io.read(reg)
    }

    fn write(&self, reg: &Reg, raw: u64) -> Result<()> {
        self.io.write(reg, raw)
    }

    /// The counters that count a selected event, in number order: what [`Self::program`]
    /// hands out. Only the first [`Self::limit_general`] of them where a limit is set.
    pub fn general_counters(&self) -> Vec<&'static Counter> {
        self.pmu_box
            .counters
            .iter()
            .filter(|c| c.info.kind == CounterKind::General && c.control.is_some())
            .take(self.on_part.unwrap_or(usize::MAX))
            .collect()
    }

    /// Keeps this session to the box's first `n` general counters (at least one): where the
    /// part has fewer than its spec lists, as the CPUID bits of the counters' `count-cpuid`
    /// say (an Intel core has 4 per thread with Hyper-Threading on and 8 without; a session
    /// reads it with the machine's `cpuid_count`). [`Self::program`] then places events
    /// only on counters the part has: an event allowed more counters without Hyper-Threading
    /// ([`pmu_regs::EventInfo::counters_without_ht`]) takes them only where the part
    /// reports them.
    pub fn limit_general(&mut self, n: usize) {
        self.on_part = Some(n.max(1));
    }

    /// Programs the next free general counters for `sels`, one each, enables them at box
    /// and global level, and returns their numbers. An event that selects a free-running
    /// counter ([`PmuBox::free_running`]) takes that counter, which needs no programming:
    /// it is only read. Everything is checked before the first access; a failed write puts
    /// back what was changed.
    pub fn program(&mut self, sels: &[EventSelect]) -> Result<Vec<u32>> {
        let box_ = self.pmu_box;
        let aux = self.aux_plan(sels)?;
        let mut placed = self.placement(sels)?.into_iter();
        let mut numbers = Vec::with_capacity(sels.len());
        let mut plan: Vec<(&Counter, u64)> = Vec::new();
        for sel in sels {
            if let Some(c) = box_.free_running(sel) {
                if self.programmed.contains(&c.number()) || numbers.contains(&c.number()) {
                    return Err(UsageError::DuplicateCounter {
                        counter: format!("{} counter {}", box_.instance, c.number()),
                    }
                    .into());
                }
                numbers.push(c.number());
                continue;
            }
            let c = placed
                .next()
                .expect("placement gives each general event a counter");
            numbers.push(c.number());
            plan.push((c, c.control_value(sel, false)?));
        }
        if !plan.is_empty() || !aux.is_empty() {
            self.program_plan(&plan, &aux)?;
        }
        // The free-running counters are taken too (program_plan took the general ones).
        for n in &numbers {
            if !self.programmed.contains(n) {
                self.programmed.push(*n);
            }
        }
        Ok(numbers)
    }

    /// The free general counters [`Self::program`] gives the events of `sels` that are not
    /// free-running, in their order: each on a counter its list allows
    /// ([`EventSelect::counters`]), as [`place`] places them: events free to count anywhere
    /// take the free counters in order. Refused, naming the
    /// event, when there are too few counters or none is left that an event may count on.
    fn placement(&self, sels: &[EventSelect]) -> Result<Vec<&'static Counter>> {
        let box_ = self.pmu_box;
        let free: Vec<&'static Counter> = self
            .general_counters()
            .into_iter()
            .filter(|c| !self.programmed.contains(&c.number()))
            .collect();
        let general: Vec<&EventSelect> = sels
            .iter()
            .filter(|s| box_.free_running(s).is_none())
            .collect();
        let numbers: Vec<u32> = free.iter().map(|c| c.number()).collect();
        if let Some(at) = place(&numbers, &general) {
            return Ok(at.into_iter().map(|i| free[i]).collect());
        }
        let counter = match general.iter().position(|s| s.counters.is_some()) {
            Some(_) if general.len() <= free.len() => {
                let allowed: Vec<String> = general
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| {
                        let m = s.counters?;
                        let on: Vec<String> = (0..u32::BITS)
                            .filter(|n| (m >> n) & 1 == 1)
                            .map(|n| n.to_string())
                            .collect();
                        let which = match on.as_slice() {
                            [one] => format!("counter {one}"),
                            more => format!("counters {}", more.join(", ")),
                        };
                        Some(format!("event {} counts only on {which}", i + 1))
                    })
                    .collect();
                format!(
                    "way to give each event a free counter of {} its list allows: {} (count \
                     such events in separate runs)",
                    box_.instance,
                    allowed.join(", ")
                )
            }
            _ => format!(
                "free counter for event {} in {}",
                free.len() + 1,
                box_.instance
            ),
        };
        Err(UsageError::NoSuchCounter {
            counter,
            available: box_.offers(),
        }
        .into())
    }

    /// Refuses, before anything is written, a counter [`Self::program`] would hand out for
    /// `sels` that is already enabled (another tool's, or left by a killed
    /// session), naming it, unless the backend takes counters over
    /// ([`Ownership::takes_over`]). `program` checks this too; a session checks every box
    /// first, so that nothing is written when a later box is refused.
    pub fn check_free(&self, sels: &[EventSelect]) -> Result<()> {
        self.aux_plan(sels)?;
        let free = self.placement(sels)?;
        if self.io.backend.takes_over() {
            return Ok(());
        }
        let found = free
            .iter()
            .filter_map(|c| c.control)
            .map(|r| Ok((r, self.read(&r)? & !r.info.reserved_mask)))
            .collect::<Result<Vec<_>>>()?;
        check_idle_on(&self.claimed, free, &found, false)
    }

    /// Programs general counters with whole control values, as a kernel driver programs a
    /// perf event's config: `(counter number, control value)`, the value's enable included.
    /// Enables them at box and global level; a failed write puts back what was changed.
    pub fn program_controls(&mut self, controls: &[(u32, u64)]) -> Result<Vec<u32>> {
        let plan: Vec<(&'static Counter, u64)> = controls
            .iter()
            .map(|&(n, raw)| {
                let c = self
                    .general_counters()
                    .into_iter()
                    .find(|c| c.number() == n && !self.programmed.contains(&n))
                    .ok_or_else(|| UsageError::NoSuchCounter {
                        counter: format!("free general counter {n} in {}", self.pmu_box.instance),
                        available: format!("{} general counters", self.general_counters().len()),
                    })?;
                Ok((c, raw))
            })
            .collect::<Result<_>>()?;
        self.program_plan(&plan, &[])
    }

    /// What programming `plan` changes: the auxiliary MSRs, the controls and counters, the
    /// box-level enables, the global control and the global-init registers.
    fn touched(
        &self,
        plan: &[(&'static Counter, u64)],
        aux: &[(Reg, u64)],
        inits: &[(Reg, &'static pmu_regs::GlobalInitInfo)],
    ) -> Vec<Reg> {
        let mut touched: Vec<Reg> = aux.iter().map(|(r, _)| *r).collect();
        for (c, _) in plan {
            touched.extend(c.control);
            touched.push(c.counter);
            if let Some((r, _)) = self.pmu_box.box_bit(Role::CounterEnable, c.number()) {
                touched.push(r);
            }
        }
        if let Some(g) = self.global.filter(|_| !plan.is_empty()) {
            touched.push(g.control);
        }
        touched.extend(inits.iter().map(|(r, _)| *r));
        touched
    }

    /// Writes `aux` (auxiliary MSRs and their values) and then the controls of `plan`, and
    /// enables those counters at box and global level, each register saved first; a failed
    /// write puts back what was changed.
    fn program_plan(
        &mut self,
        plan: &[(&'static Counter, u64)],
        aux: &[(Reg, u64)],
    ) -> Result<Vec<u32>> {
        let inits = if plan.is_empty() {
            Vec::new()
        } else {
            self.global_init()
        };
        let touched = self.touched(plan, aux, &inits);
        let mut saved = Vec::new();
        for r in touched {
            if saved
                .iter()
                .any(|(s, _): &(Reg, u64)| s.addr.location == r.addr.location)
            {
                continue;
            }
            saved.push((r, self.read(&r)? & !r.info.reserved_mask));
        }
        check_idle_on(
            &self.claimed,
            plan.iter().map(|(c, _)| *c),
            &saved,
            self.io.backend.takes_over(),
        )?;
        let numbers: Vec<u32> = plan.iter().map(|(c, _)| c.number()).collect();
        rolled_back(
            || {
                for (r, value) in aux {
                    self.write(r, *value)?;
                }
                for (c, raw) in plan {
                    let ctl = c.control.expect("general counters have a control");
                    self.write(&ctl, *raw)?;
                    self.enable_in_box(c.number())?;
                }
                if plan.is_empty() {
                    return Ok(());
                }
                for (r, g) in &inits {
                    self.modify(r, |v| Ok(g.field.insert(r.name(), v, g.write)?))?;
                }
                self.enable_globally()
            },
            || self.restore(&saved),
        )?;
        self.aux.extend_from_slice(aux);
        // The first save of a register is what it was before this session.
        for s in saved {
            if !self
                .saved
                .iter()
                .any(|(r, _)| r.addr.location == s.0.addr.location)
            {
                self.saved.push(s);
            }
        }
        self.programmed.extend(&numbers);
        Ok(numbers)
    }

    /// Writes control value `raw` (one [`Counter::control_value`] made) on general counter
    /// `number`, which this session already programmed: what counting in turns does at each
    /// turn. Its registers were saved when first programmed, so [`Self::close`] still puts
    /// back what was found. A counter this session did not program is refused.
    pub fn reprogram(&self, number: u32, raw: u64) -> Result<()> {
        let control = self
            .general_counters()
            .into_iter()
            .find(|c| c.number() == number && self.programmed.contains(&number))
            .and_then(|c| c.control)
            .ok_or_else(|| UsageError::NoSuchCounter {
                counter: format!(
                    "programmed general counter {number} in {}",
                    self.pmu_box.instance
                ),
                available: format!("counters {:?}", self.programmed),
            })?;
        if raw & control.info.reserved_mask != 0 {
            return Err(UsageError::BadValue {
                text: format!("{raw:#x} for {}", control.name()),
                expected: "a control value without reserved bits".into(),
            }
            .into());
        }
        self.write(&control, raw)
    }

    fn modify(&self, reg: &Reg, f: impl FnOnce(u64) -> Result<u64>) -> Result<()> {
        let old = self.read(reg)? & !reg.info.reserved_mask;
        self.write(reg, f(old)?)
    }

    fn enable_in_box(&self, number: u32) -> Result<()> {
        match self.pmu_box.box_bit(Role::CounterEnable, number) {
            Some((reg, bits)) => {
                self.modify(&reg, |v| Ok(bits.insert(reg.name(), v, bits.max())?))
            }
            None => Ok(()),
        }
    }

    fn enable_globally(&self) -> Result<()> {
        let Some(g) = self.global else { return Ok(()) };
        let Some(f) = g.info.field(Role::GlobalEnable) else {
            return Ok(());
        };
        self.modify(&g.control, |v| Ok(f.insert(g.control.name(), v, 1)?))
    }

    /// Reads counter `number` (its counting bits). A counter that saturates
    /// (`<saturation>`) is reset when its reset bit reads 1, and its readings go on from
    /// what it had counted, over [`Self::counter_width`] bits.
    pub fn read_counter(&self, number: u32) -> Result<u64> {
        let c = self.counter(number)?;
        let raw = self.read(&c.counter)?;
        let value = c.count_bits().map_or(raw, |b| b.extract(raw));
        match self.saturation() {
            Some(bit) => self.unsaturated(c, value, bit),
            None => Ok(value),
        }
    }

    /// A saturating counter's reading: what it counted before its last reset plus `value`,
    /// modulo 2^`bit`; where `value` has bit `bit` set, the counter is written 0 first (as
    /// Linux's amd_uncore_umc_read does), so it never reaches the top where it would stop.
    fn unsaturated(&self, c: &Counter, value: u64, bit: u32) -> Result<u64> {
        let mask = (1u64 << bit) - 1;
        let mut bases = self.bases.lock().unwrap_or_else(|p| p.into_inner());
        let at = match bases.iter().position(|(n, _)| *n == c.number()) {
            Some(at) => at,
            None => {
                bases.push((c.number(), 0));
                bases.len() - 1
            }
        };
        let reading = bases[at].1.wrapping_add(value) & mask;
        if value >> bit & 1 == 1 {
            self.write(&c.counter, 0)?;
            bases[at].1 = reading;
        }
        Ok(reading)
    }

    /// The name of counter `number`'s register (`C3_MSR_PMON_CTR0`).
    pub fn counter_name(&self, number: u32) -> Result<&'static str> {
        Ok(self.counter(number)?.counter.name())
    }

    /// Counter `number`'s width in bits: the bits its readings wrap at (for a saturating
    /// counter, the bit at which it is reset).
    pub fn counter_width(&self, number: u32) -> Result<u32> {
        let width = self.counter(number)?.info.width;
        Ok(self.saturation().map_or(width, |bit| bit.min(width)))
    }

    fn counter(&self, number: u32) -> Result<&'static Counter> {
        self.pmu_box.counter(number).ok_or_else(|| {
            UsageError::NoSuchCounter {
                counter: format!("counter {number} in box {}", self.pmu_box.instance),
                available: format!(
                    "counters {:?}",
                    self.pmu_box
                        .counters
                        .iter()
                        .map(|c| c.number())
                        .collect::<Vec<_>>()
                ),
            }
            .into()
        })
    }

    fn restore(&self, saved: &[(Reg, u64)]) -> Result<()> {
        // The global control last, so nothing counts on a half-restored box.
        let (global, rest): (Vec<_>, Vec<_>) = saved.iter().partition(|(r, _)| {
            self.global
                .is_some_and(|g| g.control.addr.location == r.addr.location)
        });
        let mut first_error: Option<Error> = None;
        for &(r, v) in rest.into_iter().chain(global) {
            if let Err(e) = self.write(&r, v) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Ends the session: puts back every register it changed, counter values included.
    /// Every write is attempted; the first failure is returned.
    pub fn close(mut self) -> Result<()> {
        let saved = std::mem::take(&mut self.saved);
        self.restore(&saved)
    }
}

impl<B: Registers + ?Sized> Drop for Counting<'_, B> {
    fn drop(&mut self) {
        let saved = std::mem::take(&mut self.saved);
        let _ = self.restore(&saved);
    }
}

/// Which of the counters `numbers` each event takes (indices into `numbers`), one each, every
/// event on a counter it may count on ([`EventSelect::may_count_on`]); `None` when there is no
/// such placement. Event by event, in order: the lowest free counter it may count on, so
/// events free to count anywhere take the counters in order; where none is free, an earlier
/// event moves to another of its counters to make room (an augmenting path, as in Kuhn's
/// matching), which keeps the search polynomial however the lists overlap.
pub fn place(numbers: &[u32], events: &[&EventSelect]) -> Option<Vec<usize>> {
    /// Gives event `e` a counter, moving others along a path of their own allowed counters;
    /// `holder[c]` is the event on counter `c`.
    fn augment(
        e: usize,
        numbers: &[u32],
        events: &[&EventSelect],
        holder: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for (c, &n) in numbers.iter().enumerate() {
            if seen[c] || !events[e].may_count_on(n) {
                continue;
            }
            seen[c] = true;
            let moved = match holder[c] {
                None => true,
                Some(other) => augment(other, numbers, events, holder, seen),
            };
            if moved {
                holder[c] = Some(e);
                return true;
            }
        }
        false
    }
    if events.len() > numbers.len() {
        return None;
    }
    let mut holder: Vec<Option<usize>> = vec![None; numbers.len()];
    for (e, event) in events.iter().enumerate() {
        let free =
            (0..numbers.len()).find(|&c| holder[c].is_none() && event.may_count_on(numbers[c]));
        match free {
            Some(c) => holder[c] = Some(e),
            None => {
                let mut seen = vec![false; numbers.len()];
                if !augment(e, numbers, events, &mut holder, &mut seen) {
                    return None;
                }
            }
        }
    }
    let mut at = vec![0; events.len()];
    for (c, e) in holder.iter().enumerate() {
        if let Some(e) = e {
            at[*e] = c;
        }
    }
    Some(at)
}

/// Events counted from `start` to `now` on a `width`-bit counter, correct across one wrap.
pub fn delta(start: u64, now: u64, width: u32) -> u64 {
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    now.wrapping_sub(start) & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(mask: u32) -> EventSelect {
        EventSelect {
            counters: Some(mask),
            ..EventSelect::event(1)
        }
    }

    #[test]
    fn place_keeps_order_makes_room_and_gives_up_quickly() {
        let any = EventSelect::event(1);
        let numbers: Vec<u32> = (0..4).collect();
        assert_eq!(place(&numbers, &[&any, &any, &any]), Some(vec![0, 1, 2]));
        // Counter 0 only, after an event that may go anywhere: that one moves up.
        assert_eq!(place(&numbers, &[&any, &on(0b1)]), Some(vec![1, 0]));
        assert_eq!(place(&numbers, &[&on(0b1), &on(0b1)]), None);
        assert_eq!(place(&numbers, &[&on(0b1_0000)]), None);
        // Sixteen events over the first fifteen of sixteen counters: no placement, found
        // without trying every order (15! of them).
        let numbers: Vec<u32> = (0..16).collect();
        let fifteen = on(0x7fff);
        let events: Vec<&EventSelect> = vec![&fifteen; 16];
        assert_eq!(place(&numbers, &events), None);
        assert!(place(&numbers, &events[..15]).is_some());
    }
}
