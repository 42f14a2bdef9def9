//! Stage 2: raw structs -> the validated model, or every error found.
//!
//! Each rule of spec/README.md ("What the validator rejects") lives here and nowhere else. The
//! validator keeps going after an error so one run lists every problem in every file.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use crate::diagnostics::{Diagnostic, SourceFile};
use crate::model::*;
use crate::parse::*;

mod structure;
use structure::PendingRoutes;

/// Validates a parsed spec directory.
pub fn validate(raw: &RawSpec) -> Result<Spec, Vec<Diagnostic>> {
    let mut v = Validator::default();
    let mut ctx = v.processors(&raw.processors);
    let units: Vec<Option<ResolvedUnit>> =
        raw.units.iter().map(|u| v.resolve_unit(u, &ctx)).collect();
    v.assemble(&mut ctx, units);
    v.finish(ctx)
}

/// Parses and validates the spec directory one unit file at a time, on all cores: a unit's
/// raw structs and text are dropped as soon as it is validated, so memory holds the model,
/// not every file twice.
pub fn load_dir(dir: &std::path::Path) -> Result<Spec, Vec<Diagnostic>> {
    let processors_path = dir.join("processors.xml");
    let processors = SourceFile::read(&processors_path)
        .and_then(|file| {
            parse_document::<RawProcessors>(&file, "processors")
                .map(|raw| ParsedProcessors { file, raw })
        })
        .map_err(|e| vec![e])?;
    let mut v = Validator::default();
    let mut ctx = v.processors(&processors);
    let paths = unit_paths(dir).map_err(|e| vec![e])?;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(paths.len().max(1));
    // (unit, its errors) per path, in path order.
    let mut results: Vec<UnitResult> = (0..paths.len()).map(|_| (None, Vec::new())).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (paths, ctx) = (&paths, &ctx);
                scope.spawn(move || {
                    let mut out = Vec::new();
                    for (i, path) in paths.iter().enumerate().skip(w).step_by(workers) {
                        let mut v = Validator::default();
                        let unit = match SourceFile::read(path).and_then(|file| {
                            parse_document::<RawUnit>(&file, "unit")
                                .map(|raw| ParsedUnit { file, raw })
                        }) {
                            Ok(parsed) => v.resolve_unit(&parsed, ctx),
                            Err(e) => {
                                v.push(e);
                                None
                            }
                        };
                        out.push((i, unit, v.errors));
                    }
                    out
                })
            })
            .collect();
        for h in handles {
            // A worker only panics on a bug in the validator; surface it as such.
            for (i, unit, errors) in h.join().expect("a validator thread panicked") {
                results[i] = (unit, errors);
            }
        }
    });
    let mut units = Vec::with_capacity(results.len());
    for (unit, errors) in results {
        v.errors.extend(errors);
        units.push(unit);
    }
    v.assemble(&mut ctx, units);
    for path in crate::parse::event_paths(dir) {
        match SourceFile::read(&path)
            .and_then(|file| parse_document::<RawEvents>(&file, "events").map(|raw| (file, raw)))
        {
            Ok((file, raw)) => v.events(&file, &raw, &mut ctx),
            Err(e) => v.push(e),
        }
    }
    v.finish(ctx)
}

/// What a unit's counter controls (registers with `ev_sel` and `umask`) can take.
#[derive(Debug, Clone, Copy)]
pub struct EventCapacity {
    /// Largest event select every control takes.
    pub sel_max: u64,
    /// Largest umask every control takes.
    pub umask_max: u64,
    /// Number of counters.
    pub counters: u32,
    /// Every control has the event-select extension bit.
    pub has_ext: bool,
}

impl EventCapacity {
    /// The capacity of `unit`, or `None` if it has no counter control.
    pub fn of(unit: &Unit) -> Option<Self> {
        // A counter control has an event select; a unit mask where the box has one (the
        // PCU's controls have an occupancy select instead).
        let controls: Vec<&Register> = unit
            .registers
            .iter()
            .filter(|r| r.fields.iter().any(|f| f.name.as_ref() == "ev_sel"))
            .collect();
        if controls.is_empty() {
            return None;
        }
        let field_max = |name: &str| {
            controls
                .iter()
                .map(|r| {
                    r.fields
                        .iter()
                        .find(|f| f.name.as_ref() == name)
                        .map_or(0, |f| f.max())
                })
                .min()
                .unwrap_or(0)
        };
        Some(Self {
            sel_max: field_max("ev_sel"),
            umask_max: field_max("umask"),
            counters: controls.iter().map(|r| r.count).max().unwrap_or(1),
            has_ext: controls
                .iter()
                .all(|r| r.fields.iter().any(|f| f.name.as_ref() == "ev_sel_ext")),
        })
    }

    /// Why an event with these facts cannot be counted by the unit, if it cannot.
    pub fn refuse(&self, code: u64, umask: u64, counters: u32, ext: bool) -> Option<String> {
        if code > self.sel_max {
            Some(format!(
                "code {code:#x} does not fit the unit's event select (max {:#x})",
                self.sel_max
            ))
        } else if umask > self.umask_max {
            Some(format!(
                "umask {umask:#x} does not fit the unit's umask (max {:#x})",
                self.umask_max
            ))
        } else if counters == 0 || counters >> self.counters != 0 {
            Some(format!("its counters are not all below {}", self.counters))
        } else if ext && !self.has_ext {
            Some(
                "it needs the event-select extension bit, which this unit's controls do not have"
                    .into(),
            )
        } else {
            None
        }
    }
}

/// "0,1,2,3" or "0-3" or "2" -> a bit mask of counters (public for the importer).
pub fn counters_mask(text: &str) -> Option<u32> {
    parse_counters(text)
}

/// The Rust constant for an Intel event name: `UNC_H_REQUESTS.READS` -> `REQUESTS_READS`.
pub fn event_ident(name: &str) -> String {
    let rest = name
        .strip_prefix("UNC_")
        .and_then(|r| r.split_once('_').map(|(_, rest)| rest))
        .unwrap_or(name);
    let mut ident: String = rest
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert(0, '_');
    }
    ident
}

/// "0,1,2,3" or "0-3" or "2" -> a bit mask of counters.
fn parse_counters(text: &str) -> Option<u32> {
    let mut mask = 0u32;
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if lo > hi || hi >= 32 {
            return None;
        }
        for n in lo..=hi {
            mask |= 1 << n;
        }
    }
    (mask != 0).then_some(mask)
}

/// A validated unit with its processor's index and its routes as written.
type ResolvedUnit = (usize, Unit, Option<PendingRoutes>);

/// A validated unit, or none, and the errors found in its file.
type UnitResult = (Option<ResolvedUnit>, Vec<Diagnostic>);

/// What the processors file declares, which every unit is checked against.
struct SpecContext {
    processors: Vec<Processor>,
    public_sources: Vec<PublicSource>,
    catalogue: Catalogue,
}

#[derive(Default)]
struct Validator {
    errors: Vec<Diagnostic>,
    /// Field names and descriptions seen so far, shared rather than copied.
    strings: HashSet<Arc<str>>,
}

/// The file being validated and the register (if any) errors are about.
struct Ctx<'a> {
    file: &'a SourceFile,
    register: Option<&'a str>,
}

impl Ctx<'_> {
    fn error(&self, at: usize, message: impl Into<String>, help: &str) -> Diagnostic {
        let message = match self.register {
            Some(r) => format!("register {r}: {}", message.into()),
            None => message.into(),
        };
        self.file.error_at(at, message).help(help)
    }
}

/// Parses `0x`-prefixed hex or decimal.
pub fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None => s.parse().ok(),
    }
}

/// Parses `msb:lsb` or a single bit.
fn parse_bits(s: &str) -> Option<(u32, u32)> {
    match s.split_once(':') {
        Some((m, l)) => Some((m.trim().parse().ok()?, l.trim().parse().ok()?)),
        None => {
            let b = s.trim().parse().ok()?;
            Some((b, b))
        }
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_cpuid_bits(s: &str) -> bool {
    // 0AH.EAX[15:8]
    let Some((leaf, rest)) = s.split_once('.') else {
        return false;
    };
    let leaf_ok = leaf.len() > 1
        && leaf.ends_with('H')
        && leaf[..leaf.len() - 1]
            .chars()
            .all(|c| c.is_ascii_hexdigit());
    let reg_ok = ["EAX[", "EBX[", "ECX[", "EDX["]
        .iter()
        .any(|p| rest.starts_with(p))
        && rest.ends_with(']')
        && parse_bits(&rest[4..rest.len() - 1]).is_some_and(|(m, l)| m >= l && m < 32);
    leaf_ok && reg_ok
}

/// Lookup tables built from processors.xml.
struct Catalogue {
    /// document id -> (processor id, document, the origin registers share)
    documents: HashMap<String, (String, Document, Arc<SourceOrigin>)>,
    public: HashMap<String, (PublicSource, Arc<SourceOrigin>)>,
}

impl Validator {
    fn push(&mut self, d: Diagnostic) {
        self.errors.push(d);
    }

    /// The shared copy of `s`.
    fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(existing) = self.strings.get(s) {
            return Arc::clone(existing);
        }
        let new: Arc<str> = Arc::from(s);
        self.strings.insert(Arc::clone(&new));
        new
    }

    fn processors(&mut self, parsed: &ParsedProcessors) -> SpecContext {
        let pf = &parsed.file;
        let ctx = Ctx {
            file: pf,
            register: None,
        };
        let mut processors: Vec<Processor> = Vec::new();
        let mut catalogue = Catalogue {
            documents: HashMap::new(),
            public: HashMap::new(),
        };
        let mut modules = HashSet::new();
        for p in &parsed.raw.processor {
            if processors.iter().any(|q| q.id == p.id) {
                self.push(ctx.error(
                    p.at,
                    format!("duplicate processor id `{}`", p.id),
                    "give each processor its own id",
                ));
            }
            if !is_identifier(&p.module) || !modules.insert(p.module.clone()) {
                self.push(ctx.error(
                    p.at,
                    format!(
                        "processor `{}`: module `{}` is not a unique Rust identifier",
                        p.id, p.module
                    ),
                    "use a unique snake_case module name",
                ));
            }
            let mut documents = Vec::new();
            for d in &p.document {
                let doc = Document {
                    id: d.id.clone(),
                    title: d.title.clone(),
                    reference: d.reference.clone(),
                };
                let origin = Arc::new(SourceOrigin::Document {
                    id: doc.id.clone(),
                    title: doc.title.clone(),
                    reference: doc.reference.clone(),
                });
                if catalogue
                    .documents
                    .insert(d.id.clone(), (p.id.clone(), doc.clone(), origin))
                    .is_some()
                {
                    self.push(ctx.error(
                        d.at,
                        format!("duplicate document id `{}`", d.id),
                        "document ids are global: give each its own",
                    ));
                }
                documents.push(doc);
            }
            processors.push(Processor {
                id: p.id.clone(),
                module: p.module.clone(),
                name: p.name.clone(),
                documents,
                units: Vec::new(),
            });
        }
        let mut public_sources = Vec::new();
        for s in &parsed.raw.source {
            let src = PublicSource {
                id: s.id.clone(),
                title: s.title.clone(),
            };
            let origin = Arc::new(SourceOrigin::Public {
                id: src.id.clone(),
                title: src.title.clone(),
            });
            if catalogue
                .public
                .insert(s.id.clone(), (src.clone(), origin))
                .is_some()
                || catalogue.documents.contains_key(&s.id)
            {
                self.push(ctx.error(
                    s.at,
                    format!("duplicate source id `{}`", s.id),
                    "source and document ids share one namespace: give each its own",
                ));
            }
            public_sources.push(src);
        }
        SpecContext {
            processors,
            public_sources,
            catalogue,
        }
    }

    /// Validates one unit file against the processors; `None` if it has errors.
    fn resolve_unit(&mut self, unit: &ParsedUnit, ctx: &SpecContext) -> Option<ResolvedUnit> {
        let processors = &ctx.processors;
        let Some(pi) = processors.iter().position(|p| p.id == unit.raw.processor) else {
            let known: Vec<&str> = processors.iter().map(|p| p.id.as_str()).collect();
            self.push(
                unit.file
                    .error_at(
                        unit.raw.at,
                        format!(
                            "unit `{}` names unknown processor `{}`",
                            unit.raw.name, unit.raw.processor
                        ),
                    )
                    .help(format!(
                        "use one of the processors in processors.xml: {}",
                        known.join(", ")
                    )),
            );
            return None;
        };
        self.unit(unit, &processors[pi], &ctx.catalogue)
            .map(|(u, routes)| (pi, u, routes))
    }

    /// Adds validated units to their processors (refusing a unit defined twice), then checks
    /// what spans units: addresses.
    fn assemble(&mut self, ctx: &mut SpecContext, units: Vec<Option<ResolvedUnit>>) {
        let mut pending: Vec<Vec<(usize, PendingRoutes)>> = vec![Vec::new(); ctx.processors.len()];
        for (pi, u, routes) in units.into_iter().flatten() {
            let processor = &mut ctx.processors[pi];
            if processor
                .units
                .iter()
                .any(|o| o.name == u.name || o.module == u.module)
            {
                self.push(
                    Diagnostic {
                        path: u.at.path.to_path_buf(),
                        line: u.at.line,
                        column: u.at.column,
                        message: format!(
                            "unit `{}` (module `{}`) is defined twice for processor `{}`",
                            u.name, u.module, processor.id
                        ),
                        help: None,
                    }
                    .help("each unit has one file; merge the two or rename one"),
                );
            } else {
                if let Some(r) = routes {
                    pending[pi].push((processor.units.len(), r));
                }
                processor.units.push(u);
            }
        }
        for p in &ctx.processors {
            self.check_address_collisions(p);
        }
        for (p, pending) in ctx.processors.iter_mut().zip(pending) {
            self.resolve_routes(p, pending);
        }
    }

    /// Checks an events file against its unit and adds its events to the unit.
    fn events(&mut self, file: &SourceFile, raw: &RawEvents, ctx: &mut SpecContext) {
        let err = |at: usize, msg: String, help: &str| file.error_at(at, msg).help(help);
        if !ctx.catalogue.public.contains_key(&raw.source) {
            self.push(err(
                raw.at,
                format!("unknown source `{}`", raw.source),
                "public sources are declared in processors.xml",
            ));
            return;
        }
        let Some(processor) = ctx.processors.iter_mut().find(|p| p.id == raw.processor) else {
            self.push(err(
                raw.at,
                format!("events for unknown processor `{}`", raw.processor),
                "use a processor id from processors.xml",
            ));
            return;
        };
        let units: Vec<String> = processor.units.iter().map(|u| u.name.clone()).collect();
        let Some(unit) = processor.units.iter_mut().find(|u| {
            u.name.eq_ignore_ascii_case(&raw.unit) || u.module.eq_ignore_ascii_case(&raw.unit)
        }) else {
            self.push(err(
                raw.at,
                format!(
                    "events for unknown unit `{}` of {}",
                    raw.unit, raw.processor
                ),
                &format!("the processor's units are: {}", units.join(", ")),
            ));
            return;
        };
        let Some(caps) = EventCapacity::of(unit) else {
            self.push(err(
                raw.at,
                format!(
                    "unit `{}` has no control register with an ev_sel field to take events",
                    unit.name
                ),
                "add the unit's counter control registers first",
            ));
            return;
        };
        let EventCapacity {
            sel_max,
            umask_max,
            counters,
            has_ext,
        } = caps;
        let mut names: HashSet<String> = unit.events.iter().map(|e| e.name.clone()).collect();
        let mut idents: HashSet<String> = unit.events.iter().map(|e| e.ident.clone()).collect();
        for e in &raw.event {
            let ctx_msg = |m: String| format!("event {}: {m}", e.name);
            let code = parse_number(&e.code).filter(|c| *c <= sel_max);
            let umask = parse_number(&e.umask).filter(|u| *u <= umask_max);
            let mask = parse_counters(&e.counters);
            let ext = match e.ext_sel.as_deref() {
                None | Some("0") => false,
                Some("1") => true,
                Some(other) => {
                    self.push(err(
                        e.at,
                        ctx_msg(format!("ext-sel `{other}` is not 0 or 1")),
                        "write ext-sel=\"1\" when the event needs the event-select extension bit",
                    ));
                    continue;
                }
            };
            let ident = event_ident(&e.name);
            let problem = if code.is_none() {
                Some((
                    format!(
                        "code `{}` does not fit the unit's event select (max {sel_max:#x})",
                        e.code
                    ),
                    "check the event code",
                ))
            } else if umask.is_none() {
                Some((
                    format!(
                        "umask `{}` does not fit the unit's umask (max {umask_max:#x})",
                        e.umask
                    ),
                    "check the unit mask",
                ))
            } else if mask.is_none_or(|m| m >> counters != 0) {
                Some((
                    format!(
                        "counters `{}` are not a list of counters below {counters}",
                        e.counters
                    ),
                    "write e.g. counters=\"0,1\" or \"0-3\"",
                ))
            } else if ext && !has_ext {
                Some((
                    "needs the event-select extension bit, which this unit's controls do not have"
                        .to_string(),
                    "check the unit, or the ext-sel attribute",
                ))
            } else if !names.insert(e.name.clone()) {
                Some((
                    "is listed twice".to_string(),
                    "each event appears once per unit",
                ))
            } else if !idents.insert(ident.clone()) {
                Some((
                    format!("its constant name {ident} clashes with another event's"),
                    "rename one of the events",
                ))
            } else {
                None
            };
            if let Some((msg, help)) = problem {
                self.push(err(e.at, ctx_msg(msg), help));
                continue;
            }
            unit.events.push(Event {
                name: e.name.clone(),
                ident,
                code: code.unwrap_or(0) as u8,
                umask: umask.unwrap_or(0) as u8,
                ext_sel: ext,
                counters: mask.unwrap_or(0),
                filters: e.filters.clone().unwrap_or_default(),
                source: raw.source.clone(),
            });
        }
    }

    fn finish(self, ctx: SpecContext) -> Result<Spec, Vec<Diagnostic>> {
        if self.errors.is_empty() {
            Ok(Spec {
                processors: ctx.processors,
                public_sources: ctx.public_sources,
            })
        } else {
            Err(self.errors)
        }
    }

    fn unit(
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
        let known_source = |id: &str| cat.public.contains_key(id);
        let structure = self.unit_pmu(
            &ctx,
            &path,
            raw.pmu.as_ref(),
            &registers,
            &instances,
            &known_source,
        );
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

    fn register(
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

    #[allow(clippy::too_many_arguments)]
    fn addresses(
        &mut self,
        ctx: &Ctx<'_>,
        r: &RawRegister,
        space: Space,
        width: u32,
        count: u32,
        instances: &[Instance],
        cat: &Catalogue,
    ) -> Addresses {
        if let Some(u) = &r.address_unknown {
            if !r.msr.is_empty() || !r.pci.is_empty() {
                self.push(ctx.error(
                    u.at,
                    "<address-unknown> cannot stand beside addresses",
                    "keep either the addresses or <address-unknown>",
                ));
            }
            if u.reason.trim().is_empty() {
                self.push(ctx.error(
                    u.at,
                    "<address-unknown> needs a reason",
                    "say which sources were searched and why none gives the address",
                ));
            }
            return Addresses::Unknown {
                reason: normalize_text(&u.reason),
            };
        }
        // (at, instance, index, stride, location, source)
        struct Entry<'s> {
            at: usize,
            instance: &'s str,
            index: Option<&'s str>,
            stride: Option<&'s str>,
            base: Option<Location>,
            source: &'s str,
        }
        let mut entries = Vec::new();
        for m in &r.msr {
            if space != Space::Msr {
                self.push(ctx.error(
                    m.at,
                    "an <msr> address on a register in PCI space",
                    "use <pci> elements, or set space=\"msr\"",
                ));
            }
            let base = match parse_number(&m.address) {
                Some(a) if a <= u32::MAX as u64 => Some(Location::Msr(a as u32)),
                _ => {
                    self.push(ctx.error(
                        m.at,
                        format!("MSR address `{}` is not a 32-bit number", m.address),
                        "MSR numbers are 32-bit, e.g. 0xC90",
                    ));
                    None
                }
            };
            entries.push(Entry {
                at: m.at,
                instance: &m.instance,
                index: m.index.as_deref(),
                stride: m.stride.as_deref(),
                base,
                source: &m.source,
            });
        }
        for p in &r.pci {
            if space != Space::Pci {
                self.push(ctx.error(
                    p.at,
                    "a <pci> address on a register in MSR space",
                    "use <msr> elements, or set space=\"pci\"",
                ));
            }
            let num = |s: &str, max: u64| parse_number(s).filter(|v| *v <= max);
            let base = match (
                num(&p.device_id, 0xFFFF),
                num(&p.device, 31),
                num(&p.function, 7),
                num(&p.offset, 0xFFF),
            ) {
                (Some(id), Some(dev), Some(func), Some(off)) => {
                    if off % 4 != 0 || off + u64::from(width / 8) > 0x1000 {
                        self.push(ctx.error(p.at, format!("config-space offset {off:#x} is not dword-aligned or runs past 4 KiB"), "PCI registers start on a 4-byte boundary inside the 4 KiB config space"));
                    }
                    Some(Location::Pci {
                        device_id: id as u16,
                        device: dev as u8,
                        function: func as u8,
                        offset: off as u16,
                    })
                }
                _ => {
                    self.push(ctx.error(
                        p.at,
                        "PCI address out of range",
                        "device-id is 16-bit, device 0-31, function 0-7, offset 0-0xFFF",
                    ));
                    None
                }
            };
            entries.push(Entry {
                at: p.at,
                instance: &p.instance,
                index: p.index.as_deref(),
                stride: p.stride.as_deref(),
                base,
                source: &p.source,
            });
        }
        if entries.is_empty() {
            self.push(ctx.error(r.at, "the register has no address", "add <msr>/<pci> elements, or <address-unknown reason=\"...\"/> if no source gives one"));
        }

        let mut seen: BTreeMap<(usize, u32), usize> = BTreeMap::new();
        let mut addresses = Vec::new();
        for e in &entries {
            if !cat.public.contains_key(e.source) {
                self.push(ctx.error(
                    e.at,
                    format!("unknown source `{}`", e.source),
                    "public sources are declared in processors.xml",
                ));
            }
            let Some(inst) = instances.iter().position(|i| i.name == e.instance) else {
                let names: Vec<&str> = instances.iter().map(|i| i.name.as_str()).collect();
                self.push(ctx.error(
                    e.at,
                    format!("unknown instance `{}`", e.instance),
                    &format!("the unit's instances are: {}", names.join(", ")),
                ));
                continue;
            };
            let indices: Vec<u32> = match (e.index, e.stride) {
                (Some(_), Some(_)) => {
                    self.push(ctx.error(
                        e.at,
                        "an address has both index and stride",
                        "use index=\"k\" for one element, or stride for all",
                    ));
                    continue;
                }
                (Some(i), None) => match parse_number(i) {
                    Some(i) if i < u64::from(count) => vec![i as u32],
                    _ => {
                        self.push(ctx.error(
                            e.at,
                            format!("index `{i}` is outside the array (count {count})"),
                            "indices run from 0 to count-1",
                        ));
                        continue;
                    }
                },
                (None, stride) => {
                    if count > 1 && stride.is_none() {
                        self.push(ctx.error(e.at, format!("the register is an array of {count}, but this address has neither stride nor index"), "add stride=\"N\" (index n at address + n*N) or one element per index"));
                        continue;
                    }
                    (0..count).collect()
                }
            };
            let stride = match e.stride.map(parse_number) {
                None => 0,
                Some(Some(s)) if s > 0 => s,
                Some(_) => {
                    self.push(ctx.error(
                        e.at,
                        "stride must be a positive number",
                        "stride is the distance between consecutive elements",
                    ));
                    continue;
                }
            };
            let Some(base) = e.base else { continue };
            let source: Arc<str> = Arc::from(e.source);
            for n in indices {
                if let Some(_prev) = seen.insert((inst, n), e.at) {
                    self.push(ctx.error(
                        e.at,
                        format!("instance {} index {n} has two addresses", e.instance),
                        "give each instance and index exactly one address",
                    ));
                    continue;
                }
                let delta = stride * u64::from(n);
                let location = match base {
                    Location::Msr(a) => match u32::try_from(u64::from(a) + delta) {
                        Ok(a) => Location::Msr(a),
                        Err(_) => continue,
                    },
                    Location::Pci {
                        device_id,
                        device,
                        function,
                        offset,
                    } => {
                        let off = u64::from(offset) + delta;
                        if off + u64::from(width / 8) > 0x1000 {
                            self.push(ctx.error(e.at, format!("index {n} lands at offset {off:#x}, past the 4 KiB config space"), "check the stride"));
                            continue;
                        }
                        Location::Pci {
                            device_id,
                            device,
                            function,
                            offset: off as u16,
                        }
                    }
                };
                addresses.push(Address {
                    instance: inst,
                    index: n,
                    location,
                    source: Arc::clone(&source),
                });
            }
        }
        if !entries.is_empty() {
            for (ii, inst) in instances.iter().enumerate() {
                let missing: Vec<String> = (0..count)
                    .filter(|n| !seen.contains_key(&(ii, *n)))
                    .map(|n| n.to_string())
                    .collect();
                if !missing.is_empty() {
                    let what = if count > 1 {
                        format!(
                            "instance {} index {} has no address",
                            inst.name,
                            missing.join(", ")
                        )
                    } else {
                        format!("instance {} has no address", inst.name)
                    };
                    self.push(ctx.error(r.at, what, "every instance (and index) needs an address, or the register gets <address-unknown>"));
                }
            }
        }
        addresses.sort_by_key(|a| (a.instance, a.index));
        addresses.shrink_to_fit();
        Addresses::Known(addresses)
    }

    fn fields(
        &mut self,
        ctx: &Ctx<'_>,
        r: &RawRegister,
        width: u32,
        cat: &Catalogue,
    ) -> Vec<Field> {
        let mut fields: Vec<(usize, Field)> = Vec::new();
        // Bits of fields rejected for other reasons still count as covered, so that one bad
        // attribute does not also report a gap.
        let mut rejected_bits: Vec<(u32, u32)> = Vec::new();
        let mut names: HashMap<&str, usize> = HashMap::new();
        if r.field.is_empty() {
            self.push(ctx.error(
                r.at,
                "the register has no fields",
                "describe every bit, reserved ones included",
            ));
        }
        for f in &r.field {
            let Some((msb, lsb)) = parse_bits(&f.bits) else {
                self.push(ctx.error(
                    f.at,
                    format!(
                        "field `{}`: bits `{}` is not `msb:lsb` or a bit number",
                        f.name, f.bits
                    ),
                    "write e.g. bits=\"7:0\" or bits=\"22\"",
                ));
                continue;
            };
            if msb < lsb {
                self.push(ctx.error(
                    f.at,
                    format!(
                        "field `{}`: bits {msb}:{lsb} are in the wrong order",
                        f.name
                    ),
                    "write the most significant bit first: msb:lsb",
                ));
                if lsb < width {
                    rejected_bits.push((lsb, msb));
                }
                continue;
            }
            if msb >= width {
                self.push(ctx.error(
                    f.at,
                    format!(
                        "field `{}`: bits {} lie outside the {width}-bit register",
                        f.name, f.bits
                    ),
                    "a field's bits must be below the register width",
                ));
                if lsb < width {
                    rejected_bits.push((width - 1, lsb));
                }
                continue;
            }
            let Some(access) = Access::parse(&f.access) else {
                let kinds: Vec<&str> = Access::ALL.iter().map(|(_, n)| *n).collect();
                self.push(ctx.error(
                    f.at,
                    format!("field `{}`: unknown access `{}`", f.name, f.access),
                    &format!("use one of: {}", kinds.join(", ")),
                ));
                rejected_bits.push((msb, lsb));
                continue;
            };
            let fwidth = msb - lsb + 1;
            let reset = match parse_number(&f.reset) {
                Some(v) if v <= low_mask(fwidth) => v,
                Some(v) => {
                    self.push(ctx.error(
                        f.at,
                        format!(
                            "field `{}`: reset {v:#x} does not fit in {fwidth} bit{}",
                            f.name,
                            if fwidth == 1 { "" } else { "s" }
                        ),
                        "a field's reset is its own value, not shifted into register position",
                    ));
                    rejected_bits.push((msb, lsb));
                    continue;
                }
                None => {
                    self.push(ctx.error(
                        f.at,
                        format!("field `{}`: reset `{}` is not a number", f.name, f.reset),
                        "write decimal or 0x-prefixed hex",
                    ));
                    rejected_bits.push((msb, lsb));
                    continue;
                }
            };
            if !access.is_placeholder() {
                if let Some(_prev) = names.insert(&f.name, f.at) {
                    self.push(ctx.error(
                        f.at,
                        format!("duplicate field name `{}`", f.name),
                        "only reserved fields (rsv, rv, ig) may share a name",
                    ));
                }
                if f.description.as_deref().is_none_or(|d| d.trim().is_empty()) {
                    self.push(ctx.error(
                        f.at,
                        format!("field `{}` has no description", f.name),
                        "describe what the field does, in our own words",
                    ));
                }
                let snake = snake_case(&f.name.replace("{n}", ""));
                if !is_identifier(&snake) {
                    self.push(ctx.error(
                        f.at,
                        format!("field name `{}` cannot become a Rust identifier", f.name),
                        "use letters, digits and `_`",
                    ));
                }
            }
            if let Some(s) = &f.source {
                if !cat.public.contains_key(s) && !cat.documents.contains_key(s) {
                    self.push(ctx.error(
                        f.at,
                        format!("field `{}`: unknown source `{s}`", f.name),
                        "sources and documents are declared in processors.xml",
                    ));
                }
            }
            let repeat = match (&f.repeat, &f.count_cpuid) {
                (None, None) => {
                    if f.name.contains("{n}") {
                        self.push(ctx.error(
                            f.at,
                            format!("field `{}` has {{n}} but no repeat", f.name),
                            "bit arrays say repeat=\"element width\"",
                        ));
                    }
                    None
                }
                (None, Some(_)) => {
                    self.push(ctx.error(
                        f.at,
                        format!("field `{}`: count-cpuid without repeat", f.name),
                        "count-cpuid sizes a bit array; add repeat=\"1\"",
                    ));
                    None
                }
                (Some(rep), cpuid) => match parse_number(rep) {
                    Some(ew) if ew > 0 && u64::from(fwidth) % ew == 0 => {
                        if !f.name.contains("{n}") {
                            self.push(ctx.error(
                                f.at,
                                format!("bit-array field `{}` needs {{n}} in its name", f.name),
                                "write e.g. PMC{n}_EN",
                            ));
                        }
                        if let Some(c) = cpuid.as_deref().filter(|c| !is_cpuid_bits(c)) {
                            self.push(ctx.error(
                                f.at,
                                format!("count-cpuid `{c}` is not of the form 0AH.EAX[15:8]"),
                                "name the CPUID leaf, register and bits",
                            ));
                        }
                        if access.is_placeholder() {
                            self.push(ctx.error(
                                f.at,
                                format!("reserved field `{}` cannot be a bit array", f.name),
                                "reserved bits need no repeat",
                            ));
                        }
                        Some(Box::new(Repeat {
                            element_width: ew as u32,
                            max_count: fwidth / ew as u32,
                            count_cpuid: cpuid.clone(),
                        }))
                    }
                    _ => {
                        self.push(ctx.error(
                            f.at,
                            format!(
                                "field `{}`: repeat `{rep}` does not divide its {fwidth} bits",
                                f.name
                            ),
                            "repeat is the width of one element",
                        ));
                        None
                    }
                },
            };
            let mut values: Vec<EnumValue> = Vec::new();
            for v in &f.value {
                match parse_number(&v.value) {
                    Some(n) if n <= low_mask(fwidth) => {
                        if values.iter().any(|o| o.value == n || o.name == v.name) {
                            self.push(ctx.error(
                                v.at,
                                format!(
                                    "field `{}`: value {} (`{}`) is listed twice",
                                    f.name, v.value, v.name
                                ),
                                "each enumerated value and name appears once",
                            ));
                        }
                        values.push(EnumValue {
                            value: n,
                            name: v.name.clone(),
                            description: v.description.clone(),
                        });
                    }
                    _ => self.push(ctx.error(
                        v.at,
                        format!(
                            "field `{}`: value `{}` does not fit the field",
                            f.name, v.value
                        ),
                        "enumerated values lie within the field's width",
                    )),
                }
            }
            fields.push((
                f.at,
                Field {
                    name: self.intern(&f.name),
                    lsb,
                    msb,
                    access,
                    reset,
                    description: self.intern(
                        &f.description
                            .as_deref()
                            .map(normalize_text)
                            .unwrap_or_default(),
                    ),
                    values,
                    role: self.field_role(ctx, f, fwidth, access, repeat.as_deref()),
                    repeat,
                    source: f.source.as_deref().map(Arc::from),
                },
            ));
        }

        // Each bit exactly once: report overlaps pairwise, then gaps as ranges.
        let mut owner: Vec<Option<usize>> = vec![None; width as usize];
        for (i, (at, f)) in fields.iter().enumerate() {
            let mut clash: Option<(usize, u32, u32)> = None;
            for bit in f.lsb..=f.msb {
                match owner[bit as usize] {
                    Some(j) => {
                        clash = Some(match clash {
                            Some((j0, lo, _)) if j0 == j => (j, lo, bit),
                            None => (j, bit, bit),
                            Some(c) => c,
                        })
                    }
                    None => owner[bit as usize] = Some(i),
                }
            }
            if let Some((j, lo, hi)) = clash {
                let other = &fields[j].1;
                let bits = if lo == hi {
                    lo.to_string()
                } else {
                    format!("{hi}:{lo}")
                };
                self.push(ctx.error(*at, format!("field `{}` ({}) overlaps field `{}` ({}) at bit{} {bits}", f.name, f.bits_text(), other.name, other.bits_text(), if lo == hi { "" } else { "s" }), "each bit belongs to exactly one field; where the source table lists a range twice, decide which row is right and record a <note kind=\"erratum\">"));
            }
        }
        for (msb, lsb) in rejected_bits {
            for b in lsb..=msb {
                owner[b as usize].get_or_insert(usize::MAX);
            }
        }
        let mut bit = 0;
        while bit < width {
            if owner[bit as usize].is_none() {
                let start = bit;
                while bit < width && owner[bit as usize].is_none() {
                    bit += 1;
                }
                let end = bit - 1;
                let bits = if start == end {
                    format!("bit {start} is")
                } else {
                    format!("bits {end}:{start} are")
                };
                self.push(ctx.error(r.at, format!("{bits} not covered by any field"), "describe every bit; reserved bits are fields too (access=\"rsv\", \"rv\" or \"ig\")"));
            }
            bit += 1;
        }
        let mut fields: Vec<Field> = fields.into_iter().map(|(_, f)| f).collect();
        fields.sort_by_key(|f| std::cmp::Reverse(f.lsb));
        fields.shrink_to_fit();
        fields
    }

    fn check_address_collisions(&mut self, p: &Processor) {
        let mut seen: HashMap<Location, (String, String)> = HashMap::new();
        for u in &p.units {
            for r in &u.registers {
                let Addresses::Known(addrs) = &r.addresses else {
                    continue;
                };
                for a in addrs {
                    // A 64-bit PCI register covers two dwords; both must be free.
                    let mut locations = vec![a.location];
                    if let (
                        Location::Pci {
                            device_id,
                            device,
                            function,
                            offset,
                        },
                        64,
                    ) = (a.location, r.width)
                    {
                        locations.push(Location::Pci {
                            device_id,
                            device,
                            function,
                            offset: offset + 4,
                        });
                    }
                    for loc in locations {
                        if let Some((other, other_file)) = seen.get(&loc) {
                            self.push(
                                Diagnostic {
                                    path: r.at.path.to_path_buf(),
                                    line: r.at.line,
                                    column: r.at.column,
                                    message: format!("register {}: {} is at {loc}, which {other} ({other_file}) already uses", r.name, r.address_name(u, a)),
                                    help: None,
                                }
                                .help("two registers cannot share an address in one space; check both sources"),
                            );
                        } else {
                            seen.insert(loc, (r.address_name(u, a), u.file.clone()));
                        }
                    }
                }
            }
        }
    }
}

/// Collapses runs of whitespace (XML text is indented) into single spaces.
pub fn normalize_text(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `W_MSR_PMON_EVT_SEL` -> `WMsrPmonEvtSel`.
pub fn camel_case(s: &str) -> String {
    s.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let lower = p.to_ascii_lowercase();
            let mut c = lower.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// `PERFEVTSEL_InUse` -> `perfevtsel_in_use`; `FW_WRITE` -> `fw_write`.
pub fn snake_case(s: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1);
            let boundary = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase()));
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    let collapsed: Vec<&str> = out.split('_').filter(|p| !p.is_empty()).collect();
    collapsed.join("_")
}

/// The path of a unit file relative to the spec directory: its last two components.
fn relative_spec_path(path: &std::path::Path) -> String {
    let parts: Vec<String> = path
        .components()
        .rev()
        .take(2)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}
