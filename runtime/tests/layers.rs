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
        "table_placed",
        "lookup",
        "codec",
        "cpuid",
        "identify",
        "midr",
        "apmt",
        "table_format",
        "ownership",
        "perfmon",
        "quirks",
        "cmn",
        "cspmu",
    ],
    &["msr", "pci", "mmio", "sim", "fault"],
    &["counters", "discovery"],
    &["sampling"],
    &["machine", "perf", "sim_perf"],
    &["part", "constants", "detect", "soc"],
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
/// in the library, where a program can call it. Counted honestly: `src/bin/` plus every
/// library module that, outside tests, only the binary uses ([`binary_only_modules`]), so
/// moving printing out of `bin/` into a module nothing else calls does not shrink it.
///
/// The issue asks for 3,500. Counted this way the binary was 9,308 lines when the count began
/// (bin/ 3,224; the `report` modules but `counts`; `export::serving`; and whole library
/// engines only `pmu` drives so far: the HTTP server and its TLS configuration, `stat`,
/// `detect` and `identify`, `perfmon`, `session::named`, `perf::task`). It fell as those
/// engines gained users a program could be: 7,562 once `examples/metric_group.rs`,
/// `conformance.rs` and `topdown_tree.rs` printed through `report::metric_values`, `check`
/// and `stat`'s views; 5,171 once `examples/exporter.rs` served a simulated box through
/// `export::serving`, the HTTP server and its web configuration and scraped itself (2,391
/// lines: the server, its TLS and users, `serving` and `session::named`); 3,999 once
/// `examples/list_events.rs` and `decode_value.rs` printed through `report::listing` (with
/// Intel's descriptions, `perfmon`) and `report::register`; 3,903 with
/// `examples/discover_table.rs` (`report::joined`); 3,669 with `examples/detect_machine.rs`
/// (`report::machine`, `detect`'s description moved there); and 3,399, `src/bin/` alone, with
/// `examples/perf_stat.rs` (`stat::report`). Each example is diffed against its command in
/// `tests/examples.rs` and `.ci/run`. `stat`'s `-G` and `--metric-only -I` options then added
/// 72 lines of argument parsing to `src/bin/` (3,471; their work is in `perf::cgroup` and
/// `stat::metric_only`, which `examples/perf_stat.rs` also calls). 3,408 once `stat --sim`
/// was counted and worded by `stat::simulated` (`examples/topdown_tree.rs` calls it) and
/// `stat`'s option rules became `stat::options` (`examples/perf_stat.rs` checks its options
/// with it), `--sim -I` with the tree and the views added. Lower it as the binary shrinks.
const BINARY_BUDGET: usize = 3420;

/// `code` as tokens: identifiers (keywords and numbers too), `::`, and single characters
/// other than white space. Strings stay single tokens, so a path in a message is no path.
fn tokens(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let c = rest.chars().next().unwrap();
        let len = if let Some(len) = string_len(rest) {
            len
        } else if c.is_alphanumeric() || c == '_' {
            rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())
        } else if rest.starts_with("::") {
            2
        } else {
            c.len_utf8()
        };
        if !c.is_whitespace() {
            out.push(&rest[..len]);
        }
        i += len;
    }
    out
}

fn is_ident(token: &str) -> bool {
    token.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

/// The use tree at `tokens[*at..]` below `prefix`: each path it names, with the name it binds
/// (its last segment, its `as` name; none for a glob).
fn use_tree(
    tokens: &[&str],
    at: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    let mut path = prefix;
    while let Some(&t) = tokens.get(*at) {
        *at += 1;
        match t {
            "{" => {
                while tokens.get(*at).is_some_and(|t| *t != "}") {
                    use_tree(tokens, at, path.clone(), out);
                    if tokens.get(*at) == Some(&",") {
                        *at += 1;
                    }
                }
                *at += 1;
                return;
            }
            "*" => return out.push((path, String::new())),
            "self" if !path.is_empty() => {}
            t if is_ident(t) => path.push(t.to_string()),
            _ => {
                *at -= 1;
                break;
            }
        }
        if tokens.get(*at) == Some(&"::") {
            *at += 1;
        } else {
            break;
        }
    }
    let mut bound = path.last().cloned().unwrap_or_default();
    if tokens.get(*at) == Some(&"as") {
        bound = tokens.get(*at + 1).unwrap_or(&"_").to_string();
        *at += 2;
    }
    out.push((path, bound));
}

/// What a file's code outside tests names of the library, as paths from the crate's root:
/// every path it imports (`use`) or writes (`a::b::c`), `pmu_runtime::`, `crate::`, `super::`
/// and `self::` resolved, and a path starting with a name the file imports or a child module
/// continued from what that name stands for. `here` is the file's module in the library (none
/// for the binary or an example, where only `pmu_runtime::` is the library).
fn library_paths(
    code: &str,
    here: Option<&[String]>,
    modules: &BTreeSet<Vec<String>>,
) -> Vec<Vec<String>> {
    let tokens = tokens(code);
    let resolve =
        |path: &[String], imports: &BTreeMap<String, Vec<String>>| -> Option<Vec<String>> {
            let (first, rest) = path.split_first()?;
            let mut full = match (first.as_str(), here) {
                ("pmu_runtime", _) => vec![],
                ("crate", Some(_)) => vec![],
                ("self", Some(h)) => h.to_vec(),
                ("super", Some(h)) => {
                    let supers = path.iter().take_while(|s| *s == "super").count();
                    let mut full = h[..h.len().saturating_sub(supers)].to_vec();
                    full.extend_from_slice(&path[supers..]);
                    return Some(full);
                }
                (name, _) if imports.contains_key(name) => imports[name].clone(),
                (name, Some(h)) if modules.contains(&[h, &[name.to_string()]].concat()) => {
                    [h, &[name.to_string()]].concat()
                }
                _ => return None,
            };
            full.extend_from_slice(rest);
            Some(full)
        };
    // A `pub use` re-exports: its users are those who name what it makes a name of.
    let mut imported = Vec::new();
    let mut re_exported = BTreeSet::new();
    for (i, _) in tokens.iter().enumerate().filter(|(_, t)| **t == "use") {
        let public = i > 0 && ["pub", ")"].contains(&tokens[i - 1]);
        let mut end = i + 1;
        let mut named = Vec::new();
        use_tree(&tokens, &mut end, Vec::new(), &mut named);
        if public {
            re_exported.extend(i..end);
        }
        imported.extend(named.into_iter().map(|n| (n, public)));
    }
    let mut imports = BTreeMap::new();
    let mut paths = Vec::new();
    for ((path, bound), public) in imported {
        if let Some(full) = resolve(&path, &BTreeMap::new()) {
            if !bound.is_empty() && bound != "_" {
                imports.insert(bound, full.clone());
            }
            if !public {
                paths.push(full);
            }
        }
    }
    let mut i = 0;
    while i < tokens.len() {
        let starts = is_ident(tokens[i])
            && (i == 0 || !["::", "mod"].contains(&tokens[i - 1]))
            && !re_exported.contains(&i);
        let mut path = vec![tokens[i].to_string()];
        i += 1;
        while starts
            && tokens.get(i) == Some(&"::")
            && tokens.get(i + 1).is_some_and(|t| is_ident(t))
        {
            path.push(tokens[i + 1].to_string());
            i += 2;
        }
        if starts {
            paths.extend(resolve(&path, &imports));
        }
    }
    paths
}

/// A library file's module path: `report/counts.rs` -> `report::counts`, `report/mod.rs` ->
/// `report`, `lib.rs` -> the root.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    rel.iter()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| s != "mod" && s != "lib")
        .collect()
}

/// The library file `path` (from the crate's root) names: the deepest module along it, or,
/// where it names an item a module re-exports (`pub use`), the module the item comes from.
fn files_named(
    path: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
    re_exports: &BTreeMap<Vec<String>, Vec<String>>,
    out: &mut BTreeSet<Vec<String>>,
) {
    let mut deepest = None;
    for k in 1..=path.len() {
        let prefix = &path[..k];
        if modules.contains_key(prefix) {
            deepest = Some(prefix);
        } else if let Some(target) = re_exports.get(prefix) {
            if !path.starts_with(target) {
                return files_named(&[target, &path[k..]].concat(), modules, re_exports, out);
            }
            break;
        } else {
            break;
        }
    }
    out.extend(deepest.map(<[String]>::to_vec));
}

/// Who uses each library module outside tests: module -> its users (another module's path
/// joined by `::`, `bin` for the `pmu` binary, `example <name>` for `runtime/examples/`).
/// A use is a path that names the module or an item of it; a file that only holds methods of
/// a type defined elsewhere (`session/open.rs`: `impl Session`) is used through the type and
/// has no users of its own here. The test crate and the fuzz targets are tests.
fn library_users(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<String>> {
    let mut modules = BTreeMap::new();
    let mut library = Vec::new();
    let mut outside = Vec::new();
    for file in rust_files_under(src) {
        if file.starts_with(src.join("bin")) {
            outside.push(("bin".to_string(), file));
        } else {
            modules.insert(module_of(src, &file), file.clone());
            library.push(file);
        }
    }
    for file in rust_files_under(&src.join("../examples")) {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        outside.push((format!("example {name}"), file));
    }
    let known: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
    // What each `pub use` makes a module's own name: module::Name -> where it comes from.
    let mut re_exports = BTreeMap::new();
    for file in &library {
        let here = module_of(src, file);
        let code = code_outside_tests(&std::fs::read_to_string(file).unwrap());
        let t = tokens(&code);
        for (i, _) in t
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0] == "pub" && w[1] == "use")
        {
            let mut named = Vec::new();
            use_tree(&t, &mut (i + 2), Vec::new(), &mut named);
            for (path, bound) in named {
                let resolved = library_paths(&path.join("::"), Some(&here), &known);
                if let (Some(full), false) = (resolved.first(), bound.is_empty()) {
                    re_exports.insert([here.clone(), vec![bound]].concat(), full.clone());
                }
            }
        }
    }
    let mut users: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    let users_of = library
        .iter()
        .map(|f| (module_of(src, f).join("::"), f, Some(module_of(src, f))))
        .chain(outside.iter().map(|(name, f)| (name.clone(), f, None)));
    for (user, file, here) in users_of {
        let code = code_outside_tests(&std::fs::read_to_string(file).unwrap());
        let mut named = BTreeSet::new();
        for path in library_paths(&code, here.as_deref(), &known) {
            files_named(&path, &modules, &re_exports, &mut named);
        }
        for module in named.into_iter().filter(|m| Some(m) != here.as_ref()) {
            users.entry(module).or_default().insert(user.clone());
        }
    }
    // A folder's `mod.rs` serves whoever uses what the folder holds.
    for (module, by) in users.clone() {
        for k in 1..module.len() {
            let folder = users.entry(module[..k].to_vec()).or_default();
            folder.extend(by.iter().filter(|u| **u != module[..k].join("::")).cloned());
        }
    }
    users
}

/// The library modules that, outside tests, only the binary uses: those the binary reaches
/// (directly or through others) whose every user is the binary or another of them.
fn binary_only_modules(users: &BTreeMap<Vec<String>, BTreeSet<String>>) -> BTreeSet<String> {
    let mut only: BTreeSet<String> = BTreeSet::from(["bin".to_string()]);
    loop {
        let grown: BTreeSet<String> = users
            .iter()
            .filter(|(_, by)| by.iter().any(|u| only.contains(u)))
            .map(|(m, _)| m.join("::"))
            .chain(only.iter().cloned())
            .collect();
        if grown == only {
            break;
        }
        only = grown;
    }
    loop {
        let kept: BTreeSet<String> = only
            .iter()
            .filter(|m| *m == "bin" || users[&split(m)].iter().all(|u| only.contains(u)))
            .cloned()
            .collect();
        if kept == only {
            only.remove("bin");
            return only;
        }
        only = kept;
    }
}

fn split(module: &str) -> Vec<String> {
    module.split("::").map(String::from).collect()
}

#[test]
fn the_binary_stays_within_its_line_budget() {
    let src = src();
    let users = library_users(&src);
    let only = binary_only_modules(&users);
    let lines = |path: &Path| std::fs::read_to_string(path).unwrap().lines().count();
    let bin: usize = rust_files_under(&src.join("bin"))
        .iter()
        .map(|p| lines(p))
        .sum();
    let mut counted = vec![format!("src/bin/: {bin}")];
    let mut total = bin;
    for file in rust_files_under(&src)
        .iter()
        .filter(|f| !f.starts_with(src.join("bin")))
    {
        let module = module_of(&src, file).join("::");
        if only.contains(&module) {
            total += lines(file);
            let by: Vec<&str> = users[&split(&module)].iter().map(String::as_str).collect();
            counted.push(format!(
                "{module}: {} (used by {})",
                lines(file),
                by.join(", ")
            ));
        }
    }
    counted.sort();
    assert!(
        users.contains_key(&split("session")) && users[&split("session")].contains("bin"),
        "the scan finds no use of the session by the binary: {users:?}"
    );
    assert!(
        total <= BINARY_BUDGET,
        "the binary is {total} lines, above its budget of {BINARY_BUDGET} (issue 37), counting \
         src/bin/ and the library modules only it uses:\n{}\nmove the work into a library module \
         a program can call (ARCHITECTURE.md's layers), keep the binary to parsing and \
         printing, and print what a program would print through the same calls",
        counted.join("\n")
    );
}

#[test]
fn the_usage_scan_resolves_imports_re_exports_and_relative_paths() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    for (file, text) in [
        ("lib.rs", "pub mod report; pub mod stat; pub mod export;"),
        ("report/mod.rs", "pub mod counts; pub mod listing; pub mod machine; pub use machine::Verdict;"),
        ("report/counts.rs", "use super::listing::{self as l, Row}; pub fn f() { l::g() }"),
        ("report/listing.rs", "pub fn g() {}"),
        ("report/machine.rs", "pub struct Verdict;"),
        ("stat/mod.rs", "pub fn h() { crate::report::counts::f(); }"),
        ("export/mod.rs", "#[cfg(test)]\nmod tests { use crate::report::machine; }\n// crate::report::listing\nfn s() -> &'static str { \"crate::report::listing\" }"),
        ("bin/pmu/main.rs", "use pmu_runtime::report;\nfn main() { report::counts::f(); let _ = pmu_runtime::report::Verdict; }"),
    ] {
        let path = src.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("examples")).unwrap();
    std::fs::write(
        dir.path().join("examples/lists.rs"),
        "use pmu_runtime::report::{listing::g};",
    )
    .unwrap();
    let users = library_users(&src);
    let by = |m: &str| users.get(&split(m)).cloned().unwrap_or_default();
    assert_eq!(
        by("report::counts"),
        ["bin", "stat"].map(String::from).into()
    );
    // `super::listing::{self as l}`, and an example's grouped import.
    assert_eq!(
        by("report::listing"),
        ["example lists", "report::counts"].map(String::from).into()
    );
    // Named through `report`'s `pub use`: the re-export itself is no use, nor a test's, a
    // comment's or a string's.
    assert_eq!(by("report::machine"), ["bin".to_string()].into());
    assert_eq!(
        binary_only_modules(&users),
        ["report::machine".to_string()].into(),
        "{users:?}"
    );
}
