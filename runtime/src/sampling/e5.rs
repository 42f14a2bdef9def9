//! The Xeon E5-2600 Home Agent and QPI boxes: counter configuration, box freeze and resets,
//! and the QPI packet match/mask filter as one typed operation.
//!
//! ```
//! use pmu_regs::xeon_e5_2600::qpi::{QpiPktMask0, QpiPktMatch0};
//! use pmu_runtime::sampling::e5::{E5Box, QpiFilter};
//! use pmu_runtime::sim::{QpiPacket, Sim, SimConfig};
//!
//! let sim = Sim::new(SimConfig::default());
//! let devices = sim.uncore_devices();
//! let port = E5Box::qpi(&sim, &devices, 0, 1)?;
//! // Count packets with opcode 0x3, whatever their other fields.
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

use pmu_regs::xeon_e5_2600::qpi::{self, QpiPktMask0, QpiPktMask1, QpiPktMatch0, QpiPktMatch1};
use pmu_regs::{Location, PciRegister};

use crate::access::Bdf;
use crate::access::{read_pci_raw, BackendError, PciAccess, PciAccessExt};
use crate::catalog::{processor, Reg};
use crate::error::{Error, Result, UsageError};
use crate::pci::UncoreDevices;
use crate::sampling::{rolled_back, with_fields, write_pci_reg};

/// Event select of CTO_COUNT: counts the packets the match/mask filter accepts (with the
/// event-select extension bit).
pub const CTO_COUNT: u8 = 0x38;

/// What to count on an E5-2600 box counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct E5EventSelect {
    /// Event select.
    pub ev_sel: u8,
    /// Unit mask.
    pub umask: u8,
    /// Threshold.
    pub thresh: u8,
    /// Invert the threshold comparison.
    pub invert: bool,
    /// Count rising edges.
    pub edge_det: bool,
    /// QPI's event-select extension bit (`ev_sel_ext`); refused on the Home Agent.
    pub ev_sel_ext: bool,
}

/// The packet filter of one QPI port: two match/mask pairs, in the generated layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpiFilter {
    /// Q_Py_PCI_PMON_PKT_MATCH0.
    pub match0: QpiPktMatch0,
    /// Q_Py_PCI_PMON_PKT_MASK0: a 1 bit compares the corresponding MATCH0 bit.
    pub mask0: QpiPktMask0,
    /// Q_Py_PCI_PMON_PKT_MATCH1.
    pub match1: QpiPktMatch1,
    /// Q_Py_PCI_PMON_PKT_MASK1.
    pub mask1: QpiPktMask1,
}

/// The error for a box register the spec puts in MSR space, where a PCI one is needed.
fn misplaced(reg: &Reg) -> Error {
    BackendError::Misplaced {
        register: reg.addr.name,
        needs: "a CPU (it is an MSR), but this box is reached through its PCI device",
    }
    .into()
}

/// One E5-2600 box (HA, or a QPI port) of one socket.
pub struct E5Box<'a, B: PciAccess + ?Sized> {
    backend: &'a B,
    bdf: Bdf,
    instance: &'static str,
    box_ctl: Reg,
    controls: Vec<Reg>,
    counters: Vec<Reg>,
    /// The QPI port number, for the filter registers.
    port: Option<u8>,
    /// The device of the filter registers.
    filter_bdf: Option<Bdf>,
}

fn regs_of(instance: &str) -> Vec<Reg> {
    processor("xeon-e5-2600")
        .units
        .iter()
        .flat_map(|u| u.registers.iter().copied())
        .flat_map(|info| {
            info.known_addresses()
                .iter()
                .filter(move |a| a.instance == instance)
                .map(move |addr| Reg { info, addr })
        })
        .collect()
}

impl<'a, B: PciAccess + ?Sized> E5Box<'a, B> {
    fn open(
        backend: &'a B,
        devices: &UncoreDevices,
        socket: usize,
        instance: &'static str,
        port: Option<u8>,
    ) -> Result<Self> {
        let regs = regs_of(instance);
        let box_ctl = regs
            .iter()
            .find(|r| r.info.name.contains("BOX_CTL"))
            .copied()
            .ok_or_else(|| UsageError::NoSuchBox {
                name: format!("{instance} with a box control"),
                available: "HA, P0, P1, CH0-CH3, R2PCIE, L0, L1".into(),
            })?;
        let bdf_of = |reg: &Reg| -> Result<Bdf> {
            let Location::Pci {
                device_id,
                device,
                function,
                offset,
            } = reg.addr.location
            else {
                return Err(misplaced(reg));
            };
            Ok(devices.bdf(
                socket,
                PciRegister::<pmu_regs::xeon_e5_2600::ha::HaBoxCtl>::new(
                    device_id,
                    device,
                    function,
                    offset,
                    reg.addr.name,
                ),
            )?)
        };
        let bdf = bdf_of(&box_ctl)?;
        let filter_bdf = match port {
            Some(_) => regs
                .iter()
                .find(|r| r.info.name.contains("PKT_MATCH0"))
                .map(bdf_of)
                .transpose()?,
            None => None,
        };
        Ok(Self {
            backend,
            bdf,
            instance,
            box_ctl,
            controls: regs
                .iter()
                .filter(|r| r.field("en").is_some() && r.field("ev_sel").is_some())
                .copied()
                .collect(),
            counters: regs
                .iter()
                .filter(|r| r.field("event_count").is_some())
                .copied()
                .collect(),
            port,
            filter_bdf,
        })
    }

    /// Any PCI box of the E5-2600 by instance name: `HA`, `P0`/`P1` (QPI), `CH0`-`CH3` (iMC),
    /// `R2PCIE`, `L0`/`L1` (R3QPI).
    pub fn of(
        backend: &'a B,
        devices: &UncoreDevices,
        socket: usize,
        instance: &'static str,
    ) -> Result<Self> {
        let port = match instance {
            "P0" => Some(0),
            "P1" => Some(1),
            _ => None,
        };
        Self::open(backend, devices, socket, instance, port)
    }

    /// The Home Agent of `socket`.
    pub fn ha(backend: &'a B, devices: &UncoreDevices, socket: usize) -> Result<Self> {
        Self::open(backend, devices, socket, "HA", None)
    }

    /// QPI port `port` (0 or 1) of `socket`.
    pub fn qpi(backend: &'a B, devices: &UncoreDevices, socket: usize, port: u8) -> Result<Self> {
        let instance = match port {
            0 => "P0",
            1 => "P1",
            _ => {
                return Err(UsageError::NoSuchCounter {
                    counter: format!("QPI port {port}"),
                    available: "ports 0 and 1".into(),
                }
                .into())
            }
        };
        Self::open(backend, devices, socket, instance, Some(port))
    }

    /// The box's device.
    pub fn bdf(&self) -> Bdf {
        self.bdf
    }

    fn counter_regs(&self, i: usize) -> Result<(Reg, Reg)> {
        self.controls
            .get(i)
            .zip(self.counters.get(i))
            .map(|(a, b)| (*a, *b))
            .ok_or_else(|| {
                UsageError::NoSuchCounter {
                    counter: format!("counter {i} of {}", self.instance),
                    available: format!("counters 0-{}", self.counters.len().saturating_sub(1)),
                }
                .into()
            })
    }

    fn write_box_ctl(&self, fields: &[(&'static str, u64)]) -> Result<()> {
        // Every box-control bit is write-only: each write states the whole control.
        let raw = with_fields(self.box_ctl.info, 0, fields)?;
        write_pci_reg(self.backend, self.bdf, &self.box_ctl, raw)
    }

    /// Freezes the box's counters (frz_en and frz).
    pub fn freeze(&self) -> Result<()> {
        self.write_box_ctl(&[("frz_en", 1), ("frz", 1)])
    }

    /// Unfreezes the box, leaving it responsive to the global freeze signal (frz_en only).
    pub fn unfreeze(&self) -> Result<()> {
        self.write_box_ctl(&[("frz_en", 1)])
    }

    /// Zeroes every counter of the box (rst_ctrs), keeping it frozen if `frozen`.
    pub fn reset_counters(&self, frozen: bool) -> Result<()> {
        self.write_box_ctl(&[("frz_en", 1), ("frz", u64::from(frozen)), ("rst_ctrs", 1)])
    }

    /// Zeroes every control register of the box (rst_ctrl), keeping it frozen if `frozen`.
    pub fn reset_controls(&self, frozen: bool) -> Result<()> {
        self.write_box_ctl(&[("frz_en", 1), ("frz", u64::from(frozen)), ("rst_ctrl", 1)])
    }

    /// Programs counter `i` for `sel` and enables it.
    pub fn configure(&self, i: usize, sel: &E5EventSelect) -> Result<()> {
        let (ctl, _) = self.counter_regs(i)?;
        let mut fields = vec![
            ("ev_sel", u64::from(sel.ev_sel)),
            ("umask", u64::from(sel.umask)),
            ("thresh", u64::from(sel.thresh)),
            ("invert", u64::from(sel.invert)),
            ("edge_det", u64::from(sel.edge_det)),
            ("en", 1),
        ];
        if sel.ev_sel_ext {
            fields.push(("ev_sel_ext", 1));
        }
        let raw = with_fields(ctl.info, ctl.info.reset, &fields)?;
        write_pci_reg(self.backend, self.bdf, &ctl, raw)
    }

    /// Saves the control registers of counters `counters`, to put back with [`Self::restore`].
    pub fn save(&self, counters: &[usize]) -> Result<Vec<(usize, u64)>> {
        counters
            .iter()
            .map(|&i| {
                let (ctl, _) = self.counter_regs(i)?;
                let Location::Pci { offset, .. } = ctl.addr.location else {
                    return Err(misplaced(&ctl));
                };
                let v = read_pci_raw(
                    self.backend,
                    self.bdf,
                    offset,
                    ctl.info.width,
                    ctl.addr.name,
                )?;
                Ok((i, v & !ctl.info.reserved_mask))
            })
            .collect()
    }

    /// Writes saved control registers back; every write is attempted, the first error returned.
    pub fn restore(&self, saved: &[(usize, u64)]) -> Result<()> {
        let mut first_error = None;
        for &(i, v) in saved {
            let r = self
                .counter_regs(i)
                .and_then(|(ctl, _)| write_pci_reg(self.backend, self.bdf, &ctl, v));
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
        let (ctl, _) = self.counter_regs(i)?;
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
            &E5EventSelect {
                ev_sel: event.code,
                umask: event.umask,
                ev_sel_ext: event.ext_sel,
                ..E5EventSelect::default()
            },
        )
    }

    /// Reads counter `i` (48 bits, read tear-free).
    pub fn read_counter(&self, i: usize) -> Result<u64> {
        let (_, ctr) = self.counter_regs(i)?;
        let Location::Pci { offset, .. } = ctr.addr.location else {
            return Err(misplaced(&ctr));
        };
        Ok(read_pci_raw(
            self.backend,
            self.bdf,
            offset,
            ctr.info.width,
            ctr.addr.name,
        )? & ((1 << 48) - 1))
    }

    /// Programs the QPI packet filter and counter `i` to count matching packets (event 0x38,
    /// CTO_COUNT): the guide's two steps (2.7.3.3) as one operation.
    pub fn program_filter(&self, i: usize, filter: &QpiFilter) -> Result<()> {
        let (Some(port), Some(fbdf)) = (self.port, self.filter_bdf) else {
            return Err(UsageError::UnsupportedField {
                register: self.box_ctl.addr.name,
                field: "packet match/mask (only QPI ports have one)",
            }
            .into());
        };
        // If any write fails, the counter's control is put back, so it never counts through a
        // half-written filter.
        let saved = self.save(&[i])?;
        rolled_back(
            || self.program_filter_unchecked(i, port, fbdf, filter),
            || self.restore(&saved),
        )
    }

    fn program_filter_unchecked(
        &self,
        i: usize,
        port: u8,
        fbdf: Bdf,
        filter: &QpiFilter,
    ) -> Result<()> {
        let dev = self.backend.on_device(fbdf);
        let (m0, m1, k0, k1) = if port == 0 {
            (
                qpi::Q_P0_PCI_PMON_PKT_MATCH0,
                qpi::Q_P0_PCI_PMON_PKT_MATCH1,
                qpi::Q_P0_PCI_PMON_PKT_MASK0,
                qpi::Q_P0_PCI_PMON_PKT_MASK1,
            )
        } else {
            (
                qpi::Q_P1_PCI_PMON_PKT_MATCH0,
                qpi::Q_P1_PCI_PMON_PKT_MATCH1,
                qpi::Q_P1_PCI_PMON_PKT_MASK0,
                qpi::Q_P1_PCI_PMON_PKT_MASK1,
            )
        };
        // The counter is programmed last, so it never counts through a half-written filter.
        dev.write(k0, filter.mask0)?;
        dev.write(k1, filter.mask1)?;
        dev.write(m0, filter.match0)?;
        dev.write(m1, filter.match1)?;
        self.configure(
            i,
            &E5EventSelect {
                ev_sel: CTO_COUNT,
                // Intel's event list marks UNC_Q_CTO_COUNT as needing the extension bit.
                ev_sel_ext: true,
                ..E5EventSelect::default()
            },
        )
    }

    /// The name of counter `i` (`HA_PCI_PMON_CTR0`).
    pub fn counter_name(&self, i: usize) -> Option<&'static str> {
        self.counters.get(i).map(|r| r.addr.name)
    }

    /// The instance name (`HA`, `P0`, `P1`).
    pub fn instance(&self) -> &'static str {
        self.instance
    }
}
