//! Errors and crash-safe file writing shared by every evidence artefact.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// What can go wrong reading or writing evidence. Messages are written for the person at
/// the terminal: they name the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// Bad parameters or inconsistent data.
    #[error("{0}")]
    Invalid(String),
    /// A text file that does not parse; `line` is 1-based (0 = end of file).
    #[error("{}{}", file.as_ref().map(|p| format!("{}:", p.display())).unwrap_or_default(),
        if *line == 0 { format!(" at end of input: {message}") } else { format!(" line {line}: {message}") })]
    Parse {
        line: usize,
        message: String,
        file: Option<PathBuf>,
    },
    /// The operating system refused.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl EvidenceError {
    pub(crate) fn invalid(m: impl Into<String>) -> Self {
        Self::Invalid(m.into())
    }
    pub(crate) fn parse(line: usize, m: impl Into<String>) -> Self {
        Self::Parse {
            line,
            message: m.into(),
            file: None,
        }
    }
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            source,
        }
    }
    /// Attach the file a parse error came from.
    pub fn in_file(self, path: &Path) -> Self {
        match self {
            Self::Parse { line, message, .. } => Self::Parse {
                line,
                message,
                file: Some(path.to_owned()),
            },
            other => other,
        }
    }
    /// The error as an `std::io::Error` (the message kept), for callers whose own error type
    /// carries the path already.
    pub fn into_io(self) -> std::io::Error {
        match self {
            Self::Io { source, .. } => source,
            other => std::io::Error::other(other.to_string()),
        }
    }
}

/// Write `bytes` to `path` so that readers see either the old file or the whole new one
/// ([`fileio::write_atomic`]: a temporary file in the target's directory, flushed and renamed
/// over it; a symbolic link is followed, a target that is not a regular file refused; the
/// replaced file's permissions kept, or those of a plain `create`).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), EvidenceError> {
    atomic_write_with(path, |f| f.write_all(bytes))
}

/// [`atomic_write`] with a writer callback, for large files written in pieces.
pub fn atomic_write_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), EvidenceError> {
    fileio::write_atomic_with(path, write).map_err(|e| EvidenceError::io(path, e.into_io()))
}

/// Open `path` for appending (creating it and its directory), for logs written a record at a
/// time (games, progress lines): a crash loses at most the record being written. Write each
/// record with a single `write_all` of the whole line, so that concurrent appenders interleave
/// whole lines, never pieces. An existing file must be a regular one ([`fileio::open_append`]).
pub fn open_append(path: &Path) -> Result<std::fs::File, EvidenceError> {
    fileio::open_append(path).map_err(|e| {
        let p = e.path().to_owned();
        EvidenceError::io(&p, e.into_io())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        atomic_write(&p, b"first version, long").unwrap();
        atomic_write(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "temporary file left behind");
    }

    #[test]
    fn atomic_write_gives_ordinary_permissions_and_keeps_existing_ones() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        // What a plain create gives under this process's umask.
        let plain = dir.path().join("plain.txt");
        std::fs::write(&plain, b"x").unwrap();
        let fresh = dir.path().join("fresh.txt");
        atomic_write(&fresh, b"x").unwrap();
        assert_eq!(mode(&fresh), mode(&plain));
        // A replaced file keeps its mode, even one the umask would not give.
        let kept = dir.path().join("kept.txt");
        std::fs::write(&kept, b"old").unwrap();
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
        atomic_write(&kept, b"new").unwrap();
        assert_eq!(mode(&kept), 0o640);
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o664)).unwrap();
        atomic_write(&kept, b"newer").unwrap();
        assert_eq!(mode(&kept), 0o664);
    }

    #[test]
    fn atomic_write_follows_symlinks_and_refuses_non_files() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        atomic_write(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let e = atomic_write(&sub, b"x").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(sub.is_dir());
    }

    #[test]
    fn concurrent_atomic_writes_never_mix() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.txt");
        std::thread::scope(|s| {
            for t in 0..4u8 {
                let p = &p;
                s.spawn(move || {
                    for _ in 0..50 {
                        atomic_write(p, &[b'a' + t; 4096]).unwrap();
                    }
                });
            }
        });
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len(), 4096);
        assert!(bytes.iter().all(|&b| b == bytes[0]));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn open_append_creates_and_appends() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/log.jsonl");
        for line in ["a\n", "b\n"] {
            open_append(&p).unwrap().write_all(line.as_bytes()).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\nb\n");
    }

    #[test]
    fn atomic_write_reports_path_on_failure() {
        let err = atomic_write(Path::new("/nonexistent-dir-xyz/f.txt"), b"x").unwrap_err();
        assert!(err.to_string().contains("/nonexistent-dir-xyz/f.txt"));
    }
}
