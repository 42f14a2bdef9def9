//! The auxiliary MSRs some core events need besides their control (Intel's `MSRIndex` and
//! `MSRValue`: the offcore response, load-latency and front-end registers). A register holds
//! one value at a time: events counted at once must agree on it ([`aux_agree`]). A session saves
//! each register before its first write and puts it back with the rest when it closes.

use pmu_regs::AuxMsr;

use super::{Counting, Registers};
use crate::boxes::{EventSelect, Reg};
use crate::error::{Result, UsageError};

/// Whether `events` can count at once as far as their auxiliary MSRs go: no two need one
/// register with different values.
pub fn aux_agree(events: &[&EventSelect]) -> bool {
    let aux: Vec<AuxMsr> = events.iter().filter_map(|s| s.aux).collect();
    aux.iter().enumerate().all(|(i, a)| {
        aux[..i]
            .iter()
            .all(|b| b.address != a.address || b.value == a.value)
    })
}

impl<B: Registers + ?Sized> Counting<'_, B> {
    /// Refuses, before anything is written, auxiliary MSR values `sels` cannot all have at
    /// once (two events needing one register with different values), a register the box
    /// lacks, or a value with a reserved bit, as [`Self::program`] would; [`Self::check_free`]
    /// checks this too.
    pub fn check_aux(&self, sels: &[EventSelect]) -> Result<()> {
        self.aux_plan(sels).map(|_| ())
    }

    /// Saves, without writing anything, every auxiliary MSR an event of `sels` needs: what
    /// counting in turns does before its first turn, when events of different turns may need
    /// one register with different values ([`Self::reprogram_aux`] writes each turn's).
    /// Refused, before anything is read, where the box has no such register or a value sets
    /// a reserved bit of it.
    pub fn claim_aux(&mut self, sels: &[EventSelect]) -> Result<()> {
        let regs = sels
            .iter()
            .filter_map(|s| s.aux)
            .map(|a| self.aux_reg(a))
            .collect::<Result<Vec<Reg>>>()?;
        for r in regs {
            if !self
                .saved
                .iter()
                .any(|(s, _)| s.addr.location == r.addr.location)
            {
                let found = self.read(&r)? & !r.info.reserved_mask;
                self.saved.push((r, found));
            }
        }
        Ok(())
    }

    /// Sets the auxiliary MSRs `sels` need, each saved first, without programming a counter
    /// (a perf driver's group, whose events the kernel programs itself): checked as
    /// [`Self::check_aux`] checks, then [`Self::claim_aux`] and [`Self::reprogram_aux`].
    pub fn program_aux(&mut self, sels: &[EventSelect]) -> Result<()> {
        self.check_aux(sels)?;
        self.claim_aux(sels)?;
        self.reprogram_aux(sels)
    }

    /// Writes the auxiliary MSRs `sels` need (a turn's events, which [`aux_agree`]), each one
    /// [`Self::claim_aux`] or [`Self::program`] saved: what counting in turns does at each
    /// rotation, before the turn's controls. A register this session did not save is refused.
    pub fn reprogram_aux(&mut self, sels: &[EventSelect]) -> Result<()> {
        for a in sels.iter().filter_map(|s| s.aux) {
            let reg = self.aux_reg(a)?;
            let at = reg.addr.location;
            if !self.saved.iter().any(|(s, _)| s.addr.location == at) {
                return Err(UsageError::AuxMsr {
                    register: reg.name(),
                    why: "this session did not save it, so it could not put it back".into(),
                }
                .into());
            }
            match self.aux.iter_mut().find(|(r, _)| r.addr.location == at) {
                Some((_, v)) if *v == a.value => continue,
                Some((_, v)) => *v = a.value,
                None => self.aux.push((reg, a.value)),
            }
            self.write(&reg, a.value)?;
        }
        Ok(())
    }

    /// The auxiliary MSR writes `sels` need: each register once, with the value its events
    /// need, leaving out those this session already set to it. Refused, naming the
    /// register, where two events (or one and this session's earlier one) need different
    /// values in it, which it cannot hold at once.
    pub(super) fn aux_plan(&self, sels: &[EventSelect]) -> Result<Vec<(Reg, u64)>> {
        let mut plan: Vec<(Reg, u64)> = Vec::new();
        // The event that set each register of `plan` (1-based, as messages count).
        let mut by: Vec<usize> = Vec::new();
        for (i, a) in sels
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i + 1, s.aux?)))
        {
            let reg = self.aux_reg(a)?;
            let same = |r: &&(Reg, u64)| r.0.addr.location == reg.addr.location;
            let (v, whose) = match (
                self.aux.iter().find(same),
                plan.iter().position(|r| same(&r)),
            ) {
                (Some(&(_, v)), _) => (v, "an event this session already counts".to_string()),
                (None, Some(at)) => (plan[at].1, format!("event {}", by[at])),
                (None, None) => {
                    plan.push((reg, a.value));
                    by.push(i);
                    continue;
                }
            };
            if v != a.value {
                return Err(UsageError::AuxMsr {
                    register: reg.name(),
                    why: format!(
                        "event {i} needs it as {:#x} and {whose} as {v:#x}; it holds one \
                         value at a time, so count them in separate runs",
                        a.value
                    ),
                }
                .into());
            }
        }
        Ok(plan)
    }

    /// The register of this box that auxiliary MSR `a` names (by name and MSR number), and
    /// that takes `a`'s value. Only a register that plays no part in the box's counting (no
    /// field has a role), so that it cannot be a control or counter the session programs
    /// itself.
    fn aux_reg(&self, a: AuxMsr) -> Result<Reg> {
        let unit = self.pmu_box.unit;
        let reg = unit
            .registers
            .iter()
            .flat_map(|&info| {
                (0..info.count).filter_map(move |i| Reg::of(info, self.pmu_box.instance, i))
            })
            .find(|r| {
                r.msr() == Some(a.address)
                    && r.name() == a.register
                    && r.info.fields.iter().all(|f| f.role.is_none())
            })
            .ok_or_else(|| UsageError::AuxMsr {
                register: a.register,
                why: format!(
                    "the box {} of unit {} has no such register at {:#x}; count the event on \
                     its own processor's core PMU",
                    self.pmu_box.instance, unit.name, a.address
                ),
            })?;
        if a.value & reg.info.reserved_mask != 0 {
            return Err(UsageError::BadValue {
                text: format!("{:#x} for {}", a.value, reg.name()),
                expected: "a value without the register's reserved bits".into(),
            }
            .into());
        }
        Ok(reg)
    }
}
