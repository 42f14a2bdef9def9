//! The reset check of the simulated conformance run: a box whose box control has a
//! reset-counters field (the role `ResetCounters`, Intel's `rst_ctrs`) must clear its
//! counters when it is written with 1. The uncore guides (and Linux, which resets every box
//! this way before counting) say the write clears every data counter of the box to 0; a box
//! that keeps a count there would carry it into the next session's first interval. The check
//! writes a known value into the box's first general counter, writes the reset, reads the
//! counter back (it must read 0), and puts back every register it changed, the box's other
//! counters included (the reset clears them all).

use pmu_regs::FieldInfo;

use super::outcome::CheckRow;
use crate::machine::{Machine, Resolved};

/// The value written into the counter before the reset: non-zero, and within any counter's
/// width.
pub const KNOWN: u64 = 0x5a5a;

/// What the reset check of one box touches, resolved where the box is.
#[derive(Debug, Clone)]
pub struct ResetTarget {
    /// The box's instance name (`CHA0`).
    pub instance: &'static str,
    /// Its box control, holding `field`.
    pub control: Resolved,
    /// The reset-counters field.
    pub field: &'static FieldInfo,
    /// The counter written and read back: the box's first general counter.
    pub counter: Resolved,
    /// Every counter of the box on the part, each put back afterwards (the reset clears them
    /// all).
    pub counters: Vec<Resolved>,
}

/// The reset row of a box (`reset CHA0`): the counter must read 0 after the reset.
pub fn row(machine: &Machine, t: &ResetTarget) -> CheckRow {
    let name = format!("reset {}", t.instance);
    let expected = format!("0 after {} (was {KNOWN})", t.field.name);
    let text = |e: crate::Error| e.to_string();
    let found = t
        .counters
        .iter()
        .map(|r| machine.read(r))
        .collect::<crate::error::Result<Vec<u64>>>()
        .map_err(text)
        .and_then(|f| Ok((f, machine.read(&t.control).map_err(text)?)));
    let (counts, ctl) = match found {
        Ok(f) => f,
        Err(e) => return CheckRow::failed(name, expected, e),
    };
    let after = reset_and_read(machine, (&t.control, t.field.mask(), ctl), &t.counter);
    // Put back: the box control first (a write of it acts), then every counter.
    let mut back = machine.write(&t.control, ctl).map_err(text);
    for (r, v) in t.counters.iter().zip(&counts) {
        back = back.and(machine.write(r, *v).map_err(text));
    }
    match after.and_then(|a| back.map(|()| a)) {
        Ok(after) => {
            let mut row = CheckRow::judged(name, expected, after.to_string(), after == 0);
            if after != 0 {
                row.note = format!(
                    "{} does not reset: {} read {after} after {} was written with 1, where a \
                     reset clears it to 0 (a session's first interval would carry it)",
                    t.instance, t.counter.address.name, t.field.name
                );
            }
            row
        }
        Err(e) => CheckRow::failed(name, expected, e),
    }
}

/// Writes [`KNOWN`] into the counter `ctr` (checking it holds it), then the box control
/// `ctl` as found with the reset bits `mask` set; what the counter reads afterwards.
fn reset_and_read(
    machine: &Machine,
    (ctl, mask, found): (&Resolved, u64, u64),
    ctr: &Resolved,
) -> std::result::Result<u64, String> {
    let text = |e: crate::Error| e.to_string();
    machine.write(ctr, KNOWN).map_err(text)?;
    let held = machine.read(ctr).map_err(text)?;
    if held != KNOWN {
        return Err(format!(
            "{} read {held} after {KNOWN} was written: the reset cannot be checked",
            ctr.address.name
        ));
    }
    machine.write(ctl, found | mask).map_err(text)?;
    machine.read(ctr).map_err(text)
}
