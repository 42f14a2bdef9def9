//! What a conformance run found: a row per check (its name, what was expected, what was
//! measured, the tolerance and the verdict), and the report the rows make, as a table, a
//! one-line verdict and JSON.

/// One check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckVerdict {
    /// What was measured is what was expected, within the tolerance.
    Pass,
    /// It is not, or the check could not be made (the row's note says why).
    Fail,
    /// A fact the run reports without judging it (who else holds counters, a comparison
    /// that could not be made here because a tool is missing).
    Note,
}

impl CheckVerdict {
    /// `pass`, `FAIL` or `note`, as the table prints it.
    pub fn label(self) -> &'static str {
        match self {
            CheckVerdict::Pass => "pass",
            CheckVerdict::Fail => "FAIL",
            CheckVerdict::Note => "note",
        }
    }
}

/// One check of a conformance run.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRow {
    /// What is checked (`count CBo`, `page-faults`, `put-back`).
    pub name: String,
    /// What was expected, and where it came from.
    pub expected: String,
    /// What was measured.
    pub measured: String,
    /// How far the measured value may be from the expected one (`exact`, `1%`).
    pub tolerance: String,
    /// The verdict.
    pub verdict: CheckVerdict,
    /// Why it failed (the error, naming the register access that failed), or what a note
    /// says; empty for a plain pass.
    pub note: String,
}

impl CheckRow {
    /// A row whose verdict is `pass` when `ok`, else `FAIL`.
    pub fn judged(name: impl Into<String>, expected: String, measured: String, ok: bool) -> Self {
        CheckRow {
            name: name.into(),
            expected,
            measured,
            tolerance: "exact".into(),
            verdict: if ok {
                CheckVerdict::Pass
            } else {
                CheckVerdict::Fail
            },
            note: String::new(),
        }
    }

    /// A check that could not be made: `FAIL`, with `why` as its note.
    pub fn failed(name: impl Into<String>, expected: String, why: String) -> Self {
        CheckRow {
            measured: "-".into(),
            note: why,
            ..CheckRow::judged(name, expected, String::new(), false)
        }
    }

    /// A fact reported without a verdict.
    pub fn note(name: impl Into<String>, note: String) -> Self {
        CheckRow {
            name: name.into(),
            expected: "-".into(),
            measured: "-".into(),
            tolerance: "-".into(),
            verdict: CheckVerdict::Note,
            note,
        }
    }

    /// The same row with this tolerance.
    pub fn within(mut self, tolerance: &str) -> Self {
        self.tolerance = tolerance.into();
        self
    }
}

/// Why box `instance` is broken, when its counter did not move in any interval while its
/// event ran (`expected` an interval): a box that counts nothing while enabled is named
/// broken in its row's note, never reported as counting 0. Empty otherwise.
pub fn broken(instance: &str, deltas: &[u64], expected: u64) -> String {
    if expected == 0 || deltas.is_empty() || deltas.iter().any(|&d| d != 0) {
        return String::new();
    }
    format!(
        "{instance} is broken: its counter did not move in {} intervals while enabled and its \
         event ran (frozen, or not counting); its counts are not zeros",
        deltas.len()
    )
}

/// What a conformance run found, on one machine.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// The machine checked (`simulated xeon-e5-2600`, `this machine`).
    pub target: String,
    /// The checks, in the order they ran.
    pub rows: Vec<CheckRow>,
}

impl CheckReport {
    /// Whether no check failed.
    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }

    /// The checks that failed.
    pub fn failures(&self) -> Vec<&CheckRow> {
        self.rows
            .iter()
            .filter(|r| r.verdict == CheckVerdict::Fail)
            .collect()
    }

    /// One line: `PASS` with how many checks passed, `FAIL` naming each failed check and
    /// why, or `NOTHING TO CHECK` where every row is a note (a part only perf reaches, on the
    /// simulator): zero checks passed is not a pass.
    pub fn verdict_line(&self) -> String {
        let judged = self
            .rows
            .iter()
            .filter(|r| r.verdict != CheckVerdict::Note)
            .count();
        if judged == 0 {
            return format!(
                "NOTHING TO CHECK on {}: every row above is a note",
                self.target
            );
        }
        let failed = self.failures();
        if failed.is_empty() {
            return format!("PASS: {judged} checks passed on {}", self.target);
        }
        let each: Vec<String> = failed
            .iter()
            .map(|r| match r.note.as_str() {
                "" => format!(
                    "{} (expected {}, measured {})",
                    r.name, r.expected, r.measured
                ),
                why => format!("{} ({why})", r.name),
            })
            .collect();
        format!(
            "FAIL: {} of {judged} checks failed on {}: {}",
            failed.len(),
            self.target,
            each.join("; ")
        )
    }
}

#[cfg(feature = "json")]
impl CheckReport {
    /// The table (check, expected, measured, tolerance, verdict, note) and the verdict line.
    pub fn text(&self) -> String {
        let mut table = crate::report::table::TextTable::new(&[
            "CHECK",
            "EXPECTED",
            "MEASURED",
            "TOLERANCE",
            "VERDICT",
            "NOTE",
        ]);
        for r in &self.rows {
            table.row(vec![
                r.name.clone(),
                r.expected.clone(),
                r.measured.clone(),
                r.tolerance.clone(),
                r.verdict.label().into(),
                r.note.clone(),
            ]);
        }
        format!("{}{}\n", table.render(), self.verdict_line())
    }

    /// The report as one JSON object: `target`, `passed`, `verdict` (the line) and `checks`,
    /// each with `name`, `expected`, `measured`, `tolerance`, `verdict` (`pass`, `fail`,
    /// `note`) and `note`.
    pub fn json(&self) -> String {
        let checks: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name,
                    "expected": r.expected,
                    "measured": r.measured,
                    "tolerance": r.tolerance,
                    "verdict": r.verdict.label().to_lowercase(),
                    "note": r.note,
                })
            })
            .collect();
        let report = serde_json::json!({
            "target": self.target,
            "passed": self.passed(),
            "verdict": self.verdict_line(),
            "checks": checks,
        });
        format!("{report}\n")
    }
}
