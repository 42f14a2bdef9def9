//! `pmu write`: a register written whole or field by field, refused while a session holds
//! its box.

use pmu_regs::{AddressInfo, RegisterInfo};
use pmu_runtime::boxes::Boxes;
use pmu_runtime::codec::{self};
use pmu_runtime::machine::{Machine, Resolved};
use pmu_runtime::ownership::{Lease, Ownership, Pmu};
use pmu_runtime::session::words;
use pmu_runtime::Site;
use serde_json::json;

use crate::failure::Out;
use crate::read::{instance, machine_at, place_json, place_text, processor_of};
use crate::{warn, Failure, PlaceArgs};
use pmu_runtime::report::register::{decoded_json, decoded_table, header, hex};

/// `pmu write`: refused, before anything is written, when a session holds the register's
/// box (its exit would put its own value back over this one); the register is read back.
pub fn write(
    register: &str,
    values: &[String],
    dry_run: bool,
    args: &PlaceArgs,
    json_out: bool,
) -> Out {
    let (info, addr, found) = instance(register, args)?;
    let whole = whole_value(addr, values)?;
    if info.writable_mask == 0 {
        return Err(Failure::usage(format!(
            "{} is read-only: none of its fields can be written",
            addr.name
        )));
    }
    let machine = machine_at(args, info)?;
    let place = machine.place(info, addr, &args.at()?)?;
    let reg = Resolved {
        info,
        address: addr,
        place,
    };
    let (old, new) = match whole {
        Some(v) => (None, v),
        None => {
            let assignments = words::assignments(info, values)?;
            let current = machine.read(&reg)?;
            // Reserved bits read back are never written back.
            let base = current & !info.reserved_mask;
            (Some(current), codec::encode(info, base, &assignments)?)
        }
    };
    // Refused here, before anything is written, for the same reasons the write would be.
    machine.check(&reg, new)?;
    let d = codec::decode(info, new);
    let back = if dry_run {
        None
    } else {
        let _lease = claim_for_write(&machine, &reg, args)?;
        machine.write(&reg, new)?;
        Some(machine.read(&reg)?)
    };
    let differs = back.and_then(|b| read_back_differs(info, new, b));
    if let Some(text) = &differs {
        warn(text);
    }
    if json_out {
        let mut extra = serde_json::Map::new();
        extra.insert("instance".into(), json!(addr.name));
        extra.insert("place".into(), place_json(place));
        extra.insert("previous".into(), json!(old));
        extra.insert("previous_hex".into(), json!(old.map(|o| format!("{o:#x}"))));
        extra.insert("written".into(), json!(!dry_run));
        extra.insert("read_back".into(), json!(back));
        extra.insert("read_back_differs".into(), json!(differs.is_some()));
        return Ok(decoded_json(&d, extra, None, None));
    }
    let verb = if dry_run { "would write" } else { "wrote" };
    let head = header(&found, new);
    let was = old
        .map(|o| format!(" (was {})", hex(o, info.width)))
        .unwrap_or_default();
    Ok(format!(
        "{verb} {} on {}{was}\n{}",
        head.trim_end(),
        place_text(place),
        decoded_table(&d)
    ))
}

/// The one whole value among `values`, `None` for field=value pairs, or a usage error for a
/// mixture.
pub(crate) fn whole_value(addr: &AddressInfo, values: &[String]) -> Result<Option<u64>, Failure> {
    let bare: Vec<&String> = values.iter().filter(|v| !v.contains('=')).collect();
    match (values, bare.as_slice()) {
        ([v], [_]) => Ok(Some(words::number(v)?)),
        (_, []) => Ok(None),
        _ => Err(Failure::usage(format!(
            "give one whole value (write {} 0x400001) or field=value pairs (ev_sel=0x02 \
             en=1), not {}",
            addr.name,
            values.join(" ")
        ))),
    }
}

/// Claims, for the length of the write, the PMU a counting session on `reg`'s box would
/// hold: a write under a running `watch` is refused naming it. Registers of no box are
/// written without a claim.
pub(crate) fn claim_for_write(
    machine: &Machine,
    reg: &Resolved,
    args: &PlaceArgs,
) -> Result<Option<Lease>, Failure> {
    let processor = processor_of(reg.info);
    let (cpu, socket) = match reg.place {
        Site::Cpu(c) => {
            let topology = machine.topology().ok();
            (c, topology.and_then(|t| t.socket_of(c)).or(args.socket))
        }
        Site::Device(bdf) => {
            let devices = machine.devices(processor).ok();
            let on_bus = devices.and_then(|d| {
                d.sockets
                    .iter()
                    .position(|s| s.segment == bdf.segment && s.bus == bdf.bus)
            });
            (0, on_bus.map(|s| s as u32).or(args.socket))
        }
        Site::Mmio(_) => (0, args.socket),
    };
    let socket = socket.unwrap_or(0) as usize;
    match Pmu::of_register(Boxes::of(processor), reg.address, cpu, socket) {
        Some(pmu) => Ok(Some(machine.claim(&pmu)?)),
        None => Ok(None),
    }
}

/// What to say when `back`, read after writing `wrote`, differs in the bits that hold what
/// is written (read/write fields the hardware does not change by itself).
pub(crate) fn read_back_differs(info: &RegisterInfo, wrote: u64, back: u64) -> Option<String> {
    let stable: u64 = info
        .fields
        .iter()
        .filter(|f| f.access == pmu_regs::Access::Rw)
        .fold(0, |m, f| m | f.mask());
    let bits = (wrote ^ back) & stable;
    if bits == 0 {
        return None;
    }
    let fields: Vec<&str> = info
        .fields
        .iter()
        .filter(|f| f.mask() & bits != 0)
        .map(|f| f.name)
        .collect();
    Some(format!(
        "read {} back after writing {}: bits {bits:#x} ({}) did not take; the hardware may not \
         implement them, or something else changed them",
        hex(back, info.width),
        hex(wrote, info.width),
        fields.join(", ")
    ))
}
