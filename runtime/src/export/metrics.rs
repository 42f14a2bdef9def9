//! The metrics `pmu serve` exports, and how counts become monotonic totals.

use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{PoisonError, RwLock};
use std::time::Instant;

use prometheus_client::encoding::{EncodeLabelSet, LabelSetEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use super::derived::{Change, MetricGauges};
use crate::counters::delta;
use crate::session::{Reading, SeriesInfo, TopdownSample};

/// The labels that tell one counter's series from another's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SeriesLabels {
    /// The processor's spec id (`xeon-e5-2600`).
    pub processor: String,
    /// The socket (package) the box belongs to.
    pub socket: u32,
    /// The CPU a per-CPU box is counted on, or the CPU a per-L3 box (an AMD core complex's
    /// L3) is reached through, as `pmu watch` shows it: exported as a `cpu` label, so each
    /// core complex's L3 is a series of its own. `None` for a box of the whole socket (no
    /// label).
    pub cpu: Option<u32>,
    /// The unit (box kind): `IMC`, `CBO`, `CORE`.
    pub unit: String,
    /// The box instance: `CH2`, `C3`, `CPU`.
    pub box_name: String,
    /// The counter within the box, as the spec names its register (`MC_CH2_PCI_PMON_CTR0`).
    pub counter: String,
    /// The event as the user gave it (`UNC_M_CAS_COUNT.RD`, `ev_sel=0x04,umask=0x03`).
    pub event: String,
    /// How the counter is reached: `raw` (MSR/PCI), `perf` or `sim`.
    pub backend: String,
}

impl SeriesLabels {
    fn box_labels(&self) -> BoxLabels {
        BoxLabels {
            processor: self.processor.clone(),
            socket: self.socket,
            cpu: self.cpu,
            unit: self.unit.clone(),
            box_name: self.box_name.clone(),
            backend: self.backend.clone(),
        }
    }
}

impl EncodeLabelSet for SeriesLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), fmt::Error> {
        let socket = self.socket.to_string();
        let cpu = self.cpu.map(|c| c.to_string());
        let mut labels = vec![
            ("processor", self.processor.as_str()),
            ("socket", socket.as_str()),
        ];
        if let Some(c) = &cpu {
            labels.push(("cpu", c.as_str()));
        }
        labels.extend([
            ("unit", self.unit.as_str()),
            ("box", self.box_name.as_str()),
            ("counter", self.counter.as_str()),
            ("event", self.event.as_str()),
            ("backend", self.backend.as_str()),
        ]);
        labels.encode(encoder)
    }
}

/// The labels of a box's health series.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BoxLabels {
    processor: String,
    socket: u32,
    cpu: Option<u32>,
    unit: String,
    box_name: String,
    backend: String,
}

impl EncodeLabelSet for BoxLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), fmt::Error> {
        let socket = self.socket.to_string();
        let cpu = self.cpu.map(|c| c.to_string());
        let mut labels = vec![
            ("processor", self.processor.as_str()),
            ("socket", socket.as_str()),
        ];
        if let Some(c) = &cpu {
            labels.push(("cpu", c.as_str()));
        }
        labels.extend([
            ("unit", self.unit.as_str()),
            ("box", self.box_name.as_str()),
            ("backend", self.backend.as_str()),
        ]);
        labels.encode(encoder)
    }
}

/// One counter the exporter reports.
#[derive(Debug, Clone)]
pub struct Series {
    /// Its labels.
    pub labels: SeriesLabels,
    /// The counter's width in bits (48 for the uncore counters, 64 for perf's totals): a read
    /// smaller than the one before is a wrap, not a reset.
    pub width: u32,
}

impl From<&SeriesInfo> for Series {
    /// The series a session's counter is exported as: its processor, socket, unit, box,
    /// counter, event and backend as labels, and its width.
    fn from(s: &SeriesInfo) -> Self {
        Series {
            labels: SeriesLabels {
                processor: s.processor.to_string(),
                socket: s.socket,
                cpu: s.cpu,
                unit: s.unit.clone(),
                box_name: s.instance.clone(),
                counter: s.counter.clone(),
                event: s.event.clone(),
                backend: s.backend.label().to_string(),
            },
            width: s.width,
        }
    }
}

/// What one interval's updates must not be seen half-done: the last value of every counter.
#[derive(Debug)]
struct LastRead {
    last: Vec<Option<u64>>,
    /// When the last interval ended (or the baseline was taken): derived metrics are rates
    /// over the time between two records.
    at: Option<Instant>,
}

/// The exporter's metrics: one monotonic total per counter, and its own health.
pub struct Exporter {
    series: Vec<Series>,
    registry: Registry,
    events: Family<SeriesLabels, Counter>,
    running: Family<SeriesLabels, Gauge<f64, AtomicU64>>,
    read_errors: Family<BoxLabels, Counter>,
    intervals: Counter,
    since_programmed: Gauge<f64, AtomicU64>,
    scrape_duration: Histogram,
    programmed: Instant,
    state: RwLock<LastRead>,
    derived: Option<MetricGauges>,
}

impl fmt::Debug for Exporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exporter")
            .field("series", &self.series.len())
            .finish_non_exhaustive()
    }
}

impl Exporter {
    /// An exporter for `series`, whose counters were programmed at `programmed`. Every series
    /// and every box's error count is present from the first scrape on, at zero.
    pub fn new(series: Vec<Series>, programmed: Instant) -> Self {
        let mut registry = Registry::default();
        let events = Family::<SeriesLabels, Counter>::default();
        let running = Family::<SeriesLabels, Gauge<f64, AtomicU64>>::default();
        let read_errors = Family::<BoxLabels, Counter>::default();
        let intervals = Counter::default();
        let since_programmed = Gauge::<f64, AtomicU64>::default();
        let scrape_duration = Histogram::new(exponential_buckets(0.0001, 4.0, 8));
        registry.register(
            "pmu_events",
            "Events counted since the counters were programmed (64-bit, across counter wraps)",
            events.clone(),
        );
        registry.register(
            "pmu_counter_running_ratio",
            "Fraction of the enabled time the counter ran (perf multiplexing; 1 means always)",
            running.clone(),
        );
        registry.register(
            "pmu_read_errors",
            "Failed reads of a box's counters",
            read_errors.clone(),
        );
        registry.register(
            "pmu_intervals",
            "Counting intervals completed",
            intervals.clone(),
        );
        registry.register(
            "pmu_since_programmed_seconds",
            "Seconds since the counters were programmed",
            since_programmed.clone(),
        );
        registry.register(
            "pmu_scrape_duration_seconds",
            "Time taken to encode a scrape",
            scrape_duration.clone(),
        );
        for s in &series {
            let _ = events.get_or_create(&s.labels);
            let _ = read_errors.get_or_create(&s.labels.box_labels());
        }
        let last = vec![None; series.len()];
        Self {
            series,
            registry,
            events,
            running,
            read_errors,
            intervals,
            since_programmed,
            scrape_duration,
            programmed,
            state: RwLock::new(LastRead { last, at: None }),
            derived: None,
        }
    }

    /// Also exports `gauges`' derived metrics (`pmu_metric`), evaluated from each interval's
    /// deltas of this exporter's series.
    pub fn with_metrics(mut self, gauges: MetricGauges) -> Self {
        gauges.register(&mut self.registry);
        self.derived = Some(gauges);
        self
    }

    /// The derived metrics, if any.
    pub fn metrics(&self) -> Option<&MetricGauges> {
        self.derived.as_ref()
    }

    /// The series, in the order [`record`](Self::record) takes readings.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// Takes the baseline: the counters' values when counting starts. Totals count from here.
    pub fn baseline(&self, readings: &[Option<Reading>]) {
        self.baseline_at(readings, Instant::now());
    }

    /// [`Self::baseline`], with the counters read at `at` (just before the read: the
    /// derived metrics' interval runs from read to read).
    pub fn baseline_at(&self, readings: &[Option<Reading>], at: Instant) {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        for (last, reading) in state.last.iter_mut().zip(readings) {
            if let Some(r) = reading {
                *last = Some(r.value);
            }
        }
        state.at = Some(at);
    }

    /// Adds one interval: `readings[i]` is series i's value now, or `None` where its box could
    /// not be read (counted once per box in `pmu_read_errors_total`; the next good read picks
    /// up the events in between, correct across one wrap).
    pub fn record(&self, readings: &[Option<Reading>]) {
        self.record_at(readings, Instant::now());
    }

    /// [`Self::record`], with the counters read at `now` (see [`Self::baseline_at`]).
    pub fn record_at(&self, readings: &[Option<Reading>], now: Instant) {
        self.record_with_topdown(readings, &[], now);
    }

    /// [`Self::record_at`], with the top-down registers' samples over the interval
    /// ([`crate::session::Session::read_topdown`]), which the derived metrics that read
    /// `TOPDOWN.SLOTS` or `PERF_METRICS.*` take.
    pub fn record_with_topdown(
        &self,
        readings: &[Option<Reading>],
        topdown: &[TopdownSample],
        now: Instant,
    ) {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        let mut failed: Vec<BoxLabels> = Vec::new();
        let mut changes: Vec<Change> = vec![None; self.series.len()];
        for (((series, last), reading), change) in self
            .series
            .iter()
            .zip(&mut state.last)
            .zip(readings)
            .zip(&mut changes)
        {
            match reading {
                Some(r) => {
                    if let Some(before) = *last {
                        let d = delta(before, r.value, series.width);
                        self.events.get_or_create(&series.labels).inc_by(d);
                        *change = Some((d, r.running_ratio));
                    }
                    *last = Some(r.value);
                    if let Some(ratio) = r.running_ratio {
                        self.running.get_or_create(&series.labels).set(ratio);
                    }
                }
                None => {
                    let b = series.labels.box_labels();
                    if !failed.contains(&b) {
                        failed.push(b);
                    }
                }
            }
        }
        for b in &failed {
            self.read_errors.get_or_create(b).inc();
        }
        if let (Some(gauges), Some(before)) = (&self.derived, state.at) {
            gauges.update(&changes, topdown, (now - before).as_secs_f64());
        }
        state.at = Some(now);
        self.intervals.inc();
    }

    /// The exposition, in the OpenMetrics text format (ending in `# EOF`). It reads only what
    /// counting recorded; it never touches the counters.
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let started = Instant::now();
        let _whole_intervals_only = self.state.read().unwrap_or_else(PoisonError::into_inner);
        self.since_programmed
            .set(self.programmed.elapsed().as_secs_f64());
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        if let Some(derived) = &self.derived {
            // The derived metrics are written by the library's own writer, as `pmu watch
            // --metric` writes them, before the closing `# EOF`.
            let body = out.strip_suffix("# EOF\n").unwrap_or(&out).len();
            out.truncate(body);
            let mut text = super::Exposition::new();
            derived.write(&mut text);
            out.push_str(&text.finish());
        }
        self.scrape_duration
            .observe(started.elapsed().as_secs_f64());
        Ok(out)
    }

    /// The total of series `i` so far.
    pub fn total(&self, i: usize) -> Option<u64> {
        let _whole_intervals_only = self.state.read().unwrap_or_else(PoisonError::into_inner);
        self.series
            .get(i)
            .map(|s| self.events.get_or_create(&s.labels).get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(counter: &str, width: u32) -> Series {
        Series {
            labels: SeriesLabels {
                processor: "xeon-e5-2600".into(),
                socket: 0,
                cpu: None,
                unit: "IMC".into(),
                box_name: "CH0".into(),
                counter: counter.into(),
                event: "UNC_M_CAS_COUNT.RD".into(),
                backend: "sim".into(),
            },
            width,
        }
    }

    fn at(value: u64) -> Option<Reading> {
        Some(Reading {
            value,
            running_ratio: None,
            times: None,
            counted: None,
        })
    }

    #[test]
    fn a_sessions_series_is_exported_with_its_labels_and_width() {
        let info = SeriesInfo {
            processor: "xeon-e5-2600",
            socket: 1,
            unit: "IMC".into(),
            instance: "CH2".into(),
            counter: "MC_CH2_PCI_PMON_CTR0".into(),
            event: "event=UNC_M_CAS_COUNT.RD".into(),
            event_index: 0,
            backend: crate::session::BackendKind::Simulator,
            width: 48,
            perf: None,
            cpu: None,
        };
        let s = Series::from(&info);
        assert_eq!(
            (
                s.labels.box_name.as_str(),
                s.labels.backend.as_str(),
                s.width
            ),
            ("CH2", "sim", 48)
        );
        let text = Exporter::new(vec![s], Instant::now()).encode().unwrap();
        assert!(
            text.contains(r#"pmu_events_total{processor="xeon-e5-2600",socket="1",unit="IMC",box="CH2",counter="MC_CH2_PCI_PMON_CTR0",event="event=UNC_M_CAS_COUNT.RD",backend="sim"} 0"#),
            "{text}"
        );
    }

    #[test]
    fn totals_grow_across_a_48_bit_wrap() {
        let e = Exporter::new(vec![series("CTR0", 48)], Instant::now());
        e.baseline(&[at((1 << 48) - 10)]);
        e.record(&[at(5)]);
        assert_eq!(e.total(0), Some(15));
        e.record(&[at(1005)]);
        assert_eq!(e.total(0), Some(1015));
    }

    #[test]
    fn a_failed_read_counts_an_error_per_box_and_loses_no_events() {
        let e = Exporter::new(vec![series("CTR0", 48), series("CTR1", 48)], Instant::now());
        e.baseline(&[at(0), at(0)]);
        e.record(&[None, None]);
        e.record(&[at(70), at(30)]);
        assert_eq!((e.total(0), e.total(1)), (Some(70), Some(30)));
        let text = e.encode().unwrap();
        assert!(
            text.contains(r#"pmu_read_errors_total{processor="xeon-e5-2600",socket="0",unit="IMC",box="CH0",backend="sim"} 1"#),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn every_series_is_exported_from_the_start_with_its_labels() {
        let e = Exporter::new(vec![series("CTR0", 48)], Instant::now());
        let text = e.encode().unwrap();
        assert!(
            text.contains(r#"pmu_events_total{processor="xeon-e5-2600",socket="0",unit="IMC",box="CH0",counter="CTR0",event="UNC_M_CAS_COUNT.RD",backend="sim"} 0"#),
            "{text}"
        );
        assert!(text.contains("# TYPE pmu_since_programmed_seconds gauge"));
    }
}
