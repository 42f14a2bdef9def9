//! `<box-count>`: how software learns how many boxes of a unit a part has. Checked as written
//! with the unit; the register it may name (of any unit of the processor) is resolved once
//! every unit is known.

use super::super::{is_cpuid_bits, Validator};
use super::routes::{concrete_names, Names};
use super::{diag, PendingRoutes, UnitScope};
use crate::model::pmu::{BitRef, BoxCount, BoxCountRule, Scope};
use crate::model::Space;
use crate::model::{Position, Processor};
use crate::naming::normalize_text;
use crate::parse::pmu::RawBoxCount;

/// What a `<box-count>` reads, as written.
#[derive(Debug, Clone)]
enum Reads {
    /// `set-bits`: the fields whose set bits are summed.
    SetBits(Vec<(String, String)>),
    /// `value`: the one field whose value is the count.
    Value(String, String),
    /// `value-map`: the one field whose value the map turns into a count.
    ValueMap(String, String, Vec<(u64, u32)>),
    /// `cpuid-set-bits`: the CPUID bits whose set bits count, and those holding the boxes'
    /// counters together.
    Cpuid(String, Option<String>),
    /// `cores-per-socket`: no register.
    Cores,
    /// `listed`, `devices` or `discovery`: no register; checked against the unit.
    Kind(BoxCountRule),
}

/// A `<box-count>` as written, kept until every unit of the processor is validated.
#[derive(Debug, Clone)]
pub(crate) struct PendingBoxCount {
    at: Position,
    /// What is read: the `(register, field)` pairs written, paired in order.
    reads: Reads,
    source: String,
    description: String,
}

impl Validator {
    /// A `<box-count>` as written: a known kind, a register and field exactly when the kind
    /// reads one, a declared source and a description.
    pub(super) fn box_count_as_written(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawBoxCount,
    ) -> Option<PendingBoxCount> {
        let help = "write count=\"set-bits\" register=\"CAPID6\" field=\"cha_en\", count=\"value\" or \"value-map\" (with map=\"0=2\") with one register and field, count=\"cpuid-set-bits\" with cpuid=\"80000022H.ECX[31:0]\", or count=\"cores-per-socket\", \"listed\", \"devices\" or \"discovery\" without a register";
        if raw.map.is_some() != (raw.count == "value-map") {
            self.push(unit.ctx.error(
                raw.at,
                if raw.map.is_some() {
                    format!("box-count `{}` takes no map", raw.count)
                } else {
                    format!("box-count `{}` needs a map", raw.count)
                },
                "give map=\"VALUE=BOXES ...\" with count=\"value-map\" only: map=\"0=2\" (two boxes when the field reads 0)",
            ));
            return None;
        }
        if !self.box_count_cpuid_fits_kind(unit, raw) {
            return None;
        }
        let reads = match (raw.count.as_str(), &raw.register, &raw.field) {
            ("value-map", Some(r), Some(f)) if !r.contains(' ') && !f.contains(' ') => {
                let map = self.box_count_map(unit, raw)?;
                Reads::ValueMap(r.clone(), f.clone(), map)
            }
            (kind @ ("set-bits" | "value"), Some(r), Some(f)) => {
                self.box_count_fields(unit, raw, kind == "value", r, f)?
            }
            ("cpuid-set-bits", None, None) => self.box_count_cpuid_bits(unit, raw)?,
            ("cores-per-socket", None, None) => Reads::Cores,
            ("listed", None, None) => Reads::Kind(BoxCountRule::Listed),
            ("devices", None, None) => Reads::Kind(BoxCountRule::Devices),
            ("discovery", None, None) => Reads::Kind(BoxCountRule::Discovery),
            (
                kind @ ("set-bits" | "value" | "value-map" | "cpuid-set-bits" | "cores-per-socket"
                | "listed" | "devices" | "discovery"),
                _,
                _,
            ) => {
                let why = if matches!(kind, "set-bits" | "value" | "value-map") {
                    "needs one register and one field"
                } else {
                    "reads no register"
                };
                self.push(
                    unit.ctx
                        .error(raw.at, format!("box-count `{kind}` {why}"), help),
                );
                return None;
            }
            (other, _, _) => {
                self.push(
                    unit.ctx
                        .error(raw.at, format!("unknown box-count `{other}`"), help),
                );
                return None;
            }
        };
        if !self.public_source(unit.ctx, unit.cat, raw.at, &raw.source) {
            return None;
        }
        let description = normalize_text(&raw.text);
        if description.is_empty() {
            self.push(unit.ctx.error(
                raw.at,
                "box-count has no description",
                "say in the element's text what is read and how it gives the count",
            ));
            return None;
        }
        Some(PendingBoxCount {
            at: Position::of(unit.ctx.file, unit.path, raw.at),
            reads,
            source: raw.source.clone(),
            description,
        })
    }

    /// `cpuid` and `counters-cpuid` are given with `cpuid-set-bits` only, and it has `cpuid`.
    fn box_count_cpuid_fits_kind(&mut self, unit: &UnitScope<'_>, raw: &RawBoxCount) -> bool {
        let cpuid_kind = raw.count == "cpuid-set-bits";
        let given = raw.cpuid.is_some() || raw.counters_cpuid.is_some();
        if given == cpuid_kind && (!cpuid_kind || raw.cpuid.is_some()) {
            return true;
        }
        let what = if cpuid_kind {
            format!("box-count `{}` needs cpuid", raw.count)
        } else {
            format!("box-count `{}` takes no cpuid or counters-cpuid", raw.count)
        };
        self.push(unit.ctx.error(
            raw.at,
            what,
            "give cpuid=\"80000022H.ECX[31:0]\" (and, where the part also says how many counters its boxes have together, counters-cpuid=\"80000022H.EBX[21:16]\") with count=\"cpuid-set-bits\" only",
        ));
        false
    }

    /// The CPUID bits of a `cpuid-set-bits` box count, each of the form `80000022H.ECX[31:0]`.
    fn box_count_cpuid_bits(&mut self, unit: &UnitScope<'_>, raw: &RawBoxCount) -> Option<Reads> {
        let active = raw.cpuid.clone().unwrap_or_default();
        let bad = std::iter::once(&active)
            .chain(&raw.counters_cpuid)
            .find(|c| !is_cpuid_bits(c));
        if let Some(c) = bad {
            self.push(unit.ctx.error(
                raw.at,
                format!("box-count cpuid `{c}` is not of the form 80000022H.ECX[31:0]"),
                "write the leaf in hex with H, a register EAX to EDX, and the bits [msb:lsb]",
            ));
            return None;
        }
        Some(Reads::Cpuid(active, raw.counters_cpuid.clone()))
    }

    /// The registers and fields of a `set-bits` or (with `value`) a `value` box count: one field per
    /// register, and one register for a value.
    fn box_count_fields(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawBoxCount,
        value: bool,
        r: &str,
        f: &str,
    ) -> Option<Reads> {
        let (regs, fields): (Vec<&str>, Vec<&str>) = (
            r.split_whitespace().collect(),
            f.split_whitespace().collect(),
        );
        if regs.len() != fields.len() || regs.is_empty() {
            self.push(unit.ctx.error(
                raw.at,
                format!(
                    "box-count names {} register(s) but {} field(s)",
                    regs.len(),
                    fields.len()
                ),
                "give one field per register, in the same order: register=\"CAPID6 CAPID7\" field=\"cha_en cha_en_hi\"",
            ));
            return None;
        }
        if value {
            if regs.len() != 1 {
                self.push(unit.ctx.error(
                    raw.at,
                    format!("box-count `value` names {} registers", regs.len()),
                    "a count held as a value is one field of one register; sum set bits of several fields with count=\"set-bits\"",
                ));
                return None;
            }
            Some(Reads::Value(regs[0].to_string(), fields[0].to_string()))
        } else {
            let pairs = regs.iter().zip(&fields);
            Some(Reads::SetBits(
                pairs.map(|(r, f)| (r.to_string(), f.to_string())).collect(),
            ))
        }
    }

    /// A `value-map`'s `map`: `VALUE=BOXES` pairs, space-separated, each value once.
    fn box_count_map(
        &mut self,
        unit: &UnitScope<'_>,
        raw: &RawBoxCount,
    ) -> Option<Vec<(u64, u32)>> {
        let text = raw.map.as_deref().unwrap_or_default();
        let pairs: Option<Vec<(u64, u32)>> = text
            .split_whitespace()
            .map(|pair| {
                let (v, n) = pair.split_once('=')?;
                Some((crate::validate::parse_number(v)?, n.parse().ok()?))
            })
            .collect();
        let ok = pairs.filter(|p| {
            !p.is_empty()
                && p.iter()
                    .enumerate()
                    .all(|(i, (v, _))| p[..i].iter().all(|(w, _)| w != v))
        });
        if ok.is_none() {
            self.push(unit.ctx.error(
                raw.at,
                format!("box-count map `{text}` is not VALUE=BOXES pairs, each value once"),
                "write map=\"0=2\" or map=\"0=0 1=2\": the field's value, `=`, the boxes present",
            ));
        }
        ok
    }

    /// Resolves each unit's `<box-count>` against every register of the processor: each
    /// register exists (by its concrete name), each field is readable, and the fields have a
    /// bit for every box the unit lists.
    pub(in crate::validate) fn resolve_box_counts(
        &mut self,
        p: &mut Processor,
        pending: &[(usize, PendingRoutes)],
    ) {
        let names = concrete_names(p);
        for (ui, pr) in pending {
            let Some(pb) = &pr.box_count else { continue };
            let boxes = p.units[*ui].instances.len() as u32;
            let rule = match &pb.reads {
                Reads::Cores => BoxCountRule::CoresPerSocket,
                Reads::Cpuid(active, counters) => {
                    let Some(rule) = self.box_count_cpuid_fits(pb, active, counters, boxes) else {
                        continue;
                    };
                    rule
                }
                Reads::ValueMap(reg, field, map) => {
                    let Some(rule) =
                        self.box_count_value_map(p, &names, pb, (reg, field), map, boxes)
                    else {
                        continue;
                    };
                    rule
                }
                Reads::Kind(kind) => {
                    let Some(rule) = self.box_count_kind_fits(p, *ui, pb, kind) else {
                        continue;
                    };
                    rule
                }
                Reads::Value(reg, field) => {
                    let Some(bit) = self.box_count_field(p, &names, pb, reg, field, None) else {
                        continue;
                    };
                    let width = p.units[bit.unit].registers[bit.register].fields[bit.field].width();
                    if width < 64 && (1u64 << width) <= u64::from(boxes) {
                        self.push(diag(
                            &pb.at,
                            format!("box-count field `{field}` of {reg} has {width} bit(s), too few to hold the unit's {boxes} boxes"),
                            "name the field whose value is the number of boxes present",
                        ));
                        continue;
                    }
                    BoxCountRule::Value(bit)
                }
                Reads::SetBits(pairs) => {
                    let single = pairs.len() == 1;
                    let bits: Option<Vec<BitRef>> = pairs
                        .iter()
                        .map(|(reg, field)| {
                            self.box_count_field(p, &names, pb, reg, field, single.then_some(boxes))
                        })
                        .collect();
                    let Some(bits) = bits else { continue };
                    let width: u32 = bits
                        .iter()
                        .map(|b| p.units[b.unit].registers[b.register].fields[b.field].width())
                        .sum();
                    if width < boxes {
                        self.push(diag(
                            &pb.at,
                            format!("box-count fields have {width} bits together, fewer than the unit's {boxes} boxes"),
                            "name the fields whose set bits are the boxes present",
                        ));
                        continue;
                    }
                    BoxCountRule::SetBits(bits)
                }
            };
            if let Some(pmu) = p.units[*ui].pmu.as_mut() {
                pmu.box_count = Some(BoxCount {
                    rule,
                    source: pb.source.clone(),
                    description: pb.description.clone(),
                });
            }
        }
        self.every_unit_counted(p, pending);
    }

    /// A `value-map` box count resolved: its field exists and holds every value of the map,
    /// and no value gives more boxes than the unit's `boxes`.
    fn box_count_value_map(
        &mut self,
        p: &Processor,
        names: &Names,
        pb: &PendingBoxCount,
        (reg, field): (&str, &str),
        map: &[(u64, u32)],
        boxes: u32,
    ) -> Option<BoxCountRule> {
        let bit = self.box_count_field(p, names, pb, reg, field, None)?;
        let width = p.units[bit.unit].registers[bit.register].fields[bit.field].width();
        let wide = map.iter().find(|(v, _)| width < 64 && *v >> width != 0);
        let many = map.iter().find(|(_, n)| *n > boxes);
        if let Some((v, _)) = wide {
            self.push(diag(
                &pb.at,
                format!("box-count map value {v} does not fit field `{field}` of {reg} ({width} bit(s))"),
                "map values the field can hold",
            ));
            return None;
        }
        if let Some((v, n)) = many {
            self.push(diag(
                &pb.at,
                format!("box-count map gives {n} boxes for {v}, more than the unit's {boxes}"),
                "a part has at most the boxes the unit lists",
            ));
            return None;
        }
        Some(BoxCountRule::ValueMap(bit, map.to_vec()))
    }

    /// A `cpuid-set-bits` count resolved: its bits are at least as many as the unit's boxes.
    fn box_count_cpuid_fits(
        &mut self,
        pb: &PendingBoxCount,
        active: &str,
        counters: &Option<String>,
        boxes: u32,
    ) -> Option<BoxCountRule> {
        let width = cpuid_width(active);
        if width < boxes {
            self.push(diag(
                &pb.at,
                format!("box-count cpuid `{active}` has {width} bit(s), fewer than the unit's {boxes} boxes"),
                "name the CPUID bits with one bit per box present",
            ));
            return None;
        }
        Some(BoxCountRule::CpuidSetBits {
            active: active.to_string(),
            counters: counters.clone(),
        })
    }

    /// Once a processor says for one unit how a part's box count is learnt, it says so for
    /// every unit with boxes of a socket or an L3 (a unit left without one would read as
    /// "every part has every box", which may be an oversight, not a fact).
    fn every_unit_counted(&mut self, p: &Processor, pending: &[(usize, PendingRoutes)]) {
        let Some(first) = pending
            .iter()
            .find_map(|(ui, pr)| pr.box_count.as_ref().map(|_| p.units[*ui].name.as_str()))
        else {
            return;
        };
        for (ui, pr) in pending {
            let unit = &p.units[*ui];
            let per_cpu = unit.pmu.as_ref().is_none_or(|m| m.scope == Scope::Cpu);
            if pr.box_count.is_none() && !per_cpu {
                self.push(diag(
                    &pr.at,
                    format!(
                        "unit {} has no <box-count>, though {first} of processor {} has one",
                        unit.name, p.id
                    ),
                    "say how software learns which of its boxes a part has: count=\"listed\" (every part has all), \"devices\" (the PCI devices found), \"discovery\" (the discovery table), or a register",
                ));
            }
        }
    }

    /// A `listed`, `devices` or `discovery` count fits the unit: `devices` needs counters in PCI
    /// devices (their config space or a memory-mapped window whose base one holds);
    /// `discovery` a processor with a discovery table.
    fn box_count_kind_fits(
        &mut self,
        p: &Processor,
        ui: usize,
        pb: &PendingBoxCount,
        kind: &BoxCountRule,
    ) -> Option<BoxCountRule> {
        let unit = &p.units[ui];
        let why = match kind {
            BoxCountRule::Devices => {
                // The counters, which every box has (free-running ones too), are what must be
                // reached through a device.
                let counters = unit.pmu.iter().flat_map(|m| &m.counters);
                let in_devices = counters
                    .map(|c| unit.registers[c.counter.register].space)
                    .all(|s| s == Space::Pci || s == Space::Mmio);
                (!in_devices).then_some((
                    format!(
                        "box-count `devices`: unit {}'s counters are not in PCI config space or memory-mapped",
                        unit.name
                    ),
                    "count MSR boxes with count=\"listed\", \"cores-per-socket\" or a register",
                ))
            }
            BoxCountRule::Discovery => {
                let table = p
                    .units
                    .iter()
                    .any(|u| u.pmu.as_ref().is_some_and(|m| m.discovery_type.is_some()));
                (!table).then_some((
                    format!(
                        "box-count `discovery`: processor {} has no unit with a discovery-type",
                        p.id
                    ),
                    "give the units their discovery-type, or count the boxes another way",
                ))
            }
            _ => None,
        };
        match why {
            Some((message, help)) => {
                self.push(diag(&pb.at, message, help));
                None
            }
            None => Some(kind.clone()),
        }
    }

    /// One register and field of a count: the register exists, the field is readable and, when it is the only one (`boxes` given), has a bit for every box.
    fn box_count_field(
        &mut self,
        p: &Processor,
        names: &Names,
        pb: &PendingBoxCount,
        reg: &str,
        field: &str,
        boxes: Option<u32>,
    ) -> Option<BitRef> {
        let Some(&(unit, register, instance, index)) = names.get(reg) else {
            self.push(diag(
                &pb.at,
                format!("box-count names unknown register `{reg}`"),
                &format!(
                    "name a register of processor {} by its concrete name, e.g. CAPID6",
                    p.id
                ),
            ));
            return None;
        };
        let r = &p.units[unit].registers[register];
        let found = r
            .fields
            .iter()
            .position(|f| !f.access.is_placeholder() && f.name.as_ref() == field);
        let Some(fi) = found.filter(|&fi| {
            r.fields[fi].access.is_readable() && r.fields[fi].width() >= boxes.unwrap_or(0)
        }) else {
            let what = match boxes {
                Some(n) => {
                    format!("a readable field with a bit for each of the unit's {n} box(es)")
                }
                None => "a readable field".to_string(),
            };
            self.push(diag(
                &pb.at,
                format!("box-count field `{field}` of {reg} is not {what}"),
                "name the field whose set bits are the boxes present",
            ));
            return None;
        };
        Some(BitRef {
            unit,
            register,
            instance,
            index,
            field: fi,
        })
    }
}

/// The number of bits of a CPUID bit range written as `80000022H.ECX[31:0]` (checked with
/// [`is_cpuid_bits`]); 0 where it cannot be read.
fn cpuid_width(text: &str) -> u32 {
    let bits = text
        .rsplit_once('[')
        .and_then(|(_, b)| b.strip_suffix(']'))
        .and_then(|b| b.split_once(':'));
    match bits.and_then(|(m, l)| Some((m.parse::<u32>().ok()?, l.parse::<u32>().ok()?))) {
        Some((msb, lsb)) if msb >= lsb => msb - lsb + 1,
        _ => 0,
    }
}
