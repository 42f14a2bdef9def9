//! The runtime's dependency rules, checked from the source's paths, so a broken rule fails
//! here rather than in review:
//! - no module (a file or folder under `src/`, or under `src/bin/pmu/` for the command)
//!   reaches, directly or through others, back to itself;
//! - the layering the crate documents: the access layer below the errors, the simulator
//!   and sampling beside each other and reaching registers through the access layer only,
//!   the base errors naming no backend, no backend using a sampling procedure;
//! - the `pmu` command reaches counters through the library's sessions and machine, never
//!   through the simulator or the raw backends themselves;
//! - no import cycle among the files of any module folder (`perf/encode.rs` and
//!   `perf/syntax.rs` may not name each other both ways);
//! - the layers the issue of the open backend seam set: counters own `delta`, `EventSelect`
//!   is imported from `boxes` where it is defined, discovery reads through the access traits
//!   only, the simulator imports neither discovery nor ownership, and the session knows no
//!   simulator;
//! - one name per concept: no type, enum, trait or type alias defined twice in `src/`, and
//!   no crate item re-exported under a second name (`pub use x::A as B`);
//! - the layer list of ARCHITECTURE.md: every top-level module in a layer, using only its
//!   own and those beneath.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`, at any depth.
fn rust_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

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
    let mut hits = Vec::new();
    let mut scanned = 0;
    for path in rust_files_under(&src()) {
        scanned += 1;
        let code = code_outside_tests(&std::fs::read_to_string(&path).unwrap());
        for hit in names_in(&code, &names) {
            hits.push(format!("{}: {hit}", path.display()));
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

/// Every folder under `dir` that holds `.rs` files, `dir` included.
fn folders(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        for entry in std::fs::read_dir(&out[i]).unwrap().flatten() {
            if entry.path().is_dir() {
                out.push(entry.path());
            }
        }
        i += 1;
    }
    out
}

/// Within `folder`, each file module (a `.rs` file other than `mod.rs`, or a sub-folder) ->
/// the siblings its code outside tests names, as `super::x` or `crate::<folder>::x`. The
/// folder's own `mod.rs` re-exports its children and is left out: a child naming what it
/// re-exports is not a cycle between files.
fn folder_graph(src: &Path, folder: &Path) -> Graph {
    let rel = folder
        .strip_prefix(src)
        .unwrap()
        .to_string_lossy()
        .replace('/', "::");
    let mut siblings = BTreeMap::new();
    for entry in std::fs::read_dir(folder).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut files = vec![];
            let mut stack = vec![path];
            while let Some(d) = stack.pop() {
                for f in std::fs::read_dir(&d).unwrap().flatten() {
                    if f.path().is_dir() {
                        stack.push(f.path());
                    } else {
                        files.push(f.path());
                    }
                }
            }
            siblings.insert(name, files);
        } else if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
            siblings.insert(name, vec![path]);
        }
    }
    let mut graph = Graph::new();
    for (name, files) in &siblings {
        let deps = graph.entry(name.clone()).or_default();
        for file in files {
            let code = code_outside_tests(&std::fs::read_to_string(file).unwrap());
            // A file directly in the folder reaches its siblings as `super::`; one deeper
            // (a sub-folder's file) as `super::super::`, which names its own folder first.
            let nested = file.parent() != Some(folder);
            let mut named = if nested {
                named_after(&code, "super::super::")
            } else {
                named_after(&code, "super::")
            };
            if !rel.is_empty() {
                named.extend(named_after(&code, &format!("crate::{rel}::")));
            }
            deps.extend(
                named
                    .into_iter()
                    .filter(|d| d != name && siblings.contains_key(d)),
            );
        }
    }
    graph
}

#[test]
fn no_module_folder_has_an_import_cycle_among_its_files() {
    let src = src();
    let mut checked = 0;
    for folder in folders(&src) {
        if folder == src {
            continue; // the top-level modules: no_module_depends_on_itself_through_others
        }
        let graph = folder_graph(&src, &folder);
        for module in graph.keys() {
            if let Some(cycle) = reaches(&graph, module, module) {
                panic!(
                    "import cycle in {}: {}",
                    folder.display(),
                    cycle.join(" -> ")
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} folders");
}

#[test]
fn the_folder_check_sees_a_cycle_between_siblings() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("f");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("mod.rs"), "mod a; mod b; pub use a::X;").unwrap();
    std::fs::write(folder.join("a.rs"), "use super::b::Y; pub struct X;").unwrap();
    std::fs::write(
        folder.join("b.rs"),
        "use crate::f::a::X; pub struct Y;\n#[cfg(test)]\nmod tests { use super::c; }",
    )
    .unwrap();
    let graph = folder_graph(dir.path(), &folder);
    assert!(reaches(&graph, "a", "a").is_some(), "{graph:?}");
    assert!(
        !graph.contains_key("mod") && !graph["b"].contains("c"),
        "{graph:?}"
    );
}

#[test]
fn each_layer_reaches_only_the_layers_beneath_it() {
    let graph = graph(&src(), "crate::");
    // Counters own `delta`, and `EventSelect` comes from `boxes`, where it is defined: what
    // counts through a session reaches no sampling procedure.
    for user in ["session", "export", "metrics", "counters"] {
        assert!(
            !graph[user].contains("sampling"),
            "{user} names sampling: take delta from counters and EventSelect from boxes"
        );
    }
    // Discovery reads registers through the access traits, handed to it.
    for backend in BACKENDS {
        assert!(
            !graph["discovery"].contains(backend),
            "discovery names the backend {backend}: take an access trait object instead"
        );
    }
    // The simulator builds its table with the table format, and its claims are the
    // machine's to keep.
    for above in ["discovery", "ownership", "machine", "session"] {
        assert!(
            reaches(&graph, "sim", above).is_none(),
            "sim reaches {above}: {:?}",
            reaches(&graph, "sim", above)
        );
    }
    // The session reaches a workload through the machine's seam, never the simulator.
    for sim in ["sim", "sim_perf"] {
        assert!(
            !graph["session"].contains(sim),
            "the session names {sim}: run a workload through Machine::workload"
        );
    }
    let counters = std::fs::read_to_string(src().join("counters/mod.rs")).unwrap();
    assert!(counters.contains("pub fn delta("));
}

/// The names `code` defines as a struct, enum, union, trait or type alias, each with its line.
/// An associated type (`type Item = ..;` in an impl, never `pub`, never at the file's top
/// level) is not a definition of a name of the crate's, and is left out.
fn defined_names(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let top = !line.starts_with(' ');
        let mut words = line.split_whitespace().peekable();
        let public = words.peek().is_some_and(|w| w.starts_with("pub"));
        if public {
            words.next();
        }
        let (Some(kind), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        let kind_ok = match kind {
            "struct" | "enum" | "union" | "trait" => true,
            "type" => public || top,
            _ => false,
        };
        let name: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if kind_ok && name.starts_with(|c: char| c.is_ascii_uppercase()) {
            out.push((name, n + 1));
        }
    }
    out
}

#[test]
fn no_type_name_is_defined_twice() {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in rust_files_under(&src()) {
        let code = code_outside_tests(&std::fs::read_to_string(&path).unwrap());
        let file = path.strip_prefix(src()).unwrap().display().to_string();
        for (name, line) in defined_names(&code) {
            by_name
                .entry(name)
                .or_default()
                .push(format!("{file}:{line}"));
        }
    }
    assert!(by_name.contains_key("Machine") && by_name.contains_key("MachineBackend"));
    let twice: Vec<String> = by_name
        .iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "one name per concept: these type names are defined more than once in runtime/src \
         (rename by what each is):\n{}",
        twice.join("\n")
    );
}

/// The crates `runtime/Cargo.toml` depends on, by the name code uses (`-` as `_`), and the
/// standard ones: a path starting with one of them is not the crate's own.
fn external_crates() -> BTreeSet<String> {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let mut out: BTreeSet<String> = ["std", "core", "alloc"].map(String::from).into();
    let mut in_deps = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_deps = line.contains("dependencies");
        } else if let Some((name, _)) = line.split_once('=').filter(|_| in_deps) {
            if !line.starts_with('#') && !name.trim().is_empty() {
                out.insert(name.trim().replace('-', "_"));
            }
        }
    }
    out
}

/// Each `pub use` of `code` that gives one of the crate's own items a second name (`pub use
/// self::A as B;`, `pub use m::{A as B}`), with its line. `as _` (a trait brought in scope
/// unnamed) is no name.
fn public_aliases(code: &str, external: &BTreeSet<String>) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, _) in code.match_indices("pub use ") {
        let line_start = code[..n].rfind('\n').map_or(0, |i| i + 1);
        if !code[line_start..n].trim().is_empty() {
            continue;
        }
        let rest = &code[n + "pub use ".len()..];
        let statement = &rest[..rest.find(';').unwrap_or(rest.len())];
        let first = statement
            .trim_start_matches("::")
            .split("::")
            .next()
            .unwrap_or("");
        if external.contains(first.trim()) {
            continue;
        }
        let words: Vec<&str> = statement
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
            .filter(|w| !w.is_empty())
            .collect();
        for w in words.windows(3).filter(|w| w[1] == "as" && w[2] != "_") {
            let line = code[..n].matches('\n').count() + 1;
            let item = w[0].rsplit("::").next().unwrap_or(w[0]);
            out.push((format!("{item} as {}", w[2]), line));
        }
    }
    out
}

#[test]
fn no_crate_item_is_re_exported_under_a_second_name() {
    let external = external_crates();
    assert!(external.contains("pmu_regs") && external.contains("prometheus_client"));
    let mut found = Vec::new();
    for path in rust_files_under(&src()) {
        let code = code_outside_tests(&std::fs::read_to_string(&path).unwrap());
        let file = path.strip_prefix(src()).unwrap().display().to_string();
        for (alias, line) in public_aliases(&code, &external) {
            found.push(format!("{file}:{line}: {alias}"));
        }
    }
    assert!(
        found.is_empty(),
        "one name per concept: these `pub use` lines give a crate item a second name \
         (drop the alias and have its users say the item's own name):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_alias_scan_sees_crate_aliases_and_not_external_ones() {
    let external: BTreeSet<String> = ["pmu_regs".to_string()].into();
    let code = "pub use self::A as B;\npub use m::{C, D as E};\npub use pmu_regs::F as G;\n\
                use self::H as I;\npub use n::J as _;\n    pub use o::{\n        K as L,\n    };\n";
    let found: Vec<String> = public_aliases(code, &external)
        .into_iter()
        .map(|(a, line)| format!("{line}: {a}"))
        .collect();
    assert_eq!(found, ["1: A as B", "2: D as E", "6: K as L"]);
}

#[test]
fn the_name_scan_sees_definitions_and_not_associated_types() {
    let code = "pub struct A;\nenum B { X }\n    pub(crate) trait C {}\ntype D = u8;\n\
                impl Iterator for A {\n    type Item = u8;\n}\n    pub type E<T> = T;\n";
    let names: Vec<String> = defined_names(code).into_iter().map(|n| n.0).collect();
    assert_eq!(names, ["A", "B", "C", "D", "E"]);
}

/// The runtime's layers as ARCHITECTURE.md lists them, lowest first.
const LAYERS: [&[&str]; 9] = [
    &["access", "error", "topology", "bounded", "out_file"],
    &[
        "boxes",
        "lookup",
        "codec",
        "cpuid",
        "identify",
        "table_format",
        "ownership",
        "perfmon",
        "quirks",
    ],
    &["msr", "pci", "mmio", "sim", "fault"],
    &["counters", "discovery"],
    &["sampling"],
    &["machine", "perf", "sim_perf"],
    &["part", "constants", "detect"],
    &["session"],
    &["metrics", "export", "report", "check", "stat"],
];

#[test]
fn every_module_uses_only_its_layer_and_those_beneath() {
    let graph = graph(&src(), "crate::");
    let layer_of = |m: &str| LAYERS.iter().position(|l| l.contains(&m));
    for (module, deps) in &graph {
        let Some(at) = layer_of(module) else {
            panic!("{module} is in no layer: place it in LAYERS and in ARCHITECTURE.md's list");
        };
        for dep in deps.iter().filter(|d| graph.contains_key(*d)) {
            let below = layer_of(dep).is_some_and(|l| l <= at);
            assert!(
                below,
                "{module} (layer {}) uses {dep}, a layer above it",
                at + 1
            );
        }
    }
    let architecture =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md"))
            .unwrap();
    for module in LAYERS.iter().flat_map(|l| l.iter()) {
        assert!(
            *module == "topology" || architecture.contains(&format!("`{module}`")),
            "ARCHITECTURE.md's layer list does not name {module}"
        );
    }
}

/// The `pmu` binary's line budget (issue 37): it parses arguments and prints, and the work is
/// in the library, where a program can call it; so `src/bin/` stays at most this many lines.
const BINARY_BUDGET: usize = 3500;

#[test]
fn the_binary_stays_within_its_line_budget() {
    let lines: usize = rust_files_under(&src().join("bin"))
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap().lines().count())
        .sum();
    assert!(
        lines <= BINARY_BUDGET,
        "runtime/src/bin/ is {lines} lines, above its budget of {BINARY_BUDGET} (issue 37): \
         move the work into a library module a program can call (ARCHITECTURE.md's layers), \
         keeping the binary to parsing and printing"
    );
}
