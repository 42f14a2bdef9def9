//! What the simulated part does that its documents do not say, as the spec's quirks record
//! it, by default, as the hardware would: it powers up with every `<global-init>` field at
//! its power-on value, and while any such field differs from the value software writes, no
//! box of the uncore counts; counters with a `<saturation>` stop at their top instead of
//! wrapping. The counting model (`uncore.rs`) asks these functions, by box; no box is named.

use pmu_regs::Scope;

use super::domains::{DomainGlobal, FREEZE_ALL};
use super::regs::RegFile;
use crate::boxes::{Boxes, PmuBox};
use crate::quirks::{global_inits, saturation_bit};

/// `regs` as the part powers up: every `<global-init>` field of `boxes`' processor at its
/// power-on value.
pub(crate) fn power_on(boxes: &Boxes, regs: &mut RegFile) {
    for (reg, g) in global_inits(boxes) {
        let raw = regs.get(&reg);
        let value = g.field.insert(reg.name(), raw, g.power_on).unwrap_or(raw);
        regs.put(&reg, value);
    }
}

/// Whether box `b` is held by a `<global-init>` field that still has another value than
/// the one software writes before counting (the uncore's boxes only), or by the freeze_all
/// bit of a discovery domain table that lists its type (a domain's `global_init`).
pub(crate) fn held(boxes: &Boxes, regs: &RegFile, domains: &[DomainGlobal], b: &PmuBox) -> bool {
    let by_field = global_inits(boxes)
        .iter()
        .any(|(reg, g)| g.field.extract(regs.get(reg)) != g.write);
    let by_domain = b.pmu.discovery_type.is_some_and(|t| {
        domains
            .iter()
            .any(|g| g.value & FREEZE_ALL != 0 && g.types.contains(&t))
    });
    b.scope() == Scope::Socket && (by_field || by_domain)
}

/// Whether box `b`'s counters saturate instead of wrapping.
pub(crate) fn saturates(b: &PmuBox) -> bool {
    saturation_bit(b).is_some()
}

/// A counter's new count after `sum` (its count plus the events), where 2^width is `max`:
/// it wraps, or where the box's counters saturate, stops at its top.
pub(crate) fn after_count(b: &PmuBox, sum: u128, max: u128) -> u64 {
    if saturates(b) {
        sum.min(max - 1) as u64
    } else {
        (sum % max) as u64
    }
}
