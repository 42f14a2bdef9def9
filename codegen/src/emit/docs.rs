//! Markdown reference pages rendered with tera: an index, and one page per unit with a bit
//! table and an SVG diagram for every register.

use std::fmt::Write;

use serde::Serialize;
use tera::{Context, Tera};

use super::rust::field_table;
use super::svg::unit_svg;
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
    svg: String,
    register_count: usize,
    /// The memory-mapped window, as a paragraph, if the unit has one.
    mmio_window: Option<String>,
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
    /// The addresses as a Markdown table, built here: tera's per-row loop was the slowest part
    /// of documentation for specs with many instances.
    address_table: String,
    sources: Vec<String>,
    notes: Vec<NoteView>,
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
        svg: format!("{}.svg", unit.module),
        register_count: unit.registers.len(),
        mmio_window: unit.mmio_window.as_ref().map(mmio_window_text),
    }
}

/// How the unit's memory-mapped window is found, in one paragraph.
fn mmio_window_text(w: &MmioWindow) -> String {
    let parts: Vec<String> = w
        .parts
        .iter()
        .map(|p| {
            let dword = if p.controller_stride == 0 {
                format!("`{:#x}`", p.offset)
            } else {
                format!("`{:#x} + {:#x}·c`", p.offset, p.controller_stride)
            };
            format!(
                "bits {}:{} of config dword {dword} moved to bit {}",
                p.msb, p.lsb, p.shift
            )
        })
        .collect();
    format!(
        "The base of controller c (0 to {}) is assembled from PCI device `{:#06x}` (device {}, function {}) on the socket's uncore bus: {}. Channel h (0 to {}) has a window of `{:#x}` bytes at base + `{:#x}` + h·`{:#x}`; the addresses below are offsets in it. {} (source: {})",
        w.controllers - 1,
        w.device_id,
        w.device,
        w.function,
        parts.join("; "),
        w.channels - 1,
        w.size,
        w.offset,
        w.channel_stride,
        w.description,
        w.source
    )
}

/// Path of a unit's diagrams relative to `docs/`.
pub fn svg_path(proc: &Processor, unit: &Unit) -> String {
    format!("{}/{}.svg", proc.module, unit.module)
}

fn address_summary(reg: &Register) -> String {
    match &reg.addresses {
        Addresses::Unknown { .. } => "unknown".to_string(),
        Addresses::FromTable(t) => format!("from the discovery table ({})", t.place.name()),
        Addresses::Known(a) if a.len() == 1 => a[0].location.to_string(),
        Addresses::Known(a) => format!("{} addresses, from {}", a.len(), a[0].location),
    }
}

/// The documentation renderer: the templates, parsed once.
pub struct Docs {
    tera: Tera,
}

impl Default for Docs {
    fn default() -> Self {
        Self::new()
    }
}

impl Docs {
    /// Parses the built-in templates.
    pub fn new() -> Self {
        Self { tera: templates() }
    }

    /// `docs/README.md`: every processor and unit.
    pub fn index(&self, spec: &Spec) -> Result<String, tera::Error> {
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
        self.tera.render("index.md", &ctx)
    }

    /// One unit's page and its registers' diagrams: `(path relative to docs/, content)`.
    pub fn unit(&self, p: &Processor, u: &Unit) -> Result<Vec<(String, String)>, tera::Error> {
        let registers: Vec<RegisterView> =
            u.registers.iter().map(|r| register_view(p, u, r)).collect();
        let mut ctx = Context::new();
        ctx.insert("processor", &p.name);
        ctx.insert("unit", &unit_view(p, u));
        ctx.insert("registers", &registers);
        Ok(vec![
            (
                format!("{}/{}.md", p.module, u.module),
                self.tera.render("unit.md", &ctx)?,
            ),
            (svg_path(p, u), unit_svg(&u.registers)),
        ])
    }
}

/// Renders every documentation file: `(path relative to docs/, content)`.
pub fn render(spec: &Spec) -> Result<Vec<(String, String)>, tera::Error> {
    let docs = Docs::new();
    let mut out = vec![("README.md".to_string(), docs.index(spec)?)];
    for p in &spec.processors {
        for u in &p.units {
            out.extend(docs.unit(p, u)?);
        }
    }
    Ok(out)
}

fn register_view(p: &Processor, u: &Unit, r: &Register) -> RegisterView {
    let (address_unknown, address_table) = match &r.addresses {
        Addresses::Unknown { reason } => (Some(reason.clone()), String::new()),
        Addresses::FromTable(t) => (None, format!("{}\n", super::layout::table_placed_text(t))),
        Addresses::Known(a) => {
            let mut table =
                String::from("| Name | Instance | Address | Source |\n|---|---|---|---|\n");
            for a in a {
                let _ = writeln!(
                    table,
                    "| `{}` | {} | {} | {} |",
                    r.address_name(u, a),
                    u.instances[a.instance].name,
                    a.location,
                    a.source
                );
            }
            (None, table)
        }
    };
    RegisterView {
        name: r.name.clone(),
        anchor: crate::naming::anchor(&r.name),
        rust_path: format!("pmu_regs::{}::{}::{}", p.module, u.module, r.type_name),
        space: match r.space {
            Space::Msr => "MSR",
            Space::Pci => "PCI",
            Space::Mmio => "MMIO",
            Space::Table => "table",
            Space::SysReg => "system register",
        },
        width: r.width,
        count: r.count,
        count_cpuid: r.count_cpuid.clone(),
        reset: format!("{:#x}", r.reset),
        description: r.description.clone(),
        svg: format!("{}.svg#view-{}", u.module, r.type_name),
        table: field_table(r),
        reserved_mask: format!("{:#x}", r.reserved_mask()),
        ignored_mask: format!("{:#x}", r.ignored_mask()),
        writable_mask: format!("{:#x}", r.writable_mask()),
        address_summary: address_summary(r),
        address_unknown,
        address_table,
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
