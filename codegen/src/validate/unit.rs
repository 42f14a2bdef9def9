//! One unit file: its instances and registers (sources, placeholders, reset, notes).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::*;

/// The unit file being checked: its text and path, its processor, and what processors.xml
/// declares.
pub(super) struct UnitFile<'a> {
    file: &'a SourceFile,
    path: &'a Arc<Path>,
    proc: &'a Processor,
    cat: &'a Catalogue,
    window: Option<&'a MmioWindow>,
    window_declared: bool,
}

/// The register being checked, with what its addresses and fields are checked against.
pub(super) struct RegisterScope<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) raw: &'a RawRegister,
    pub(super) space: Space,
    pub(super) width: u32,
    pub(super) count: u32,
    pub(super) instances: &'a [Instance],
    pub(super) cat: &'a Catalogue,
    /// The unit's memory-mapped window, if it declares a valid one.
    pub(super) window: Option<&'a MmioWindow>,
    /// Whether it declares one at all (an invalid one is reported once, not per address).
    pub(super) window_declared: bool,
}

impl Validator {
    /// A unit file: its instances, registers and PMU structure, with its routes as written.
    pub(super) fn unit(
        &mut self,
        parsed: &ParsedUnit,
        proc: &Processor,
        cat: &Catalogue,
    ) -> Option<(Unit, Option<PendingRoutes>)> {
        let raw = &parsed.raw;
        let path: Arc<Path> = Arc::from(parsed.file.path.as_path());
        let ctx = Ctx {
            file: &parsed.file,
            register: None,
        };
        let errors_before = self.errors.len();
        let instances = self.instances(&ctx, raw);
        let mmio_window = self.mmio_window(&ctx, raw, cat);
        let file = UnitFile {
            file: &parsed.file,
            path: &path,
            proc,
            cat,
            window: mmio_window.as_ref(),
            window_declared: !raw.mmio_window.is_empty(),
        };
        let registers = self.registers(&file, raw, &instances);
        self.mmio_use(&ctx, raw, mmio_window.as_ref(), &instances, &registers);
        if self.errors.len() > errors_before {
            return None;
        }
        let scope = UnitScope {
            ctx: &ctx,
            path: &path,
            registers: &registers,
            instances: &instances,
            cat,
        };
        let structure = self.unit_pmu(&scope, raw.pmu.as_ref());
        let node_events = raw
            .node_events
            .as_ref()
            .and_then(|n| self.node_events(&ctx, cat, n, &registers));
        if self.errors.len() > errors_before {
            return None;
        }
        let (pmu, routes) = structure.unzip();
        let unit = Unit {
            name: raw.name.clone(),
            module: raw.module.clone(),
            title: raw.title.clone(),
            description: normalize_text(&raw.description),
            instances,
            registers,
            file: relative_spec_path(&parsed.file.path),
            at: Position::of(&parsed.file, &path, raw.at),
            events: Vec::new(),
            pmu,
            mmio_window,
            node_events,
        };
        Some((unit, routes))
    }

    /// The unit's module name and its instances, each once.
    fn instances(&mut self, ctx: &Ctx<'_>, raw: &RawUnit) -> Vec<Instance> {
        if !is_identifier(&raw.module) {
            self.push(ctx.error(
                raw.at,
                format!(
                    "unit `{}`: module `{}` is not a Rust identifier",
                    raw.name, raw.module
                ),
                "use a snake_case name such as `wbox`",
            ));
        }
        if raw.instance.is_empty() {
            self.push(ctx.error(
                raw.at,
                format!("unit `{}` has no <instance>", raw.name),
                "add one <instance name=\"...\"/> per box instance",
            ));
        }
        let mut instances: Vec<Instance> = Vec::new();
        for i in &raw.instance {
            let key = i.number.clone().unwrap_or_else(|| i.name.clone());
            if instances.iter().any(|o| o.name == i.name || o.key == key) {
                self.push(ctx.error(
                    i.at,
                    format!("unit `{}`: instance `{}` is listed twice", raw.name, i.name),
                    "give each instance a distinct name and number",
                ));
            }
            instances.push(Instance {
                name: i.name.clone(),
                key,
            });
        }
        instances
    }

    /// The unit's registers, each defined once and with a type name of its own.
    fn registers(
        &mut self,
        unit: &UnitFile<'_>,
        raw: &RawUnit,
        instances: &[Instance],
    ) -> Vec<Register> {
        let mut registers: Vec<Register> = Vec::new();
        let mut first_at: HashMap<&str, usize> = HashMap::new();
        for r in &raw.register {
            let ctx = Ctx {
                file: unit.file,
                register: Some(&r.name),
            };
            if let Some(first) = first_at.get(r.name.as_str()) {
                let (line, _) = unit.file.position(*first);
                self.push(ctx.error(
                    r.at,
                    format!("defined a second time (first at line {line})"),
                    "each register is defined once; use count=\"N\" for arrays",
                ));
                continue;
            }
            first_at.insert(&r.name, r.at);
            let Some(reg) = self.register(unit, r, instances) else {
                continue;
            };
            if let Some(other) = registers.iter().find(|o| o.type_name == reg.type_name) {
                self.push(ctx.error(
                    r.at,
                    format!(
                        "type name `{}` is already used by {}",
                        reg.type_name, other.name
                    ),
                    "set a distinct type=\"...\" on one of them",
                ));
            } else {
                registers.push(reg);
            }
        }
        registers
    }

    /// One register: width, space, placeholders, type name, sources, addresses, fields,
    /// reset and notes.
    pub(super) fn register(
        &mut self,
        unit: &UnitFile<'_>,
        r: &RawRegister,
        instances: &[Instance],
    ) -> Option<Register> {
        let ctx = Ctx {
            file: unit.file,
            register: Some(&r.name),
        };
        let errors_before = self.errors.len();
        let (width, space, count) = self.register_shape(&ctx, r);
        let type_name = self.register_name(&ctx, r, instances.len() > 1, count);
        let sources = self.register_sources(&ctx, r, unit);
        let reg = RegisterScope {
            ctx: &ctx,
            raw: r,
            space,
            width,
            count,
            instances,
            cat: unit.cat,
            window: unit.window,
            window_declared: unit.window_declared,
        };
        let addresses = self.addresses(&reg);
        let fields = self.fields(&reg);
        let reset = fields.iter().fold(0u64, |acc, f| acc | f.place(f.reset));
        self.register_reset(&ctx, r, reset);
        let notes = self.notes(&ctx, &r.note);
        if self.errors.len() > errors_before {
            return None;
        }
        Some(Register {
            name: r.name.clone(),
            type_name,
            width,
            space,
            count,
            count_cpuid: r.count_cpuid.clone(),
            reset,
            sources,
            description: normalize_text(&r.description),
            addresses,
            fields,
            notes,
            at: Position::of(unit.file, unit.path, r.at),
        })
    }

    /// Width, address space and array length (with `count-cpuid`).
    fn register_shape(&mut self, ctx: &Ctx<'_>, r: &RawRegister) -> (u32, Space, u32) {
        let width = match r.width.as_str() {
            "32" => 32,
            "64" => 64,
            w => {
                self.push(ctx.error(
                    r.at,
                    format!("width `{w}` is not supported"),
                    "registers are 32 or 64 bits wide",
                ));
                64
            }
        };
        let space = match r.space.as_str() {
            "msr" => Space::Msr,
            "pci" => Space::Pci,
            "mmio" => Space::Mmio,
            "table" => Space::Table,
            "sysreg" => Space::SysReg,
            s => {
                self.push(ctx.error(
                    r.at,
                    format!("unknown address space `{s}`"),
                    "use space=\"msr\", \"pci\", \"mmio\", \"table\" or \"sysreg\"",
                ));
                Space::Msr
            }
        };
        let count = match r.count.as_deref().map(parse_number) {
            None => 1,
            Some(Some(c)) if (1..=1024).contains(&c) => c as u32,
            Some(_) => {
                self.push(ctx.error(
                    r.at,
                    format!(
                        "count `{}` is not a number from 1 to 1024",
                        r.count.as_deref().unwrap_or_default()
                    ),
                    "count is the array length, e.g. count=\"4\"",
                ));
                1
            }
        };
        if let Some(c) = r.count_cpuid.as_deref().filter(|c| !is_cpuid_bits(c)) {
            self.push(ctx.error(
                r.at,
                format!("count-cpuid `{c}` is not of the form 0AH.EAX[15:8]"),
                "name the CPUID leaf, register and bits",
            ));
        }
        (width, space, count)
    }

    /// The name's placeholders ({i} exactly when the unit has several instances, {n} exactly
    /// for an array), and the register's Rust type name.
    fn register_name(&mut self, ctx: &Ctx<'_>, r: &RawRegister, multi: bool, count: u32) -> String {
        let has_i = r.name.contains("{i}");
        let has_n = r.name.contains("{n}");
        let bare = strip_placeholders(&r.name);
        if !is_identifier(&bare.replace('_', "a"))
            || r.name.matches('{').count() != (has_i as usize + has_n as usize)
        {
            self.push(ctx.error(r.at, "the name may hold only letters, digits, `_`, and the placeholders {i} and {n} once each", "write the guide's name, e.g. C{i}_MSR_PMON_EVT_SEL{n}"));
        } else if !r.name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            // The instance constants (C0_MSR_PMON_CTL) are Rust identifiers.
            self.push(ctx.error(r.at, "the name must start with a letter: each instance's address constant is named after it", "put the unit's prefix first, e.g. C{i}_MSR_PMON_EVT_SEL{n}, not {i}_MSR_PMON_EVT_SEL{n}"));
        }
        if multi != has_i {
            let msg = if multi {
                "the unit has several instances but the name has no {i}"
            } else {
                "the name has {i} but the unit has one instance"
            };
            self.push(ctx.error(r.at, msg, "{i} marks where the instance number goes (S{i}_MSR_PMON_SUMMARY); use it exactly when the unit has more than one instance"));
        }
        if (count > 1) != has_n {
            let msg = if count > 1 {
                "the register is an array (count > 1) but the name has no {n}"
            } else {
                "the name has {n} but the register is not an array"
            };
            self.push(ctx.error(r.at, msg, "{n} marks where the array index goes (W_MSR_PMON_EVT_SEL{n}); use it exactly when count > 1"));
        }
        let type_name = r.type_name.clone().unwrap_or_else(|| camel_case(&bare));
        if !is_identifier(&type_name) {
            self.push(ctx.error(
                r.at,
                format!("type `{type_name}` is not a Rust identifier"),
                "use CamelCase letters and digits",
            ));
        }
        rust_type_name(type_name)
    }

    /// The `<source>`s of a register: each a document of its processor or a public source.
    fn register_sources(
        &mut self,
        ctx: &Ctx<'_>,
        r: &RawRegister,
        unit: &UnitFile<'_>,
    ) -> Vec<SourceRef> {
        if r.source.is_empty() {
            self.push(ctx.error(r.at, "no <source> says where the layout comes from", "add <source document=\"...\" table=\"...\" page=\"...\"/> or <source source=\"...\"/>"));
        }
        let mut sources = Vec::new();
        for s in &r.source {
            if let Some(origin) = self.source_origin(ctx, s, unit) {
                sources.push(SourceRef {
                    origin,
                    table: s.table.clone(),
                    page: s.page.clone(),
                    section: s.section.clone(),
                });
            }
        }
        sources
    }

    /// The document or public source one `<source>` cites.
    fn source_origin(
        &mut self,
        ctx: &Ctx<'_>,
        s: &RawSourceRef,
        unit: &UnitFile<'_>,
    ) -> Option<Arc<SourceOrigin>> {
        let (message, help) = match (&s.document, &s.source) {
            (Some(d), None) => match unit.cat.documents.get(d) {
                Some((pid, _, origin)) if *pid == unit.proc.id => return Some(Arc::clone(origin)),
                Some((pid, _, _)) => (
                    format!(
                        "document `{d}` belongs to processor `{pid}`, not `{}`",
                        unit.proc.id
                    ),
                    "cite a document of this unit's processor",
                ),
                None => (
                    format!("unknown document `{d}`"),
                    "documents are declared in processors.xml",
                ),
            },
            (None, Some(id)) => match unit.cat.public.get(id) {
                Some((_, origin)) => return Some(Arc::clone(origin)),
                None => (
                    format!("unknown source `{id}`"),
                    "public sources are declared in processors.xml",
                ),
            },
            _ => (
                "a <source> names exactly one of document=\"...\" or source=\"...\"".to_string(),
                "split it into two <source> elements",
            ),
        };
        self.push(ctx.error(s.at, message, help));
        None
    }

    /// `reset="..."` on a register agrees with its fields' resets.
    fn register_reset(&mut self, ctx: &Ctx<'_>, r: &RawRegister, reset: u64) {
        let Some(text) = &r.reset else { return };
        match parse_number(text) {
            Some(v) if v == reset => {}
            Some(v) => self.push(ctx.error(
                r.at,
                format!("reset {v:#x} disagrees with the fields' resets, which make {reset:#x}"),
                "fix the register reset or the field resets so they agree",
            )),
            None => self.push(ctx.error(
                r.at,
                format!("reset `{text}` is not a number"),
                "write decimal or 0x-prefixed hex",
            )),
        }
    }

    /// A register's `<note>`s, each of a known kind.
    fn notes(&mut self, ctx: &Ctx<'_>, notes: &[RawNote]) -> Vec<Note> {
        let mut out = Vec::new();
        for n in notes {
            if !["erratum", "source-conflict", "info"].contains(&n.kind.as_str()) {
                self.push(ctx.error(
                    n.at,
                    format!("unknown note kind `{}`", n.kind),
                    "use erratum, source-conflict or info",
                ));
            }
            out.push(Note {
                kind: n.kind.clone(),
                title: n.title.clone(),
                text: normalize_text(&n.text),
            });
        }
        out
    }
}
