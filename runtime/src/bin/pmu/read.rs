//! `pmu read`: a register read and decoded, at one place or everywhere (`-a`).

use pmu_regs::{AddressInfo, Addresses, RegisterInfo};
use pmu_runtime::codec::{self};
use pmu_runtime::lookup::FoundRegister;
use pmu_runtime::machine::{Machine, Resolved};
use pmu_runtime::topology::Topology;
use pmu_runtime::{BackendError, Site, UsageError};
use serde_json::{json, Value};

use crate::failure::Out;
use crate::show::value_only;
use crate::{detect, Failure, PlaceArgs, ValueArgs};
use pmu_runtime::lookup::{processor, resolve};
use pmu_runtime::perfmon::per_cpu_unit;
use pmu_runtime::report::register::{
    decoded_json, decoded_table, event_line, header, hex, location_text,
};
use pmu_runtime::report::table::TextTable;

/// A register instance with an address, or why there is none.
pub(crate) fn instance(
    register: &str,
    args: &PlaceArgs,
) -> Result<(&'static RegisterInfo, &'static AddressInfo, FoundRegister), Failure> {
    let cpu = (!args.sim)
        .then(|| detect::read(args.root.as_deref()))
        .flatten();
    let found = resolve(register, cpu.as_ref().and_then(|c| c.uncore_spec()))?;
    if !args.sim {
        detect::check(args.root.as_deref(), register.trim(), found.info.processor)?;
    }
    let name = found.address.map_or(found.info.name, |a| a.name);
    match found.info.space {
        pmu_regs::Space::Pci if args.cpu.is_some() => {
            return Err(Failure::usage(format!(
                "--cpu does not apply to {name}: it is in PCI configuration space; choose it \
                 with --socket or --device"
            )))
        }
        pmu_regs::Space::Msr if args.device.is_some() => {
            return Err(Failure::usage(format!(
                "--device does not apply to {name}: it is an MSR; choose it with --cpu or \
                 --socket"
            )))
        }
        _ => {}
    }
    match (found.address, found.info.addresses) {
        (Some(a), _) => Ok((found.info, a, found)),
        (None, Addresses::Unknown(reason)) => Err(BackendError::AddressUnknown {
            register: found.info.name,
            reason,
        }
        .into()),
        (None, Addresses::Known(addrs)) => {
            Err(UsageError::needs_instance(register.trim(), addrs).into())
        }
        (None, Addresses::FromTable(_)) => Err(BackendError::TablePlaced {
            register: found.info.name,
        }
        .into()),
    }
}

pub(crate) fn place_text(place: Site) -> String {
    match place {
        Site::Cpu(c) => format!("CPU {c}"),
        Site::Device(b) => format!("device {b}"),
        Site::Mmio(a) => format!("address {a:#x}"),
    }
}

pub(crate) fn place_json(place: Site) -> Value {
    match place {
        Site::Cpu(c) => json!({"cpu": c}),
        Site::Device(b) => json!({"device": b.to_string()}),
        Site::Mmio(a) => json!({"physical_address": format!("{a:#x}")}),
    }
}

/// The processor a register belongs to (what `--sim` simulates).
pub(crate) fn processor_of(info: &RegisterInfo) -> &'static pmu_regs::ProcessorInfo {
    processor(info.processor).expect("every register's processor is in the metadata")
}

/// The machine `args` name for `info`'s processor, refusing a --cpu or --socket it does not
/// have, as `watch` does (where the topology can be read: a tree without one is still reached
/// by CPU number). The simulator refuses them itself, in its own words.
pub(crate) fn machine_at(args: &PlaceArgs, info: &RegisterInfo) -> Result<Machine, Failure> {
    let machine = args.machine_for(processor_of(info))?;
    if !args.sim && machine.topology().is_ok() {
        machine.check_place(args.cpu, args.socket)?;
    }
    Ok(machine)
}

/// `pmu read`.
pub fn read(register: &str, all: bool, show: &ValueArgs, args: &PlaceArgs, json_out: bool) -> Out {
    let (info, addr, found) = instance(register, args)?;
    let machine = machine_at(args, info)?;
    if all {
        return read_all(&machine, info, addr, show, args, json_out);
    }
    let place = machine.place(info, addr, &args.at()?)?;
    let raw = machine.read(&Resolved {
        info,
        address: addr,
        place,
    })?;
    let d = codec::decode(info, raw);
    if show.wanted() {
        return Ok(format!("{}\n", value_only(&d, show)?));
    }
    if json_out {
        let mut extra = serde_json::Map::new();
        extra.insert("instance".into(), json!(addr.name));
        extra.insert("place".into(), place_json(place));
        return Ok(decoded_json(&d, extra, None, None));
    }
    let head = header(&found, raw);
    Ok(format!(
        "{} on {}\n{}{}",
        head.trim_end(),
        place_text(place),
        event_line(&d, None, None),
        decoded_table(&d)
    ))
}

/// Every place `read -a` reads `info` at: each CPU for a core register, each socket for an
/// uncore one.
pub(crate) fn everywhere(
    topology: &Topology,
    info: &RegisterInfo,
    args: &PlaceArgs,
) -> Vec<PlaceArgs> {
    if per_cpu_unit(info.processor, info.unit) {
        let cpus = topology.cpus().into_iter();
        cpus.map(|(cpu, _)| PlaceArgs {
            cpu: Some(cpu),
            ..args.clone()
        })
        .collect()
    } else {
        let sockets = topology.sockets();
        sockets
            .map(|s| PlaceArgs {
                socket: Some(s),
                ..args.clone()
            })
            .collect()
    }
}

/// `pmu read -a`: a core register on every CPU, an uncore register on every socket.
pub(crate) fn read_all(
    machine: &Machine,
    info: &'static RegisterInfo,
    addr: &'static AddressInfo,
    show: &ValueArgs,
    args: &PlaceArgs,
    json_out: bool,
) -> Out {
    let topology = machine.topology()?;
    let wheres = everywhere(&topology, info, args);
    let mut lines = String::new();
    let mut items = Vec::new();
    let mut t = TextTable::new(&["SOCKET", "PLACE", "VALUE", "FIELDS SET"]);
    for w in &wheres {
        let place = machine.place(info, addr, &w.at()?)?;
        let raw = machine.read(&Resolved {
            info,
            address: addr,
            place,
        })?;
        let d = codec::decode(info, raw);
        let socket = match place {
            Site::Cpu(c) => topology.socket_of(c),
            Site::Device(_) | Site::Mmio(_) => w.socket,
        };
        if show.wanted() {
            lines.push_str(&value_only(&d, show)?);
            lines.push('\n');
        } else if json_out {
            let mut extra = serde_json::Map::new();
            extra.insert("instance".into(), json!(addr.name));
            extra.insert("place".into(), place_json(place));
            extra.insert("socket".into(), json!(socket));
            items.push(
                serde_json::from_str::<Value>(&decoded_json(&d, extra, None, None))
                    .expect("valid JSON"),
            );
        } else {
            let set: Vec<String> = d
                .fields
                .iter()
                .filter(|f| f.value != 0)
                .map(|f| format!("{}={:#x}", f.name, f.value))
                .collect();
            t.row(vec![
                socket.map_or("?".into(), |s| s.to_string()),
                place_text(place),
                hex(raw, info.width),
                set.join(" "),
            ]);
        }
    }
    if show.wanted() {
        return Ok(lines);
    }
    if json_out {
        return Ok(pmu_runtime::report::pretty_json(items));
    }
    Ok(format!(
        "{} ({})\n{}",
        addr.name,
        location_text(&addr.location),
        t.render()
    ))
}
