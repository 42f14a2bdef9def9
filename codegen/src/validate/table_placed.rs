//! Table-placed registers (`<from-table>`): a register whose place the part's uncore discovery
//! table gives, relative to its box's entry (the box control, the counter-control or counter
//! offset), with a stride for an array. The structure's side of the rule (which register may
//! take which place, and only in a unit with a discovery type) is in `structure::table_placed`.

use super::addresses::space_name;
use super::unit::RegisterScope;
use super::*;

impl Validator {
    /// `<from-table>`: alone, a place the table gives, a stride exactly when the register is an
    /// array, and a public source.
    pub(super) fn placed_by_table(
        &mut self,
        reg: &RegisterScope<'_>,
        t: &RawFromTable,
    ) -> Addresses {
        let r = reg.raw;
        if !r.msr.is_empty()
            || !r.pci.is_empty()
            || !r.mmio.is_empty()
            || !r.table.is_empty()
            || !r.sysreg.is_empty()
            || r.address_unknown.is_some()
        {
            self.push(reg.ctx.error(
                t.at,
                "<from-table> cannot stand beside other address elements",
                "a register the discovery table places has no fixed address: keep either <from-table> or the addresses",
            ));
        }
        if !matches!(reg.space, Space::Msr | Space::Pci | Space::Mmio) {
            self.push(reg.ctx.error(
                t.at,
                format!(
                    "<from-table> on a register in {} space",
                    space_name(reg.space)
                ),
                "the discovery table places MSR, PCI and memory-mapped boxes only",
            ));
        }
        let place = TablePlace::ALL
            .iter()
            .find(|(n, _)| *n == t.place)
            .map(|(_, p)| *p);
        if place.is_none() {
            self.push(reg.ctx.error(
                t.at,
                format!("unknown <from-table> place `{}`", t.place),
                "use box-control, counter-control or counter",
            ));
        }
        let stride = self.table_stride(reg, t);
        self.public_source(reg.ctx, reg.cat, t.at, &t.source);
        Addresses::FromTable(TablePlacement {
            place: place.unwrap_or(TablePlace::BoxControl),
            stride,
            source: t.source.clone(),
        })
    }

    /// The stride: required (and non-zero) for an array, refused on a single register.
    fn table_stride(&mut self, reg: &RegisterScope<'_>, t: &RawFromTable) -> u32 {
        match (&t.stride, reg.count > 1) {
            (None, false) => 0,
            (None, true) => {
                self.push(reg.ctx.error(
                    t.at,
                    "<from-table> on an array needs a stride",
                    "give stride=\"N\": registers apart for an MSR, bytes apart otherwise (Linux's generic discovery driver: 1 for MSRs, 8 for PCI and memory-mapped counters)",
                ));
                0
            }
            (Some(s), false) => {
                self.push(reg.ctx.error(
                    t.at,
                    format!("<from-table> stride `{s}` on a single register"),
                    "drop the stride, or give the register a count",
                ));
                0
            }
            (Some(s), true) => match parse_number(s) {
                Some(n) if (1..=0x1000).contains(&n) => self.byte_stride(reg, t, n as u32),
                _ => {
                    self.push(reg.ctx.error(
                        t.at,
                        format!("<from-table> stride `{s}` is not a number from 1 to 0x1000"),
                        "registers apart for an MSR, bytes apart otherwise",
                    ));
                    0
                }
            },
        }
    }

    /// A PCI or memory-mapped array's stride in bytes: whole dwords (config space and the
    /// windows are reached a dword at a time), and no less than one element, so that no two
    /// elements overlap (Linux's generic driver puts them 8 bytes apart, or 4 for the 32-bit
    /// controls of a memory-mapped box).
    fn byte_stride(&mut self, reg: &RegisterScope<'_>, t: &RawFromTable, n: u32) -> u32 {
        if !matches!(reg.space, Space::Pci | Space::Mmio) {
            return n;
        }
        let bytes = reg.width / 8;
        if !n.is_multiple_of(4) || n < bytes {
            self.push(reg.ctx.error(
                t.at,
                format!(
                    "<from-table> stride `{n}` on a {}-bit {} register: its elements would not be whole dwords apart, or would overlap",
                    reg.width,
                    space_name(reg.space)
                ),
                &format!("give a stride in bytes, a multiple of 4 and at least {bytes}"),
            ));
        }
        n
    }
}
