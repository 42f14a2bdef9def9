//! Mesh node events by name (the spec's `<node-events>`, Linux's `arm_cmn_event_attrs`); their
//! perf encoding is `perf::mesh`'s.

use pmu_regs::{NodeEventInfo, NodeEventsInfo};

/// Every node type's events the spec gives, one entry per unit with `<node-events>`.
pub static NODE_EVENTS: &[&NodeEventsInfo] = &[
    &pmu_regs::arm_cmn_700::hnf::NODE_EVENTS,
    &pmu_regs::arm_cmn_700::sbsx::NODE_EVENTS,
];

/// One named event and the node type that offers it.
#[derive(Debug, Clone, Copy)]
pub struct MeshEvent {
    /// The node type's events.
    pub node: &'static NodeEventsInfo,
    /// The event.
    pub event: &'static NodeEventInfo,
}

impl PartialEq for MeshEvent {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.node, other.node) && self.event == other.event
    }
}

impl Eq for MeshEvent {}

impl MeshEvent {
    /// The event named `name` (`hnf_cache_miss`, or with its processor, `arm-cmn-700:hnf_cache_miss`).
    pub fn named(name: &str) -> Option<Self> {
        let (processor, name) = match name.trim().split_once(':') {
            Some((p, n)) => (Some(p), n),
            None => (None, name.trim()),
        };
        all_events().find(|e| {
            e.event.name.eq_ignore_ascii_case(name)
                && processor.is_none_or(|p| p.eq_ignore_ascii_case(e.processor()))
        })
    }

    /// The processor whose mesh has the event (`arm-cmn-700`).
    pub fn processor(&self) -> &'static str {
        self.node.select.processor
    }

    /// The kernel's terms for the event, as its `events/` file words them:
    /// `type=0x5,eventid=0x1`, with `occupid` where the event takes a filter.
    pub fn terms(&self) -> String {
        let mut t = format!(
            "type={:#x},eventid={:#x}",
            self.node.node_type, self.event.id
        );
        if self.event.filter.is_some() {
            t.push_str(&format!(",occupid={:#x}", self.event.occupid));
        }
        t
    }
}

/// Every event the spec gives.
pub fn all_events() -> impl Iterator<Item = MeshEvent> {
    NODE_EVENTS.iter().flat_map(|n| {
        n.events
            .iter()
            .map(move |event| MeshEvent { node: n, event })
    })
}
