//! A processor's uncore discovery domains in its C header (`processors.xml`'s
//! `<discovery-domain>`): per domain how its tables are found (a PCI device id, or the MSR
//! holding the table's physical address), whether there is one per socket or per die, its
//! name, and the types its tables list that software ignores.

use super::{names, Header};
use crate::model::{DiscoveryDomain, DomainPlace, Processor};

/// Every discovery domain of `p`, after a comment on how to use them; nothing for a processor
/// without any (one table per socket behind the generic device, or none).
pub(super) fn emit(h: &mut Header, p: &Processor) {
    if p.discovery_domains.is_empty() {
        return;
    }
    let mut sources: Vec<&str> = p
        .discovery_domains
        .iter()
        .map(|d| d.source.as_str())
        .collect();
    sources.dedup();
    h.out.push('\n');
    h.comment(&format!(
        "Uncore discovery domains of {} ({} domains): the part's discovery tables are found in \
         several ways, each domain's with its own. A domain with _DEVICE_ID has one table per \
         socket behind the discovery capability of every Intel (vendor 0x8086) PCI device with \
         that id; one with _MSR has the table's physical address in that MSR, read on a CPU of \
         each socket or (_PER_DIE 1) of each die. _NAME is the spec's id; _IGNORED_<NAME> is \
         a discovery type the domain's tables list that software ignores as broken. Source: {}.",
        p.name,
        p.discovery_domains.len(),
        sources.join(", ")
    ));
    h.define(
        &names::discovery_domain_count(&p.module),
        &p.discovery_domains.len().to_string(),
        &|| format!("the number of discovery domains of {}", p.id),
    );
    for d in &p.discovery_domains {
        domain(h, p, d);
    }
}

/// One domain's macros.
fn domain(h: &mut Header, p: &Processor, d: &DiscoveryDomain) {
    let stem = names::discovery_domain(&p.module, &d.id);
    let what = || format!("the discovery domain {} of {}", d.id, p.id);
    h.define(&format!("{stem}_NAME"), &format!("\"{}\"", d.id), &what);
    match d.place {
        DomainPlace::PciDevice(id) => {
            h.define(&format!("{stem}_DEVICE_ID"), &format!("0x{id:04X}U"), &what)
        }
        DomainPlace::Msr(msr) => h.define(&format!("{stem}_MSR"), &format!("0x{msr:X}U"), &what),
    }
    h.define(
        &format!("{stem}_PER_DIE"),
        if d.per_die { "1" } else { "0" },
        &what,
    );
    for (ty, name) in &d.ignored {
        h.define(
            &names::discovery_domain_ignored(&p.module, &d.id, name),
            &format!("0x{ty:X}U"),
            &what,
        );
    }
}
