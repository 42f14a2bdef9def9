//! The model's JSON form (`model/pmu-regs.json`, written by `emit::json`; the format is
//! `templates/model.schema.json`'s). Most of the model's types derive `Serialize` where they
//! are declared, with `#[serde(...)]` attributes for what the JSON spells otherwise. The few
//! below name what they point at by index (a register of their unit, a bit in another unit
//! of the processor) or write values derived from their fields (masks, bit ranges): they
//! are serialised here, with their unit and processor at hand, each key in schema order.

use serde::ser::{SerializeMap, SerializeStruct, Serializer};
use serde::Serialize;

use super::metric::MetricRead;
use super::pmu::{self, BitRef, OverflowSeen, RegIndex};
use super::{
    Address, Addresses, CountDefault, EventSettings, Field, Location, Register, SourceOrigin,
    SourceRef, Unit,
};

/// `Processor::units` as the JSON writes it: the processor's global level (`global`, from the
/// unit that declares it), then its units.
pub(super) fn global_and_units<S: Serializer>(units: &[Unit], s: S) -> Result<S::Ok, S::Error> {
    let global = units.iter().find_map(|unit| {
        let global = unit.pmu.as_ref()?.global.as_ref()?;
        unit.instances.first()?;
        Some(In::new(units, unit, global))
    });
    let each: Vec<In<'_, Unit>> = units.iter().map(|u| In::new(units, u, u)).collect();
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("global", &global)?;
    m.serialize_entry("units", &each)?;
    m.end()
}

/// A perf driver by its id.
pub(super) fn driver_id<S: Serializer>(
    d: &std::sync::Arc<pmu::PerfDriver>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(&d.id)
}

/// An event's counters mask as the list of counter numbers.
pub(super) fn counter_list<S: Serializer>(mask: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq((0..32).filter(|n| mask >> n & 1 != 0))
}

/// An event's counters without Hyper-Threading: their list, or `null` where the mask is
/// empty (the same counters as with it).
pub(super) fn counter_list_or_none<S: Serializer>(mask: &u32, s: S) -> Result<S::Ok, S::Error> {
    if *mask == 0 {
        s.serialize_none()
    } else {
        counter_list(mask, s)
    }
}

/// A metric event's settings: `threshold`, `invert` and `edge` (it has no `any_thread`).
pub(super) fn metric_settings<S: Serializer>(
    settings: &EventSettings,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("threshold", &settings.threshold)?;
    m.serialize_entry("invert", &settings.invert)?;
    m.serialize_entry("edge", &settings.edge)?;
    m.end()
}

/// How a metric event is read: `read` (`counted`, `slots`, `slots-share`), and for a share of
/// the slots its IA32_PERF_METRICS byte (`perf_metrics_byte`, else left out).
pub(super) fn metric_read<S: Serializer>(read: &MetricRead, s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(None)?;
    match read {
        MetricRead::Counted => m.serialize_entry("read", "counted")?,
        MetricRead::Slots => m.serialize_entry("read", "slots")?,
        MetricRead::SlotsShare(byte) => {
            m.serialize_entry("read", "slots-share")?;
            m.serialize_entry("perf_metrics_byte", byte)?;
        }
    }
    m.end()
}

/// An item of the model with the unit it belongs to and every unit of its processor.
struct In<'a, T> {
    units: &'a [Unit],
    unit: &'a Unit,
    item: &'a T,
}

impl<T> Clone for In<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for In<'_, T> {}

impl<'a, T> In<'a, T> {
    fn new(units: &'a [Unit], unit: &'a Unit, item: &'a T) -> Self {
        In { units, unit, item }
    }

    /// Another item of the same unit.
    fn with<U>(self, item: &'a U) -> In<'a, U> {
        In::new(self.units, self.unit, item)
    }

    /// Each of `items`, with this unit.
    fn each<U>(self, items: &'a [U]) -> Vec<In<'a, U>> {
        items.iter().map(|i| self.with(i)).collect()
    }

    /// The name of register `r` of the unit.
    fn register(self, r: usize) -> &'a str {
        &self.unit.registers[r].name
    }
}

impl Serialize for In<'_, Unit> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let u = self.item;
        let mut m = s.serialize_struct("Unit", 11)?;
        m.serialize_field("name", &u.name)?;
        m.serialize_field("module", &u.module)?;
        m.serialize_field("title", &u.title)?;
        m.serialize_field("description", &u.description)?;
        m.serialize_field("file", &u.file)?;
        m.serialize_field("instances", &u.instances)?;
        m.serialize_field("registers", &self.each(&u.registers))?;
        m.serialize_field("events", &u.events)?;
        m.serialize_field("pmu", &u.pmu.as_ref().map(|p| self.with(p)))?;
        m.serialize_field("mmio_window", &u.mmio_window)?;
        match &u.node_events {
            Some(n) => m.serialize_field("node_events", n)?,
            None => m.skip_field("node_events")?,
        }
        m.end()
    }
}

impl Serialize for In<'_, Register> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.item;
        let (addresses, unknown): (Vec<Placed<'_>>, Option<&String>) = match &r.addresses {
            Addresses::Known(addrs) => (
                addrs
                    .iter()
                    .map(|a| Placed {
                        unit: self.unit,
                        register: r,
                        address: a,
                    })
                    .collect(),
                None,
            ),
            Addresses::Unknown { reason } => (Vec::new(), Some(reason)),
            Addresses::FromTable(_) => (Vec::new(), None),
        };
        let mut m = s.serialize_struct("Register", 16)?;
        m.serialize_field("name", &r.name)?;
        m.serialize_field("type_name", &r.type_name)?;
        m.serialize_field("width", &r.width)?;
        m.serialize_field("space", &r.space)?;
        m.serialize_field("count", &r.count)?;
        m.serialize_field("count_cpuid", &r.count_cpuid)?;
        m.serialize_field("reset", &r.reset)?;
        m.serialize_field("reserved_mask", &r.reserved_mask())?;
        m.serialize_field("ignored_mask", &r.ignored_mask())?;
        m.serialize_field("writable_mask", &r.writable_mask())?;
        m.serialize_field("description", &r.description)?;
        m.serialize_field("sources", &r.sources)?;
        m.serialize_field("addresses", &addresses)?;
        m.serialize_field("address_unknown", &unknown)?;
        match &r.addresses {
            Addresses::FromTable(t) => m.serialize_field("from_table", t)?,
            _ => m.skip_field("from_table")?,
        }
        m.serialize_field("fields", &r.fields)?;
        m.serialize_field("notes", &r.notes)?;
        m.end()
    }
}

/// One instance and index of a register, with its address: the keys of a `pmu list --json`
/// item.
struct Placed<'a> {
    unit: &'a Unit,
    register: &'a Register,
    address: &'a Address,
}

impl Serialize for Placed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (u, r, a) = (self.unit, self.register, self.address);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", &r.address_name(u, a))?;
        m.serialize_entry("instance", &u.instances[a.instance].name)?;
        m.serialize_entry("index", &a.index)?;
        m.serialize_entry("space", &r.space)?;
        // The MSR number, or for PCI the config-space offset (as `pmu list --json`).
        match a.location {
            Location::Msr(n) | Location::Table(n) => m.serialize_entry("address", &n)?,
            // Linux's sys_reg() value as the address, and the five numbers.
            Location::SysReg(e) => {
                m.serialize_entry("address", &e.linux_encoding())?;
                m.serialize_entry("op0", &e.op0)?;
                m.serialize_entry("op1", &e.op1)?;
                m.serialize_entry("crn", &e.crn)?;
                m.serialize_entry("crm", &e.crm)?;
                m.serialize_entry("op2", &e.op2)?;
                m.serialize_entry("sysreg", &e.generic_name())?;
            }
            Location::Mmio {
                controller,
                channel,
                offset,
            } => {
                m.serialize_entry("address", &offset)?;
                m.serialize_entry("offset", &offset)?;
                m.serialize_entry("controller", &controller)?;
                m.serialize_entry("channel", &channel)?;
            }
            Location::Pci {
                device_id,
                device,
                function,
                offset,
            } => {
                m.serialize_entry("address", &u32::from(offset))?;
                m.serialize_entry("offset", &offset)?;
                m.serialize_entry("device_id", &device_id)?;
                m.serialize_entry("device", &device)?;
                m.serialize_entry("function", &function)?;
            }
        }
        m.serialize_entry("source", &*a.source)?;
        m.end()
    }
}

impl Serialize for SourceRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (kind, id) = match &*self.origin {
            SourceOrigin::Document { id, .. } => ("document", id),
            SourceOrigin::Public { id, .. } => ("public", id),
        };
        let mut m = s.serialize_struct("SourceRef", 6)?;
        m.serialize_field("kind", kind)?;
        m.serialize_field("id", id)?;
        m.serialize_field("table", &self.table)?;
        m.serialize_field("page", &self.page)?;
        m.serialize_field("section", &self.section)?;
        m.serialize_field("citation", &self.citation())?;
        m.end()
    }
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self;
        let no_counters: &[u32] = &[];
        let mut m = s.serialize_struct("Field", 15)?;
        m.serialize_field("name", &*f.name)?;
        m.serialize_field("lsb", &f.lsb)?;
        m.serialize_field("msb", &f.msb)?;
        m.serialize_field("ranges", &f.ranges())?;
        m.serialize_field("width", &f.width())?;
        m.serialize_field("mask", &f.mask())?;
        m.serialize_field("access", &f.access)?;
        m.serialize_field("reset", &f.reset)?;
        m.serialize_field("description", f.shown_description())?;
        m.serialize_field("values", &f.values)?;
        m.serialize_field("repeat", &f.repeat)?;
        m.serialize_field("source", &f.source.as_deref())?;
        m.serialize_field("role", &f.role.as_ref().map(|r| r.role))?;
        let counters = f.role.as_ref().map_or(no_counters, |r| &r.counters);
        m.serialize_field("counters", counters)?;
        let count_default = f.count_default.map(|d| CountDefaultOf(d, f.width()));
        m.serialize_field("count_default", &count_default)?;
        m.end()
    }
}

/// A counter control field's value while counting when the event leaves it, for a field of
/// the given width.
struct CountDefaultOf(CountDefault, u32);

impl Serialize for CountDefaultOf {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("CountDefault", 2)?;
        m.serialize_field("value", &self.0.value(self.1))?;
        m.serialize_field("all_ones", &(self.0 == CountDefault::AllOnes))?;
        m.end()
    }
}

impl Serialize for In<'_, pmu::Pmu> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.item;
        let names =
            |regs: &[usize]| -> Vec<&str> { regs.iter().map(|&r| self.register(r)).collect() };
        let mut m = s.serialize_struct("Pmu", 15)?;
        m.serialize_field("scope", &p.scope)?;
        m.serialize_field("discovery_type", &p.discovery_type)?;
        m.serialize_field("discovery_ignored", &p.discovery_ignored)?;
        m.serialize_field("discovery_count", &p.discovery_count)?;
        m.serialize_field("discovery_broken", &p.discovery_broken)?;
        m.serialize_field("saturation", &p.saturation)?;
        m.serialize_field("global_init", &self.each(&p.global_init))?;
        m.serialize_field("clock_event", &p.clock_event.as_ref().map(ClockEventOf))?;
        m.serialize_field("controls", &names(&p.controls))?;
        m.serialize_field("statuses", &names(&p.statuses))?;
        m.serialize_field("overflow_clears", &names(&p.overflow_clears))?;
        m.serialize_field("counters", &self.each(&p.counters))?;
        m.serialize_field("filters", &self.each(&p.filters))?;
        m.serialize_field("routes", &self.each(&p.routes))?;
        m.serialize_field("notes", &p.notes)?;
        m.end()
    }
}

/// A unit's clock event (`<clock-event>`): its `code`, `umask` and `source`.
struct ClockEventOf<'a>(&'a pmu::ClockEvent);

impl Serialize for ClockEventOf<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("ClockEvent", 3)?;
        m.serialize_field("code", &self.0.code)?;
        m.serialize_field("umask", &self.0.umask)?;
        m.serialize_field("source", &self.0.source)?;
        m.end()
    }
}

impl Serialize for In<'_, pmu::GlobalInit> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let g = self.item;
        let mut m = s.serialize_struct("GlobalInit", 6)?;
        m.serialize_field("register", self.register(g.register))?;
        m.serialize_field(
            "field",
            &*self.unit.registers[g.register].fields[g.field].name,
        )?;
        m.serialize_field("write", &g.write)?;
        m.serialize_field("power_on", &g.power_on)?;
        m.serialize_field("source", &g.source)?;
        m.serialize_field("description", &g.description)?;
        m.end()
    }
}

impl Serialize for In<'_, pmu::Global> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (u, g) = (self.unit, self.item);
        let mut m = s.serialize_struct("Global", 5)?;
        m.serialize_field("unit", &u.name)?;
        m.serialize_field("instance", &u.instances[0].name)?;
        m.serialize_field("control", self.register(g.control))?;
        m.serialize_field("status", self.register(g.status))?;
        m.serialize_field(
            "overflow_clear",
            &g.overflow_clear.map(|r| self.register(r)),
        )?;
        m.end()
    }
}

impl Serialize for In<'_, pmu::Counter> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.item;
        let mut m = s.serialize_struct("Counter", 10)?;
        m.serialize_field("number", &c.number)?;
        m.serialize_field("kind", &c.kind)?;
        m.serialize_field("width", &c.width)?;
        m.serialize_field("width_cpuid", &c.width_cpuid)?;
        m.serialize_field("control", &c.control.as_ref().map(|r| self.with(r)))?;
        m.serialize_field("counter", &self.with(&c.counter))?;
        m.serialize_field("alias", &c.alias.as_ref().map(|r| self.with(r)))?;
        m.serialize_field("event", &c.event)?;
        m.serialize_field("perf_event", &c.perf)?;
        // Left out where the box's status shows the overflow (the default).
        if c.overflow != OverflowSeen::Status {
            m.serialize_field("overflow", &Overflow(c))?;
        }
        m.end()
    }
}

/// How software sees a counter's overflow, where it is not its box's status.
struct Overflow<'a>(&'a pmu::Counter);

impl Serialize for Overflow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Overflow", 2)?;
        m.serialize_field("seen", &self.0.overflow)?;
        m.serialize_field("source", &self.0.overflow_source)?;
        m.end()
    }
}

/// One element of a register array of the unit.
impl Serialize for In<'_, RegIndex> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("RegElement", 2)?;
        m.serialize_field("register", self.register(self.item.register))?;
        m.serialize_field("index", &self.item.index)?;
        m.end()
    }
}

impl Serialize for In<'_, pmu::Filter> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.item;
        let mut m = s.serialize_struct("Filter", 6)?;
        m.serialize_field("register", self.register(f.register))?;
        m.serialize_field("mask", &f.mask.map(|r| self.register(r)))?;
        m.serialize_field("event", &f.event)?;
        m.serialize_field("event_ext", &f.event_ext)?;
        m.serialize_field("counters", &f.counters)?;
        m.serialize_field("description", &f.description)?;
        m.end()
    }
}

impl Serialize for In<'_, pmu::Route> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.item;
        let instances: Vec<&str> = r
            .instances
            .iter()
            .map(|&i| self.unit.instances[i].name.as_str())
            .collect();
        let mut m = s.serialize_struct("Route", 3)?;
        m.serialize_field("instances", &instances)?;
        m.serialize_field("counters", &r.counters)?;
        m.serialize_field("hops", &self.each(&r.hops))?;
        m.end()
    }
}

impl Serialize for In<'_, pmu::Hop> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Hop", 2)?;
        m.serialize_field("bit", &self.with(&self.item.bit))?;
        m.serialize_field("clear", &self.item.clear.as_ref().map(|c| self.with(c)))?;
        m.end()
    }
}

/// One bit of the overflow hierarchy, in any unit of the processor.
impl Serialize for In<'_, BitRef> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = self.item;
        let u = &self.units[b.unit];
        let r = &u.registers[b.register];
        let inst = &u.instances[b.instance];
        let f = &r.fields[b.field];
        let mut m = s.serialize_struct("Bit", 7)?;
        m.serialize_field("unit", &u.name)?;
        // The concrete register (`S0_MSR_PMON_SUMMARY`), then its name template.
        m.serialize_field("register", &r.concrete_name(inst, b.index))?;
        m.serialize_field("layout", &r.name)?;
        m.serialize_field("instance", &inst.name)?;
        m.serialize_field("index", &b.index)?;
        m.serialize_field("field", &*f.name)?;
        // The field's (one) bit.
        m.serialize_field("bit", &f.lsb)?;
        m.end()
    }
}

/// A processor's discovery domains: per domain its `id`, how its tables are found (`place`:
/// `pci-device` with `pci_device_id`, or `msr` with `msr`, the other key `null`), `per`
/// (`socket` or `die`), the types software `ignored` (`type`, `name`), the `global_init`
/// value written to each table's global control (or `null`) and the `source`.
pub(super) fn discovery_domains<S: Serializer>(
    domains: &[super::DiscoveryDomain],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(domains.iter().map(Domain))
}

/// One discovery domain, serialised in schema order.
struct Domain<'a>(&'a super::DiscoveryDomain);

impl Serialize for Domain<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let (place, device, msr) = match d.place {
            super::DomainPlace::PciDevice(id) => ("pci-device", Some(id), None),
            super::DomainPlace::Msr(a) => ("msr", None, Some(a)),
        };
        let ignored: Vec<IgnoredType<'_>> = d
            .ignored
            .iter()
            .map(|(t, n)| IgnoredType {
                r#type: *t,
                name: n,
            })
            .collect();
        let mut m = s.serialize_struct("DiscoveryDomain", 8)?;
        m.serialize_field("id", &d.id)?;
        m.serialize_field("place", place)?;
        m.serialize_field("pci_device_id", &device)?;
        m.serialize_field("msr", &msr)?;
        m.serialize_field("per", if d.per_die { "die" } else { "socket" })?;
        m.serialize_field("ignored", &ignored)?;
        m.serialize_field("global_init", &d.global_init)?;
        m.serialize_field("source", &d.source)?;
        m.end()
    }
}

/// A discovery type a domain's tables list and software ignores.
#[derive(Serialize)]
struct IgnoredType<'a> {
    r#type: u16,
    name: &'a str,
}
