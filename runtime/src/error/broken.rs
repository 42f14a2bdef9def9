//! A box that does not count, found by its clock event (the spec's `<clock-event>`): the
//! error a session returns instead of showing the box's zeros.

use std::fmt;

/// A box whose clock event counted nothing over an interval it was enabled.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokenBox {
    /// The processor's id.
    pub processor: &'static str,
    /// The socket.
    pub socket: u32,
    /// The box (`CHA3`).
    pub instance: &'static str,
    /// The clock event, by its name in the processor's event list where it has one
    /// (`UNC_CHA_CLOCKTICKS`), else by its encoding.
    pub event: String,
    /// The public source that names the event (the spec's `<clock-event source>`).
    pub source: &'static str,
    /// The interval, in seconds.
    pub seconds: f64,
}

impl fmt::Display for BrokenBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "box {} of socket {} is broken: its clock event {} (the event that counts the box's \
             own clock, {}) counted nothing in {:.3} s while enabled, so its counts are not \
             shown; count other boxes, or run `pmu check` and attach its dump to a bug report; \
             a box whose clock may rightly stop (a memory channel with no DIMM) shows its \
             zeros with --no-quirk clock-event",
            self.instance, self.socket, self.event, self.source, self.seconds
        )
    }
}
