//! Type-safe access to Intel performance-monitoring registers, generated from the XML specs in
//! `spec/` by `cargo run -p codegen`.
//!
//! Each register layout is a `#[repr(transparent)]` newtype over its integer with `const fn`
//! getters and `with_*`/`set_*` builders that take exactly the field's value type; fields
//! narrower than their Rust type also have `try_with_*`/`try_set_*` that return
//! [`FieldTooWide`] instead of panicking. No safe method sets a bit that must be written as
//! zero. Addresses are typed by space and layout ([`Msr`], [`PciRegister`]), and
//! [`PROCESSORS`] describes every register for tools that introspect.
//!
//! The crate is `#![no_std]` and has no dependencies, so kernels and hypervisors can use it.
//!
//! ```
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
//! ```
//!
//! A field too wide for its value is an error, never a silent truncation:
//!
//! ```
//! use pmu_regs::xeon_7500::ubox::UGlobalCtl;
//! let err = UGlobalCtl::RESET.try_with_pmi_core_sel(0x1f).unwrap_err();
//! assert_eq!(err.width, 4);
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Field descriptions are the spec's prose, shown as written: `EAX[15:8]` is not a link and
// `n < 8` is not an HTML tag.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

#[macro_use]
#[rustfmt::skip]
pub mod support;
pub use support::*;

#[rustfmt::skip]
pub mod structure;
pub use structure::*;
