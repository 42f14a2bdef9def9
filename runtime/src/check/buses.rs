//! Which PCI bus each box serves, where the spec says the part holds it (`<stack-bus>`:
//! Skylake-SP and Cascade Lake's IIO stacks, MSR 0x300): a row per unit and socket, the
//! buses read from the register ([`crate::part::stack_buses`]) and, where the kernel
//! publishes its own mapping (`/sys/bus/event_source/devices/uncore_iio_N/dieS`, as Linux's
//! skx_iio_get_topology makes it from the same register), compared with it box by box.

use std::path::Path;

use super::outcome::CheckRow;
use crate::boxes::Boxes;
use crate::machine::Machine;
use crate::part::{stack_buses, StackBuses};

/// A row per unit with a `<stack-bus>` and per socket of `machine`; `sysfs`, the root under
/// which the kernel's PMUs are listed (`/` on a machine, `None` on the simulator, which has
/// no kernel).
pub fn rows(machine: &Machine, boxes: &'static Boxes, sysfs: Option<&Path>) -> Vec<CheckRow> {
    let units: Vec<_> = boxes
        .processor
        .units
        .iter()
        .filter_map(|u| u.pmu.filter(|p| p.stack_bus.is_some()))
        .collect();
    if units.is_empty() {
        return Vec::new();
    }
    let sockets: Vec<u32> = match machine.topology() {
        Ok(t) => t.sockets().collect(),
        Err(e) => {
            let name = "stack buses";
            return vec![CheckRow::failed(name, "-".into(), e.to_string())];
        }
    };
    let mut rows = Vec::new();
    for pmu in units {
        for &socket in &sockets {
            let name = format!("buses {} socket {socket}", pmu.unit);
            let kernel = sysfs.map(|root| kernel_buses(root, pmu, socket));
            let expected = match &kernel {
                Some(k) if k.iter().any(Option::is_some) => {
                    format!("valid, each box as the kernel's die{socket} file gives it")
                }
                _ => "valid (firmware set the buses)".to_string(),
            };
            rows.push(match stack_buses(machine, pmu, socket) {
                Ok(Some(read)) => judge(name, expected, &read, kernel.as_deref()),
                Ok(None) => continue,
                Err(e) => CheckRow::failed(name, expected, e.to_string()),
            });
        }
    }
    rows
}

/// The row for one socket's buses: `pass` when the valid bit is set and every box agrees with
/// the kernel's file where the kernel publishes any; a note when the valid bit is clear and
/// the kernel maps nothing either (firmware left the buses unset: a fact of the machine).
fn judge(
    name: String,
    expected: String,
    read: &StackBuses,
    kernel: Option<&[Option<String>]>,
) -> CheckRow {
    let published = kernel.filter(|k| k.iter().any(Option::is_some));
    let Some(buses) = &read.buses else {
        if published.is_none() {
            let why = format!("{}: Linux maps no stack either", read.describe());
            return CheckRow::note(name, why);
        }
        let mut row = CheckRow::judged(name, expected, read.describe(), false);
        row.note = "the kernel shows a mapping the register does not hold".into();
        return row;
    };
    let measured = read.describe();
    let Some(kernel) = published else {
        let mut row = CheckRow::judged(name, expected, measured, true);
        row.note = format!(
            "{} = {:#x} ({}); no kernel mapping to compare with",
            read.register, read.raw, read.source
        );
        return row;
    };
    let differ: Vec<String> = buses
        .iter()
        .zip(kernel)
        .filter_map(|((box_name, bus), file)| {
            let ours = bus.map(|b| format!("{b:02x}"));
            let theirs = file.as_deref().and_then(|f| f.rsplit(':').next());
            (ours.as_deref() != theirs).then(|| {
                format!(
                    "{box_name}: register {}, kernel {}",
                    ours.as_deref().unwrap_or("none"),
                    file.as_deref().unwrap_or("none")
                )
            })
        })
        .collect();
    let mut row = CheckRow::judged(name, expected, measured, differ.is_empty());
    row.note = differ.join("; ");
    row
}

/// What the kernel's `dieS` file of each box's perf PMU holds (`0000:17`), in the unit's box
/// order; `None` for a box whose file is missing (the kernel hides an absent stack's).
fn kernel_buses(root: &Path, pmu: &pmu_regs::PmuInfo, socket: u32) -> Vec<Option<String>> {
    let devices = root.join("sys/bus/event_source/devices");
    let unit = pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == pmu.processor)
        .and_then(|p| p.units.iter().find(|u| u.name == pmu.unit));
    let instances = unit.map_or(&[][..], |u| u.instances);
    instances
        .iter()
        .map(|inst| {
            let perf = pmu.perf.iter().find(|p| p.instance == *inst)?;
            let file = devices.join(perf.pmu).join(format!("die{socket}"));
            let text = crate::bounded::read_text(&file, 64).ok()?;
            Some(text.trim().to_string())
        })
        .collect()
}
