//! `pmu stat [OPTIONS] -- CMD [ARGS]`: perf stat's grammar, parsed here; the measuring, the
//! rows and their layouts are the library's `stat`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use pmu_runtime::stat::aggr::StatAggr;
use pmu_runtime::stat::options::{self, StatOptions};
use pmu_runtime::stat::report::{self, StatLayout};
use pmu_runtime::stat::run::{self, StatPlan};
use pmu_runtime::stat::simulated::{self, SimRequest, SimShow};
use pmu_runtime::stat::{events, metric_only};

/// `pmu stat`'s options, as perf stat spells them.
#[derive(Args)]
pub struct StatArgs {
    /// Events, in perf's language (task-clock,page-faults; msr/tsc/; cycles:u); repeatable.
    /// Without it, perf's default set (task-clock or, system-wide, cpu-clock;
    /// context-switches, cpu-migrations, page-faults, cycles, instructions, branches,
    /// branch-misses), `<not supported>` where the machine lacks one.
    #[arg(short = 'e', long = "event", value_name = "EVENTS")]
    event: Vec<String>,
    /// Count every task on every online CPU (system-wide), for the command's lifetime or
    /// until Ctrl-C.
    #[arg(short = 'a', long = "all-cpus")]
    all_cpus: bool,
    /// Count every task on these CPUs (0-3,8).
    #[arg(
        short = 'C',
        long = "cpu",
        value_name = "CPUS",
        conflicts_with = "pid",
        allow_negative_numbers = true
    )]
    cpu: Option<String>,
    /// Count these running processes (42,43) and the tasks they start, until they end or
    /// Ctrl-C.
    #[arg(
        short = 'p',
        long = "pid",
        value_name = "PIDS",
        allow_negative_numbers = true,
        conflicts_with = "all_cpus"
    )]
    pid: Option<String>,
    /// Run the command N times and print means, with their spread ( +- x.xx% ).
    #[arg(
        short = 'r',
        long = "repeat",
        value_name = "N",
        default_value_t = 1,
        conflicts_with = "interval",
        allow_negative_numbers = true,
        value_parser = options::repeat_runs
    )]
    repeat: u32,
    /// Print the counts of every MS milliseconds (at least 10).
    #[arg(short = 'I', long = "interval-print", value_name = "MS", value_parser = options::interval_ms,
          allow_negative_numbers = true)]
    interval: Option<u64>,
    /// With -I: stop after N intervals.
    #[arg(long = "interval-count", value_name = "N", requires = "interval", allow_negative_numbers = true,
          value_parser = options::interval_count)]
    interval_count: Option<u64>,
    /// With -a or -C: each CPU's counts on their own rows.
    #[arg(short = 'A', long = "no-aggr", conflicts_with = "per_socket")]
    no_aggr: bool,
    /// With -a or -C: each socket's counts, summed over its CPUs.
    #[arg(long = "per-socket")]
    per_socket: bool,
    /// With -a or -C, after -e: count only the tasks of cgroup NAME (relative to the cgroup
    /// mount point, e.g. /sys/fs/cgroup/unified); one name limits every event before it, a
    /// list (`cg1,,cg2`) each event in order (empty: every task); repeatable, each -G's names
    /// going on to the next events (`-e a -G g1 -e b -G g2`), as perf's -G.
    #[arg(
        short = 'G',
        long = "cgroup",
        value_name = "NAMES",
        conflicts_with = "sim"
    )]
    cgroup: Vec<String>,
    /// Start counting MS milliseconds after the command starts.
    #[arg(short = 'D', long = "delay", value_name = "MS", value_parser = options::delay_ms,
          allow_negative_numbers = true)]
    delay: Option<u64>,
    /// CSV: fields separated by SEP, as perf stat -x prints them.
    #[arg(short = 'x', long = "field-separator", value_name = "SEP")]
    separator: Option<String>,
    /// One JSON object a line, as perf stat -j prints them (same as --json).
    #[arg(short = 'j', conflicts_with = "separator")]
    json_lines: bool,
    /// Write the counts to FILE instead of stderr (never through a symbolic link;
    /// /dev/stdout is this process's standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Count on a simulated machine instead (its uncore and top-down registers), running
    /// --workload while the command runs; with --td-level, --view or -M.
    #[arg(long, requires = "sim_view", conflicts_with_all = [
        "json_lines", "interval_count", "pid", "cpu", "no_aggr", "per_socket", "delay",
        "repeat", "event"])]
    sim: bool,
    /// The processor whose core events `-e` may name by the spec's names
    /// (`-e INST_RETIRED.ANY_P`: its raw encoding; default: the detected one); with --sim,
    /// the simulated processor (default: the first of the spec with the top-down registers
    /// and the memory view's metrics, ice-lake-sp).
    #[arg(long, add = clap_complete::ArgValueCandidates::new(crate::completion::processors))]
    processor: Option<String>,
    /// With --sim: what the simulated machine runs (`pmu list --workloads`).
    #[arg(long, value_name = "NAME", requires = "sim")]
    workload: Option<String>,
    /// With --sim: the top-down tree to level N, indented, each node over its threshold (Intel's metric
    /// lists) marked `<==`, as toplev shows it.
    #[arg(long = "td-level", value_name = "N", group = "sim_view",
          value_parser = clap::value_parser!(u8).range(1..=6))]
    td_level: Option<u8>,
    /// With --sim: a view across units, `memory` (each socket's DRAM read and write bandwidth per
    /// channel, as pcm-memory shows it), `io` (each socket's IO read and write bandwidth) or
    /// `upi` (each UPI link's transmit and receive bandwidth).
    #[arg(long, value_name = "VIEW", group = "sim_view",
          value_parser = clap::builder::PossibleValuesParser::new(pmu_runtime::stat::views::VIEWS))]
    view: Option<String>,
    /// With --sim: metrics by name, category or group (`-M TmaL1,memory_bandwidth_read`),
    /// their values over the command's run, as perf stat -M.
    #[arg(
        short = 'M',
        long = "metrics",
        alias = "metric",
        value_name = "METRICS",
        value_delimiter = ',',
        group = "sim_view"
    )]
    metrics: Vec<String>,
    /// The metric values alone, a line of headers and a line of values (with -I: a line per
    /// interval), as perf stat --metric-only (with -x: CSV): the derived metrics of the
    /// events (GHz, insn per cycle, branch-miss %) or, with --sim, those of -M or --td-level.
    #[arg(long = "metric-only")]
    metric_only: bool,
    /// The command to count, after `--`, with its arguments.
    #[arg(trailing_var_arg = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Where the counts go: stderr (as perf, so the command's stdout stays its own) or -o FILE.
fn sink(a: &StatArgs) -> Result<Box<dyn Write>, String> {
    match &a.output {
        None => Ok(Box::new(std::io::stderr())),
        Some(p) => pmu_runtime::out_file::create(p)
            .map(|f| Box::new(f) as Box<dyn Write>)
            .map_err(|e| format!("-o {}: {e}", p.display())),
    }
}

fn plan(a: &StatArgs) -> Result<(StatPlan, String), (String, u8)> {
    let usage = |m: String| (m, 2);
    let (scope, all) = run::scope_of(
        a.all_cpus,
        a.cpu.as_deref(),
        a.pid.as_deref(),
        !a.command.is_empty(),
    )
    .map_err(|e| (e.to_string(), e.exit_code()))?;
    let system_wide = matches!(scope, run::StatScope::Cpus(_));
    let each = if a.event.is_empty() {
        vec![events::default_events(system_wide)]
    } else {
        let core = crate::detect::processor_named(a.processor.as_deref())
            .map_err(|e| usage(e.to_string()))?
            .or_else(|| crate::detect::detected(false, None));
        let hint = if core.is_none() {
            "; a core event by the spec's name (INST_RETIRED.ANY_P) needs --processor here"
        } else {
            ""
        };
        let sources = crate::perf_cli::sources(None);
        let parse = |list: &String| events::parse_events_for(&[list], &sources, core);
        let each: Result<Vec<_>, _> = a.event.iter().map(parse).collect();
        each.map_err(|e| usage(format!("-e: {e}{hint}")))?
    };
    let given: Vec<_> = cgroups_after_events(a).into_iter().zip(&a.cgroup).collect();
    let events = events::with_cgroups(each, &given).map_err(usage)?;
    let target = report::target_label(&scope, &a.command, all);
    let plan = StatPlan {
        events,
        scope,
        command: a.command.clone(),
        repeat: a.repeat,
        interval: a.interval.map(Duration::from_millis),
        interval_count: a.interval_count,
        aggr: match (a.no_aggr, a.per_socket) {
            (true, _) => StatAggr::PerCpu,
            (_, true) => StatAggr::PerSocket,
            _ => StatAggr::Global,
        },
        delay: a.delay.map(Duration::from_millis),
    };
    Ok((plan, target))
}

/// For each -G, how many -e options came before it on the command line, as perf pairs them
/// (every -e if the order cannot be read back); the command line is read again only with -G.
fn cgroups_after_events(a: &StatArgs) -> Vec<usize> {
    let parse = || <crate::Cli as clap::CommandFactory>::command().try_get_matches();
    let m = (!a.cgroup.is_empty()).then(parse).and_then(Result::ok);
    let stat = m.as_ref().and_then(|m| m.subcommand_matches("stat"));
    let at = |id| {
        stat.and_then(|s| s.indices_of(id))
            .map(Iterator::collect::<Vec<_>>)
    };
    match (at("event").unwrap_or_default(), at("cgroup")) {
        (e, Some(g)) if g.len() == a.cgroup.len() => g
            .iter()
            .map(|i| e.iter().filter(|j| *j < i).count())
            .collect(),
        _ => vec![a.event.len(); a.cgroup.len()],
    }
}

/// Ctrl-C reaches the command itself (it shares the terminal); this process lives on to
/// print, or, counting without a command, stops. SIGTERM is passed on to the command (or,
/// without one, stops too).
fn stop_on_signals() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    if let Err(e) = pmu_runtime::stat::signals::forward_termination(Arc::clone(&stop)) {
        crate::warn(&format!(
            "SIGTERM will end pmu itself, not the command: {e}"
        ));
    }
    let flag = Arc::clone(&stop);
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    stop
}

/// Runs `pmu stat`: the exit status is the command's (128 + the signal if one ended it),
/// 127 if it does not exist, 2 for a usage error, 1 for a failed count, 141 (as perf, which
/// SIGPIPE ends) when the reader of `-I`'s counts goes away.
pub fn run(a: &StatArgs, json: bool) -> ExitCode {
    let fail = |m: &str, code: u8| {
        crate::eprint_error(m);
        ExitCode::from(code)
    };
    let given = StatOptions {
        sim: a.sim,
        td_level: a.td_level.is_some(),
        view: a.view.is_some(),
        metrics: !a.metrics.is_empty(),
        metric_only: a.metric_only,
        repeat: a.repeat,
        json,
        separator: a.separator.is_some(),
        nothing_after_dashes: a.command.is_empty() && std::env::args().skip(2).any(|w| w == "--"),
    };
    if let Err(e) = options::check(&given) {
        return fail(&e.to_string(), e.exit_code());
    }
    let stop = stop_on_signals();
    if a.sim {
        return match sim_view(a, &stop) {
            Ok(code) => code,
            Err((m, code)) => fail(&m, code),
        };
    }
    let (plan, target) = match plan(a) {
        Ok(p) => p,
        Err((m, code)) => return fail(&m, code),
    };
    let layout = match (&a.separator, json || a.json_lines) {
        (Some(sep), _) => StatLayout::Csv(sep.clone()),
        (None, true) => StatLayout::Json,
        (None, false) => StatLayout::Text,
    };
    let mut out = match sink(a) {
        Ok(o) => o,
        Err(m) => return fail(&m, 1),
    };
    let (mut index, mut gone) = (0, false);
    let outcome = run::measure(&plan, &stop, |iv| {
        let lines = match a.metric_only {
            true => metric_only::interval(iv, index, plan.aggr, &layout).unwrap_or_default(),
            false => report::interval(iv, index, &layout),
        };
        // The reader went away (`| head`): stop counting, as perf (which SIGPIPE ends).
        gone |= out
            .write_all(lines.as_bytes())
            .and_then(|()| out.flush())
            .is_err();
        stop.fetch_or(gone, Ordering::SeqCst);
        index += 1;
    });
    if gone {
        return ExitCode::from(128 + 13);
    }
    match outcome {
        Ok(o) => {
            if plan.interval.is_none() {
                let text = match a.metric_only {
                    true => metric_only::summary(&o, &target, &layout).unwrap_or_default(),
                    false => report::summary(&o, &target, &layout),
                };
                let _ = out.write_all(text.as_bytes());
            }
            let _ = out.flush();
            ExitCode::from((o.exit_code & 0xff) as u8)
        }
        Err(e) => fail(&e.to_string(), e.exit_code()),
    }
}

/// `pmu stat --sim` (`--td-level N`, `--view VIEW` or `-M`, with `-I`): the library counts
/// and words it; this prints it where the counts go.
fn sim_view(a: &StatArgs, stop: &AtomicBool) -> Result<ExitCode, (String, u8)> {
    let failed = |e: pmu_runtime::stat::StatError| (e.to_string(), e.exit_code());
    let show = match (a.td_level, &a.view) {
        (Some(level), _) => SimShow::Tree(level),
        (None, Some(view)) => SimShow::View(view.clone()),
        (None, None) => SimShow::Metrics(a.metrics.clone()),
    };
    let (processor, workload) = (a.processor.as_deref(), a.workload.as_deref());
    let request = SimRequest {
        metric_only: a.metric_only,
        separator: a.separator.clone(),
        interval: a.interval.map(Duration::from_millis),
        ..SimRequest::new(processor, workload, show, &a.command).map_err(failed)?
    };
    let (text, code) = simulated::report(&request, stop).map_err(failed)?;
    let mut out = sink(a).map_err(|m| (m, 1))?;
    // The reader went away (`| head`): 141, as perf (which SIGPIPE ends).
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return Ok(ExitCode::from(128 + 13));
    }
    Ok(ExitCode::from((code & 0xff) as u8))
}
