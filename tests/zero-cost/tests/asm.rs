//! The generated accessors cost nothing: built in release mode, each function of
//! `zero_cost` that uses them compiles to the same instructions as its hand-written twin.
//!
//! The crate is compiled with `cargo rustc --release -- --emit asm -C codegen-units=1` into a
//! target directory of its own (`target/zero-cost-asm`), so the inner cargo never waits for the
//! build lock the outer `cargo test` holds. The bodies compared are the instructions between
//! a function's label and its end (`.cfi_endproc`, `.size` or `.Lfunc_end`), without labels,
//! directives or comments, and with local label numbers (`.LBB3_2`) made function-independent.
//!
//! When the two functions are identical already in LLVM IR, LLVM's MergeFunctions pass emits
//! one body and makes the other symbol an alias of it (`handwritten = generated`); the test
//! follows aliases, so that case passes as the strongest form of "identical".

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// (generated, hand-written) function pairs of the `zero_cost` crate.
const PAIRS: [(&str, &str); 2] = [
    ("generated_evtsel", "handwritten_evtsel"),
    ("generated_umask", "handwritten_umask"),
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists")
}

/// Builds the crate with `--emit asm` and returns the newest `zero_cost-*.s`.
fn emit_asm() -> PathBuf {
    let root = workspace_root();
    let target = root.join("target").join("zero-cost-asm");
    // Cargo sets CARGO for the tests it runs: the same cargo, whatever PATH says.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "rustc",
            "--release",
            "-p",
            "zero-cost",
            "--lib",
            "--manifest-path",
        ])
        .arg(root.join("Cargo.toml"))
        .args(["--", "--emit", "asm", "-C", "codegen-units=1"])
        .output()
        .unwrap_or_else(|e| panic!("could not run {cargo:?}: {e}"));
    assert!(
        output.status.success(),
        "cargo rustc --emit asm failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let deps = target.join("release").join("deps");
    let newest = std::fs::read_dir(&deps)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", deps.display()))
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("zero_cost-") && name.ends_with(".s")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p);
    newest.unwrap_or_else(|| panic!("no zero_cost-*.s under {}", deps.display()))
}

/// A line without its comment. `#` starts one only on x86 (elsewhere it marks an immediate).
fn strip_comment(line: &str) -> &str {
    let mut end = line.len();
    let markers: &[&str] = if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        &["#", "//"]
    } else {
        &["//", ";"]
    };
    for m in markers {
        if let Some(i) = line.find(m) {
            end = end.min(i);
        }
    }
    line[..end].trim()
}

/// `.LBB3_2` -> `.LBB_2`, `.LCPI1_0` -> `.LCPI_0`: local labels are numbered per function.
fn normalize(instr: &str) -> String {
    let mut out = instr.split_whitespace().collect::<Vec<_>>().join(" ");
    for prefix in ["LBB", "LCPI", "LJTI"] {
        let mut result = String::new();
        let mut rest = out.as_str();
        while let Some(i) = rest.find(prefix) {
            let after = &rest[i + prefix.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            result.push_str(&rest[..i + prefix.len()]);
            if digits > 0 && after[digits..].starts_with('_') {
                rest = &after[digits..];
            } else {
                rest = after;
            }
        }
        result.push_str(rest);
        out = result;
    }
    out
}

/// The functions of an assembly listing: instruction bodies by label, and aliases.
struct Listing {
    bodies: HashMap<String, Vec<String>>,
    aliases: HashMap<String, String>,
}

fn parse(asm: &str) -> Listing {
    let mut bodies: HashMap<String, Vec<String>> = HashMap::new();
    let mut aliases = HashMap::new();
    let mut current: Option<String> = None;
    for raw in asm.lines() {
        let line = strip_comment(raw);
        if line.is_empty() {
            continue;
        }
        // `sym = target` (ELF) or `.set sym, target`: an alias, no body of its own.
        if let Some((sym, target)) = line
            .split_once(" = ")
            .or_else(|| line.strip_prefix(".set ")?.split_once(','))
        {
            aliases.insert(sym.trim().to_string(), target.trim().to_string());
            continue;
        }
        if line == ".cfi_endproc" || line.starts_with(".size") {
            current = None;
            continue;
        }
        if let Some(label) = line.strip_suffix(':') {
            if !label.contains(char::is_whitespace) {
                if label.starts_with(".Lfunc_end") {
                    current = None;
                } else if !label.starts_with('.') && !label.starts_with('L') {
                    // A global label starts a function; local ones (.LBB0_1) only a block.
                    bodies.entry(label.to_string()).or_default();
                    current = Some(label.to_string());
                }
                continue;
            }
        }
        if line.starts_with('.') {
            continue; // a directive
        }
        if let Some(f) = &current {
            if let Some(body) = bodies.get_mut(f) {
                body.push(normalize(line));
            }
        }
    }
    Listing { bodies, aliases }
}

/// Whether `symbol` is the (possibly mangled) symbol of function `name`: `name`, `_name`, or a
/// mangled path with the component `<len><name>` (`_ZN9zero_cost16generated_evtsel17h..E`).
fn names(symbol: &str, name: &str) -> bool {
    if symbol == name || symbol.strip_prefix('_') == Some(name) {
        return true;
    }
    let component = format!("{}{}", name.len(), name);
    symbol.match_indices(&component).any(|(i, _)| {
        !symbol[..i].ends_with(|c: char| c.is_ascii_digit())
            && !symbol[i + component.len()..].starts_with(|c: char| c.is_ascii_alphabetic())
    })
}

impl Listing {
    /// The symbol of function `name`: exactly one must match.
    fn symbol(&self, name: &str) -> String {
        let found: Vec<&String> = self
            .bodies
            .keys()
            .chain(self.aliases.keys())
            .filter(|s| names(s, name))
            .collect();
        assert_eq!(
            found.len(),
            1,
            "expected one symbol for {name} in the assembly, found {found:?}"
        );
        found[0].clone()
    }

    /// Follows aliases to the symbol with the body.
    fn resolve(&self, mut symbol: String) -> String {
        for _ in 0..16 {
            match self.aliases.get(&symbol) {
                Some(target) => symbol = target.clone(),
                None => break,
            }
        }
        symbol
    }

    fn body(&self, symbol: &str) -> &[String] {
        let body = self
            .bodies
            .get(symbol)
            .unwrap_or_else(|| panic!("no body for {symbol} in the assembly"));
        assert!(!body.is_empty(), "the body of {symbol} has no instructions");
        body
    }
}

#[test]
fn generated_accessors_compile_to_the_same_instructions_as_hand_written_code() {
    let path = emit_asm();
    let asm = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let listing = parse(&asm);
    let show = |b: &[String]| b.iter().map(|l| format!("    {l}\n")).collect::<String>();
    let mut failures = Vec::new();
    for (generated, handwritten) in PAIRS {
        let g = listing.resolve(listing.symbol(generated));
        let h = listing.resolve(listing.symbol(handwritten));
        let (gb, hb) = (listing.body(&g), listing.body(&h));
        if g == h {
            println!("{handwritten} is an alias of {generated} (LLVM merged identical IR):");
        } else {
            println!("{generated} and {handwritten} have separate bodies:");
        }
        print!("{}", show(gb));
        if gb != hb {
            failures.push(format!(
                "{generated} and {handwritten} compile differently:\n  {generated}:\n{}  {handwritten}:\n{}",
                show(gb),
                show(hb)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "listing {}:\n{}",
        path.display(),
        failures.join("\n")
    );
}

#[test]
fn the_parser_finds_bodies_and_follows_aliases() {
    let asm = "\
\t.globl\t_ZN9zero_cost3foo17habcE
_ZN9zero_cost3foo17habcE:
\t.cfi_startproc
\ttestl\t%edi, %edi  # a comment
\tje\t.LBB0_2
.LBB0_2:
\tretq
.Lfunc_end0:
\t.size\t_ZN9zero_cost3foo17habcE, .Lfunc_end0-_ZN9zero_cost3foo17habcE
\t.cfi_endproc
_ZN9zero_cost4foo217habcE = _ZN9zero_cost3foo17habcE
";
    let l = parse(asm);
    let foo = l.symbol("foo");
    assert_eq!(foo, "_ZN9zero_cost3foo17habcE");
    let body = l.body(&foo);
    if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        assert_eq!(body, ["testl %edi, %edi", "je .LBB_2", "retq"]);
    }
    assert_eq!(l.resolve(l.symbol("foo2")), foo);
    // `13foo0123456789` is a 13-character name that merely contains `3foo`.
    assert!(!names("_ZN9zero_cost13foo0123456789E", "foo"));
    assert!(names("_foo", "foo"));
}
