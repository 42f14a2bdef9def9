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

use super::sim::{count_on_sim, SimCounts};
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

/// `pmu stat --sim --td-level N -- CMD`: the top-down tree of a simulator of `processor`
/// running `workload` over the command's run, and its exit status.
pub fn topdown_on_sim(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    level: u8,
    command: &[String],
    stop: &AtomicBool,
) -> Result<(Vec<TopdownNode>, SimCounts), StatError> {
    let order = tree_order(processor.id, level);
    if order.is_empty() {
        return Err(StatError::Usage(format!(
            "{} has no top-down hierarchy in the spec (`pmu list --metrics --processor {}`); \
             name one that has (a metric with a parent in `pmu list --metrics`)",
            processor.id, processor.id
        )));
    }
    let plan = sim_plan(processor, &with_threshold_inputs(processor.id, &order))?;
    let counts = count_on_sim(processor, workload, &plan, command, stop)?;
    let nodes = tree_nodes(&order, &machine_values(&plan, &counts));
    Ok((nodes, counts))
}

/// The tree as text: a node a line, indented by depth, value, unit, and the marker on each
/// node over its threshold.
pub fn render_tree(nodes: &[TopdownNode], level: u8) -> String {
    let mut t = TextTable::new(&[&format!("top-down, level {level}"), "value", "unit", ""])
        .right_align(&[1]);
    for n in nodes {
        t.row(vec![
            format!("{}{}", "  ".repeat(usize::from(n.depth)), n.metric.name),
            n.value.map_or("n/a".into(), |v| format!("{v:.2}")),
            n.metric.unit.to_string(),
            if n.over == Some(true) {
                OVER_THRESHOLD.to_string()
            } else {
                String::new()
            },
        ]);
    }
    let mut out = t.render();
    out.push_str(&format!(
        "\n{OVER_THRESHOLD}: over its threshold (Intel's metric list), where to look next\n"
    ));
    out
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
    let chosen = crate::metrics::select(processor.id, selectors)
        .map_err(|e| StatError::Usage(format!("-M: {e}")))?;
    let plan = sim_plan(processor, &chosen)?;
    let counts = count_on_sim(processor, workload, &plan, command, stop)?;
    Ok((machine_values(&plan, &counts), counts))
}

/// One reading's end since counting began (seconds) and its metric values.
pub type TimedValues = (f64, Vec<MetricValue>);

/// As [`metrics_on_sim`], a reading every `every` of the command's run (`-I`), the last one
/// the rest: each reading's end since counting began (seconds) and its values, with the
/// command's exit status.
pub fn metrics_on_sim_every(
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    selectors: &[String],
    (command, stop): (&[String], &AtomicBool),
    every: std::time::Duration,
) -> Result<(Vec<TimedValues>, i32), StatError> {
    let chosen = crate::metrics::select(processor.id, selectors)
        .map_err(|e| StatError::Usage(format!("-M: {e}")))?;
    let plan = sim_plan(processor, &chosen)?;
    let readings =
        super::sim::count_on_sim_every(processor, workload, &plan, command, stop, Some(every))?;
    let code = readings.last().map_or(0, |r| r.exit_code);
    let values = readings
        .iter()
        .map(|r| (r.ends_at.as_secs_f64(), machine_values(&plan, r)))
        .collect();
    Ok((values, code))
}

/// Metric values as a table: name, value, unit.
pub fn render_metrics(values: &[MetricValue]) -> String {
    let mut t = TextTable::new(&["metric", "value", "unit"]).right_align(&[1]);
    for v in values {
        t.row(vec![
            v.metric.name.to_string(),
            v.value.map_or("n/a".into(), |x| format!("{x:.2}")),
            v.metric.unit.to_string(),
        ]);
    }
    t.render()
}

/// One box's pair of bandwidths (a memory channel's read and write, a UPI link's transmit and
/// receive), or one socket's (IO read and write, summed over its CHAs).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelBandwidth {
    /// The socket.
    pub socket: u32,
    /// The box (`IMC0`, `CH2`, `UPI1`); `total` for a view by socket.
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

/// `spec`'s two metrics over the command's run, per box or per socket.
fn pair_on_sim(
    spec: &ViewSpec,
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    command: &[String],
    stop: &AtomicBool,
) -> Result<(Vec<ChannelBandwidth>, SimCounts), StatError> {
    let metrics = [
        view_metric(processor.id, spec.name, spec.metrics[0])?,
        view_metric(processor.id, spec.name, spec.metrics[1])?,
    ];
    let plan = sim_plan(processor, &metrics)?;
    let counts = count_on_sim(processor, workload, &plan, command, stop)?;
    let place = |socket: u32, instance: &str| match spec.box_column {
        Some(_) => (socket, instance.to_string()),
        None => (socket, "total".to_string()),
    };
    let mut places: Vec<(u32, String)> = Vec::new();
    for s in &counts.series {
        let p = place(s.socket, &s.instance);
        if !places.contains(&p) {
            places.push(p);
        }
    }
    let rows = places
        .into_iter()
        .map(|(socket, channel)| {
            let mut sums = vec![(0u64, None); plan.events.len()];
            for (s, c) in counts.series.iter().zip(&counts.interval.counts) {
                if place(s.socket, &s.instance) == (socket, channel.clone()) {
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
                unit: metrics[0].unit,
            }
        })
        .collect();
    Ok((rows, counts))
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
    pair_on_sim(&VIEW_SPECS[0], processor, workload, command, stop)
}

/// `pmu stat --sim --view VIEW -- CMD` as text: `memory` (per channel, as pcm-memory), `io`
/// (each socket's IO read and write bandwidth, Intel's `io_bandwidth_read`/`_write` over the
/// CHAs) or `upi` (each link's data transmit and receive bandwidth,
/// `upi_data_transmit_bw`/`upi_data_receive_bw` per UPI box), with each socket's total.
pub fn view_on_sim(
    view: &str,
    processor: &'static ProcessorInfo,
    workload: &'static NamedWorkload,
    command: &[String],
    stop: &AtomicBool,
) -> Result<(String, SimCounts), StatError> {
    let spec = VIEW_SPECS.iter().find(|v| v.name == view).ok_or_else(|| {
        StatError::Usage(format!("no view {view}: name one of {}", VIEWS.join(", ")))
    })?;
    let (rows, counts) = pair_on_sim(spec, processor, workload, command, stop)?;
    Ok((render_pairs(spec, &rows), counts))
}

/// The channels as pcm-memory shows them: a row per socket and channel, then each socket's
/// total.
pub fn render_memory(rows: &[ChannelBandwidth]) -> String {
    render_pairs(&VIEW_SPECS[0], rows)
}

/// A view's rows: per box, a row per socket and box then the socket's total; per socket, a
/// row each.
fn render_pairs(spec: &ViewSpec, rows: &[ChannelBandwidth]) -> String {
    let unit = rows.first().map_or("MB/sec", |r| r.unit);
    let (read, write) = (
        format!("{} {unit}", spec.columns[0]),
        format!("{} {unit}", spec.columns[1]),
    );
    let value = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.2}"));
    let Some(box_column) = spec.box_column else {
        let mut t = TextTable::new(&["socket", &read, &write]).right_align(&[0, 1, 2]);
        for r in rows {
            t.row(vec![r.socket.to_string(), value(r.read), value(r.write)]);
        }
        return t.render();
    };
    let mut t = TextTable::new(&["socket", box_column, &read, &write]).right_align(&[0, 2, 3]);
    let mut sockets: Vec<u32> = rows.iter().map(|r| r.socket).collect();
    sockets.dedup();
    for socket in sockets {
        let mine: Vec<&ChannelBandwidth> = rows.iter().filter(|r| r.socket == socket).collect();
        for r in &mine {
            t.row(vec![
                socket.to_string(),
                r.channel.clone(),
                value(r.read),
                value(r.write),
            ]);
        }
        let total = |f: fn(&ChannelBandwidth) -> Option<f64>| {
            mine.iter().map(|r| f(r)).sum::<Option<f64>>()
        };
        t.row(vec![
            socket.to_string(),
            "total".into(),
            value(total(|r| r.read)),
            value(total(|r| r.write)),
        ]);
    }
    t.render()
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

/// Why `pmu stat`'s simulator options are refused as given, with what to type instead, or
/// `None`: `--sim --metric-only` without `-M` or `--td-level`, or `-M`, `--td-level` or
/// `--view` (`given`: whether each of `--td-level`, `--view` and `-M` is) without `--sim`
/// ([`without_sim`]).
pub fn refused(sim: bool, metric_only: bool, given: (bool, bool, bool)) -> Option<String> {
    let (td_level, view, metrics) = given;
    if sim && metric_only && !metrics && !td_level {
        return Some(
            "--metric-only prints metric values alone: name the metrics with -M (pmu stat --sim \
             -M TmaL1 --metric-only -- CMD) or the tree with --td-level N"
                .into(),
        );
    }
    without_sim(td_level, view, metrics).filter(|_| !sim)
}

/// Why `-M`, `--td-level` or `--view` (each given or not: `td_level`, `view`, `metrics`)
/// without `--sim` is refused, and what to type instead; `None` if none is given.
/// `pmu stat` counts metrics on the simulator only so far; the machine's own lack (no
/// hardware or uncore PMU, no MSR access, from
/// [`CountingAccess`](crate::report::machine::CountingAccess)) is named with what works here.
pub fn without_sim(td_level: bool, view: bool, metrics: bool) -> Option<String> {
    let given = [(td_level, "--td-level"), (view, "--view"), (metrics, "-M")];
    let option = given.iter().find(|(g, _)| *g)?.1;
    let processor = default_sim_processor().map_or("NAME", |p| p.name);
    let access = crate::report::machine::CountingAccess::of(None);
    let mut m = format!(
        "{option} is counted on the simulator only so far: add --sim (pmu stat --sim \
         --processor {processor} {option} ... -- CMD); on real hardware, `pmu watch \
         --metric NAME` counts a metric's unit"
    );
    let missing = access.missing();
    if !missing.is_empty() {
        m += &format!("; this machine has {}", missing.join(", "));
    }
    if let Some(instead) = access.instead() {
        m += &format!("; {instead}");
    }
    Some(m)
}
