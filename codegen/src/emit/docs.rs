//! Markdown reference pages rendered with tera: an index, and one page per unit with a bit
//! table and an SVG diagram for every register.

use serde::Serialize;
use tera::{Context, Tera};

use super::rust::field_table;
use super::svg::register_svg;
use crate::model::*;

const INDEX: &str = include_str!("../../templates/index.md.tera");
const UNIT: &str = include_str!("../../templates/unit.md.tera");

#[derive(Serialize)]
struct ProcessorView {
    name: String,
    documents: Vec<String>,
    units: Vec<UnitView>,
}

#[derive(Serialize)]
struct UnitView {
    name: String,
    title: String,
    description: String,
    instances: String,
    file: String,
    page: String,
    register_count: usize,
}

#[derive(Serialize)]
struct RegisterView {
    name: String,
    anchor: String,
    rust_path: String,
    space: &'static str,
    width: u32,
    count: u32,
    count_cpuid: Option<String>,
    reset: String,
    description: String,
    svg: String,
    table: String,
    reserved_mask: String,
    ignored_mask: String,
    writable_mask: String,
    address_summary: String,
    address_unknown: Option<String>,
    addresses: Vec<AddressView>,
    sources: Vec<String>,
    notes: Vec<NoteView>,
}

#[derive(Serialize)]
struct AddressView {
    name: String,
    instance: String,
    location: String,
    source: String,
}

#[derive(Serialize)]
struct NoteView {
    kind: String,
    title: String,
    text: String,
}

fn templates() -> Tera {
    let mut tera = Tera::default();
    // The templates are part of this crate; failing to parse them is a bug caught by every test.
    tera.add_raw_templates([("index.md", INDEX), ("unit.md", UNIT)])
        .expect("built-in documentation templates parse");
    tera.autoescape_on(vec![]);
    tera
}

fn unit_view(proc: &Processor, unit: &Unit) -> UnitView {
    UnitView {
        name: unit.name.clone(),
        title: unit.title.clone(),
        description: unit.description.clone(),
        instances: unit
            .instances
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        file: unit.file.clone(),
        page: format!("{}/{}.md", proc.module, unit.module),
        register_count: unit.registers.len(),
    }
}

/// Path of a register's diagram relative to `docs/`.
pub fn svg_path(proc: &Processor, unit: &Unit, reg: &Register) -> String {
    format!("{}/{}/{}.svg", proc.module, unit.module, reg.type_name)
}

fn address_summary(reg: &Register) -> String {
    match &reg.addresses {
        Addresses::Unknown { .. } => "unknown".to_string(),
        Addresses::Known(a) if a.len() == 1 => a[0].location.to_string(),
        Addresses::Known(a) => format!("{} addresses, from {}", a.len(), a[0].location),
    }
}

/// Renders every documentation file: `(path relative to docs/, content)`.
pub fn render(spec: &Spec) -> Result<Vec<(String, String)>, tera::Error> {
    let tera = templates();
    let mut out = Vec::new();
    let processors: Vec<ProcessorView> = spec
        .processors
        .iter()
        .map(|p| ProcessorView {
            name: p.name.clone(),
            documents: p
                .documents
                .iter()
                .map(|d| format!("{} ({})", d.title, d.reference))
                .collect(),
            units: p.units.iter().map(|u| unit_view(p, u)).collect(),
        })
        .collect();
    let mut ctx = Context::new();
    ctx.insert("processors", &processors);
    out.push(("README.md".to_string(), tera.render("index.md", &ctx)?));

    for p in &spec.processors {
        for u in &p.units {
            let registers: Vec<RegisterView> =
                u.registers.iter().map(|r| register_view(p, u, r)).collect();
            let mut ctx = Context::new();
            ctx.insert("processor", &p.name);
            ctx.insert("unit", &unit_view(p, u));
            ctx.insert("registers", &registers);
            out.push((
                format!("{}/{}.md", p.module, u.module),
                tera.render("unit.md", &ctx)?,
            ));
            for r in &u.registers {
                out.push((svg_path(p, u, r), register_svg(r)));
            }
        }
    }
    Ok(out)
}

fn register_view(p: &Processor, u: &Unit, r: &Register) -> RegisterView {
    let (address_unknown, addresses) = match &r.addresses {
        Addresses::Unknown { reason } => (Some(reason.clone()), Vec::new()),
        Addresses::Known(a) => (
            None,
            a.iter()
                .map(|a| AddressView {
                    name: a.name.clone(),
                    instance: u.instances[a.instance].name.clone(),
                    location: a.location.to_string(),
                    source: a.source.clone(),
                })
                .collect(),
        ),
    };
    RegisterView {
        name: r.name.clone(),
        anchor: r.name.to_ascii_lowercase().replace(['{', '}'], ""),
        rust_path: format!("pmu_regs::{}::{}::{}", p.module, u.module, r.type_name),
        space: if r.space == Space::Msr { "MSR" } else { "PCI" },
        width: r.width,
        count: r.count,
        count_cpuid: r.count_cpuid.clone(),
        reset: format!("{:#x}", r.reset),
        description: r.description.clone(),
        svg: format!("{}/{}.svg", u.module, r.type_name),
        table: field_table(r),
        reserved_mask: format!("{:#x}", r.reserved_mask()),
        ignored_mask: format!("{:#x}", r.ignored_mask()),
        writable_mask: format!("{:#x}", r.writable_mask()),
        address_summary: address_summary(r),
        address_unknown,
        addresses,
        sources: r.sources.iter().map(SourceRef::citation).collect(),
        notes: r
            .notes
            .iter()
            .map(|n| NoteView {
                kind: n.kind.clone(),
                title: n.title.clone(),
                text: n.text.clone(),
            })
            .collect(),
    }
}
