//! Memory-mapped registers through a file that maps physical memory: `/dev/mem` by default,
//! whose file offset is the physical address.
//!
//! The path is a parameter, so tests (and `pmu --root`) point it at a regular file: memmap2 maps
//! any file, and a file read through a mapping at an offset behaves as the physical memory at
//! that address. Each access maps the page holding the register (once per page and mode) and
//! moves exactly 4 or 8 bytes with one volatile load or store, as the hardware needs: a
//! memory-mapped 64-bit counter read as two halves could tear.
//!
//! Where the windows are is data, and belongs to the access layer: [`crate::access::window_base`]
//! assembles a controller's base from the PCI config dwords the unit's `MmioWindow` names, and
//! [`crate::access::register_address`] adds the channel and the register's offset.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use memmap2::{MmapOptions, MmapRaw};

use crate::access::{AccessError, BackendError, BackendResult, MmioAccess, Op, Target};

/// What one mapping covers: the page holding the register.
const PAGE: u64 = 4096;

/// The `/dev/mem` backend (or any file standing for physical memory).
#[derive(Debug)]
pub struct DevMem {
    path: PathBuf,
    /// Mapped pages by (page address, mapped for writing).
    pages: Mutex<HashMap<(u64, bool), MmapRaw>>,
}

impl Default for DevMem {
    fn default() -> Self {
        Self::new()
    }
}

impl DevMem {
    /// Physical memory through `/dev/mem`.
    pub fn new() -> Self {
        Self::with_path("/dev/mem")
    }

    /// Physical memory through the file at `path`: offset n of the file is address n.
    pub fn with_path(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            pages: Mutex::new(HashMap::new()),
        }
    }

    /// The file physical memory is reached through.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Refuses a width other than 32 or 64 bits and an address not a multiple of it.
    fn check(op: Op, address: u64, width: u32) -> BackendResult<usize> {
        let refuse = |kind| Err(BackendError::access(op, Target::Mmio { address }, kind));
        let bytes = match width {
            32 => 4,
            64 => 8,
            _ => return refuse(AccessError::BadWidth { width }),
        };
        if address % bytes != 0 {
            return refuse(AccessError::Misaligned {
                bytes: bytes as u32,
            });
        }
        Ok(bytes as usize)
    }

    /// Runs `io` on a pointer to `address` inside its mapped page, mapping the page first.
    fn with_page<T>(
        &self,
        op: Op,
        address: u64,
        io: impl FnOnce(*mut u8) -> T,
    ) -> BackendResult<T> {
        let write = op == Op::Write;
        let page = address - address % PAGE;
        let at = (address - page) as usize;
        // A poisoned lock only means another thread panicked mid-insert; the map is valid.
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(map) = pages.get(&(page, write)) {
            return Ok(io(map.as_mut_ptr().wrapping_add(at)));
        }
        let map = self.map(op, address, page, write)?;
        let ptr = map.as_mut_ptr().wrapping_add(at);
        pages.insert((page, write), map);
        Ok(io(ptr))
    }

    /// Maps the page at `page`, refusing one a regular file does not cover (touching it would
    /// raise SIGBUS).
    fn map(&self, op: Op, address: u64, page: u64, write: bool) -> BackendResult<MmapRaw> {
        let target = Target::Mmio { address };
        let fail = |e: io::Error| BackendError::from_io(op, target, self.path.clone(), e);
        let file: File = OpenOptions::new()
            .read(true)
            .write(write)
            .open(&self.path)
            .map_err(fail)?;
        let meta = file.metadata().map_err(fail)?;
        if meta.is_file() && meta.len() < page + PAGE {
            let done = meta.len().saturating_sub(page).min(PAGE) as usize;
            return Err(BackendError::access(
                op,
                target,
                AccessError::Short {
                    done,
                    wanted: PAGE as usize,
                },
            ));
        }
        let mut options = MmapOptions::new();
        options.offset(page).len(PAGE as usize);
        let mapped = if write {
            options.map_raw(&file)
        } else {
            options.map_raw_read_only(&file)
        };
        mapped.map_err(|e| {
            let mut err = fail(e);
            if let BackendError::Access { kind, .. } = &mut err {
                if matches!(kind, AccessError::PermissionDenied { .. } | AccessError::Os) {
                    *kind = AccessError::MapRefused {
                        path: self.path.clone(),
                    };
                }
            }
            err
        })
    }
}

// The only unsafe code of this crate: one volatile load or store in a page mapped above.
#[allow(unsafe_code)]
impl MmioAccess for DevMem {
    fn read_mmio(&self, address: u64, width: u32) -> BackendResult<u64> {
        let bytes = Self::check(Op::Read, address, width)?;
        self.with_page(Op::Read, address, |p| {
            // SAFETY: `p` points inside a live mapping of a whole page (kept in `pages` for the
            // life of `self`), aligned to `bytes` (checked above, and pages are aligned), so the
            // access stays inside the page.
            unsafe {
                if bytes == 4 {
                    u64::from(std::ptr::read_volatile(p as *const u32))
                } else {
                    std::ptr::read_volatile(p as *const u64)
                }
            }
        })
    }

    fn write_mmio(&self, address: u64, width: u32, value: u64) -> BackendResult<()> {
        let bytes = Self::check(Op::Write, address, width)?;
        if bytes == 4 && value > u64::from(u32::MAX) {
            return Err(BackendError::access(
                Op::Write,
                Target::Mmio { address },
                AccessError::TooWide { value, width },
            ));
        }
        self.with_page(Op::Write, address, |p| {
            // SAFETY: as in `read_mmio`; this page was mapped writable.
            unsafe {
                if bytes == 4 {
                    std::ptr::write_volatile(p as *mut u32, value as u32)
                } else {
                    std::ptr::write_volatile(p as *mut u64, value)
                }
            }
        })
    }
}
