//! `watch --event TEXT` read with the grammar `encode` uses: `event=NAME`, named values
//! (`invert=lt`) and numbers by the one number rule, checked against the box's own counter
//! control register from the metadata.

use pmu_regs::{Addresses, RegisterInfo, Space, PROCESSORS};
use pmu_runtime::codec;

use crate::grammar;
use crate::Failure;

/// The counter control register of box `unit` (an instance name such as `C3` or `HA`): the
/// first register of that instance with an `ev_sel` field.
pub fn control_register(unit: &str) -> Option<&'static RegisterInfo> {
    PROCESSORS
        .iter()
        .flat_map(|p| p.units.iter())
        .flat_map(|u| u.registers.iter().copied())
        .filter(|r| r.field("ev_sel").is_some())
        .find(|r| match r.addresses {
            Addresses::Known(a) => a.iter().any(|a| a.instance.eq_ignore_ascii_case(unit)),
            Addresses::Unknown(_) => false,
        })
}

/// Whether the box's registers are in PCI configuration space.
pub fn is_pci(info: &RegisterInfo) -> bool {
    info.space == Space::Pci
}

/// The settings one `--event` asks for; `None` leaves the box's default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    pub ev_sel: u8,
    pub ev_sel_ext: bool,
    pub umask: Option<u8>,
    pub thresh: Option<u8>,
    pub invert: Option<bool>,
    pub edge: Option<bool>,
}

const ACCEPTED: &str = "event=NAME or ev_sel=N, and umask, thresh, invert, edge";

/// Parses one `--event` for the box whose counter control is `info`.
pub fn parse(info: &'static RegisterInfo, text: &str) -> Result<Settings, Failure> {
    let edge_field = info
        .fields
        .iter()
        .find(|f| f.name.starts_with("edge"))
        .map(|f| f.name);
    let mut words = Vec::new();
    for part in text.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(Failure::usage(format!(
                "`{part}` is not key=value; --event takes {ACCEPTED}, e.g. ev_sel=0x01,umask=0x04"
            )));
        };
        let k = k.trim();
        let key = match k.to_ascii_lowercase().as_str() {
            // `event=0x3c` is the event select, as perf writes it; `event=NAME` a named event.
            "event" if v.trim().starts_with(|c: char| c.is_ascii_digit()) => "ev_sel".to_string(),
            "edge" | "edge_det" | "edge_detect" => edge_field.unwrap_or("edge").to_string(),
            "event" | "ev_sel" | "umask" | "thresh" | "invert" | "ev_sel_ext" => k.to_string(),
            _ => {
                return Err(Failure::usage(format!(
                    "`{k}` cannot be given to --event (watch sets the enables itself); it takes {ACCEPTED}"
                )))
            }
        };
        words.push(format!("{key}={v}"));
    }
    let pairs = grammar::assignments(info, &words)?;
    if !pairs
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("event") || k.eq_ignore_ascii_case("ev_sel"))
    {
        return Err(Failure::usage(format!(
            "`{text}` has no event: give event=NAME (`pmu list --events --unit {}`) or ev_sel=N",
            info.unit
        )));
    }
    let raw = codec::encode(info, 0, &pairs)?;
    let given = |name: &str| {
        pairs.iter().any(|(k, _)| k.eq_ignore_ascii_case(name))
            || (pairs.iter().any(|(k, _)| k.eq_ignore_ascii_case("event"))
                && matches!(name, "ev_sel" | "umask"))
    };
    let get = |name: &str| info.field(name).map_or(0, |f| f.extract(raw));
    let edge = edge_field.unwrap_or("edge");
    Ok(Settings {
        ev_sel: get("ev_sel") as u8,
        ev_sel_ext: get("ev_sel_ext") != 0,
        umask: (given("umask") && info.field("umask").is_some()).then(|| get("umask") as u8),
        thresh: given("thresh").then(|| get("thresh") as u8),
        invert: given("invert").then(|| get("invert") != 0),
        edge: given(edge).then(|| get(edge) != 0),
    })
}
