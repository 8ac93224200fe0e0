//! Errors and crash-safe file writing shared by every evidence artefact.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// What can go wrong reading or writing evidence. Messages are written for the person at
/// the terminal: they name the file and the line.
#[derive(Debug)]
pub enum EvidenceError {
    /// Bad parameters or inconsistent data.
    Invalid(String),
    /// A text file that does not parse; `line` is 1-based (0 = end of file).
    Parse {
        line: usize,
        message: String,
        file: Option<PathBuf>,
    },
    /// The operating system refused.
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
}

impl fmt::Display for EvidenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(m) => write!(f, "{m}"),
            Self::Parse {
                line,
                message,
                file,
            } => {
                if let Some(p) = file {
                    write!(f, "{}:", p.display())?;
                }
                if *line == 0 {
                    write!(f, " at end of input: {message}")
                } else {
                    write!(f, " line {line}: {message}")
                }
            }
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for EvidenceError {}

/// Write `bytes` to `path` so that readers see either the old file or the whole new one:
/// write a sibling temporary file, flush it to disk, then rename over the target.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), EvidenceError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        EvidenceError::io(path, e)
    })
}

/// Open `path` for appending (creating it and its directory), for logs written a record at a
/// time (games, progress lines): a crash loses at most the record being written.
pub fn open_append(path: &Path) -> Result<std::fs::File, EvidenceError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| EvidenceError::io(dir, e))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| EvidenceError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = std::env::temp_dir().join(format!("evidence-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.json");
        atomic_write(&p, b"first version, long").unwrap();
        atomic_write(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let leftovers = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 1, "temporary file left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn open_append_creates_and_appends() {
        let dir = std::env::temp_dir().join(format!("evidence-append-{}", std::process::id()));
        let p = dir.join("sub/log.jsonl");
        for line in ["a\n", "b\n"] {
            open_append(&p).unwrap().write_all(line.as_bytes()).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\nb\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_write_reports_path_on_failure() {
        let err = atomic_write(Path::new("/nonexistent-dir-xyz/f.txt"), b"x").unwrap_err();
        assert!(err.to_string().contains("/nonexistent-dir-xyz/f.txt"));
    }
}
