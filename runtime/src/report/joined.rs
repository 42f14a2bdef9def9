//! A part's uncore discovery tables joined with the spec, as `pmu discover` prints them: a row
//! per box with its status (matching, missing, unknown, disagreeing, ...), as a table, CSV or
//! JSON.

use serde_json::json;

use crate::discovery::{BoxStatus, Joined};
use crate::report::table::TextTable;

/// The boxes of `tables` (each a socket's join), a row each: as an aligned table, or with
/// `csv` as comma-separated values (cells quoted where they need it).
pub fn text(tables: &[(u32, Joined)], csv: bool) -> String {
    let header = [
        "SOCKET",
        "BOX",
        "TYPE",
        "ID",
        "STATUS",
        "ACCESS",
        "BOX_CONTROL",
        "COUNTERS",
        "WIDTH",
        "DETAIL",
    ];
    let rows = tables
        .iter()
        .flat_map(|(socket, joined)| joined.boxes.iter().map(move |b| (socket, b)));
    let rows = rows.map(|(socket, b)| {
        let t = b.table.as_ref();
        vec![
            socket.to_string(),
            b.name(),
            b.box_type.to_string(),
            b.box_id.to_string(),
            b.status.as_str().to_string(),
            t.map_or("-".into(), |t| t.access.as_str().to_string()),
            t.map_or("-".into(), |t| t.box_control.to_string()),
            t.map_or("-".into(), |t| t.counters.to_string()),
            t.map_or("-".into(), |t| t.width.to_string()),
            b.status.detail(),
        ]
    });
    let mut table = TextTable::new(&header).right_align(&[0, 2, 3, 7, 8]);
    for r in rows {
        table.row(r);
    }
    if csv {
        table.separated(",")
    } else {
        table.render()
    }
}

/// The boxes of `tables` (each a socket's join) as a JSON array, one object per box with
/// what the table says and how it disagrees with the spec.
pub fn json_text(tables: &[(u32, Joined)]) -> String {
    let boxes: Vec<_> = tables
        .iter()
        .flat_map(|(socket, joined)| joined.boxes.iter().map(move |b| (socket, b)))
        .map(|(socket, b)| {
            let t = b.table.as_ref();
            let disagreements: Vec<_> = match &b.status {
                BoxStatus::Disagreeing(d) => d
                    .iter()
                    .map(|d| json!({"what": d.what, "spec": d.spec, "table": d.table, "source": d.source}))
                    .collect(),
                _ => Vec::new(),
            };
            json!({
                "socket": socket,
                "box": b.spec.map(|s| s.instance),
                "unit": b.spec.map(|s| s.unit.name),
                "type": b.box_type,
                "id": b.box_id,
                "status": b.status.as_str(),
                "access": t.map(|t| t.access.as_str()),
                "box_control": t.map(|t| t.box_control.to_string()),
                "counters": t.map(|t| t.counters),
                "width": t.map(|t| t.width),
                "disagreements": disagreements,
                "detail": b.status.detail(),
            })
        })
        .collect();
    format!("{}\n", serde_json::Value::Array(boxes))
}
