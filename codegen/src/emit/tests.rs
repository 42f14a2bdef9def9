//! Property tests for the generated crate: one proptest per register layout that drives every
//! accessor through the public API and checks the three promises of a layout type:
//! set-then-get returns the value; setting one field changes no other bit; no setter sets a
//! reserved bit. Narrow fields also check that a too-wide value is refused.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::rust::{enum_ident, field_ident};
use crate::model::*;
use crate::validate::snake_case;

/// The whole `generated/tests/layouts.rs`.
pub fn layouts_test(spec: &Spec) -> TokenStream {
    let mut tests = Vec::new();
    for p in &spec.processors {
        for u in &p.units {
            for r in &u.registers {
                tests.push(register_test(p, u, r));
            }
        }
    }
    quote! {
        //! Properties of every generated register layout (emitted by codegen from the spec).
        #![allow(clippy::bool_assert_comparison, clippy::identity_op, clippy::unnecessary_cast, clippy::bad_bit_mask, clippy::erasing_op, unused_comparisons)]

        // Formatted by prettyplease; rustfmt must leave the cases alone.
        #[rustfmt::skip]
        mod cases {
            use proptest::prelude::*;
            use pmu_regs::Register;

            proptest! {
                // No regression files: they would land in generated/, which only codegen writes.
                #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
                #(#tests)*
            }
        }
    }
}

fn register_test(p: &Processor, u: &Unit, r: &Register) -> TokenStream {
    let pm = format_ident!("{}", p.module);
    let um = format_ident!("{}", u.module);
    let ty = format_ident!("{}", r.type_name);
    let path = quote!(pmu_regs::#pm::#um::#ty);
    let name = format_ident!("{}_{}_{}", p.module, u.module, snake_case(&r.type_name));
    let raw_ty = if r.width == 32 {
        quote!(u32)
    } else {
        quote!(u64)
    };
    let fields: Vec<&Field> = r
        .fields
        .iter()
        .filter(|f| !f.access.is_placeholder())
        .collect();
    let n = fields.len().max(1);
    let checks = fields
        .iter()
        .enumerate()
        .map(|(i, f)| field_check(r, f, i, &path, &raw_ty));
    quote! {
        #[test]
        fn #name(raw in any::<#raw_ty>(), vals in proptest::collection::vec(any::<u64>(), #n)) {
            type T = #path;
            let base = T::from_bits(raw);
            // from_bits never keeps a reserved bit, and try_from_bits agrees with the mask.
            prop_assert_eq!(base.bits() & T::RESERVED_MASK, 0);
            prop_assert_eq!(T::try_from_bits(raw).is_ok(), raw & T::RESERVED_MASK == 0);
            prop_assert_eq!(T::from_raw(raw as u64).to_raw(), base.bits() as u64);
            prop_assert_eq!(T::INFO.reserved_mask, T::RESERVED_MASK as u64);
            prop_assert_eq!(T::RESERVED_MASK & T::WRITABLE_MASK, 0);
            let _ = vals.len();
            #(#checks)*
        }
    }
}

fn field_check(
    r: &Register,
    f: &Field,
    i: usize,
    path: &TokenStream,
    raw_ty: &TokenStream,
) -> TokenStream {
    let _ = path;
    let get = format_ident!("{}", field_ident(f));
    let with = format_ident!("with_{}", field_ident(f));
    let try_with = format_ident!("try_with_{}", field_ident(f));
    let max = Literal::u64_unsuffixed(f.max());
    let lsb = f.lsb;
    let mask = Literal::u64_unsuffixed(f.mask());
    let width = f.width();
    let readable = f.access.is_readable();
    let writable = f.access.is_writable();

    if let Some(rep) = &f.repeat {
        let ew = rep.element_width;
        let count = rep.max_count;
        let emax = Literal::u64_unsuffixed(low_mask(ew));
        let (to_v, from_v) = if ew == 1 {
            (quote!(v != 0), quote!(x as u64))
        } else {
            let it = int_ty(ew);
            (quote!(v as #it), quote!(x as u64))
        };
        let read_check = if readable {
            quote!(prop_assert_eq!(w.#get(k), x);)
        } else {
            quote!()
        };
        return if writable {
            quote! {
                for k in 0..#count {
                    let v = vals[#i].rotate_left(k) & #emax;
                    let x = #to_v;
                    let w = base.#with(k, x);
                    let shift = #lsb + k * #ew;
                    prop_assert_eq!(((w.bits() as u64) >> shift) & #emax, #from_v);
                    #read_check
                    prop_assert_eq!((w.bits() as u64) & !(#emax << shift), (base.bits() as u64) & !(#emax << shift));
                    prop_assert_eq!(w.bits() & T::RESERVED_MASK, 0);
                }
            }
        } else {
            quote! {
                for k in 0..#count {
                    let shift = #lsb + k * #ew;
                    let v = ((base.bits() as u64) >> shift) & #emax;
                    prop_assert_eq!(base.#get(k), #to_v);
                }
            }
        };
    }

    // The value to set, in the accessor's type, and its raw field bits.
    let (make, as_bits) = if f.has_enum() {
        let e = format_ident!("{}", enum_ident(r, f));
        let pm_path = enum_path(path, &e);
        (
            quote!(let x = #pm_path::from_bits(v as u8);),
            quote!(x.bits() as u64),
        )
    } else if width == 1 {
        (quote!(let x = v != 0;), quote!(x as u64))
    } else {
        let it = int_ty(width);
        (quote!(let x = v as #it;), quote!(x as u64))
    };
    let mut out = quote! {
        let v = vals[#i] & #max;
        #make
    };
    if writable {
        let read_back = if readable {
            quote!(prop_assert_eq!(w.#get(), x);)
        } else {
            quote!()
        };
        out.extend(quote! {
            let w = base.#with(x);
            prop_assert_eq!(((w.bits() as u64) >> #lsb) & #max, #as_bits);
            #read_back
            prop_assert_eq!((w.bits() as u64) & !#mask, (base.bits() as u64) & !#mask);
            prop_assert_eq!(w.bits() & T::RESERVED_MASK, 0);
        });
        let it_bits = match width {
            0..=8 => 8,
            9..=16 => 16,
            17..=32 => 32,
            _ => 64,
        };
        if width > 1 && !f.has_enum() && it_bits != width {
            let it = int_ty(width);
            let too_wide = quote!(((#max as u64) + 1 + (vals[#i] % ((#it::MAX as u64) - (#max as u64)))) as #it);
            out.extend(quote! {
                let wide = #too_wide;
                let err = base.#try_with(wide).unwrap_err();
                prop_assert_eq!(err.value, wide as u64);
                prop_assert_eq!(err.width, #width);
                prop_assert_eq!(base.#try_with(x).unwrap(), w);
            });
        }
    } else if readable {
        out.extend(quote! {
            let _ = x;
            let field = ((base.bits() as u64) >> #lsb) & #max;
            let got = base.#get();
            let v = field;
            #make
            prop_assert_eq!(got, x);
        });
    }
    let _ = raw_ty;
    out
}

/// The enum lives in the same module as the layout type.
fn enum_path(layout_path: &TokenStream, e: &proc_macro2::Ident) -> TokenStream {
    let s = layout_path.to_string();
    let module = s.rsplit_once("::").map_or(s.as_str(), |(m, _)| m);
    let module: TokenStream = module.parse().expect("a path parses");
    quote!(#module::#e)
}

fn int_ty(width: u32) -> TokenStream {
    match width {
        0..=8 => quote!(u8),
        9..=16 => quote!(u16),
        17..=32 => quote!(u32),
        _ => quote!(u64),
    }
}
