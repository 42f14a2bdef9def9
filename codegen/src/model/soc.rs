//! A SoC: which processors' PMUs one chip has (its cores' and its uncore's), and how software
//! recognises it.

use serde::Serialize;

/// `<soc>`: a SoC as a composition of the spec's processors.
#[derive(Debug, Clone, Serialize)]
pub struct Soc {
    /// Identifier (`nvidia-grace`).
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// The processor id of its cores (one with a `<midr>`).
    pub cores: String,
    /// The processor ids of its other PMUs (mesh, CoreSight PMUs), in spec order.
    pub uncore: Vec<String>,
    /// The SMCCC SOC_ID Linux shows in `/sys/devices/soc0/soc_id` (`jep106:036b:0241`), when
    /// a public source gives it.
    pub soc_id: Option<String>,
    /// The source of the SOC_ID value.
    pub soc_id_source: Option<String>,
    /// The source of the composition.
    pub source: String,
}
