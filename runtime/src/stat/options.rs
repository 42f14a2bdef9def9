//! `pmu stat`'s options checked together, before anything is counted: one list of rules
//! (`RULES`), each a combination that is refused with what to type instead (a usage
//! error, exit status 2). What one option's value alone gets wrong (`-I 5`, `-r -1`) is
//! refused where it is parsed ([`interval_ms`], [`interval_count`], [`delay_ms`],
//! [`repeat_runs`]).

use super::StatError;

/// Which of `pmu stat`'s options are given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatOptions {
    /// `--sim`.
    pub sim: bool,
    /// `--td-level N`.
    pub td_level: bool,
    /// `--view VIEW`.
    pub view: bool,
    /// `-M METRICS`.
    pub metrics: bool,
    /// `--metric-only`.
    pub metric_only: bool,
    /// `-r N`'s N (1 without it).
    pub repeat: u32,
    /// `--json` (the command's, before `stat`).
    pub json: bool,
    /// `-x SEP`.
    pub separator: bool,
    /// `--` with nothing after it.
    pub nothing_after_dashes: bool,
}

/// A rule: whether it refuses the options, and what it says.
struct Rule {
    refuses: fn(&StatOptions) -> bool,
    says: fn(&StatOptions) -> String,
}

/// The rules, first match wins.
const RULES: [Rule; 6] = [
    // `--sim --metric-only` has no metrics to show alone.
    Rule {
        refuses: |o| o.sim && o.metric_only && !o.metrics && !o.td_level,
        says: |_| {
            "--metric-only prints metric values alone: name the metrics with -M (pmu stat --sim \
             -M TmaL1 --metric-only -- CMD) or the tree with --td-level N"
                .into()
        },
    },
    // The metrics are counted on the simulator only so far.
    Rule {
        refuses: |o| !o.sim && (o.td_level || o.view || o.metrics),
        says: |o| without_sim(o.td_level, o.view, o.metrics).unwrap_or_default(),
    },
    // As perf 6.1 ("--metric-only is not supported with -r", builtin-stat.c): a metric-only
    // table has no column for the spread between runs; one run (`-r 1`) is taken.
    Rule {
        refuses: |o| o.metric_only && o.repeat > 1,
        says: |_| {
            "--metric-only is not supported with -r (as perf stat): leave out -r, or leave out \
             --metric-only to see each run's spread"
                .into()
        },
    },
    Rule {
        refuses: |o| o.sim && o.json,
        says: |_| {
            "--sim prints its views as text tables; leave out --json (or count without --sim)"
                .into()
        },
    },
    Rule {
        refuses: |o| o.sim && o.separator && !o.metric_only,
        says: |_| "with --sim, -x goes with --metric-only (its CSV); leave out -x".into(),
    },
    // perf would count the system until Ctrl-C, which is rarely what was meant.
    Rule {
        refuses: |o| o.nothing_after_dashes,
        says: |_| {
            "nothing after `--`: name the command to count (pmu stat -- sleep 1), or leave \
             out `--` to count the whole system until Ctrl-C"
                .into()
        },
    },
];

/// Whether `pmu stat` takes `options` together: the first of `RULES` that refuses them, as
/// a usage error saying what to type instead.
pub fn check(options: &StatOptions) -> Result<(), StatError> {
    match RULES.iter().find(|r| (r.refuses)(options)) {
        Some(rule) => Err(StatError::Usage((rule.says)(options))),
        None => Ok(()),
    }
}

/// Why `-M`, `--td-level` or `--view` (each given or not: `td_level`, `view`, `metrics`)
/// without `--sim` is refused, and what to type instead; `None` if none is given.
/// `pmu stat` counts metrics on the simulator only so far; the machine's own lack (no
/// hardware or uncore PMU, no MSR access, from
/// [`CountingAccess`](crate::report::machine::CountingAccess)) is named with what works here.
fn without_sim(td_level: bool, view: bool, metrics: bool) -> Option<String> {
    let given = [(td_level, "--td-level"), (view, "--view"), (metrics, "-M")];
    let option = given.iter().find(|(g, _)| *g)?.1;
    let processor = default_processor().unwrap_or("NAME");
    let access = crate::report::machine::CountingAccess::of(None);
    let mut m = format!(
        "{option} is counted on the simulator only so far: add --sim (pmu stat --sim \
         --processor {processor} {option} ... -- CMD); on real hardware, `pmu watch \
         --metric NAME` counts a metric's unit"
    );
    let missing = access.missing();
    if !missing.is_empty() {
        m += &format!("; this machine has {}", missing.join(", "));
    }
    if let Some(instead) = access.instead() {
        m += &format!("; {instead}");
    }
    Some(m)
}

/// The name of the processor `--sim` simulates unless told, for the message.
#[cfg(feature = "json")]
fn default_processor() -> Option<&'static str> {
    super::views::default_sim_processor().map(|p| p.name)
}

/// Without the simulator's views there is no default to name.
#[cfg(not(feature = "json"))]
fn default_processor() -> Option<&'static str> {
    None
}

/// `-I MS`: whole milliseconds, at least 10 (a shorter interval would mostly measure the
/// reading itself).
pub fn interval_ms(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(ms) if ms >= 10 => Ok(ms),
        _ => Err(format!(
            "-I takes whole milliseconds, at least 10 (-I 100: every 0.1 s), not `{text}`"
        )),
    }
}

/// `--interval-count N`: how many intervals, at least 1.
pub fn interval_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "--interval-count takes how many intervals to print, at least 1, not `{text}`"
        )),
    }
}

/// `-D MS`: whole milliseconds to wait before counting (perf's `-D -1`, events enabled later
/// through a control descriptor, is not taken).
pub fn delay_ms(text: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| {
        format!(
            "-D takes whole milliseconds to wait before counting (-D 500: from half a second \
             after the command starts), not `{text}`"
        )
    })
}

/// `-r N`: a whole number of runs, at least 1 (perf: "Run count must be a positive number";
/// its `-r 0`, repeating until Ctrl-C, is not taken).
pub fn repeat_runs(text: &str) -> Result<u32, String> {
    match text.trim().parse::<i64>() {
        Ok(n) if n >= 1 => u32::try_from(n).map_err(|_| format!("-r {n}: too many runs")),
        _ => Err(format!(
            "-r takes how many times to run the command, at least 1 (-r 5: five runs and each \
             count's spread), not `{text}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_rule_that_refuses_speaks() {
        let ok = StatOptions {
            repeat: 1,
            ..StatOptions::default()
        };
        assert!(check(&ok).is_ok());
        let both = StatOptions {
            metric_only: true,
            repeat: 3,
            nothing_after_dashes: true,
            ..ok.clone()
        };
        let e = check(&both).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("not supported with -r"), "{e}");
    }

    #[test]
    fn a_run_count_is_a_positive_whole_number() {
        assert_eq!(repeat_runs("5"), Ok(5));
        for bad in ["0", "-1", "x", "1.5", "99999999999"] {
            assert!(repeat_runs(bad).is_err(), "{bad}");
        }
        assert_eq!(interval_ms("10"), Ok(10));
        assert!(interval_ms("9").is_err());
        assert!(interval_ms("-100").is_err());
        assert_eq!(delay_ms("500"), Ok(500));
        assert!(delay_ms("-5").is_err());
        assert_eq!(interval_count("3"), Ok(3));
        assert!(interval_count("-1").is_err() && interval_count("0").is_err());
    }
}
