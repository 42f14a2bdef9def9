//! The runtime's dependency rules, checked from the source's paths, so a broken rule fails
//! here rather than in review:
//! - no module (a file or folder under `src/`, or under `src/bin/pmu/` for the command)
//!   reaches, directly or through others, back to itself;
//! - the layering the crate documents: the access layer below the errors, the simulator
//!   and sampling beside each other and reaching registers through the access layer only,
//!   the base errors naming no backend, no backend using a sampling procedure;
//! - the `pmu` command reaches counters through the library's sessions and machine, never
//!   through the simulator or the raw backends themselves.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`, with the top-level module it belongs to (`main`, `lib`
/// and `bin` left out).
fn files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if ["lib", "bin", "main"].contains(&name.as_str()) {
            continue;
        }
        if path.is_dir() {
            let mut stack = vec![path];
            while let Some(d) = stack.pop() {
                for f in std::fs::read_dir(&d).unwrap().flatten() {
                    if f.path().is_dir() {
                        stack.push(f.path());
                    } else {
                        files.push((name.clone(), f.path()));
                    }
                }
            }
        } else {
            files.push((name, path));
        }
    }
    files
}

/// The first path segments after `prefix` (`crate::`, `pmu_runtime::`) in `text`, grouped
/// imports (`prefix{a, b::c}`) included.
fn named_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        let rest = &text[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(0)];
            for part in group.split(',') {
                out.insert(
                    part.trim()
                        .split("::")
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string(),
                );
            }
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        out.insert(rest[..end].to_string());
    }
    out.remove("");
    out
}

/// Top-level module -> the names its source reaches through `prefix`.
fn graph(dir: &Path, prefix: &str) -> Graph {
    let mut graph = Graph::new();
    for (module, file) in files(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        let deps = graph.entry(module.clone()).or_default();
        deps.extend(
            named_after(&text, prefix)
                .into_iter()
                .filter(|d| *d != module),
        );
    }
    graph
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn reaches(graph: &Graph, from: &str, to: &str) -> Option<Vec<String>> {
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

fn assert_acyclic(graph: &Graph) {
    for module in graph.keys() {
        if let Some(cycle) = reaches(graph, module, module) {
            panic!("module cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let graph = graph(&src(), "crate::");
    assert!(graph.contains_key("access") && graph.contains_key("session"));
    assert_acyclic(&graph);
    // The layering the crate documents.
    for (low, high) in [
        ("access", "error"),
        ("sim", "sampling"),
        ("sampling", "sim"),
        ("sampling", "session"),
        ("sim", "session"),
    ] {
        assert!(
            reaches(&graph, low, high).is_none(),
            "{low} must not depend on {high}"
        );
    }
}

/// The backends: what reaches registers or counters on a machine.
const BACKENDS: [&str; 8] = [
    "msr", "pci", "mmio", "sim", "sim_perf", "perf", "fault", "machine",
];

#[test]
fn sampling_and_the_simulator_reach_registers_through_the_access_layer_only() {
    let graph = graph(&src(), "crate::");
    for module in ["sampling", "sim", "counters"] {
        for backend in BACKENDS.iter().filter(|b| **b != module) {
            assert!(
                !graph[module].contains(*backend),
                "{module} names the backend {backend}; reach registers through crate::access"
            );
        }
    }
}

#[test]
fn the_base_errors_name_no_backend() {
    let graph = graph(&src(), "crate::");
    for backend in BACKENDS {
        assert!(
            reaches(&graph, "error", backend).is_none(),
            "error reaches the backend {backend}: a backend's error reaches the base error as \
             Error::Driver, boxed"
        );
    }
}

#[test]
fn no_backend_uses_a_sampling_procedure() {
    let graph = graph(&src(), "crate::");
    for backend in BACKENDS {
        assert!(
            reaches(&graph, backend, "sampling").is_none(),
            "{backend} reaches sampling: {:?}",
            reaches(&graph, backend, "sampling")
        );
    }
}

#[test]
fn the_command_has_no_module_cycle_and_reaches_no_backend_directly() {
    let dir = src().join("bin/pmu");
    let graph = graph(&dir, "crate::");
    assert!(graph.contains_key("watch") && graph.contains_key("targets"));
    assert_acyclic(&graph);
    let mut library = graph_of_library_uses(&dir);
    library.extend(named_after(
        &std::fs::read_to_string(dir.join("main.rs")).unwrap(),
        "pmu_runtime::",
    ));
    assert!(library.contains("session"), "{library:?}");
    for backend in ["sim", "sim_perf", "msr", "pci"] {
        assert!(
            !library.contains(backend),
            "the pmu command uses pmu_runtime::{backend}; reach it through the session or the machine"
        );
    }
}

/// Every `pmu_runtime::` module the command's files name.
fn graph_of_library_uses(dir: &Path) -> BTreeSet<String> {
    graph(dir, "pmu_runtime::")
        .into_values()
        .flatten()
        .collect()
}

#[test]
fn the_checks_see_what_they_check() {
    // A cycle and a grouped import are found, so the rules above cannot pass vacuously.
    let text = "use crate::{a::X, b};\nuse pmu_runtime::sim::Sim;";
    assert_eq!(
        named_after(text, "crate::"),
        ["a", "b"].map(String::from).into()
    );
    assert!(named_after(text, "pmu_runtime::").contains("sim"));
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("a".into());
    assert!(reaches(&g, "a", "a").is_some());
}
