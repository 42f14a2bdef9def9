//! codegen's modules depend one way: among the modules of one folder (the top-level stages,
//! `validate`'s passes, `emit`'s emitters), none reaches back to itself through the others.
//! Read from the source's `crate::`, `super::` and `self::` paths, with comments and string
//! literals left out, so a new cycle fails here rather than in review.
//!
//! Naming has one home, `naming`: no other module defines a case-conversion or word-wrap
//! function or re-exports a naming rule, and no emitter converts case or defines an
//! identifier helper of its own (read from the same code, by function name and call).
//!
//! A module using its own ancestors (`super::Validator`) or descendants is containment, not a
//! cycle; each edge counts between the two modules that are children of the deepest folder
//! holding both ends.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// Every module of `codegen/src` (the library's; `main.rs` is a crate of its own), with its
/// source.
fn modules() -> BTreeMap<Module, String> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<Module, String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let mut module = prefix.to_vec();
            if path.is_dir() {
                module.push(name);
                walk(&path, &module, out);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            match name.as_str() {
                "main" if prefix.is_empty() => continue,
                "lib" if prefix.is_empty() => {}
                "mod" => {}
                _ => module.push(name),
            }
            // A file's unit tests (from its `#[cfg(test)]` on) may reach any stage: they are
            // not part of the pipeline's layering.
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
            out.insert(module, code);
        }
    }
    let mut out = BTreeMap::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut out,
    );
    out
}

/// `text` without comments, string literals and char literals (lifetimes stay).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some((prefix, hashes)) = raw_string_start(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = prefix + hashes + 1;
            i += body
                + rest[body..]
                    .find(&close)
                    .map_or(rest.len() - body, |e| e + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && is_char_literal(rest) {
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `r"`, `r#"`, `br"`...: the length of `r` or `br`, and how many `#` the raw string uses.
fn raw_string_start(rest: &str) -> Option<(usize, usize)> {
    let r = rest.strip_prefix('b').unwrap_or(rest).strip_prefix('r')?;
    let hashes = r.len() - r.trim_start_matches('#').len();
    r[hashes..]
        .starts_with('"')
        .then_some((rest.len() - r.len(), hashes))
}

/// `'x'` or `'\n'`, not the lifetime `'a`.
fn is_char_literal(rest: &str) -> bool {
    let mut chars = rest.chars().skip(1);
    match chars.next() {
        Some('\\') => true,
        Some(_) => chars.next() == Some('\''),
        None => false,
    }
}

/// The full paths a path starting at `text` (after `crate::`, `super::` or `self::`) names,
/// `{a, b::c}` groups expanded, each as its segments.
fn paths(text: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            let mut out = Vec::new();
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.extend(paths(&group[start..i]).into_iter().map(|p| {
                            let mut full: Vec<String> = segments.clone();
                            full.extend(p);
                            full
                        }));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            out.extend(paths(&group[start..end]).into_iter().map(|p| {
                let mut full: Vec<String> = segments.clone();
                full.extend(p);
                full
            }));
            return out;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        segments.push(rest[..end].to_string());
        match rest[end..].strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    vec![segments]
}

/// The modules `module`'s source names, resolved to the longest known module of each path.
fn uses(module: &Module, text: &str, known: &BTreeSet<Module>) -> BTreeSet<Module> {
    let code = code_only(text);
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    for (i, _) in code.match_indices("::") {
        // The path's first segment: crate, super or self, not preceded by more path.
        let head_start = code[..i]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        let head = &code[head_start..i];
        if !matches!(head, "crate" | "super" | "self")
            || (head_start >= 2 && &bytes[head_start - 2..head_start] == b"::")
            || code[..head_start].trim_end().ends_with("(in")
        {
            continue;
        }
        for path in paths(&code[i + 2..]) {
            let mut base: Module = match head {
                "crate" => Vec::new(),
                _ => module.clone(),
            };
            let mut segments = path.as_slice();
            if head == "super" {
                base.pop();
            }
            while let Some(("super", tail)) = segments.split_first().map(|(s, t)| (s.as_str(), t)) {
                base.pop();
                segments = tail;
            }
            let mut target = base.clone();
            let mut resolved = base;
            for s in segments {
                target.push(s.clone());
                if known.contains(&target) {
                    resolved = target.clone();
                }
            }
            out.insert(resolved);
        }
    }
    out
}

/// Folder-level edges: for each use from `a` to `b`, the children of their deepest common
/// folder that hold them, unless one holds the other.
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules();
    let known: BTreeSet<Module> = modules.keys().cloned().collect();
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, text) in &modules {
        for target in uses(module, text, &known) {
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common == module.len() || common == target.len() {
                continue;
            }
            graph
                .entry(module[..=common].to_vec())
                .or_default()
                .insert(target[..=common].to_vec());
        }
    }
    graph
}

fn name(m: &Module) -> String {
    m.join("::")
}

/// A path from `from` back to `from`, if there is one.
fn cycle(graph: &BTreeMap<Module, BTreeSet<Module>>, from: &Module) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.clone()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        for next in graph.get(path.last().unwrap()).into_iter().flatten() {
            let mut p = path.clone();
            p.push(next.clone());
            if next == from {
                return Some(p.iter().map(name).collect());
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
    let edge = |a: &str, b: &str| {
        let split = |s: &str| s.split("::").map(str::to_string).collect::<Module>();
        graph.get(&split(a)).is_some_and(|t| t.contains(&split(b)))
    };
    // The check sees what it must: the pipeline's stages and the passes inside a folder.
    assert!(edge("validate", "model") && edge("emit", "model"));
    assert!(edge(
        "validate::structure::wiring",
        "validate::structure::placement"
    ));
    assert!(edge("validate::fields", "validate::unit"));
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_pipeline_runs_one_way() {
    let graph = graph();
    let reaches = |from: &str, to: &str| {
        let (from, to) = (vec![from.to_string()], vec![to.to_string()]);
        let mut stack = vec![from];
        let mut seen = BTreeSet::new();
        while let Some(m) = stack.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if *next == to {
                    return true;
                }
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        false
    };
    // parse -> validate -> model <- emit: the model knows no stage, parsing knows no later
    // stage, validation writes nothing.
    for (low, high) in [
        ("model", "parse"),
        ("model", "validate"),
        ("model", "emit"),
        ("parse", "validate"),
        ("parse", "emit"),
        ("validate", "emit"),
        ("validate", "output"),
        ("model", "naming"),
        ("naming", "parse"),
        ("naming", "validate"),
        ("naming", "emit"),
    ] {
        assert!(!reaches(low, high), "{low} must not depend on {high}");
    }
}

#[test]
fn comments_and_strings_name_no_module() {
    let code = code_only(
        "use crate::a; // crate::b\n/* crate::c */ let s = \"crate::d\"; let r = r#\"crate::e\"#; let c = '\"'; fn f<'a>(x: &'a crate::g) {}",
    );
    assert!(
        code.contains("crate::a") && code.contains("crate::g"),
        "{code}"
    );
    for gone in ["crate::b", "crate::c", "crate::d", "crate::e"] {
        assert!(!code.contains(gone), "{gone} in {code}");
    }
    let found = paths("{a::{b, c::d}, e}");
    assert_eq!(
        found,
        vec![
            vec!["a".to_string(), "b".to_string()],
            vec!["a".to_string(), "c".to_string(), "d".to_string()],
            vec!["e".to_string()],
        ]
    );
}

/// The names of the functions `code` (comments and strings left out) defines.
fn functions(code: &str) -> Vec<&str> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices("fn ")
        .filter(|&(i, _)| !code[..i].ends_with(is_ident))
        .map(|(i, _)| {
            let rest = &code[i + 3..];
            &rest[..rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len())]
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// A function name that says it converts case or wraps words.
fn is_case_or_wrap(name: &str) -> bool {
    ["case", "camel", "snake", "upper", "lower", "wrap"]
        .iter()
        .any(|w| name.contains(w))
}

/// Why `module`'s code breaks the naming rules, if it does: for every module, a case or wrap
/// function or a re-export of naming outside `naming`; for an emitter, also a case conversion
/// or an identifier helper of its own.
fn naming_breaches(module: &Module, code: &str) -> Vec<String> {
    if module.first().is_some_and(|m| m == "naming") {
        return Vec::new();
    }
    let mut out: Vec<String> = functions(code)
        .into_iter()
        .filter(|f| is_case_or_wrap(f))
        .map(|f| format!("defines `{f}`: case conversion and word wrapping belong in naming"))
        .collect();
    let flat: String = code.split_whitespace().collect();
    if flat.contains("pubusecrate::naming") || flat.contains("pubusesuper::naming") {
        out.push("re-exports naming: callers name `crate::naming` themselves".into());
    }
    if module.first().is_some_and(|m| m == "emit") {
        for call in [
            "to_ascii_uppercase",
            "to_ascii_lowercase",
            "to_uppercase",
            "to_lowercase",
            "make_ascii_uppercase",
            "make_ascii_lowercase",
        ] {
            if code.contains(&format!(".{call}(")) {
                out.push(format!("calls `{call}`: an emitter asks naming for a name"));
            }
        }
        for f in functions(code) {
            if f.ends_with("_ident") || f.contains("keyword") || f.ends_with("_type_name") {
                out.push(format!("defines `{f}`: identifiers are naming's"));
            }
        }
    }
    out
}

#[test]
fn naming_has_one_home() {
    let modules = modules();
    // The check sees what it must: naming's own rules, and the emitters that call them.
    let naming = code_only(&modules[&vec!["naming".to_string(), "case".to_string()]]);
    assert!(functions(&naming).contains(&"snake_case"));
    let layout = vec!["emit".to_string(), "layout".to_string()];
    assert!(code_only(&modules[&layout]).contains("naming::"));
    let main =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/main.rs")).unwrap();
    let breaches: Vec<String> = modules
        .iter()
        .chain([(&vec!["main".to_string()], &main)])
        .flat_map(|(m, text)| {
            naming_breaches(m, &code_only(text))
                .into_iter()
                .map(move |why| format!("{}: {why}", name(m)))
        })
        .collect();
    assert!(
        breaches.is_empty(),
        "naming rules broken:\n{}",
        breaches.join("\n")
    );
}

#[test]
fn a_breach_of_the_naming_rules_is_seen() {
    let emitter = vec!["emit".to_string(), "x".to_string()];
    let code = code_only(
        "fn wrap_words(t: &str) {} fn lower_name() {} pub fn fieldish_ident() {} \
         let s = n.to_ascii_uppercase(); let w = \"fn snake_case\"; pub use crate::naming::c;",
    );
    let found = naming_breaches(&emitter, &code);
    assert_eq!(found.len(), 5, "{found:?}");
    let validator = vec!["validate".to_string()];
    assert_eq!(naming_breaches(&validator, &code).len(), 3);
    assert!(naming_breaches(&vec!["naming".to_string()], &code).is_empty());
}
