//! What `pmu stat` shows from a metric plan rather than from perf's rows: the top-down tree
//! to a level (`--td-level N`, as toplev and `perf stat --td-level` show it), each node over
//! its threshold (Intel's `Threshold`, in the spec) marked; and named views across units
//! (`--view memory`: each socket's DRAM read and write bandwidth per channel, as pcm-memory
//! shows it; `--view io`: each socket's IO read and write bandwidth; `--view upi`: each UPI
//! link's transmit and receive bandwidth).

use std::sync::atomic::AtomicBool;

use pmu_regs::metrics::{for_processor, MetricInfo};
use pmu_regs::ProcessorInfo;

use crate::machine::{Machine, NamedWorkload};
use crate::metrics::{MetricValue, Plan};
use crate::report::table::TextTable;

use super::sim::SimCounts;
use super::StatError;

/// The marker a node over its threshold carries, as toplev marks the bottleneck.
pub const OVER_THRESHOLD: &str = "<==";

/// The views `--view` names.
pub const VIEWS: [&str; 3] = ["memory", "io", "upi"];

/// One node of the top-down tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopdownNode {
    /// The metric.
    pub metric: &'static MetricInfo,
    /// Its depth in the tree (0: level 1).
    pub depth: u8,
    /// Its value; `None` where it is not defined.
    pub value: Option<f64>,
    /// Whether it is over its threshold; `None` without a threshold, or where a value the
    /// threshold reads is missing.
    pub over: Option<bool>,
}

/// The top-down tree of `processor` to `level`: each metric of the hierarchy (one with a
/// parent, or the parent of one) whose level is at most `level` and whose ancestors all are,
/// each after its parent, siblings in spec order; with each one's depth.
pub fn tree_order(processor: &str, level: u8) -> Vec<(&'static MetricInfo, u8)> {
    let all = for_processor(processor);
    let is_parent = |m: &MetricInfo| all.iter().any(|c| c.parent == Some(m.name));
    let mut out = Vec::new();
    let add = |parent: Option<&str>, depth: u8, out: &mut Vec<(&'static MetricInfo, u8)>| {
        for m in all
            .iter()
            .filter(|m| m.parent == parent && m.level <= level)
            .filter(|m| parent.is_some() || is_parent(m))
        {
            out.push((m, depth));
        }
    };
    add(None, 0, &mut out);
    // Breadth by depth, then each child placed after its parent.
    let mut i = 0;
    while i < out.len() {
        let (m, depth) = out[i];
        let mut children = Vec::new();
        add(Some(m.name), depth + 1, &mut children);
        let at = i + 1;
        for (k, c) in children.into_iter().enumerate() {
            out.insert(at + k, c);
        }
        i += 1;
    }
    out
}

/// The processor `pmu stat --sim` simulates unless told: the first of the spec whose
/// top-down level 1 reads the top-down registers (IA32_PERF_METRICS: Ice Lake-SP on) and that
/// has the memory view's metrics.
pub fn default_sim_processor() -> Option<&'static ProcessorInfo> {
    pmu_regs::PROCESSORS.iter().copied().find(|p| {
        let reads_registers = tree_order(p.id, 1).iter().any(|(m, _)| {
            m.events
                .iter()
                .any(|e| e.read != pmu_regs::metrics::MetricRead::Counted)
        });
        reads_registers
            && MEMORY_METRICS
                .iter()
                .all(|n| view_metric(p.id, "memory", n).is_ok())
    })
}

/// The metrics the memory view reads, on each channel's box.
const MEMORY_METRICS: [&str; 2] = ["memory_bandwidth_read", "memory_bandwidth_write"];

/// The metrics `nodes` need counted: theirs, and those their thresholds read.
fn with_threshold_inputs(
    processor: &str,
    nodes: &[(&'static MetricInfo, u8)],
) -> Vec<&'static MetricInfo> {
    let all = for_processor(processor);
    let mut out: Vec<&'static MetricInfo> = nodes.iter().map(|(m, _)| *m).collect();
    for (m, _) in nodes {
        for name in m.threshold_metrics {
            if let Some(t) = all.iter().find(|x| x.name == *name) {
                if !out.iter().any(|o| o.name == t.name) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// Every value of `counts` summed over the whole machine (every socket and CPU), as `perf
/// stat -a` sums them.
fn machine_values(plan: &Plan, counts: &SimCounts) -> Vec<MetricValue> {
    let series: Vec<_> = counts
        .series
        .iter()
        .cloned()
        .map(|mut s| {
            s.socket = 0;
            s
        })
        .collect();
    let mut interval = counts.interval.clone();
    for t in &mut interval.topdown {
        t.socket = 0;
    }
    plan.interval_values(&series, &interval, false, &counts.constants)
}

/// The tree's nodes with their values and markers, from `values` (by metric name).
pub fn tree_nodes(order: &[(&'static MetricInfo, u8)], values: &[MetricValue]) -> Vec<TopdownNode> {
    let value_of = |name: &str| {
        values
            .iter()
            .find(|v| v.metric.name == name)
            .and_then(|v| v.value)
    };
    order
        .iter()
        .map(|&(metric, depth)| TopdownNode {
            metric,
            depth,
            value: value_of(metric.name),
            over: metric.over_threshold(value_of),
        })
        .collect()
}

/// A plan of `metrics` for `processor`, under the simulator's constants.
fn sim_plan(
    processor: &'static ProcessorInfo,
    metrics: &[&'static MetricInfo],
) -> Result<Plan, StatError> {
    let part = crate::constants::PartConstants::read(
        &Machine::simulating(processor),
        processor,
        std::path::Path::new("/"),
    );
    Plan::new(processor.id, metrics, &part.constants()).map_err(|e| StatError::Usage(e.to_string()))
}

/// A reading's end since counting began (seconds), and what it shows.
pub type Timed<T> = (f64, T);

/// Each reading's items (the tree's nodes, metric values, a view's rows) by its end, with
/// the last reading's counts (the command's exit status).
pub type SimReadings<T> = (Vec<Timed<Vec<T>>>, SimCounts);

/// The last of `readings` (there is one at least: the command's whole run).
fn last(mut readings: Vec<SimCounts>) -> Result<SimCounts, StatError> {
    readings
        .pop()
        .ok_or_else(|| StatError::Read(std::io::Error::other("the simulator gave no reading")))
}

/// `pmu stat --sim --td-level N -- CMD`: the top-down tree of a simulator of `processor`
/// running `workload` over the command's run, and its exit status.
pub fn topdown_on_sim(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    level: u8,
    command: &[String],
    stop: &AtomicBool,
) -> Result<(Vec<TopdownNode>, SimCounts), StatError> {
    let (trees, counts) = topdown_on_sim_every(processor, workload, level, (command, stop), None)?;
    let nodes = trees
        .into_iter()
        .next_back()
        .map(|(_, n)| n)
        .unwrap_or_default();
    Ok((nodes, counts))
}

/// As [`topdown_on_sim`], a tree for every `every` of the command's run (`-I`; `None`: one
/// for it all), the last one the rest, as perf's last, partial interval; with the last
/// reading's counts (its exit status).
pub fn topdown_on_sim_every(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    level: u8,
    (command, stop): (&[String], &AtomicBool),
    every: Option<std::time::Duration>,
) -> Result<SimReadings<TopdownNode>, StatError> {
    let order = tree_order(processor.id, level);
    if order.is_empty() {
        return Err(StatError::Usage(format!(
            "{} has no top-down hierarchy in the spec (`pmu list --metrics --processor {}`); \
             name one that has (a metric with a parent in `pmu list --metrics`)",
            processor.id, processor.id
        )));
    }
    let plan = sim_plan(processor, &with_threshold_inputs(processor.id, &order))?;
    let readings =
        super::sim::count_on_sim_every(processor, workload, &plan, command, stop, every)?;
    let trees = readings
        .iter()
        .map(|r| {
            let nodes = tree_nodes(&order, &machine_values(&plan, r));
            (r.ends_at.as_secs_f64(), nodes)
        })
        .collect();
    Ok((trees, last(readings)?))
}

/// The tree as text: a node a line, indented by depth, value, unit, and the marker on each
/// node over its threshold.
pub fn render_tree(nodes: &[TopdownNode], level: u8) -> String {
    render_trees(&[(0.0, nodes.to_vec())], level, false)
}

/// Trees as text, each reading's after the last; `timed` (`-I`): each line stamped with its
/// reading's end in a first column, as toplev's interval mode and perf stat -I stamp theirs.
pub fn render_trees(trees: &[Timed<Vec<TopdownNode>>], level: u8, timed: bool) -> String {
    let row = |n: &TopdownNode| {
        vec![
            format!("{}{}", "  ".repeat(usize::from(n.depth)), n.metric.name),
            n.value.map_or("n/a".into(), |v| format!("{v:.2}")),
            n.metric.unit.to_string(),
            if n.over == Some(true) {
                OVER_THRESHOLD.to_string()
            } else {
                String::new()
            },
        ]
    };
    let readings = trees
        .iter()
        .map(|(t, nodes)| (*t, nodes.iter().map(row).collect()))
        .collect();
    let header = format!("top-down, level {level}");
    let mut out = stamped(&[&header, "value", "unit", ""], &[1], readings, timed);
    out.push_str(&format!(
        "\n{OVER_THRESHOLD}: over its threshold (Intel's metric list), where to look next\n"
    ));
    out
}

/// A table of `header` and each reading's rows after the last (columns `right` aligned to
/// the right); `timed`: a first column `time`, each row's reading's end (perf's `-I` stamp).
fn stamped(
    header: &[&str],
    right: &[usize],
    readings: Vec<Timed<Vec<Vec<String>>>>,
    timed: bool,
) -> String {
    let shift = usize::from(timed);
    let columns: Vec<&str> = timed
        .then_some("time")
        .into_iter()
        .chain(header.iter().copied())
        .collect();
    let aligned: Vec<usize> = (0..shift).chain(right.iter().map(|c| c + shift)).collect();
    let mut t = TextTable::new(&columns).right_align(&aligned);
    for (ends, rows) in readings {
        let time = super::report::interval_time(ends).trim_start().to_string();
        for row in rows {
            t.row(timed.then(|| time.clone()).into_iter().chain(row).collect());
        }
    }
    t.render()
}

/// `pmu stat --sim -M METRICS -- CMD`: the metrics `selectors` name (a metric, category or
/// group, as `perf stat -M` takes them; all on one unit), over the command's run on a
/// simulator of `processor` running `workload`, summed over the whole machine.
pub fn metrics_on_sim(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    selectors: &[String],
    command: &[String],
    stop: &AtomicBool,
) -> Result<(Vec<MetricValue>, SimCounts), StatError> {
    let (readings, counts) =
        metrics_on_sim_every(processor, workload, selectors, (command, stop), None)?;
    let values = readings
        .into_iter()
        .next_back()
        .map(|(_, v)| v)
        .unwrap_or_default();
    Ok((values, counts))
}

/// As [`metrics_on_sim`], a reading every `every` of the command's run (`-I`; `None`: one
/// for it all), the last one the rest: each reading's end since counting began (seconds)
/// and its values, with the last reading's counts (its exit status).
pub fn metrics_on_sim_every(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    selectors: &[String],
    (command, stop): (&[String], &AtomicBool),
    every: Option<std::time::Duration>,
) -> Result<SimReadings<MetricValue>, StatError> {
    let chosen = crate::metrics::select(processor.id, selectors)
        .map_err(|e| StatError::Usage(format!("-M: {e}")))?;
    let plan = sim_plan(processor, &chosen)?;
    let readings =
        super::sim::count_on_sim_every(processor, workload, &plan, command, stop, every)?;
    let values = readings
        .iter()
        .map(|r| (r.ends_at.as_secs_f64(), machine_values(&plan, r)))
        .collect();
    Ok((values, last(readings)?))
}

/// Metric values as a table: name, value, unit.
pub fn render_metrics(values: &[MetricValue]) -> String {
    render_metrics_every(&[(0.0, values.to_vec())], false)
}

/// Readings of metric values as a table, each reading's rows after the last; `timed`
/// (`-I`): each row stamped with its reading's end.
pub fn render_metrics_every(readings: &[Timed<Vec<MetricValue>>], timed: bool) -> String {
    let row = |v: &MetricValue| {
        vec![
            v.metric.name.to_string(),
            v.value.map_or("n/a".into(), |x| format!("{x:.2}")),
            v.metric.unit.to_string(),
        ]
    };
    let readings = readings
        .iter()
        .map(|(t, values)| (*t, values.iter().map(row).collect()))
        .collect();
    stamped(&["metric", "value", "unit"], &[1], readings, timed)
}

/// One box's pair of bandwidths (a memory channel's read and write, a UPI link's transmit and
/// receive), or one socket's (IO read and write, summed over its CHAs).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelBandwidth {
    /// The socket.
    pub socket: u32,
    /// The channel's (link's) number on its socket, counted in the order of the socket's
    /// boxes as pcm-memory numbers its channels (`3`: the socket's fourth, box `IMC3`);
    /// `total` for a view by socket.
    pub channel: String,
    /// The first bandwidth (read; UPI: transmit), in the metric's unit.
    pub read: Option<f64>,
    /// The second (write; UPI: receive).
    pub write: Option<f64>,
    /// The unit (`MB/sec`).
    pub unit: &'static str,
}

/// What a view across units shows: the two metrics, their column names, and whether a row
/// is a box or a socket.
struct ViewSpec {
    name: &'static str,
    metrics: [&'static str; 2],
    columns: [&'static str; 2],
    box_column: Option<&'static str>,
}

/// The views: pcm-memory's channels, pcm's UPI links, and each socket's IO (the CHAs' IO
/// requests, as Intel's `io_bandwidth_*` metrics count them).
const VIEW_SPECS: [ViewSpec; 3] = [
    ViewSpec {
        name: "memory",
        metrics: MEMORY_METRICS,
        columns: ["read", "write"],
        box_column: Some("channel"),
    },
    ViewSpec {
        name: "io",
        metrics: ["io_bandwidth_read", "io_bandwidth_write"],
        columns: ["read", "write"],
        box_column: None,
    },
    ViewSpec {
        name: "upi",
        metrics: ["upi_data_transmit_bw", "upi_data_receive_bw"],
        columns: ["transmit", "receive"],
        box_column: Some("link"),
    },
];

/// The metric of `processor` called `name`, or why `view` needs it.
fn view_metric(processor: &str, view: &str, name: &str) -> Result<&'static MetricInfo, StatError> {
    for_processor(processor)
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| {
            StatError::Usage(format!(
                "--view {view} reads the metric {name}, which {processor} does not have in \
                 the spec; name a processor that has it (`pmu list --metrics PATTERN`)"
            ))
        })
}

/// `spec`'s two metrics over the command's run, per box or per socket: one set of rows per
/// reading (`every`: `-I`; `None`, one for the whole run), with the last reading's counts.
fn pair_on_sim(
    spec: &ViewSpec,
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    (command, stop): (&[String], &AtomicBool),
    every: Option<std::time::Duration>,
) -> Result<SimReadings<ChannelBandwidth>, StatError> {
    let metrics = [
        view_metric(processor.id, spec.name, spec.metrics[0])?,
        view_metric(processor.id, spec.name, spec.metrics[1])?,
    ];
    let plan = sim_plan(processor, &metrics)?;
    let readings =
        super::sim::count_on_sim_every(processor, workload, &plan, command, stop, every)?;
    let pairs = readings
        .iter()
        .map(|r| {
            (
                r.ends_at.as_secs_f64(),
                pairs_of(spec, &plan, r, metrics[0].unit),
            )
        })
        .collect();
    Ok((pairs, last(readings)?))
}

/// The rows of one reading: each box (numbered on its socket in the order of the socket's
/// boxes, as pcm-memory numbers its channels) or each socket, its two metrics evaluated over
/// its own counts.
fn pairs_of(
    spec: &ViewSpec,
    plan: &Plan,
    counts: &SimCounts,
    unit: &'static str,
) -> Vec<ChannelBandwidth> {
    // Each place: its socket, its box's name (none for a view by socket) and its name here.
    let mut places: Vec<(u32, Option<&str>, String)> = Vec::new();
    for s in &counts.series {
        let name = spec.box_column.map(|_| s.instance.as_str());
        if !places.iter().any(|p| (p.0, p.1) == (s.socket, name)) {
            let shown = match name {
                Some(_) => places
                    .iter()
                    .filter(|p| p.0 == s.socket)
                    .count()
                    .to_string(),
                None => "total".to_string(),
            };
            places.push((s.socket, name, shown));
        }
    }
    places
        .into_iter()
        .map(|(socket, name, channel)| {
            let mut sums = vec![(0u64, None); plan.events.len()];
            for (s, c) in counts.series.iter().zip(&counts.interval.counts) {
                let mine = spec.box_column.map(|_| s.instance.as_str()) == name;
                if s.socket == socket && mine {
                    if let Some(slot) = sums.get_mut(s.event_index) {
                        slot.0 += c.delta;
                        slot.1 = c.running_ratio;
                    }
                }
            }
            let values = plan.evaluate(&sums, &counts.constants);
            ChannelBandwidth {
                socket,
                channel,
                read: values[0],
                write: values[1],
                unit,
            }
        })
        .collect()
}

/// The view `name`, or why there is none.
fn view_spec(name: &str) -> Result<&'static ViewSpec, StatError> {
    VIEW_SPECS.iter().find(|v| v.name == name).ok_or_else(|| {
        StatError::Usage(format!("no view {name}: name one of {}", VIEWS.join(", ")))
    })
}

/// `pmu stat --sim --view memory -- CMD`: each socket's DRAM read and write bandwidth per
/// channel (the spec's `memory_bandwidth_read` and `memory_bandwidth_write`, evaluated on each
/// channel's box), over the command's run on a simulator of `processor` running `workload`.
pub fn memory_on_sim(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    command: &[String],
    stop: &AtomicBool,
) -> Result<(Vec<ChannelBandwidth>, SimCounts), StatError> {
    let (readings, counts) =
        pair_on_sim(&VIEW_SPECS[0], processor, workload, (command, stop), None)?;
    let rows = readings
        .into_iter()
        .next_back()
        .map(|(_, r)| r)
        .unwrap_or_default();
    Ok((rows, counts))
}

/// `pmu stat --sim --view VIEW -- CMD` as text: `memory` (per channel, as pcm-memory), `io`
/// (each socket's IO read and write bandwidth, Intel's `io_bandwidth_read`/`_write` over the
/// CHAs) or `upi` (each link's data transmit and receive bandwidth,
/// `upi_data_transmit_bw`/`upi_data_receive_bw` per UPI box), with each socket's total; a
/// table for every `every` of the command's run (`-I`), each row stamped with its end.
pub fn view_on_sim(
    view: &str,
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    (command, stop): (&[String], &AtomicBool),
    every: Option<std::time::Duration>,
) -> Result<(String, SimCounts), StatError> {
    let spec = view_spec(view)?;
    let (readings, counts) = pair_on_sim(spec, processor, workload, (command, stop), every)?;
    let rows = readings
        .iter()
        .map(|(t, rows)| (*t, pair_rows(spec, rows)))
        .collect();
    let (header, right) = pair_header(spec, readings.first().and_then(|(_, r)| r.first()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    Ok((stamped(&header, &right, rows, every.is_some()), counts))
}

/// The channels as pcm-memory shows them: a row per socket and channel, then each socket's
/// total.
pub fn render_memory(rows: &[ChannelBandwidth]) -> String {
    let spec = &VIEW_SPECS[0];
    let (header, right) = pair_header(spec, rows.first());
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    stamped(&header, &right, vec![(0.0, pair_rows(spec, rows))], false)
}

/// A view's column headings (the unit from `first`'s) and the columns aligned right.
fn pair_header(spec: &ViewSpec, first: Option<&ChannelBandwidth>) -> (Vec<String>, Vec<usize>) {
    let unit = first.map_or("MB/sec", |r| r.unit);
    let pair = [
        format!("{} {unit}", spec.columns[0]),
        format!("{} {unit}", spec.columns[1]),
    ];
    match spec.box_column {
        Some(b) => (
            ["socket".to_string(), b.to_string()]
                .into_iter()
                .chain(pair)
                .collect(),
            vec![0, 1, 2, 3],
        ),
        None => (
            std::iter::once("socket".to_string()).chain(pair).collect(),
            vec![0, 1, 2],
        ),
    }
}

/// A view's rows: per box, a row per socket and box then the socket's total; per socket, a
/// row each.
fn pair_rows(spec: &ViewSpec, rows: &[ChannelBandwidth]) -> Vec<Vec<String>> {
    let value = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.2}"));
    if spec.box_column.is_none() {
        return rows
            .iter()
            .map(|r| vec![r.socket.to_string(), value(r.read), value(r.write)])
            .collect();
    }
    let mut sockets: Vec<u32> = rows.iter().map(|r| r.socket).collect();
    sockets.dedup();
    let mut out = Vec::new();
    for socket in sockets {
        let mine: Vec<&ChannelBandwidth> = rows.iter().filter(|r| r.socket == socket).collect();
        for r in &mine {
            out.push(vec![
                socket.to_string(),
                r.channel.clone(),
                value(r.read),
                value(r.write),
            ]);
        }
        let total = |f: fn(&ChannelBandwidth) -> Option<f64>| {
            mine.iter().map(|r| f(r)).sum::<Option<f64>>()
        };
        out.push(vec![
            socket.to_string(),
            "total".into(),
            value(total(|r| r.read)),
            value(total(|r| r.write)),
        ]);
    }
    out
}

/// The line that says what was counted: the command, the simulated processor and its
/// workload.
pub fn sim_header(command: &[String], counts: &SimCounts) -> String {
    let target = if command.is_empty() {
        "system wide".to_string()
    } else {
        format!("'{}'", command.join(" "))
    };
    format!(
        "\n Performance counter stats for {target} (simulated {}, workload {}):\n\n",
        counts.processor.id, counts.workload.name
    )
}
