//! `perf stat --metric-only` for counted events: each derived comment that is a metric
//! (`GHz`, `insn per cycle`, `branch-misses of all branches`) as a column, a line of
//! headers then a line of values, or with `-I` a line per interval after its time (perf 6.1,
//! tools/perf/util/stat-display.c, checked against the perf binary on a machine without
//! hardware events, where every column is the time alone).
//!
//! - Columns: perf's `valid_only_metric` leaves out the rates (`/sec`) and `CPUs
//!   utilized`; its `fixunit` names the event before a `of all ...` unit. A column is there
//!   whether or not its value could be worked out (perf prints its header from the event), its
//!   field empty when not; an event the machine cannot count has none (perf prints no header
//!   for it, but stray empty fields on the values' line, which are left out here so that
//!   every value stays under its header).
//! - Text: each header right-aligned in 20 columns (or its length) and a space, each value
//!   under it; before the headers, the time (`#           time `, with `CPU     ` per CPU or
//!   `socket cpus ` per socket) under `-I`, or as many spaces as perf's place column without.
//! - CSV: headers and values each followed by the separator, values without padding or
//!   unit; under `-I` the header starts ` time,` (perf writes that comma whatever the
//!   separator) and each line with the time and the separator.
//! - JSON (`-j`): an object a line for each place (under `-I` after a first line `{}`,
//!   perf's header, which writes no column names into JSON): `"interval"` under `-I`,
//!   the place as perf's `-j` rows (`"cpu"`, or `"socket"` and `"aggregate-number"`), then
//!   each column as perf's `print_metric_only_json` writes it, `"HEADER" : "VALUE"` with the
//!   number alone (`"none"` where it was not worked out). perf 6.1 opens the objects of its
//!   places and columns on separate lines, which no JSON reader takes; the fields and their
//!   order are perf's, each line a whole object. On this machine (no column) perf's lines
//!   are `{}` and `{"interval" : 0.100160336}`, as pmu's.

use std::fmt::Write;

use super::aggr::{RowPlace, StatAggr};
use super::events::EventRole;
use super::report::{footer, interval_time, json_place, place_text, quoted, StatLayout};
use super::rows::{RowValue, StatRow};
use super::run::{IntervalRows, StatOutcome};

/// The columns perf gives each header and value, before the space that follows it
/// (`METRIC_ONLY_LEN`).
const WIDTH: usize = 20;

/// The metric-only column of `row`'s event, if it has one: `GHz`, `insn per cycle`,
/// `EVENT of all branches`.
pub fn column(row: &StatRow) -> Option<String> {
    match row.role {
        EventRole::Cycles => Some("GHz".into()),
        EventRole::Instructions => Some("insn per cycle".into()),
        EventRole::BranchMisses => Some(format!("{} of all branches", row.event)),
        EventRole::Clock | EventRole::Branches | EventRole::Other => None,
    }
}

/// The value of `row`'s column: perf's text without its leading spaces, or for CSV the
/// number alone; empty where it was not worked out.
fn value(row: &StatRow, csv: bool) -> String {
    let Some(c) = &row.comment else {
        return String::new();
    };
    let text = c.text.trim_start();
    if csv {
        text.chars()
            .take_while(|ch| ch.is_ascii_digit() || *ch == '.')
            .collect()
    } else {
        text.to_string()
    }
}

/// The rows of each place, places in the order they first appear.
fn by_place(rows: &[StatRow]) -> Vec<(RowPlace, Vec<&StatRow>)> {
    let mut out: Vec<(RowPlace, Vec<&StatRow>)> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|(p, _)| *p == r.place) {
            Some((_, v)) => v.push(r),
            None => out.push((r.place, vec![r])),
        }
    }
    out
}

/// The headers and values of one place's rows, each padded (text) or followed by `sep`.
fn fields<'a>(rows: impl Iterator<Item = &'a StatRow>, sep: Option<&str>) -> (String, String) {
    let (mut head, mut line) = (String::new(), String::new());
    for r in rows {
        let Some(h) = column(r).filter(|_| r.value != RowValue::NotSupported) else {
            continue;
        };
        let v = value(r, sep.is_some());
        match sep {
            Some(sep) => {
                let _ = write!(head, "{h}{sep}");
                let _ = write!(line, "{v}{sep}");
            }
            None => {
                let width = WIDTH.max(h.len());
                let _ = write!(head, "{h:>width$} ");
                let _ = write!(line, "{v:>width$} ");
            }
        }
    }
    (head, line)
}

/// A JSON object a line for each place, after `time` (under `-I`).
fn json_lines(rows: &[StatRow], time: Option<&str>) -> String {
    let mut s = String::new();
    for (place, rows) in by_place(rows) {
        let mut fields: Vec<String> = Vec::new();
        if let Some(t) = time {
            fields.push(format!("\"interval\" : {}", t.trim()));
        }
        fields.extend(json_place(place));
        for r in rows {
            let Some(h) = column(r).filter(|_| r.value != RowValue::NotSupported) else {
                continue;
            };
            let v = value(r, true);
            let v = if v.is_empty() { "none".to_string() } else { v };
            fields.push(format!("{} : {}", quoted(&h), quoted(&v)));
        }
        let _ = writeln!(s, "{{{}}}", fields.join(", "));
    }
    s
}

fn separator(layout: &StatLayout) -> Option<&str> {
    match layout {
        StatLayout::Csv(sep) => Some(sep.as_str()),
        StatLayout::Text | StatLayout::Json => None,
    }
}

/// The header line without `-I`: perf's place indent (text) or place columns (CSV), then
/// the columns.
fn plain_header(rows: &[StatRow], aggr: StatAggr, sep: Option<&str>) -> String {
    let first = by_place(rows).into_iter().next();
    let (head, _) = fields(first.iter().flat_map(|(_, r)| r.iter().copied()), sep);
    let lead = match (aggr, sep) {
        (StatAggr::Global, _) => "",
        (StatAggr::PerCpu, None) => "      ",
        (StatAggr::PerSocket, None) => "            ",
        (StatAggr::PerCpu, Some(_)) => "cpu,",
        (StatAggr::PerSocket, Some(_)) => "socket,cpus",
    };
    format!("{lead}{head}\n")
}

/// The header line under `-I`.
fn interval_header(rows: &[StatRow], aggr: StatAggr, sep: Option<&str>) -> String {
    let first = by_place(rows).into_iter().next();
    let (head, _) = fields(first.iter().flat_map(|(_, r)| r.iter().copied()), sep);
    let lead = match (aggr, sep) {
        (StatAggr::Global, None) => "#           time ",
        (StatAggr::PerCpu, None) => "#           time CPU     ",
        (StatAggr::PerSocket, None) => "#           time socket cpus ",
        (StatAggr::Global, Some(_)) => " time,",
        (StatAggr::PerCpu, Some(_)) => " time,cpu,",
        (StatAggr::PerSocket, Some(_)) => " time,socket,cpus",
    };
    format!("{lead}{head}\n")
}

/// A line of values for each place, each after `time` (under `-I`) and the place.
fn value_lines(rows: &[StatRow], time: Option<&str>, sep: Option<&str>) -> String {
    let mut s = String::new();
    for (place, rows) in by_place(rows) {
        if let Some(t) = time {
            let _ = write!(s, "{t}{}", sep.unwrap_or(" "));
        }
        let (_, line) = fields(rows.into_iter(), sep);
        let _ = writeln!(s, "{}{line}", place_text(place, sep));
    }
    s
}

/// The output after the runs with `--metric-only`: for [`StatLayout::Text`] perf's header
/// naming `target`, the columns' line, the values' line and the footer; the two lines alone
/// for CSV; an object a line for each place for JSON.
pub fn summary(o: &StatOutcome, target: &str, layout: &StatLayout) -> Option<String> {
    let rows = o.rows();
    if *layout == StatLayout::Json {
        return Some(json_lines(&rows, None));
    }
    let sep = separator(layout);
    let body = plain_header(&rows, o.aggr, sep) + &value_lines(&rows, None, sep);
    match layout {
        StatLayout::Text => {
            let runs = o.elapsed_ns.runs();
            let mut s = format!("\n Performance counter stats for {target}");
            if runs > 1 {
                let _ = write!(s, " ({runs} runs)");
            }
            Some(s + ":\n\n" + &body + "\n" + &footer(o))
        }
        StatLayout::Csv(_) | StatLayout::Json => Some(body),
    }
}

/// The `index`-th interval's lines with `--metric-only`: the header before the first (and
/// every 25th, as perf repeats it in text), then a line per place; JSON: an object a line
/// for each place.
pub fn interval(
    iv: &IntervalRows,
    index: u64,
    aggr: StatAggr,
    layout: &StatLayout,
) -> Option<String> {
    let sep = separator(layout);
    let header = match layout {
        StatLayout::Json => {
            // perf's header line: it writes no column names into JSON, so `{}`.
            let head = if index == 0 { "{}\n" } else { "" };
            let time = interval_time(iv.seconds);
            return Some(head.to_string() + &json_lines(&iv.rows, Some(&time)));
        }
        StatLayout::Text => index % 25 == 0,
        StatLayout::Csv(_) => index == 0,
    };
    let mut s = String::new();
    if header {
        s.push_str(&interval_header(&iv.rows, aggr, sep));
    }
    s.push_str(&value_lines(
        &iv.rows,
        Some(&interval_time(iv.seconds)),
        sep,
    ));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stat::rows::Comment;

    fn row(event: &str, role: EventRole, comment: Option<(&str, &str)>) -> StatRow {
        StatRow {
            place: RowPlace::All,
            event: event.into(),
            role,
            cgroup: None,
            value: RowValue::Counted(1.0),
            unit: "",
            runtime_ns: 1,
            running_percent: 100.0,
            comment: comment.map(|(text, unit)| Comment {
                value: 0.0,
                text: text.into(),
                unit: unit.into(),
            }),
            spread: None,
        }
    }

    // perf 6.1's formats: GHz "%8.3f", insn per cycle "%7.2f " (a space after), branch
    // misses "%7.2f%%"; rates and CPUs utilized have no column.
    #[test]
    fn columns_and_values_are_perfs() {
        let rows = [
            row(
                "task-clock",
                EventRole::Clock,
                Some(("   0.482", "CPUs utilized")),
            ),
            row("page-faults", EventRole::Other, Some(("   1.000", "K/sec"))),
            row("cycles", EventRole::Cycles, Some(("   2.000", "GHz"))),
            row(
                "instructions",
                EventRole::Instructions,
                Some(("   1.50 ", "insn per cycle")),
            ),
            row("branch-misses", EventRole::BranchMisses, None),
        ];
        let iv = IntervalRows {
            seconds: 0.1,
            rows: rows.to_vec(),
        };
        let text = interval(&iv, 0, StatAggr::Global, &StatLayout::Text).unwrap();
        let header = format!(
            "#           time {:>20} {:>20} {:>29} \n",
            "GHz", "insn per cycle", "branch-misses of all branches"
        );
        let line = format!(
            "     0.100000000 {:>20} {:>20} {:>29} \n",
            "2.000", "1.50 ", ""
        );
        assert_eq!(text, header + &line);
        let csv = interval(&iv, 0, StatAggr::Global, &StatLayout::Csv(";".into())).unwrap();
        assert_eq!(
            csv,
            " time,GHz;insn per cycle;branch-misses of all branches;\n     0.100000000;2.000;1.50;;\n"
        );
        let later = interval(&iv, 1, StatAggr::Global, &StatLayout::Csv(",".into())).unwrap();
        assert_eq!(later, "     0.100000000,2.000,1.50,,\n");
        // JSON: perf's print_metric_only_json, `"UNIT" : "VALUE"` with the number alone,
        // `none` where there is none, after `{}` (perf's header) on the first interval.
        let json = interval(&iv, 0, StatAggr::Global, &StatLayout::Json).unwrap();
        assert_eq!(
            json,
            "{}\n{\"interval\" : 0.100000000, \"GHz\" : \"2.000\", \"insn per cycle\" : \"1.50\", \
             \"branch-misses of all branches\" : \"none\"}\n"
        );
    }
}
