//! Pairs of functions that must compile to the same instructions: one through the generated
//! `pmu-regs` accessors, one with hand-written shifts and masks. `tests/asm.rs` builds this
//! crate in release mode with `--emit asm` and compares the bodies of each pair.
//!
//! Each function is `#[inline(never)]`, so it keeps a body of its own to compare. They are not
//! `#[no_mangle]`: the workspace forbids `unsafe_code`, which covers `no_mangle`, so the test
//! finds each by its mangled symbol (`..16generated_evtsel..`) instead.

#![no_std]

use pmu_regs::xeon_7500::wbox::WEvtSel;

/// A Xeon 7500 W-box event select (W_MSR_PMON_EVT_SEL) for event `ev`, unit mask `umask` and
/// threshold `thresh`, enabled with PMI on overflow, built with the generated builders.
#[inline(never)]
pub extern "C" fn generated_evtsel(ev: u8, umask: u8, thresh: u8) -> u64 {
    WEvtSel::RESET
        .with_ev_sel(ev)
        .with_umask(umask)
        .with_thresh(thresh)
        .with_en(true)
        .with_pmi_en(true)
        .bits()
}

/// [`generated_evtsel`] by hand: `ev_sel` bits 7:0, `umask` 15:8, `thresh` 31:24, `en` bit 22,
/// `pmi_en` bit 20 (Xeon 7500 guide, Table 2-98).
#[inline(never)]
pub extern "C" fn handwritten_evtsel(ev: u8, umask: u8, thresh: u8) -> u64 {
    u64::from(ev) | u64::from(umask) << 8 | u64::from(thresh) << 24 | 1 << 22 | 1 << 20
}

/// The `umask` field of a raw W-box event select, through the generated getter.
#[inline(never)]
pub extern "C" fn generated_umask(raw: u64) -> u8 {
    WEvtSel::from_bits(raw).umask()
}

/// [`generated_umask`] by hand: bits 15:8.
#[inline(never)]
pub extern "C" fn handwritten_umask(raw: u64) -> u8 {
    (raw >> 8 & 0xff) as u8
}
