//! A unit's hardware quirks as data (spec/README.md, "Hardware quirks"): the discovery
//! table's corrections beyond ignoring its entries (`<discovery-count>`: the number of boxes
//! the part has; `<discovery-broken>`: boxes that do not count), `<saturation>`
//! (counters that stop at their top, and the bit at which software resets them) and
//! `<global-init>` (a field software writes before counting because the part powers up with
//! a value there that stops every count). Each carries a declared public source and says
//! in words what it corrects.

use super::super::{normalize_text, parse_number, Validator};
use super::UnitScope;
use crate::model::pmu::{
    ClockEvent, Counter, DiscoveryCount, DiscoveryIgnored, GlobalInit, Saturation,
};
use crate::parse::pmu::{RawDiscoveryIgnored, RawGlobalInit, RawPmu, RawSaturation};

/// What to do about a quirk without a description.
const QUIRK_TEXT: &str =
    "say in the element's text what the hardware does and what software does about it";

/// What to do about a correction of the discovery table on a unit without a discovery type.
const CORRECTION_NEEDS_TYPE: &str =
    "give the <pmu> the discovery-type whose table entries it corrects, or remove the correction";

impl Validator {
    /// A unit's `<saturation>`, `<global-init>`s and `<clock-event>`, each as written.
    pub(super) fn pmu_quirks(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawPmu,
        counters: &[Counter],
    ) -> (Option<Saturation>, Vec<GlobalInit>, Option<ClockEvent>) {
        let saturation = self.pmu_saturation(unit, raw.saturation.as_ref(), counters);
        let global_init = self.pmu_global_init(unit, &raw.global_init);
        let clock_event = self.pmu_clock_event(unit, raw.clock_event.as_ref());
        (saturation, global_init, clock_event)
    }

    /// `<saturation>`: a bit below every counter's width (the usable width that remains),
    /// a declared source and a description.
    pub(super) fn pmu_saturation(
        &mut self,
        unit: &UnitScope<'_>,
        raw: Option<&RawSaturation>,
        counters: &[Counter],
    ) -> Option<Saturation> {
        let raw = raw?;
        let narrowest = counters.iter().map(|c| c.width).min();
        let bit = parse_number(&raw.reset_at_bit).and_then(|v| u32::try_from(v).ok());
        let reset_bit = match (bit, narrowest) {
            (_, None) => {
                self.push(unit.ctx.error(
                    raw.at,
                    "saturation on a unit without counters",
                    "declare the counters in <counters> or <counter>, or remove <saturation>",
                ));
                return None;
            }
            (Some(b), Some(w)) if b > 0 && b < w => b,
            (_, Some(w)) => {
                self.push(unit.ctx.error(
                    raw.at,
                    format!(
                        "saturation reset-at-bit `{}` is not a bit from 1 to {} of the counters",
                        raw.reset_at_bit,
                        w - 1
                    ),
                    "give the bit whose setting makes software reset the counter (Linux resets AMD's UMC counters at bit 47 of 48)",
                ));
                return None;
            }
        };
        let description = self.quirk_text(
            unit,
            raw.at,
            &raw.source,
            &raw.text,
            "saturation",
            QUIRK_TEXT,
        )?;
        Some(Saturation {
            reset_bit,
            source: raw.source.clone(),
            description,
        })
    }

    /// Each `<global-init>`: a writable field of a register of the unit that has one address
    /// (no array, one instance), the values written and found at power-on within the field,
    /// a declared source and a description.
    pub(super) fn pmu_global_init(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &[RawGlobalInit],
    ) -> Vec<GlobalInit> {
        raw.iter()
            .filter_map(|g| self.global_init(unit, g))
            .collect()
    }

    fn global_init(&mut self, unit: &UnitScope<'_>, g: &RawGlobalInit) -> Option<GlobalInit> {
        let Some(register) = unit.registers.iter().position(|r| r.name == g.register) else {
            self.push(unit.ctx.error(
                g.at,
                format!(
                    "global-init names register `{}`, which the unit does not have",
                    g.register
                ),
                "name one of the unit's registers as its <register name> gives it",
            ));
            return None;
        };
        let reg = &unit.registers[register];
        if reg.count != 1 || unit.instances.len() != 1 {
            self.push(unit.ctx.error(
                g.at,
                format!("global-init register `{}` has more than one address", g.register),
                "global initialisation writes one register: use a register of a unit with one instance, not an array",
            ));
            return None;
        }
        let Some(field) = reg.fields.iter().position(|f| *f.name == *g.field) else {
            self.push(unit.ctx.error(
                g.at,
                format!(
                    "global-init names field `{}`, which register {} does not have",
                    g.field, reg.name
                ),
                "name one of the register's fields",
            ));
            return None;
        };
        let f = &reg.fields[field];
        if !f.access.is_writable() {
            self.push(unit.ctx.error(
                g.at,
                format!(
                    "global-init field `{}.{}` is not writable",
                    reg.name, f.name
                ),
                "global initialisation writes the field: choose a field software may write",
            ));
            return None;
        }
        let max = f.max();
        let value = |text: &str| parse_number(text).filter(|v| *v <= max);
        let (Some(write), Some(power_on)) = (value(&g.write), value(&g.power_on)) else {
            self.push(unit.ctx.error(
                g.at,
                format!(
                    "global-init values `{}` and `{}` must both fit the {}-bit field `{}`",
                    g.write,
                    g.power_on,
                    f.width(),
                    f.name
                ),
                "give write= the value written before counting and power-on= the value the part starts with",
            ));
            return None;
        };
        let description =
            self.quirk_text(unit, g.at, &g.source, &g.text, "global-init", QUIRK_TEXT)?;
        Some(GlobalInit {
            register,
            field,
            write,
            power_on,
            source: g.source.clone(),
            description,
        })
    }

    /// `<discovery-count>`: on a unit with a discovery type, a number of boxes from 1 to the
    /// unit's instances, a declared source and a description.
    pub(super) fn pmu_discovery_count(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawPmu,
    ) -> Option<DiscoveryCount> {
        let c = raw.discovery_count.as_ref()?;
        self.needs_discovery_type(unit, raw, c.at, "discovery-count", CORRECTION_NEEDS_TYPE)?;
        let listed = unit.instances.len() as u32;
        let boxes = parse_number(&c.boxes)
            .and_then(|v| u32::try_from(v).ok())
            .filter(|b| (1..=listed).contains(b));
        let Some(boxes) = boxes else {
            self.push(unit.ctx.error(
                c.at,
                format!(
                    "discovery-count boxes `{}` is not a number from 1 to {listed} (the unit's instances)",
                    c.boxes
                ),
                "give the number of boxes the part has (boxes 0 to boxes - 1 of the unit's instances)",
            ));
            return None;
        };
        let description = self.quirk_text(
            unit,
            c.at,
            &c.source,
            &c.text,
            "discovery-count",
            QUIRK_TEXT,
        )?;
        Some(DiscoveryCount {
            boxes,
            source: c.source.clone(),
            description,
        })
    }

    /// `<discovery-broken>`: on a unit with a discovery type and no `<discovery-ignored>`
    /// (a box not used needs no entry ignored), a declared source and a description.
    pub(super) fn pmu_discovery_broken(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawPmu,
    ) -> Option<DiscoveryIgnored> {
        let b: &RawDiscoveryIgnored = raw.discovery_broken.as_ref()?;
        self.needs_discovery_type(unit, raw, b.at, "discovery-broken", CORRECTION_NEEDS_TYPE)?;
        if raw.discovery_ignored.is_some() {
            self.push(unit.ctx.error(
                b.at,
                "discovery-broken and discovery-ignored on one unit",
                "keep one: a broken unit's boxes are not used at all, so its table entries need not be ignored",
            ));
            return None;
        }
        let description = self.quirk_text(
            unit,
            b.at,
            &b.source,
            &b.text,
            "discovery-broken",
            QUIRK_TEXT,
        )?;
        Some(DiscoveryIgnored {
            source: b.source.clone(),
            description,
        })
    }

    /// A correction of the discovery table (`element`) needs the unit's `discovery-type`;
    /// `hint` says what to do without one.
    pub(super) fn needs_discovery_type(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawPmu,
        at: usize,
        element: &str,
        hint: &str,
    ) -> Option<()> {
        if raw.discovery_type.is_some() {
            return Some(());
        }
        self.push(unit.ctx.error(
            at,
            format!("{element} on a unit without a discovery-type"),
            hint,
        ));
        None
    }

    /// A quirk's source (declared in processors.xml) and its description (not empty);
    /// `hint` says what the description should say.
    pub(super) fn quirk_text(
        &mut self,
        unit: &UnitScope<'_>,
        at: usize,
        source: &str,
        text: &str,
        element: &str,
        hint: &str,
    ) -> Option<String> {
        if !self.public_source(unit.ctx, unit.cat, at, source) {
            return None;
        }
        let description = normalize_text(text);
        if description.is_empty() {
            self.push(
                unit.ctx
                    .error(at, format!("{element} has no description"), hint),
            );
            return None;
        }
        Some(description)
    }
}
