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
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::fs::{flock, FlockOperation};
use rustix::io::Errno;

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
}

impl Pmu {
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
        }
    }
}

/// Grants exclusive ownership of PMUs.
pub trait Ownership {
    /// Claims `pmu` until the returned lease is dropped; refused, naming the holder, while
    /// another session holds it.
    fn claim(&self, pmu: &Pmu) -> Result<Lease>;
}

impl<T: Ownership + ?Sized> Ownership for &T {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        (**self).claim(pmu)
    }
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

impl Ownership for LockDir {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        let path = self.dir.join(pmu.file_name());
        let failed = |source| SamplingError::Lock {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(failed)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(failed)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(e) if e == Errno::WOULDBLOCK => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(SamplingError::Owned {
                    pmu: pmu.to_string(),
                    holder: if holder.is_empty() {
                        format!(
                            "a process that has not written its name yet ({})",
                            path.display()
                        )
                    } else {
                        holder.to_string()
                    },
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
