//! SIGTERM while a command is counted: passed on to the command, so that it ends as it
//! would have without `pmu` in between, and `pmu` prints what was counted and exits with the
//! command's status (143: ended by SIGTERM). Without a command, SIGTERM ends the count as
//! Ctrl-C does. With `-r N` it ends the repeats too: the runs made so far are printed. perf 6.1 does neither: it dies of the signal without printing, and the
//! command runs on (`tests/stat_signals.rs` shows both on this machine).
//!
//! The signal is blocked in this process and read from a signalfd by a thread of its own
//! (no handler, no unsafe code). A child inherits the mask of the thread that starts it, so
//! the command is started with SIGTERM unblocked for the moment of the start
//! (`spawn_unblocked`): a SIGTERM in that moment ends `pmu` as it would have perf.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

use std::process::{Child, Command};

use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// The process id of the command being counted (0: none), which SIGTERM is passed on to.
static COMMAND: AtomicI32 = AtomicI32::new(0);

/// Whether [`forward_termination`] blocked SIGTERM.
static FORWARDING: AtomicBool = AtomicBool::new(false);

/// Whether a SIGTERM came (through [`forward_termination`]).
static TERMINATED: AtomicBool = AtomicBool::new(false);

/// Whether SIGTERM came since [`forward_termination`]: `-r N` runs no further command then.
pub(super) fn terminated() -> bool {
    TERMINATED.load(Ordering::SeqCst)
}

fn sigterm() -> SigSet {
    let mut mask = SigSet::empty();
    mask.add(Signal::SIGTERM);
    mask
}

/// Starts `command` as [`Command::spawn`] does, with SIGTERM unblocked in it where
/// [`forward_termination`] blocks it here.
pub(super) fn spawn_unblocked(command: &mut Command) -> io::Result<Child> {
    if !FORWARDING.load(Ordering::SeqCst) {
        return command.spawn();
    }
    let mut old = SigSet::empty();
    pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&sigterm()), Some(&mut old))
        .map_err(io::Error::from)?;
    let child = command.spawn();
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    child
}

/// Records the command being counted (`None`: it ended), for [`forward_termination`].
pub(super) fn counting(pid: Option<u32>) {
    let pid = pid.and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    COMMAND.store(pid, Ordering::SeqCst);
}

/// From now on, SIGTERM to this process goes to the command being counted, or, with none,
/// sets `stop`. Call it before any other thread is started (each thread inherits the mask
/// of the one that starts it, and a thread that does not block SIGTERM would take it).
pub fn forward_termination(stop: Arc<AtomicBool>) -> io::Result<()> {
    let mask = sigterm();
    mask.thread_block().map_err(io::Error::from)?;
    FORWARDING.store(true, Ordering::SeqCst);
    let fd = SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC).map_err(io::Error::from)?;
    std::thread::Builder::new()
        .name("pmu-sigterm".into())
        .spawn(move || {
            while let Ok(Some(_)) = fd.read_signal() {
                TERMINATED.store(true, Ordering::SeqCst);
                let pid = COMMAND.load(Ordering::SeqCst);
                match rustix::process::Pid::from_raw(pid) {
                    Some(p) => {
                        let _ = rustix::process::kill_process(p, rustix::process::Signal::TERM);
                    }
                    None => stop.store(true, Ordering::SeqCst),
                }
            }
        })?;
    Ok(())
}
