//! What the server is doing, counted as it does it: for tests and benchmarks to check the
//! bounds by their mechanism (a thread freed, a password checked once) rather than by timing.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Counts kept by a running server ([`super::serve`]).
#[derive(Debug, Default)]
pub struct Gauges {
    answering: AtomicUsize,
    lingering: AtomicUsize,
    /// bcrypt checks running now.
    pub(super) checking: AtomicUsize,
    /// bcrypt checks made since the start.
    pub(super) password_checks: AtomicU64,
    /// Bytes read and dropped from answered connections.
    pub(super) drained: AtomicU64,
}

impl Gauges {
    /// Requests being answered now, each on a thread.
    pub fn answering(&self) -> usize {
        self.answering.load(Ordering::SeqCst)
    }

    /// Answered connections still open, waiting for their clients to close.
    pub fn lingering(&self) -> usize {
        self.lingering.load(Ordering::SeqCst)
    }

    /// bcrypt checks made since the start.
    pub fn password_checks(&self) -> u64 {
        self.password_checks.load(Ordering::SeqCst)
    }

    /// Bytes that answered clients sent on and the server read and dropped.
    pub fn drained_bytes(&self) -> u64 {
        self.drained.load(Ordering::SeqCst)
    }

    pub(super) fn set_answering(&self, n: usize) {
        self.answering.store(n, Ordering::SeqCst);
    }

    pub(super) fn set_lingering(&self, n: usize) {
        self.lingering.store(n, Ordering::SeqCst);
    }
}
