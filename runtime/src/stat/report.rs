//! `perf stat`'s three layouts of the rows (perf 6.1's `stat-display.c`, checked against
//! the perf binary's output): the text table with its header and footer, `-x SEP` (CSV)
//! and `-j` (one JSON object a line). Numbers are printed with fixed decimals, never as a
//! binary float's shortest digits.

use std::fmt::Write;

use super::aggr::RowPlace;
use super::rows::{RowValue, StatRow};
use super::run::{IntervalRows, StatOutcome, StatScope};

/// How the rows are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatLayout {
    /// perf's table, with its header, comments and footer.
    Text,
    /// `-x SEP`: one line a row, fields separated by SEP.
    Csv(String),
    /// `-j`: one JSON object a line.
    Json,
}

/// What perf's header names: `'sleep 0.2'`, `'system wide'`, `'CPU(s) 0,1'`,
/// `process id '42'`.
pub fn target_label(scope: &StatScope, command: &[String], all_cpus: bool) -> String {
    match scope {
        StatScope::Cpus(_) if all_cpus => "'system wide'".into(),
        StatScope::Cpus(cpus) => format!(
            "'CPU(s) {}'",
            cpus.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        StatScope::Tasks(pids) => format!(
            "process id '{}'",
            pids.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        StatScope::Command => format!("'{}'", command.join(" ")),
    }
}

fn count_text(r: &StatRow) -> String {
    match r.value {
        RowValue::Counted(v) if r.unit == "msec" => format!("{v:.2}"),
        RowValue::Counted(v) => format!("{v:.0}"),
        RowValue::NotSupported => "<not supported>".into(),
        RowValue::NotCounted => "<not counted>".into(),
    }
}

/// The place's columns before the count, as perf's `aggr_printout`: `CPU0      `,
/// `S0        2 ` (text) or `CPU0,`, `S0,2,` (CSV).
pub(super) fn place_text(p: RowPlace, sep: Option<&str>) -> String {
    match (p, sep) {
        (RowPlace::All, _) => String::new(),
        (RowPlace::Cpu(c), None) => format!("CPU{c:<7} "),
        (RowPlace::Cpu(c), Some(sep)) => format!("CPU{c}{sep}"),
        (RowPlace::Socket { socket, cpus }, None) => format!("S{socket:<5} {cpus:>4} "),
        (RowPlace::Socket { socket, cpus }, Some(sep)) => format!("S{socket}{sep}{cpus}{sep}"),
    }
}

/// One row of the text table.
fn text_row(r: &StatRow) -> String {
    let mut s = format!(
        "{}{:>18} {:<4} {:<32}",
        place_text(r.place, None),
        count_text(r),
        r.unit,
        r.event
    );
    if let Some(cg) = &r.cgroup {
        let _ = write!(s, " {cg}");
    }
    match &r.comment {
        Some(c) => {
            let _ = write!(s, " # {} {:<23}", c.text, c.unit);
        }
        None => s.push_str(&" ".repeat(28)),
    }
    if let Some(p) = r.spread.filter(|&p| p != 0.0) {
        let _ = write!(s, "  ( +-{p:6.2}% )");
    }
    if r.running_percent < 100.0 && r.value != RowValue::NotSupported {
        let _ = write!(s, "  ({:.2}%)", r.running_percent);
    }
    s
}

fn csv_row(r: &StatRow, sep: &str) -> String {
    let mut f = vec![count_text(r), r.unit.to_string(), r.event.clone()];
    f.extend(r.cgroup.clone());
    if let Some(p) = r.spread {
        f.push(format!("{p:.2}%"));
    }
    f.push(r.runtime_ns.to_string());
    f.push(format!("{:.2}", r.running_percent));
    match &r.comment {
        Some(c) => {
            f.push(format!("{:.3}", c.value));
            f.push(c.unit.clone());
        }
        None => f.extend([String::new(), String::new()]),
    }
    place_text(r.place, Some(sep)) + &f.join(sep)
}

/// A JSON string literal.
pub(super) fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A place's JSON fields as perf's: `"cpu" : "0"`, or `"socket" : "S0",
/// "aggregate-number" : 2`; none for every CPU summed.
pub(super) fn json_place(place: RowPlace) -> Option<String> {
    match place {
        RowPlace::All => None,
        RowPlace::Cpu(c) => Some(format!("\"cpu\" : \"{c}\"")),
        RowPlace::Socket { socket, cpus } => Some(format!(
            "\"socket\" : \"S{socket}\", \"aggregate-number\" : {cpus}"
        )),
    }
}

fn json_row(r: &StatRow, interval: Option<&str>) -> String {
    let value = match r.value {
        RowValue::Counted(v) => format!("{v:.6}"),
        _ => count_text(r),
    };
    let mut s = String::from("{");
    if let Some(t) = interval {
        let _ = write!(s, "\"interval\" : {t}, ");
    }
    if let Some(p) = json_place(r.place) {
        let _ = write!(s, "{p}, ");
    }
    let _ = write!(
        s,
        "\"counter-value\" : {}, \"unit\" : {}, \"event\" : {}, ",
        quoted(&value),
        quoted(r.unit),
        quoted(&r.event)
    );
    if let Some(cg) = &r.cgroup {
        let _ = write!(s, "\"cgroup\" : {}, ", quoted(cg));
    }
    if let Some(p) = r.spread {
        let _ = write!(s, "\"variance\" : {p:.2}, ");
    }
    let (mv, mu) = r
        .comment
        .as_ref()
        .map_or((0.0, ""), |c| (c.value, c.unit.as_str()));
    let _ = write!(
        s,
        "\"event-runtime\" : {}, \"pcnt-running\" : {:.2}, \"metric-value\" : {mv:.6}, \
         \"metric-unit\" : {}}}",
        r.runtime_ns,
        r.running_percent,
        quoted(mu)
    );
    s
}

/// perf's `get_precision`: the decimals that show a standard deviation's first digit.
fn precision(sd: f64) -> usize {
    if sd > 1.0 {
        0
    } else if sd > 0.0 {
        (-sd.log10()).ceil() as usize
    } else {
        4
    }
}

/// The text footer: elapsed time (with its spread over several runs) and the command's
/// user and system time.
pub(super) fn footer(o: &StatOutcome) -> String {
    let secs = o.elapsed_ns.mean() / 1e9;
    let mut s = String::new();
    if o.elapsed_ns.runs() > 1 {
        let sd = o.elapsed_ns.stddev_of_mean() / 1e9;
        let p = precision(sd) + 2;
        let _ = write!(s, " {secs:17.p$} +- {sd:.p$} seconds time elapsed");
        let pct = o.elapsed_ns.percent();
        if pct != 0.0 {
            let _ = write!(s, "  ( +-{pct:6.2}% )");
        }
    } else {
        let _ = write!(s, " {secs:17.9} seconds time elapsed");
        if let Some((user, sys)) = o.user_sys {
            let _ = write!(
                s,
                "\n\n {:17.9} seconds user\n {:17.9} seconds sys\n",
                user.as_secs_f64(),
                sys.as_secs_f64()
            );
        }
    }
    s.push_str("\n\n");
    s
}

/// The output after the runs: for [`StatLayout::Text`] perf's header (naming `target`, see
/// [`target_label`]), the rows and the footer; the rows alone otherwise.
pub fn summary(o: &StatOutcome, target: &str, layout: &StatLayout) -> String {
    let rows = o.rows();
    match layout {
        StatLayout::Text => {
            let runs = o.elapsed_ns.runs();
            let mut s = format!("\n Performance counter stats for {target}");
            if runs > 1 {
                let _ = write!(s, " ({runs} runs)");
            }
            s.push_str(":\n\n");
            for r in &rows {
                s.push_str(text_row(r).as_str());
                s.push('\n');
            }
            s.push('\n');
            s + &footer(o)
        }
        StatLayout::Csv(sep) => rows.iter().map(|r| csv_row(r, sep) + "\n").collect(),
        StatLayout::Json => rows.iter().map(|r| json_row(r, None) + "\n").collect(),
    }
}

/// An interval's time as perf prints it: `%6lu.%09lu`.
pub fn interval_time(seconds: f64) -> String {
    let whole = seconds.trunc();
    format!(
        "{:6}.{:09}",
        whole as u64,
        ((seconds - whole) * 1e9).round().min(999_999_999.0) as u64
    )
}

/// The `index`-th interval's lines (the text layout repeats its column header every 25
/// intervals, as perf does).
pub fn interval(iv: &IntervalRows, index: u64, layout: &StatLayout) -> String {
    let time = interval_time(iv.seconds);
    let mut s = String::new();
    match layout {
        StatLayout::Text => {
            if index % 25 == 0 {
                let columns = match iv.rows.first().map(|r| r.place) {
                    Some(RowPlace::Cpu(_)) => "CPU                    counts",
                    Some(RowPlace::Socket { .. }) => "socket cpus             counts",
                    _ => "            counts",
                };
                let _ = writeln!(s, "#           time {columns} unit events");
            }
            for r in &iv.rows {
                let _ = writeln!(s, "{time} {}", text_row(r));
            }
        }
        StatLayout::Csv(sep) => {
            for r in &iv.rows {
                let _ = writeln!(s, "{time}{sep}{}", csv_row(r, sep));
            }
        }
        StatLayout::Json => {
            for r in &iv.rows {
                let _ = writeln!(s, "{}", json_row(r, Some(time.trim())));
            }
        }
    }
    s
}
