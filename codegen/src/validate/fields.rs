//! A register's fields: bits, access, reset, values, bit arrays and roles, tiling the
//! register exactly.

use std::collections::HashMap;
use std::sync::Arc;

use super::unit::RegisterScope;
use super::*;

/// Why a field was left out, the error reported: the bit ranges (high, low) it still covers
/// within the register, so that one bad attribute does not also report a gap.
struct Dropped(Vec<(u32, u32)>);

impl Validator {
    /// A register's fields, most significant first, each bit covered exactly once.
    pub(super) fn fields(&mut self, reg: &RegisterScope<'_>) -> Vec<Field> {
        let r = reg.raw;
        let mut fields: Vec<(usize, Field)> = Vec::new();
        // Bits of fields rejected for other reasons still count as covered.
        let mut rejected_bits: Vec<(u32, u32)> = Vec::new();
        let mut names: HashMap<&str, usize> = HashMap::new();
        if r.field.is_empty() {
            self.push(reg.ctx.error(
                r.at,
                "the register has no fields",
                "describe every bit, reserved ones included",
            ));
        }
        for f in &r.field {
            match self.field(reg, f, &mut names) {
                Ok(field) => fields.push((f.at, field)),
                Err(Dropped(bits)) => rejected_bits.extend(bits),
            }
        }
        let mut owner = self.overlaps(reg, &fields);
        for (msb, lsb) in rejected_bits {
            let msb = msb.min(reg.width - 1);
            for b in lsb..=msb {
                owner[b as usize].get_or_insert(usize::MAX);
            }
        }
        self.gaps(reg, &owner);
        let mut fields: Vec<Field> = fields.into_iter().map(|(_, f)| f).collect();
        // By the top bit of each field's highest range: a field of several ranges sits where it starts.
        fields.sort_by_key(|f| std::cmp::Reverse(f.ranges()[0].msb));
        fields.shrink_to_fit();
        fields
    }

    /// One field; `names` holds the names of the register's named fields so far.
    fn field<'r>(
        &mut self,
        reg: &RegisterScope<'_>,
        f: &'r RawField,
        names: &mut HashMap<&'r str, usize>,
    ) -> Result<Field, Dropped> {
        let ctx = reg.ctx;
        let ranges = self.field_bits(reg, f)?;
        let covered = || Dropped(ranges.iter().map(|r| (r.msb, r.lsb)).collect());
        let Some(access) = Access::parse(&f.access) else {
            let kinds: Vec<&str> = Access::ALL.iter().map(|(_, n)| *n).collect();
            self.push(ctx.error(
                f.at,
                format!("field `{}`: unknown access `{}`", f.name, f.access),
                &format!("use one of: {}", kinds.join(", ")),
            ));
            return Err(covered());
        };
        let fwidth: u32 = ranges.iter().map(BitRange::width).sum();
        let reset = self.field_reset(ctx, f, fwidth).ok_or_else(covered)?;
        if !access.is_placeholder() {
            self.field_naming(ctx, f, names);
        }
        if let Some(s) = &f.source {
            if !reg.cat.public.contains_key(s) && !reg.cat.documents.contains_key(s) {
                self.push(ctx.error(
                    f.at,
                    format!("field `{}`: unknown source `{s}`", f.name),
                    "sources and documents are declared in processors.xml",
                ));
            }
        }
        let repeat = self.field_repeat(ctx, f, fwidth, access);
        if repeat.is_some() && ranges.len() > 1 {
            self.push(ctx.error(
                f.at,
                format!("bit-array field `{}` is made of several bit ranges", f.name),
                "a bit array is one range of equal elements; write its bits as msb:lsb",
            ));
        }
        if f.counters.is_some() && ranges.len() > 1 {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}` is made of several bit ranges and names counters",
                    f.name
                ),
                "a field whose bits stand for several counters is one range; split it into one field per range",
            ));
        }
        let lowest = ranges[ranges.len() - 1];
        let values = self.field_values(ctx, f, fwidth);
        let count_default = self.field_count_default(ctx, f, fwidth, access);
        let description = f.description.as_deref().map(normalize_text);
        Ok(Field {
            name: self.intern(&f.name),
            lsb: lowest.lsb,
            msb: lowest.msb,
            split: (ranges.len() > 1).then(|| ranges.into_boxed_slice()),
            access,
            reset,
            description: self.intern(&description.unwrap_or_default()),
            values,
            role: self.field_role(ctx, f, fwidth, access, repeat.as_deref()),
            repeat,
            source: f.source.as_deref().map(Arc::from),
            count_default,
        })
    }

    /// `count-default`: `all-ones` or a number that fits the field, on a writable field
    /// that plays no role (a role field is set from the event select, and a default there
    /// would hide the event's own value). Whether the register is a counter's control is the
    /// structure's to check.
    fn field_count_default(
        &mut self,
        ctx: &Ctx<'_>,
        f: &RawField,
        fwidth: u32,
        access: Access,
    ) -> Option<CountDefault> {
        let text = f.count_default.as_deref()?;
        let problem = if !access.is_writable() {
            Some((
                format!(
                    "field `{}`: count-default on a field of access {}",
                    f.name,
                    access.as_str()
                ),
                "only a field software writes can be given a value for counting; drop count-default",
            ))
        } else {
            f.role.as_ref().map(|role| {
                (
                    format!("field `{}`: count-default on a field with role {role}", f.name),
                    "a role field is set from the event; count-default is for the filters no role covers (thread and slice masks)",
                )
            })
        };
        if let Some((message, help)) = problem {
            self.push(ctx.error(f.at, message, help));
            return None;
        }
        if text.trim() == "all-ones" {
            return Some(CountDefault::AllOnes);
        }
        match parse_number(text) {
            Some(v) if v <= low_mask(fwidth) => Some(CountDefault::Value(v)),
            Some(v) => {
                self.push(ctx.error(
                    f.at,
                    format!(
                        "field `{}`: count-default {v:#x} does not fit in {fwidth} bit{}",
                        f.name,
                        if fwidth == 1 { "" } else { "s" }
                    ),
                    "give the field's own value, not shifted into register position, or all-ones",
                ));
                None
            }
            None => {
                self.push(ctx.error(
                    f.at,
                    format!("field `{}`: count-default `{text}` is not a number", f.name),
                    "write all-ones, or decimal or 0x-prefixed hex",
                ));
                None
            }
        }
    }

    /// `bits="msb:lsb"` (or one bit), or several such ranges, most significant first
    /// (`35:32,7:0`): each in order and inside the register, the ranges disjoint, descending
    /// and not adjacent. Returns the ranges, most significant first.
    fn field_bits(
        &mut self,
        reg: &RegisterScope<'_>,
        f: &RawField,
    ) -> Result<Vec<BitRange>, Dropped> {
        let mut ranges = Vec::new();
        let mut dropped = None;
        for text in f.bits.split(',') {
            match self.field_range(reg, f, text) {
                Ok(r) => ranges.push(r),
                Err(Dropped(bits)) => {
                    dropped.get_or_insert_with(Vec::new).extend(bits);
                }
            }
        }
        if let Some(mut bits) = dropped {
            bits.extend(ranges.iter().map(|r| (r.msb, r.lsb)));
            return Err(Dropped(bits));
        }
        for pair in ranges.windows(2) {
            if let Some(help) = Self::range_order(pair[0], pair[1]) {
                self.push(reg.ctx.error(
                    f.at,
                    format!(
                        "field `{}`: bit ranges {} and {} {}",
                        f.name,
                        pair[0].text(),
                        pair[1].text(),
                        help.0
                    ),
                    help.1,
                ));
                let covered = ranges.iter().map(|r| (r.msb, r.lsb)).collect();
                return Err(Dropped(covered));
            }
        }
        Ok(ranges)
    }

    /// What is wrong with range `b` following range `a` in a split field (what, and what to
    /// do), or `None` when `b` lies wholly below `a` with a gap between.
    fn range_order(a: BitRange, b: BitRange) -> Option<(&'static str, &'static str)> {
        if a.lsb <= b.msb && b.lsb <= a.msb {
            Some((
                "overlap",
                "a field's ranges are disjoint: each register bit belongs to one range",
            ))
        } else if a.msb < b.lsb {
            Some((
                "are out of order",
                "list a field's ranges most significant first: the value is their concatenation in that order",
            ))
        } else if a.lsb == b.msb + 1 {
            Some((
                "are adjacent",
                "adjacent ranges are one range: write them as one msb:lsb",
            ))
        } else {
            None
        }
    }

    /// One range, `msb:lsb` or a bit: in order and inside the register.
    fn field_range(
        &mut self,
        reg: &RegisterScope<'_>,
        f: &RawField,
        text: &str,
    ) -> Result<BitRange, Dropped> {
        let (ctx, width) = (reg.ctx, reg.width);
        let Some((msb, lsb)) = parse_bits(text) else {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: bits `{}` is not `msb:lsb` or a bit number",
                    f.name, f.bits
                ),
                "write e.g. bits=\"7:0\" or bits=\"22\" (several ranges: bits=\"35:32,7:0\")",
            ));
            return Err(Dropped(Vec::new()));
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
            return Err(Dropped(
                (lsb < width).then_some((lsb, msb)).into_iter().collect(),
            ));
        }
        if msb >= width {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: bits {} lie outside the {width}-bit register",
                    f.name, text
                ),
                "a field's bits must be below the register width",
            ));
            return Err(Dropped(
                (lsb < width)
                    .then_some((width - 1, lsb))
                    .into_iter()
                    .collect(),
            ));
        }
        Ok(BitRange { msb, lsb })
    }

    /// The field's own reset value, which fits its width.
    fn field_reset(&mut self, ctx: &Ctx<'_>, f: &RawField, fwidth: u32) -> Option<u64> {
        match parse_number(&f.reset) {
            Some(v) if v <= low_mask(fwidth) => Some(v),
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
                None
            }
            None => {
                self.push(ctx.error(
                    f.at,
                    format!("field `{}`: reset `{}` is not a number", f.name, f.reset),
                    "write decimal or 0x-prefixed hex",
                ));
                None
            }
        }
    }

    /// A named (not reserved) field: a name of its own that becomes a Rust identifier, and a
    /// description.
    fn field_naming<'r>(
        &mut self,
        ctx: &Ctx<'_>,
        f: &'r RawField,
        names: &mut HashMap<&'r str, usize>,
    ) {
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

    /// A bit array (`repeat`, `count-cpuid`, `{n}` in the name), or none.
    fn field_repeat(
        &mut self,
        ctx: &Ctx<'_>,
        f: &RawField,
        fwidth: u32,
        access: Access,
    ) -> Option<Box<Repeat>> {
        let Some(rep) = &f.repeat else {
            let (message, help) = match &f.count_cpuid {
                None if f.name.contains("{n}") => (
                    format!("field `{}` has {{n}} but no repeat", f.name),
                    "bit arrays say repeat=\"element width\"",
                ),
                None => return None,
                Some(_) => (
                    format!("field `{}`: count-cpuid without repeat", f.name),
                    "count-cpuid sizes a bit array; add repeat=\"1\"",
                ),
            };
            self.push(ctx.error(f.at, message, help));
            return None;
        };
        let Some(ew) = parse_number(rep).filter(|&ew| ew > 0 && u64::from(fwidth) % ew == 0) else {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: repeat `{rep}` does not divide its {fwidth} bits",
                    f.name
                ),
                "repeat is the width of one element",
            ));
            return None;
        };
        if !f.name.contains("{n}") {
            self.push(ctx.error(
                f.at,
                format!("bit-array field `{}` needs {{n}} in its name", f.name),
                "write e.g. PMC{n}_EN",
            ));
        }
        if let Some(c) = f.count_cpuid.as_deref().filter(|c| !is_cpuid_bits(c)) {
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
            count_cpuid: f.count_cpuid.clone(),
        }))
    }

    /// The field's enumerated values: within its width, each value and name once.
    fn field_values(&mut self, ctx: &Ctx<'_>, f: &RawField, fwidth: u32) -> Vec<EnumValue> {
        let mut values: Vec<EnumValue> = Vec::new();
        for v in &f.value {
            let Some(n) = parse_number(&v.value).filter(|&n| n <= low_mask(fwidth)) else {
                self.push(ctx.error(
                    v.at,
                    format!(
                        "field `{}`: value `{}` does not fit the field",
                        f.name, v.value
                    ),
                    "enumerated values lie within the field's width",
                ));
                continue;
            };
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
        values
    }

    /// Each bit in one field: overlaps reported pairwise. Returns which field owns each bit.
    fn overlaps(
        &mut self,
        reg: &RegisterScope<'_>,
        fields: &[(usize, Field)],
    ) -> Vec<Option<usize>> {
        let mut owner: Vec<Option<usize>> = vec![None; reg.width as usize];
        for (i, (at, f)) in fields.iter().enumerate() {
            let mut clash: Option<(usize, u32, u32)> = None;
            for bit in f.ranges().iter().flat_map(|r| r.lsb..=r.msb) {
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
                self.push(reg.ctx.error(*at, format!("field `{}` ({}) overlaps field `{}` ({}) at bit{} {bits}", f.name, f.bits_text(), other.name, other.bits_text(), if lo == hi { "" } else { "s" }), "each bit belongs to exactly one field; where the source table lists a range twice, decide which row is right and record a <note kind=\"erratum\">"));
            }
        }
        owner
    }

    /// Bits no field covers, reported as ranges.
    fn gaps(&mut self, reg: &RegisterScope<'_>, owner: &[Option<usize>]) {
        let width = reg.width;
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
                self.push(reg.ctx.error(reg.raw.at, format!("{bits} not covered by any field"), "describe every bit; reserved bits are fields too (access=\"rsv\", \"rv\" or \"ig\")"));
            }
            bit += 1;
        }
    }
}
