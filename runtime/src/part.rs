//! What this part has: which boxes of a unit, read from the part itself as the unit's
//! spec says (`<box-count>`: the set bits of a capability register or of CPUID bits, a
//! register holding the count, the socket's cores, or the PCI devices found),
//! so that a box the part lacks is refused by name before anything is programmed; the root
//! PCI bus each box serves, where the spec says where the part holds it (`<stack-bus>`:
//! [`stack_buses`]); and the part's discovery tables joined with the spec, knowing what the
//! part says of itself ([`joined_tables`]).

use pmu_regs::{BitRef, BoxCountRule, PmuInfo, UnitInfo};

use crate::access::BackendError;
use crate::boxes::{Boxes, Reg};
use crate::discovery::{join_on, DiscoveryError, Joined, PartCount, PartFacts};
use crate::error::{Result, UsageError};
use crate::machine::{Machine, Resolved, Where};

/// Which boxes of a unit one socket of this part has, and where that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxCount {
    /// Boxes 0 to `count - 1` of the unit's instances are present, but those in `absent`.
    pub count: u32,
    /// Positions below `count` the part lacks (a unit counted by its devices: a missing
    /// channel need not be the last).
    pub absent: Vec<u32>,
    /// What was read (`CAPID6.cha_en: 18 bits set`, `socket 0's 12 cores`).
    pub read: String,
    /// The rule and its source, from the spec.
    pub rule: &'static str,
    /// The public source id of the rule.
    pub source: &'static str,
}

impl BoxCount {
    /// Whether the box at `position` of the unit's instances is present.
    pub fn has(&self, position: u32) -> bool {
        position < self.count && !self.absent.contains(&position)
    }

    /// How many boxes are present.
    pub fn present_count(&self) -> u32 {
        self.count - self.absent.iter().filter(|&&a| a < self.count).count() as u32
    }

    /// The instances present, for messages: a range (`CHA0 to CHA17`), a list where some
    /// are missing (`IMC0, IMC1, IMC3`), or `none`.
    pub fn present(&self, unit: &UnitInfo) -> String {
        let n = (self.count as usize).min(unit.instances.len());
        if !self.absent.is_empty() {
            let names: Vec<&str> = (0..n)
                .filter(|&i| self.has(i as u32))
                .map(|i| unit.instances[i])
                .collect();
            return if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            };
        }
        match n {
            0 => "none".to_string(),
            1 => unit.instances[0].to_string(),
            _ => format!("{} to {}", unit.instances[0], unit.instances[n - 1]),
        }
    }
}

/// Which boxes of `pmu`'s unit `socket` has, read from the machine; `None` when the spec
/// gives no rule or says every part has every box listed (`listed`), when the discovery
/// table tells (`discovery`: the session's discovery check reads it), or when the rule reads
/// a value and the part gives 0 (it does not say: the discovery table's count stands).
pub fn box_count(machine: &Machine, pmu: &PmuInfo, socket: u32) -> Result<Option<BoxCount>> {
    let Some(rule) = pmu.box_count else {
        return Ok(None);
    };
    let fields = |bits: &[BitRef]| read_fields(machine, bits, socket);
    let (count, read) = match rule.rule {
        BoxCountRule::Listed | BoxCountRule::Discovery => return Ok(None),
        BoxCountRule::Devices => {
            let (count, absent, read) = devices_found(machine, pmu, socket)?;
            return Ok(Some(BoxCount {
                count,
                absent,
                read,
                rule: rule.description,
                source: rule.source,
            }));
        }
        BoxCountRule::SetBits(bits) => {
            let Some((raws, values)) = fields(bits)? else {
                return Ok(None);
            };
            let n = rule.rule.count_from(&raws).unwrap_or(0);
            (n, format!("{values} on socket {socket}: {n} bits set"))
        }
        BoxCountRule::Value(b) => {
            let Some((raws, values)) = fields(std::slice::from_ref(&b))? else {
                return Ok(None);
            };
            // Zero: the part does not say; the discovery table's count stands.
            match rule.rule.count_from(&raws).unwrap_or(0) {
                0 => return Ok(None),
                n => (n, format!("{values} on socket {socket}")),
            }
        }
        BoxCountRule::ValueMap(b, _) => {
            let Some((raws, values)) = fields(std::slice::from_ref(&b))? else {
                return Ok(None);
            };
            // A value the map lacks: every box the unit lists.
            let listed = unit_of(pmu).instances.len() as u32;
            let n = rule.rule.count_from(&raws).unwrap_or(listed);
            (
                n,
                format!("{values} on socket {socket}: {n} of {listed} boxes"),
            )
        }
        BoxCountRule::CpuidSetBits { active, counters } => {
            // No CPUID to ask (a directory tree), or a mask of 0 (a leaf that enumerates
            // nothing, as for every `count-cpuid`): the part does not say.
            let Some(mask) = machine.cpuid_count(active) else {
                return Ok(None);
            };
            let n = mask.count_ones();
            if let Some(text) = counters {
                counters_per_box(machine, pmu, text, n)?;
            }
            (n, format!("CPUID {active} = {mask:#x}: {n} bits set"))
        }
        BoxCountRule::CoresPerSocket => {
            let n = machine.topology()?.cores(socket).unwrap_or(0);
            (n, format!("socket {socket} has {n} cores"))
        }
    };
    Ok(Some(BoxCount {
        count,
        absent: Vec::new(),
        read,
        rule: rule.description,
        source: rule.source,
    }))
}

/// Refuses a part whose boxes have other than the spec's counters each, where CPUID gives
/// the counters of the `present` boxes together (`text`, shared equally, as Linux's
/// amd_uncore_umc_ctx_init shares EBX\[21:16\] among the active memory controllers): box l's
/// counters then start l x that many counters from the first box's, not where the spec's
/// addresses put them.
fn counters_per_box(machine: &Machine, pmu: &PmuInfo, text: &str, present: u32) -> Result<()> {
    let Some(total) = machine.cpuid_count(text) else {
        return Ok(());
    };
    let listed = pmu
        .counters
        .iter()
        .filter(|c| c.kind == pmu_regs::CounterKind::General)
        .count() as u32;
    let each = total.checked_div(present).unwrap_or(0);
    if present == 0 || each == listed {
        return Ok(());
    }
    Err(UsageError::Refused(format!(
        "this part has {total} {unit} counters for its {present} boxes (CPUID {text}):          {each} each, where the spec's addresses are those of {listed} each, so every box          after the first is elsewhere; count it through perf (--backend perf), whose driver          places them from CPUID",
        unit = pmu.unit
    ))
    .into())
}

/// The registers of `bits` read on `socket`: their raw values and, for messages, each
/// field's value (`CAPID6.cha_en = 0x3ffff, ...`); `None` when one has no known address.
fn read_fields(
    machine: &Machine,
    bits: &[BitRef],
    socket: u32,
) -> Result<Option<(Vec<u64>, String)>> {
    let at = Where {
        socket: Some(socket),
        ..Where::default()
    };
    let mut raws = Vec::with_capacity(bits.len());
    let mut values = Vec::with_capacity(bits.len());
    for b in bits {
        let Some(address) = b.address() else {
            return Ok(None);
        };
        let place = machine.place(b.register, address, &at)?;
        let raw = machine.read(&Resolved {
            info: b.register,
            address,
            place,
        })?;
        values.push(format!("{} = {:#x}", b.qualified, b.field.extract(raw)));
        raws.push(raw);
    }
    Ok(Some((raws, values.join(", "))))
}

/// The unit a PMU structure belongs to.
fn unit_of(pmu: &PmuInfo) -> &'static UnitInfo {
    pmu_regs::PROCESSORS
        .iter()
        .find(|p| p.id == pmu.processor)
        .and_then(|p| p.units.iter().find(|u| u.name == pmu.unit))
        .expect("every PMU's unit is in the metadata")
}

/// The boxes of a unit counted by its devices (`devices`) that `socket` has: a box is there
/// when its first counter is reached, the device that holds it (or its memory-mapped
/// window's base) found. Returns the unit's box count, the positions missing
/// and what was read. When no box's device is found, the first box's error is returned: it
/// says how to look for the devices, which "none present" would not.
fn devices_found(machine: &Machine, pmu: &PmuInfo, socket: u32) -> Result<(u32, Vec<u32>, String)> {
    let at = Where {
        socket: Some(socket),
        ..Where::default()
    };
    let unit = unit_of(pmu);
    let mut absent = Vec::new();
    let mut first_error = None;
    for (position, instance) in unit.instances.iter().enumerate() {
        let first = pmu.counters.iter().find_map(|c| {
            let r = c.counter.register;
            let a = r
                .known_addresses()
                .iter()
                .find(|a| a.instance == *instance)?;
            Some((r, a))
        });
        let Some((info, address)) = first else {
            continue;
        };
        match machine.place(info, address, &at) {
            Ok(_) => {}
            Err(e @ crate::Error::Backend(BackendError::DeviceNotFound { .. })) => {
                absent.push(position as u32);
                first_error.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    let n = unit.instances.len() as u32;
    let found = n - absent.len() as u32;
    match first_error {
        // None found: the first box's own error says where to look.
        Some(e) if found == 0 => Err(e),
        _ => Ok((
            n,
            absent,
            format!("socket {socket}: the devices of {found} of {n} boxes found"),
        )),
    }
}

/// The root PCI bus each box of a unit serves on one socket, as the part holds it (the
/// spec's `<stack-bus>`: Skylake-SP and Cascade Lake's IIO stacks, MSR 0x300).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackBuses {
    /// The socket read.
    pub socket: u32,
    /// The register's name and raw value, as read.
    pub register: &'static str,
    /// The raw value read.
    pub raw: u64,
    /// Each box (instance) and its bus, in the unit's order; a box whose byte is 0 has no
    /// stack (`None`) unless it is the unit's first (stack 0 may own bus 0), as Linux's
    /// skx_iio_mapping_visible hides it. `None` altogether while the valid bit is clear:
    /// firmware has not set the buses, and Linux maps no box either.
    pub buses: Option<Vec<(&'static str, Option<u8>)>>,
    /// The public source of the rule.
    pub source: &'static str,
}

impl StackBuses {
    /// The boxes and their buses as perf's `dieN` files write them (`IIO0 0000:00, IIO1
    /// 0000:17, IIO4 none`), or why there are none.
    pub fn describe(&self) -> String {
        match &self.buses {
            None => format!(
                "{} = {:#x}: valid bit clear, firmware has not set the buses",
                self.register, self.raw
            ),
            Some(b) => b
                .iter()
                .map(|(name, bus)| match bus {
                    Some(n) => format!("{name} 0000:{n:02x}"),
                    None => format!("{name} none"),
                })
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// The root PCI bus of each box of `pmu`'s unit on `socket`, read from the register its
/// `<stack-bus>` names on a CPU of that socket; `None` for a unit without one.
pub fn stack_buses(machine: &Machine, pmu: &PmuInfo, socket: u32) -> Result<Option<StackBuses>> {
    let Some(rule) = pmu.stack_bus else {
        return Ok(None);
    };
    let Some(address) = rule.valid.address() else {
        return Ok(None);
    };
    let at = Where {
        socket: Some(socket),
        ..Where::default()
    };
    let place = machine.place(rule.valid.register, address, &at)?;
    let raw = machine.read(&Resolved {
        info: rule.valid.register,
        address,
        place,
    })?;
    let instances = unit_of(pmu).instances;
    let buses = rule.is_valid(raw).then(|| {
        instances
            .iter()
            .enumerate()
            .filter_map(|(k, name)| {
                let bus = rule.bus_of(raw, k)?;
                Some((*name, (k == 0 || bus != 0).then_some(bus)))
            })
            .collect()
    });
    Ok(Some(StackBuses {
        socket,
        register: rule.valid.register_name,
        raw,
        buses,
        source: rule.source,
    }))
}

/// One discovery table of the part, joined with the spec.
#[derive(Debug)]
pub struct JoinedTable {
    /// The socket the table is taken to describe: the tables in device order are the
    /// sockets in order (one discovery device per socket).
    pub socket: u32,
    /// The discovery device that locates it.
    pub device: crate::Bdf,
    /// The join, or why the table could not be read.
    pub joined: std::result::Result<Joined, DiscoveryError>,
}

/// Every discovery table `machine` publishes, each joined with `spec` knowing what the part
/// says of itself on that table's socket ([`part_facts`]).
pub fn joined_tables(machine: &Machine, spec: &'static Boxes) -> Vec<JoinedTable> {
    machine
        .discovery_tables()
        .into_iter()
        .enumerate()
        .map(|(i, (device, table))| {
            let socket = i as u32;
            let joined = table.map(|t| {
                let facts = part_facts(machine, spec, socket);
                join_on(spec, &t, &facts)
            });
            JoinedTable {
                socket,
                device,
                joined,
            }
        })
        .collect()
}

/// The joins of `tables` as (socket, join) rows, as `pmu discover` prints them;
/// any table that could not be read is the error, naming each socket, device and why
/// ([`DiscoveryError::Unread`]).
pub fn readable_tables(
    tables: Vec<JoinedTable>,
) -> std::result::Result<Vec<(u32, Joined)>, DiscoveryError> {
    let mut unread = Vec::new();
    let mut joined = Vec::new();
    for t in tables {
        match t.joined {
            Ok(j) => joined.push((t.socket, j)),
            Err(e) => unread.push((t.socket, t.device, e)),
        }
    }
    if unread.is_empty() {
        Ok(joined)
    } else {
        Err(DiscoveryError::Unread { tables: unread })
    }
}

/// Every table of every discovery domain of `processor` (`ProcessorInfo::discovery_domains`)
/// on `machine`, each read and joined on its own ([`crate::discovery::read_domains`]): on the
/// simulator the tables it publishes for the processor (one socket, one die:
/// [`crate::sim::domains::SimDomains`]). Empty for a processor without domains, and on
/// hardware, where reading a domain's MSR and PCI devices is not done yet.
pub fn joined_domains(
    processor: &'static pmu_regs::ProcessorInfo,
    machine: &Machine,
) -> Vec<crate::discovery::DomainJoined> {
    crate::discovery::join_domains(processor, domain_tables(processor, machine))
}

/// Every table of every discovery domain of `processor` on `machine`, as read
/// ([`crate::discovery::read_domains`]): on the simulator the tables it publishes for the
/// processor; empty for a processor without domains, and on hardware (not done yet).
pub fn domain_tables(
    processor: &'static pmu_regs::ProcessorInfo,
    machine: &Machine,
) -> Vec<crate::discovery::DomainTable> {
    let Some(sim) = machine
        .sim()
        .and_then(|s| s.domains())
        .filter(|d| std::ptr::eq(d.processor, processor))
    else {
        return Vec::new();
    };
    crate::discovery::read_domains(processor, sim, &sim.devices(), |_| vec![0])
}

/// What a session does to each table of `processor`'s domains that have a `global_init`, on
/// `machine`, as `pmu discover` says it: one line per table (each ending in a newline), with
/// what its global control holds now (`cbb table 0: global control at 0xd0180000 reads 0x1
/// (freeze_all set ...`).
pub fn domain_init_text(processor: &'static pmu_regs::ProcessorInfo, machine: &Machine) -> String {
    use crate::access::MmioAccess;
    let tables = domain_tables(processor, machine);
    let line = |t: &crate::discovery::DomainTable| {
        let value = t.domain.global_init?;
        let at = t.table.as_ref().ok()?.global.control;
        let now = match machine.read_mmio(at, 32) {
            Ok(v) if v & 1 != 0 => {
                format!("reads {v:#x} (freeze_all set: no box of this table counts)")
            }
            Ok(v) => format!("reads {v:#x}"),
            Err(e) => format!("cannot be read ({e})"),
        };
        Some(format!(
            "{} table {}: global control at {at:#x} {now}; a session writes {value:#x} there \
             before counting and puts back what it found (global-init, {}; --no-quirk \
             global-init leaves it)\n",
            t.domain.id, t.index, t.domain.source
        ))
    };
    tables.iter().filter_map(line).collect()
}

/// What the part says of itself on `socket`, for the join: the box count of every unit with
/// a discovery type and a `<box-count>` the part answers (a count that cannot be read is left
/// to the table), and the physical address of each memory-mapped register.
pub fn part_facts<'a>(machine: &'a Machine, spec: &'static Boxes, socket: u32) -> PartFacts<'a> {
    let mut counts = Vec::new();
    for u in spec.processor.units {
        let Some(pmu) = u
            .pmu
            .filter(|m| m.discovery_type.is_some() && m.box_count.is_some())
        else {
            continue;
        };
        if let Ok(Some(c)) = box_count(machine, pmu, socket) {
            counts.push(PartCount {
                unit: u.name,
                count: c.present_count(),
                read: c.read,
                source: c.source,
            });
        }
    }
    let at = Where {
        socket: Some(socket),
        ..Where::default()
    };
    let mmio = move |r: Reg| match machine.place(r.info, r.addr, &at) {
        Ok(crate::Site::Mmio(a)) => Some(a),
        _ => None,
    };
    PartFacts {
        counts,
        mmio: Some(Box::new(mmio)),
    }
}
