//! What `watch` and `serve` count, from their arguments: the library's [`Selection`], made by
//! its own calls (boxes by name, a kernel PMU's events, perf's events), checked for what the
//! place can reach; and a session closed after counting, whatever happened.

use pmu_runtime::session::{Route, Selection, Session};
use pmu_runtime::UsageError;

use crate::failure::Failure;

/// What to count, as the arguments say it.
pub struct Asked<'a> {
    /// Box names (`--unit`, or a configuration line's box).
    pub units: &'a [String],
    /// Events (`--event`): in our grammar for boxes, else perf's.
    pub events: &'a [String],
    /// A kernel PMU whose events `events` name (`--pmu msr`).
    pub kernel_pmu: Option<&'a str>,
    /// The processor named or detected, which settles a box name two processors share.
    pub processor: Option<&'static str>,
    /// The CPU MSR boxes are reached through (`--cpu`).
    pub cpu: Option<u32>,
    /// How the counters are reached (`--backend`).
    pub route: Route,
}

impl Asked<'_> {
    /// The library's selection of what is asked, on socket 0; everything that can be checked
    /// without a machine is checked.
    pub fn selection(&self) -> Result<Selection, Failure> {
        if self.kernel_pmu.is_none() && !self.units.is_empty() {
            return Ok(Selection::of_named_boxes(
                self.units,
                self.events,
                self.processor,
                self.cpu,
            )?);
        }
        if self.route == Route::Raw {
            return Err(UsageError::BadValue {
                text: "perf's events with --backend raw".into(),
                expected: "--backend perf or auto, or --unit boxes to program raw".into(),
            }
            .into());
        }
        let selection = match self.kernel_pmu {
            Some(pmu) => Selection::of_kernel_pmu(pmu, self.events)?,
            None => {
                let lists: Vec<&str> = self.events.iter().map(String::as_str).collect();
                Selection::of_perf_events(&lists).map_err(|e| self.without_unit(e))?
            }
        };
        Ok(selection.through(self.cpu))
    }

    /// An event that does not read as perf's: where it reads as ours (`ev_sel=0x01`), the
    /// box is what is missing.
    fn without_unit(&self, e: pmu_runtime::perf::PerfError) -> Failure {
        match self
            .events
            .iter()
            .find(|e| e.contains('=') && !e.contains('/'))
        {
            Some(text) => Failure::usage(format!(
                "--event {text} needs a box: give --unit (`pmu list --summary`), or write a \
                 kernel PMU's event as PMU/TERMS/ (cpu/event=0x3c/, msr/tsc/)"
            )),
            None => pmu_runtime::Error::from(e).into(),
        }
    }

    /// Refuses what the place cannot reach, before anything is touched: under `--sim`, a
    /// kernel PMU or `--backend perf`; on hardware, boxes of another processor than this
    /// machine's (as `read` and `write` refuse registers).
    pub fn check_reach(
        &self,
        selection: &Selection,
        sim: bool,
        root: Option<&std::path::Path>,
    ) -> Result<(), Failure> {
        if sim {
            self.check_simulated()
        } else if !self.units.is_empty() {
            let units = self.units.join(", ");
            crate::detect::check_box(root, &units, selection.processor().id)
        } else {
            Ok(())
        }
    }

    /// Refuses what the simulator cannot do: it is reached through its registers, so it has
    /// no kernel PMU to count (`--pmu`) and nothing for `--backend perf` to reach.
    fn check_simulated(&self) -> Result<(), Failure> {
        if self.kernel_pmu.is_none() && self.units.is_empty() {
            return Err(Failure::usage(format!(
                "--sim simulates the spec's boxes: give --unit (`pmu list --summary`); perf's \
                 events ({}) are counted for real, without --sim",
                self.events.join(",")
            )));
        }
        if let Some(pmu) = self.kernel_pmu {
            return Err(Failure::usage(format!(
                "--pmu {pmu} counts this machine's kernel PMU through perf, which --sim does not \
                 simulate; drop --sim to count it for real, or give --unit boxes to simulate"
            )));
        }
        if self.route == Route::Perf {
            return Err(Failure::usage(
                "--sim simulates the registers, so it is counted raw; drop --backend perf (or \
                 --sim)"
                    .to_string(),
            ));
        }
        Ok(())
    }
}

/// Refuses an `--interval` outside [`pmu_runtime::session::INTERVAL`] (0 would busy-loop;
/// 1e30 cannot be slept).
pub fn check_interval(seconds: f64) -> Result<(), Failure> {
    let (low, high) = pmu_runtime::session::INTERVAL;
    if (low..=high).contains(&seconds) {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "--interval {seconds} is out of range: give seconds from {low} to {high}"
        )))
    }
}

/// Closes `session` after counting ended with `result`, whatever it was: both failures are
/// reported if putting back fails too, and a put-back failure after good counting is one.
pub fn close_after<T>(session: Session, result: Result<T, Failure>) -> Result<T, Failure> {
    match (result, session.close()) {
        (result, Ok(())) => result,
        (Err(failure), Err(cleanup)) => Err(failure.with_cleanup(cleanup)),
        (Ok(_), Err(e)) => Err(Failure::Runtime(pmu_runtime::Error::RestoreFailed(
            Box::new(e),
        ))),
    }
}
