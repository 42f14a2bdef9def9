//! Stage 4: comparing the rendered tree with `generated/` on disk, and replacing it atomically.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::emit::Tree;

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

/// Every file under `dir`, relative, with `/` separators; an absent directory is empty.
fn read_tree(dir: &Path) -> io::Result<Tree> {
    let mut tree = Tree::new();
    if !dir.exists() {
        return Ok(tree);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .expect("walked below dir")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                // A file that is not UTF-8 cannot be ours: it differs from anything we write.
                let content = fs::read(&path)?;
                tree.insert(
                    rel,
                    String::from_utf8(content).unwrap_or_else(|_| "\u{0}binary".into()),
                );
            }
        }
    }
    Ok(tree)
}

/// Differences between the rendered tree and `dir`, sorted by path.
pub fn compare(tree: &Tree, dir: &Path) -> io::Result<Vec<Stale>> {
    let on_disk = read_tree(dir)?;
    let mut stale = Vec::new();
    for (path, content) in tree {
        match on_disk.get(path) {
            None => stale.push(Stale::Missing(path.clone())),
            Some(c) if c != content => stale.push(Stale::Changed(path.clone())),
            Some(_) => {}
        }
    }
    for path in on_disk.keys() {
        if !tree.contains_key(path) {
            stale.push(Stale::Extra(path.clone()));
        }
    }
    stale.sort_by(|a, b| key(a).cmp(key(b)));
    Ok(stale)
}

fn key(s: &Stale) -> &str {
    match s {
        Stale::Missing(p) | Stale::Changed(p) | Stale::Extra(p) => p,
    }
}

/// Replaces `dir` with exactly `tree`, so that no reader ever sees a mixture of old and new
/// files: the new tree is written completely into a sibling directory, then swapped in with
/// renames. If anything fails before the swap, `dir` is untouched and the partial copy is
/// removed.
pub fn write_atomically(tree: &Tree, dir: &Path) -> io::Result<()> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "generated".into());
    let staging = parent.join(format!(".{name}.new-{}", std::process::id()));
    let retired = parent.join(format!(".{name}.old-{}", std::process::id()));

    let result = write_tree(tree, &staging);
    if let Err(e) = result {
        let _ = fs::remove_dir_all(&staging);
        return Err(e);
    }
    if dir.exists() {
        if let Err(e) = fs::rename(dir, &retired) {
            let _ = fs::remove_dir_all(&staging);
            return Err(e);
        }
    }
    if let Err(e) = fs::rename(&staging, dir) {
        // Put the old tree back so the directory is never left missing.
        let _ = fs::rename(&retired, dir);
        let _ = fs::remove_dir_all(&staging);
        return Err(e);
    }
    if retired.exists() {
        fs::remove_dir_all(&retired)?;
    }
    Ok(())
}

fn write_tree(tree: &Tree, root: &Path) -> io::Result<()> {
    if root.exists() {
        fs::remove_dir_all(root)?;
    }
    for (rel, content) in tree {
        let path: PathBuf = root.join(rel);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p)?;
        }
        fs::write(&path, content)?;
    }
    Ok(())
}
