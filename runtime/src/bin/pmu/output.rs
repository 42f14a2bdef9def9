//! `watch` output: the aligned table, CSV with any separator (`perf stat -x,`, `likwid -O`),
//! or JSON lines, to stdout or a file (`-o`). The columns are perf's: time, socket, counter,
//! event, count, rate.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde_json::json;

/// One count of one interval.
pub struct Row<'a> {
    /// Seconds since the start.
    pub time: f64,
    pub socket: u32,
    /// The counter register, or with `--per-socket` the boxes summed (`C0+C1`).
    pub counter: &'a str,
    /// The event as the user gave it.
    pub event: &'a str,
    pub count: u64,
    /// Events per second over the interval.
    pub rate: f64,
}

/// How rows are written.
pub enum Format {
    Table { counter_w: usize, event_w: usize },
    Separated(String),
    JsonLines,
}

/// Where rows go, in which format. Every write error is returned (a closed pipe ends the
/// watch quietly; the caller decides).
pub struct Output {
    format: Format,
    out: Box<dyn Write>,
    /// JSON lines collect one interval's rows into one object.
    pending: Vec<serde_json::Value>,
}

impl Output {
    /// Opens `path` (created or truncated) or stdout.
    pub fn new(format: Format, path: Option<&Path>) -> io::Result<Self> {
        let out: Box<dyn Write> = match path {
            Some(p) => Box::new(BufWriter::new(File::create(p)?)),
            None => Box::new(io::stdout()),
        };
        Ok(Output {
            format,
            out,
            pending: Vec::new(),
        })
    }

    pub fn header(&mut self) -> io::Result<()> {
        match &self.format {
            Format::Table { counter_w, event_w } => writeln!(
                self.out,
                "{:>10}  {:>6}  {:<counter_w$}  {:<event_w$}  {:>15}  {:>14}",
                "# time", "socket", "counter", "event", "count", "rate/s"
            ),
            Format::Separated(sep) => writeln!(
                self.out,
                "{}",
                ["time", "socket", "counter", "event", "count", "rate"].join(sep)
            ),
            Format::JsonLines => Ok(()),
        }
    }

    pub fn row(&mut self, r: &Row) -> io::Result<()> {
        match &self.format {
            Format::Table { counter_w, event_w } => writeln!(
                self.out,
                "{:>10.3}  {:>6}  {:<counter_w$}  {:<event_w$}  {:>15}  {:>14.1}",
                r.time,
                r.socket,
                r.counter,
                r.event,
                thousands(r.count),
                r.rate
            ),
            Format::Separated(sep) => {
                let quote = |s: &str| {
                    if s.contains(sep.as_str()) || s.contains('"') {
                        format!("\"{}\"", s.replace('"', "\"\""))
                    } else {
                        s.to_string()
                    }
                };
                writeln!(
                    self.out,
                    "{:.3}{sep}{}{sep}{}{sep}{}{sep}{}{sep}{:.1}",
                    r.time,
                    r.socket,
                    quote(r.counter),
                    quote(r.event),
                    r.count,
                    r.rate
                )
            }
            Format::JsonLines => {
                self.pending.push(json!({"socket": r.socket, "counter": r.counter, "event": r.event, "count": r.count, "count_hex": format!("{:#x}", r.count), "rate": r.rate}));
                Ok(())
            }
        }
    }

    /// Ends an interval: JSON lines print it as one object.
    pub fn end_interval(&mut self, time: f64) -> io::Result<()> {
        if let Format::JsonLines = self.format {
            let counts = std::mem::take(&mut self.pending);
            writeln!(self.out, "{}", json!({"time": time, "counts": counts}))?;
        }
        self.out.flush()
    }
}

/// `1234567` -> `1,234,567`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
