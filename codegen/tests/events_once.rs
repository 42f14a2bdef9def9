//! Each event is stated once in the generated crate, and the package fits (issue 42).
//!
//! Parsed with `syn`: in every module codegen writes with an event table (a processor's
//! `core.rs`, a unit's module), an event's name is written once, in its row (`IDENT =
//! ev("NAME", ..)` inside `event_table!`), whose expansion makes the typed constant and its doc
//! from it; no `impl Event` writes an event constant of its own. And the files `cargo package
//! -p pmu-regs` takes (the generated manifest's `include`) stay within the 10 MiB unpacked
//! issue 42 asks for.

use std::collections::HashMap;
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::{ImplItem, Item};

/// How many times each text is written as a string literal in `tokens` or as a backticked
/// span inside one (a doc line's `` `NAME` ``), by its escaped text without quotes.
fn literal_counts(tokens: TokenStream, counts: &mut HashMap<String, usize>) {
    for t in tokens {
        match t {
            TokenTree::Group(g) => literal_counts(g.stream(), counts),
            TokenTree::Literal(l) => {
                let text = l.to_string();
                let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
                    continue;
                };
                *counts.entry(inner.to_string()).or_default() += 1;
                for span in inner.split('`').skip(1).step_by(2) {
                    *counts.entry(span.to_string()).or_default() += 1;
                }
            }
            _ => {}
        }
    }
}

/// The items of a module and of the modules inline in it (a unit's events are in
/// `mod unit_events { .. }`).
fn all_items(items: &[Item]) -> Vec<&Item> {
    let mut out = Vec::new();
    for item in items {
        out.push(item);
        if let Item::Mod(m) = item {
            if let Some((_, inner)) = &m.content {
                out.extend(all_items(inner));
            }
        }
    }
    out
}

/// Problems of one module: an event named other than once, or a constant written in an
/// `impl Event` rather than made from the rows. `None` where the module has no event table
/// of its own (it re-exports its source's `Event`).
fn check_module(at: &str, text: &str, events: &[codegen::model::Event]) -> Option<Vec<String>> {
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{at}: not Rust: {e}"));
    let items = all_items(&file.items);
    let has_table = items
        .iter()
        .any(|i| matches!(i, Item::Macro(m) if m.mac.path.is_ident("event_table")));
    if !has_table {
        return None;
    }
    let mut problems = Vec::new();
    for item in items {
        let Item::Impl(imp) = item else { continue };
        let ty = quote::ToTokens::to_token_stream(&imp.self_ty).to_string();
        for it in &imp.items {
            if let ImplItem::Const(c) = it {
                let cty = quote::ToTokens::to_token_stream(&c.ty).to_string();
                if ty == "Event" && cty == "Event" {
                    problems.push(format!("{at}: Event::{} is written out", c.ident));
                }
            }
        }
    }
    let mut counts = HashMap::new();
    literal_counts(quote::ToTokens::to_token_stream(&file), &mut counts);
    for e in events {
        let lit = codegen::emit::rust::lit(&e.name);
        let inner = &lit[1..lit.len() - 1];
        let n = counts.get(inner).copied().unwrap_or(0);
        if n != 1 {
            problems.push(format!("{at}: event {} written {n} times", e.name));
        }
    }
    Some(problems)
}

#[test]
fn each_event_is_written_once_in_its_row() {
    let spec_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let spec = codegen::load_spec(&spec_dir).expect("the spec loads");
    let (mut problems, mut tables, mut events) = (Vec::new(), 0, 0);
    for p in &spec.processors {
        if let (Some(core), Some(text)) = (
            &p.core_events,
            codegen::emit::core_events::processor_core_module(p),
        ) {
            let at = format!("{}/core.rs", p.module);
            if let Some(found) = check_module(&at, &text, &core.events) {
                (tables, events) = (tables + 1, events + core.events.len());
                problems.extend(found);
            }
        }
        for u in p.units.iter().filter(|u| !u.events.is_empty()) {
            let at = format!("{}/{}.rs", p.module, u.module);
            let text = codegen::emit::layout::unit_module_text(&spec, p, u);
            if let Some(found) = check_module(&at, &text, &u.events) {
                (tables, events) = (tables + 1, events + u.events.len());
                problems.extend(found);
            }
        }
    }
    assert!(
        tables > 100 && events > 15_000,
        "only {tables} tables of {events} events checked"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Bytes of the files under `dir` whose name ends in `.rs`.
fn rust_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            total += rust_bytes(&path);
        } else if path.extension().is_some_and(|e| e == "rs") {
            total += std::fs::metadata(&path).expect("a file's size").len();
        }
    }
    total
}

#[test]
fn the_package_is_at_most_10_mib_unpacked() {
    // What `include` takes: the manifest and src/**/*.rs (the layout tests run in the
    // repository, not in a user's build). cargo adds the original manifest beside its
    // normalised one (about the size of it) and a small VCS file: counted as the manifest
    // twice and 4 KiB.
    const BUDGET: u64 = 10 * 1024 * 1024;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the manifest");
    assert!(
        manifest.contains(r#"include = ["/Cargo.toml", "/src/**/*.rs"]"#),
        "the package's include changed: count what it takes here"
    );
    let bytes = rust_bytes(&root.join("src")) + 2 * manifest.len() as u64 + 4096;
    assert!(
        bytes <= BUDGET,
        "pmu-regs would package {bytes} bytes, above {BUDGET}: see docs/generated-crate.md (Publishing)"
    );
}
