//! Dumps of the part's uncore discovery tables, for a bug report: each table's bytes as the
//! part publishes them (its global state and every unit entry it declares, nothing past the
//! size it declares), written to a file that `pmu discover --table FILE` replays. A table
//! holds the boxes' types, ids and register addresses only: no PPIN, serial number or host
//! name. Each dump is read back and must give the table read from the part (a check row).

use std::path::{Path, PathBuf};

use super::outcome::CheckRow;
use crate::access::MmioAccess;
use crate::discovery::{read_dump, DiscoveredTable};
use crate::machine::Machine;

/// The file socket `socket`'s table is dumped to, in `dir`.
pub fn dump_path(dir: &Path, socket: usize) -> PathBuf {
    dir.join(format!("discovery-socket{socket}.bin"))
}

/// The bytes of `table` as `mmio` reaches them: `(1 + entries) x stride`, qword by qword.
pub fn table_bytes(
    mmio: &(impl MmioAccess + ?Sized),
    table: &DiscoveredTable,
) -> crate::access::BackendResult<Vec<u8>> {
    let size = (1 + u64::from(table.global.max_units)) * table.global.stride;
    let mut bytes = Vec::with_capacity(size as usize);
    for at in (0..size).step_by(8) {
        bytes.extend(mmio.read_mmio(table.address + at, 64)?.to_le_bytes());
    }
    Ok(bytes)
}

/// Dumps every discovery table `machine`'s part publishes into `dir` (which must exist), a
/// row each: `pass` when the file was written and reads back as the table read from the part.
/// No rows for a part without a table.
pub fn dump_tables(machine: &Machine, dir: &Path) -> Vec<CheckRow> {
    // The simulator keeps its table apart from the registers it simulates.
    let simulated = machine.sim().and_then(|s| s.discovery_table());
    let mmio: &dyn MmioAccess = match &simulated {
        Some(t) => t,
        None => machine,
    };
    machine
        .discovery_tables()
        .into_iter()
        .enumerate()
        .map(|(socket, (device, table))| {
            let name = format!("dump socket {socket}");
            let path = dump_path(dir, socket);
            let expected = format!("{} replays the table", path.display());
            let table = match table {
                Ok(t) => t,
                Err(e) => return CheckRow::failed(name, expected, format!("device {device}: {e}")),
            };
            let written = table_bytes(mmio, &table)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    crate::out_file::replace(&path, &bytes)
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    read_dump(&path, device).map_err(|e| e.to_string())
                });
            match written {
                // The dump is read from its first byte: only where it was read differs.
                Ok(back) => {
                    let same = back.global == table.global && back.boxes == table.boxes;
                    let measured = format!("{} boxes read back", back.boxes.len());
                    let mut row = CheckRow::judged(name, expected, measured, same);
                    row.note = format!(
                        "send it with a bug report; `pmu discover --table {}` replays it",
                        path.display()
                    );
                    row
                }
                Err(e) => CheckRow::failed(name, expected, e),
            }
        })
        .collect()
}
