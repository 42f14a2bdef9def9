//! What a backend can say about the two summary registers no public source gives an address
//! for (U_MSR_PMON_GLOBAL_SUMMARY and S{0,1}_MSR_PMON_SUMMARY).

/// Real hardware cannot be asked (the defaults answer "unknown"), so an overflow walk falls
/// back to reading every box below a flagged summary; the simulator answers, so its walks read
/// only what the hierarchy requires.
pub trait UncoreSummary {
    /// U_MSR_PMON_GLOBAL_SUMMARY.pmi: the U-box received a PMI.
    fn global_pmi(&self, socket: usize) -> Option<bool> {
        let _ = socket;
        None
    }
    /// The fields set in S{s}_MSR_PMON_SUMMARY (`ov_c_l`, `ov_mb`, ...).
    fn s_summary(&self, socket: usize, s: u8) -> Option<Vec<&'static str>> {
        let _ = (socket, s);
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
    fn s_summary(&self, socket: usize, s: u8) -> Option<Vec<&'static str>> {
        (**self).s_summary(socket, s)
    }
    fn acknowledge_pmi(&self, socket: usize) {
        (**self).acknowledge_pmi(socket)
    }
}
