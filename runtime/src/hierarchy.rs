//! The Xeon 7500 uncore's overflow hierarchy (guide section 2.1.3): where each counter's
//! overflow shows up above its own box's GLOBAL_STATUS.
//!
//! Overflows of U- and W-box counters go straight to U_MSR_PMON_GLOBAL_STATUS (`ov_u`,
//! `ov_w`). Every other box reports to one of the two S-boxes, whose
//! S{0,1}_MSR_PMON_SUMMARY gathers them, and each S-box sets `ov_s0`/`ov_s1` in the U-box.
//!
//! Sources (Xeon 7500 Uncore Programming Guide, 323535-001):
//! - Table 2-26 (p. 2-47): summary bits `ov_c_l` (C-boxes 0-1 in S0, 4-5 in S1), `ov_c_r`
//!   (C-boxes 2-3 in S0, 6-7 in S1), `ov_mb` (M- or B-box), `ov_s` (the S-box itself), and
//!   `ov_r` (the left R-box half in S0, the right half in S1).
//! - p. 2-3: clearing B-box 1's overflow clears S1's `ov_mb` and the U-box's `ov_s1`, so B1
//!   reports to S1. That B0 reports to S0 follows from p. 2-45 (each S-box gathers the boxes
//!   on its side); which side each M-box is on is not stated in any public text we found, so
//!   M0 -> S0 and M1 -> S1 is our assumption, by symmetry with the B-boxes they pair with.
//! - p. 2-74 and Table 2-44: R-box counters 0-7 (ports 0-3) are the left half, 8-15 the right.

/// Where a counter's overflow is gathered after its own box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The S-box (0 or 1) whose summary gathers it, or `None` for the U- and W-box.
    pub s_box: Option<u8>,
    /// The field of S{s}_MSR_PMON_SUMMARY that is set (`None` for U and W).
    pub summary_field: Option<&'static str>,
    /// The field of U_MSR_PMON_GLOBAL_STATUS that is set.
    pub u_status_field: &'static str,
    /// Whether the assignment is stated by the guide (`false`: our assumption, see above).
    pub documented: bool,
}

const fn via_s(s: u8, field: &'static str, documented: bool) -> Route {
    Route {
        s_box: Some(s),
        summary_field: Some(field),
        u_status_field: if s == 0 { "ov_s0" } else { "ov_s1" },
        documented,
    }
}

/// The route of counter `counter` of box instance `instance` (`"C3"`, `"R"`, `"W"`), or
/// `None` for a box the hierarchy does not know.
pub fn route(instance: &str, counter: u32) -> Option<Route> {
    let direct = |field| Route {
        s_box: None,
        summary_field: None,
        u_status_field: field,
        documented: true,
    };
    Some(match instance {
        "U" => direct("ov_u"),
        "W" => direct("ov_w"),
        "S0" => via_s(0, "ov_s", true),
        "S1" => via_s(1, "ov_s", true),
        "C0" | "C1" => via_s(0, "ov_c_l", true),
        "C2" | "C3" => via_s(0, "ov_c_r", true),
        "C4" | "C5" => via_s(1, "ov_c_l", true),
        "C6" | "C7" => via_s(1, "ov_c_r", true),
        "B0" => via_s(0, "ov_mb", true),
        "B1" => via_s(1, "ov_mb", true),
        "M0" => via_s(0, "ov_mb", false),
        "M1" => via_s(1, "ov_mb", false),
        "R" if counter < 8 => via_s(0, "ov_r", true),
        "R" if counter < 16 => via_s(1, "ov_r", true),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_box_instance_of_the_spec_has_a_route() {
        let nhm = pmu_regs::PROCESSORS
            .iter()
            .find(|p| p.id == "xeon-7500")
            .expect("the Xeon 7500 is in the spec");
        for unit in nhm.units {
            for instance in unit.instances {
                assert!(route(instance, 0).is_some(), "{instance} has no route");
            }
        }
        assert_eq!(route("R", 9).unwrap().s_box, Some(1));
        assert_eq!(route("C5", 0).unwrap().summary_field, Some("ov_c_l"));
        assert!(route("X9", 0).is_none());
    }
}
