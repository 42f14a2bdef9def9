//! MSRs through the Linux msr driver: `/dev/cpu/N/msr`, read and written 8 bytes at a time at
//! the file offset equal to the MSR number.
//!
//! The root directory is configurable, so tests (and `pmu --root`) can point it at a tree of
//! regular files: a regular file read with `pread` at the MSR number behaves like the device.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use crate::access::{AccessError, BackendError, BackendResult, MsrAccess, Op, Target};

/// The `/dev/cpu/N/msr` backend.
#[derive(Debug)]
pub struct MsrDev {
    root: PathBuf,
    /// Open files by (CPU, opened for writing). Opening is far slower than a pread, and a
    /// sampling loop reads the same few MSRs again and again; the transfer happens under a
    /// shared read lock, so threads reading different CPUs do not wait for each other.
    files: RwLock<HashMap<(u32, bool), File>>,
}

impl Default for MsrDev {
    fn default() -> Self {
        Self::new()
    }
}

impl MsrDev {
    /// The real device files under `/dev/cpu`.
    pub fn new() -> Self {
        Self::with_root("/dev/cpu")
    }

    /// Device files under `root` (`root/N/msr`).
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            files: RwLock::new(HashMap::new()),
        }
    }

    /// The directory holding `N/msr`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The device file of `cpu`.
    pub fn path(&self, cpu: u32) -> PathBuf {
        self.root.join(cpu.to_string()).join("msr")
    }

    /// Runs `io` on the open device file of `cpu`, opening it on first use.
    fn with_file<T>(
        &self,
        op: Op,
        cpu: u32,
        address: u32,
        io: impl FnOnce(&File) -> T,
    ) -> BackendResult<T> {
        let write = op == Op::Write;
        {
            // A poisoned lock only means another thread panicked mid-insert; the map is valid.
            let files = self.files.read().unwrap_or_else(|p| p.into_inner());
            if let Some(f) = files.get(&(cpu, write)) {
                return Ok(io(f));
            }
        }
        let path = self.path(cpu);
        let file = OpenOptions::new()
            .read(!write)
            .write(write)
            .open(&path)
            .map_err(|e| BackendError::from_io(op, Target::Msr { cpu, address }, path, e))?;
        let mut files = self.files.write().unwrap_or_else(|p| p.into_inner());
        let file = files.entry((cpu, write)).or_insert(file);
        Ok(io(file))
    }
}

impl MsrAccess for MsrDev {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        let target = Target::Msr { cpu, address };
        let mut buf = [0u8; 8];
        match self.with_file(Op::Read, cpu, address, |f| {
            f.read_at(&mut buf, u64::from(address))
        })? {
            Ok(8) => Ok(u64::from_le_bytes(buf)),
            Ok(n) => Err(BackendError::access(
                Op::Read,
                target,
                AccessError::Short { done: n, wanted: 8 },
            )),
            Err(e) => Err(BackendError::from_io(Op::Read, target, self.path(cpu), e)),
        }
    }

    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        let target = Target::Msr { cpu, address };
        match self.with_file(Op::Write, cpu, address, |f| {
            f.write_at(&value.to_le_bytes(), u64::from(address))
        })? {
            Ok(8) => Ok(()),
            Ok(n) => Err(BackendError::access(
                Op::Write,
                target,
                AccessError::Short { done: n, wanted: 8 },
            )),
            Err(e) => Err(BackendError::from_io(Op::Write, target, self.path(cpu), e)),
        }
    }
}

impl crate::access::UncoreSummary for MsrDev {}
