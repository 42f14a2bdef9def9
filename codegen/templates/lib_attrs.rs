#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Field descriptions are the spec's prose, shown as written: `EAX[15:8]` is not a link and
// `n < 8` is not an HTML tag.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

#[rustfmt::skip]
pub mod support;
pub use support::*;

#[cfg(feature = "metadata")]
#[rustfmt::skip]
pub mod structure;
#[cfg(feature = "metadata")]
pub use structure::*;

#[rustfmt::skip]
pub mod core_events;
pub use core_events::CoreEvent;
#[cfg(feature = "metadata")]
pub use core_events::{CoreEventsInfo, EventList};

// Behind its own feature: the formulas are data no register access needs.
#[cfg(feature = "metrics")]
#[rustfmt::skip]
pub mod metrics;
