//! What a backend can say about overflow-hierarchy state no register address reaches (the
//! Xeon 7500's U_MSR_PMON_GLOBAL_SUMMARY and S-box summaries, which no public source gives an
//! address for).

use pmu_regs::BitRef;

/// Real hardware cannot be asked (the defaults answer "unknown"), so an overflow walk reads
/// every box below a hop it cannot read; the simulator answers, so its walks read only what
/// the hierarchy requires.
pub trait UncoreSummary {
    /// Whether the uncore of `socket` received a PMI not yet handled.
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        let _ = socket;
        None
    }
    /// A bit of the overflow hierarchy in a register with no address.
    fn hidden_bit(&self, socket: usize, bit: &BitRef) -> Option<bool> {
        let _ = (socket, bit);
        None
    }
    /// Tells the backend the PMI has been handled.
    fn acknowledge_pmi(&self, socket: usize) {
        let _ = socket;
    }
}

impl<T: UncoreSummary + ?Sized> UncoreSummary for &T {
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        (**self).global_pmi(socket)
    }
    fn hidden_bit(&self, socket: usize, bit: &BitRef) -> Option<bool> {
        (**self).hidden_bit(socket, bit)
    }
    fn acknowledge_pmi(&self, socket: usize) {
        (**self).acknowledge_pmi(socket)
    }
}
