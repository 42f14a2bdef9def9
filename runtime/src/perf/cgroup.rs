//! The cgroup a counter may be limited to (`perf stat -G NAME`): a directory of the cgroup
//! file system that perf uses, found as perf 6.1 finds it (tools/lib/api/fs/cgroup.c,
//! `cgroupfs_find_mountpoint`): a version 1 hierarchy with the `perf_event` controller if
//! one is mounted, the version 2 (unified) hierarchy otherwise. The kernel takes the open
//! directory's descriptor as the `pid` of `perf_event_open` with `PERF_FLAG_PID_CGROUP`,
//! and counts on one CPU only while a task of that cgroup runs there.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The mount point of the cgroup hierarchy perf counts in, from a `/proc/mounts` text: the
/// first v1 hierarchy with `perf_event` among its options, else the first cgroup2.
pub fn mount_point_in(mounts: &str) -> Option<PathBuf> {
    let entries: Vec<(&str, &str, &str)> = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4).then(|| (f[1], f[2], f[3]))
        })
        .collect();
    let v1 = entries
        .iter()
        .find(|(_, fs, opts)| *fs == "cgroup" && opts.split(',').any(|o| o == "perf_event"));
    let v2 = entries.iter().find(|(_, fs, _)| *fs == "cgroup2");
    v1.or(v2).map(|(dir, _, _)| PathBuf::from(dir))
}

/// This machine's cgroup mount point for perf ([`mount_point_in`] of `/proc/mounts`).
pub fn mount_point() -> Option<PathBuf> {
    std::fs::read_to_string("/proc/mounts")
        .ok()
        .and_then(|m| mount_point_in(&m))
}

/// The directory of cgroup `name` (relative to the mount point; a leading `/` is allowed)
/// under `mount`, opened, or an error that says what to do.
pub fn open_under(mount: &Path, name: &str) -> Result<File, String> {
    let relative = name.trim_start_matches('/');
    if relative.split('/').any(|c| c == "..") {
        return Err(format!(
            "cgroup `{name}`: name a cgroup under {} without `..`",
            mount.display()
        ));
    }
    let dir = mount.join(relative);
    match File::open(&dir) {
        Ok(f) if dir.join("cgroup.procs").exists() => Ok(f),
        Ok(_) => Err(format!(
            "cgroup `{name}`: {} is not a cgroup (it has no cgroup.procs); name a directory \
             of the cgroup tree (ls {})",
            dir.display(),
            mount.display()
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(format!(
            "cgroup `{name}`: there is no {}; create it (mkdir {}) and move the tasks to count \
             into it (echo PID > {}/cgroup.procs), or name one that exists (ls {})",
            dir.display(),
            dir.display(),
            dir.display(),
            mount.display()
        )),
        Err(e) => Err(format!(
            "cgroup `{name}`: cannot open {}: {e}; count as root or as the cgroup's owner",
            dir.display()
        )),
    }
}

/// The directory of cgroup `name` on this machine, opened ([`open_under`] the
/// [`mount_point`]).
pub fn open(name: &str) -> Result<File, String> {
    let mount = mount_point().ok_or_else(|| {
        format!(
            "cgroup `{name}`: no cgroup file system with perf events is mounted (neither a \
             cgroup2 nor a cgroup v1 with perf_event in /proc/mounts); mount one (mount -t \
             cgroup2 none /sys/fs/cgroup) or count without -G"
        )
    })?;
    open_under(&mount, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfs_hierarchy_is_v1_perf_event_before_v2() {
        let v2_only = "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                       cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        assert_eq!(
            mount_point_in(v2_only),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let both = "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n\
                    cgroup /sys/fs/cgroup/perf_event cgroup rw,perf_event 0 0\n";
        assert_eq!(
            mount_point_in(both),
            Some(PathBuf::from("/sys/fs/cgroup/perf_event"))
        );
        assert_eq!(mount_point_in("proc /proc proc rw 0 0\n"), None);
    }

    #[test]
    fn a_missing_cgroup_says_how_to_make_it() {
        let dir = tempfile::tempdir().unwrap();
        let e = open_under(dir.path(), "nosuch").unwrap_err();
        assert!(e.contains("mkdir") && e.contains("cgroup.procs"), "{e}");
        let e = open_under(dir.path(), "../etc").unwrap_err();
        assert!(e.contains(".."), "{e}");
        std::fs::create_dir(dir.path().join("plain")).unwrap();
        let e = open_under(dir.path(), "plain").unwrap_err();
        assert!(e.contains("not a cgroup"), "{e}");
    }
}
