//! Output files: checked before the first game, written so that nothing is lost silently.
//!
//! - The report (`--report`) is replaced atomically after the match; before the match its
//!   path must be absent or a regular file (a symbolic link is followed) in a directory where
//!   files can be created.
//! - The PGN (`--pgn`) is append-only: one `write_all` per record (the two games of a pair),
//!   the file locked for the match
//!   (a second arbiter on the same file is refused), and a failed write cut back to the last
//!   whole game. It may also be a character device (`/dev/null`) or a pipe with a reader.
//! - The log directory (`--log`) is created and must accept files.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// An output that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("--report {}: {reason}", path.display())]
    Report { path: PathBuf, reason: String },
    #[error("--pgn {}: {reason}", path.display())]
    Pgn { path: PathBuf, reason: String },
    #[error("--log {}: {reason}", path.display())]
    LogDir { path: PathBuf, reason: String },
}

/// How long opening a FIFO may wait for its reader.
const FIFO_OPEN_WAIT: Duration = Duration::from_secs(5);

/// Create and remove a file in `dir`: can the process write there? The probe is written the
/// way the report is ([`fileio::write_atomic`]: a temporary file renamed into place).
fn probe_dir(dir: &Path) -> std::io::Result<()> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let probe = dir.join(format!(".arbiter-probe-{}-{nanos}.tmp", std::process::id()));
    fileio::write_atomic(&probe, b"").map_err(fileio::FileError::into_io)?;
    std::fs::remove_file(&probe)
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Check that the report can be written at `path` after the match (see the module doc).
pub fn check_report(path: &Path) -> Result<(), OutputError> {
    let err = |reason: String| OutputError::Report {
        path: path.to_owned(),
        reason,
    };
    let dir = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(err("is a directory".into())),
        Ok(m) if !m.is_file() => {
            return Err(err(
                "exists and is not a regular file (without --report the report goes to \
                 standard output)"
                    .into(),
            ));
        }
        Ok(_) => {
            let real = std::fs::canonicalize(path).map_err(|e| err(e.to_string()))?;
            parent_dir(&real).to_owned()
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => parent_dir(path).to_owned(),
        Err(e) => return Err(err(e.to_string())),
    };
    probe_dir(&dir).map_err(|e| err(format!("cannot create files in {}: {e}", dir.display())))
}

/// Create the log directory (and its parents) and check that files can be created in it.
pub fn prepare_log_dir(dir: &Path) -> Result<(), OutputError> {
    let err = |reason: String| OutputError::LogDir {
        path: dir.to_owned(),
        reason,
    };
    std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
    probe_dir(dir).map_err(|e| err(format!("cannot create files in it: {e}")))
}

/// The append-only PGN file of a match.
#[derive(Debug)]
pub struct PgnWriter {
    path: PathBuf,
    /// The open file, and what must precede the next game (a separator after a file that
    /// did not end with a blank line).
    file: Mutex<(std::fs::File, &'static str)>,
    /// A regular file: locked, and cut back after a failed write.
    regular: bool,
}

impl PgnWriter {
    /// Open `path` for appending (creating it and its directory) and lock it for the match.
    /// Directories, sockets, block devices and FIFOs without a reader are refused.
    pub fn open(path: &Path) -> Result<Self, OutputError> {
        let err = |reason: String| OutputError::Pgn {
            path: path.to_owned(),
            reason,
        };
        let kind = match std::fs::metadata(path) {
            Ok(m) => Some(m.file_type()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(err(e.to_string())),
        };
        use std::os::unix::fs::FileTypeExt;
        let fifo = kind.is_some_and(|k| k.is_fifo());
        match kind {
            Some(k) if k.is_dir() => return Err(err("is a directory".into())),
            Some(k) if k.is_socket() || k.is_block_device() => {
                return Err(err("is not a file, a character device or a pipe".into()));
            }
            _ => {}
        }
        let file = if fifo {
            // Opening a FIFO for writing blocks until someone reads it: wait a little only.
            let (tx, rx) = std::sync::mpsc::channel();
            let p = path.to_owned();
            std::thread::spawn(move || {
                let _ = tx.send(fileio::open_append_stream(&p));
            });
            match rx.recv_timeout(FIFO_OPEN_WAIT) {
                Ok(r) => r.map_err(|e| err(e.into_io().to_string()))?,
                Err(_) => return Err(err("is a pipe that nobody reads".into())),
            }
        } else {
            fileio::open_append_stream(path).map_err(|e| err(e.into_io().to_string()))?
        };
        let regular = file.metadata().map_err(|e| err(e.to_string()))?.is_file();
        let mut separator = "";
        if regular {
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(err(
                        "another process is writing this file (it is locked)".into()
                    ));
                }
                // A file system without locks: go on unlocked.
                Err(std::fs::TryLockError::Error(_)) => {}
            }
            separator = Self::separator(path).map_err(|e| err(e.to_string()))?;
        }
        Ok(Self {
            path: path.to_owned(),
            file: Mutex::new((file, separator)),
            regular,
        })
    }

    /// What an existing file needs before the next game so that games stay apart.
    fn separator(path: &Path) -> std::io::Result<&'static str> {
        // Called for a regular file only; the caller's error names the path.
        let mut f = fileio::open(path).map_err(fileio::FileError::into_io)?;
        let len = f.metadata()?.len();
        let mut tail = [0u8; 2];
        let n = len.min(2) as usize;
        f.seek(SeekFrom::Start(len - n as u64))?;
        f.read_exact(&mut tail[..n])?;
        Ok(match &tail[..n] {
            [] | [b'\n', b'\n'] => "",
            [.., b'\n'] => "\n",
            _ => "\n\n",
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one whole record (games) with a single `write_all`. On failure a regular file is
    /// cut back to its length before the write, so it never ends inside a game.
    pub fn append(&self, game: &str) -> std::io::Result<()> {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let (f, separator) = &mut *guard;
        let mut buf = String::with_capacity(separator.len() + game.len());
        buf.push_str(separator);
        buf.push_str(game);
        let before = if self.regular {
            Some(f.metadata()?.len())
        } else {
            None
        };
        match f.write_all(buf.as_bytes()).and_then(|()| f.flush()) {
            Ok(()) => {
                *separator = "";
                Ok(())
            }
            Err(e) => {
                if let Some(len) = before {
                    let _ = f.set_len(len);
                }
                Err(e)
            }
        }
    }

    /// Cut a regular file back to `len` bytes (a resumed match drops a game pair cut off by a
    /// crash, so the file again ends with a whole pair).
    pub fn cut_back(&self, len: u64) -> std::io::Result<()> {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if self.regular {
            guard.0.set_len(len)?;
            guard.1 = Self::separator(&self.path)?;
        }
        Ok(())
    }

    /// Flush the file to disk at the end of the match (a late write error shows here).
    pub fn finish(&self) -> std::io::Result<()> {
        if self.regular {
            let guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
            guard.0.sync_all()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_appends_whole_games_separated_and_locks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/g.pgn");
        let w = PgnWriter::open(&p).unwrap();
        w.append("[A \"1\"]\n\n1. e4 *\n\n").unwrap();
        let again = PgnWriter::open(&p).unwrap_err().to_string();
        assert!(again.contains("locked"), "{again}");
        w.finish().unwrap();
        drop(w);
        // A file that ends inside a line gets a blank line before the next game.
        std::fs::write(&p, "[A \"1\"]\n\n1. e4").unwrap();
        let w = PgnWriter::open(&p).unwrap();
        w.append("[B \"2\"]\n\n*\n\n").unwrap();
        w.append("[C \"3\"]\n\n*\n\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "[A \"1\"]\n\n1. e4\n\n[B \"2\"]\n\n*\n\n[C \"3\"]\n\n*\n\n"
        );
        let e = PgnWriter::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn pgn_write_errors_are_reported() {
        let w = PgnWriter::open(Path::new("/dev/full")).unwrap();
        let e = w.append("[A \"1\"]\n\n*\n\n").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28), "{e}");
        PgnWriter::open(Path::new("/dev/null"))
            .unwrap()
            .append("x")
            .unwrap();
    }

    #[test]
    fn report_and_log_paths_are_checked() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("file");
        std::fs::write(&f, "x").unwrap();
        check_report(&d.path().join("r.json")).unwrap();
        check_report(&f).unwrap();
        for (bad, says) in [
            (d.path().to_owned(), "is a directory"),
            (f.join("r.json"), "Not a directory"),
            (
                PathBuf::from("/nonexistent-arbiter/r.json"),
                "cannot create files in",
            ),
            (PathBuf::from("/dev/null"), "not a regular file"),
        ] {
            let e = check_report(&bad).unwrap_err().to_string();
            assert!(e.starts_with("--report ") && e.contains(says), "{e}");
        }
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "probe left"
        );
        prepare_log_dir(&d.path().join("a/b")).unwrap();
        let e = prepare_log_dir(&f).unwrap_err().to_string();
        assert!(e.starts_with("--log "), "{e}");
    }
}
