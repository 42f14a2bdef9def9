//! The discovery join in a session's check: where the part publishes uncore discovery tables
//! (Sapphire Rapids on, or the simulator of such a part), every register box of a unit with a
//! discovery type is looked up in each table before anything is written, the table joined
//! with the spec knowing what the part says of itself (its box counts, where its
//! memory-mapped registers are: [`crate::part::joined_tables`]). A box a table does not list
//! or disagrees with (an address, the number or width of its counters), and every such box
//! when a table cannot be read, is refused with what the table says and the spec's source,
//! unless the caller takes it ([`super::Options::allow_mismatch`]): then what would have been
//! refused is returned as warnings. A box the spec's corrections of the table cover (a type
//! whose entries a public source ignores, a box the part's own count has) is taken. A part
//! without a table is counted as the spec says (there is nothing to join).

use crate::boxes::Boxes;
use crate::error::{Result, UsageError};
use crate::machine::Machine;
use crate::part::joined_tables;

use super::selection::{refuse_undiscovered, BoxEvents};

/// Refuses the first of `registers` (the boxes a session programs through the registers)
/// that a discovery table of `machine` does not show as the spec describes it; with
/// `allow_mismatch`, returns every such refusal as a warning instead.
pub(super) fn check<'a>(
    machine: &Machine,
    registers: impl Iterator<Item = &'a BoxEvents> + Clone,
    allow_mismatch: bool,
) -> Result<Vec<String>> {
    let joined_boxes: Vec<&BoxEvents> = registers
        .filter(|b| b.pmu_box.pmu.discovery_type.is_some())
        .collect();
    let Some(first) = joined_boxes.first() else {
        return Ok(Vec::new());
    };
    let spec: &'static Boxes = first.boxes;
    let mut warnings = Vec::new();
    for table in joined_tables(machine, spec) {
        let refusals: Vec<UsageError> = match &table.joined {
            Err(e) => joined_boxes
                .iter()
                .map(|b| UsageError::NotAsDiscovered {
                    name: b.pmu_box.instance.to_string(),
                    why: format!(
                        "the discovery table of device {} cannot be read: {e}",
                        table.device
                    ),
                })
                .collect(),
            Ok(joined) => joined_boxes
                .iter()
                .filter_map(|b| refuse_undiscovered(std::iter::once(*b), joined, false).err())
                .collect(),
        };
        for e in refusals {
            if !allow_mismatch {
                return Err(e.into());
            }
            warnings.push(format!(
                "socket {} (device {}): {}; programmed as the spec says (--allow-mismatch)",
                table.socket,
                table.device,
                mismatch_text(&e)
            ));
        }
    }
    Ok(warnings)
}

/// A refusal's reason without its advice (the warning says what was done instead).
fn mismatch_text(e: &UsageError) -> String {
    match e {
        UsageError::NotAsDiscovered { name, why } => format!("box {name}: {why}"),
        other => other.to_string(),
    }
}
