//! One session per PMU. A session that programs a PMU (a socket's uncore, a CPU's core
//! counters) first claims it; a second claim is refused with an error naming the holder, so
//! two sessions can never redirect each other's PMI or take each other's freeze as a sample.
//!
//! - [`Registry`]: claims within one process (the simulator uses one).
//! - [`LockDir`]: claims across processes, as one lock file per PMU in a runtime directory,
//!   held with `flock` while the session lives and holding the holder's PID and command line.
//!
//! The claim is released when the [`Lease`] is dropped, including on a panic; a process that
//! dies releases its file locks with it.
//!
//! A lock proves only that no other session of this library holds a PMU. A counter that is
//! already enabled (left by a session that was killed before it could put it back, or counting
//! for another tool) is refused by [`check_idle`] unless the caller takes it over on purpose
//! ([`Ownership::takes_over`]).
//!
//! Lock files are never opened through a link, and a lock directory that another user could
//! write (world-writable without the sticky bit, or owned by someone else) is refused: there a
//! planted link would make a privileged `pmu` truncate or overwrite any file.
//!
//! ```
//! use pmu_runtime::ownership::{Ownership, Pmu, Registry};
//!
//! let registry = Registry::new();
//! let pmu = Pmu::Core { cpu: 0 };
//! let lease = registry.claim(&pmu)?;
//! let err = registry.claim(&pmu).unwrap_err().to_string();
//! assert!(err.contains("the core PMU of CPU 0 is in use by"), "{err}");
//! drop(lease);
//! registry.claim(&pmu)?;
//! # Ok::<(), pmu_runtime::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pmu_regs::{AddressInfo, Role, Scope};
use rustix::fs::{flock, FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::boxes::{Boxes, Counter, PmuBox, Reg};
use crate::error::{Result, SamplingError};

/// A PMU one session at a time may program.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Pmu {
    /// The uncore of one socket (all its boxes share the global control and the PMI).
    Uncore {
        /// The processor id (`xeon-7500`).
        processor: &'static str,
        /// The socket.
        socket: usize,
    },
    /// One box of a socket's uncore, where boxes are programmed independently.
    Box {
        /// The processor id (`xeon-e5-2600`).
        processor: &'static str,
        /// The socket.
        socket: usize,
        /// The box instance.
        instance: &'static str,
    },
    /// The architectural counters of one logical CPU.
    Core {
        /// The logical CPU.
        cpu: u32,
    },
    /// A box of one L3 cache (AMD's L3 counters of one core complex), named by the lowest CPU
    /// that shares that L3, through which sessions reach it.
    L3 {
        /// The processor id (`amd-zen4`).
        processor: &'static str,
        /// The box instance.
        instance: &'static str,
        /// The lowest CPU sharing the L3.
        cpu: u32,
    },
}

impl Pmu {
    /// What a session on `pmu_box` of `boxes` claims, reached through `cpu` on `socket`: the
    /// CPU's core PMU for a per-CPU box, the L3's box for a per-L3 box (`cpu` being the lowest
    /// CPU sharing it), the socket's uncore where one global control governs every box (Xeon
    /// 7500), else the box alone.
    pub fn of_box(boxes: &'static Boxes, pmu_box: &PmuBox, cpu: u32, socket: usize) -> Pmu {
        let processor = boxes.processor.id;
        match (pmu_box.scope(), &boxes.global) {
            (Scope::Cpu, _) => Pmu::Core { cpu },
            (Scope::L3, _) => Pmu::L3 {
                processor,
                instance: pmu_box.instance,
                cpu,
            },
            (Scope::Socket, Some(_)) => Pmu::Uncore { processor, socket },
            (Scope::Socket, None) => Pmu::Box {
                processor,
                socket,
                instance: pmu_box.instance,
            },
        }
    }

    /// The PMU a session claims to program `register` (reached through `cpu` on `socket`):
    /// what a write to it must not disturb. `None` for a register that belongs to no box.
    pub fn of_register(
        boxes: &'static Boxes,
        register: &AddressInfo,
        cpu: u32,
        socket: usize,
    ) -> Option<Pmu> {
        let same = |r: &Reg| r.addr.name == register.name;
        if let Some(g) = &boxes.global {
            if [Some(g.control), Some(g.status), g.clear]
                .iter()
                .flatten()
                .any(same)
            {
                return Some(Pmu::Uncore {
                    processor: boxes.processor.id,
                    socket,
                });
            }
        }
        let pmu_box = boxes.boxes.iter().find(|b| {
            let counters = b
                .counters
                .iter()
                .flat_map(|c| c.control.into_iter().chain([c.counter]));
            let others = b
                .controls
                .iter()
                .chain(&b.statuses)
                .chain(&b.clears)
                .copied();
            counters.chain(others).any(|r| same(&r))
        })?;
        Some(Pmu::of_box(boxes, pmu_box, cpu, socket))
    }

    /// The name of its lock file.
    fn file_name(&self) -> String {
        match self {
            Pmu::Uncore { processor, socket } => format!("uncore-{processor}-socket{socket}.lock"),
            Pmu::Box {
                processor,
                socket,
                instance,
            } => format!("box-{processor}-socket{socket}-{instance}.lock"),
            Pmu::Core { cpu } => format!("core-cpu{cpu}.lock"),
            Pmu::L3 {
                processor,
                instance,
                cpu,
            } => format!("l3-{processor}-{instance}-cpu{cpu}.lock"),
        }
    }
}

impl fmt::Display for Pmu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pmu::Uncore { processor, socket } => {
                write!(f, "the {processor} uncore of socket {socket}")
            }
            Pmu::Box {
                processor,
                socket,
                instance,
            } => write!(f, "the {processor} box {instance} of socket {socket}"),
            Pmu::Core { cpu } => write!(f, "the core PMU of CPU {cpu}"),
            Pmu::L3 {
                processor,
                instance,
                cpu,
            } => write!(
                f,
                "the {processor} box {instance} of the L3 that CPU {cpu} shares"
            ),
        }
    }
}

/// Grants exclusive ownership of PMUs.
pub trait Ownership {
    /// Claims `pmu` until the returned lease is dropped; refused, naming the holder, while
    /// another session holds it.
    fn claim(&self, pmu: &Pmu) -> Result<Lease>;

    /// Whether a session may take counters it finds already enabled (see [`check_idle`]):
    /// `false` unless the user asked for it.
    fn takes_over(&self) -> bool {
        false
    }
}

impl<T: Ownership + ?Sized> Ownership for &T {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        (**self).claim(pmu)
    }
    fn takes_over(&self) -> bool {
        (**self).takes_over()
    }
}

/// Refuses to program `counters` when one's control, as read in `found` (register, value
/// before this session), already has its enable bit set: someone else is counting with it, or
/// a session was killed before it could put it back. Its stale state would otherwise be taken
/// over silently and "restored" at exit. With `take_over` the counter is taken anyway (the
/// caller saves `found` and puts it back).
///
/// ```
/// use pmu_runtime::boxes::Boxes;
/// use pmu_runtime::ownership::check_idle;
///
/// let c3 = Boxes::of(&pmu_regs::xeon_7500::PROCESSOR).find("C3").unwrap();
/// let c = &c3.counters[0];
/// let ctl = c.control.unwrap();
/// let enabled = c.control_bits(pmu_regs::Role::Enable).unwrap().insert("", 0, 1).unwrap();
/// let err = check_idle([c], &[(ctl, enabled | 0x5)], false).unwrap_err().to_string();
/// assert!(err.contains("C3_MSR_PMON_EVT_SEL0") && err.contains("0x400005"), "{err}");
/// assert!(check_idle([c], &[(ctl, enabled)], true).is_ok());
/// assert!(check_idle([c], &[(ctl, 0x5)], false).is_ok());
/// ```
pub fn check_idle<'a>(
    counters: impl IntoIterator<Item = &'a Counter>,
    found: &[(Reg, u64)],
    take_over: bool,
) -> Result<()> {
    idle(None, counters, found, take_over)
}

/// [`check_idle`] for the counters of `pmu`, which the refusal names (`on the core PMU of
/// CPU 2`), with every enabled control it finds.
///
/// ```
/// use pmu_runtime::boxes::Boxes;
/// use pmu_runtime::ownership::{check_idle_on, Pmu};
///
/// let c3 = Boxes::of(&pmu_regs::xeon_7500::PROCESSOR).find("C3").unwrap();
/// let (c0, c1) = (&c3.counters[0], &c3.counters[1]);
/// let en = c0.control_bits(pmu_regs::Role::Enable).unwrap().insert("", 0, 1).unwrap();
/// let found = [(c0.control.unwrap(), en | 1), (c1.control.unwrap(), en | 2)];
/// let pmu = Pmu::Uncore { processor: "xeon-7500", socket: 1 };
/// let err = check_idle_on(&pmu, [c0, c1], &found, false).unwrap_err().to_string();
/// assert!(err.contains("C3_MSR_PMON_EVT_SEL0 is already enabled (0x400001)"), "{err}");
/// assert!(err.contains("C3_MSR_PMON_EVT_SEL1 is already enabled (0x400002)"), "{err}");
/// assert!(err.contains("on the xeon-7500 uncore of socket 1"), "{err}");
/// ```
pub fn check_idle_on<'a>(
    pmu: &Pmu,
    counters: impl IntoIterator<Item = &'a Counter>,
    found: &[(Reg, u64)],
    take_over: bool,
) -> Result<()> {
    idle(Some(pmu), counters, found, take_over)
}

fn idle<'a>(
    pmu: Option<&Pmu>,
    counters: impl IntoIterator<Item = &'a Counter>,
    found: &[(Reg, u64)],
    take_over: bool,
) -> Result<()> {
    if take_over {
        return Ok(());
    }
    let mut enabled = Vec::new();
    for c in counters {
        let (Some(ctl), Some(enable)) = (c.control, c.control_bits(Role::Enable)) else {
            continue;
        };
        let value = found
            .iter()
            .find(|(r, _)| r.addr.location == ctl.addr.location)
            .map(|&(_, v)| v);
        if let Some(value) = value.filter(|&v| enable.extract(v) != 0) {
            enabled.push((ctl.name(), value));
        }
    }
    let Some((&(register, value), others)) = enabled.split_first() else {
        return Ok(());
    };
    Err(SamplingError::Enabled {
        register,
        value,
        others: others.to_vec(),
        pmu: pmu.map(ToString::to_string),
    }
    .into())
}

/// Ownership of one PMU, given up when dropped.
#[derive(Debug)]
#[must_use = "the PMU is released as soon as the lease is dropped"]
pub struct Lease {
    held: Held,
}

#[derive(Debug)]
enum Held {
    InProcess { registry: Registry, pmu: Pmu },
    File(File),
}

impl Drop for Lease {
    fn drop(&mut self) {
        match &self.held {
            Held::InProcess { registry, pmu } => {
                registry.lock().remove(pmu);
            }
            Held::File(file) => {
                // Clear the holder before unlocking, so no one reads a stale holder; the lock
                // itself goes with the file.
                let _ = file.set_len(0);
                let _ = flock(file, FlockOperation::Unlock);
            }
        }
    }
}

/// Who this process is: `process 4242 (pmu watch --unit C3)`.
fn this_process() -> String {
    let args: Vec<String> = std::env::args().collect();
    format!("process {} ({})", std::process::id(), args.join(" "))
}

/// Claims within one process. Clones share the claims.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    held: Arc<Mutex<HashMap<Pmu, String>>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Pmu, String>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Ownership for Registry {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        let mut held = self.lock();
        if let Some(holder) = held.get(pmu) {
            return Err(SamplingError::Owned {
                pmu: pmu.to_string(),
                holder: holder.clone(),
            }
            .into());
        }
        held.insert(
            pmu.clone(),
            format!("another session of {}", this_process()),
        );
        Ok(Lease {
            held: Held::InProcess {
                registry: self.clone(),
                pmu: pmu.clone(),
            },
        })
    }
}

/// Claims across processes: `DIR/<pmu>.lock`, locked with `flock` and holding the holder's
/// PID and command line.
#[derive(Debug, Clone)]
pub struct LockDir {
    dir: PathBuf,
}

/// The runtime directory used when none is configured: `$PMU_RUNTIME_DIR`, else
/// `/run/pmu-regs`.
pub fn default_runtime_dir() -> PathBuf {
    std::env::var_os("PMU_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/run/pmu-regs"))
}

impl LockDir {
    /// Lock files in `dir` (created on first claim).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl LockDir {
    /// Opens (creating it, not truncating it) the lock file `name`: never through a link, and
    /// only in a directory no other user can write.
    fn open(&self, name: &str) -> Result<File> {
        let path = self.dir.join(name);
        let failed = |source: std::io::Error| SamplingError::Lock {
            path: path.clone(),
            source,
        };
        let unsafe_lock = |problem: String| SamplingError::UnsafeLock {
            path: path.clone(),
            problem,
        };
        if self.dir.is_relative() {
            return Err(unsafe_lock(format!(
                "its directory {} is a relative path, so sessions started in different \
                 directories would not see each other's locks; give an absolute path \
                 (PMU_RUNTIME_DIR=/run/pmu-regs)",
                self.dir.display()
            ))
            .into());
        }
        std::fs::create_dir_all(&self.dir).map_err(failed)?;
        let dir_flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
        let dir =
            rustix::fs::open(&self.dir, dir_flags, Mode::empty()).map_err(|e| failed(e.into()))?;
        let stat = rustix::fs::fstat(&dir).map_err(|e| failed(e.into()))?;
        if let Some(problem) = foreign_dir(&self.dir, stat.st_uid, stat.st_gid, stat.st_mode) {
            return Err(unsafe_lock(problem).into());
        }
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&dir, name, flags, Mode::from_raw_mode(0o644)) {
            Ok(fd) => fd,
            Err(e) if e == Errno::LOOP => {
                return Err(unsafe_lock(format!(
                    "it is a symbolic link, and a lock file is never followed (it could point at \
                     any file); remove it (`rm {}`) and find out who put it there",
                    path.display()
                ))
                .into())
            }
            Err(e) => return Err(failed(e.into()).into()),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| failed(e.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || stat.st_nlink != 1 {
            return Err(unsafe_lock(format!(
                "it is not a plain file with one name (a hard link, a device or a pipe); remove \
                 it (`rm {}`) and find out who put it there",
                path.display()
            ))
            .into());
        }
        Ok(File::from(fd))
    }
}

/// Why `dir` (owned by `uid` and group `gid`, with `mode`) is unsafe for lock files, if it
/// is: another user could replace a lock file there with a link, or plant one. The sticky
/// bit does not help: it keeps others from replacing our files, not from planting theirs
/// under a name we have not used yet.
fn foreign_dir(dir: &Path, uid: u32, gid: u32, mode: u32) -> Option<String> {
    let me = rustix::process::geteuid().as_raw();
    let fix = format!(
        "make the directory writable by its owner only (`chmod 755 {}`), or lock in a \
         directory of your own (PMU_RUNTIME_DIR; under --root, ROOT/run/pmu-regs)",
        dir.display()
    );
    if mode & 0o002 != 0 {
        return Some(format!(
            "its directory {} can be written by every user (mode {:o}), so anyone could put a \
             lock file or a link to another file there; {fix}",
            dir.display(),
            mode & 0o7777,
        ));
    }
    // The owner's own group (its primary group) is the owner; any other group is others.
    let owners_group = if uid == me {
        rustix::process::getegid().as_raw()
    } else {
        0
    };
    if mode & 0o020 != 0 && gid != owners_group {
        return Some(format!(
            "its directory {} can be written by group {gid} (mode {:o}), whose members could \
             put a lock file or a link to another file there; {fix}",
            dir.display(),
            mode & 0o7777,
        ));
    }
    if uid != me && uid != 0 {
        return Some(format!(
            "its directory {} belongs to another user (uid {uid}), who could put a link to \
             another file in its place; lock in a directory of your own or root's \
             (PMU_RUNTIME_DIR; under --root, ROOT/run/pmu-regs)",
            dir.display()
        ));
    }
    None
}

impl Ownership for LockDir {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        let path = self.dir.join(pmu.file_name());
        let failed = |source| SamplingError::Lock {
            path: path.clone(),
            source,
        };
        let mut file = self.open(&pmu.file_name())?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(e) if e == Errno::WOULDBLOCK => {
                return Err(SamplingError::Owned {
                    pmu: pmu.to_string(),
                    holder: holder::describe(&mut file, &path),
                }
                .into());
            }
            Err(e) => return Err(failed(e.into()).into()),
        }
        let written = file
            .set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "{}", this_process()));
        written.map_err(failed)?;
        Ok(Lease {
            held: Held::File(file),
        })
    }
}

/// Who a lock file says holds it, as a line `pmu` can print: any user who can write the
/// file could have written anything there, so what it says is read bounded, believed only
/// where the process it names runs with that command line, and shown escaped either way.
mod holder {
    use std::fs::File;
    use std::io::{Read, Seek, SeekFrom};
    use std::path::Path;

    /// The most read of a lock file: a PID and a command line.
    const MAX_READ: u64 = 4096;
    /// The most of a claim shown, in characters.
    const MAX_SHOWN: usize = 200;

    /// `process 4242 (pmu watch --unit C3)` where that process runs that command line; else
    /// what the file claims, escaped and cut short, marked as unconfirmed.
    pub(super) fn describe(file: &mut File, path: &Path) -> String {
        let mut bytes = Vec::new();
        let _ = file.seek(SeekFrom::Start(0));
        let _ = file.take(MAX_READ).read_to_end(&mut bytes);
        let text = String::from_utf8_lossy(&bytes);
        let line = text.lines().next().unwrap_or("").trim();
        if line.is_empty() {
            return format!(
                "a process that has not written its name yet ({})",
                escaped(&path.display().to_string())
            );
        }
        match claim(line) {
            Some((pid, command)) if runs(pid, command) => {
                format!("process {pid} ({})", escaped(command))
            }
            _ => format!(
                "an unconfirmed holder (its lock file {} claims \"{}\", which no running \
                 process matches)",
                escaped(&path.display().to_string()),
                escaped(line)
            ),
        }
    }

    /// The PID and command line of `process PID (COMMAND)`.
    fn claim(line: &str) -> Option<(u32, &str)> {
        let rest = line.strip_prefix("process ")?;
        let (pid, rest) = rest.split_once(' ')?;
        let command = rest.strip_prefix('(')?.strip_suffix(')')?;
        Some((pid.parse().ok()?, command))
    }

    /// Whether process `pid` runs with `command` as its arguments joined by spaces.
    fn runs(pid: u32, command: &str) -> bool {
        let Ok(f) = File::open(format!("/proc/{pid}/cmdline")) else {
            return false;
        };
        let mut bytes = Vec::new();
        if f.take(MAX_READ).read_to_end(&mut bytes).is_err() {
            return false;
        }
        let args = bytes.strip_suffix(b"\0").unwrap_or(&bytes);
        let args: Vec<String> = args
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        args.join(" ") == command
    }

    /// `text` with everything but printable ASCII escaped (`\u{1b}`), at most
    /// [`MAX_SHOWN`] characters of it: no terminal control sequence gets through.
    pub(super) fn escaped(text: &str) -> String {
        let mut out = String::new();
        for (i, c) in text.chars().enumerate() {
            if i == MAX_SHOWN {
                out.push_str("...");
                break;
            }
            if c == ' ' || c.is_ascii_graphic() {
                out.push(c);
            } else {
                out.extend(c.escape_default());
            }
        }
        out
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_claim_is_escaped_and_cut_short() {
            assert_eq!(escaped("a\u{1b}[31mb\u{202e}"), "a\\u{1b}[31mb\\u{202e}");
            let long = escaped(&"x".repeat(10_000));
            assert_eq!(long.len(), MAX_SHOWN + 3);
        }

        #[test]
        fn only_a_running_process_with_that_command_line_is_believed() {
            let me = std::process::id();
            let args: Vec<String> = std::env::args().collect();
            assert!(runs(me, &args.join(" ")));
            assert!(!runs(me, "systemd"));
            assert_eq!(claim("process 12 (a (b))"), Some((12, "a (b)")));
            assert_eq!(claim("pid 1 (systemd)"), None);
        }
    }
}
