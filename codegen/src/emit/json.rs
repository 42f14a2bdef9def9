//! JSON model emitter: `model/pmu-regs.json`, the validated model for tools that do not use
//! Rust, and `model/schema.json`, the JSON Schema it conforms to (a template whose
//! enumerations come from the model's vocabularies).
//!
//! The shapes below are the model's public format (documented in spec/README.md and the
//! schema): the model's types are codegen's own and may change, so the JSON is built from
//! these views rather than by deriving `Serialize` on the model. Register instances carry the
//! same keys as `pmu list --json` (`name`, `space`, `address`, `offset`, `device_id`,
//! `device`, `function`, `address_unknown`, `width`, `fields`), and events those of
//! `pmu list --events --json`.

use serde::Serialize;

use crate::model::metric::MetricRead;
use crate::model::pmu as mp;
use crate::model::{self, Access, SourceOrigin, Space};

/// The schema's template: every `"enum": "@vocabulary Name"` becomes that vocabulary's list.
const SCHEMA_TEMPLATE: &str = include_str!("../../templates/model.schema.json");

/// The schema, emitted as `model/schema.json`.
pub fn schema() -> String {
    let mut text = SCHEMA_TEMPLATE.to_string();
    for vocab in crate::model::VOCABULARIES {
        let list: Vec<String> = vocab.spellings().map(|s| format!("{s:?}")).collect();
        text = text.replace(
            &format!("\"@vocabulary {}\"", vocab.name),
            &format!("[{}]", list.join(", ")),
        );
    }
    text
}

/// Version of the JSON format; raised on any change that can break a consumer (3: fields gained
/// `ranges`, and a split field's `lsb`/`msb` are its lowest range; 4: processors gained
/// `metrics`; 5: the `mmio` space and `units[].mmio_window`; 6: counters gained
/// `perf_event`, and a free-running counter's count field is `ro-v`; 7: metric events gained
/// `read` and `perf_metrics_byte`, for the top-down registers; 8: events gained `aux_msr`,
/// the auxiliary MSR and its value; 9: events gained `counters_ht_off`, the counters without
/// Hyper-Threading).
pub const FORMAT_VERSION: u32 = 9;

#[derive(Serialize)]
struct Model<'a> {
    format: &'static str,
    format_version: u32,
    processors: Vec<Processor<'a>>,
    sources: Vec<PublicSource<'a>>,
}

#[derive(Serialize)]
struct PublicSource<'a> {
    id: &'a str,
    title: &'a str,
}

#[derive(Serialize)]
struct Processor<'a> {
    id: &'a str,
    module: &'a str,
    name: &'a str,
    documents: Vec<Document<'a>>,
    global: Option<Global<'a>>,
    units: Vec<Unit<'a>>,
    core_events: Option<CoreEvents<'a>>,
    metrics: Vec<Metric<'a>>,
}

/// A derived metric (`<processor>/metrics/`).
#[derive(Serialize)]
struct Metric<'a> {
    name: &'a str,
    description: &'a str,
    unit: &'a str,
    category: &'a str,
    groups: &'a [String],
    level: u8,
    parent: Option<&'a str>,
    scope: &'static str,
    source: &'a str,
    events: Vec<MetricEvent<'a>>,
    formula: &'a str,
}

#[derive(Serialize)]
struct MetricEvent<'a> {
    alias: &'a str,
    name: &'a str,
    unit: &'a str,
    threshold: u8,
    invert: bool,
    edge: bool,
    /// `counted`, `slots` (fixed counter 3) or `slots-share` (a byte of IA32_PERF_METRICS).
    read: &'static str,
    /// The IA32_PERF_METRICS byte of a `slots-share` event.
    #[serde(skip_serializing_if = "Option::is_none")]
    perf_metrics_byte: Option<u8>,
}

fn metric(m: &crate::model::metric::Metric) -> Metric<'_> {
    Metric {
        name: &m.name,
        description: &m.description,
        unit: &m.unit,
        category: &m.category,
        groups: &m.groups,
        level: m.level,
        parent: m.parent.as_deref(),
        scope: m.scope.as_str(),
        source: &m.source,
        events: m
            .events
            .iter()
            .map(|e| MetricEvent {
                alias: &e.alias,
                name: &e.name,
                unit: &e.unit,
                threshold: e.settings.threshold,
                invert: e.settings.invert,
                edge: e.settings.edge,
                read: match e.read {
                    MetricRead::Counted => "counted",
                    MetricRead::Slots => "slots",
                    MetricRead::SlotsShare(_) => "slots-share",
                },
                perf_metrics_byte: match e.read {
                    MetricRead::SlotsShare(n) => Some(n),
                    _ => None,
                },
            })
            .collect(),
        formula: &m.formula,
    }
}

/// A processor's own events for a unit of its core PMU (`processors.xml`'s `core-pmu`).
#[derive(Serialize)]
struct CoreEvents<'a> {
    processor: &'a str,
    unit: &'a str,
    events: Vec<Event<'a>>,
}

#[derive(Serialize)]
struct Document<'a> {
    id: &'a str,
    title: &'a str,
    reference: &'a str,
}

#[derive(Serialize)]
struct Unit<'a> {
    name: &'a str,
    module: &'a str,
    title: &'a str,
    description: &'a str,
    file: &'a str,
    instances: Vec<Instance<'a>>,
    registers: Vec<Register<'a>>,
    events: Vec<Event<'a>>,
    pmu: Option<Pmu<'a>>,
    mmio_window: Option<MmioWindow<'a>>,
}

/// A unit's `<mmio-window>`.
#[derive(Serialize)]
struct MmioWindow<'a> {
    device_id: u16,
    device: u8,
    function: u8,
    parts: Vec<MmioPart>,
    offset: u64,
    channel_stride: u64,
    size: u64,
    controllers: u8,
    channels: u8,
    source: &'a str,
    description: &'a str,
}

#[derive(Serialize)]
struct MmioPart {
    offset: u16,
    controller_stride: u16,
    lsb: u32,
    msb: u32,
    shift: u32,
}

fn mmio_window(w: &model::MmioWindow) -> MmioWindow<'_> {
    MmioWindow {
        device_id: w.device_id,
        device: w.device,
        function: w.function,
        parts: w
            .parts
            .iter()
            .map(|p| MmioPart {
                offset: p.offset,
                controller_stride: p.controller_stride,
                lsb: p.lsb,
                msb: p.msb,
                shift: p.shift,
            })
            .collect(),
        offset: w.offset,
        channel_stride: w.channel_stride,
        size: w.size,
        controllers: w.controllers,
        channels: w.channels,
        source: &w.source,
        description: &w.description,
    }
}

#[derive(Serialize)]
struct Instance<'a> {
    name: &'a str,
    key: &'a str,
}

#[derive(Serialize)]
struct Register<'a> {
    name: &'a str,
    type_name: &'a str,
    width: u32,
    space: &'static str,
    count: u32,
    count_cpuid: Option<&'a str>,
    reset: u64,
    reserved_mask: u64,
    ignored_mask: u64,
    writable_mask: u64,
    description: &'a str,
    sources: Vec<SourceRef<'a>>,
    addresses: Vec<RegisterInstance<'a>>,
    address_unknown: Option<&'a str>,
    fields: Vec<Field<'a>>,
    notes: Vec<Note<'a>>,
}

#[derive(Serialize)]
struct SourceRef<'a> {
    kind: &'static str,
    id: &'a str,
    table: Option<&'a str>,
    page: Option<&'a str>,
    section: Option<&'a str>,
    citation: String,
}

/// One instance and index of a register: the keys of a `pmu list --json` item.
#[derive(Serialize)]
struct RegisterInstance<'a> {
    name: String,
    instance: &'a str,
    index: u32,
    space: &'static str,
    /// The MSR number, or for PCI the config-space offset (as `pmu list --json`).
    address: u32,
    #[serde(flatten)]
    pci: Option<Pci>,
    #[serde(flatten)]
    mmio: Option<Mmio>,
    source: &'a str,
}

/// Where a memory-mapped register instance is: its window and the offset in it.
#[derive(Serialize)]
struct Mmio {
    offset: u32,
    controller: u8,
    channel: u8,
}

#[derive(Serialize)]
struct Pci {
    offset: u16,
    device_id: u16,
    device: u8,
    function: u8,
}

#[derive(Serialize)]
struct Field<'a> {
    name: &'a str,
    lsb: u32,
    msb: u32,
    ranges: Vec<Range>,
    width: u32,
    mask: u64,
    access: &'static str,
    reset: u64,
    description: &'a str,
    values: Vec<Value<'a>>,
    repeat: Option<Repeat<'a>>,
    source: Option<&'a str>,
    role: Option<&'static str>,
    counters: &'a [u32],
    count_default: Option<CountDefault>,
}

/// A counter control field's value while counting when the event leaves it.
#[derive(Serialize)]
struct CountDefault {
    value: u64,
    all_ones: bool,
}

/// One bit range of a field, in register position.
#[derive(Serialize)]
struct Range {
    msb: u32,
    lsb: u32,
}

#[derive(Serialize)]
struct Value<'a> {
    value: u64,
    name: &'a str,
    description: &'a str,
}

#[derive(Serialize)]
struct Repeat<'a> {
    element_width: u32,
    max_count: u32,
    count_cpuid: Option<&'a str>,
}

#[derive(Serialize)]
struct Note<'a> {
    kind: &'a str,
    title: &'a str,
    text: &'a str,
}

#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    ident: &'a str,
    code: u16,
    umask: u16,
    ext_sel: bool,
    counters: Vec<u32>,
    counters_ht_off: Option<Vec<u32>>,
    filters: &'a str,
    source: &'a str,
    threshold: u8,
    invert: bool,
    edge: bool,
    any_thread: bool,
    umask_ext: u32,
    port_mask: u16,
    fc_mask: u8,
    experimental: bool,
    aux_msr: Option<AuxMsr<'a>>,
}

/// Why the discovery table's entries of a unit's type are not believed (`<discovery-ignored>`).
#[derive(Serialize)]
struct DiscoveryIgnored<'a> {
    source: &'a str,
    description: &'a str,
}

/// The auxiliary MSR an event needs programmed besides its control, and its value.
#[derive(Serialize)]
struct AuxMsr<'a> {
    register: &'a str,
    address: u32,
    value: u64,
}

/// A unit's PMU structure (`<pmu>`): registers are named by their template name in the unit.
#[derive(Serialize)]
struct Pmu<'a> {
    scope: &'static str,
    discovery_type: Option<u16>,
    discovery_ignored: Option<DiscoveryIgnored<'a>>,
    controls: Vec<&'a str>,
    statuses: Vec<&'a str>,
    overflow_clears: Vec<&'a str>,
    counters: Vec<Counter<'a>>,
    filters: Vec<Filter<'a>>,
    routes: Vec<Route<'a>>,
    notes: Vec<Note<'a>>,
}

/// One element of a register array of the unit.
#[derive(Serialize)]
struct RegElement<'a> {
    register: &'a str,
    index: u32,
}

#[derive(Serialize)]
struct Counter<'a> {
    number: u32,
    kind: &'static str,
    width: u32,
    width_cpuid: Option<&'a str>,
    control: Option<RegElement<'a>>,
    counter: RegElement<'a>,
    alias: Option<RegElement<'a>>,
    event: Option<&'a str>,
    perf_event: Option<CounterPerf<'a>>,
    /// Left out where the box's status shows the overflow (the default).
    #[serde(skip_serializing_if = "Option::is_none")]
    overflow: Option<Overflow<'a>>,
}

/// A free-running counter's event in the kernel's perf driver.
#[derive(Serialize)]
struct CounterPerf<'a> {
    name: &'a str,
    umask: u8,
    scale: Option<&'a str>,
    unit: Option<&'a str>,
}

/// How software sees a counter's overflow, where it is not its box's status.
#[derive(Serialize)]
struct Overflow<'a> {
    seen: &'static str,
    source: Option<&'a str>,
}

#[derive(Serialize)]
struct Filter<'a> {
    register: &'a str,
    mask: Option<&'a str>,
    event: Option<u8>,
    event_ext: bool,
    counters: &'a [u32],
    description: &'a str,
}

#[derive(Serialize)]
struct Route<'a> {
    instances: Vec<&'a str>,
    counters: &'a [u32],
    hops: Vec<Hop<'a>>,
}

#[derive(Serialize)]
struct Hop<'a> {
    bit: Bit<'a>,
    clear: Option<Bit<'a>>,
}

/// One bit of the overflow hierarchy, in any unit of the processor.
#[derive(Serialize)]
struct Bit<'a> {
    unit: &'a str,
    /// Concrete register name (`S0_MSR_PMON_SUMMARY`).
    register: String,
    /// The register's name template.
    layout: &'a str,
    instance: &'a str,
    index: u32,
    field: &'a str,
    /// The field's (one) bit.
    bit: u32,
}

/// The processor's level above every box.
#[derive(Serialize)]
struct Global<'a> {
    unit: &'a str,
    instance: &'a str,
    control: &'a str,
    status: &'a str,
    overflow_clear: Option<&'a str>,
}

fn element<'a>(u: &'a model::Unit, r: &mp::RegIndex) -> RegElement<'a> {
    RegElement {
        register: &u.registers[r.register].name,
        index: r.index,
    }
}

fn bit<'a>(p: &'a model::Processor, b: &mp::BitRef) -> Bit<'a> {
    let u = &p.units[b.unit];
    let r = &u.registers[b.register];
    let inst = &u.instances[b.instance];
    let f = &r.fields[b.field];
    Bit {
        unit: &u.name,
        register: r.concrete_name(inst, b.index),
        layout: &r.name,
        instance: &inst.name,
        index: b.index,
        field: &f.name,
        bit: f.lsb,
    }
}

fn structure<'a>(p: &'a model::Processor, u: &'a model::Unit, pmu: &'a mp::Pmu) -> Pmu<'a> {
    let names = |regs: &[usize]| -> Vec<&'a str> {
        regs.iter().map(|r| u.registers[*r].name.as_str()).collect()
    };
    Pmu {
        scope: pmu.scope.as_str(),
        discovery_type: pmu.discovery_type,
        discovery_ignored: pmu.discovery_ignored.as_ref().map(|d| DiscoveryIgnored {
            source: &d.source,
            description: &d.description,
        }),
        controls: names(&pmu.controls),
        statuses: names(&pmu.statuses),
        overflow_clears: names(&pmu.overflow_clears),
        counters: pmu
            .counters
            .iter()
            .map(|c| Counter {
                number: c.number,
                kind: c.kind.as_str(),
                width: c.width,
                width_cpuid: c.width_cpuid.as_deref(),
                control: c.control.as_ref().map(|r| element(u, r)),
                counter: element(u, &c.counter),
                alias: c.alias.as_ref().map(|r| element(u, r)),
                event: c.event.as_deref(),
                perf_event: c.perf.as_ref().map(|p| CounterPerf {
                    name: &p.name,
                    umask: p.umask,
                    scale: p.scale.as_deref(),
                    unit: p.unit.as_deref(),
                }),
                overflow: (c.overflow != mp::OverflowSeen::Status).then(|| Overflow {
                    seen: c.overflow.as_str(),
                    source: c.overflow_source.as_deref(),
                }),
            })
            .collect(),
        filters: pmu
            .filters
            .iter()
            .map(|f| Filter {
                register: &u.registers[f.register].name,
                mask: f.mask.map(|m| u.registers[m].name.as_str()),
                event: f.event,
                event_ext: f.event_ext,
                counters: &f.counters,
                description: &f.description,
            })
            .collect(),
        routes: pmu
            .routes
            .iter()
            .map(|r| Route {
                instances: r
                    .instances
                    .iter()
                    .map(|i| u.instances[*i].name.as_str())
                    .collect(),
                counters: &r.counters,
                hops: r
                    .hops
                    .iter()
                    .map(|h| Hop {
                        bit: bit(p, &h.bit),
                        clear: h.clear.as_ref().map(|c| bit(p, c)),
                    })
                    .collect(),
            })
            .collect(),
        notes: pmu
            .notes
            .iter()
            .map(|n| Note {
                kind: &n.kind,
                title: &n.title,
                text: &n.text,
            })
            .collect(),
    }
}

/// The processor's global level, from the unit that declares it.
fn global(p: &model::Processor) -> Option<Global<'_>> {
    p.units.iter().find_map(|u| {
        let g = u.pmu.as_ref()?.global.as_ref()?;
        Some(Global {
            unit: &u.name,
            instance: &u.instances.first()?.name,
            control: &u.registers[g.control].name,
            status: &u.registers[g.status].name,
            overflow_clear: g.overflow_clear.map(|r| u.registers[r].name.as_str()),
        })
    })
}

fn space(s: Space) -> &'static str {
    s.as_str()
}

fn access(a: Access) -> &'static str {
    a.as_str()
}

/// One instance and index of a register, with its address.
fn register_instance<'a>(
    u: &'a model::Unit,
    r: &'a model::Register,
    a: &'a model::Address,
) -> RegisterInstance<'a> {
    let (address, pci, mmio) = match a.location {
        model::Location::Msr(n) => (n, None, None),
        model::Location::Mmio {
            controller,
            channel,
            offset,
        } => (
            offset,
            None,
            Some(Mmio {
                offset,
                controller,
                channel,
            }),
        ),
        model::Location::Pci {
            device_id,
            device,
            function,
            offset,
        } => (
            u32::from(offset),
            Some(Pci {
                offset,
                device_id,
                device,
                function,
            }),
            None,
        ),
        model::Location::Table(o) => (o, None, None),
    };
    RegisterInstance {
        name: r.address_name(u, a),
        instance: &u.instances[a.instance].name,
        index: a.index,
        space: space(r.space),
        address,
        pci,
        mmio,
        source: &a.source,
    }
}

fn source_ref(s: &model::SourceRef) -> SourceRef<'_> {
    let (kind, id) = match &*s.origin {
        SourceOrigin::Document { id, .. } => ("document", id.as_str()),
        SourceOrigin::Public { id, .. } => ("public", id.as_str()),
    };
    SourceRef {
        kind,
        id,
        table: s.table.as_deref(),
        page: s.page.as_deref(),
        section: s.section.as_deref(),
        citation: s.citation(),
    }
}

fn field(f: &model::Field) -> Field<'_> {
    Field {
        name: &f.name,
        lsb: f.lsb,
        msb: f.msb,
        ranges: f
            .ranges()
            .iter()
            .map(|r| Range {
                msb: r.msb,
                lsb: r.lsb,
            })
            .collect(),
        width: f.width(),
        mask: f.mask(),
        access: access(f.access),
        reset: f.reset,
        description: f.shown_description(),
        values: f
            .values
            .iter()
            .map(|v| Value {
                value: v.value,
                name: &v.name,
                description: &v.description,
            })
            .collect(),
        repeat: f.repeat.as_deref().map(|rep| Repeat {
            element_width: rep.element_width,
            max_count: rep.max_count,
            count_cpuid: rep.count_cpuid.as_deref(),
        }),
        source: f.source.as_deref(),
        role: f.role.as_deref().map(|r| r.role.as_str()),
        counters: f.role.as_deref().map_or(&[], |r| &r.counters),
        count_default: f.count_default.map(|d| CountDefault {
            value: d.value(f.width()),
            all_ones: d == model::CountDefault::AllOnes,
        }),
    }
}

fn register<'a>(u: &'a model::Unit, r: &'a model::Register) -> Register<'a> {
    let (addresses, address_unknown) = match &r.addresses {
        model::Addresses::Known(addrs) => (
            addrs.iter().map(|a| register_instance(u, r, a)).collect(),
            None,
        ),
        model::Addresses::Unknown { reason } => (Vec::new(), Some(reason.as_str())),
    };
    Register {
        name: &r.name,
        type_name: &r.type_name,
        width: r.width,
        space: space(r.space),
        count: r.count,
        count_cpuid: r.count_cpuid.as_deref(),
        reset: r.reset,
        reserved_mask: r.reserved_mask(),
        ignored_mask: r.ignored_mask(),
        writable_mask: r.writable_mask(),
        description: &r.description,
        sources: r.sources.iter().map(source_ref).collect(),
        addresses,
        address_unknown,
        fields: r.fields.iter().map(field).collect(),
        notes: r
            .notes
            .iter()
            .map(|n| Note {
                kind: &n.kind,
                title: &n.title,
                text: &n.text,
            })
            .collect(),
    }
}

fn event(e: &model::Event) -> Event<'_> {
    Event {
        name: &e.name,
        ident: &e.ident,
        code: e.code,
        umask: e.umask,
        ext_sel: e.ext_sel,
        counters: (0..32).filter(|n| e.counters >> n & 1 != 0).collect(),
        counters_ht_off: (e.counters_ht_off != 0).then(|| {
            (0..32)
                .filter(|n| e.counters_ht_off >> n & 1 != 0)
                .collect()
        }),
        filters: &e.filters,
        source: &e.source,
        threshold: e.settings.threshold,
        invert: e.settings.invert,
        edge: e.settings.edge,
        any_thread: e.settings.any_thread,
        umask_ext: e.masks.umask_ext,
        port_mask: e.masks.port_mask,
        fc_mask: e.masks.fc_mask,
        experimental: e.experimental,
        aux_msr: e.aux.as_ref().map(|a| AuxMsr {
            register: &a.register,
            address: a.address,
            value: a.value,
        }),
    }
}

fn unit<'a>(p: &'a model::Processor, u: &'a model::Unit) -> Unit<'a> {
    Unit {
        name: &u.name,
        module: &u.module,
        title: &u.title,
        description: &u.description,
        file: &u.file,
        instances: u
            .instances
            .iter()
            .map(|i| Instance {
                name: &i.name,
                key: &i.key,
            })
            .collect(),
        registers: u.registers.iter().map(|r| register(u, r)).collect(),
        events: u.events.iter().map(event).collect(),
        pmu: u.pmu.as_ref().map(|pmu| structure(p, u, pmu)),
        mmio_window: u.mmio_window.as_ref().map(mmio_window),
    }
}

/// `model/pmu-regs.json`: the whole validated model, pretty-printed, with a final newline.
pub fn model_text(spec: &model::Spec) -> String {
    let model = Model {
        format: "pmu-regs-model",
        format_version: FORMAT_VERSION,
        processors: spec
            .processors
            .iter()
            .map(|p| Processor {
                id: &p.id,
                module: &p.module,
                name: &p.name,
                documents: p
                    .documents
                    .iter()
                    .map(|d| Document {
                        id: &d.id,
                        title: &d.title,
                        reference: &d.reference,
                    })
                    .collect(),
                global: global(p),
                units: p.units.iter().map(|u| unit(p, u)).collect(),
                core_events: p.core_events.as_ref().map(|c| CoreEvents {
                    processor: &c.processor,
                    unit: &c.unit,
                    events: c.events.iter().map(event).collect(),
                }),
                metrics: p.metrics.iter().map(metric).collect(),
            })
            .collect(),
        sources: spec
            .public_sources
            .iter()
            .map(|s| PublicSource {
                id: &s.id,
                title: &s.title,
            })
            .collect(),
    };
    // Serialising plain structs of strings and integers cannot fail.
    let mut text = serde_json::to_string_pretty(&model).expect("the model serialises");
    text.push('\n');
    text
}

/// The model's files: (path relative to `generated/`, content).
pub fn files(spec: &model::Spec) -> Vec<(String, String)> {
    vec![
        ("model/pmu-regs.json".into(), model_text(spec)),
        ("model/schema.json".into(), schema()),
    ]
}
