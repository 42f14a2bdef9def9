//! The guides' programming procedures as an API: configure and enable counters in the order
//! the guide gives, poll them, or be told after exactly N events and find which counters
//! overflowed.
//!
//! - [`uncore`]: any processor's uncore, from the structure its spec declares (the Xeon 7500
//!   guide's section 2.1: set-up, reading the sample interval, a new interval from frozen
//!   counters).
//! - Counting on any box is [`crate::counters::Counting`], beneath these procedures (what
//!   sessions and the simulated perf driver program boxes with).
//! - [`standalone`]: boxes programmed on their own (box freeze and resets, packet filters).
//! - [`core`]: the architectural counters (CPUID leaf 0AH, full-width or sign-extending
//!   writes, IA32_PERF_GLOBAL_INUSE).
//! - [`cpu_box`]: a processor's own per-CPU box (AMD's core PMC), from its structure: armed
//!   for an interrupt after N events, the overflowed counters found by their status bits or,
//!   where the spec says so, by their top bits.
//!
//! # The preload formula
//!
//! To be told after N events, a counter is preloaded so that the carry out of its top bit
//! comes on the Nth event. The Xeon 7500 guide gives two formulas: section 2.1 step (e) says
//! `2^48 - N` (its example: `2^48 - 1000` to stop on the 1,000th event), while the W-box
//! section (p. 2-127) says `(2^48 - 1) - N`. A counter overflows on the increment that takes it
//! from `2^48 - 1` to 0. From `2^48 - N` that is increment number N; from `(2^48 - 1) - N` it
//! is increment N + 1, one event late. [`preload`] uses `2^48 - N`; the tests
//! `pmi_comes_on_exactly_the_nth_event` and `the_w_box_formula_is_one_event_late` show both
//! against the simulator.

use crate::error::{Result, SamplingError};

pub mod core;
pub mod cpu_box;
pub mod standalone;
pub mod uncore;

/// The value that makes a `width`-bit counter overflow on exactly the `n`th event:
/// `2^width - n`, for `n` from 1 to `2^width`.
pub fn preload(n: u64, width: u32) -> Result<u64> {
    let modulus = 1u128 << width;
    if n == 0 || u128::from(n) > modulus {
        return Err(SamplingError::BadInterval {
            n,
            max: (modulus.min(u128::from(u64::MAX))) as u64,
        }
        .into());
    }
    Ok(((modulus - u128::from(n)) % modulus) as u64)
}

pub use crate::counters::delta;
pub use crate::counters::rolled_back;
pub(crate) use crate::counters::RegIo;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preload_overflows_on_the_nth_increment() {
        for n in [1u64, 2, 1000, 1 << 47, (1 << 48) - 1, 1 << 48] {
            let p = preload(n, 48).unwrap();
            // n increments from p reach 2^48 exactly: the carry out of bit 47.
            assert_eq!(u128::from(p) + u128::from(n), 1 << 48, "n = {n}");
        }
        assert!(preload(0, 48).is_err());
        assert!(preload((1 << 48) + 1, 48).is_err());
    }

    #[test]
    fn deltas_are_right_across_the_wrap() {
        assert_eq!(delta(10, 25, 48), 15);
        assert_eq!(delta((1 << 48) - 5, 3, 48), 8);
        assert_eq!(delta(7, 7, 48), 0);
        assert_eq!(delta(u64::MAX, 1, 64), 2);
    }
}
