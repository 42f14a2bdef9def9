//! The spec's box and counter addresses, counter widths and counts of Skylake-SP to Granite
//! Rapids and Zen 2 to 5 against a table copied from sources other than the ones the spec
//! cites (`support/independent_addresses.rs`). Every box's control and every counter's
//! control and counter are compared, so a wrong stride fails as a wrong base does; every
//! mismatch is listed before the test fails. Read through `pmu_regs` alone, not the runtime.

#[path = "support/independent_addresses.rs"]
mod independent;

use independent::{At, Group, Unit, CONFLICTS, NO_INDEPENDENT_SOURCE};
use pmu_regs::{CounterKind, Location, PROCESSORS};

/// The thirteen processors; Cascade Lake, Emerald Rapids, Sierra Forest, Clearwater Forest and Zen 6
/// carry the units of the processor after them.
const NEWER: [(&str, &str); 13] = [
    ("skylake-sp", "skylake-sp"),
    ("cascade-lake", "skylake-sp"),
    ("ice-lake-sp", "ice-lake-sp"),
    ("sapphire-rapids", "sapphire-rapids"),
    ("emerald-rapids", "sapphire-rapids"),
    ("granite-rapids", "granite-rapids"),
    ("sierra-forest", "granite-rapids"),
    ("clearwater-forest", "granite-rapids"),
    ("amd-zen2", "amd-zen2"),
    ("amd-zen3", "amd-zen3"),
    ("amd-zen4", "amd-zen4"),
    ("amd-zen5", "amd-zen5"),
    ("amd-zen6", "amd-zen5"),
];

/// Where the table says register `n` of box `b` is.
fn expected(at: At, b: u32, n: u32) -> Location {
    match at {
        At::Msr {
            first,
            box_stride,
            step,
        } => Location::Msr(first + b * box_stride + n * step),
        At::MsrEach {
            boxes,
            offset,
            step,
        } => Location::Msr(boxes[b as usize] + offset + n * step),
        At::Pci {
            devices,
            offset,
            step,
        } => {
            let d = devices[b as usize];
            Location::Pci {
                // Compared only where the source names the id (`same`).
                device_id: d.id.unwrap_or(0),
                device: d.device,
                function: d.function,
                offset: offset + n as u16 * step,
            }
        }
        At::Mmio {
            channels,
            offset,
            step,
        } => Location::Mmio {
            controller: (b / u32::from(channels)) as u8,
            channel: (b % u32::from(channels)) as u8,
            offset: offset + n * step,
        },
    }
}

/// Whether the spec's location is the table's, ignoring a device id the source does not give.
fn same(spec: Location, table: Location, at: At, b: u32) -> bool {
    match (spec, table, at) {
        (
            Location::Pci {
                device,
                function,
                offset,
                ..
            },
            Location::Pci {
                device: d,
                function: f,
                offset: o,
                ..
            },
            At::Pci { devices, .. },
        ) if devices[b as usize].id.is_none() => (device, function, offset) == (d, f, o),
        _ => spec == table,
    }
}

/// Facts compared and mismatches found for one processor's unit.
#[derive(Default)]
struct Tally {
    facts: usize,
    mismatches: Vec<String>,
}

impl Tally {
    fn check<T: PartialEq + std::fmt::Debug>(&mut self, what: String, spec: T, table: T) {
        self.facts += 1;
        if spec != table {
            self.mismatches
                .push(format!("{what}: spec {spec:?}, independent {table:?}"));
        }
    }

    fn at(&mut self, what: String, spec: Option<Location>, at: At, b: u32, n: u32) {
        self.facts += 1;
        let table = expected(at, b, n);
        match spec {
            Some(s) if same(s, table, at, b) => {}
            _ => self
                .mismatches
                .push(format!("{what}: spec {spec:?}, independent {table:?}")),
        }
    }
}

/// Compares one table row with processor `id`'s unit.
fn compare(id: &str, row: &Unit, tally: &mut Tally) {
    let p = PROCESSORS.iter().find(|p| p.id == id).expect("processor");
    let Some(unit) = p.units.iter().find(|u| u.name == row.unit) else {
        tally
            .mismatches
            .push(format!("{id} {}: no such unit", row.unit));
        return;
    };
    let pmu = unit.pmu.expect("a unit with counters has a <pmu>");
    let at = |what: &str| format!("{id} {} {what}", row.unit);
    tally.check(at("boxes"), unit.instances.len(), row.boxes as usize);
    let general = pmu
        .counters
        .iter()
        .filter(|c| c.kind == CounterKind::General)
        .count();
    tally.check(
        at("general counters per box"),
        general,
        row.general as usize,
    );
    for b in 0..row.boxes {
        let instance = row.instance(b);
        if !unit.instances.contains(&instance.as_str()) {
            tally
                .mismatches
                .push(at(&format!("{instance}: no such box")));
            continue;
        }
        if let Some(box_ctl) = row.box_ctl {
            let spec = pmu
                .controls
                .first()
                .and_then(|r| r.known_addresses().iter().find(|a| a.instance == instance))
                .map(|a| a.location);
            tally.at(at(&format!("{instance} box control")), spec, box_ctl, b, 0);
        }
        for g in row.groups {
            compare_group(id, row, &instance, b, g, pmu, tally);
        }
    }
}

fn compare_group(
    id: &str,
    row: &Unit,
    instance: &str,
    b: u32,
    g: &Group,
    pmu: &pmu_regs::PmuInfo,
    tally: &mut Tally,
) {
    for n in 0..g.count {
        let number = g.first + n;
        let what = |x: &str| format!("{id} {} {instance} counter {number} {x}", row.unit);
        let Some(c) = pmu.counter(number) else {
            tally.mismatches.push(what("missing"));
            continue;
        };
        if let Some(width) = g.width {
            tally.check(what("width"), c.width, width);
        }
        let spec = c.counter.address(instance).map(|a| a.location);
        tally.at(what("counter"), spec, g.counter, b, n);
        if let Some(control) = g.control {
            let spec = c
                .control
                .and_then(|r| r.address(instance))
                .map(|a| a.location);
            tally.at(what("control"), spec, control, b, n);
        }
    }
}

#[test]
fn the_spec_has_the_independent_sources_addresses_widths_and_counts() {
    let rows = independent::units();
    let mut mismatches = Vec::new();
    let mut open = Vec::new();
    for (id, from) in NEWER {
        let mut units = 0;
        let mut tally = Tally::default();
        for row in rows.iter().filter(|r| r.processors.contains(&from)) {
            let before = tally.mismatches.len();
            compare(id, row, &mut tally);
            for m in &mut tally.mismatches[before..] {
                m.push_str(&format!(" [{}]", row.source));
            }
            units += 1;
        }
        println!("{id}: {units} units, {} facts compared", tally.facts);
        for m in tally.mismatches {
            let conflict = CONFLICTS.iter().find(|c| {
                c.processor == from
                    && m.starts_with(&format!("{id} {} ", c.unit))
                    && m.contains(&format!(" {}: ", c.fact))
            });
            match conflict {
                Some(c) => open.push((m, c.why)),
                None => mismatches.push(m),
            }
        }
    }
    for c in CONFLICTS {
        println!(
            "open source conflict (not failing), {} {}: {}",
            c.processor, c.unit, c.why
        );
    }
    for (m, _) in &open {
        println!("    {m}");
    }
    // Each listed conflict must still be there: one the spec resolves is taken off the list.
    for c in CONFLICTS {
        assert!(
            open.iter()
                .any(|(m, _)| m.contains(&format!(" {}: ", c.fact))),
            "{} {}: the listed conflict no longer shows; remove it",
            c.processor,
            c.unit
        );
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches with the independent sources:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn every_unit_of_the_ten_processors_has_a_row_or_says_why_not() {
    let rows = independent::units();
    let mut missing = Vec::new();
    let mut rowless = Vec::new();
    for (id, from) in NEWER {
        let p = PROCESSORS.iter().find(|p| p.id == id).expect("processor");
        for u in p.units.iter().filter(|u| u.pmu.is_some()) {
            let has_row = rows
                .iter()
                .any(|r| r.processors.contains(&from) && r.unit == u.name);
            let why = NO_INDEPENDENT_SOURCE
                .iter()
                .find(|(p, unit, _)| *p == from && *unit == u.name);
            match (has_row, why) {
                (true, None) => {}
                (false, Some((_, _, why))) => rowless.push(format!("{id} {}: {why}", u.name)),
                (true, Some(_)) => missing.push(format!("{id} {}: a row and a reason", u.name)),
                (false, None) => missing.push(format!("{id} {}: no row", u.name)),
            }
        }
    }
    for r in &rowless {
        println!("no independent row: {r}");
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
