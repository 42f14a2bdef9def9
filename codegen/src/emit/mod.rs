//! Stage 3: the validated model -> every file of `generated/`, in memory.
//!
//! Nothing here touches the disk; `output` decides whether and how to write.

pub mod docs;
pub mod rust;
pub mod svg;
pub mod tests;

use std::collections::BTreeMap;

use crate::model::Spec;

const SUPPORT: &str = include_str!("../../templates/support.rs");
const LIB_HEADER: &str = include_str!("../../templates/lib_header.rs");
const CARGO_TOML: &str = include_str!("../../templates/Cargo.toml.generated");

/// The generated crate: paths relative to `generated/`, and contents.
pub type Tree = BTreeMap<String, String>;

/// Renders every file of the generated crate and its documentation.
pub fn generate(spec: &Spec) -> Result<Tree, tera::Error> {
    let mut tree = Tree::new();
    tree.insert("Cargo.toml".into(), CARGO_TOML.into());
    tree.insert(
        "src/support.rs".into(),
        format!(
            "{}{SUPPORT}",
            rust::HEADER.replace("from spec/", "from codegen/templates/support.rs")
        ),
    );

    let lib_items = rust::format_file({
        let mods = rust::processor_mods(spec);
        let table = rust::processors_table(spec);
        quote::quote!(#mods #table)
    });
    // The header's inner attributes must come first, so the generated items follow them.
    let lib_body = lib_items.strip_prefix(rust::HEADER).unwrap_or(&lib_items);
    tree.insert(
        "src/lib.rs".into(),
        format!("{}{LIB_HEADER}\n{lib_body}", rust::HEADER),
    );

    for p in &spec.processors {
        tree.insert(
            format!("src/{}/mod.rs", p.module),
            rust::format_file(rust::processor_module(p)),
        );
        for u in &p.units {
            tree.insert(
                format!("src/{}/{}.rs", p.module, u.module),
                rust::unit_module_text(p, u),
            );
        }
    }
    tree.insert("tests/layouts.rs".into(), tests::LAYOUTS_ROOT.into());
    tree.insert("tests/cases/mod.rs".into(), tests::layouts_test(spec));
    for (path, content) in docs::render(spec)? {
        tree.insert(format!("docs/{path}"), content);
    }
    Ok(tree)
}
