//! What to count, in the command line's words: a [`Selection`] says it as `watch` and
//! `serve` take it (boxes by name: `C3`, `CBO3`, `IMC2`, `PCU`, `CORE`, `xeon-7500:C3`;
//! events in `--event`'s grammar: `event=NAME`, `ev_sel=0x04,umask=0x03`, named values, the
//! number rule), from the arguments or from one line of a configuration file
//! ([`Selection::from_line`]), so both read the same grammar. [`Selection::resolve`] checks
//! everything that can be checked without the machine and gives a [`Plan`]: the library's
//! [`session::Selection`] that a [`Session`] opens, counts and puts back.

mod selection;

use pmu_runtime::session::{self, Session};

use crate::failure::Failure;
pub use selection::{Plan, Selection};

/// Refuses an `--interval` outside [`session::INTERVAL`] (0 would busy-loop; 1e30 cannot be
/// slept).
pub fn check_interval(seconds: f64) -> Result<(), Failure> {
    let (low, high) = session::INTERVAL;
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
