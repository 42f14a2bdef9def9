//! `<socket-bus>`: how software learns which socket owns each PCI bus holding uncore devices.
//! Checked as written with the unit; its registers are resolved by concrete name once every
//! unit of the processor is known, like `<box-count>`'s.

use super::super::Validator;
use super::routes::concrete_names;
use super::{diag, packed_fields, Found, PendingRoutes, UnitScope};
use crate::model::pmu::{BitRef, OtherBuses, SocketBus};
use crate::model::{Addresses, Location, Position, Processor, Register};
use crate::naming::normalize_text;
use crate::parse::pmu::RawSocketBus;

/// A `<socket-bus>` as written, kept until every unit of the processor is validated.
#[derive(Debug, Clone)]
pub(crate) struct PendingSocketBus {
    at: Position,
    register: String,
    field: String,
    map: String,
    other_buses: OtherBuses,
    source: String,
    description: String,
}

impl Validator {
    /// A `<socket-bus>` as written: a known `other-buses`, a declared source and a
    /// description.
    pub(super) fn socket_bus_as_written(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawSocketBus,
    ) -> Option<PendingSocketBus> {
        let other_buses = match raw.other_buses.as_str() {
            "none" => OtherBuses::None,
            "next-lower" => OtherBuses::NextLower,
            "next-higher" => OtherBuses::NextHigher,
            other => {
                self.push(unit.ctx.error(
                    raw.at,
                    format!("unknown socket-bus other-buses `{other}`"),
                    "write other-buses=\"none\" (every uncore device is on the bus of the node-id device), \"next-lower\" (a bus without the device belongs with the nearest lower bus that has it) or \"next-higher\"",
                ));
                return None;
            }
        };
        if !self.public_source(unit.ctx, unit.cat, raw.at, &raw.source) {
            return None;
        }
        let description = normalize_text(&raw.text);
        if description.is_empty() {
            self.push(unit.ctx.error(
                raw.at,
                "socket-bus has no description",
                "say in the element's text which device is read and how it names the socket",
            ));
            return None;
        }
        Some(PendingSocketBus {
            at: Position::of(unit.ctx.file, unit.path, raw.at),
            register: raw.register.clone(),
            field: raw.field.clone(),
            map: raw.map.clone(),
            other_buses,
            source: raw.source.clone(),
            description,
        })
    }

    /// Resolves each unit's `<socket-bus>`: both registers exist (by concrete name), are
    /// PCI registers of one device, the node-id field is readable, and the map's readable
    /// fields are slots as wide as it, from bit 0 up.
    pub(in crate::validate) fn resolve_socket_buses(
        &mut self,
        p: &mut Processor,
        pending: &[(usize, PendingRoutes)],
    ) {
        let names = concrete_names(p);
        for (ui, pr) in pending {
            let Some(ps) = &pr.socket_bus else { continue };
            let find = |name: &str| names.get(name).copied();
            let (Some(node), Some(map)) = (find(&ps.register), find(&ps.map)) else {
                let missing = if find(&ps.register).is_none() {
                    &ps.register
                } else {
                    &ps.map
                };
                self.push(diag(
                    &ps.at,
                    format!("socket-bus names unknown register `{missing}`"),
                    &format!(
                        "name registers of processor {} by their concrete names, e.g. U_PCI_CPUNODEID and U_PCI_GIDNIDMAP",
                        p.id
                    ),
                ));
                continue;
            };
            if let Some(socket_bus) = self.socket_bus(p, ps, node, map) {
                if let Some(pmu) = p.units[*ui].pmu.as_mut() {
                    pmu.socket_bus = Some(socket_bus);
                }
            }
        }
    }

    /// The rule, once its two registers are found: one PCI device, a readable node-id field,
    /// a map of slots as wide as it.
    fn socket_bus(
        &mut self,
        p: &Processor,
        ps: &PendingSocketBus,
        node: Found,
        map: Found,
    ) -> Option<SocketBus> {
        let reg = |(u, r, _, _): Found| &p.units[u].registers[r];
        let (node_reg, map_reg) = (reg(node), reg(map));
        let fail = |message: String, help: &str| diag(&ps.at, message, help);
        let devices = (
            pci_device(node_reg, node.2, node.3),
            pci_device(map_reg, map.2, map.3),
        );
        let problem = match devices {
            (Some(a), Some(b)) if a == b => None,
            (Some(_), Some(_)) => Some(fail(
                format!("socket-bus registers {} and {} are in different devices", ps.register, ps.map),
                "both are read from the same device on each bus: give them the same device id, device and function",
            )),
            _ => Some(fail(
                format!("socket-bus registers {} and {} must both be PCI registers with an address", ps.register, ps.map),
                "name the node-id and node-map registers of the device every uncore bus has",
            )),
        };
        if let Some(d) = problem {
            self.push(d);
            return None;
        }
        let Some(nf) = node_reg.fields.iter().position(|x| {
            !x.access.is_placeholder() && x.access.is_readable() && x.name.as_ref() == ps.field
        }) else {
            self.push(fail(
                format!(
                    "socket-bus field `{}` is not a readable field of {}",
                    ps.field, ps.register
                ),
                "name the field that holds the bus's own node id",
            ));
            return None;
        };
        let width = node_reg.fields[nf].width();
        let Some(slots) = packed_fields(map_reg, width, None) else {
            self.push(fail(
                format!(
                    "socket-bus map {} is not a row of {width}-bit slots from bit 0 (as wide as {}.{})",
                    ps.map, ps.register, ps.field
                ),
                "give the map one readable field per package, slot n at bits n*w+w-1:n*w, and the rest reserved",
            ));
            return None;
        };
        let bit = |(unit, register, instance, index): Found, field| BitRef {
            unit,
            register,
            instance,
            index,
            field,
        };
        Some(SocketBus {
            node_id: bit(node, nf),
            slots: slots.into_iter().map(|i| bit(map, i)).collect(),
            other_buses: ps.other_buses,
            source: ps.source.clone(),
            description: ps.description.clone(),
        })
    }
}

/// The (device id, device, function) of a PCI register's address for one instance and
/// index, or `None` when it is not a PCI register with a known address.
fn pci_device(r: &Register, instance: usize, index: u32) -> Option<(u16, u8, u8)> {
    let Addresses::Known(list) = &r.addresses else {
        return None;
    };
    list.iter()
        .find(|a| a.instance == instance && a.index == index)
        .and_then(|a| match a.location {
            Location::Pci {
                device_id,
                device,
                function,
                ..
            } => Some((device_id, device, function)),
            _ => None,
        })
}
