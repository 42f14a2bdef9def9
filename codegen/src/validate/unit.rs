//! One unit file: its instances and registers (sources, placeholders, reset, notes).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::*;

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

        let mut registers: Vec<Register> = Vec::new();
        let mut first_at: HashMap<&str, usize> = HashMap::new();
        for r in &raw.register {
            if let Some(first) = first_at.get(r.name.as_str()) {
                let (line, _) = parsed.file.position(*first);
                let ctx = Ctx {
                    file: &parsed.file,
                    register: Some(&r.name),
                };
                self.push(ctx.error(
                    r.at,
                    format!("defined a second time (first at line {line})"),
                    "each register is defined once; use count=\"N\" for arrays",
                ));
                continue;
            }
            first_at.insert(&r.name, r.at);
            if let Some(reg) = self.register(&parsed.file, &path, r, &instances, proc, cat) {
                let ctx = Ctx {
                    file: &parsed.file,
                    register: Some(&r.name),
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
        }
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
        };
        Some((unit, routes))
    }

    /// One register: width, space, placeholders, type name, sources, addresses, fields,
    /// reset and notes.
    pub(super) fn register(
        &mut self,
        file: &SourceFile,
        path: &Arc<Path>,
        r: &RawRegister,
        instances: &[Instance],
        proc: &Processor,
        cat: &Catalogue,
    ) -> Option<Register> {
        let ctx = Ctx {
            file,
            register: Some(&r.name),
        };
        let errors_before = self.errors.len();
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
            s => {
                self.push(ctx.error(
                    r.at,
                    format!("unknown address space `{s}`"),
                    "use space=\"msr\" or space=\"pci\"",
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
        if let Some(c) = &r.count_cpuid {
            if !is_cpuid_bits(c) {
                self.push(ctx.error(
                    r.at,
                    format!("count-cpuid `{c}` is not of the form 0AH.EAX[15:8]"),
                    "name the CPUID leaf, register and bits",
                ));
            }
        }

        // Placeholders.
        let multi = instances.len() > 1;
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
        let type_name = rust_type_name(type_name);

        // Sources.
        let mut sources = Vec::new();
        if r.source.is_empty() {
            self.push(ctx.error(r.at, "no <source> says where the layout comes from", "add <source document=\"...\" table=\"...\" page=\"...\"/> or <source source=\"...\"/>"));
        }
        for s in &r.source {
            let origin = match (&s.document, &s.source) {
                (Some(d), None) => match cat.documents.get(d) {
                    Some((pid, _, origin)) if *pid == proc.id => Some(Arc::clone(origin)),
                    Some((pid, _, _)) => {
                        self.push(ctx.error(
                            s.at,
                            format!(
                                "document `{d}` belongs to processor `{pid}`, not `{}`",
                                proc.id
                            ),
                            "cite a document of this unit's processor",
                        ));
                        None
                    }
                    None => {
                        self.push(ctx.error(
                            s.at,
                            format!("unknown document `{d}`"),
                            "documents are declared in processors.xml",
                        ));
                        None
                    }
                },
                (None, Some(id)) => match cat.public.get(id) {
                    Some((_, origin)) => Some(Arc::clone(origin)),
                    None => {
                        self.push(ctx.error(
                            s.at,
                            format!("unknown source `{id}`"),
                            "public sources are declared in processors.xml",
                        ));
                        None
                    }
                },
                _ => {
                    self.push(ctx.error(
                        s.at,
                        "a <source> names exactly one of document=\"...\" or source=\"...\"",
                        "split it into two <source> elements",
                    ));
                    None
                }
            };
            if let Some(origin) = origin {
                sources.push(SourceRef {
                    origin,
                    table: s.table.clone(),
                    page: s.page.clone(),
                    section: s.section.clone(),
                });
            }
        }

        let addresses = self.addresses(&ctx, r, space, width, count, instances, cat);
        let fields = self.fields(&ctx, r, width, cat);

        let reset = fields.iter().fold(0u64, |acc, f| acc | (f.reset << f.lsb));
        if let Some(text) = &r.reset {
            match parse_number(text) {
                Some(v) if v == reset => {}
                Some(v) => self.push(ctx.error(
                    r.at,
                    format!(
                        "reset {v:#x} disagrees with the fields' resets, which make {reset:#x}"
                    ),
                    "fix the register reset or the field resets so they agree",
                )),
                None => self.push(ctx.error(
                    r.at,
                    format!("reset `{text}` is not a number"),
                    "write decimal or 0x-prefixed hex",
                )),
            }
        }

        let mut notes = Vec::new();
        for n in &r.note {
            if !["erratum", "source-conflict", "info"].contains(&n.kind.as_str()) {
                self.push(ctx.error(
                    n.at,
                    format!("unknown note kind `{}`", n.kind),
                    "use erratum, source-conflict or info",
                ));
            }
            notes.push(Note {
                kind: n.kind.clone(),
                title: n.title.clone(),
                text: normalize_text(&n.text),
            });
        }

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
            at: Position::of(file, path, r.at),
        })
    }
}
