//! The hardware quirks the spec records (`<global-init>`, `<saturation>`), as the runtime
//! reads them, and the switch that turns the runtime's handling of them off (and of a box
//! whose `<clock-event>` counts nothing: a session reports it broken).
//!
//! Real parts differ from their documents, and the Linux kernel carries the corrections:
//! some parts power up with their uncore frozen and count nothing until a global field is
//! written, and AMD's UMC counters stop at their top instead of wrapping. The spec says which
//! part does what, with its source; counting (`Counting`, a layer above) and the uncore's
//! sampling apply every one of them the same way, for any processor, unless [`Quirks`] says
//! not to (a conformance run compares both ways), and the simulator models them.

use pmu_regs::GlobalInitInfo;

use crate::boxes::{Boxes, PmuBox, Reg};

/// Which of the spec's quirks the runtime handles. [`Quirks::default`] handles every one;
/// turning one off shows what the hardware does without the correction (a frozen uncore
/// counts 0; a saturated counter stops).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quirks {
    /// Write each `<global-init>` field before counting (and put it back after).
    pub global_init: bool,
    /// Reset a saturating counter when its `<saturation>` bit reads 1, and take its deltas
    /// over that many bits.
    pub saturation: bool,
    /// Report a box whose `<clock-event>` counted nothing over an interval it was enabled as
    /// broken, by name, instead of showing its counts (0).
    pub clock_event: bool,
}

impl Quirks {
    /// Every quirk handled.
    pub const ALL: Quirks = Quirks {
        global_init: true,
        saturation: true,
        clock_event: true,
    };
    /// None handled: the registers as the hardware leaves them.
    pub const NONE: Quirks = Quirks {
        global_init: false,
        saturation: false,
        clock_event: false,
    };
}

impl Quirks {
    /// The names [`Quirks::without`] takes: each quirk's spec element, and `all`.
    pub const NAMES: [&'static str; 4] = ["global-init", "saturation", "clock-event", "all"];

    /// Every quirk handled but those `names` names (`global-init`, `saturation`,
    /// `clock-event`, or `all`
    /// for every one): what `pmu watch` and `pmu check` take as `--no-quirk NAME`.
    pub fn without<S: AsRef<str>>(names: &[S]) -> Result<Quirks, crate::error::UsageError> {
        let mut quirks = Quirks::ALL;
        for name in names {
            match name.as_ref() {
                "global-init" => quirks.global_init = false,
                "saturation" => quirks.saturation = false,
                "clock-event" => quirks.clock_event = false,
                "all" => quirks = Quirks::NONE,
                other => {
                    return Err(crate::error::UsageError::BadValue {
                        text: other.to_string(),
                        expected: format!("a quirk: {}", Quirks::NAMES.join(", ")),
                    })
                }
            }
        }
        Ok(quirks)
    }
}

impl Default for Quirks {
    fn default() -> Self {
        Quirks::ALL
    }
}

/// Every `<global-init>` of `boxes`' processor, with its register.
pub fn global_inits(boxes: &Boxes) -> Vec<(Reg, &'static GlobalInitInfo)> {
    boxes
        .processor
        .units
        .iter()
        .filter_map(|u| u.pmu)
        .flat_map(|p| p.global_init)
        .filter_map(|g| Reg::of(g.register, g.instance, 0).map(|r| (r, g)))
        .collect()
}

/// The bit at which software resets `pmu_box`'s counters, where they saturate
/// (`<saturation>`); `None` where they wrap.
pub fn saturation_bit(pmu_box: &PmuBox) -> Option<u32> {
    pmu_box.pmu.saturation.map(|s| s.reset_bit)
}
