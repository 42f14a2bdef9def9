//! A field's `role` and `counters`, checked against its width and access.

use super::super::{parse_counter_list, Ctx, Validator};
use crate::model::pmu::*;
use crate::model::{Access, Repeat};
use crate::parse::RawField;

impl Validator {
    /// A field's `role` and `counters`, checked against its width and access.
    pub(in crate::validate) fn field_role(
        &mut self,
        ctx: &Ctx<'_>,
        f: &RawField,
        width: u32,
        access: Access,
        repeat: Option<&Repeat>,
    ) -> Option<Box<FieldRole>> {
        let Some(text) = &f.role else {
            if f.counters.is_some() {
                self.push(ctx.error(
                    f.at,
                    format!("field `{}` has counters but no role", f.name),
                    "counters says which counters a role field's bits stand for; add role=\"...\"",
                ));
            }
            return None;
        };
        let Some(role) = Role::parse(text) else {
            let known: Vec<&str> = Role::ALL.iter().map(|(_, n)| *n).collect();
            self.push(ctx.error(
                f.at,
                format!("field `{}`: unknown role `{text}`", f.name),
                &format!("use one of: {}", known.join(", ")),
            ));
            return None;
        };
        if let Some(why) = role.access_problem(access) {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: role {} does not fit access {}",
                    f.name,
                    role.as_str(),
                    access.as_str()
                ),
                why,
            ));
            return None;
        }
        let counters = self.role_counters(ctx, f)?;
        if role.is_bitmap() && counters.is_empty() {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: a {} field needs counters=\"...\"",
                    f.name,
                    role.as_str()
                ),
                "name the counter each bit stands for, lowest bit first, e.g. counters=\"0-3\"",
            ));
            return None;
        }
        let problem = width_problem(role, &counters, width, repeat);
        if let Some(p) = problem {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: role {} does not fit its width: {p}",
                    f.name,
                    role.as_str()
                ),
                "give the role to a field of the right width, or correct counters=\"...\" (one entry per bit, or per element of a bit array)",
            ));
            return None;
        }
        Some(Box::new(FieldRole { role, counters }))
    }

    /// `counters="..."` of a role field: an ascending list, or none; `None` (reported) when it
    /// does not parse.
    fn role_counters(&mut self, ctx: &Ctx<'_>, f: &RawField) -> Option<Vec<u32>> {
        let Some(c) = &f.counters else {
            return Some(Vec::new());
        };
        let list = parse_counter_list(c);
        if list.is_none() {
            self.push(ctx.error(
                f.at,
                format!(
                    "field `{}`: counters `{c}` is not an ascending list of counter numbers",
                    f.name
                ),
                "write e.g. counters=\"0-3\" or \"32\" or \"0,2\"",
            ));
        }
        list
    }
}

/// Why a field of `width` bits (a bit array if `repeat`) cannot hold `role` for `counters`:
/// each counter's share of the field is the role's element width, or a value role stands for
/// one counter.
fn width_problem(
    role: Role,
    counters: &[u32],
    width: u32,
    repeat: Option<&Repeat>,
) -> Option<String> {
    let elements = counters.len().max(1) as u32;
    match (role.element_width(), repeat) {
        (Some(ew), Some(rep)) => (rep.element_width != ew
            || elements > rep.max_count
            || (rep.count_cpuid.is_none() && elements != rep.max_count))
            .then(|| format!("its {} elements of {} bit(s) do not give each of the {elements} counter(s) {ew} bit(s)", rep.max_count, rep.element_width)),
        (Some(ew), None) if counters.is_empty() => (width != ew)
            .then(|| format!("the role takes {ew} bit(s), and the field is {width} bits wide")),
        (Some(ew), None) => (width != ew * elements).then(|| {
            format!(
                "{elements} counters of {ew} bit(s) need {} bits, and the field is {width} bits wide",
                ew * elements
            )
        }),
        (None, _) => (elements != 1)
            .then(|| "a multi-bit value role stands for one counter".to_string()),
    }
}
