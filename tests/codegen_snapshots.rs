//! Snapshots of everything the emitters produce for the small fixture spec in `fixtures/ok/`:
//! the Rust modules, the generated property tests, the Markdown pages and the SVG diagrams.

use std::path::Path;

fn fixture_tree() -> codegen::emit::Tree {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ok");
    codegen::render(&dir).unwrap_or_else(|e| panic!("the fixture spec must be valid:\n{e}"))
}

#[test]
fn emitted_files_are_snapshotted() {
    let tree = fixture_tree();
    // Cargo.toml, support.rs and structure.rs are fixed templates, covered by the real
    // crate's build.
    for (path, content) in tree
        .iter()
        .filter(|(p, _)| !["src/support.rs", "src/structure.rs"].contains(&p.as_str()))
    {
        let name = path.replace(['/', '.'], "_");
        insta::assert_snapshot!(name, content);
    }
}

#[test]
fn emitted_file_set_is_stable() {
    let tree = fixture_tree();
    let paths: Vec<&String> = tree.keys().collect();
    insta::assert_debug_snapshot!(paths);
}
