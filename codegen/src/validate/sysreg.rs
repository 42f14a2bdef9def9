//! `<sysreg>`: an Arm system register by its encoding. The five numbers must fit their
//! fields (op0 2 or 3, op1 and op2 0-7, CRn and CRm 0-15), the register must be 64 bits wide
//! (`mrs`/`msr` move 64 bits), and an array's elements, counted in the packed encoding, must
//! not run past CRm into the next CRn. Two registers of a processor at one encoding are
//! refused with the other spaces' collisions (`check_address_collisions`).

use super::addresses::Entry;
use super::unit::RegisterScope;
use super::*;
use crate::model::sysreg::Encoding;

impl Validator {
    /// `<sysreg>`: its encoding, checked, as the base of its elements.
    pub(super) fn sysreg_entry<'s>(
        &mut self,
        reg: &RegisterScope<'_>,
        s: &'s RawSysReg,
    ) -> Entry<'s> {
        if reg.space != Space::SysReg {
            self.push(reg.ctx.error(
                s.at,
                format!(
                    "a <sysreg> address on a register in {} space",
                    reg.space.as_str()
                ),
                "use the space's address element (<msr>, <pci>, <mmio>, <table>), or set space=\"sysreg\"",
            ));
        }
        if reg.width != 64 {
            self.push(reg.ctx.error(
                s.at,
                format!("a system register {} bits wide", reg.width),
                "system registers are 64 bits wide (mrs and msr move 64 bits); set width=\"64\" and make the upper bits reserved fields",
            ));
        }
        let num = |v: &str| parse_number(v).and_then(|n| u8::try_from(n).ok());
        let enc = match (
            num(&s.op0),
            num(&s.op1),
            num(&s.crn),
            num(&s.crm),
            num(&s.op2),
        ) {
            (Some(op0), Some(op1), Some(crn), Some(crm), Some(op2)) => Some(Encoding {
                op0,
                op1,
                crn,
                crm,
                op2,
            }),
            _ => None,
        }
        .filter(|e| e.in_range());
        if enc.is_none() {
            self.push(reg.ctx.error(
                s.at,
                format!(
                    "system-register encoding op0={} op1={} crn={} crm={} op2={} is out of range",
                    s.op0, s.op1, s.crn, s.crm, s.op2
                ),
                "op0 is 2 or 3 (0 and 1 encode instructions), op1 and op2 0-7, crn and crm 0-15",
            ));
        }
        Entry {
            at: s.at,
            instance: &s.instance,
            index: s.index.as_deref(),
            stride: s.stride.as_deref(),
            base: enc.map(Location::SysReg),
            source: &s.source,
        }
    }

    /// Element `n` of a `<sysreg>` array, `delta` past its base in the packed encoding: it
    /// must keep the base's op0, op1 and CRn (a stride carries from op2 into CRm only).
    pub(super) fn sysreg_element(
        &mut self,
        reg: &RegisterScope<'_>,
        at: usize,
        base: Encoding,
        delta: u64,
        n: u32,
    ) -> Option<Location> {
        let packed = u64::from(base.packed()) + delta;
        let moved = u16::try_from(packed).ok().map(Encoding::from_packed);
        match moved {
            Some(e) if (e.op0, e.op1, e.crn) == (base.op0, base.op1, base.crn) => {
                Some(Location::SysReg(e))
            }
            _ => {
                self.push(reg.ctx.error(
                    at,
                    format!(
                        "index {n} runs past CRm 15 of {} (op0, op1 and CRn would change)",
                        base.generic_name()
                    ),
                    "a stride counts op2 first, then CRm; check the stride and count, or give each index its own <sysreg index=\"k\">",
                ));
                None
            }
        }
    }
}
