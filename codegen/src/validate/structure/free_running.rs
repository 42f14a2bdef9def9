//! Free-running counters (spec/README.md, "Free-running counters"): read-only counting bits,
//! and the event the kernel's perf driver publishes for each (`perf-name`, `perf-umask`,
//! `perf-scale`, `perf-unit`), which only a free-running counter may carry and which must
//! select one counter of the box.

use super::super::{parse_number, Validator};
use super::counters::CounterSpec;
use super::UnitScope;
use crate::model::pmu::{Counter, CounterKind, CounterPerf};
use crate::model::{Access, Field, Register};

impl Validator {
    /// A free-running counter cannot be loaded: its counting bits are read-only (ro-v). A
    /// counter with a control is loaded and restored by software: its bits are rw-v (the
    /// role's own rule).
    pub(super) fn count_access(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
        kind: CounterKind,
        creg: &Register,
        count: &Field,
    ) {
        let problem = match (kind, count.access) {
            (CounterKind::FreeRunning, Access::RoV) => return,
            (CounterKind::FreeRunning, a) => format!(
                "the free-running counter {} has count bits `{}` that are {}, not read-only",
                creg.name,
                count.name,
                a.as_str()
            ),
            (_, Access::RwV) => return,
            (k, a) => format!(
                "the {} counter {} has count bits `{}` that are {}: software loads and restores them",
                k.as_str(),
                creg.name,
                count.name,
                a.as_str()
            ),
        };
        let hint = if kind == CounterKind::FreeRunning {
            "a free-running counter has no control and cannot be loaded: access=\"ro-v\""
        } else {
            "give its count field access=\"rw-v\", or say kind=\"free-running\""
        };
        self.push(unit.ctx.error(s.at, problem, hint));
    }

    /// `perf-name`, `perf-umask`, `perf-scale` and `perf-unit` of a `<counter>`: together,
    /// on a free-running counter only, the umask a byte, the scale a positive number.
    pub(super) fn counter_perf(
        &mut self,
        unit: &UnitScope<'_>,
        s: &CounterSpec,
        kind: CounterKind,
        creg: &Register,
    ) -> Option<CounterPerf> {
        let raw = s.perf?;
        let given = [
            &raw.perf_name,
            &raw.perf_umask,
            &raw.perf_scale,
            &raw.perf_unit,
        ];
        if given.iter().all(|a| a.is_none()) {
            return None;
        }
        let mut error = |message: String, hint: &str| {
            self.push(unit.ctx.error(s.at, message, hint));
            None
        };
        if kind != CounterKind::FreeRunning {
            return error(
                format!(
                    "the {} counter {} has a perf event (perf-name, perf-umask, ...)",
                    kind.as_str(),
                    creg.name
                ),
                "only a free-running counter is selected by a fixed perf event; the others are \
                 programmed through their control",
            );
        }
        let (Some(name), Some(umask)) = (&raw.perf_name, &raw.perf_umask) else {
            return error(
                format!("the free-running counter {} has a perf event without its name or umask", creg.name),
                "give both perf-name (the sysfs event, e.g. bw_in_port0) and perf-umask (e.g. 0x20)",
            );
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return error(
                format!(
                    "perf-name `{name}` of {} is not a sysfs event name",
                    creg.name
                ),
                "write the kernel's event name: lower case, digits and _ (e.g. bw_in_port0)",
            );
        }
        let Some(umask) = parse_number(umask).and_then(|u| u8::try_from(u).ok()) else {
            return error(
                format!("perf-umask `{umask}` of {} is not a byte", creg.name),
                "the kernel selects a free-running counter by umask 0x10-0xff (type in the high \
                 nibble, index in the low one)",
            );
        };
        if let Some(scale) = &raw.perf_scale {
            if !scale.parse::<f64>().is_ok_and(|f| f.is_finite() && f > 0.0) {
                return error(
                    format!(
                        "perf-scale `{scale}` of {} is not a positive number",
                        creg.name
                    ),
                    "write the kernel's NAME.scale as it reads, e.g. 3.814697266e-6",
                );
            }
        }
        Some(CounterPerf {
            name: name.clone(),
            umask,
            scale: raw.perf_scale.clone(),
            unit: raw.perf_unit.clone(),
        })
    }

    /// Two counters of a box with one perf event name or umask: the kernel's event would
    /// select either. `earlier` are the box's counters declared before the one at `at`.
    pub(super) fn perf_event_unique(
        &mut self,
        unit: &UnitScope<'_>,
        at: usize,
        perf: &CounterPerf,
        earlier: &[Counter],
    ) {
        let same = earlier.iter().find_map(|c| {
            let q = c.perf.as_ref()?;
            (q.umask == perf.umask || q.name == perf.name).then_some((c.number, q))
        });
        if let Some((number, q)) = same {
            self.push(unit.ctx.error(
                at,
                format!(
                    "perf event {} (umask 0x{:02x}) clashes with counter {number}'s {} (umask 0x{:02x})",
                    perf.name, perf.umask, q.name, q.umask
                ),
                "each free-running counter of a box has its own event name and umask",
            ));
        }
    }
}
