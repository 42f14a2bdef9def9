//! JSON model emitter: `model/pmu-regs.json`, the validated model for tools that do not use
//! Rust, and `model/schema.json`, the JSON Schema it conforms to (a fixed template).
//!
//! The shapes below are the model's public format (documented in spec/README.md and the
//! schema): the model's types are codegen's own and may change, so the JSON is built from
//! these views rather than by deriving `Serialize` on the model. Register instances carry the
//! same keys as `pmu list --json` (`name`, `space`, `address`, `offset`, `device_id`,
//! `device`, `function`, `address_unknown`, `width`, `fields`), and events those of
//! `pmu list --events --json`.

use serde::Serialize;

use crate::model::{self, Access, SourceOrigin, Space};

/// The schema, emitted as `model/schema.json`.
pub const SCHEMA: &str = include_str!("../../templates/model.schema.json");

/// Version of the JSON format; raised on any change that can break a consumer.
pub const FORMAT_VERSION: u32 = 1;

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
    units: Vec<Unit<'a>>,
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
    source: &'a str,
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
    width: u32,
    mask: u64,
    access: &'static str,
    reset: u64,
    description: &'a str,
    values: Vec<Value<'a>>,
    repeat: Option<Repeat<'a>>,
    source: Option<&'a str>,
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
    code: u8,
    umask: u8,
    ext_sel: bool,
    counters: Vec<u32>,
    filters: &'a str,
    source: &'a str,
}

fn space(s: Space) -> &'static str {
    s.as_str()
}

fn access(a: Access) -> &'static str {
    a.as_str()
}

fn register<'a>(u: &'a model::Unit, r: &'a model::Register) -> Register<'a> {
    let (addresses, address_unknown) = match &r.addresses {
        model::Addresses::Known(addrs) => (
            addrs
                .iter()
                .map(|a| {
                    let (address, pci) = match a.location {
                        model::Location::Msr(n) => (n, None),
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
                        ),
                    };
                    RegisterInstance {
                        name: r.address_name(u, a),
                        instance: &u.instances[a.instance].name,
                        index: a.index,
                        space: space(r.space),
                        address,
                        pci,
                        source: &a.source,
                    }
                })
                .collect(),
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
        sources: r
            .sources
            .iter()
            .map(|s| {
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
            })
            .collect(),
        addresses,
        address_unknown,
        fields: r
            .fields
            .iter()
            .map(|f| Field {
                name: &f.name,
                lsb: f.lsb,
                msb: f.msb,
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
            })
            .collect(),
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

fn unit(u: &model::Unit) -> Unit<'_> {
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
        events: u
            .events
            .iter()
            .map(|e| Event {
                name: &e.name,
                ident: &e.ident,
                code: e.code,
                umask: e.umask,
                ext_sel: e.ext_sel,
                counters: (0..32).filter(|n| e.counters >> n & 1 != 0).collect(),
                filters: &e.filters,
                source: &e.source,
            })
            .collect(),
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
                units: p.units.iter().map(unit).collect(),
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
        ("model/schema.json".into(), SCHEMA.into()),
    ]
}
