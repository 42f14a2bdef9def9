//! Stage 3: the validated model -> every file of `generated/`, handed one by one to a
//! [`Sink`].
//!
//! Nothing here touches the disk; `output` decides whether and how to write. Units are
//! rendered on all cores, and each unit's files go to the sink as soon as they are ready, so
//! memory holds the model and a few units' output, not the whole tree.

pub mod c;
pub mod core_events;
pub mod docs;
pub mod events;
pub mod json;
pub mod layout;
pub mod metrics;
pub mod rust;
pub mod socs;
pub mod structure;
pub mod svg;
pub mod tests;

use std::collections::BTreeMap;
use std::sync::mpsc;

use crate::model::{Processor, Spec, Unit};

const SUPPORT: &str = include_str!("../../templates/support.rs");
const STRUCTURE: &str = include_str!("../../templates/structure.rs");
const CORE_EVENTS: &str = include_str!("../../templates/core_events.rs");
const LIB_HEADER: &str = include_str!("../../templates/lib_header.rs");
const LIB_EXAMPLE_XEON_7500: &str = include_str!("../../templates/lib_example_xeon_7500.rs");
const LIB_ATTRS: &str = include_str!("../../templates/lib_attrs.rs");
const CARGO_TOML: &str = include_str!("../../templates/Cargo.toml.generated");

/// The generated crate: paths relative to `generated/`, and contents.
pub type Tree = BTreeMap<String, String>;

/// Receives the rendered files.
pub trait Sink {
    /// Takes one file: its path relative to `generated/`, and its content.
    fn put(&mut self, path: String, content: String) -> std::io::Result<()>;
}

impl Sink for Tree {
    fn put(&mut self, path: String, content: String) -> std::io::Result<()> {
        self.insert(path, content);
        Ok(())
    }
}

/// Why rendering failed.
#[derive(Debug)]
pub enum EmitError {
    /// A documentation template failed (a bug in codegen).
    Docs(tera::Error),
    /// The sink could not take a file.
    Io(std::io::Error),
    /// Two things of the spec would get the same C name.
    CName(c::NameClash),
}

impl From<tera::Error> for EmitError {
    fn from(e: tera::Error) -> Self {
        EmitError::Docs(e)
    }
}

impl From<std::io::Error> for EmitError {
    fn from(e: std::io::Error) -> Self {
        EmitError::Io(e)
    }
}

/// Renders every file of the generated crate and its documentation into a tree in memory.
pub fn generate(spec: &Spec) -> Result<Tree, EmitError> {
    let mut tree = Tree::new();
    generate_into(spec, &mut tree)?;
    Ok(tree)
}

/// A unit's files: its Rust module, its reference page and its diagrams.
fn unit_files(
    docs: &docs::Docs,
    spec: &Spec,
    p: &Processor,
    u: &Unit,
) -> Result<Vec<(String, String)>, tera::Error> {
    let mut files = vec![(
        format!("src/{}/{}.rs", p.module, u.module),
        layout::unit_module_text(spec, p, u),
    )];
    for (path, content) in docs.unit(p, u)? {
        files.push((format!("docs/{path}"), content));
    }
    Ok(files)
}

/// Renders every file of the generated crate and its documentation into `sink`.
pub fn generate_into(spec: &Spec, sink: &mut dyn Sink) -> Result<(), EmitError> {
    crate_files(spec, sink)?;
    for p in &spec.processors {
        if let Some(text) = core_events::processor_core_module(p) {
            sink.put(format!("src/{}/core.rs", p.module), text)?;
        }
        if let Some(text) = metrics::processor_module(p) {
            sink.put(format!("src/{}/metrics.rs", p.module), text)?;
        }
        sink.put(
            format!("src/{}/mod.rs", p.module),
            rust::format_file(rust::processor_module(p)),
        )?;
        sink.put(
            format!("src/{}/pmu.rs", p.module),
            rust::format_file(structure::processor_pmu(p)),
        )?;
    }
    sink.put("tests/layouts.rs".into(), tests::LAYOUTS_ROOT.into())?;
    sink.put("tests/cases/mod.rs".into(), tests::layouts_test(spec))?;
    let docs = docs::Docs::new();
    sink.put("docs/README.md".into(), docs.index(spec)?)?;
    for (path, content) in c::files(spec).map_err(EmitError::CName)? {
        sink.put(path, content)?;
    }
    for (path, content) in json::files(spec) {
        sink.put(path, content)?;
    }
    unit_files_in_parallel(spec, sink)
}

/// A template's text under the header that names it as the source.
pub(crate) fn from_template(path: &str, text: &str) -> String {
    format!(
        "{}{text}",
        rust::HEADER.replace("from spec/", &format!("from codegen/templates/{path}"))
    )
}

/// The crate's manifest, its root and the modules written from templates.
fn crate_files(spec: &Spec, sink: &mut dyn Sink) -> Result<(), EmitError> {
    sink.put(
        "Cargo.toml".into(),
        format!("{CARGO_TOML}{}", rust::cargo_features(spec)),
    )?;
    sink.put(
        "src/support.rs".into(),
        from_template("support.rs", &rust::fill_vocabularies(SUPPORT)),
    )?;
    let lib_items = rust::format_file({
        let mods = rust::processor_mods(spec);
        let table = rust::processors_table(spec);
        let socs = socs::socs_table(spec);
        quote::quote!(#mods #table #socs)
    });
    // The header's inner attributes must come first, so the generated items follow them.
    let lib_body = lib_items.strip_prefix(rust::HEADER).unwrap_or(&lib_items);
    // The Xeon 7500 example only where the spec has that processor.
    let example = if spec.processors.iter().any(|p| p.id == "xeon-7500") {
        LIB_EXAMPLE_XEON_7500
    } else {
        ""
    };
    sink.put(
        "src/lib.rs".into(),
        format!(
            "{}{LIB_HEADER}{example}{}{LIB_ATTRS}\n{lib_body}",
            rust::HEADER,
            rust::features_doc(spec)
        ),
    )?;
    sink.put(
        "src/structure.rs".into(),
        from_template("structure.rs", &rust::fill_vocabularies(STRUCTURE)),
    )?;
    sink.put("src/metrics.rs".into(), metrics::crate_module(spec))?;
    sink.put(
        "src/core_events.rs".into(),
        from_template("core_events.rs", CORE_EVENTS),
    )?;
    Ok(())
}

/// Every unit's files, rendered on all cores: each worker takes every n-th unit and sends
/// its files back.
fn unit_files_in_parallel(spec: &Spec, sink: &mut dyn Sink) -> Result<(), EmitError> {
    let units: Vec<(&Processor, &Unit)> = spec
        .processors
        .iter()
        .flat_map(|p| p.units.iter().map(move |u| (p, u)))
        .collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(units.len().max(1));
    std::thread::scope(|scope| -> Result<(), EmitError> {
        let (tx, rx) =
            mpsc::sync_channel::<Result<Vec<(String, String)>, tera::Error>>(workers * 2);
        for w in 0..workers {
            let tx = tx.clone();
            let units = &units;
            scope.spawn(move || {
                let docs = docs::Docs::new();
                for (p, u) in units.iter().skip(w).step_by(workers) {
                    // A closed channel means the receiver stopped on an error: stop too.
                    if tx.send(unit_files(&docs, spec, p, u)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        for files in rx {
            for (path, content) in files? {
                sink.put(path, content)?;
            }
        }
        Ok(())
    })
}
