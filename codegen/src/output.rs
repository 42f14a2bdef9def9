//! Stage 4: comparing the rendered files with `generated/` on disk, and replacing it
//! atomically.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::emit::Sink;

/// How a file on disk differs from what the spec produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// The spec produces it, but it is not on disk.
    Missing(String),
    /// On disk with other content.
    Changed(String),
    /// On disk, but the spec does not produce it.
    Extra(String),
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stale::Missing(p) => write!(f, "missing: {p}"),
            Stale::Changed(p) => write!(f, "out of date: {p}"),
            Stale::Extra(p) => write!(f, "not produced by the spec: {p}"),
        }
    }
}

fn key(s: &Stale) -> &str {
    match s {
        Stale::Missing(p) | Stale::Changed(p) | Stale::Extra(p) => p,
    }
}

/// A sink that compares each file with the one on disk as it arrives and, when writing,
/// builds the new tree in a staging directory beside `dir`, so nothing but the current file is
/// held in memory. [`Staged::finish`] swaps the staging directory in, if anything changed.
pub struct Staged {
    dir: PathBuf,
    staging: PathBuf,
    retired: PathBuf,
    write: bool,
    /// The staging directory exists and holds every file produced so far.
    staging_started: bool,
    produced: HashSet<String>,
    /// Files produced so far that matched the disk (copied into staging once a change shows).
    unchanged: Vec<String>,
    /// Directories already created in staging (one `mkdir` each, not one per file).
    made_dirs: HashSet<PathBuf>,
    changed: Vec<Stale>,
}

impl Staged {
    /// A sink for `dir`; with `write` false it only compares (`--check`).
    pub fn new(dir: &Path, write: bool) -> Self {
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "generated".into());
        Self {
            dir: dir.to_path_buf(),
            staging: parent.join(format!(".{name}.new-{}", std::process::id())),
            retired: parent.join(format!(".{name}.old-{}", std::process::id())),
            write,
            staging_started: false,
            produced: HashSet::new(),
            unchanged: Vec::new(),
            made_dirs: HashSet::new(),
            changed: Vec::new(),
        }
    }

    fn put_staged(&mut self, rel: &str, content: &[u8]) -> io::Result<()> {
        let path = self.staging.join(rel);
        if let Some(p) = path.parent() {
            if !self.made_dirs.contains(p) {
                fs::create_dir_all(p)?;
                self.made_dirs.insert(p.to_path_buf());
            }
        }
        fs::write(path, content)
    }

    /// On the first difference: start the staging tree with the files that matched so far.
    fn start_staging(&mut self) -> io::Result<()> {
        if self.staging.exists() {
            fs::remove_dir_all(&self.staging)?;
        }
        fs::create_dir_all(&self.staging)?;
        self.made_dirs.clear();
        for rel in std::mem::take(&mut self.unchanged) {
            let content = fs::read(self.dir.join(&rel))?;
            self.put_staged(&rel, &content)?;
        }
        self.staging_started = true;
        Ok(())
    }

    /// Every difference found, sorted by path; with `write`, the new tree replaces `dir`
    /// (if anything differs). On an error the staging directory is removed and `dir` is
    /// untouched.
    pub fn finish(mut self) -> io::Result<Vec<Stale>> {
        let result = self.finish_inner();
        if result.is_err() || !self.write {
            let _ = fs::remove_dir_all(&self.staging);
        }
        result
    }

    /// Drops a tree that was not finished: removes the staging directory and leaves `dir`
    /// untouched.
    pub fn abandon(self) {
        let _ = fs::remove_dir_all(&self.staging);
    }

    fn finish_inner(&mut self) -> io::Result<Vec<Stale>> {
        for path in read_tree_paths(&self.dir)? {
            if !self.produced.contains(&path) {
                self.changed.push(Stale::Extra(path));
            }
        }
        self.changed.sort_by(|a, b| key(a).cmp(key(b)));
        if self.write && !self.changed.is_empty() {
            if !self.staging_started {
                // Only extra files differ: the staging tree is the unchanged files.
                self.start_staging()?;
            }
            swap_in(&self.staging, &self.dir, &self.retired)?;
        }
        Ok(std::mem::take(&mut self.changed))
    }
}

impl Sink for Staged {
    fn put(&mut self, path: String, content: String) -> io::Result<()> {
        let on_disk = fs::read(self.dir.join(&path)).ok();
        let same = on_disk.as_deref() == Some(content.as_bytes());
        if !same {
            self.changed.push(if on_disk.is_some() {
                Stale::Changed(path.clone())
            } else {
                Stale::Missing(path.clone())
            });
        }
        if self.write {
            if self.staging_started {
                self.put_staged(&path, content.as_bytes())?;
            } else if same {
                self.unchanged.push(path.clone());
            } else {
                self.start_staging()?;
                self.put_staged(&path, content.as_bytes())?;
            }
        }
        self.produced.insert(path);
        Ok(())
    }
}

/// Every file path below `dir`, relative, with `/` separators.
fn read_tree_paths(dir: &Path) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(
                    path.strip_prefix(dir)
                        .expect("walked below dir")
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/"),
                );
            }
        }
    }
    Ok(out)
}

/// Replaces `dir` with `staging` by two renames, putting the old tree back if the second
/// fails, so `dir` is never left missing or mixed.
fn swap_in(staging: &Path, dir: &Path, retired: &Path) -> io::Result<()> {
    if dir.exists() {
        fs::rename(dir, retired)?;
    }
    if let Err(e) = fs::rename(staging, dir) {
        let _ = fs::rename(retired, dir);
        return Err(e);
    }
    if retired.exists() {
        fs::remove_dir_all(retired)?;
    }
    Ok(())
}
