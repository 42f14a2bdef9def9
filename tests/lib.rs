//! Workspace-level tests live in this package's `[[test]]` targets; see `Cargo.toml`.
//!
//! The README is included below so that its examples run as doc tests.
#![doc = include_str!("../README.md")]
