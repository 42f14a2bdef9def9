//! One CMN configuration window, read and written through an [`MmioAccess`]: the walk reads
//! it (each place checked inside it first) and the counts program it (at places a walked
//! mesh gave), each read or write a typed [`CmnError`] naming the offset.

use super::CmnError;
use crate::access::MmioAccess;

/// `size` bytes of configuration window from physical address `base`.
pub(super) struct Window<'a, M: ?Sized> {
    pub(super) mmio: &'a M,
    pub(super) base: u64,
    pub(super) size: u64,
}

impl<M: MmioAccess + ?Sized> Window<'_, M> {
    /// `offset` checked to be 8-byte aligned with `len` bytes inside the window.
    pub(super) fn place(
        &self,
        what: impl FnOnce() -> String,
        offset: u64,
        len: u64,
    ) -> Result<u64, CmnError> {
        let inside = offset % 8 == 0 && offset.checked_add(len).is_some_and(|e| e <= self.size);
        if inside {
            Ok(offset)
        } else {
            Err(CmnError::OutsideWindow {
                what: what(),
                offset,
                size: self.size,
            })
        }
    }

    /// The qword at `offset` (already placed, or from a walked mesh).
    pub(super) fn read(&self, offset: u64) -> Result<u64, CmnError> {
        self.mmio
            .read_mmio(self.base + offset, 64)
            .map_err(|source| CmnError::Read { offset, source })
    }

    /// Writes the qword at `offset` (from a walked mesh).
    pub(super) fn write(&self, offset: u64, value: u64) -> Result<(), CmnError> {
        self.mmio
            .write_mmio(self.base + offset, 64, value)
            .map_err(|source| CmnError::Write { offset, source })
    }

    /// Reads the registers at `offsets`, runs `body` with their values, then writes every one
    /// back, last first, whatever `body` returned. The first error wins.
    pub(super) fn saved<T>(
        &self,
        offsets: &[u64],
        body: impl FnOnce(&[u64]) -> Result<T, CmnError>,
    ) -> Result<T, CmnError> {
        let saved = offsets
            .iter()
            .map(|o| self.read(*o))
            .collect::<Result<Vec<u64>, CmnError>>()?;
        let result = body(&saved);
        let restored = offsets
            .iter()
            .zip(&saved)
            .rev()
            .try_for_each(|(o, v)| self.write(*o, *v));
        let value = result?;
        restored?;
        Ok(value)
    }
}
