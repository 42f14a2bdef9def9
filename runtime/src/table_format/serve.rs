//! A [`MemoryTable`] served as registers: its bytes through memory-mapped access at its
//! address, its device's configuration space through PCI access. A fake backend for the
//! discovery reader: what the simulator's machine and tests read tables through.

use crate::access::{AccessError, BackendError, Bdf, MmioAccess, Op, PciAccess, Target};

use super::MemoryTable;

impl MemoryTable {
    /// What reading past the end of a dump or a mapping looks like: nothing transferred.
    fn refuse(op: Op, target: Target, wanted: usize) -> BackendError {
        BackendError::access(op, target, AccessError::Short { done: 0, wanted })
    }
}

impl MmioAccess for MemoryTable {
    fn read_mmio(&self, address: u64, width: u32) -> crate::access::BackendResult<u64> {
        let target = Target::Mmio { address };
        let bytes = (width / 8) as u64;
        let start = address
            .checked_sub(self.base)
            .filter(|_| (width == 32 || width == 64) && address % bytes == 0)
            .filter(|s| {
                s.checked_add(bytes)
                    .is_some_and(|e| e <= self.bytes.len() as u64)
            })
            .ok_or_else(|| Self::refuse(Op::Read, target, bytes as usize))?
            as usize;
        let mut raw = [0u8; 8];
        raw[..bytes as usize].copy_from_slice(&self.bytes[start..start + bytes as usize]);
        Ok(u64::from_le_bytes(raw))
    }

    fn write_mmio(
        &self,
        address: u64,
        _width: u32,
        _value: u64,
    ) -> crate::access::BackendResult<()> {
        Err(Self::refuse(Op::Write, Target::Mmio { address }, 8))
    }
}

impl PciAccess for MemoryTable {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> crate::access::BackendResult<u32> {
        let target = Target::Pci { bdf, offset };
        if bdf != self.device || offset % 4 != 0 || usize::from(offset) >= self.config.len() * 4 {
            return Err(Self::refuse(Op::Read, target, 4));
        }
        Ok(self.config[usize::from(offset) / 4])
    }

    fn write_dword(&self, bdf: Bdf, offset: u16, _value: u32) -> crate::access::BackendResult<()> {
        Err(Self::refuse(Op::Write, Target::Pci { bdf, offset }, 4))
    }
}
