//! Counts as `pmu watch` prints them, every interval: the rows of an interval, summed per
//! socket or over a per-CPU PMU's CPUs as asked ([`Rows`]), written as the aligned table, CSV
//! with any separator (`perf stat -x,`, `likwid -O`), JSON lines, or one OpenMetrics
//! exposition per interval ([`Output`]), to stdout or a file. The columns are perf's: time,
//! socket, counter, event, count, rate.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use crate::export::{prometheus_text, Exporter, Series, SeriesLabels};
use crate::report::table::csv_cell;
use crate::session::{Count, Interval, PerfSeries, Reading, SeriesInfo};

/// One count of one interval.
pub struct Row<'a> {
    /// Seconds since the start.
    pub time: f64,
    /// The processor the row counts on.
    pub processor: &'a str,
    /// The unit the row counts on.
    pub unit: &'a str,
    /// The box the row counts on (with `--per-socket`, the boxes summed: `C0+C1`).
    pub instance: &'a str,
    /// The socket.
    pub socket: u32,
    /// The counter register, or with `--per-socket` the boxes summed (`C0+C1`).
    pub counter: &'a str,
    /// The event as the user gave it.
    pub event: &'a str,
    /// Events counted in the interval.
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
    /// Aligned columns, as `perf stat -I` prints them.
    Table {
        /// The width of the counter column.
        counter_w: usize,
        /// The width of the event column.
        event_w: usize,
    },
    /// CSV with this separator (`perf stat -x,`).
    Separated(String),
    /// A JSON object per row, as `watch --metric --json` prints a metric's value.
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
    r.running.map_or("-".to_string(), running_share)
}

/// A running share (0 to 1) as every table and CSV of `pmu watch` prints it, event rows and
/// metric rows alike: a percentage with two decimals, as `perf stat` prints `(60.00%)`
/// (docs/pmu.md, "One output contract").
pub fn running_share(ratio: f64) -> String {
    format!("{:.2}%", 100.0 * ratio)
}

/// Where rows go, in which format. Every write error is returned (a closed pipe ends the
/// watch quietly; the caller decides).
pub struct Output {
    format: Format,
    /// Whether any row may share counters: through perf or in turns (the `running` column).
    perf: bool,
    out: Box<dyn Write>,
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
            Some(p) => Box::new(BufWriter::new(crate::out_file::create(p)?)),
            None => Box::new(io::stdout()),
        };
        Ok(Output {
            format,
            perf,
            out,
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

    /// Writes the column headings (the table and CSV have them).
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

    /// Writes one row (the exposition collects it until the interval ends).
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
                let quote = |s: &str| csv_cell(s, sep);
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
            Format::JsonLines => writeln!(self.out, "{}", json_count(r)),
        }
    }

    /// Ends an interval: the exposition is written, and everything flushed.
    pub fn end_interval(&mut self, _time: f64) -> io::Result<()> {
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
            Some(path) => crate::out_file::replace(path, text.as_bytes()),
        }
    }
}

/// One row as its JSON line: the fields a metric's row shares (`time`, `socket`, `cpu`,
/// `processor`, `running`) under the same names, then the event's own.
fn json_count(r: &Row) -> serde_json::Value {
    let mut count = json!({"time": r.time, "socket": r.socket, "processor": r.processor, "counter": r.counter, "event": r.event, "count": r.count, "count_hex": format!("{:#x}", r.count), "rate": crate::metrics::without_float_noise(r.rate), "backend": r.backend});
    if let Some((p, _)) = r.perf {
        count["pmu"] = json!(p.pmu);
        count["cpu"] = json!(p.cpu);
        count["perf_event"] = json!(p.event);
    }
    let ratio = r.running.unwrap_or(1.0);
    count["running"] = json!(crate::metrics::without_float_noise(ratio));
    count["multiplexed"] = json!(ratio < 1.0);
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

/// How an interval's counts are grouped into rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grouping {
    /// Each event summed over the boxes of a socket (`--per-socket`).
    pub per_socket: bool,
    /// A per-CPU PMU's CPUs summed per socket (`-a` without `-A`).
    pub sums_cpus: bool,
    /// A row per CPU of a per-CPU PMU (`-A`), with a cpu column.
    pub per_cpu: bool,
}

/// One interval's count of a series, or of the series summed into one row.
#[derive(Clone, Debug, PartialEq)]
pub struct Sum {
    /// The first series summed (in [`Rows::series`]): its names label the row.
    pub series: usize,
    /// The socket.
    pub socket: u32,
    /// The CPU, where rows show one.
    pub cpu: Option<u32>,
    /// Events counted, summed.
    pub count: u64,
    /// The least share of the interval any part was on a counter, where parts shared them.
    pub running: Option<f64>,
    /// As `running`, 1 for a part that had its counter throughout.
    pub ratio: f64,
}

/// What a session's series become as rows: the sums a [`Grouping`] asks for, labelled.
pub struct Rows {
    series: Vec<SeriesInfo>,
    grouping: Grouping,
    /// The boxes a `--per-socket` row sums, as its box and counter show them (`C0+C1`).
    summed: String,
    /// Each series' perf place as its row shows it: a row summed over a per-CPU PMU's CPUs
    /// names no one CPU.
    perf: Vec<Option<PerfSeries>>,
    shows_cpu: bool,
}

impl Rows {
    /// The rows of `series` (a session's, in its order), grouped as `grouping` says.
    pub fn new(series: Vec<SeriesInfo>, grouping: Grouping) -> Self {
        let mut boxes: Vec<&str> = Vec::new();
        for s in &series {
            if !boxes.contains(&s.instance.as_str()) {
                boxes.push(&s.instance);
            }
        }
        let summed = boxes.join("+");
        let perf = series
            .iter()
            .map(|s| {
                let one_cpu = s.cpu.is_none() || !grouping.sums_cpus;
                s.perf.as_ref().map(|p| PerfSeries {
                    cpu: p.cpu.filter(|_| one_cpu),
                    ..p.clone()
                })
            })
            .collect();
        let shows_cpu = shows_cpu(&series, grouping);
        Rows {
            series,
            grouping,
            summed,
            perf,
            shows_cpu,
        }
    }

    /// The series, in the session's order.
    pub fn series(&self) -> &[SeriesInfo] {
        &self.series
    }

    /// Whether rows show their CPU: with `-A`, and where rows would otherwise differ only in
    /// it (a per-L3 box, counted on one CPU of each L3 cache) and are not summed.
    pub fn shows_cpu(&self) -> bool {
        self.shows_cpu
    }

    /// The counter names the rows show (for [`Output::fit_columns`]).
    pub fn counters(&self) -> Vec<&str> {
        if self.grouping.per_socket {
            vec![self.summed.as_str()]
        } else {
            self.series.iter().map(|s| s.counter.as_str()).collect()
        }
    }

    /// The event names the rows show.
    pub fn events(&self) -> Vec<&str> {
        self.series.iter().map(|s| s.event.as_str()).collect()
    }

    /// One interval's sums, `counts` in series order: with `per_socket` one per socket and
    /// event, a per-CPU PMU's CPUs summed per socket with `sums_cpus`; by socket (and CPU),
    /// each socket's boxes and counters in the order they were given.
    pub fn sums(&self, counts: &[Count]) -> Vec<Sum> {
        let g = self.grouping;
        let mut sums: Vec<Sum> = Vec::new();
        // (socket, event index, counter unless per socket) of each sum.
        let mut keys: Vec<(u32, usize, Option<&String>)> = Vec::new();
        for (i, (s, c)) in self.series.iter().zip(counts).enumerate() {
            let key = (
                s.socket,
                s.event_index,
                (!g.per_socket).then_some(&s.counter),
            );
            let merge = g.per_socket || (s.cpu.is_some() && g.sums_cpus);
            let ratio = c.running_ratio.unwrap_or(1.0);
            if let Some(at) = keys.iter().position(|k| merge && *k == key) {
                let sum = &mut sums[at];
                sum.count += c.delta;
                // A sum is as complete as its least-running part.
                sum.ratio = sum.ratio.min(ratio);
                sum.running = match (sum.running, c.running_ratio) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                continue;
            }
            keys.push(key);
            sums.push(Sum {
                series: i,
                socket: s.socket,
                cpu: s.cpu.filter(|_| self.shows_cpu),
                count: c.delta,
                running: c.running_ratio,
                ratio,
            });
        }
        sums.sort_by_key(|s| (s.socket, s.cpu));
        sums
    }

    /// One interval's rows: its [`Self::sums`], labelled, with their rates.
    pub fn rows(&self, interval: &Interval) -> Vec<Row<'_>> {
        let seconds = interval.seconds.max(f64::MIN_POSITIVE);
        self.sums(&interval.counts)
            .into_iter()
            .map(|sum| {
                let s = &self.series[sum.series];
                let (instance, counter) = if self.grouping.per_socket {
                    (self.summed.as_str(), self.summed.as_str())
                } else {
                    (s.instance.as_str(), s.counter.as_str())
                };
                Row {
                    time: interval.time,
                    processor: s.processor,
                    unit: &s.unit,
                    instance,
                    socket: s.socket,
                    counter,
                    event: &s.event,
                    count: sum.count,
                    rate: sum.count as f64 / seconds,
                    backend: s.backend.label(),
                    perf: self.perf[sum.series].as_ref().map(|p| (p, sum.ratio)),
                    running: sum.running,
                    cpu: sum.cpu,
                }
            })
            .collect()
    }
}

/// Whether rows of `series` show their CPU (see [`Rows::shows_cpu`]).
fn shows_cpu(series: &[SeriesInfo], g: Grouping) -> bool {
    let key = |s: &SeriesInfo| {
        (
            s.socket,
            s.event_index,
            s.instance.clone(),
            s.counter.clone(),
        )
    };
    let differ_by_cpu = series.iter().enumerate().any(|(i, a)| {
        series[..i]
            .iter()
            .any(|b| key(b) == key(a) && b.cpu != a.cpu)
    });
    g.per_cpu || (differ_by_cpu && !g.sums_cpus && !g.per_socket)
}
