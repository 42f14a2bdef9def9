//! Reading files a user names (tables, configurations, event lists, lock files), bounded in
//! size and in time.
//!
//! A name on the command line can be anything: `/dev/zero` never ends, a 1 GiB file is
//! mostly not what was meant, and a FIFO that no one writes blocks a plain `read` forever.
//! [`BoundedFile`] opens without blocking (`O_NONBLOCK`, so opening a FIFO does not wait for a
//! writer), waits for bytes with `poll(2)` until one deadline for the whole read, and reads
//! at most what the caller asks: never more, whatever the file's size. `--table <(cmd)` (a
//! pipe that is written) still works.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{FileType, Mode, OFlags};

/// The largest event list (Intel's perfmon JSON) read: the largest of Intel's is a few MiB.
pub const MAX_EVENT_LIST_BYTES: u64 = 64 << 20;

/// How long a file a user names may take to deliver what is read of it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a bounded read read nothing usable.
#[derive(Debug)]
pub enum BoundedError {
    /// Opening or reading failed.
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file holds more than `limit` bytes (its size says so, or `limit + 1` were read).
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The most accepted.
        limit: u64,
    },
    /// No more bytes came within the time (a pipe or a device no one writes).
    TimedOut {
        /// The file.
        path: PathBuf,
        /// The time waited.
        after: Duration,
        /// The bytes that had come.
        read: u64,
    },
    /// The file is not UTF-8 text.
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
}

impl fmt::Display for BoundedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundedError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BoundedError::TooLarge { path, limit } => write!(
                f,
                "{}: it holds more than {limit} bytes, the most read of such a file; give the \
                 file itself, not a device or a larger file holding it",
                path.display()
            ),
            BoundedError::TimedOut { path, after, read } => write!(
                f,
                "{}: it delivered {read} bytes and then nothing for {} s (a pipe or a device \
                 that no one writes?); give a regular file",
                path.display(),
                after.as_secs_f64()
            ),
            BoundedError::NotUtf8 { path } => write!(f, "{}: it is not UTF-8 text", path.display()),
        }
    }
}

impl std::error::Error for BoundedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BoundedError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A file opened for bounded reading: every read ends by one deadline.
#[derive(Debug)]
pub struct BoundedFile {
    file: File,
    path: PathBuf,
    /// The size, for a regular file.
    size: Option<u64>,
    deadline: Instant,
    timeout: Duration,
    consumed: u64,
}

impl BoundedFile {
    /// Opens `path` (without waiting for a FIFO's writer); every read must end within
    /// `timeout` of now.
    pub fn open(path: &Path, timeout: Duration) -> Result<Self, BoundedError> {
        let io = |e: io::Error| BoundedError::Io {
            path: path.to_path_buf(),
            source: e,
        };
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| io(e.into()))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| io(e.into()))?;
        let kind = FileType::from_raw_mode(stat.st_mode);
        if kind == FileType::Directory {
            return Err(io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a directory",
            )));
        }
        let size = (kind == FileType::RegularFile).then(|| stat.st_size.max(0) as u64);
        Ok(Self {
            file: File::from(fd),
            path: path.to_path_buf(),
            size,
            deadline: Instant::now() + timeout,
            timeout,
            consumed: 0,
        })
    }

    /// The bytes read so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The path it was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads up to `n` more bytes: fewer only where the file ends.
    pub fn read_up_to(&mut self, n: u64) -> Result<Vec<u8>, BoundedError> {
        let mut out = Vec::with_capacity(n.min(1 << 16) as usize);
        let mut chunk = [0u8; 8192];
        while (out.len() as u64) < n {
            if !self.wait_readable()? {
                break;
            }
            let want = (n - out.len() as u64).min(chunk.len() as u64) as usize;
            match self.file.read(&mut chunk[..want]) {
                Ok(0) => break,
                Ok(got) => {
                    out.extend_from_slice(&chunk[..got]);
                    self.consumed += got as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(BoundedError::Io {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
        Ok(out)
    }

    /// Reads the whole file, refusing it when it holds more than `limit` bytes: by its size
    /// before reading, or after `limit + 1` bytes.
    pub fn read_all(&mut self, limit: u64) -> Result<Vec<u8>, BoundedError> {
        let too_large = |path: &Path| BoundedError::TooLarge {
            path: path.to_path_buf(),
            limit,
        };
        if self.size.is_some_and(|s| s > limit) {
            return Err(too_large(&self.path));
        }
        let bytes = self.read_up_to(limit.saturating_add(1))?;
        if bytes.len() as u64 > limit {
            return Err(too_large(&self.path));
        }
        Ok(bytes)
    }

    /// Waits until the file can be read (`true`) or has ended (`true`: the read says so);
    /// an error when the deadline passes first.
    fn wait_readable(&self) -> Result<bool, BoundedError> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(BoundedError::TimedOut {
                    path: self.path.clone(),
                    after: self.timeout,
                    read: self.consumed,
                });
            }
            let timeout = Timespec {
                tv_sec: left.as_secs() as i64,
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let mut fds = [PollFd::new(&self.file, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => {}
                Ok(_) => return Ok(true),
                Err(e) if e == rustix::io::Errno::INTR => {}
                Err(e) => {
                    return Err(BoundedError::Io {
                        path: self.path.clone(),
                        source: e.into(),
                    })
                }
            }
        }
    }
}

/// The whole of `path`, at most `limit` bytes, within [`DEFAULT_TIMEOUT`].
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, BoundedError> {
    BoundedFile::open(path, DEFAULT_TIMEOUT)?.read_all(limit)
}

/// The whole of `path` as UTF-8 text, at most `limit` bytes, within [`DEFAULT_TIMEOUT`].
pub fn read_text(path: &Path, limit: u64) -> Result<String, BoundedError> {
    String::from_utf8(read(path, limit)?).map_err(|_| BoundedError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_that_never_ends_is_read_to_the_bound_only() {
        let mut f = BoundedFile::open(Path::new("/dev/zero"), DEFAULT_TIMEOUT).unwrap();
        let e = f.read_all(4096).unwrap_err();
        assert!(
            matches!(e, BoundedError::TooLarge { limit: 4096, .. }),
            "{e}"
        );
        assert_eq!(f.consumed(), 4097);
        let mut f = BoundedFile::open(Path::new("/dev/zero"), DEFAULT_TIMEOUT).unwrap();
        assert_eq!(f.read_up_to(24).unwrap(), vec![0; 24]);
        assert_eq!(f.consumed(), 24);
    }

    #[test]
    fn a_large_file_is_refused_by_its_size_before_any_byte_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        File::create(&path).unwrap().set_len(1 << 30).unwrap();
        let mut f = BoundedFile::open(&path, DEFAULT_TIMEOUT).unwrap();
        assert!(matches!(
            f.read_all(1 << 20),
            Err(BoundedError::TooLarge { .. })
        ));
        assert_eq!(f.consumed(), 0);
        // Its first bytes can still be read, and no more.
        assert_eq!(f.read_up_to(100).unwrap().len(), 100);
        assert_eq!(f.consumed(), 100);
    }

    #[test]
    fn a_fifo_that_no_one_writes_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let since = Instant::now();
        let mut f = BoundedFile::open(&path, Duration::from_millis(300)).unwrap();
        let e = f.read_all(100).unwrap_err();
        assert!(matches!(e, BoundedError::TimedOut { read: 0, .. }), "{e}");
        assert!(since.elapsed() < Duration::from_secs(5));
        assert!(e.to_string().contains("nothing for 0.3 s"), "{e}");
    }
}
