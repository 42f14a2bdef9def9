//! `watch` output: the aligned table, CSV with any separator (`perf stat -x,`, `likwid -O`),
//! JSON lines, or one OpenMetrics exposition per interval (`--format openmetrics`), to stdout
//! or a file (`-o`). The columns are perf's: time, socket, counter, event, count, rate.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use pmu_runtime::export::{prometheus_text, Exporter, Series, SeriesLabels};
use pmu_runtime::session::Reading;
use serde_json::json;

use pmu_runtime::session::PerfSeries;

/// One count of one interval.
pub struct Row<'a> {
    /// Seconds since the start.
    pub time: f64,
    /// The processor, unit and box the row counts on (with `--per-socket`, the box is the
    /// boxes summed).
    pub processor: &'a str,
    pub unit: &'a str,
    pub instance: &'a str,
    pub socket: u32,
    /// The counter register, or with `--per-socket` the boxes summed (`C0+C1`).
    pub counter: &'a str,
    /// The event as the user gave it.
    pub event: &'a str,
    pub count: u64,
    /// Events per second over the interval.
    pub rate: f64,
    /// `raw`, `sim` or `perf`.
    pub backend: &'a str,
    /// Through perf: where it counts, and the share of the time it ran.
    pub perf: Option<(&'a PerfSeries, f64)>,
    /// The share of the interval the event was on a counter, where it shared them (perf's
    /// multiplexing, or a box counting in turns): the count is scaled up by it.
    pub running: Option<f64>,
    /// With `-A`, the CPU of a per-CPU PMU's row.
    pub cpu: Option<u32>,
}

/// How rows are written.
pub enum Format {
    Table {
        counter_w: usize,
        event_w: usize,
    },
    Separated(String),
    JsonLines,
    /// One exposition per interval: each row's running total as `pmu_events_total`, as
    /// `pmu serve` exports it. With `-o FILE` the file is replaced whole each interval (the
    /// Prometheus textfile collector never reads half of one).
    OpenMetrics,
    /// The same in the Prometheus text format (0.0.4), which the node exporter's textfile
    /// collector reads.
    PrometheusText,
}

/// Through perf, or with a box counting in turns, the table and CSV end with a `running`
/// column: the share of the time the event was on a counter (below 100% it shared them with
/// other events, and the count is scaled up), as `perf stat` shows it.
fn running(r: &Row) -> String {
    r.running
        .map_or("-".to_string(), |ratio| format!("{:.2}%", 100.0 * ratio))
}

/// Where rows go, in which format. Every write error is returned (a closed pipe ends the
/// watch quietly; the caller decides).
pub struct Output {
    format: Format,
    /// Whether any row may share counters: through perf or in turns (the `running` column).
    perf: bool,
    out: Box<dyn Write>,
    /// JSON lines collect one interval's rows into one object.
    pending: Vec<serde_json::Value>,
    /// OpenMetrics: the file to replace each interval, this interval's rows, and the totals.
    path: Option<PathBuf>,
    exposition: Vec<(SeriesLabels, u64, Option<f64>)>,
    totals: Option<(Exporter, Vec<u64>)>,
    /// When the counters were programmed (the output is opened right after).
    programmed: Instant,
    /// `-A`: a cpu column after the socket (`-` for a row of no one CPU).
    cpu_column: bool,
}

impl Output {
    /// Opens `path` (created or truncated) or stdout.
    pub fn new(format: Format, perf: bool, path: Option<&Path>) -> io::Result<Self> {
        let out: Box<dyn Write> = match path {
            // An exposition file is written beside and renamed over, interval by interval.
            Some(_) if matches!(format, Format::OpenMetrics | Format::PrometheusText) => {
                Box::new(io::sink())
            }
            Some(p) => Box::new(BufWriter::new(pmu_runtime::out_file::create(p)?)),
            None => Box::new(io::stdout()),
        };
        Ok(Output {
            format,
            perf,
            out,
            pending: Vec::new(),
            path: path.map(Path::to_path_buf),
            exposition: Vec::new(),
            totals: None,
            programmed: Instant::now(),
            cpu_column: false,
        })
    }

    /// Widens the table's counter and event columns to the longest of `counters` and
    /// `events`, so rows align whatever the names' lengths.
    pub fn fit_columns<'n>(
        &mut self,
        counters: impl Iterator<Item = &'n str>,
        events: impl Iterator<Item = &'n str>,
    ) {
        if let Format::Table { counter_w, event_w } = &mut self.format {
            *counter_w = counters.map(str::len).fold(*counter_w, usize::max);
            *event_w = events.map(str::len).fold(*event_w, usize::max);
        }
    }

    /// With `yes` (`-A`), the table and CSV have a cpu column after the socket.
    pub fn with_cpu_column(mut self, yes: bool) -> Self {
        self.cpu_column = yes;
        self
    }

    /// The socket, and with `-A` the CPU, as the table or CSV shows them.
    fn socket_text(&self, r: &Row, sep: &str) -> String {
        match (self.cpu_column, r.cpu) {
            (false, _) => r.socket.to_string(),
            (true, Some(cpu)) => format!("{}{sep}{cpu}", r.socket),
            (true, None) => format!("{}{sep}-", r.socket),
        }
    }

    pub fn header(&mut self) -> io::Result<()> {
        let running = if self.perf { "  running" } else { "" };
        match &self.format {
            Format::Table { counter_w, event_w } => {
                let socket = if self.cpu_column {
                    format!("{:>6}  {:>4}", "socket", "cpu")
                } else {
                    format!("{:>6}", "socket")
                };
                writeln!(
                    self.out,
                    "{:>10}  {socket}  {:<counter_w$}  {:<event_w$}  {:>17}  {:>17}{running}",
                    "# time", "counter", "event", "count", "rate/s"
                )
            }
            Format::Separated(sep) => {
                let mut columns = vec!["time", "socket", "counter", "event", "count", "rate"];
                if self.cpu_column {
                    columns.insert(2, "cpu");
                }
                if self.perf {
                    columns.push("running");
                }
                writeln!(self.out, "{}", columns.join(sep))
            }
            Format::JsonLines | Format::OpenMetrics | Format::PrometheusText => Ok(()),
        }
    }

    pub fn row(&mut self, r: &Row) -> io::Result<()> {
        match &self.format {
            Format::Table { counter_w, event_w } => {
                let running = if self.perf {
                    format!("  {:>7}", running(r))
                } else {
                    String::new()
                };
                let socket = match (self.cpu_column, r.cpu) {
                    (false, _) => format!("{:>6}", r.socket),
                    (true, cpu) => format!(
                        "{:>6}  {:>4}",
                        r.socket,
                        cpu.map_or("-".into(), |c| c.to_string())
                    ),
                };
                writeln!(
                    self.out,
                    "{:>10.3}  {socket}  {:<counter_w$}  {:<event_w$}  {:>17}  {:>17}{running}",
                    r.time,
                    r.counter,
                    r.event,
                    thousands(r.count),
                    rate(r.rate)
                )
            }
            Format::Separated(sep) => {
                let quote = |s: &str| {
                    if s.contains(sep.as_str()) || s.contains('"') {
                        format!("\"{}\"", s.replace('"', "\"\""))
                    } else {
                        s.to_string()
                    }
                };
                let running = if self.perf {
                    format!("{sep}{}", running(r))
                } else {
                    String::new()
                };
                writeln!(
                    self.out,
                    "{:.3}{sep}{}{sep}{}{sep}{}{sep}{}{sep}{:.1}{running}",
                    r.time,
                    self.socket_text(r, sep),
                    quote(r.counter),
                    quote(r.event),
                    r.count,
                    r.rate
                )
            }
            Format::OpenMetrics | Format::PrometheusText => {
                let labels = SeriesLabels {
                    processor: r.processor.to_string(),
                    socket: r.socket,
                    cpu: r.cpu,
                    unit: r.unit.to_string(),
                    box_name: r.instance.to_string(),
                    counter: r.counter.to_string(),
                    event: r.event.to_string(),
                    backend: r.backend.to_string(),
                };
                self.exposition.push((labels, r.count, r.running));
                Ok(())
            }
            Format::JsonLines => {
                self.pending.push(json_count(r));
                Ok(())
            }
        }
    }

    /// Ends an interval: JSON lines print it as one object.
    pub fn end_interval(&mut self, time: f64) -> io::Result<()> {
        if let Format::JsonLines = self.format {
            let counts = std::mem::take(&mut self.pending);
            // The interval's backend, where every count shares one.
            let backend = counts
                .first()
                .map(|c| c["backend"].clone())
                .filter(|b| counts.iter().all(|c| &c["backend"] == b));
            let mut line = json!({"time": time, "counts": counts});
            if let Some(b) = backend {
                line["backend"] = b;
            }
            writeln!(self.out, "{line}")?;
        }
        if matches!(self.format, Format::OpenMetrics | Format::PrometheusText) {
            self.write_exposition()?;
        }
        self.out.flush()
    }

    /// Adds this interval's counts to the totals and writes the exposition (the totals
    /// accumulate in 64 bits; the rows are already wrap-corrected deltas).
    fn write_exposition(&mut self) -> io::Result<()> {
        let rows = std::mem::take(&mut self.exposition);
        let programmed = self.programmed;
        let (exporter, totals) = self.totals.get_or_insert_with(|| {
            let series = rows
                .iter()
                .map(|(labels, _, _)| Series {
                    labels: labels.clone(),
                    width: 64,
                })
                .collect();
            let exporter = Exporter::new(series, programmed);
            exporter.baseline(&vec![Some(Reading::new(0, None)); rows.len()]);
            (exporter, vec![0; rows.len()])
        });
        let readings: Vec<Option<Reading>> = totals
            .iter_mut()
            .zip(&rows)
            .map(|(total, (_, count, running))| {
                *total = total.wrapping_add(*count);
                Some(Reading::new(*total, *running))
            })
            .collect();
        exporter.record(&readings);
        let mut text = exporter.encode().map_err(io::Error::other)?;
        if let Format::PrometheusText = self.format {
            text = prometheus_text(&text);
        }
        match &self.path {
            None => self.out.write_all(text.as_bytes()),
            Some(path) => pmu_runtime::out_file::replace(path, text.as_bytes()),
        }
    }
}

/// One row as an entry of a JSON line's `counts`.
fn json_count(r: &Row) -> serde_json::Value {
    let mut count = json!({"socket": r.socket, "counter": r.counter, "event": r.event, "count": r.count, "count_hex": format!("{:#x}", r.count), "rate": r.rate, "backend": r.backend});
    if let Some((p, _)) = r.perf {
        count["pmu"] = json!(p.pmu);
        count["cpu"] = json!(p.cpu);
        count["perf_event"] = json!(p.event);
    }
    if let Some(ratio) = r.running {
        count["running"] = json!(ratio);
        count["multiplexed"] = json!(ratio < 1.0);
    }
    if let Some(cpu) = r.cpu {
        count["cpu"] = json!(cpu);
    }
    count
}

/// A rate as the table shows it: thousands grouped, one decimal (`2,596,375,308.6`).
fn rate(r: f64) -> String {
    if !r.is_finite() || r < 0.0 || r >= u64::MAX as f64 {
        return format!("{r:.1}");
    }
    let tenths = (r * 10.0).round() as u64;
    format!("{}.{}", thousands(tenths / 10), tenths % 10)
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
