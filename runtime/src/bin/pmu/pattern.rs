//! `pmu list PATTERN`: which names and descriptions a pattern selects, as `perf list PATTERN`
//! reads one: case-insensitive, `*` and `?` as in a shell glob, and a pattern without them
//! matches anywhere in the text (`cas` finds `UNC_M_CAS_COUNT.RD`).

/// A pattern as the user typed it, lowercased.
#[derive(Debug, Clone)]
pub struct Pattern {
    glob: Vec<char>,
}

impl Pattern {
    /// `text`, as a glob if it has `*` or `?`, otherwise as a substring (`*text*`).
    pub fn new(text: &str) -> Self {
        let lower = text.to_lowercase();
        let glob = if lower.contains(['*', '?']) {
            lower
        } else {
            format!("*{lower}*")
        };
        Pattern {
            glob: glob.chars().collect(),
        }
    }

    /// Whether any of `texts` matches.
    pub fn matches_any(&self, texts: &[&str]) -> bool {
        texts.iter().any(|t| {
            let t: Vec<char> = t.to_lowercase().chars().collect();
            glob(&self.glob, &t)
        })
    }
}

/// Glob matching with `*` (any run) and `?` (any one character), iteratively: the last `*`
/// seen is retried one character further on a mismatch, so it is linear in practice and
/// never recurses.
fn glob(pattern: &[char], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    #[test]
    fn substrings_and_globs() {
        let cas = Pattern::new("cas");
        assert!(cas.matches_any(&["UNC_M_CAS_COUNT.RD"]));
        assert!(!cas.matches_any(&["UNC_M_ACT_COUNT"]));
        assert!(Pattern::new("unc_m_*.rd").matches_any(&["UNC_M_CAS_COUNT.RD"]));
        assert!(!Pattern::new("unc_m_*.wr").matches_any(&["UNC_M_CAS_COUNT.RD"]));
        assert!(Pattern::new("C?_MSR*").matches_any(&["C3_MSR_PMON_CTL0"]));
        assert!(Pattern::new("*").matches_any(&[""]));
        assert!(!Pattern::new("x").matches_any(&[]));
    }
}
