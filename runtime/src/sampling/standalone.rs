//! Box-level operations of boxes that are programmed on their own, independently of the
//! other boxes of their socket (the E5-2600's are): freeze, unfreeze, reset counters or
//! controls, and a box's packet filter with the event that counts what it accepts, as one
//! typed operation. Everything is found through the roles and
//! filters the spec declares for the box.
//!
//! ```
//! use pmu_regs::xeon_e5_2600::qpi::{QpiPktMask0, QpiPktMask1, QpiPktMatch0, QpiPktMatch1};
//! use pmu_runtime::sampling::standalone::{PacketFilter, StandaloneBox};
//! use pmu_runtime::sim::{QpiPacket, Sim, SimConfig};
//!
//! let sim = Sim::new(SimConfig::of(&pmu_regs::xeon_e5_2600::PROCESSOR));
//! let devices = sim.uncore_devices();
//! let port = StandaloneBox::of(&sim, &devices, 0, "P1")?;
//! // Count packets with opcode 0x3, whatever their other fields.
//! type QpiFilter = PacketFilter<QpiPktMatch0, QpiPktMask0, QpiPktMatch1, QpiPktMask1>;
//! port.program_filter(0, &QpiFilter {
//!     match0: QpiPktMatch0::RESET.with_opc(0x3),
//!     mask0: QpiPktMask0::RESET.with_opc(0xF),
//!     ..QpiFilter::default()
//! })?;
//! sim.inject_qpi_packet(0, "P1", QpiPacket { word0: QpiPktMatch0::RESET.with_opc(0x3).bits(), word1: 0 }, 5)?;
//! sim.inject_qpi_packet(0, "P1", QpiPacket { word0: QpiPktMatch0::RESET.with_opc(0x4).bits(), word1: 0 }, 7)?;
//! assert_eq!(port.read_counter(0)?, 5);
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

use pmu_regs::{FieldInfo, Register, RegisterInfo, Role};

use crate::access::{Bdf, Site, UncoreDevices};
use crate::boxes::{Boxes, Counter, EventSelect, PmuBox, Reg};
use crate::counters::Registers;
use crate::error::{Result, UsageError};
use crate::ownership::{Lease, Pmu};
use crate::sampling::{rolled_back, RegIo};

/// A box's packet filter: the two match/mask pairs its spec declares (the first two filters
/// that select an event), each value in the generated layout of its register. For a QPI port
/// of the E5-2600 these are `qpi::QpiPktMatch0`, `QpiPktMask0`, `QpiPktMatch1` and
/// `QpiPktMask1`; [`StandaloneBox::program_filter`] refuses layouts of other registers (another
/// processor's, say) before writing anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketFilter<Match0, Mask0, Match1, Mask1> {
    /// The first filter's match register: the packet bits to compare.
    pub match0: Match0,
    /// The first filter's mask: a 1 bit compares the corresponding `match0` bit.
    pub mask0: Mask0,
    /// The second filter's match register.
    pub match1: Match1,
    /// The second filter's mask.
    pub mask1: Mask1,
}

/// Refuses a filter value whose layout `given` is not the register `wanted` the spec declares
/// in its place (same processor, unit and name).
fn same_layout(wanted: Option<&'static RegisterInfo>, given: &'static RegisterInfo) -> Result<()> {
    let key = |r: &RegisterInfo| (r.processor, r.unit, r.name);
    match wanted {
        Some(w) if key(w) == key(given) => Ok(()),
        Some(w) => Err(UsageError::BadValue {
            text: format!(
                "{} of {} ({})",
                given.type_name, given.processor, given.name
            ),
            expected: format!(
                "the layout of {} of {}, the filter register in that place",
                w.name, w.processor
            ),
        }
        .into()),
        None => Err(UsageError::UnsupportedField {
            register: given.name,
            field: "mask register in this filter (the box's filter has none)",
        }
        .into()),
    }
}

/// One box of one socket that is programmed on its own, owned by this session while the
/// value lives.
pub struct StandaloneBox<'a, B: Registers + ?Sized> {
    io: RegIo<'a, B>,
    pmu_box: &'static PmuBox,
    _lease: Lease,
}

impl<'a, B: Registers + ?Sized> StandaloneBox<'a, B> {
    /// Box `instance` of `devices`' processor on `socket` (`HA`, `P0`, `CH2`, `C3`, ...;
    /// MSR boxes are reached through `socket`'s first CPU in the simulator's numbering, so
    /// prefer [`Self::with_cpu`] on hardware).
    pub fn of(
        backend: &'a B,
        devices: &UncoreDevices,
        socket: usize,
        instance: &str,
    ) -> Result<Self> {
        let boxes = Boxes::of(devices.processor);
        let pmu_box = boxes
            .boxes
            .iter()
            .find(|b| b.instance.eq_ignore_ascii_case(instance))
            .ok_or_else(|| UsageError::NoSuchBox {
                name: instance.to_string(),
                available: boxes
                    .boxes
                    .iter()
                    .map(|b| b.instance)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        // Each such box is programmed on its own (its box control freezes only it), so a
        // session owns one box.
        let lease = backend.claim(&Pmu::Box {
            processor: devices.processor.id,
            socket,
            instance: pmu_box.instance,
        })?;
        Ok(Self {
            io: RegIo {
                backend,
                cpu: 0,
                socket,
                devices: Some(devices.clone()),
            },
            pmu_box,
            _lease: lease,
        })
    }

    /// Reaches the box's MSRs through `cpu`.
    pub fn with_cpu(mut self, cpu: u32) -> Self {
        self.io.cpu = cpu;
        self
    }

    /// The box's device, for a box in PCI space.
    pub fn bdf(&self) -> Option<Bdf> {
        let c = self.pmu_box.counters.first()?;
        match self.io.place(&c.counter).ok()? {
            Site::Device(bdf) => Some(bdf),
            Site::Cpu(_) | Site::Mmio(_) => None,
        }
    }

    fn counter(&self, i: usize) -> Result<&'static Counter> {
        self.pmu_box.counter(i as u32).ok_or_else(|| {
            UsageError::NoSuchCounter {
                counter: format!("counter {i} of {}", self.pmu_box.instance),
                available: format!(
                    "counters 0-{}",
                    self.pmu_box.counters.len().saturating_sub(1)
                ),
            }
            .into()
        })
    }

    fn control(&self, i: usize) -> Result<Reg> {
        let c = self.counter(i)?;
        c.control.ok_or_else(|| {
            UsageError::UnsupportedField {
                register: c.counter.name(),
                field: "control (a free-running counter cannot be programmed)",
            }
            .into()
        })
    }

    fn write_box_ctl(&self, roles: &[Role]) -> Result<()> {
        // Box-control bits act when written: each write states the whole control.
        let mut writes: Vec<(Reg, u64)> = Vec::new();
        for &role in roles {
            let (reg, f): (Reg, &FieldInfo) =
                self.pmu_box
                    .box_field(role)
                    .ok_or(UsageError::UnsupportedField {
                        register: self.pmu_box.instance,
                        field: "box control role",
                    })?;
            match writes
                .iter_mut()
                .find(|(r, _)| r.addr.location == reg.addr.location)
            {
                Some((_, v)) => *v |= f.mask(),
                None => writes.push((reg, f.mask())),
            }
        }
        if writes.is_empty() {
            if let Some((reg, _)) = self.pmu_box.box_field(Role::FreezeEnable) {
                writes.push((reg, 0));
            }
        }
        for (reg, raw) in writes {
            self.io.write(&reg, raw)?;
        }
        Ok(())
    }

    /// Freezes the box's counters (freeze enable and freeze).
    pub fn freeze(&self) -> Result<()> {
        self.write_box_ctl(&[Role::FreezeEnable, Role::Freeze])
    }

    /// Unfreezes the box, leaving it responsive to the global freeze signal (freeze enable
    /// only).
    pub fn unfreeze(&self) -> Result<()> {
        self.write_box_ctl(&[Role::FreezeEnable])
    }

    /// Zeroes every counter of the box, keeping it frozen if `frozen`.
    pub fn reset_counters(&self, frozen: bool) -> Result<()> {
        let mut roles = vec![Role::FreezeEnable, Role::ResetCounters];
        if frozen {
            roles.push(Role::Freeze);
        }
        self.write_box_ctl(&roles)
    }

    /// Zeroes every control register of the box, keeping it frozen if `frozen`.
    pub fn reset_controls(&self, frozen: bool) -> Result<()> {
        let mut roles = vec![Role::FreezeEnable, Role::ResetControls];
        if frozen {
            roles.push(Role::Freeze);
        }
        self.write_box_ctl(&roles)
    }

    /// Programs counter `i` for `sel` and enables it. A setting the control lacks is refused
    /// before anything is written.
    pub fn configure(&self, i: usize, sel: &EventSelect) -> Result<()> {
        let raw = self.counter(i)?.control_value(sel, false)?;
        self.io.write(&self.control(i)?, raw)
    }

    /// Saves the control registers of counters `counters`, to put back with [`Self::restore`].
    pub fn save(&self, counters: &[usize]) -> Result<Vec<(usize, u64)>> {
        counters
            .iter()
            .map(|&i| {
                let ctl = self.control(i)?;
                Ok((i, self.io.read(&ctl)? & !ctl.info.reserved_mask))
            })
            .collect()
    }

    /// Writes saved control registers back; every write is attempted, the first error returned.
    pub fn restore(&self, saved: &[(usize, u64)]) -> Result<()> {
        let mut first_error = None;
        for &(i, v) in saved {
            let r = self.control(i).and_then(|ctl| self.io.write(&ctl, v));
            if let Err(e) = r {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Programs counter `i` for an event of this box's unit (from `pmu_regs` metadata, e.g.
    /// `pmu_regs::xeon_e5_2600::ha::Event::REQUESTS_READS.info()`), refusing a counter the
    /// event cannot be counted on or an event of another unit.
    pub fn configure_event(&self, i: usize, event: &'static pmu_regs::EventInfo) -> Result<()> {
        let ctl = self.control(i)?;
        let unit_events = crate::codec::unit_events(ctl.info);
        if !unit_events.iter().any(|e| **e == *event) {
            return Err(UsageError::BadValue {
                text: event.name.to_string(),
                expected: format!("an event of the {} unit", ctl.info.unit),
            }
            .into());
        }
        if !event.can_count_on(i as u32) {
            let allowed: Vec<String> = (0..32)
                .filter(|n| event.can_count_on(*n))
                .map(|n| n.to_string())
                .collect();
            return Err(UsageError::NoSuchCounter {
                counter: format!(
                    "counter {i} for {} (it can only be counted on some counters)",
                    event.name
                ),
                available: format!("counters {}", allowed.join(", ")),
            }
            .into());
        }
        self.configure(
            i,
            &EventSelect {
                umask: Some(event.umask),
                event_ext: Some(event.ext_sel),
                ..EventSelect::event(event.code)
            },
        )
    }

    /// Reads counter `i` (its counting bits; 64-bit PCI counters read tear-free).
    pub fn read_counter(&self, i: usize) -> Result<u64> {
        let c = self.counter(i)?;
        let raw = self.io.read(&c.counter)?;
        Ok(c.count_bits().map_or(raw, |b| b.extract(raw)))
    }

    /// Programs the box's packet filters and counter `i` to count what they accept (the
    /// filters' event): the guide's two steps (2.7.3.3 of the first E5-2600 guide, for QPI)
    /// as one operation. A value whose layout is not its filter register's is refused before
    /// any write.
    pub fn program_filter<M0, K0, M1, K1>(
        &self,
        i: usize,
        filter: &PacketFilter<M0, K0, M1, K1>,
    ) -> Result<()>
    where
        M0: Register,
        K0: Register,
        M1: Register,
        K1: Register,
    {
        let filters: Vec<_> = self
            .pmu_box
            .pmu
            .filters
            .iter()
            .filter(|f| f.event.is_some())
            .collect();
        let (Some(first), Some(second)) = (filters.first(), filters.get(1)) else {
            return Err(UsageError::UnsupportedField {
                register: self.pmu_box.instance,
                field: "packet match/mask (this box has no filter pair that selects an event)",
            }
            .into());
        };
        let reg = |r: &'static RegisterInfo| {
            Reg::of(r, self.pmu_box.instance, 0).ok_or(UsageError::UnsupportedField {
                register: r.name,
                field: "address in this box",
            })
        };
        same_layout(Some(first.register), M0::INFO)?;
        same_layout(first.mask, K0::INFO)?;
        same_layout(Some(second.register), M1::INFO)?;
        same_layout(second.mask, K1::INFO)?;
        let writes = [
            (first.mask.map(reg).transpose()?, filter.mask0.to_raw()),
            (second.mask.map(reg).transpose()?, filter.mask1.to_raw()),
            (Some(reg(first.register)?), filter.match0.to_raw()),
            (Some(reg(second.register)?), filter.match1.to_raw()),
        ];
        let sel = EventSelect {
            event_ext: Some(first.event_ext),
            ..EventSelect::event(u16::from(first.event.unwrap_or(0)))
        };
        // If any write fails, the counter's control is put back, so it never counts through a
        // half-written filter; the counter is programmed last for the same reason.
        let saved = self.save(&[i])?;
        rolled_back(
            || {
                for (r, v) in &writes {
                    if let Some(r) = r {
                        self.io.write(r, *v)?;
                    }
                }
                self.configure(i, &sel)
            },
            || self.restore(&saved),
        )
    }

    /// The name of counter `i` (`HA_PCI_PMON_CTR0`).
    pub fn counter_name(&self, i: usize) -> Option<&'static str> {
        self.pmu_box.counter(i as u32).map(|c| c.counter.name())
    }

    /// The instance name (`HA`, `P0`, `P1`).
    pub fn instance(&self) -> &'static str {
        self.pmu_box.instance
    }
}
