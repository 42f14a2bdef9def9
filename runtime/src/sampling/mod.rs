//! The guides' programming procedures as an API: configure and enable counters in the order
//! the guide gives, poll them, or be told after exactly N events and find which counters
//! overflowed.
//!
//! - [`uncore`]: the Xeon 7500 uncore (section 2.1 of its guide: set-up, reading the sample
//!   interval, a new interval from frozen counters).
//! - [`e5`]: the Xeon E5-2600 boxes (box freeze and resets, the QPI match/mask filter).
//! - [`core`]: the architectural counters (CPUID leaf 0AH, full-width or sign-extending
//!   writes, IA32_PERF_GLOBAL_INUSE).
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

use pmu_regs::RegisterInfo;

use crate::access::{check_write_info, BackendError, Bdf, MsrAccess, PciAccess, Target};
use crate::catalog::Reg;
use crate::error::{Error, Result, SamplingError, UsageError};

pub mod core;
pub mod e5;
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

/// Events counted from `start` to `now` on a `width`-bit counter, correct across one wrap.
pub fn delta(start: u64, now: u64, width: u32) -> u64 {
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    now.wrapping_sub(start) & mask
}

/// Builds a register value from named fields, starting at `base`: each `(field, value)` must
/// exist in the layout and fit.
pub(crate) fn with_fields(
    info: &'static RegisterInfo,
    base: u64,
    fields: &[(&'static str, u64)],
) -> Result<u64> {
    let mut raw = base;
    for &(name, value) in fields {
        let f = info.field(name).ok_or(UsageError::UnsupportedField {
            register: info.name,
            field: name,
        })?;
        raw = f.insert(info.name, raw, value)?;
    }
    Ok(raw)
}

/// Reads a register known by its catalog entry, naming it in any error.
pub(crate) fn read_msr_reg<B: MsrAccess + ?Sized>(backend: &B, cpu: u32, reg: &Reg) -> Result<u64> {
    backend
        .read_msr(cpu, reg.msr())
        .map_err(|e| e.with_register(reg.addr.name).into())
}

/// Writes a register known by its catalog entry, with the same checks as the typed layer.
pub(crate) fn write_msr_reg<B: MsrAccess + ?Sized>(
    backend: &B,
    cpu: u32,
    reg: &Reg,
    raw: u64,
) -> Result<()> {
    let target = Target::Msr {
        cpu,
        address: reg.msr(),
    };
    check_write_info(reg.info, target, raw).map_err(|e| e.with_register(reg.addr.name))?;
    backend
        .write_msr(cpu, reg.msr(), raw)
        .map_err(|e| e.with_register(reg.addr.name).into())
}

/// Writes a PCI register known by its catalog entry (a 64-bit one without leaving half a value
/// behind on failure).
pub(crate) fn write_pci_reg<B: PciAccess + ?Sized>(
    backend: &B,
    bdf: Bdf,
    reg: &Reg,
    raw: u64,
) -> Result<()> {
    let pmu_regs::Location::Pci { offset, .. } = reg.addr.location else {
        return Err(BackendError::Misplaced {
            register: reg.addr.name,
            needs: "a CPU (it is an MSR)",
        }
        .into());
    };
    check_write_info(reg.info, Target::Pci { bdf, offset }, raw)
        .map_err(|e| e.with_register(reg.addr.name))?;
    crate::access::write_pci_dwords(backend, bdf, offset, reg.info.width, reg.addr.name, raw)
        .map_err(Error::from)
}

/// Runs `program`; if it fails, runs `undo` and reports both failures if that fails too.
pub fn rolled_back<T>(
    program: impl FnOnce() -> Result<T>,
    undo: impl FnOnce() -> Result<()>,
) -> Result<T> {
    match program() {
        Ok(v) => Ok(v),
        Err(error) => match undo() {
            Ok(()) => Err(error),
            Err(cleanup) => Err(Error::Cleanup {
                error: Box::new(error),
                cleanup: Box::new(cleanup),
            }),
        },
    }
}

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
