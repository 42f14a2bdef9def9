//! Arm system-register encodings (space `sysreg`): the five numbers an `mrs`/`msr`
//! instruction carries, the packed form the spec's strides count in, and the names
//! assemblers and Linux give them.
//!
//! Sources: the Arm Architecture Reference Manual for A-profile (DDI 0487), section C5.3
//! (the system instruction class encoding: op0 in bits 20:19, op1 18:16, CRn 15:12, CRm 11:8,
//! op2 7:5 of `mrs`/`msr`); Linux `arch/arm64/include/asm/sysreg.h` (`sys_reg()` puts the
//! same fields at the same bits, and `S<op0>_<op1>_C<n>_C<m>_<op2>` is the generic name
//! assemblers accept).

use serde::Serialize;

/// The encoding of one system register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Encoding {
    /// op0: 2 or 3 for registers `mrs`/`msr` reach (3 for the PMU's).
    pub op0: u8,
    /// op1, 0-7.
    pub op1: u8,
    /// CRn, 0-15.
    pub crn: u8,
    /// CRm, 0-15.
    pub crm: u8,
    /// op2, 0-7.
    pub op2: u8,
}

impl Encoding {
    /// The five numbers as one 16-bit value, op0 highest and op2 lowest (op0:op1:CRn:CRm:op2,
    /// 2+3+4+4+3 bits). A stride counts in it: `PMEVTYPER<n>_EL0` is CRm `0b11:n[4:3]`, op2
    /// `n[2:0]`, so element n is the first's packed value plus n.
    pub fn packed(self) -> u16 {
        (u16::from(self.op0) << 14)
            | (u16::from(self.op1) << 11)
            | (u16::from(self.crn) << 7)
            | (u16::from(self.crm) << 3)
            | u16::from(self.op2)
    }

    /// The encoding whose packed value is `v`.
    pub fn from_packed(v: u16) -> Self {
        // Each field is masked to its width first, so the casts keep every bit.
        Self {
            op0: (v >> 14) as u8,
            op1: ((v >> 11) & 0x7) as u8,
            crn: ((v >> 7) & 0xF) as u8,
            crm: ((v >> 3) & 0xF) as u8,
            op2: (v & 0x7) as u8,
        }
    }

    /// The value Linux's `sys_reg(op0, op1, crn, crm, op2)` gives, which is also bits 20:5
    /// of the `mrs`/`msr` instruction.
    pub fn linux_encoding(self) -> u32 {
        u32::from(self.packed()) << 5
    }

    /// The generic name assemblers accept for any system register: `S3_3_C9_C12_0`.
    pub fn generic_name(self) -> String {
        format!(
            "S{}_{}_C{}_C{}_{}",
            self.op0, self.op1, self.crn, self.crm, self.op2
        )
    }

    /// Whether every number is within its field (op0 2 or 3: 0 and 1 encode instructions,
    /// not registers).
    pub fn in_range(self) -> bool {
        (2..=3).contains(&self.op0)
            && self.op1 <= 7
            && self.crn <= 15
            && self.crm <= 15
            && self.op2 <= 7
    }
}

#[cfg(test)]
mod tests {
    use super::Encoding;

    #[test]
    fn pmcr_el0_is_linux_sys_reg_3_3_9_12_0() {
        // Linux sysreg.h: SYS_PMCR_EL0 = sys_reg(3, 3, 9, 12, 0); sys_reg shifts op0 by 19,
        // op1 by 16, CRn by 12, CRm by 8 and op2 by 5.
        let e = Encoding {
            op0: 3,
            op1: 3,
            crn: 9,
            crm: 12,
            op2: 0,
        };
        assert_eq!(
            e.linux_encoding(),
            (3 << 19) | (3 << 16) | (9 << 12) | (12 << 8)
        );
        assert_eq!(e.generic_name(), "S3_3_C9_C12_0");
        assert_eq!(Encoding::from_packed(e.packed()), e);
    }

    #[test]
    fn pmevtyper_elements_follow_by_packed_stride() {
        // Arm ARM: PMEVTYPER<n>_EL0 is op0 3, op1 3, CRn 14, CRm 0b11:n[4:3], op2 n[2:0].
        let first = Encoding {
            op0: 3,
            op1: 3,
            crn: 14,
            crm: 12,
            op2: 0,
        };
        let tenth = Encoding::from_packed(first.packed() + 10);
        assert_eq!((tenth.crm, tenth.op2), (0b1100 | (10 >> 3), 10 & 7));
    }
}
