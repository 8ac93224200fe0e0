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

    /// The writing itself is `fileio`'s (tested there); what `evidence` adds is the error
    /// naming the file, and the same refusals.
    #[test]
    fn writes_and_appends_name_the_file_on_failure() {
        let err = atomic_write(Path::new("/nonexistent-dir-xyz/f.txt"), b"x").unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent-dir-xyz/f.txt"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = atomic_write(dir.path(), b"x").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let p = dir.path().join("sub/log.jsonl");
        for line in ["a\n", "b\n"] {
            open_append(&p).unwrap().write_all(line.as_bytes()).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\nb\n");
        let e = open_append(Path::new("/dev/null")).unwrap_err().to_string();
        assert!(
            e.starts_with("/dev/null: ") && e.contains("not a regular file"),
            "{e}"
        );
    }
}
