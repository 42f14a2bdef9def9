//! Backend errors told for where the command ran: on the simulator no advice meant for real
//! hardware (`modprobe msr`, `lspci`), a refused PCI access is not called a #GP fault, and a
//! missing uncore device names only the devices the command asked for.

use pmu_regs::{AddressInfo, Location};
use pmu_runtime::machine::Machine;
use pmu_runtime::{AccessError, BackendError, Error, Target};

use crate::failure::Failure;
use crate::place::PlaceArgs;

/// A PCI device as the docs and `pmu list` write it: id, device and function numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Device {
    id: u16,
    device: u8,
    function: u8,
}

/// The PCI devices of the register instances `addresses`, for naming only what was asked for.
pub fn device_ids<'a>(addresses: impl IntoIterator<Item = &'a AddressInfo>) -> Vec<Device> {
    let mut ids: Vec<Device> = addresses
        .into_iter()
        .filter_map(|a| match a.location {
            Location::Pci {
                device_id,
                device,
                function,
                ..
            } => Some(Device {
                id: device_id,
                device,
                function,
            }),
            _ => None,
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// `0-3`, or `0, 2` where the numbers are not a run.
fn span(items: &[u32]) -> String {
    match (items.first(), items.last()) {
        (Some(a), Some(b)) if items.len() as u32 == b - a + 1 && items.len() > 1 => {
            format!("{a}-{b}")
        }
        _ => items
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn target_text(register: Option<&str>, target: &Target) -> String {
    match register {
        Some(r) => format!("{r} ({target})"),
        None => target.to_string(),
    }
}

/// Who refused an access, and why that usually is, for hardware or the simulator.
fn refused(target: &Target, sim: bool) -> &'static str {
    match (target, sim) {
        (Target::Msr { .. }, false) => {
            "the processor refused the access (EIO, a #GP fault): this register does not \
             exist on this processor, or the value sets bits it does not allow"
        }
        (Target::Msr { .. }, true) => {
            "the simulated processor refused the access, as hardware does with a #GP \
             fault: it does not have this register, or the value sets bits it does not \
             allow"
        }
        (Target::Pci { .. }, false) => {
            "the device refused the access (EIO): it does not answer at this offset, or \
             the value sets bits it does not allow; check the device with `lspci -xxx`"
        }
        (Target::Pci { .. }, true) => {
            "the simulated device refused the access: the simulator does not model this \
             register, or the value sets bits it does not allow"
        }
        (Target::Mmio { .. }, false) => {
            "the memory-mapped register refused the access: nothing answers at this \
             address, or the value sets bits it does not allow"
        }
        (Target::Mmio { .. }, true) => {
            "the simulated window refused the access: no simulated register is at this \
             address, it was accessed at the wrong width, or the value sets bits it does \
             not allow"
        }
    }
}

/// Rewrites the backend errors whose library message would mislead here; every other failure
/// passes through unchanged.
pub fn explain(failure: Failure, place: &PlaceArgs, devices: &[Device]) -> Failure {
    let Failure::Runtime(Error::Backend(e)) = failure else {
        return failure;
    };
    let sim_topology = || Machine::simulating_default().topology().ok();
    match (&e, place.sim) {
        (
            BackendError::Access {
                op,
                target: target @ Target::Msr { cpu, .. },
                register,
                kind: AccessError::NoMsrDevice { .. },
                ..
            },
            true,
        ) => {
            let cpus: Vec<u32> = sim_topology()
                .map(|t| t.cpus().into_iter().map(|(c, _)| c).collect())
                .unwrap_or_default();
            Failure::usage(format!(
                "cannot {op} {}: the simulated machine has no CPU {cpu}; its CPUs are {}",
                target_text(*register, target),
                span(&cpus)
            ))
        }
        (
            BackendError::DeviceNotFound {
                register, socket, ..
            },
            true,
        ) => {
            let sockets: Vec<u32> = sim_topology()
                .map(|t| t.sockets().collect())
                .unwrap_or_default();
            Failure::usage(format!(
                "{register}: the simulated machine has no socket {socket}; its sockets are {}",
                span(&sockets)
            ))
        }
        (
            BackendError::Access {
                op,
                target,
                register,
                kind: AccessError::Rejected,
                source,
            },
            sim,
        ) => {
            let os = source
                .as_ref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            Failure::operation(format!(
                "cannot {op} {}: {}{os}",
                target_text(*register, target),
                refused(target, sim)
            ))
        }
        (BackendError::NoUncoreDevices { root, .. }, _) if !devices.is_empty() => {
            let wanted: Vec<String> = devices
                .iter()
                .map(|d| {
                    format!("PCI {:#06X} (dev {} fn {})", d.id, d.device, d.function)
                        .replacen("0X", "0x", 1)
                })
                .collect();
            Failure::operation(format!(
                "no {} under {}: this machine is not the processor the register belongs to, or \
                 it is a virtual machine that exposes no uncore devices (`lspci -d 8086:{:04x}` \
                 lists the device where it exists); --root uses another tree, --sim the \
                 simulator",
                wanted.join(", "),
                root.display(),
                devices[0].id
            ))
        }
        _ => Failure::Runtime(Error::Backend(e)),
    }
}
