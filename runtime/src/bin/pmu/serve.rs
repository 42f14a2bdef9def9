//! `pmu serve`: program counters once, count them on an interval of their own, and serve the
//! totals at `/metrics` in the OpenMetrics text format for Prometheus to scrape; put
//! everything back on SIGINT, SIGTERM, SIGHUP, a panic, or an error.
//!
//! The counters are library [`Session`]s, as `watch` counts, chosen in `watch`'s words:
//! `--unit`/`--event` on the command line, or a configuration file of lines such as
//! `IMC0 event=UNC_M_CAS_COUNT.RD event=UNC_M_CAS_COUNT.WR` (one line per box, its events in
//! `--event`'s grammar). Counting runs on the main thread; the HTTP server on threads of its
//! own reads only the exporter's totals, so a scrape never touches a register and a slow
//! client never delays a count.

use clap_complete::ArgValueCandidates;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use pmu_runtime::export::http::{self, Limits};
use pmu_runtime::export::serving::{self, ServedMetrics};
use pmu_runtime::export::web_config::WebConfig;
use pmu_runtime::lookup::counter_example;
use pmu_runtime::machine::Machine;
use pmu_runtime::metrics::select;
use pmu_runtime::session::{self, Clock, Options, Pace, Selection, Session, Sockets};

use crate::counting::{check_interval, close_after, Asked};
use crate::failure::Failure;
use crate::perf_cli::PerfWatchArgs;
use crate::place::PlaceArgs;

#[derive(Args)]
pub struct ServeArgs {
    /// Where to serve /metrics, as ADDR:PORT (port 0 picks a free one; the address is
    /// printed on stderr). Only loopback addresses unless --allow-remote.
    #[arg(long, default_value = "127.0.0.1:9464")]
    listen: SocketAddr,
    /// Serve beyond this machine: allow a --listen address that is not loopback. The
    /// counters tell what the machine runs: give --web.config.file with TLS and users, or
    /// put a firewall or a proxy in front.
    #[arg(long)]
    allow_remote: bool,
    /// A web configuration file, as every Prometheus exporter takes it: TLS
    /// (tls_server_config: cert_file, key_file) and the users who may read
    /// (basic_auth_users: name: bcrypt hash). Without it, anyone who can connect reads.
    #[arg(long = "web.config.file", value_name = "FILE")]
    web_config: Option<PathBuf>,
    /// A file of standing counters, one box per line: the box, then its events in --event's
    /// grammar (`xeon-e5-2600:IMC0 event=UNC_M_CAS_COUNT.RD event=UNC_M_CAS_COUNT.WR`); `#`
    /// starts a comment; at most 1 MiB. Adds to --unit/--event.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A box to count, as `pmu watch --unit` takes it (CBO3, IMC2, PCU, CORE), with the
    /// processor's prefix where several processors share the name (xeon-e5-2600:IMC2) unless
    /// this machine is detected as one of them. Repeat for more boxes; the first box's
    /// processor settles the others' names.
    #[arg(long, add = ArgValueCandidates::new(crate::completion::units))]
    unit: Vec<String>,
    /// An event for the next free counter of each --unit box, as `pmu watch --event` takes
    /// it (event=NAME or ev_sel=N,umask=N,...). Repeat for more counters.
    #[arg(long = "event", requires = "unit", add = ArgValueCandidates::new(crate::completion::events))]
    events: Vec<String>,
    /// A derived metric to export as the `pmu_metric` gauge, by socket: its name, or a
    /// category or group that selects several (`pmu list --metrics`), as `pmu watch
    /// --metric` takes it. Repeatable; needs --processor unless the machine is detected.
    /// Core metrics are counted on one CPU of each socket (--cpu picks it on one socket).
    #[arg(long, value_name = "NAME")]
    metric: Vec<String>,
    /// The processor this runs on (xeon-e5-2600, ...), as `pmu watch --processor` takes it:
    /// settles a box name several processors share (for --unit and the config file's lines)
    /// and lets --event name its own core events. On hardware it is detected.
    #[arg(long, add = ArgValueCandidates::new(crate::completion::processors))]
    processor: Option<String>,
    /// Seconds between counter reads, from 0.01 to 86400; independent of scrapes.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    interval: f64,
    /// Count the boxes on every socket (the default is socket 0, or --socket).
    #[arg(short = 'a', long = "all-sockets", conflicts_with_all = ["socket", "cpu", "device"])]
    all_sockets: bool,
    /// With --sim and no --workload: events per second the simulator injects into every
    /// counted event, so rate() has something to show.
    #[arg(long, default_value_t = 1000.0, value_name = "N")]
    sim_rate: f64,
    /// Take counters that are already enabled (left by a killed session, or another tool's):
    /// they are saved and put back at exit. Without it such a counter is refused, named.
    #[arg(long)]
    force: bool,
    /// Program a box that the part's uncore discovery table (Sapphire Rapids on) does not
    /// list or disagrees with, or every box when the table cannot be read, at the spec's
    /// addresses. Without it such a box is refused, with what the table says (`pmu discover`
    /// shows the whole table beside the spec).
    #[arg(long)]
    allow_mismatch: bool,
    #[command(flatten)]
    place: PlaceArgs,
    #[command(flatten)]
    perf: PerfWatchArgs,
}

impl ServeArgs {
    fn sockets(&self) -> Sockets {
        self.place.sockets(self.all_sockets)
    }

    /// The processor named, or this machine's.
    fn detected(&self) -> Option<&'static str> {
        self.place.processor(self.processor.as_deref())
    }

    /// The metrics asked for (`--metric`), planned, and the machine of their processor,
    /// whose constants they read (and which counts them).
    fn metrics(&self) -> Result<Option<(Machine, ServedMetrics)>, Failure> {
        if self.metric.is_empty() {
            return Ok(None);
        }
        let processor = crate::watch_metrics::processor(self.processor.as_deref(), &self.place)?;
        let machine = self.place.machine_for(processor)?.taking_over(self.force);
        let chosen = select(processor.id, &self.metric)?;
        let constants = crate::watch_metrics::part_constants(&self.place, &machine, processor);
        let (sockets, cpu) = (self.sockets(), self.place.cpu);
        let served = ServedMetrics::plan(&chosen, processor, constants, sockets, cpu)?;
        Ok(Some((machine, served)))
    }

    /// What `units` and `events` (the command line's, or a config line's) ask for, of
    /// `kernel_pmu` (`--pmu`) if given.
    fn asked<'a>(
        &'a self,
        units: &'a [String],
        events: &'a [String],
        kernel_pmu: Option<&'a str>,
    ) -> Asked<'a> {
        Asked {
            units,
            events,
            kernel_pmu,
            processor: self.detected(),
            cpu: self.place.cpu,
            route: self.perf.backend.0,
        }
    }

    /// Every selection asked for, checked for what the place reaches: the command line's,
    /// then the config file's lines (an error names its `FILE:LINE`), then the metrics'.
    fn selections(&self, metrics: Option<&ServedMetrics>) -> Result<Vec<Standing>, Failure> {
        let mut standing = Vec::new();
        if !self.unit.is_empty() || self.perf.pmu.is_some() {
            if self.events.is_empty() {
                let (unit, event) = counter_example();
                return Err(Failure::usage(format!(
                    "--unit needs at least one --event: what should its counters count? e.g. \
                     --unit {unit} --event event={event}"
                )));
            }
            // A per-CPU box on one CPU of each socket; a per-L3 box on each L3 (its `cpu` label).
            standing.push(self.standing(
                None,
                &self.unit,
                &self.events,
                self.perf.pmu.as_deref(),
            )?);
        }
        if let Some(path) = &self.config {
            for (origin, unit, events) in serving::config_lines(path)? {
                let units = [unit];
                let s = self.standing(Some(origin), &units, &events, None)?;
                standing.push(s);
            }
        }
        for (plan, selection) in metrics
            .iter()
            .flat_map(|m| m.plans.iter().zip(&m.selections))
        {
            let units: Vec<String> = selection
                .boxes()
                .iter()
                .map(|b| format!("{}:{}", plan.processor, b.pmu_box.instance))
                .collect();
            self.asked(&units, &[], None).check_reach(
                selection,
                self.place.sim,
                self.place.root.as_deref(),
            )?;
            standing.push(Standing {
                units,
                selection: selection.clone(),
            });
        }
        if standing.is_empty() {
            return Err(Failure::usage(
                "nothing to count: give --unit and --event (as `pmu watch` takes them), \
                 --metric NAME, or --config FILE"
                    .to_string(),
            ));
        }
        Ok(standing)
    }

    /// The selection of `units` and `events`, asked at `origin` (`FILE:LINE`, for errors).
    fn standing(
        &self,
        origin: Option<String>,
        units: &[String],
        events: &[String],
        kernel_pmu: Option<&str>,
    ) -> Result<Standing, Failure> {
        let asked = self.asked(units, events, kernel_pmu);
        let selection = asked
            .selection()
            .map_err(|e| at(origin.as_deref(), e))?
            .on(self.sockets());
        asked.check_reach(&selection, self.place.sim, self.place.root.as_deref())?;
        crate::encode::note_experimental_events(&selection, asked.processor);
        Ok(Standing {
            units: units.to_vec(),
            selection,
        })
    }
}

/// One selection `serve` counts, with the box names it was asked by (for messages).
struct Standing {
    units: Vec<String>,
    selection: Selection,
}

/// Runs `pmu serve` until a signal; everything it programmed is put back before it returns.
pub fn run(args: &ServeArgs) -> Result<String, Failure> {
    let web = check_args(args)?;
    // Everything the command line and the config file can get wrong is found here, before
    // the socket is bound and before any register is touched.
    let (metric_machine, metrics) = args.metrics()?.unzip();
    let standing = args.selections(metrics.as_ref())?;
    let asked: Vec<(&[String], &Selection)> = standing
        .iter()
        .map(|s| (s.units.as_slice(), &s.selection))
        .collect();
    serving::check_each_box_once(&asked)?;
    let processor = serving::one_processor(&asked.iter().map(|a| a.1).collect::<Vec<_>>())?;
    let listener = TcpListener::bind(args.listen).map_err(|e| {
        Failure::operation(format!(
            "cannot listen on {}: {e}; choose another --listen address or port (0 picks a free one)",
            args.listen
        ))
    })?;
    let addr = listener.local_addr().map_err(|e| {
        Failure::operation(format!("cannot tell where {} listens: {e}", args.listen))
    })?;
    // The metrics' processor's machine counts everything when the boxes are its own or the
    // core PMU's (its cores have the top-down registers the metrics may read).
    let machine = match metric_machine {
        Some(m)
            if [
                "architectural",
                metrics.as_ref().map_or("", |m| m.processor()),
            ]
            .contains(&processor.id) =>
        {
            m
        }
        _ => args.place.machine_for(processor)?.taking_over(args.force),
    };
    let backend = args.place.backend(&machine, args.perf.backend.0);
    let mut sessions = open_sessions(&backend, &standing, args, metrics.as_ref())?;
    // A panic from here on unwinds through `sessions`, whose drops put the registers back.
    let result = serve(&mut sessions, args, metrics.as_ref(), (listener, addr, web));
    close_all(sessions, result.map(|()| String::new()))
}

/// Checks what needs no spec: the interval, the simulator's rate, the address, the
/// processor's name, and the web configuration, which it returns.
fn check_args(args: &ServeArgs) -> Result<WebConfig, Failure> {
    check_interval(args.interval)?;
    if !(args.sim_rate.is_finite() && args.sim_rate >= 0.0 && args.sim_rate <= 1e12) {
        return Err(Failure::usage(format!(
            "--sim-rate {} is out of range: give events per second from 0 to 1e12",
            args.sim_rate
        )));
    }
    http::check_listen(args.listen, args.allow_remote).map_err(Failure::usage)?;
    crate::detect::processor_named(args.processor.as_deref())?;
    match &args.web_config {
        Some(path) => WebConfig::load(path)
            .map_err(|e| Failure::usage(format!("--web.config.file {}: {e}", path.display()))),
        None => Ok(WebConfig::default()),
    }
}

/// Opens a session per selection, on the wall clock; a failure closes those opened.
fn open_sessions<'m>(
    backend: &session::SessionBackend<'m>,
    standing: &[Standing],
    args: &ServeArgs,
    metrics: Option<&ServedMetrics>,
) -> Result<Vec<Session<'m>>, Failure> {
    // Prometheus's rate() is per second of real time: the wall clock, even on the simulator,
    // whose events then happen at --sim-rate per real second, or as --workload says.
    let pace = match args.place.workload {
        Some(_) => args.place.pace()?,
        None => Pace::Steady(args.sim_rate.round() as u64),
    };
    let options = Options {
        clock: Clock::Wall,
        pace,
        allow_mismatch: args.allow_mismatch,
        ..Options::default()
    };
    let mut sessions: Vec<Session> = Vec::new();
    // The metrics' selections are the last: those whose metrics read the top-down registers
    // open them too.
    let topdown = metrics.map_or(Vec::new(), |m| m.reads_topdown());
    let first_metric = standing.len() - topdown.len();
    for (i, s) in standing.iter().enumerate() {
        let options = Options {
            topdown: i >= first_metric && topdown[i - first_metric],
            ..options
        };
        match Session::open(backend, &s.selection, options) {
            Ok(s) => {
                crate::warn_mismatches(&s);
                sessions.push(s);
            }
            Err(e) => return close_all(sessions, Err(Failure::Runtime(e))),
        }
    }
    Ok(sessions)
}

/// `e`, naming the config file line it comes from (if it does).
fn at(origin: Option<&str>, e: Failure) -> Failure {
    let Some(origin) = origin else { return e };
    match e {
        Failure::Usage(m) => Failure::Usage(format!("{origin}: {m}")),
        Failure::Operation(m) => Failure::Operation(format!("{origin}: {m}")),
        Failure::Runtime(r) if r.is_usage() => Failure::Usage(format!("{origin}: {r}")),
        Failure::Runtime(r) => Failure::Operation(format!("{origin}: {r}")),
    }
}

/// Closes every session, whatever happened, and reports both failures if both fail.
fn close_all<T>(sessions: Vec<Session>, result: Result<T, Failure>) -> Result<T, Failure> {
    sessions
        .into_iter()
        .fold(result, |result, session| close_after(session, result))
}

fn serve(
    sessions: &mut [Session],
    args: &ServeArgs,
    metrics: Option<&ServedMetrics>,
    (listener, addr, web): (TcpListener, SocketAddr, WebConfig),
) -> Result<(), Failure> {
    let exporter = Arc::new(serving::exporter(sessions, metrics));
    if let Some(m) = metrics {
        eprintln!(
            "pmu serve: {}",
            m.constants.header().trim_start_matches("# ")
        );
    }
    serving::baseline(sessions, &exporter, &mut topdown_failed);
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        // ctrlc's `termination` feature: SIGINT, SIGTERM and SIGHUP all end the loop.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let handler = serving::handler(Arc::clone(&exporter));
    let scheme = if web.tls() { "https" } else { "http" };
    let server = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("pmu-serve-http".into())
            .spawn(move || http::run(listener, handler, Limits::default(), &web, &stop))
            .map_err(|e| Failure::operation(format!("cannot start the HTTP server: {e}")))?
    };
    eprintln!("pmu serve: listening on {scheme}://{addr}/metrics");
    let period = Duration::from_secs_f64(args.interval);
    serving::count_until(sessions, &exporter, period, &stop, &mut topdown_failed);
    stop.store(true, Ordering::SeqCst);
    match server.join() {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Failure::operation(format!(
            "the HTTP server stopped: {e}; counting stopped with it and the registers are put back"
        ))),
        Err(_) => Err(Failure::operation(
            "the HTTP server panicked; counting stopped and the registers are put back".to_string(),
        )),
    }
}

/// Says that reading the top-down registers failed, and what that means.
fn topdown_failed(e: &pmu_runtime::Error) {
    eprintln!(
        "pmu serve: reading the top-down registers failed: {e}; the metrics that read \
         them are n/a for this interval"
    );
}
