//! Each field's position is stated once per kind of item (issue 42): in the generated Rust of
//! every unit, parsed with `syn`, a field's bits appear in at most two items, its position
//! constant (`WEvtSel::THRESH_BITS`, which its getter and builders read) and its `FieldInfo` row,
//! and no accessor holds an integer literal of its own.
//!
//! The fields and their bits come from the spec (the model `load_spec` reads), the items from
//! the emitter's output; an item "states" a field's position when it is named for the field
//! (its accessors `thresh`, `with_thresh`, `try_with_thresh`, its constant `THRESH_BITS`, its row
//! with `ident: "thresh"`) and holds the field's `lsb` or `msb` as an integer literal, or says
//! `bits 31:24` (`bit 9`) in its doc besides the field's description.

use std::path::Path;

use codegen::model::{Field, Register};
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;

/// One item of a unit module that can state a field's position.
struct Piece {
    /// Its name: an accessor's, a constant's, or a `FieldInfo` row's `ident`.
    name: String,
    /// Whether it is a function (an accessor).
    is_fn: bool,
    /// The integer literals in its code.
    ints: Vec<u64>,
    /// Its doc text.
    doc: String,
}

fn ints(tokens: TokenStream, out: &mut Vec<u64>) {
    for t in tokens {
        match t {
            TokenTree::Group(g) => ints(g.stream(), out),
            TokenTree::Literal(l) => {
                if let Ok(i) = syn::parse_str::<syn::LitInt>(&l.to_string()) {
                    out.push(
                        i.base10_parse::<u64>()
                            .expect("an integer literal fits in u64"),
                    );
                }
            }
            _ => {}
        }
    }
}

fn doc_of(attrs: &[syn::Attribute]) -> String {
    let mut doc = String::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &a.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                doc.push_str(&s.value());
                doc.push('\n');
            }
        }
    }
    doc
}

fn piece(name: String, is_fn: bool, attrs: &[syn::Attribute], code: TokenStream) -> Piece {
    let mut found = Vec::new();
    ints(code, &mut found);
    Piece {
        name,
        is_fn,
        ints: found,
        doc: doc_of(attrs),
    }
}

/// The type an `impl` is for: `WEvtSel` of `impl WEvtSel` or of `impl Layout for WEvtSel`.
fn self_ty(i: &syn::ItemImpl) -> String {
    match &*i.self_ty {
        syn::Type::Path(p) => p.path.segments.last().unwrap().ident.to_string(),
        other => other.to_token_stream().to_string(),
    }
}

/// The pieces of one register in a parsed unit module: the items of its inherent impl, each
/// `FieldInfo` row of its layout, and every other item of the module as a whole.
fn pieces(file: &syn::File, type_name: &str) -> Vec<Piece> {
    let layout = format!("{type_name}Layout");
    let mut out = Vec::new();
    for item in &file.items {
        match item {
            syn::Item::Impl(i) if i.trait_.is_none() && self_ty(i) == type_name => {
                for ii in &i.items {
                    match ii {
                        syn::ImplItem::Fn(f) => out.push(piece(
                            f.sig.ident.to_string(),
                            true,
                            &f.attrs,
                            f.block.to_token_stream(),
                        )),
                        syn::ImplItem::Const(c) => out.push(piece(
                            c.ident.to_string(),
                            false,
                            &c.attrs,
                            c.expr.to_token_stream(),
                        )),
                        other => panic!("{type_name}: unexpected item {}", other.to_token_stream()),
                    }
                }
            }
            syn::Item::Impl(i) if i.trait_.is_some() && self_ty(i) == layout => {
                out.extend(field_rows(i));
            }
            _ => {}
        }
    }
    out
}

/// Each `FieldInfo { .. }` row of a layout's `FIELDS`, named by its `ident`.
fn field_rows(layout: &syn::ItemImpl) -> Vec<Piece> {
    let mut out = Vec::new();
    for ii in &layout.items {
        let syn::ImplItem::Const(c) = ii else {
            continue;
        };
        if c.ident != "FIELDS" {
            continue;
        }
        let syn::Expr::Reference(r) = &c.expr else {
            panic!("FIELDS is a reference to an array")
        };
        let syn::Expr::Array(rows) = &*r.expr else {
            panic!("FIELDS is a reference to an array")
        };
        for row in &rows.elems {
            // `FieldInfo::row("frz", 8, 8, Access::Rw, "...")`: its first argument is its ident.
            if let syn::Expr::Call(call) = row {
                let Some(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(name),
                    ..
                })) = call.args.first()
                else {
                    panic!("a FieldInfo::row's first argument is its name")
                };
                out.push(piece(name.value(), false, &[], call.to_token_stream()));
                continue;
            }
            let syn::Expr::Struct(s) = row else {
                panic!("a FieldInfo row")
            };
            let ident = s
                .fields
                .iter()
                .find(|f| f.member.to_token_stream().to_string() == "ident")
                .map(|f| match &f.expr {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => s.value(),
                    _ => panic!("a FieldInfo's ident is a string"),
                })
                .expect("a FieldInfo row has an ident");
            out.push(piece(ident, false, &[], s.to_token_stream()));
        }
    }
    out
}

/// The names of a field's items: its accessors, its constant, its row.
fn named_for(f: &Field, name: &str) -> bool {
    let id = codegen::naming::rust::field_ident(f);
    [
        id.clone(),
        format!("with_{id}"),
        format!("try_with_{id}"),
        codegen::naming::rust::field_bits_ident(f),
    ]
    .contains(&name.to_string())
}

/// Whether a piece states where `f` lies: its bits as a literal, or `bits 31:24` in its doc.
fn states_position(f: &Field, p: &Piece) -> bool {
    let bounds: Vec<u64> = f
        .ranges()
        .iter()
        .flat_map(|r| [u64::from(r.lsb), u64::from(r.msb)])
        .collect();
    p.ints.iter().any(|i| bounds.contains(i)) || own_words(f, &p.doc).contains(&f.bits_phrase())
}

/// A doc without the field's description from the spec, which may itself name bits (`Linux
/// sets bit 22`): what codegen adds to it. Spaces and line breaks count as one space.
fn own_words(f: &Field, doc: &str) -> String {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let description = words(f.shown_description());
    words(doc).replace(&description, "")
}

/// The problems of one register: a field stated in more than two items, in none, or an
/// accessor holding a literal.
fn check(reg: &Register, file: &syn::File, where_: &str) -> Vec<String> {
    let pieces = pieces(file, &reg.type_name);
    let mut problems = Vec::new();
    for p in pieces.iter().filter(|p| p.is_fn && !p.ints.is_empty()) {
        problems.push(format!(
            "{where_}: {}::{} holds the literal(s) {:?}",
            reg.type_name, p.name, p.ints
        ));
    }
    for f in reg.fields.iter().filter(|f| !f.access.is_placeholder()) {
        let stating: Vec<&str> = pieces
            .iter()
            .filter(|p| named_for(f, &p.name) && states_position(f, p))
            .map(|p| p.name.as_str())
            .collect();
        if stating.is_empty() || stating.len() > 2 {
            problems.push(format!(
                "{where_}: {}.{} ({}) is stated in {} items: {stating:?}",
                reg.type_name,
                f.name,
                f.bits_phrase(),
                stating.len()
            ));
        }
    }
    problems
}

#[test]
fn each_field_position_is_stated_in_at_most_two_items() {
    let spec_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let spec = codegen::load_spec(&spec_dir).expect("the spec loads");
    let (mut problems, mut fields) = (Vec::new(), 0);
    for p in spec.processors.iter().filter(|p| p.units_from.is_none()) {
        for u in &p.units {
            let text = codegen::emit::layout::unit_module_text(&spec, p, u);
            let file = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}/{}: not Rust: {e}", p.module, u.module));
            let at = format!("{}/{}.rs", p.module, u.module);
            for reg in &u.registers {
                fields += reg
                    .fields
                    .iter()
                    .filter(|f| !f.access.is_placeholder())
                    .count();
                problems.extend(check(reg, &file, &at));
            }
        }
    }
    // Thousands of fields across the processors: the check ran over the real spec.
    assert!(fields > 1000, "only {fields} fields checked");
    assert!(
        problems.is_empty(),
        "{} problems, the first:\n{}",
        problems.len(),
        problems
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The check finds the shape the crate had before (a field's bits in its getter, its builder,
/// its `try_` builder and its row): it can fail.
#[test]
fn the_check_catches_positions_repeated_in_accessors() {
    let spec_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let spec = codegen::load_spec(&spec_dir).expect("the spec loads");
    let wbox = spec
        .processors
        .iter()
        .find(|p| p.id == "xeon-7500")
        .and_then(|p| p.units.iter().find(|u| u.module == "wbox"))
        .expect("xeon-7500 has a W-box");
    let reg = wbox
        .registers
        .iter()
        .find(|r| r.type_name == "WGlobalCtl")
        .expect("the W-box has W_MSR_PMON_GLOBAL_CTL");
    // `ctr_en` of W_MSR_PMON_GLOBAL_CTL, bits 3:0 in the spec, written the way it was emitted.
    let old = r#"
        impl Layout for WGlobalCtlLayout {
            const FIELDS: &'static [FieldInfo] = &[
                FieldInfo { name: "ctr_en", ident: "ctr_en", lsb: 0, msb: 3, ..FieldInfo::EMPTY },
            ];
        }
        impl WGlobalCtl {
            /// `ctr_en` (bits 3:0, rw, reset 0x0): Per-counter enable.
            pub const fn ctr_en(self) -> u8 { get_bits(self.raw64(), 3, 0) as u8 }
            pub const fn with_ctr_en(self, v: u8) -> Self { self.with_raw64(set_bits(self.raw64(), 3, 0, v as u64)) }
        }
    "#;
    let problems = check(reg, &syn::parse_file(old).unwrap(), "old shape");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("ctr_en") && p.contains("3 items")),
        "{problems:?}"
    );
    assert!(problems.iter().any(|p| p.contains("holds the literal")));
}
