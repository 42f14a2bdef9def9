//! Where memory-mapped registers are: a unit's window base assembled from PCI config dwords
//! (the spec's `<mmio-window>`), and a register instance's physical address from it. Data
//! only: any backend that reads PCI config space finds the windows this way.

use pmu_regs::{AddressInfo, Location, MmioWindow, RegisterInfo};

use super::{BackendError, BackendResult, Bdf, PciAccess, Site, UncoreDevices};

/// The physical base of `controller`'s windows: each part of `window` read from the config
/// space of `bdf` (the window's base device on the socket) and combined as the spec says.
pub fn window_base<P: PciAccess + ?Sized>(
    pci: &P,
    bdf: Bdf,
    window: &MmioWindow,
    controller: u8,
) -> BackendResult<u64> {
    window.base(controller, |offset| pci.read_dword(bdf, offset))
}

/// The physical address of a memory-mapped register instance, given its controller's base
/// ([`window_base`]); `None` for an MSR or a PCI register.
pub fn register_address(window: &MmioWindow, base: u64, location: Location) -> Option<u64> {
    match location {
        Location::Mmio {
            channel, offset, ..
        } => Some(window.window_start(base, channel) + u64::from(offset)),
        Location::Msr(_) | Location::Pci { .. } | Location::Table(_) | Location::SysReg(_) => None,
    }
}

/// The window of the unit `info` belongs to, from the generated metadata.
pub fn unit_window(info: &RegisterInfo) -> Option<&'static MmioWindow> {
    pmu_regs::PROCESSORS
        .iter()
        .filter(|p| p.id == info.processor)
        .flat_map(|p| p.units.iter())
        .find(|u| u.name == info.unit)
        .and_then(|u| u.mmio_window)
}

/// Where a memory-mapped register instance is on `socket`: its controller's base read through
/// `pci` from the window's base device (found among the socket's `devices`), plus its offset.
pub fn place_of<P: PciAccess + ?Sized>(
    pci: &P,
    devices: &UncoreDevices,
    socket: usize,
    info: &RegisterInfo,
    addr: &'static AddressInfo,
) -> BackendResult<Site> {
    let (Location::Mmio { controller, .. }, Some(window)) = (addr.location, unit_window(info))
    else {
        return Err(BackendError::Misplaced {
            register: addr.name,
            needs: "a CPU or a PCI device (it is not a memory-mapped register)",
        });
    };
    let bdf = devices.bdf_at(
        socket,
        window.device_id,
        window.device,
        window.function,
        addr.name,
    )?;
    let base = window_base(pci, bdf, window, controller).map_err(|e| e.with_register(addr.name))?;
    let address = register_address(window, base, addr.location).expect("a memory-mapped location");
    Ok(Site::Mmio(address))
}
