//! The runtime's modules depend one way: no module (a file or folder under `src/`) reaches,
//! directly or through others, back to itself. Checked from the source's `crate::` paths, so a
//! new cycle fails here rather than in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules its source names through `crate::`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "bin" {
            continue;
        }
        if path.is_dir() {
            // Every file under the folder, however deep, belongs to its top-level module.
            let mut dirs = vec![path];
            while let Some(dir) = dirs.pop() {
                for f in std::fs::read_dir(&dir).unwrap().flatten() {
                    if f.path().is_dir() {
                        dirs.push(f.path());
                    } else {
                        files.push((name.clone(), f.path()));
                    }
                }
            }
        } else {
            files.push((name, path));
        }
    }
    for (module, file) in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let deps = graph.entry(module.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let dep = &rest[..end];
            if !dep.is_empty() && dep != module {
                deps.insert(dep.to_string());
            }
        }
        // `crate::{a, b}` groups.
        for (i, _) in text.match_indices("crate::{") {
            let rest = &text[i + "crate::{".len()..];
            let group = &rest[..rest.find('}').unwrap_or(0)];
            for part in group.split(',') {
                let dep = part.trim().split("::").next().unwrap_or("").trim();
                if !dep.is_empty() && dep != module {
                    deps.insert(dep.to_string());
                }
            }
        }
    }
    graph
}

fn reaches(
    graph: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    to: &str,
) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap().clone();
        for next in graph.get(&last).into_iter().flatten() {
            let mut p = path.clone();
            p.push(next.clone());
            if next == to {
                return Some(p);
            }
            if seen.insert(next.clone()) {
                stack.push(p);
            }
        }
    }
    None
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let graph = graph();
    assert!(graph.contains_key("access") && graph.contains_key("sampling"));
    for module in graph.keys() {
        if let Some(cycle) = reaches(&graph, module, module) {
            panic!("module cycle: {}", cycle.join(" -> "));
        }
    }
    // The layering the crate documents.
    for (low, high) in [
        ("access", "error"),
        ("sim", "sampling"),
        ("sampling", "sim"),
    ] {
        assert!(
            reaches(&graph, low, high).is_none(),
            "{low} must not depend on {high}"
        );
    }
}
