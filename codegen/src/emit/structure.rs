//! PMU structure emitter: each processor's `pmu.rs` (one `PmuInfo` static per unit with a
//! `<pmu>`, the processor's `GLOBAL`, the role-trait impls of the layouts that play a role,
//! and the perf drivers' formats), and the `pmu` argument of a unit's `unit_info!`.
//!
//! Everything is resolved here to generated items, so the runtime never matches a name to
//! find a register or field: a register is its layout's `X::INFO`, and each field the
//! structure refers to gets a named constant (`C_EVT_SEL_EN`) that the role impls and the
//! overflow bits use. The constants look the field up by name at compile time, so a reader
//! sees which field is meant and a wrong name stops the build.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::rust::{inner_docs, outer_docs};
use crate::model::pmu::*;
use crate::model::{Processor, Register, Unit};
use crate::naming::rust::{
    bit_const_ident, field_const_ident, info_ident, perf_driver_ident, pmu_static_ident,
    shared_perf_ident,
};
use crate::naming::wrap::wrap;

/// An unsuffixed integer literal (`4`, not `4u32`).
fn num(v: u32) -> Literal {
    Literal::u32_unsuffixed(v)
}

/// The name of a unit's `PmuInfo` static in its processor's `pmu` module (`CBOX`).
fn pmu_static(unit: &Unit) -> Ident {
    format_ident!("{}", pmu_static_ident(&unit.module))
}

/// The `pmu` argument of a unit's `unit_info!`.
pub fn unit_pmu_ref(unit: &Unit) -> String {
    match unit.pmu {
        Some(_) => format!("Some(&super::pmu::{})", pmu_static(unit)),
        None => "None".into(),
    }
}

fn opt<T: quote::ToTokens>(v: Option<T>) -> TokenStream {
    match v {
        Some(v) => quote!(Some(#v)),
        None => quote!(None),
    }
}

/// A field of a register of a unit: (unit, register, field) positions.
type FieldKey = (usize, usize, usize);

/// How a processor's `pmu.rs` names the layouts and fields it refers to.
struct Names<'a> {
    p: &'a Processor,
    /// Layout type names used by more than one unit of the processor: these are written with
    /// their module path, the others imported.
    shared_types: BTreeSet<&'a str>,
}

impl<'a> Names<'a> {
    fn new(p: &'a Processor) -> Self {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (ui, u) in p.units.iter().enumerate() {
            for r in &u.registers {
                if *seen.entry(&r.type_name).or_insert(ui) != ui {
                    seen.insert(&r.type_name, usize::MAX);
                }
            }
        }
        let shared_types = seen
            .into_iter()
            .filter(|&(_, u)| u == usize::MAX)
            .map(|(t, _)| t)
            .collect();
        Self { p, shared_types }
    }

    /// The layout type of register `r` of unit `u`, as the module refers to it.
    fn layout(&self, u: usize, r: usize) -> TokenStream {
        let unit = &self.p.units[u];
        let t = format_ident!("{}", unit.registers[r].type_name);
        if self
            .shared_types
            .contains(unit.registers[r].type_name.as_str())
        {
            let m = format_ident!("{}", unit.module);
            quote!(super::#m::#t)
        } else {
            quote!(#t)
        }
    }

    /// `X::INFO` of register `r` of unit `u`. A processor that takes its units from another
    /// (`units-from`) shares that one's layouts, whose `INFO` names the other processor: its
    /// structure refers to its units' own metadata statics instead.
    fn info(&self, u: usize, r: usize) -> TokenStream {
        if self.p.units_from.is_some() {
            let path = self.info_static(u, r);
            return quote!(&#path);
        }
        let l = self.layout(u, r);
        quote!(#l::INFO)
    }

    /// The register's metadata as a method receiver (`X::INFO.at(0)`,
    /// `super::cha::CHA_CTL_INFO.at(0)`).
    fn info_receiver(&self, u: usize, r: usize) -> TokenStream {
        if self.p.units_from.is_some() {
            self.info_static(u, r)
        } else {
            self.info(u, r)
        }
    }

    /// The metadata static of register `r` of unit `u` in its unit module: imported (see
    /// [`imports`]), or by path when several units share the register's type name.
    fn info_static(&self, u: usize, r: usize) -> TokenStream {
        let unit = &self.p.units[u];
        let reg = &unit.registers[r];
        let info = format_ident!("{}", info_ident(reg));
        if self.shared_types.contains(reg.type_name.as_str()) {
            let m = format_ident!("{}", unit.module);
            quote!(super::#m::#info)
        } else {
            quote!(#info)
        }
    }

    /// The named constant of a field (`S_SUMMARY_OV_MB`).
    fn field(&self, (u, r, f): FieldKey) -> Ident {
        let unit = &self.p.units[u];
        let reg = &unit.registers[r];
        let shared = self.shared_types.contains(reg.type_name.as_str());
        let module = shared.then_some(unit.module.as_str());
        format_ident!("{}", field_const_ident(reg, &reg.fields[f], module))
    }

    /// The named constant of an overflow bit (`S0_MSR_PMON_SUMMARY_OV_MB`).
    fn bit(&self, b: &BitRef) -> Ident {
        let unit = &self.p.units[b.unit];
        let reg = &unit.registers[b.register];
        let name = reg.concrete_name(&unit.instances[b.instance], b.index);
        format_ident!("{}", bit_const_ident(&name, &reg.fields[b.field]))
    }
}

/// The field of `reg` playing `role` for every counter of the register (one that names no
/// counters), if it has one.
fn role_field(reg: &Register, role: Role) -> Option<usize> {
    reg.fields.iter().position(|f| {
        f.role
            .as_ref()
            .is_some_and(|r| r.role == role && r.counters.is_empty())
    })
}

/// The roles of a counter control's `CounterControl` consts, required ones first.
const CONTROL_ROLES: [(&str, Role); 8] = [
    ("ENABLE", Role::Enable),
    ("EVENT", Role::Event),
    ("UMASK", Role::Umask),
    ("EVENT_EXT", Role::EventExt),
    ("THRESHOLD", Role::Threshold),
    ("INVERT", Role::Invert),
    ("EDGE", Role::Edge),
    ("OVERFLOW_ENABLE", Role::OverflowEnable),
];

/// The roles of a box control's `BoxControl` consts.
const BOX_ROLES: [(&str, Role); 4] = [
    ("FREEZE", Role::Freeze),
    ("FREEZE_ENABLE", Role::FreezeEnable),
    ("RESET_COUNTERS", Role::ResetCounters),
    ("RESET_CONTROLS", Role::ResetControls),
];

/// A role trait a layout implements: the trait, the layout's register, and per const its
/// name and field (`None`: the layout lacks the role).
struct RoleImpl {
    trait_name: &'static str,
    register: usize,
    /// Consts that must name a field; the rest are `Option`s.
    required: usize,
    consts: Vec<(&'static str, Option<usize>)>,
}

/// The role traits a unit's layouts implement.
fn role_impls(unit: &Unit, pmu: &Pmu) -> Vec<RoleImpl> {
    let mut out = Vec::new();
    let mut controls: Vec<usize> = pmu
        .counters
        .iter()
        .filter_map(|c| c.control.map(|k| k.register))
        .collect();
    controls.dedup();
    for ri in controls {
        let reg = &unit.registers[ri];
        let consts: Vec<_> = CONTROL_ROLES
            .iter()
            .map(|&(name, role)| (name, role_field(reg, role)))
            .collect();
        if consts[..2].iter().all(|(_, f)| f.is_some()) {
            out.push(RoleImpl {
                trait_name: "CounterControl",
                register: ri,
                required: 2,
                consts,
            });
        }
    }
    let mut counters: Vec<usize> = pmu.counters.iter().map(|c| c.counter.register).collect();
    counters.sort_unstable();
    counters.dedup();
    for ri in counters {
        if let Some(f) = role_field(&unit.registers[ri], Role::Count) {
            out.push(RoleImpl {
                trait_name: "CounterValue",
                register: ri,
                required: 1,
                consts: vec![("COUNT", Some(f))],
            });
        }
    }
    for &ri in &pmu.controls {
        let reg = &unit.registers[ri];
        let consts: Vec<_> = BOX_ROLES
            .iter()
            .map(|&(name, role)| (name, role_field(reg, role)))
            .collect();
        if consts.iter().any(|(_, f)| f.is_some()) {
            out.push(RoleImpl {
                trait_name: "BoxControl",
                register: ri,
                required: 0,
                consts,
            });
        }
    }
    out
}

/// A role trait impl.
fn role_impl_tokens(names: &Names, u: usize, i: &RoleImpl) -> TokenStream {
    let layout = names.layout(u, i.register);
    let trait_name = format_ident!("{}", i.trait_name);
    let consts = i.consts.iter().enumerate().map(|(k, &(name, field))| {
        let name = format_ident!("{name}");
        let field = field.map(|f| names.field((u, i.register, f)));
        if k < i.required {
            quote!(const #name: &'static FieldInfo = #field;)
        } else {
            let field = opt(field);
            quote!(const #name: Option<&'static FieldInfo> = #field;)
        }
    });
    quote! {
        impl #trait_name for #layout {
            #(#consts)*
        }
    }
}

/// `X::INFO.at(index)`: a `RegRef`.
fn reg_ref(names: &Names, u: usize, r: RegIndex) -> TokenStream {
    let info = names.info_receiver(u, r.register);
    let index = num(r.index);
    quote!(#info.at(#index))
}

/// One counter: a constructor for its kind, then what only some counters have.
fn counter(names: &Names, u: usize, c: &Counter) -> TokenStream {
    let (number, width) = (num(c.number), num(c.width));
    let counter = reg_ref(names, u, c.counter);
    let control = c.control.map(|r| reg_ref(names, u, r));
    let mut out = match (c.kind, control) {
        (CounterKind::General, Some(ctl)) => {
            quote!(CounterInfo::general(#number, #width, #ctl, #counter))
        }
        (CounterKind::Fixed, Some(ctl)) => {
            quote!(CounterInfo::fixed(#number, #width, #ctl, #counter))
        }
        (CounterKind::FreeRunning, None) => {
            quote!(CounterInfo::free_running(#number, #width, #counter))
        }
        // Shapes the validator rejects today; written out in full should it allow them.
        (kind, control) => {
            let kind = format_ident!("{}", kind.variant());
            let control = opt(control);
            quote!(CounterInfo { kind: CounterKind::#kind, control: #control,
                ..CounterInfo::free_running(#number, #width, #counter) })
        }
    };
    if let Some(e) = &c.event {
        out = quote!(#out.counting(#e));
    }
    if let Some(a) = c.alias {
        let a = reg_ref(names, u, a);
        out = quote!(#out.with_alias(#a));
    }
    if let Some(w) = &c.width_cpuid {
        out = quote!(#out.with_width_cpuid(#w));
    }
    if let Some(p) = &c.perf {
        let (name, umask) = (&p.name, proc_macro2::Literal::u8_unsuffixed(p.umask));
        let (scale, unit) = (opt_str(p.scale.as_deref()), opt_str(p.unit.as_deref()));
        out = quote!(#out.with_perf_event(CounterPerfEvent {
            name: #name, umask: #umask, scale: #scale, unit: #unit
        }));
    }
    if c.overflow != OverflowSeen::Status {
        let seen = format_ident!("{}", c.overflow.variant());
        let source = c.overflow_source.as_deref().unwrap_or_default();
        out = quote!(#out.overflow_seen(OverflowSeen::#seen, #source));
    }
    out
}

/// `Some("text")` or `None`.
fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    }
}

fn filter(names: &Names, u: usize, f: &Filter) -> TokenStream {
    let register = names.info(u, f.register);
    let mask = opt(f.mask.map(|m| names.info(u, m)));
    let event = opt(f.event.map(Literal::u8_unsuffixed));
    let counters = f.counters.iter().map(|&c| num(c));
    let (ext, desc) = (f.event_ext, text_lit(&f.description));
    quote!(FilterInfo {
        register: #register,
        mask: #mask,
        event: #event,
        event_ext: #ext,
        counters: &[#(#counters),*],
        description: #desc,
    })
}

fn route(names: &Names, unit: &Unit, r: &Route) -> TokenStream {
    let instances = r.instances.iter().map(|&i| &unit.instances[i].name);
    let counters = r.counters.iter().map(|&c| num(c));
    let hops = r.hops.iter().map(|h| {
        let bit = names.bit(&h.bit);
        let clear = opt(h.clear.as_ref().map(|c| names.bit(c)));
        quote!(Hop { bit: #bit, clear: #clear })
    });
    quote!(RouteInfo {
        instances: &[#(#instances),*],
        counters: &[#(#counters),*],
        hops: &[#(#hops),*],
    })
}

fn perf(unit: &Unit, pf: &PerfPmu) -> TokenStream {
    let (inst, name, source) = (&unit.instances[pf.instance].name, &pf.pmu, &pf.source);
    let counters = pf.counters.iter().map(|&c| num(c));
    let driver = perf_driver_static(&pf.driver);
    quote!(PerfInfo {
        instance: #inst,
        pmu: #name,
        counters: &[#(#counters),*],
        source: #source,
        driver: &#driver,
    })
}

/// The name of a unit's shared perf entry (`CBOX_PERF`).
fn shared_perf_name(unit: &Unit) -> Ident {
    format_ident!("{}", shared_perf_ident(&unit.module))
}

/// Whether a unit's boxes have several perf PMUs that differ only in box and name: then the
/// rest is written once (see [`shared_perf`]).
fn perf_is_shared(pmu: &Pmu) -> bool {
    let same = |a: &PerfPmu, b: &PerfPmu| {
        a.counters == b.counters && a.source == b.source && a.driver.id == b.driver.id
    };
    pmu.perf.len() > 1 && pmu.perf.iter().all(|p| same(p, &pmu.perf[0]))
}

/// What every perf PMU of a unit's boxes shares, as one const, if [`perf_is_shared`].
fn shared_perf(unit: &Unit, pmu: &Pmu) -> TokenStream {
    if !perf_is_shared(pmu) {
        return quote!();
    }
    let pf = &pmu.perf[0];
    let counters = pf.counters.iter().map(|&c| num(c));
    let (source, driver) = (&pf.source, perf_driver_static(&pf.driver));
    let name = shared_perf_name(unit);
    let doc = outer_docs(&wrap(
        &format!(
            "What the perf PMUs of the {} share; each box's entry adds its box and PMU name.",
            plain(&unit.title)
        ),
        96,
    ));
    quote! {
        #doc
        const #name: PerfInfo = PerfInfo {
            instance: "",
            pmu: "",
            counters: &[#(#counters),*],
            source: #source,
            driver: &#driver,
        };
    }
}

/// A unit's `perf` list.
fn perf_list(unit: &Unit, pmu: &Pmu) -> TokenStream {
    if !perf_is_shared(pmu) {
        let perf = pmu.perf.iter().map(|pf| perf(unit, pf));
        return quote!(&[#(#perf),*]);
    }
    let shared = shared_perf_name(unit);
    let perf = pmu.perf.iter().map(|pf| {
        let (inst, name) = (&unit.instances[pf.instance].name, &pf.pmu);
        quote!(#shared.of_box(#inst, #name))
    });
    quote!(&[#(#perf),*])
}

/// A string literal of prose, broken with `\` line continuations so that no source line is
/// much longer than 100 columns (the value is the same: a continuation drops the line break and
/// the next line's indentation).
fn text_lit(s: &str) -> TokenStream {
    let escaped = Literal::string(s).to_string();
    if escaped.len() <= 72 {
        return quote!(#s);
    }
    let wrapped = wrap(&escaped, 72);
    // Only where the breaks fall on single spaces, so the value cannot change.
    if wrapped.trim_end().replace('\n', " ") != escaped {
        return quote!(#s);
    }
    let lit = wrapped.trim_end().replace('\n', " \\\n            ");
    lit.parse().expect("a string literal is a token")
}

/// Spec text for a doc comment: without the characters rustdoc would read as markup.
fn plain(s: &str) -> String {
    s.replace(['[', ']', '<', '>', '`', '*'], "")
}

/// The doc comment of a unit's `PmuInfo`: what it is, and its notes.
fn unit_doc(unit: &Unit, pmu: &Pmu) -> TokenStream {
    let boxes: Vec<&str> = unit.instances.iter().map(|i| i.name.as_str()).collect();
    let mut doc = format!(
        "PMU structure of the {} ({} counters per box; boxes {}).",
        plain(&unit.title),
        pmu.counters.len(),
        boxes.join(", ")
    );
    for n in &pmu.notes {
        doc.push_str(&format!(
            "\n\n**{}** ({}): {}",
            n.title,
            n.kind,
            plain(&n.text)
        ));
    }
    outer_docs(&wrap(&doc, 96))
}

/// A unit's `PmuInfo` doc comment and its `notes`. A unit taken from another processor
/// (`units-from`) has that one's notes: written once, in the other's `pmu` module, and read
/// from its `PmuInfo` here.
fn doc_and_notes(p: &Processor, unit: &Unit, pmu: &Pmu) -> (TokenStream, TokenStream) {
    let name = pmu_static(unit);
    let Some(from) = &p.units_from else {
        let notes = pmu.notes.iter().map(|n| {
            let (k, t, x) = (&n.kind, &n.title, text_lit(&n.text));
            quote!(NoteInfo { kind: #k, title: #t, text: #x })
        });
        return (unit_doc(unit, pmu), quote!(&[#(#notes),*]));
    };
    let m = format_ident!("{}", from.module);
    let doc = outer_docs(&wrap(
        &format!(
            "PMU structure of the {}: that of [`crate::{}::pmu::{name}`] ({}'s, `units-from`; its notes are that one's), with {}'s registers.",
            plain(&unit.title),
            from.module,
            from.id,
            p.id
        ),
        96,
    ));
    (doc, quote!(crate::#m::pmu::#name.notes))
}

/// A unit's `PmuInfo` static.
fn unit_static(names: &Names, u: usize, pmu: &Pmu) -> TokenStream {
    let unit = &names.p.units[u];
    let name = pmu_static(unit);
    let regs = |list: &[usize]| {
        let items = list.iter().map(|&r| names.info(u, r));
        quote!(&[#(#items),*])
    };
    let (controls, statuses, ovf) = (
        regs(&pmu.controls),
        regs(&pmu.statuses),
        regs(&pmu.overflow_clears),
    );
    let scope = format_ident!("{}", pmu.scope.variant());
    let discovery_type = match pmu.discovery_type {
        Some(t) => {
            let t = proc_macro2::Literal::u16_unsuffixed(t);
            quote!(Some(#t))
        }
        None => quote!(None),
    };
    let counters = pmu.counters.iter().map(|c| counter(names, u, c));
    let filters = pmu.filters.iter().map(|f| filter(names, u, f));
    let routes = pmu.routes.iter().map(|r| route(names, unit, r));
    let perf = perf_list(unit, pmu);
    let (doc, notes) = doc_and_notes(names.p, unit, pmu);
    let box_count = opt(pmu.box_count.as_ref().map(|b| box_count(names, b)));
    let (socket_bus, stack_bus) = buses(names, pmu);
    let ignored = |d: &crate::model::pmu::DiscoveryIgnored| {
        let (source, description) = (&d.source, text_lit(&d.description));
        quote!(DiscoveryIgnoredInfo {
            source: #source,
            description: #description,
        })
    };
    let discovery_ignored = opt(pmu.discovery_ignored.as_ref().map(ignored));
    let (saturation, global_init) = quirks(names, u, pmu);
    let clock_event = opt(pmu.clock_event.as_ref().map(clock_event_info));
    let discovery_count = opt(pmu.discovery_count.as_ref().map(|c| {
        let boxes = Literal::u32_unsuffixed(c.boxes);
        let (source, description) = (&c.source, text_lit(&c.description));
        quote!(DiscoveryCountInfo {
            boxes: #boxes,
            source: #source,
            description: #description,
        })
    }));
    let discovery_broken = opt(pmu.discovery_broken.as_ref().map(ignored));
    let (proc_id, unit_name) = (&names.p.id, &unit.name);
    quote! {
        #doc
        pub static #name: PmuInfo = PmuInfo {
            processor: #proc_id,
            unit: #unit_name,
            scope: Scope::#scope,
            discovery_type: #discovery_type,
            controls: #controls,
            statuses: #statuses,
            overflow_clears: #ovf,
            counters: &[#(#counters),*],
            filters: &[#(#filters),*],
            routes: &[#(#routes),*],
            perf: #perf,
            box_count: #box_count,
            socket_bus: #socket_bus,
            stack_bus: #stack_bus,
            discovery_ignored: #discovery_ignored,
            discovery_count: #discovery_count,
            discovery_broken: #discovery_broken,
            saturation: #saturation,
            global_init: #global_init,
            clock_event: #clock_event,
            notes: #notes,
        };
    }
}

/// A unit's `ClockEventInfo`.
fn clock_event_info(c: &crate::model::pmu::ClockEvent) -> TokenStream {
    let (code, umask, source) = (
        Literal::u16_unsuffixed(c.code),
        Literal::u16_unsuffixed(c.umask),
        &c.source,
    );
    quote!(ClockEventInfo {
        code: #code,
        umask: #umask,
        source: #source,
    })
}

/// A unit's hardware quirks: its `SaturationInfo` (or `None`) and its `GlobalInitInfo`s.
fn quirks(names: &Names, u: usize, pmu: &Pmu) -> (TokenStream, TokenStream) {
    let unit = &names.p.units[u];
    let saturation = opt(pmu.saturation.as_ref().map(|s| {
        let bit = Literal::u32_unsuffixed(s.reset_bit);
        let (source, description) = (&s.source, text_lit(&s.description));
        quote!(SaturationInfo {
            reset_bit: #bit,
            source: #source,
            description: #description,
        })
    }));
    let inits = pmu.global_init.iter().map(|g| {
        let reg = &unit.registers[g.register];
        let inst = &unit.instances[0];
        let name = reg.concrete_name(inst, 0);
        let qualified = format!("{name}.{}", reg.fields[g.field].name);
        let info = names.info(u, g.register);
        let field = names.field((u, g.register, g.field));
        let (instance, write, power_on) = (
            &inst.name,
            Literal::u64_unsuffixed(g.write),
            Literal::u64_unsuffixed(g.power_on),
        );
        let (source, description) = (&g.source, text_lit(&g.description));
        quote!(GlobalInitInfo {
            register: #info,
            instance: #instance,
            field: #field,
            qualified: #qualified,
            write: #write,
            power_on: #power_on,
            source: #source,
            description: #description,
        })
    });
    (saturation, quote!(&[#(#inits),*]))
}

/// A unit's `BoxCountInfo`.
fn box_count(names: &Names, b: &BoxCount) -> TokenStream {
    let rule = match &b.rule {
        BoxCountRule::SetBits(bits) => {
            let bits = bits.iter().map(|b| bit_literal(names, b));
            quote!(BoxCountRule::SetBits(&[#(#bits),*]))
        }
        BoxCountRule::Value(bit) => {
            let bit = bit_literal(names, bit);
            quote!(BoxCountRule::Value(#bit))
        }
        BoxCountRule::ValueMap(bit, map) => {
            let bit = bit_literal(names, bit);
            let pairs = map.iter().map(|&(v, n)| quote!((#v, #n)));
            quote!(BoxCountRule::ValueMap(#bit, &[#(#pairs),*]))
        }
        BoxCountRule::CpuidSetBits { active, counters } => {
            let counters = match counters {
                Some(c) => quote!(Some(#c)),
                None => quote!(None),
            };
            quote!(BoxCountRule::CpuidSetBits { active: #active, counters: #counters })
        }
        BoxCountRule::CoresPerSocket => quote!(BoxCountRule::CoresPerSocket),
        BoxCountRule::Listed => quote!(BoxCountRule::Listed),
        BoxCountRule::Devices => quote!(BoxCountRule::Devices),
        BoxCountRule::Discovery => quote!(BoxCountRule::Discovery),
    };
    let (source, description) = (&b.source, text_lit(&b.description));
    quote!(BoxCountInfo {
        rule: #rule,
        source: #source,
        description: #description,
    })
}

/// A unit's `SocketBusInfo` and `StackBusInfo` (each `None` where it has none).
fn buses(names: &Names, pmu: &Pmu) -> (TokenStream, TokenStream) {
    (
        opt(pmu.socket_bus.as_ref().map(|b| socket_bus(names, b))),
        opt(pmu.stack_bus.as_ref().map(|b| stack_bus(names, b))),
    )
}

/// A unit's `SocketBusInfo`.
fn socket_bus(names: &Names, b: &SocketBus) -> TokenStream {
    let node_id = bit_literal(names, &b.node_id);
    let slots = b.slots.iter().map(|s| bit_literal(names, s));
    let other = match b.other_buses {
        OtherBuses::None => quote!(OtherBuses::None),
        OtherBuses::NextLower => quote!(OtherBuses::NextLower),
        OtherBuses::NextHigher => quote!(OtherBuses::NextHigher),
    };
    let (source, description) = (&b.source, text_lit(&b.description));
    quote!(SocketBusInfo {
        node_id: #node_id,
        slots: &[#(#slots),*],
        other_buses: #other,
        source: #source,
        description: #description,
    })
}

/// A unit's `StackBusInfo`.
fn stack_bus(names: &Names, b: &StackBus) -> TokenStream {
    let valid = bit_literal(names, &b.valid);
    let buses = b.buses.iter().map(|s| bit_literal(names, s));
    let (source, description) = (&b.source, text_lit(&b.description));
    quote!(StackBusInfo {
        valid: #valid,
        buses: &[#(#buses),*],
        source: #source,
        description: #description,
    })
}

/// The processor's `GLOBAL`, declared by unit `u`.
fn global_static(names: &Names, u: usize, g: &Global) -> TokenStream {
    let unit = &names.p.units[u];
    let (inst, unit_name) = (&unit.instances[0].name, &unit.name);
    let control = names.info(u, g.control);
    let status = names.info(u, g.status);
    let ovf = opt(g.overflow_clear.map(|o| names.info(u, o)));
    quote! {
        /// The level above every box: global control, status and overflow clear.
        pub static GLOBAL: GlobalInfo = GlobalInfo {
            unit: #unit_name,
            instance: #inst,
            control: #control,
            status: #status,
            overflow_clear: #ovf,
        };
    }
}

/// The name of a perf driver's static in a processor's `pmu` module (`PERF_SNBEP_GENERIC`).
fn perf_driver_static(d: &PerfDriver) -> Ident {
    format_ident!("{}", perf_driver_ident(&d.id))
}

fn perf_format(f: &PerfFormat) -> TokenStream {
    let (n, c) = (&f.name, &f.config);
    let target = match &f.target {
        FormatTarget::Role(r) => {
            let v = format_ident!("{}", r.variant());
            quote!(FormatTarget::Role(Role::#v))
        }
        FormatTarget::Field(x) => quote!(FormatTarget::Field(#x)),
        FormatTarget::Register(x) => quote!(FormatTarget::Register(#x)),
        FormatTarget::Unmapped(x) => {
            let x = text_lit(x);
            quote!(FormatTarget::Unmapped(#x))
        }
    };
    quote!(PerfFormatInfo { name: #n, config: #c, target: #target })
}

fn perf_driver(d: &PerfDriver) -> TokenStream {
    let name = perf_driver_static(d);
    let (id, module, group, source) = (&d.id, &d.module, &d.group, &d.source);
    let title = text_lit(&d.source_title);
    let formats = d.formats.iter().map(perf_format);
    let doc = outer_docs(&wrap(
        &format!(
            "The `{}` perf driver's format (`{}`, {}).",
            d.id, d.group, d.source_title
        ),
        96,
    ));
    quote! {
        #doc
        pub static #name: PerfDriverInfo = PerfDriverInfo {
            id: #id,
            module: #module,
            group: #group,
            source: #source,
            source_title: #title,
            formats: &[#(#formats),*],
        };
    }
}

/// The perf drivers a processor's units name, each once, as statics.
fn perf_drivers(p: &Processor) -> TokenStream {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let node_drivers = p
        .units
        .iter()
        .filter_map(|u| u.node_events.as_ref())
        .map(|n| &*n.driver);
    p.units
        .iter()
        .filter_map(|u| u.pmu.as_ref())
        .flat_map(|m| m.perf.iter().map(|pf| &*pf.driver))
        .chain(node_drivers)
        .filter(|d| seen.insert(&d.id))
        .map(perf_driver)
        .collect()
}

/// The overflow bits a processor's routes name, each once, in first-use order.
fn route_bits(p: &Processor) -> Vec<&BitRef> {
    let mut bits: Vec<&BitRef> = Vec::new();
    let routes = p
        .units
        .iter()
        .filter_map(|u| u.pmu.as_ref())
        .flat_map(|m| &m.routes);
    for h in routes.flat_map(|r| &r.hops) {
        for b in std::iter::once(&h.bit).chain(&h.clear) {
            if !bits.contains(&b) {
                bits.push(b);
            }
        }
    }
    bits
}

/// An overflow bit's named constant.
fn bit_const(names: &Names, b: &BitRef) -> TokenStream {
    let unit = &names.p.units[b.unit];
    let reg = &unit.registers[b.register];
    let name = reg.concrete_name(&unit.instances[b.instance], b.index);
    let doc = outer_docs(&format!(
        "`{name}.{}`: a hop of the overflow routes.",
        reg.fields[b.field].name
    ));
    let c = names.bit(b);
    let value = bit_literal(names, b);
    quote! {
        #doc
        const #c: BitRef = #value;
    }
}

/// A field of one register instance as a `BitRef` literal.
fn bit_literal(names: &Names, b: &BitRef) -> TokenStream {
    let unit = &names.p.units[b.unit];
    let reg = &unit.registers[b.register];
    let inst = &unit.instances[b.instance];
    let name = reg.concrete_name(inst, b.index);
    let qualified = format!("{name}.{}", reg.fields[b.field].name);
    let info = names.info(b.unit, b.register);
    let field = names.field((b.unit, b.register, b.field));
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

/// A field's named constant.
fn field_const(names: &Names, key: FieldKey) -> TokenStream {
    let (u, r, f) = key;
    let reg = &names.p.units[u].registers[r];
    let field = &reg.fields[f];
    // Its bits are stated where the field is (its position constant and `FieldInfo` row).
    let doc = outer_docs(&format!("`{}.{}`.", reg.generic_name(), field.name));
    let (c, info, name) = (names.field(key), names.info_receiver(u, r), &*field.name);
    quote! {
        #doc
        const #c: &FieldInfo = #info.field_named(#name);
    }
}

/// The layouts the module names, imported from their units (those of a type name several
/// units share are written with their path instead); for a processor that takes its units
/// from another (`units-from`), its units' metadata statics instead of the shared layouts.
fn imports(names: &Names, used: &BTreeSet<(usize, usize)>) -> TokenStream {
    let mut by_unit: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for &(u, r) in used {
        let reg = &names.p.units[u].registers[r];
        if !names.shared_types.contains(reg.type_name.as_str()) {
            let name = if names.p.units_from.is_some() {
                info_ident(reg)
            } else {
                reg.type_name.clone()
            };
            by_unit.entry(u).or_default().insert(name);
        }
    }
    by_unit
        .into_iter()
        .map(|(u, items)| {
            let m = format_ident!("{}", names.p.units[u].module);
            let items = items.into_iter().map(|t| format_ident!("{t}"));
            quote!(use super::#m::{#(#items),*};)
        })
        .collect()
}

/// The registers and fields a processor's structure refers to.
fn references(p: &Processor) -> (BTreeSet<(usize, usize)>, BTreeSet<FieldKey>) {
    let (mut regs, mut fields) = (BTreeSet::new(), BTreeSet::new());
    for (u, unit) in p.units.iter().enumerate() {
        let Some(pmu) = &unit.pmu else { continue };
        let lists = [&pmu.controls, &pmu.statuses, &pmu.overflow_clears];
        regs.extend(lists.into_iter().flatten().map(|&r| (u, r)));
        for c in &pmu.counters {
            let elements = [c.control, Some(c.counter), c.alias];
            regs.extend(elements.into_iter().flatten().map(|e| (u, e.register)));
        }
        for f in &pmu.filters {
            regs.extend(std::iter::once(f.register).chain(f.mask).map(|r| (u, r)));
        }
        if let Some(g) = &pmu.global {
            let global = [Some(g.control), Some(g.status), g.overflow_clear];
            regs.extend(global.into_iter().flatten().map(|r| (u, r)));
        }
        for g in &pmu.global_init {
            regs.insert((u, g.register));
            fields.insert((u, g.register, g.field));
        }
        if p.units_from.is_none() {
            for i in role_impls(unit, pmu) {
                let used = i.consts.iter().filter_map(|&(_, f)| f);
                fields.extend(used.map(|f| (u, i.register, f)));
            }
        }
    }
    let counted = p
        .units
        .iter()
        .flat_map(|u| &u.pmu)
        .flat_map(|m| &m.box_count);
    let count_bits = counted.flat_map(|b| match &b.rule {
        BoxCountRule::SetBits(bits) => bits.as_slice(),
        BoxCountRule::Value(bit) | BoxCountRule::ValueMap(bit, _) => std::slice::from_ref(bit),
        BoxCountRule::CpuidSetBits { .. }
        | BoxCountRule::CoresPerSocket
        | BoxCountRule::Listed
        | BoxCountRule::Devices
        | BoxCountRule::Discovery => &[],
    });
    let bus_bits = p
        .units
        .iter()
        .flat_map(|u| &u.pmu)
        .flat_map(|m| &m.socket_bus)
        .flat_map(|s| std::iter::once(&s.node_id).chain(&s.slots));
    let stack_bits = p
        .units
        .iter()
        .flat_map(|u| &u.pmu)
        .flat_map(|m| &m.stack_bus)
        .flat_map(|s| std::iter::once(&s.valid).chain(&s.buses));
    let bits = count_bits.chain(bus_bits).chain(stack_bits);
    for b in route_bits(p).into_iter().chain(bits) {
        regs.insert((b.unit, b.register));
        fields.insert((b.unit, b.register, b.field));
    }
    (regs, fields)
}

/// A processor's `pmu` module.
pub fn processor_pmu(p: &Processor) -> TokenStream {
    let doc = inner_docs(&wrap(
        &format!(
            "PMU structure of the {}: one `PmuInfo` per unit that declares one, the global \
             level, the role traits its layouts implement, and the named fields and overflow \
             bits they refer to. See `crate::structure`.",
            p.name
        ),
        96,
    ));
    let names = Names::new(p);
    let mut items = TokenStream::new();
    for (u, unit) in p.units.iter().enumerate() {
        let Some(pmu) = &unit.pmu else { continue };
        items.extend(unit_static(&names, u, pmu));
        items.extend(shared_perf(unit, pmu));
        // The role traits belong to the layouts, written once by the processor that owns them.
        let impls = if p.units_from.is_some() {
            Vec::new()
        } else {
            role_impls(unit, pmu)
        };
        for i in impls {
            items.extend(role_impl_tokens(&names, u, &i));
        }
        if let Some(g) = &pmu.global {
            items.extend(global_static(&names, u, g));
        }
    }
    for b in route_bits(p) {
        items.extend(bit_const(&names, b));
    }
    let (regs, fields) = references(p);
    for &key in &fields {
        items.extend(field_const(&names, key));
    }
    items.extend(perf_drivers(p));
    let uses = if items.is_empty() {
        quote!()
    } else {
        // A processor sharing another's layouts imports its own metadata statics instead.
        let imports = imports(&names, &regs);
        let has_notes = p.units_from.is_none()
            && p.units
                .iter()
                .flat_map(|u| &u.pmu)
                .any(|m| !m.notes.is_empty());
        let note = has_notes.then(|| quote!(NoteInfo,));
        let field_info = (!fields.is_empty()).then(|| quote!(FieldInfo,));
        // `X::INFO` needs the `Register` trait; a processor sharing layouts names statics.
        // A processor whose only items are node events' drivers names no layout.
        let names_layouts = p.units.iter().any(|u| u.pmu.is_some());
        let register = (p.units_from.is_none() && names_layouts).then(|| quote!(Register));
        let support = (field_info.is_some() || note.is_some() || register.is_some())
            .then(|| quote!(use crate::support::{#field_info #note #register};));
        quote! {
            use crate::structure::*;
            #support
            #imports
        }
    };
    quote! {
        #doc
        #uses
        #items
    }
}
