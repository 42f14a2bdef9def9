//! Workspace-level tests live in this package's `[[test]]` targets; see `Cargo.toml`.
//!
//! The README is included below so that its examples run as doc tests, and so is every other
//! page of the documentation with Rust examples (`runtime/tests/docs.rs` checks that none is
//! left out).
#![doc = include_str!("../README.md")]

/// The guide's pages, whose ```rust examples run as doc tests.
#[cfg(doctest)]
mod docs {
    #[doc = include_str!("../docs/generated-crate.md")]
    struct GeneratedCrate;
    #[doc = include_str!("../docs/events.md")]
    struct Events;
    #[doc = include_str!("../docs/backends.md")]
    struct Backends;
    #[doc = include_str!("../docs/sampling.md")]
    struct Sampling;
    #[doc = include_str!("../docs/metrics.md")]
    struct Metrics;
    #[doc = include_str!("../ARCHITECTURE.md")]
    struct Architecture;
}
