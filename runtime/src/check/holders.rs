//! What else holds performance counters on this machine: the kernel's NMI watchdog (which
//! keeps one core counter per CPU while it is on, `/proc/sys/kernel/nmi_watchdog`) and the
//! perf events other processes have open (each an `anon_inode:[perf_event]` file descriptor in
//! `/proc/PID/fd`). Read under a root directory, so a test hands it a file tree; nothing is
//! written.

use std::path::Path;

/// A process holding perf events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfHolder {
    /// Its process id.
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`), empty where it could not be read.
    pub command: String,
    /// How many perf events it has open.
    pub events: usize,
}

/// Who else holds counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holders {
    /// Whether the NMI watchdog is on; `None` where the kernel does not say (no file).
    pub nmi_watchdog: Option<bool>,
    /// Every process with perf events open, by process id.
    pub perf: Vec<PerfHolder>,
    /// Processes whose file descriptors could not be read (another user's, without the
    /// privilege): they may hold perf events too.
    pub unreadable: usize,
}

/// The perf file descriptor's link target, as the kernel names it.
const PERF_EVENT_LINK: &str = "anon_inode:[perf_event]";

/// Who else holds counters on the machine under `root` (`/` for this one).
pub fn holders(root: &Path) -> Holders {
    let watchdog = std::fs::read_to_string(root.join("proc/sys/kernel/nmi_watchdog")).ok();
    let mut perf = Vec::new();
    let mut unreadable = 0;
    let pids = std::fs::read_dir(root.join("proc"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok());
    for pid in pids {
        let dir = root.join("proc").join(pid.to_string());
        let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
            unreadable += 1;
            continue;
        };
        let events = fds
            .flatten()
            .filter(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == PERF_EVENT_LINK)
            })
            .count();
        if events > 0 {
            let command = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            perf.push(PerfHolder {
                pid,
                command: command.trim().to_string(),
                events,
            });
        }
    }
    perf.sort_by_key(|h| h.pid);
    Holders {
        nmi_watchdog: watchdog.map(|w| w.trim() != "0"),
        perf,
        unreadable,
    }
}

impl Holders {
    /// One line for a report: the watchdog's state and each holder (`none` when no other
    /// process holds perf events).
    pub fn summary(&self) -> String {
        let watchdog = match self.nmi_watchdog {
            Some(true) => "NMI watchdog on (it holds one core counter per CPU)",
            Some(false) => "NMI watchdog off",
            None => "NMI watchdog unknown",
        };
        let perf = if self.perf.is_empty() {
            "no other process holds perf events".to_string()
        } else {
            let each: Vec<String> = self
                .perf
                .iter()
                .map(|h| format!("{} (pid {}): {}", h.command, h.pid, h.events))
                .collect();
            format!("perf events held by {}", each.join(", "))
        };
        let hidden = match self.unreadable {
            0 => String::new(),
            n => format!("; {n} processes could not be looked at"),
        };
        format!("{watchdog}; {perf}{hidden}")
    }
}
