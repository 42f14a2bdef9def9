//! An Arm CMN-700 mesh event, by the kernel's name, as the `arm_cmn_0` perf event string
//! that counts it on one node, and that event's config decoded back to the name, as these
//! `pmu` commands print them:
//!
//! ```text
//! pmu encode arm-cmn-700:hnf_qos_pocq_occupancy_read nodeid=0x68 --perf
//! pmu decode arm_cmn_0 0x68880f0005
//! ```
//!
//! Run it with `cargo run -p pmu-runtime --example mesh_event`; CI and
//! `runtime/tests/examples.rs` compare its output with those commands'.

use pmu_runtime::perf::mesh::{decode_named, encode_named};
use pmu_runtime::perf::EventSources;

/// The event, with its processor.
pub const EVENT: &str = "arm-cmn-700:hnf_qos_pocq_occupancy_read";
/// The node to count it on (NODE_INFO.node_id).
pub const NODE: &str = "nodeid=0x68";
/// The kernel PMU.
pub const PMU: &str = "arm_cmn_0";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    print!("{}", report()?);
    Ok(())
}

/// The event string (in the kernel's formats where this machine has the PMU, the driver's
/// otherwise), then its config decoded.
pub fn report() -> Result<String, Box<dyn std::error::Error>> {
    let sources = EventSources::with_root("/sys/bus/event_source/devices");
    let event = encode_named(EVENT, &[NODE.to_string()], &sources).ok_or("no such event")??;
    let decoded = decode_named(PMU, event.config[0]).ok_or("no such PMU")?;
    Ok(format!("{event}\n{decoded}"))
}
