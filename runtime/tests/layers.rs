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
    assert!(graph.contains_key("watch") && graph.contains_key("counting"));
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

/// `text` with its comments removed (doc examples live in them) and every item under
/// `#[cfg(test)]` left out; strings and the rest of the code kept.
fn code_outside_tests(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let mut depth = 0usize;
    // The depth a `#[cfg(test)]` item starts at, while skipping it.
    let mut skipping: Option<usize> = None;
    let keep = |out: &mut String, s: &str, skipping: Option<usize>| {
        if skipping.is_none() {
            out.push_str(s);
        }
    };
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if rest.starts_with("#[cfg(test)]") && skipping.is_none() {
            skipping = Some(depth);
            i += "#[cfg(test)]".len();
        } else if let Some(len) = string_len(rest) {
            keep(&mut out, &rest[..len], skipping);
            i += len;
        } else {
            let c = rest.chars().next().unwrap();
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            keep(&mut out, &rest[..c.len_utf8()], skipping);
            i += c.len_utf8();
            let ends_item = (c == '}' || c == ';') && skipping == Some(depth);
            if ends_item {
                skipping = None;
            }
        }
    }
    out
}

/// The length of the string or character literal `rest` starts with, if it starts with one
/// (`"..."`, `r#"..."#`, `b"..."`, `'x'`, `'\n'`; a lifetime is not one).
fn string_len(rest: &str) -> Option<usize> {
    let b = rest.as_bytes();
    let start = usize::from(b.first() == Some(&b'b'));
    if b.get(start) == Some(&b'r') {
        let hashes = b[start + 1..].iter().take_while(|c| **c == b'#').count();
        if b.get(start + 1 + hashes) == Some(&b'"') {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = start + 2 + hashes;
            return Some(body + rest[body..].find(&close)? + close.len());
        }
        return None;
    }
    match b.get(start) {
        Some(b'"') => {
            let mut j = start + 1;
            while j < b.len() {
                match b[j] {
                    b'\\' => j += 2,
                    b'"' => return Some(j + 1),
                    _ => j += 1,
                }
            }
            Some(b.len())
        }
        Some(b'\'') if start == 0 => {
            if b.get(1) == Some(&b'\\') {
                return Some(2 + rest[2..].find('\'')? + 1);
            }
            let c = rest[1..].chars().next()?;
            (rest[1 + c.len_utf8()..].starts_with('\'')).then_some(2 + c.len_utf8())
        }
        _ => None,
    }
}

/// Lower case, with `_` and spaces as `-`, so `Ice Lake-SP`, `ice_lake_sp` and `ice-lake-sp`
/// read alike.
fn normal(text: &str) -> String {
    text.to_ascii_lowercase()
        .chars()
        .map(|c| if c == '_' || c == ' ' { '-' } else { c })
        .collect()
}

/// Every way the spec names a processor a part can be (one with an identity): its id, its
/// module, each code name as written and squashed (`Haswell-X`, `haswellx`) and its first
/// word when that is a name of its own (`Skylake`, `Sapphire`); and the vendors' brands.
fn processor_names() -> BTreeSet<String> {
    let mut names: BTreeSet<String> = ["xeon", "epyc", "ryzen", "zen"].map(String::from).into();
    for p in pmu_regs::PROCESSORS.iter().filter(|p| p.identity.is_some()) {
        names.insert(normal(p.id));
        names.insert(normal(p.module));
        for c in p.code_names {
            names.insert(normal(c));
            names.insert(normal(&c.replace(['-', ' '], "")));
            // `Skylake`, `Sapphire`; `Ice Lake`, `Sandy Bridge` (the name before a suffix).
            let first = normal(c.split([' ', '-']).next().unwrap_or(""));
            let stem = normal(c.split('-').next().unwrap_or(""));
            names.extend([first, stem].into_iter().filter(|n| n.len() >= 5));
        }
    }
    names
}

/// The processor names `text` holds as whole words (no letter or digit on either side).
fn names_in(text: &str, names: &BTreeSet<String>) -> Vec<String> {
    let text = normal(text);
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let mut found = Vec::new();
    for name in names {
        for (i, _) in text.match_indices(name.as_str()) {
            let before = text[..i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            if !word(before) && !word(after) {
                let line = text[..i].matches('\n').count() + 1;
                found.push(format!("{name} (line {line} of the code kept)"));
            }
        }
    }
    found
}

#[test]
fn no_processor_is_named_outside_tests_and_doc_examples() {
    let names = processor_names();
    assert!(
        names.contains("skylake-sp") && names.contains("haswellx") && names.contains("sapphire")
    );
    let mut stack = vec![src()];
    let mut hits = Vec::new();
    let mut scanned = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                scanned += 1;
                let code = code_outside_tests(&std::fs::read_to_string(&path).unwrap());
                for hit in names_in(&code, &names) {
                    hits.push(format!("{}: {hit}", path.display()));
                }
            }
        }
    }
    assert!(scanned > 50, "only {scanned} files under src/");
    assert!(
        hits.is_empty(),
        "runtime/src names processors outside tests and comments; find them from the spec's \
         data (pmu_regs::PROCESSORS, units, roles) instead:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_name_scan_sees_code_and_strings_and_skips_comments_and_tests() {
    let names = processor_names();
    let text = r##"
/// `pmu_regs::xeon_7500::PROCESSOR` in a doc example
// skylake-sp in a comment
fn f() -> &'static str { let c = '{'; let _ = r#"a } { b"#; "see Ice Lake-SP and Ice Lake-D" }
use pmu_regs::xeon_e5_2600::qpi;
#[cfg(test)]
mod tests { fn g() { let _ = "cascade-lake"; } }
#[cfg(test)]
use pmu_regs::granite_rapids;
const FROZEN: &str = "frozen";
fn h() { let _ = "haswellx_uncore.json"; }
"##;
    let code = code_outside_tests(text);
    let found: Vec<String> = names_in(&code, &names)
        .into_iter()
        .map(|h| h.split(' ').next().unwrap().to_string())
        .collect();
    for expected in ["ice-lake-sp", "ice-lake", "xeon-e5-2600", "haswellx"] {
        assert!(
            found.contains(&expected.to_string()),
            "{expected}: {found:?}\n{code}"
        );
    }
    for hidden in [
        "xeon-7500",
        "skylake-sp",
        "cascade-lake",
        "granite-rapids",
        "zen",
    ] {
        assert!(
            !found.contains(&hidden.to_string()),
            "{hidden}: {found:?}\n{code}"
        );
    }
    assert!(
        code.contains("FROZEN") && !code.contains("mod tests"),
        "{code}"
    );
}
