//! `pmu encode -x | -d | -f FIELD`: the value alone, as `decode` and `read` print it, for
//! scripting `wrmsr` (`wrmsr -p0 0xc94 0x$(pmu encode W_MSR_PMON_EVT_SEL2 ... -x)`).

#[path = "support/fake_machine.rs"]
mod fake_machine;
use fake_machine::pmu;

const SEL: &[&str] = &[
    "encode",
    "W_MSR_PMON_EVT_SEL2",
    "ev_sel=0x76",
    "umask=0x43",
    "en=1",
];

/// `pmu encode SEL extra...`: stdout, which must be one line on success.
fn value(extra: &[&str]) -> String {
    let out = pmu().args(SEL).args(extra).output().unwrap();
    assert!(out.status.success(), "{:?}", out);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn encode_prints_the_value_alone_in_hex_or_decimal() {
    // en is bit 22, umask 15:8, ev_sel 7:0.
    assert_eq!(value(&["-x"]), "404376\n");
    assert_eq!(value(&["--hex"]), "404376\n");
    assert_eq!(value(&["-d"]), format!("{}\n", 0x40_4376));
    assert_eq!(value(&["--decimal"]), "4211574\n");
}

#[test]
fn encode_prints_one_field_by_name_or_bits() {
    assert_eq!(value(&["-f", "umask"]), "43\n");
    assert_eq!(value(&["-f", "umask", "-d"]), "67\n");
    assert_eq!(value(&["-f", "15:8", "-d"]), "67\n");
    assert_eq!(value(&["--field", "22"]), "1\n");
}

#[test]
fn what_encode_prints_decode_reads_back() {
    let hex = value(&["-x"]);
    let out = pmu()
        .args([
            "decode",
            "W_MSR_PMON_EVT_SEL2",
            &format!("0x{}", hex.trim()),
        ])
        .args(["-f", "ev_sel"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "76\n");
}

#[test]
fn encode_refuses_what_it_cannot_print() {
    let refused = |extra: &[&str], says: &str| {
        let out = pmu().args(SEL).args(extra).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(out.stdout.is_empty(), "nothing half-printed");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
    };
    refused(&["-f", "nope"], "its fields are");
    refused(&["-f", "70:3"], "MSB:LSB");
    refused(&["-x", "-d"], "cannot be used with");
    refused(&["--perf", "-x"], "cannot be used with");
}
