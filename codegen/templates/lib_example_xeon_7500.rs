//!
//! With the `xeon-7500` feature:
//!
//! ```
//! # #[cfg(feature = "xeon-7500")] {
//! use pmu_regs::xeon_7500::wbox::{WEvtSel, WEvtSelInvert, W_MSR_PMON_EVT_SEL};
//!
//! // Count event 0x01 with umask 0x0f on W-box counter 2, interrupting on overflow.
//! let sel = WEvtSel::RESET
//!     .with_ev_sel(0x01)
//!     .with_umask(0x0f)
//!     .with_invert(WEvtSelInvert::Ge)
//!     .with_pmi_en(true)
//!     .with_en(true);
//! assert_eq!(sel.bits(), 0x0050_0f01);
//! assert_eq!(sel.bits() & WEvtSel::RESERVED_MASK, 0);
//! assert_eq!(W_MSR_PMON_EVT_SEL[2].address(), 0xC94);
//!
//! // A raw value with a must-be-zero bit set is refused.
//! assert!(WEvtSel::try_from_bits(1 << 50).is_err());
//!
//! // A value too wide for its field is an error, never a silent truncation.
//! use pmu_regs::xeon_7500::ubox::UGlobalCtl;
//! let err = UGlobalCtl::RESET.try_with_pmi_core_sel(0x1f).unwrap_err();
//! assert_eq!(err.width, 4);
//! # }
//! ```
//!
//! Events are typed constants, with or without the `metadata` feature; a core event of any
//! processor's list goes into the architectural event select:
//!
//! ```
//! # #[cfg(feature = "xeon-7500")] {
//! use pmu_regs::arch::core::{Event, Ia32PerfEvtSel};
//! use pmu_regs::xeon_7500;
//!
//! let cycles = Ia32PerfEvtSel::RESET.with_event(Event::UNHALTED_CORE_CYCLES).with_en(true);
//! assert_eq!((cycles.ev_sel(), cycles.umask(), cycles.en()), (0x3c, 0, true));
//! let divides = Ia32PerfEvtSel::RESET.with_event(xeon_7500::core::Event::ARITH_DIV);
//! assert_eq!((divides.ev_sel(), divides.cmask(), divides.inv(), divides.edge()), (0x14, 1, true, true));
//! # }
//! ```
