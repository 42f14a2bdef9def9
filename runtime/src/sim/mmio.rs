//! The simulated memory-mapped windows: what the base device's config dwords hold on each
//! socket, and which register every physical address of every window is.
//!
//! The simulator picks each controller's base and publishes it the way the part does, in the
//! config dwords the unit's `MmioWindow` names; software assembles it as on hardware (through
//! `PciAccess`) and reaches the registers through `MmioAccess` at the addresses that gives.

use std::collections::HashMap;

use pmu_regs::{Location, MmioBasePart, MmioWindow, ProcessorInfo};

use super::regs::Reg;

/// The windows of one simulated processor.
#[derive(Debug, Default)]
pub(crate) struct Windows {
    /// Config dwords of base devices: (socket, device id, device, function, offset).
    dwords: HashMap<(usize, u16, u8, u8, u16), u32>,
    /// Every memory-mapped register instance by physical address: (socket, register).
    by_address: HashMap<u64, (usize, Reg)>,
}

impl Windows {
    /// The windows of `processor`'s units on `sockets` sockets.
    pub fn new(processor: &'static ProcessorInfo, sockets: usize) -> Self {
        let mut w = Windows::default();
        let windows: Vec<&MmioWindow> = processor
            .units
            .iter()
            .filter_map(|u| u.mmio_window)
            .collect();
        // Windows built on one base device (Ice Lake-SP's iMC channels and its free-running
        // iMC counters) share its dwords: every base is published once, spaced for the
        // widest of them, before any register's address is taken from it.
        let span = |d: &MmioWindow| {
            windows
                .iter()
                .filter(|o| {
                    (o.device_id, o.device, o.function) == (d.device_id, d.device, d.function)
                })
                .map(|o| o.offset + u64::from(o.channels) * o.channel_stride.max(o.size))
                .max()
                .unwrap_or(0)
        };
        for window in &windows {
            for socket in 0..sockets {
                w.publish(window, socket, span(window));
            }
        }
        for unit in processor.units {
            let Some(window) = unit.mmio_window else {
                continue;
            };
            for socket in 0..sockets {
                for info in unit.registers.iter().copied() {
                    for addr in info.known_addresses() {
                        let Location::Mmio { controller, .. } = addr.location else {
                            continue;
                        };
                        let base = w.base(window, socket, controller);
                        let at = crate::access::register_address(window, base, addr.location)
                            .expect("a memory-mapped location");
                        w.by_address.insert(at, (socket, Reg { info, addr }));
                    }
                }
            }
        }
        w
    }

    /// These windows with the memory-mapped boxes of `boxes` the discovery table places, at the
    /// physical address each socket's place gives ([`crate::table_placed::site`]).
    pub fn with_placed(mut self, boxes: &crate::boxes::Boxes, sockets: usize) -> Self {
        for b in boxes.boxes.iter().filter(|b| b.table_placed()) {
            let regs = b
                .counters
                .iter()
                .flat_map(|c| c.control.into_iter().chain([c.counter]))
                .chain(b.controls.iter().copied());
            for r in regs {
                for socket in 0..sockets {
                    if let Some(Ok(crate::Site::Mmio(at))) =
                        crate::table_placed::site(r.addr, socket)
                    {
                        self.by_address.insert(at, (socket, r));
                    }
                }
            }
        }
        self
    }

    /// Writes each controller's piece of the base into its dword, as the part publishes it,
    /// the controllers' bases at least `span` bytes apart.
    fn publish(&mut self, window: &MmioWindow, socket: usize, span: u64) {
        for part in window.parts {
            for c in 0..window.controllers {
                let key = (
                    socket,
                    window.device_id,
                    window.device,
                    window.function,
                    part.dword_offset(c),
                );
                let piece = piece(part, socket, c, window.controllers, span);
                *self.dwords.entry(key).or_default() |= piece;
            }
        }
    }

    /// The base of `controller` on `socket`, assembled from the published dwords.
    fn base(&self, window: &MmioWindow, socket: usize, controller: u8) -> u64 {
        let dword = |offset: u16| -> Result<u32, ()> {
            Ok(self
                .dword(
                    socket,
                    window.device_id,
                    window.device,
                    window.function,
                    offset,
                )
                .unwrap_or(0))
        };
        window.base(controller, dword).unwrap_or(0)
    }

    /// A base device's config dword, if it holds a piece of a base.
    pub fn dword(
        &self,
        socket: usize,
        id: u16,
        device: u8,
        function: u8,
        offset: u16,
    ) -> Option<u32> {
        self.dwords
            .get(&(socket, id, device, function, offset))
            .copied()
    }

    /// The register at physical address `address`, with its socket.
    pub fn at(&self, address: u64) -> Option<(usize, Reg)> {
        self.by_address.get(&address).copied()
    }
}

/// The value a part's dword holds for `controller` on `socket`: a number that keeps the
/// windows of every controller and socket apart. A part read once for all controllers
/// (controller-stride 0) carries the socket; a per-controller part the controller, spaced by
/// at least `span` (the bytes a controller's windows cover).
fn piece(part: &MmioBasePart, socket: usize, controller: u8, controllers: u8, span: u64) -> u32 {
    let width = u32::from(part.msb - part.lsb) + 1;
    let room = |bytes: u64| {
        // The lowest bit of the part that moves the base by at least `bytes`.
        let bit = 64 - bytes.saturating_sub(1).leading_zeros();
        bit.saturating_sub(u32::from(part.shift))
    };
    let (value, step) = if part.controller_stride == 0 {
        let controllers_span =
            (u64::from(controllers) + 1) << (64 - span.saturating_sub(1).leading_zeros());
        (socket as u64 + 1, room(controllers_span))
    } else {
        (u64::from(controller) + 1, room(span))
    };
    let bits = (value << step) & (u64::MAX >> (64 - width));
    (bits as u32) << part.lsb
}
