//! Writing a file a user names (`-o FILE`) without being led elsewhere: never through a
//! symbolic link (which another user could plant where `pmu`, perhaps as root, writes), and
//! where a file is replaced whole, through a fresh temporary file renamed over it, so a reader
//! never sees half of it.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{Mode, OFlags};

/// Creates or truncates `path` for writing; refused (`ELOOP`) when `path` is a symbolic link.
/// `/dev/stdout` and `/dev/stderr` (and `/dev/fd/1`, `/dev/fd/2`, `/proc/self/fd/1`, `2`),
/// links the system makes to this process's own output, are that output, as perf and the
/// shell take them: written where it goes, never truncated.
pub fn create(path: &Path) -> io::Result<File> {
    if let Some(fd) = own_output(path) {
        return fd.map(File::from);
    }
    let flags =
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::from_raw_mode(0o644)).map_err(|e| {
        if e == rustix::io::Errno::LOOP {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link, and output is never written through one; remove it \
                     or name the file it points at",
                    path.display()
                ),
            )
        } else {
            io::Error::from(e)
        }
    })?;
    Ok(File::from(fd))
}

/// This process's standard output or error, if `path` names one (a copy of its descriptor).
fn own_output(path: &Path) -> Option<io::Result<std::os::fd::OwnedFd>> {
    use std::os::fd::AsFd;
    let name = path.to_str()?;
    let which = ["/dev/fd/", "/proc/self/fd/", "/dev/"]
        .iter()
        .find_map(|dir| name.strip_prefix(dir))?;
    match which {
        "stdout" | "1" => Some(io::stdout().as_fd().try_clone_to_owned()),
        "stderr" | "2" => Some(io::stderr().as_fd().try_clone_to_owned()),
        _ => None,
    }
}

/// Replaces `path` whole with `bytes`: written to a new temporary file beside it (created
/// exclusively, never through a link) and renamed over it; a link at `path` itself is
/// replaced, not followed.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp: PathBuf = path.with_file_name(tmp_name);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(&tmp, flags, Mode::from_raw_mode(0o644))?;
    let written = File::from(fd)
        .write_all(bytes)
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = dir.path().join("out");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        let e = create(&out).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // Replacing renames over the link itself.
        replace(&out, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
        // The system's names of this process's own output are that output.
        for own in ["/dev/stdout", "/dev/stderr", "/dev/fd/2", "/proc/self/fd/1"] {
            assert!(create(Path::new(own)).is_ok(), "{own}");
        }
        // Standard input is no output: its link is refused as any other.
        assert!(create(Path::new("/dev/fd/0")).is_err());
        assert!(!out.symlink_metadata().unwrap().file_type().is_symlink());
        // A planted link where the old temporary name was is not followed either.
        std::os::unix::fs::symlink(&victim, dir.path().join("out.tmp")).unwrap();
        replace(&out, b"newer").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 3, "no temporary file left: {left:?}");
    }
}
