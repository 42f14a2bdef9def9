//! The simulated part: what it answers when software asks how many boxes of a unit it has
//! (the spec's `<box-count>`), as [`SimConfig::part`] configures it. A capability register
//! holds one set bit per box present, a count register the count, a mapped field a value
//! that maps to it; a unit counted by cores gets that many cores per socket; a unit counted
//! by its devices lacks the PCI devices of the boxes past the count; CPUID bits counting the
//! boxes present (`cpuid-set-bits`) hold one set bit per box, and those counting their
//! counters together as many as the boxes have, unless [`SimConfig::cpuid_counts`] gives
//! the value. Where the spec says a register holds the root PCI bus of each box
//! (`<stack-bus>`), each socket's holds its own buses, valid bit set ([`with_stack_buses`]).

use pmu_regs::{BitRef, BoxCountRule, CounterKind, Location, PmuInfo, UnitInfo};

use crate::cpuid::CpuidBits;

use super::regs::Reg;
use super::uncore::SocketState;
use super::SimConfig;

/// The units of the simulated processor whose box count the part tells, with the count the
/// part gives: the configured one, or every box the unit lists.
fn counted_units(
    config: &SimConfig,
) -> impl Iterator<Item = (&'static UnitInfo, &'static PmuInfo, u32)> + '_ {
    config.processor.units.iter().filter_map(|u| {
        let pmu = u.pmu?;
        pmu.box_count?;
        let listed = u.instances.len() as u32;
        let configured = config.part.iter().find(|(name, _)| *name == u.name);
        Some((*u, pmu, configured.map_or(listed, |&(_, n)| n.min(listed))))
    })
}

/// Writes `value` into the field `b` names, in the socket's power-on state (bits beyond the
/// field dropped).
fn put_field(state: &mut SocketState, b: &BitRef, value: u64) {
    let Some(addr) = b.address() else { return };
    let reg = Reg {
        info: b.register,
        addr,
    };
    let raw = state.regs.get(&reg) & !b.field.mask() | (value << b.field.lsb) & b.field.mask();
    state.regs.put(&reg, raw);
}

/// A socket's state at power-on: every register at its reset value but the capability
/// registers, which hold one set bit per box this part has.
pub(super) fn socket_state(config: &SimConfig) -> SocketState {
    let mut state = SocketState::default();
    for (unit, pmu, n) in counted_units(config) {
        let bits = match pmu.box_count.map(|b| b.rule) {
            Some(BoxCountRule::SetBits(bits)) => bits,
            // A register holding the count: the count, in its field.
            Some(BoxCountRule::Value(b)) => {
                put_field(&mut state, &b, u64::from(n));
                continue;
            }
            // A field whose value maps to a count: a value mapping to `n`, or, for every box
            // listed, the lowest value the map lacks.
            Some(BoxCountRule::ValueMap(b, map)) => {
                let listed = unit.instances.len() as u32;
                let value = match map.iter().find(|&&(_, boxes)| boxes == n) {
                    Some(&(v, _)) if n < listed => Some(v),
                    _ => (0..).find(|v| map.iter().all(|(m, _)| m != v)),
                };
                if let Some(v) = value {
                    put_field(&mut state, &b, v);
                }
                continue;
            }
            _ => continue,
        };
        // The boxes' bits fill the fields in order: the first field's bits, then the next's.
        let mut left = n;
        for b in bits {
            if b.address().is_none() {
                continue;
            }
            let take = left.min(b.field.msb - b.field.lsb + 1);
            left -= take;
            let ones = if take >= 64 {
                u64::MAX
            } else {
                (1u64 << take) - 1
            };
            put_field(&mut state, b, ones);
        }
    }
    state
}

/// The root bus the simulated part's firmware gives box `k` of a `<stack-bus>` unit on
/// `socket`: the first four stacks at `0x40 x socket + 0x10 x k` (stack 0 of sockets 0 to 3
/// at 00, 40, 80, c0, as the kernel's sysfs-devices-mapping example shows a four-die part),
/// the others absent (bus 0), as on a part without its MCP stacks (0 past bus 0xff).
fn simulated_stack_bus(socket: u32, k: u32) -> u8 {
    match k {
        0..=3 => u8::try_from(0x40 * socket + 0x10 * k).unwrap_or(0),
        _ => 0,
    }
}

/// A socket's power-on state with the `<stack-bus>` registers filled in as firmware leaves
/// them: each box's bus ([`simulated_stack_bus`]) and the valid bit set.
pub(super) fn with_stack_buses(
    config: &SimConfig,
    socket: u32,
    mut state: SocketState,
) -> SocketState {
    for rule in config
        .processor
        .units
        .iter()
        .filter_map(|u| u.pmu.and_then(|p| p.stack_bus))
    {
        put_field(&mut state, &rule.valid, 1);
        for (k, b) in rule.buses.iter().enumerate() {
            put_field(
                &mut state,
                b,
                u64::from(simulated_stack_bus(socket, k as u32)),
            );
        }
    }
    state
}

/// The cores per socket of a part whose box count of some unit is its cores: that count
/// (the largest, if several units are counted so); `None` when no unit is counted by cores.
pub(super) fn cores_per_socket(config: &SimConfig) -> Option<u32> {
    counted_units(config)
        .filter(|(_, pmu, _)| {
            matches!(
                pmu.box_count.map(|b| b.rule),
                Some(BoxCountRule::CoresPerSocket)
            )
        })
        .map(|(_, _, n)| n)
        .max()
}

/// The PCI devices (device id, device, function) this part lacks: those holding only boxes
/// past the configured count of a unit counted by its devices.
pub(super) fn absent_devices(config: &SimConfig) -> Vec<(u16, u8, u8)> {
    let mut absent = Vec::new();
    for (unit, pmu, n) in counted_units(config) {
        if !matches!(pmu.box_count.map(|b| b.rule), Some(BoxCountRule::Devices)) {
            continue;
        }
        let devices_of = |instance: &str| -> Vec<(u16, u8, u8)> {
            pmu.counters
                .iter()
                .flat_map(|c| c.counter.register.known_addresses())
                .filter(|a| a.instance == instance)
                .filter_map(|a| match a.location {
                    Location::Pci {
                        device_id,
                        device,
                        function,
                        ..
                    } => Some((device_id, device, function)),
                    _ => None,
                })
                .collect()
        };
        let kept: Vec<(u16, u8, u8)> = unit.instances[..n as usize]
            .iter()
            .flat_map(|i| devices_of(i))
            .collect();
        for instance in &unit.instances[n as usize..] {
            absent.extend(
                devices_of(instance)
                    .into_iter()
                    .filter(|d| !kept.contains(d)),
            );
        }
    }
    absent
}

/// CPUID leaf `leaf` as the part answers it where a unit's box count is read from CPUID
/// (`cpuid-set-bits`): `regs` (the leaf as the registers' `count-cpuid` bits built it, or
/// `None`) with the unit's bits filled in. The active mask has the lowest bits set, one per
/// box present; the counters of the boxes present together are that many boxes' worth of the
/// spec's counters. A value [`SimConfig::cpuid_counts`] gives for the same bits is taken
/// instead, as a hand-written CPUID would be.
pub(super) fn cpuid_box_counts(
    config: &SimConfig,
    leaf: u32,
    mut regs: Option<[u32; 4]>,
) -> Option<[u32; 4]> {
    for (_, pmu, n) in counted_units(config) {
        let Some(BoxCountRule::CpuidSetBits { active, counters }) = pmu.box_count.map(|b| b.rule)
        else {
            continue;
        };
        let per_box = pmu
            .counters
            .iter()
            .filter(|c| c.kind == CounterKind::General)
            .count() as u32;
        let ones = u32::MAX.checked_shr(32 - n.min(32)).unwrap_or(0);
        for (text, part_gives) in [(Some(active), ones), (counters, n * per_box)] {
            let Some(text) = text else { continue };
            let Some(bits) = CpuidBits::parse(text).filter(|b| b.leaf == leaf) else {
                continue;
            };
            let value = config
                .cpuid_counts
                .iter()
                .find(|(t, _)| *t == text)
                .map_or(part_gives, |&(_, v)| v);
            regs = Some(bits.insert(regs.unwrap_or([0; 4]), value));
        }
    }
    regs
}
