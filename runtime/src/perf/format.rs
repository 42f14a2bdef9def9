//! The text the kernel writes in a PMU's sysfs directory: `format/*` files (`config:0-7`,
//! `config1:0-31`, `config:18`, `config:0-7,21`), `events/*` files (`event=0x00,umask=0x3`)
//! and `cpumask` (`0,18` or `0-3`).

use std::fmt;

/// Which `perf_event_attr` word a format field lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConfigWord {
    /// `config`.
    Config,
    /// `config1`.
    Config1,
    /// `config2`.
    Config2,
}

impl ConfigWord {
    /// The name the kernel uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigWord::Config => "config",
            ConfigWord::Config1 => "config1",
            ConfigWord::Config2 => "config2",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One field of a PMU's format: its name and where its bits go. A value's low bits fill the
/// first range, the next bits the second (`config:0-7,21`: value bit 8 goes to config bit 21).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatField {
    /// The field's name (the file name: `event`, `umask`, `filter_tid`).
    pub name: String,
    /// The word it lives in.
    pub word: ConfigWord,
    /// Inclusive bit ranges `(lo, hi)`, in the order the file gives them.
    pub ranges: Vec<(u32, u32)>,
}

/// A format file that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFormat {
    /// The text.
    pub text: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

impl fmt::Display for BadFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.text, self.problem)
    }
}

impl FormatField {
    /// Parses a format file's contents as the kernel writes them: `config:0-7`, `config1:0-31`,
    /// `config:18`, `config:0-7,21`, `config2:0-63` (a trailing newline is fine).
    pub fn parse(name: &str, text: &str) -> Result<Self, BadFormat> {
        let bad = |problem| BadFormat {
            text: text.trim().to_string(),
            problem,
        };
        let t = text.trim();
        let (word, bits) = t
            .split_once(':')
            .ok_or_else(|| bad("expected WORD:BITS, e.g. config:0-7"))?;
        let word = match word {
            "config" => ConfigWord::Config,
            "config1" => ConfigWord::Config1,
            "config2" => ConfigWord::Config2,
            _ => return Err(bad("the word must be config, config1 or config2")),
        };
        let mut ranges = Vec::new();
        let mut width = 0;
        for part in bits.split(',') {
            let num = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .map_err(|_| bad("a bit is not a number"))
            };
            let (lo, hi) = match part.split_once('-') {
                Some((lo, hi)) => (num(lo)?, num(hi)?),
                None => {
                    let b = num(part)?;
                    (b, b)
                }
            };
            if lo > hi || hi > 63 {
                return Err(bad("a range must be lo-hi with lo <= hi <= 63"));
            }
            width += hi - lo + 1;
            ranges.push((lo, hi));
        }
        if width > 64 {
            return Err(bad("the ranges cover more than 64 bits"));
        }
        Ok(FormatField {
            name: name.to_string(),
            word,
            ranges,
        })
    }

    /// How many value bits the field holds.
    pub fn width(&self) -> u32 {
        self.ranges.iter().map(|(lo, hi)| hi - lo + 1).sum()
    }

    /// The largest value the field holds.
    pub fn max(&self) -> u64 {
        mask(self.width())
    }

    /// The bits of its word the field covers.
    pub fn word_mask(&self) -> u64 {
        self.ranges
            .iter()
            .fold(0, |m, &(lo, hi)| m | (mask(hi - lo + 1) << lo))
    }

    /// Spreads `value` over the field's ranges into `words` (`[config, config1, config2]`).
    /// `None` if the value does not fit.
    pub fn place(&self, value: u64, words: &mut [u64; 3]) -> Option<()> {
        if value > self.max() {
            return None;
        }
        let mut rest = value;
        let w = &mut words[self.word.index()];
        for &(lo, hi) in &self.ranges {
            let n = hi - lo + 1;
            *w = (*w & !(mask(n) << lo)) | ((rest & mask(n)) << lo);
            rest = if n >= 64 { 0 } else { rest >> n };
        }
        Some(())
    }

    /// Gathers the field's value back out of `words`.
    pub fn extract(&self, words: &[u64; 3]) -> u64 {
        let w = words[self.word.index()];
        let mut value = 0;
        let mut shift = 0;
        for &(lo, hi) in &self.ranges {
            let n = hi - lo + 1;
            value |= ((w >> lo) & mask(n)) << shift;
            shift += n;
        }
        value
    }

    /// The format as the kernel writes it (`config:0-7,21`).
    pub fn spec(&self) -> String {
        let ranges: Vec<String> = self
            .ranges
            .iter()
            .map(|&(lo, hi)| {
                if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}-{hi}")
                }
            })
            .collect();
        format!("{}:{}", self.word.as_str(), ranges.join(","))
    }
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// Parses an event's terms as `events/*` files and perf event strings write them:
/// `event=0x00,umask=0x3`, `event=0x3c`, a bare `edge` meaning `edge=1`.
pub fn parse_terms(text: &str) -> Result<Vec<(String, u64)>, BadFormat> {
    let bad = |problem| BadFormat {
        text: text.trim().to_string(),
        problem,
    };
    let mut terms = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = match part.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (part.trim(), "1"),
        };
        let value = if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            u64::from_str_radix(h, 16)
        } else {
            v.parse::<u64>()
        }
        .map_err(|_| bad("a value is not a number"))?;
        if k.is_empty() {
            return Err(bad("a term has no name"));
        }
        terms.push((k.to_string(), value));
    }
    Ok(terms)
}

/// Parses a CPU list as `cpumask` files write it: `0`, `0,18`, `0-3,8-11`.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, BadFormat> {
    let bad = |problem| BadFormat {
        text: text.trim().to_string(),
        problem,
    };
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| bad("a CPU is not a number"))
        };
        match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (num(lo)?, num(hi)?);
                if lo > hi {
                    return Err(bad("a CPU range runs backwards"));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(num(part)?),
        }
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_shape_the_kernel_writes() {
        let f = FormatField::parse("event", "config:0-7\n").unwrap();
        assert_eq!(
            (f.word, f.ranges.clone(), f.width()),
            (ConfigWord::Config, vec![(0, 7)], 8)
        );
        let f = FormatField::parse("edge", "config:18").unwrap();
        assert_eq!((f.ranges.clone(), f.max()), (vec![(18, 18)], 1));
        let f = FormatField::parse("filter_tid", "config1:0-4").unwrap();
        assert_eq!(f.word, ConfigWord::Config1);
        let f = FormatField::parse("mask0", "config2:0-31").unwrap();
        assert_eq!(f.word, ConfigWord::Config2);
        let f = FormatField::parse("event", "config:0-63").unwrap();
        assert_eq!(f.max(), u64::MAX);
        for bad in [
            "config:7-0",
            "config3:0",
            "cfg:1",
            "config:64",
            "config:a-b",
            "config",
        ] {
            assert!(FormatField::parse("x", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn split_ranges_carry_the_high_value_bits() {
        // QPI's event: value bit 8 (the extension) goes to config bit 21.
        let f = FormatField::parse("event", "config:0-7,21").unwrap();
        let mut w = [0; 3];
        f.place(0x102, &mut w).unwrap();
        assert_eq!(w[0], 0x02 | 1 << 21);
        assert_eq!(f.extract(&w), 0x102);
        assert_eq!(f.spec(), "config:0-7,21");
        assert!(f.place(0x200, &mut w).is_none());
        let f = FormatField::parse("umask", "config:8-15,32-43,45-55").unwrap();
        let mut w = [0; 3];
        f.place(0x7fff_ffff, &mut w).unwrap();
        assert_eq!(f.extract(&w), 0x7fff_ffff);
        assert_eq!(w[0] & (1 << 44), 0, "the gap stays clear");
    }

    #[test]
    fn terms_and_cpu_lists() {
        assert_eq!(
            parse_terms("event=0x00,umask=3,edge\n").unwrap(),
            [("event".into(), 0), ("umask".into(), 3), ("edge".into(), 1)]
        );
        assert!(parse_terms("event=zz").is_err());
        assert_eq!(parse_cpu_list("0,18\n").unwrap(), [0, 18]);
        assert_eq!(parse_cpu_list("0-2,8").unwrap(), [0, 1, 2, 8]);
        assert!(parse_cpu_list("3-1").is_err());
    }
}
