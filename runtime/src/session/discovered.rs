//! The discovery join in a session's check: where the part publishes uncore discovery tables
//! (Sapphire Rapids on, or the simulator of such a part), every register box of a unit with a
//! discovery type is looked up in each table before anything is written. A box a table does
//! not list or disagrees with (an address, the number or width of its counters), and every
//! such box when a table cannot be read, is refused with what the table says and the spec's
//! source, unless the caller takes it ([`super::Options::allow_mismatch`]). A part without a
//! table is counted as the spec says (there is nothing to join).

use crate::boxes::Boxes;
use crate::discovery::join;
use crate::error::{Result, UsageError};
use crate::machine::Machine;

use super::selection::{refuse_undiscovered, BoxEvents};

/// Refuses the first of `registers` (the boxes a session programs through the registers)
/// that a discovery table of `machine` does not show as the spec describes it.
pub(super) fn check<'a>(
    machine: &Machine,
    registers: impl Iterator<Item = &'a BoxEvents> + Clone,
    allow_mismatch: bool,
) -> Result<()> {
    let joined_boxes: Vec<&BoxEvents> = registers
        .filter(|b| b.pmu_box.pmu.discovery_type.is_some())
        .collect();
    let Some(first) = joined_boxes.first() else {
        return Ok(());
    };
    if allow_mismatch {
        return Ok(());
    }
    let spec: &'static Boxes = first.boxes;
    for (device, table) in machine.discovery_tables() {
        let table = table.map_err(|e| UsageError::NotAsDiscovered {
            name: first.pmu_box.instance.to_string(),
            why: format!("the discovery table of device {device} cannot be read: {e}"),
        })?;
        let joined = join(spec, &table);
        refuse_undiscovered(joined_boxes.iter().copied(), &joined, false)?;
    }
    Ok(())
}
