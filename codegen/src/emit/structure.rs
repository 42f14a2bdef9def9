//! PMU structure emitter: each processor's `pmu.rs` (one `PmuInfo` static per unit with a
//! `<pmu>`, the processor's `GLOBAL`, and the role-trait impls of the layouts that play a
//! role), and the `role` suffix of a field line in the unit modules.
//!
//! Everything is resolved here to paths of generated items (`<Layout as Register>::INFO` and
//! its `fields[k]`), so the runtime never matches a name to find a register or field.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::rust::{inner_docs, outer_docs};
use crate::model::pmu::*;
use crate::model::{Field, Processor, Register, Unit};

/// An unsuffixed integer literal (`4`, not `4u32`).
fn num(v: u32) -> Literal {
    Literal::u32_unsuffixed(v)
}

/// ` role Enable [0, 1]` for a field with a role, `""` otherwise (see `register!`).
pub fn role_suffix(f: &Field) -> String {
    match &f.role {
        None => String::new(),
        Some(r) => format!(
            " role {} [{}]",
            r.role.variant(),
            r.counters
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The name of a unit's `PmuInfo` static in its processor's `pmu` module (`CBOX`).
fn pmu_static(unit: &Unit) -> proc_macro2::Ident {
    format_ident!("{}", unit.module.to_ascii_uppercase())
}

/// The `pmu` argument of a unit's `unit_info!`.
pub fn unit_pmu_ref(unit: &Unit) -> String {
    match unit.pmu {
        Some(_) => format!("Some(&super::pmu::{})", pmu_static(unit)),
        None => "None".into(),
    }
}

/// The `global` field of a processor's `ProcessorInfo`.
pub fn processor_global_ref(p: &Processor) -> TokenStream {
    if p.units
        .iter()
        .any(|u| u.pmu.as_ref().is_some_and(|m| m.global.is_some()))
    {
        quote!(Some(&pmu::GLOBAL))
    } else {
        quote!(None)
    }
}

fn layout(unit: &Unit, reg: &Register) -> TokenStream {
    let m = format_ident!("{}", unit.module);
    let t = format_ident!("{}", reg.type_name);
    quote!(super::#m::#t)
}

fn info(unit: &Unit, reg: &Register) -> TokenStream {
    let l = layout(unit, reg);
    quote!(<#l as crate::support::Register>::INFO)
}

fn field_ref(unit: &Unit, reg: &Register, field: usize) -> TokenStream {
    let i = info(unit, reg);
    let field = Literal::usize_unsuffixed(field);
    quote!(&#i.fields[#field])
}

fn reg_ref(unit: &Unit, r: RegIndex) -> TokenStream {
    let i = info(unit, &unit.registers[r.register]);
    let index = num(r.index);
    quote!(RegRef { register: #i, index: #index })
}

fn opt<T: quote::ToTokens>(v: Option<T>) -> TokenStream {
    match v {
        Some(v) => quote!(Some(#v)),
        None => quote!(None),
    }
}

fn bit_ref(p: &Processor, b: &BitRef) -> TokenStream {
    let unit = &p.units[b.unit];
    let reg = &unit.registers[b.register];
    let inst = &unit.instances[b.instance];
    let info = info(unit, reg);
    let field = field_ref(unit, reg, b.field);
    let name = reg.concrete_name(inst, b.index);
    let qualified = format!("{name}.{}", reg.fields[b.field].name);
    let (instance, index) = (&inst.name, num(b.index));
    quote!(BitRef {
        register: #info,
        instance: #instance,
        index: #index,
        field: #field,
        register_name: #name,
        qualified: #qualified,
    })
}

fn kind(k: CounterKind) -> TokenStream {
    match k {
        CounterKind::General => quote!(CounterKind::General),
        CounterKind::Fixed => quote!(CounterKind::Fixed),
        CounterKind::FreeRunning => quote!(CounterKind::FreeRunning),
    }
}

fn unit_static(p: &Processor, unit: &Unit, pmu: &Pmu) -> TokenStream {
    let name = pmu_static(unit);
    let regs = |list: &[usize]| {
        let items = list.iter().map(|&r| info(unit, &unit.registers[r]));
        quote!(&[#(#items),*])
    };
    let (controls, statuses, ovf) = (
        regs(&pmu.controls),
        regs(&pmu.statuses),
        regs(&pmu.overflow_clears),
    );
    let scope = match pmu.scope {
        Scope::Socket => quote!(Scope::Socket),
        Scope::Cpu => quote!(Scope::Cpu),
    };
    let counters = pmu.counters.iter().map(|c| {
        let (number, width) = (num(c.number), num(c.width));
        let kind = kind(c.kind);
        let width_cpuid = opt(c.width_cpuid.as_deref());
        let control = opt(c.control.map(|r| reg_ref(unit, r)));
        let counter = reg_ref(unit, c.counter);
        let alias = opt(c.alias.map(|r| reg_ref(unit, r)));
        let event = opt(c.event.as_deref());
        quote!(CounterInfo {
            number: #number,
            kind: #kind,
            width: #width,
            width_cpuid: #width_cpuid,
            control: #control,
            counter: #counter,
            alias: #alias,
            event: #event,
        })
    });
    let filters = pmu.filters.iter().map(|f| {
        let register = info(unit, &unit.registers[f.register]);
        let mask = opt(f.mask.map(|m| info(unit, &unit.registers[m])));
        let event = opt(f.event.map(Literal::u8_unsuffixed));
        let counters = f.counters.iter().map(|&c| num(c));
        let (ext, desc) = (f.event_ext, &f.description);
        quote!(FilterInfo {
            register: #register,
            mask: #mask,
            event: #event,
            event_ext: #ext,
            counters: &[#(#counters),*],
            description: #desc,
        })
    });
    let routes = pmu.routes.iter().map(|r| {
        let instances = r.instances.iter().map(|&i| &unit.instances[i].name);
        let counters = r.counters.iter().map(|&c| num(c));
        let hops = r.hops.iter().map(|h| {
            let bit = bit_ref(p, &h.bit);
            let clear = opt(h.clear.as_ref().map(|c| bit_ref(p, c)));
            quote!(Hop { bit: #bit, clear: #clear })
        });
        quote!(RouteInfo {
            instances: &[#(#instances),*],
            counters: &[#(#counters),*],
            hops: &[#(#hops),*],
        })
    });
    let notes = pmu.notes.iter().map(|n| {
        let (k, t, x) = (&n.kind, &n.title, &n.text);
        quote!(crate::support::NoteInfo { kind: #k, title: #t, text: #x })
    });
    let perf = pmu.perf.iter().map(|pf| {
        let (inst, name, counters, source) = (
            &unit.instances[pf.instance].name,
            &pf.pmu,
            &pf.counters,
            &pf.source,
        );
        let driver = perf_driver_static(&pf.driver);
        quote!(PerfInfo { instance: #inst, pmu: #name, counters: &[#(#counters),*], source: #source, driver: &#driver })
    });
    let (proc_id, unit_name) = (&p.id, &unit.name);
    let mut doc = format!(
        "PMU structure of the {} ({} counters per box; boxes {}).",
        unit.title.replace(['[', ']', '<', '>', '`', '*'], ""),
        pmu.counters.len(),
        unit.instances
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for n in &pmu.notes {
        doc.push_str(&format!(
            "\n\n**{}** ({}): {}",
            n.title,
            n.kind,
            n.text.replace(['[', ']', '<', '>', '`', '*'], "")
        ));
    }
    let doc = outer_docs(&doc);
    quote! {
        #doc
        pub static #name: PmuInfo = PmuInfo {
            processor: #proc_id,
            unit: #unit_name,
            scope: #scope,
            controls: #controls,
            statuses: #statuses,
            overflow_clears: #ovf,
            counters: &[#(#counters),*],
            filters: &[#(#filters),*],
            routes: &[#(#routes),*],
            perf: &[#(#perf),*],
            notes: &[#(#notes),*],
        };
    }
}

/// The name of a perf driver's static in a processor's `pmu` module (`PERF_SNBEP_GENERIC`).
fn perf_driver_static(d: &PerfDriver) -> proc_macro2::Ident {
    format_ident!("PERF_{}", d.id.to_ascii_uppercase().replace('-', "_"))
}

/// The perf drivers a processor's units name, each once, as statics.
fn perf_drivers(p: &Processor) -> TokenStream {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = TokenStream::new();
    let used = p
        .units
        .iter()
        .filter_map(|u| u.pmu.as_ref())
        .flat_map(|m| m.perf.iter().map(|pf| &pf.driver));
    for d in used {
        if seen.contains(&d.id.as_str()) {
            continue;
        }
        seen.push(&d.id);
        let name = perf_driver_static(d);
        let (id, module, group, source, title) =
            (&d.id, &d.module, &d.group, &d.source, &d.source_title);
        let formats = d.formats.iter().map(|f| {
            let (n, c) = (&f.name, &f.config);
            let (role, field, register, unmapped) = match &f.target {
                FormatTarget::Role(r) => {
                    let v = format_ident!("{}", r.variant());
                    (quote!(Some(Role::#v)), quote!(None), quote!(None), quote!(None))
                }
                FormatTarget::Field(x) => (quote!(None), quote!(Some(#x)), quote!(None), quote!(None)),
                FormatTarget::Register(x) => (quote!(None), quote!(None), quote!(Some(#x)), quote!(None)),
                FormatTarget::Unmapped(x) => (quote!(None), quote!(None), quote!(None), quote!(Some(#x))),
            };
            quote!(PerfFormatInfo { name: #n, config: #c, role: #role, field: #field, register: #register, unmapped: #unmapped })
        });
        let doc = outer_docs(&format!(
            "The `{}` perf driver's format (`{}`, {}).",
            d.id, d.group, d.source_title
        ));
        out.extend(quote! {
            #doc
            pub static #name: PerfDriverInfo = PerfDriverInfo {
                id: #id,
                module: #module,
                group: #group,
                source: #source,
                source_title: #title,
                formats: &[#(#formats),*],
            };
        });
    }
    out
}

/// The role traits a unit's layouts implement.
fn role_impls(unit: &Unit, pmu: &Pmu) -> TokenStream {
    let mut out = TokenStream::new();
    // A field of `reg` serving every counter of the register with `role`.
    let field = |reg: &Register, role: Role| -> Option<usize> {
        reg.fields.iter().position(|f| {
            f.role
                .as_ref()
                .is_some_and(|r| r.role == role && r.counters.is_empty())
        })
    };
    let mut controls: Vec<usize> = pmu
        .counters
        .iter()
        .filter_map(|c| c.control.map(|k| k.register))
        .collect();
    controls.dedup();
    for ri in controls {
        let reg = &unit.registers[ri];
        let (Some(en), Some(ev)) = (field(reg, Role::Enable), field(reg, Role::Event)) else {
            continue;
        };
        let l = layout(unit, reg);
        let f = |i: usize| field_ref(unit, reg, i);
        let o = |role| opt(field(reg, role).map(f));
        let (en, ev) = (f(en), f(ev));
        let (umask, ext, thr, inv, edge, ovf) = (
            o(Role::Umask),
            o(Role::EventExt),
            o(Role::Threshold),
            o(Role::Invert),
            o(Role::Edge),
            o(Role::OverflowEnable),
        );
        out.extend(quote! {
            impl CounterControl for #l {
                const ENABLE: &'static crate::support::FieldInfo = #en;
                const EVENT: &'static crate::support::FieldInfo = #ev;
                const UMASK: Option<&'static crate::support::FieldInfo> = #umask;
                const EVENT_EXT: Option<&'static crate::support::FieldInfo> = #ext;
                const THRESHOLD: Option<&'static crate::support::FieldInfo> = #thr;
                const INVERT: Option<&'static crate::support::FieldInfo> = #inv;
                const EDGE: Option<&'static crate::support::FieldInfo> = #edge;
                const OVERFLOW_ENABLE: Option<&'static crate::support::FieldInfo> = #ovf;
            }
        });
    }
    let mut counters: Vec<usize> = pmu.counters.iter().map(|c| c.counter.register).collect();
    counters.sort_unstable();
    counters.dedup();
    for ri in counters {
        let reg = &unit.registers[ri];
        let Some(c) = field(reg, Role::Count) else {
            continue;
        };
        let l = layout(unit, reg);
        let c = field_ref(unit, reg, c);
        out.extend(quote! {
            impl CounterValue for #l {
                const COUNT: &'static crate::support::FieldInfo = #c;
            }
        });
    }
    for &ri in &pmu.controls {
        let reg = &unit.registers[ri];
        let roles = [
            Role::Freeze,
            Role::FreezeEnable,
            Role::ResetCounters,
            Role::ResetControls,
        ];
        if roles.iter().all(|&r| field(reg, r).is_none()) {
            continue;
        }
        let l = layout(unit, reg);
        let [fr, fe, rc, rl] = roles.map(|r| opt(field(reg, r).map(|i| field_ref(unit, reg, i))));
        out.extend(quote! {
            impl BoxControl for #l {
                const FREEZE: Option<&'static crate::support::FieldInfo> = #fr;
                const FREEZE_ENABLE: Option<&'static crate::support::FieldInfo> = #fe;
                const RESET_COUNTERS: Option<&'static crate::support::FieldInfo> = #rc;
                const RESET_CONTROLS: Option<&'static crate::support::FieldInfo> = #rl;
            }
        });
    }
    out
}

/// A processor's `pmu` module.
pub fn processor_pmu(p: &Processor) -> TokenStream {
    let doc = inner_docs(&format!(
        "PMU structure of the {}: one `PmuInfo` per unit that declares one, the global level, \
         and the role traits its layouts implement. See `crate::structure`.",
        p.name
    ));
    let mut items = TokenStream::new();
    for unit in &p.units {
        let Some(pmu) = &unit.pmu else { continue };
        items.extend(unit_static(p, unit, pmu));
        items.extend(role_impls(unit, pmu));
        if let Some(g) = &pmu.global {
            let inst = &unit.instances[0].name;
            let unit_name = &unit.name;
            let control = info(unit, &unit.registers[g.control]);
            let status = info(unit, &unit.registers[g.status]);
            let ovf = opt(g.overflow_clear.map(|o| info(unit, &unit.registers[o])));
            items.extend(quote! {
                /// The level above every box: global control, status and overflow clear.
                pub static GLOBAL: GlobalInfo = GlobalInfo {
                    unit: #unit_name,
                    instance: #inst,
                    control: #control,
                    status: #status,
                    overflow_clear: #ovf,
                };
            });
        }
    }
    items.extend(perf_drivers(p));
    let uses = if items.is_empty() {
        quote!()
    } else {
        quote!(
            use crate::structure::*;
        )
    };
    quote! {
        #doc
        #uses
        #items
    }
}
