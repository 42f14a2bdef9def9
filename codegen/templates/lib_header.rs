//! Type-safe access to Intel performance-monitoring registers, generated from the XML specs in
//! `spec/` by `cargo run -p codegen`.
//!
//! Each register layout is a `#[repr(transparent)]` newtype over its integer with a `const fn`
//! getter per readable field and a `with_*` builder per writable one, taking exactly the field's
//! value type (`bool`, the narrowest unsigned integer, or an enum when the guide names every
//! value). A builder panics on a value too wide for its field (a compile error in const
//! context); fields narrower than their Rust type also have `try_with_*`, which returns
//! [`FieldTooWide`] instead. No safe method sets a bit that must be written as zero. Addresses
//! are typed by space and layout ([`Msr`], [`PciRegister`]), and [`PROCESSORS`] describes every
//! register for tools that introspect.
//!
//! Per register, each unit's module has `pub type Name = Reg64<NameLayout>` (or `Reg32`), the
//! layout with its masks, per field a position constant ([`BitRange`], the register's bit
//! table in these docs) and a getter and `with_` builder that read it, the typed addresses (a
//! constant for a unit of one instance, an array in instance order for a unit of several), and with the `metadata` feature the field table and metadata static. What
//! every register shares is in `support.rs`.
//!
//! The crate is `#![no_std]` and has no dependencies, so kernels and hypervisors can use it.
//! The metadata (field, value and event tables, descriptions, addresses by name, the PMU
//! structure and [`PROCESSORS`]) is the default feature `metadata`; without it, every accessor,
//! mask, reset value, typed address and typed event constant remains, and the crate builds
//! faster (BENCHMARKS.md).
//!
//! ```
//! # #[cfg(feature = "metadata")] {
//! use pmu_regs::{Register, PROCESSORS};
//!
//! // Every register the enabled features build, with its fields: no reserved bit is writable.
//! for processor in PROCESSORS {
//!     for unit in processor.units {
//!         for register in unit.registers {
//!             assert_eq!(register.reserved_mask & register.writable_mask, 0);
//!         }
//!     }
//! }
//! # }
//! ```
