//! One way to read and one way to write a file a user names, for every binary of the
//! workspace and the Python package.
//!
//! Why one module: the rule "read only regular files, bounded; write only regular files,
//! atomically" was applied reader by reader, and every reader written after it forgot part of
//! it — a FIFO named as a table hung the engine for good, `/dev/zero` read as a corpus chunk
//! ran the machine out of memory, a device named as `--out` was replaced by a regular file.
//! Here the rule is written once:
//!
//! * [`open`], [`read`], [`read_to_string`]: the path must name a regular file (a symbolic
//!   link to one is fine). It is opened without blocking — opening a FIFO that has no writer
//!   otherwise waits forever — and checked on the open descriptor, so nothing can swap the
//!   file between the check and the read. Whole-file reads take a byte limit and refuse a
//!   larger file before reading it (and a file that grows while it is read).
//! * [`check_target`], [`write_atomic`], [`write_atomic_with`]: a file is replaced whole or
//!   not at all (a temporary file in the same directory, flushed, renamed over the target),
//!   and only a regular file (or nothing) is replaced: a device, a FIFO or a directory is
//!   refused; a symbolic link is written through (its target replaced, the link kept).
//!   [`check_target`] is the same refusal for a command to make before hours of work.
//! * [`open_append`]: logs written a record at a time, to a regular file only.
//! * [`mem_available_mb`]: the memory this process may still take (MemAvailable, lowered to
//!   the cgroup's limit), for the commands that size a table to the machine.
//!
//! A test of the `corpus` crate scans the sources for file access that bypasses this crate.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// Why a file could not be read or written. Each message names the file and the reason on
/// one line, for the one-line error rule of every binary.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The operating system refused.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A device, a FIFO, a socket or a directory where a regular file was expected.
    #[error("{}: not a regular file", path.display())]
    NotRegular { path: PathBuf },
    /// Larger than the reader accepts.
    #[error("{}: {size} bytes, more than the {limit} this file may have", path.display())]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// An existing target that is not a regular file.
    #[error("{}: exists and is not a regular file; refusing to replace it", path.display())]
    NotReplaceable { path: PathBuf },
}

impl FileError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        FileError::Io {
            path: path.to_owned(),
            source,
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            FileError::Io { path, .. }
            | FileError::NotRegular { path }
            | FileError::TooLarge { path, .. }
            | FileError::NotReplaceable { path } => path,
        }
    }

    /// The error as an `std::io::Error` with the same message but without the path, for
    /// callers whose own error type names the file already.
    pub fn into_io(self) -> std::io::Error {
        match self {
            FileError::Io { source, .. } => source,
            FileError::NotRegular { .. } => std::io::Error::other("not a regular file"),
            FileError::TooLarge { size, limit, .. } => std::io::Error::other(format!(
                "{size} bytes, more than the {limit} this file may have"
            )),
            FileError::NotReplaceable { .. } => {
                std::io::Error::other("exists and is not a regular file; refusing to replace it")
            }
        }
    }
}

/// Open a regular file for reading. The open does not block (a FIFO with no writer would
/// otherwise hang it) and the file type is checked on the descriptor that was opened; the
/// returned file reads normally (blocking).
pub fn open(path: &Path) -> Result<File, FileError> {
    let file = open_nonblocking(path)?;
    let meta = file.metadata().map_err(|e| FileError::io(path, e))?;
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            path: path.to_owned(),
        });
    }
    set_blocking(&file).map_err(|e| FileError::io(path, e))?;
    Ok(file)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> Result<File, FileError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| FileError::io(path, e))
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> Result<File, FileError> {
    File::open(path).map_err(|e| FileError::io(path, e))
}

/// Clear `O_NONBLOCK` on a regular file's descriptor (it changes nothing for a regular file
/// on Linux, but a reader handed the file may rely on ordinary semantics elsewhere).
#[cfg(unix)]
fn set_blocking(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd as _;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns and keeps open; F_GETFL and
    // F_SETFL read and write only the descriptor's status flags.
    #[allow(unsafe_code)]
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn set_blocking(_: &File) -> std::io::Result<()> {
    Ok(())
}

/// A whole regular file of at most `limit` bytes.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let file = open(path)?;
    let size = file.metadata().map_err(|e| FileError::io(path, e))?.len();
    let too_large = |size| FileError::TooLarge {
        path: path.to_owned(),
        size,
        limit,
    };
    if size > limit {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // One byte past the limit tells a file that grew while it was read.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// A whole regular text file (UTF-8) of at most `limit` bytes.
pub fn read_to_string(path: &Path, limit: u64) -> Result<String, FileError> {
    let bytes = read(path, limit)?;
    String::from_utf8(bytes).map_err(|_| {
        FileError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
        )
    })
}

/// Can `path` be replaced by [`write_atomic`]? It must be absent or a regular file (a
/// symbolic link is followed to its target), and the directory it would be written in must
/// exist. A command that writes its result at the end checks this first, so that a bad
/// `--out` is refused before the work, not after it.
pub fn check_target(path: &Path) -> Result<(), FileError> {
    let target = writable_target(path)?;
    let dir = parent_dir(&target);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(FileError::io(
            path,
            std::io::Error::other(format!("{} is not a directory", dir.display())),
        )),
        Err(e) => Err(FileError::io(dir, e)),
    }
}

/// Replace `path` with `bytes` so that readers see either the old file or the whole new one
/// (see the module notes for what is refused).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// [`write_atomic`] with a writer callback, for large files written in pieces.
///
/// The new file gets the replaced file's permissions, or those of a plain `create` (0666
/// less the umask) when there was none: a temporary file is private (0600), and a table or
/// report renamed from it would otherwise be unreadable to everyone else.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<(), FileError> {
    let target = writable_target(path)?;
    let dir = parent_dir(&target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let existing = std::fs::metadata(&target).ok().map(|m| m.permissions());
    let (tmp_path, mut tmp) = create_temp(dir, &name).map_err(|e| FileError::io(path, e))?;
    // Remove the temporary file on every way out but the rename.
    let result = (|| {
        if let Some(perms) = existing {
            tmp.set_permissions(perms)?;
        }
        write(&mut tmp)?;
        tmp.sync_all()?;
        drop(tmp);
        std::fs::rename(&tmp_path, &target)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp_path);
        return Err(FileError::io(path, e));
    }
    Ok(())
}

/// A new, uniquely named file `.NAME.PID.N.tmp` in `dir`, created exclusively (two processes
/// saving at once never share one), with the permissions of a plain `create` (0666 less the
/// umask).
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let p = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The path a replacing write renames onto: `path` itself, or the file a symbolic link points
/// at; an existing target that is not a regular file is refused.
fn writable_target(path: &Path) -> Result<PathBuf, FileError> {
    let mut path = path.to_owned();
    // A chain of links ends somewhere; a loop is the kernel's ELOOP after 40.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(FileError::io(&path, e)),
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&path).map_err(|e| FileError::io(&path, e))?;
                path = match path.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(m) if m.is_file() => return Ok(path),
            Ok(_) => return Err(FileError::NotReplaceable { path }),
        }
    }
    Err(FileError::io(
        &path,
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

/// Open `path` for appending (creating it and its directory): logs written a record at a
/// time. An existing file must be a regular one (appending to a FIFO blocks, to a device
/// writes somewhere else). Write each record with one `write_all` of the whole line, so that
/// concurrent appenders interleave whole lines.
pub fn open_append(path: &Path) -> Result<File, FileError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| FileError::io(dir, e))?;
    }
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(FileError::NotRegular {
                path: path.to_owned(),
            });
        }
        _ => {}
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| FileError::io(path, e))
}

/// Open `path` for appending where a user may name a character device or a pipe as well as
/// a regular file (`arbiter --pgn /dev/null`, or a pipe to another program): a regular file
/// is created with its directory as by [`open_append`]; a directory, a socket or a block
/// device is refused. Opening a FIFO blocks until a reader comes, so a caller that accepts
/// FIFOs opens them on a thread it can give up on.
pub fn open_append_stream(path: &Path) -> Result<File, FileError> {
    use std::os::unix::fs::FileTypeExt as _;
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(m) if m.file_type().is_char_device() || m.file_type().is_fifo() => {
            return std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| FileError::io(path, e));
        }
        Ok(_) => {
            return Err(FileError::NotRegular {
                path: path.to_owned(),
            });
        }
        Err(_) => {}
    }
    open_append(path)
}

/// Why [`lock`] could not take a lock.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(transparent)]
    File(#[from] FileError),
    /// Another process holds it.
    #[error("{}: locked by another run (is one still going?)", path.display())]
    Held { path: PathBuf },
}

/// Take an exclusive lock on `path` (created if absent; a regular file only) for as long as
/// the returned file is open: a second process that tries is refused at once, so two runs of
/// one resumable job cannot both write its files. The kernel drops the lock when the process
/// ends, however it ends, so a killed run leaves nothing to clean up.
pub fn lock(path: &Path) -> Result<File, LockError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(FileError::NotRegular {
                path: path.to_owned(),
            }
            .into());
        }
        _ => {}
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| FileError::io(path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Held {
            path: path.to_owned(),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(FileError::io(path, e).into()),
    }
}

/// Memory this process may still take, in MB: MemAvailable from /proc/meminfo, lowered to
/// the memory cgroup's limit less its usage where one is set (in a container /proc/meminfo
/// shows the host, and going over the cgroup's limit means its OOM killer, not a refused
/// allocation). `None` where neither can be read (not Linux): then only the allocator
/// decides.
pub fn mem_available_mb() -> Option<usize> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let meminfo = read("/proc/meminfo").and_then(|t| meminfo_available_mb(&t));
    let number = |p: &str| -> Option<u64> { read(p)?.trim().parse().ok() };
    // cgroup v2, then v1 (an unlimited v2 says "max", which does not parse).
    let cgroup = [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ]
    .into_iter()
    .find_map(|(limit, usage)| {
        Some((number(limit)?.saturating_sub(number(usage)?) >> 20) as usize)
    });
    match (meminfo, cgroup) {
        (Some(m), Some(c)) => Some(m.min(c)),
        (m, c) => m.or(c),
    }
}

/// MemAvailable of a /proc/meminfo text, MB.
fn meminfo_available_mb(text: &str) -> Option<usize> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_regular_files_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, b"hello").unwrap();
        assert_eq!(read(&p, 5).unwrap(), b"hello");
        assert_eq!(read_to_string(&p, 100).unwrap(), "hello");
        let e = read(&p, 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: 5 bytes, more than the 4 this file may have",
                p.display()
            )
        );
        // A symbolic link to a regular file reads it.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("a.txt", &link).unwrap();
        assert_eq!(read(&link, 5).unwrap(), b"hello");
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(
            read_to_string(&p, 10)
                .unwrap_err()
                .to_string()
                .ends_with("not UTF-8 text")
        );
    }

    /// A FIFO with no writer, a device and a directory are refused at once: none blocks and
    /// none is read to the end of memory.
    #[test]
    fn fifos_devices_and_directories_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert_eq!(rc, 0);
        for p in [fifo.as_path(), Path::new("/dev/zero"), dir.path()] {
            let e = read(p, 1 << 20).unwrap_err();
            assert!(
                matches!(e, FileError::NotRegular { .. }),
                "{}: {e}",
                p.display()
            );
            assert_eq!(
                e.to_string(),
                format!("{}: not a regular file", p.display())
            );
        }
        assert!(matches!(
            open(Path::new("/dev/null")),
            Err(FileError::NotRegular { .. })
        ));
        let missing = dir.path().join("missing");
        assert!(matches!(read(&missing, 1), Err(FileError::Io { .. })));
    }

    #[test]
    fn atomic_writes_replace_files_and_follow_links_but_refuse_other_things() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        write_atomic(&p, b"first version, long").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temporary file left"
        );
        // Through a link: the target replaced, the link kept.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("x.json", &link).unwrap();
        write_atomic(&link, b"third").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"third");
        // A device, a directory: refused, untouched.
        for bad in [Path::new("/dev/null"), dir.path()] {
            let e = write_atomic(bad, b"x").unwrap_err();
            assert!(matches!(e, FileError::NotReplaceable { .. }), "{e}");
            assert!(check_target(bad).is_err());
        }
        {
            use std::os::unix::fs::FileTypeExt as _;
            let dev = std::fs::metadata("/dev/null").unwrap().file_type();
            assert!(dev.is_char_device(), "/dev/null was replaced");
        }
        // A missing directory is refused before any work.
        let e = check_target(&dir.path().join("no/such/dir/out.bin")).unwrap_err();
        assert!(e.to_string().contains("no/such/dir"), "{e}");
        check_target(&dir.path().join("new.bin")).unwrap();
    }

    #[test]
    fn atomic_writes_give_ordinary_permissions_and_keep_existing_ones() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        // What a plain create gives under this process's umask.
        let plain = dir.path().join("plain.txt");
        std::fs::write(&plain, b"x").unwrap();
        let fresh = dir.path().join("fresh.txt");
        write_atomic(&fresh, b"x").unwrap();
        assert_eq!(mode(&fresh), mode(&plain));
        // A replaced file keeps its mode, even one the umask would not give.
        let kept = dir.path().join("kept.txt");
        std::fs::write(&kept, b"old").unwrap();
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&kept, b"new").unwrap();
        assert_eq!(mode(&kept), 0o640);
    }

    #[test]
    fn concurrent_atomic_writes_never_mix_and_failures_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.txt");
        std::thread::scope(|s| {
            for t in 0..4u8 {
                let p = &p;
                s.spawn(move || {
                    for _ in 0..50 {
                        write_atomic(p, &[b'a' + t; 4096]).unwrap();
                    }
                });
            }
        });
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len(), 4096);
        assert!(bytes.iter().all(|&b| b == bytes[0]));
        // A writer that fails leaves the old file and no temporary file.
        let e = write_atomic_with(&p, |_| Err(std::io::Error::other("disk on fire"))).unwrap_err();
        assert!(e.to_string().ends_with("disk on fire"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn appends_only_to_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("logs/a.log");
        open_append(&p).unwrap().write_all(b"one\n").unwrap();
        open_append(&p).unwrap().write_all(b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one\ntwo\n");
        assert!(matches!(
            open_append(Path::new("/dev/null")),
            Err(FileError::NotRegular { .. })
        ));
    }

    #[test]
    fn streams_may_be_devices_but_not_directories() {
        let dir = tempfile::tempdir().unwrap();
        open_append_stream(Path::new("/dev/null"))
            .unwrap()
            .write_all(b"x")
            .unwrap();
        assert!(matches!(
            open_append_stream(dir.path()),
            Err(FileError::NotRegular { .. })
        ));
        let p = dir.path().join("new/out.pgn");
        open_append_stream(&p).unwrap().write_all(b"g\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"g\n");
    }

    #[test]
    fn a_lock_is_held_until_its_file_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.lock");
        let held = lock(&p).unwrap();
        let e = lock(&p).unwrap_err();
        assert!(matches!(e, LockError::Held { .. }), "{e}");
        assert!(e.to_string().contains("locked by another run"), "{e}");
        drop(held);
        lock(&p).unwrap();
        assert!(matches!(
            lock(Path::new("/dev/null")),
            Err(LockError::File(_))
        ));
    }

    #[test]
    fn mem_available_reads_meminfo_in_mb() {
        let text = "MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   20480000 kB\n";
        assert_eq!(meminfo_available_mb(text), Some(20_000));
        assert_eq!(meminfo_available_mb("MemTotal: 5 kB\n"), None);
    }
}
