//! Mesh node events ([`MeshEvent`], the spec's `<node-events>`) as perf events of the
//! kernel's `arm_cmn` PMU, in its driver's formats (`type` config:0-15, `eventid` 16-26,
//! `occupid` 27-30, `bynodeid` 31, `nodeid` 32-47), and back.

use pmu_regs::NodeEventsInfo;

use super::encode::{from_terms, PerfEvent};
use super::format::FormatField;
use super::sysfs::{EventSources, KernelPmu};
use super::PerfError;
use crate::cmn::{all_events, MeshEvent};

/// The perf event of `pmu` (the kernel's, read from sysfs, or [`driver_pmu`]'s) for `event`
/// with the extra format terms `extra`: `nodeid=0x68` counts on that node alone, and sets
/// `bynodeid` as the kernel asks.
pub fn perf_event(
    event: &MeshEvent,
    pmu: &KernelPmu,
    extra: &[String],
) -> Result<PerfEvent, PerfError> {
    let mut text = event.terms();
    let said = |t: &str| extra.iter().any(|w| w.trim_start().starts_with(t));
    for w in extra {
        text.push(',');
        text.push_str(w.trim());
    }
    if said("nodeid=") && !said("bynodeid=") {
        text.push_str(",bynodeid=1");
    }
    from_terms(pmu, &text)
}

/// The event a perf `config` of `pmu` selects (its `type`, `eventid` and `occupid`, read
/// through the PMU's formats), if the spec names it.
pub fn from_config(pmu: &KernelPmu, config: u64) -> Option<MeshEvent> {
    let get = |n: &str| pmu.format(n).map(|f| f.extract(&[config, 0, 0]));
    all_events().find(|e| {
        get("type") == Some(u64::from(e.node.node_type))
            && get("eventid") == Some(u64::from(e.event.id))
            && get("occupid").unwrap_or(0) == u64::from(e.event.occupid)
    })
}

/// The kernel PMU of `node`'s events as its driver would publish it, for when the machine
/// has none to read (type 0: nothing is opened with it).
pub fn driver_pmu(node: &NodeEventsInfo) -> KernelPmu {
    let mut formats: Vec<FormatField> = node
        .driver
        .formats
        .iter()
        .map(|f| FormatField::parse(f.name, f.config).expect("the validator checked every format"))
        .collect();
    formats.sort_by(|a, b| a.name.cmp(&b.name));
    KernelPmu {
        name: node.pmu.to_string(),
        type_: 0,
        formats,
        cpumask: Vec::new(),
        events: Default::default(),
    }
}

/// `pmu encode EVENT words... --perf` for a mesh event (`arm-cmn-700:hnf_cache_miss`): its
/// perf event, in the formats of the kernel's PMU where `sources` has it, its driver's
/// otherwise. `None` when `name` names no mesh event.
pub fn encode_named(
    name: &str,
    extra: &[String],
    sources: &EventSources,
) -> Option<Result<PerfEvent, PerfError>> {
    let event = MeshEvent::named(name)?;
    let node = event.node;
    let pmu = if sources.has(node.pmu) {
        sources.pmu(node.pmu, node.driver.module)
    } else {
        Ok(driver_pmu(node))
    };
    Some(pmu.and_then(|p| perf_event(&event, &p, extra)))
}

/// `pmu decode PMU CONFIG` for a mesh PMU (`arm_cmn_0`): the event string the config makes
/// in the driver's formats, and the event's name where the spec gives it. `None` when `pmu`
/// is no mesh PMU.
pub fn decode_named(pmu: &str, config: u64) -> Option<String> {
    let node = crate::cmn::NODE_EVENTS.iter().find(|n| n.pmu == pmu)?;
    let kernel = driver_pmu(node);
    let terms: Vec<String> = node
        .driver
        .formats
        .iter()
        .filter_map(|f| {
            kernel
                .format(f.name)
                .map(|x| (f.name, x.extract(&[config, 0, 0])))
        })
        .filter(|(_, v)| *v != 0)
        .map(|(n, v)| format!("{n}={v:#x}"))
        .collect();
    let name = from_config(&kernel, config).map_or_else(
        || "no event the spec names".to_string(),
        |e| format!("{} ({})", e.event.name, e.processor()),
    );
    Some(format!("{pmu}/{}/: {name}\n", terms.join(",")))
}
