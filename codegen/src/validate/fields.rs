//! A register's fields: bits, access, reset, values, bit arrays and roles, tiling the
//! register exactly.

use std::collections::HashMap;
use std::sync::Arc;

use super::*;

impl Validator {
    /// A register's fields, most significant first, each bit covered exactly once.
    pub(super) fn fields(
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
}
