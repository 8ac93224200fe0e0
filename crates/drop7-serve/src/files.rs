//! The results directory: paths from requests resolved inside it (never outside: no `..`,
//! no absolute paths, symlinks resolved and the result checked against the canonical root),
//! and what it holds — results files, screens, training runs — found by a bounded walk.

use std::path::{Component, Path, PathBuf};

use super::ApiError;

/// Directories deeper than this below the root are not walked.
const MAX_DEPTH: usize = 6;
/// Entries looked at in one walk, at most.
const MAX_ENTRIES: usize = 20_000;

/// The canonical root every request path is resolved in.
#[derive(Debug, Clone)]
pub struct Root {
    pub dir: PathBuf,
}

impl Root {
    /// The results directory, canonical; an error says why it cannot be one.
    pub fn new(dir: &Path) -> Result<Self, String> {
        let dir = dir.canonicalize().map_err(|e| e.to_string())?;
        if !dir.is_dir() {
            return Err("not a directory".into());
        }
        Ok(Self { dir })
    }

    /// A request's relative path, checked: relative, plain components only, and after
    /// resolving every symlink still inside the root. 400 for a malformed path, 403 for one
    /// that leads outside, 404 for one that does not exist.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, ApiError> {
        if rel.is_empty() {
            return Err(ApiError::bad("empty path"));
        }
        if rel.contains('\0') || rel.contains('\\') {
            return Err(ApiError::bad(format!("bad path `{rel}`")));
        }
        let p = Path::new(rel);
        for c in p.components() {
            match c {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => {
                    return Err(ApiError::forbidden(format!(
                        "path `{rel}`: `..` is not allowed; paths are relative to the results directory"
                    )));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(ApiError::forbidden(format!(
                        "path `{rel}`: absolute paths are not allowed; paths are relative to the results directory"
                    )));
                }
            }
        }
        let joined = self.dir.join(p);
        let real = joined.canonicalize().map_err(|_| {
            ApiError::not_found(format!("no file `{rel}` in the results directory"))
        })?;
        if !real.starts_with(&self.dir) {
            return Err(ApiError::forbidden(format!(
                "path `{rel}` leads outside the results directory"
            )));
        }
        Ok(real)
    }

    /// A path the server is about to open — named by a request, or found beside one (a
    /// report's `report.md`, a run's `checkpoint.json`, a directory's `report.json`): after
    /// resolving every symlink it must lie inside the root (403) and be a regular file (404
    /// for a missing file, a directory, a FIFO or a device). Every file the server reads
    /// passes here first, through [`Root::open`].
    pub fn confine(&self, path: &Path) -> Result<PathBuf, ApiError> {
        let shown = || self.rel(path);
        let real = path.canonicalize().map_err(|_| {
            ApiError::not_found(format!("no file `{}` in the results directory", shown()))
        })?;
        if !real.starts_with(&self.dir) {
            return Err(ApiError::forbidden(format!(
                "path `{}` leads outside the results directory",
                shown()
            )));
        }
        match std::fs::metadata(&real) {
            Ok(m) if m.is_file() => {
                linked_elsewhere(&m, &shown())?;
                Ok(real)
            }
            _ => Err(ApiError::not_found(format!(
                "`{}` is not a regular file",
                shown()
            ))),
        }
    }

    /// Open a confined regular file for reading, refusing one larger than `max` bytes (413).
    /// The file is opened without blocking and checked again on the open handle
    /// ([`fileio::open`]), so a FIFO or device swapped in after [`Root::confine`] cannot hang
    /// the server.
    pub fn open(&self, path: &Path, max: u64) -> Result<std::fs::File, ApiError> {
        let real = self.confine(path)?;
        let f = fileio::open(&real).map_err(|e| match e {
            fileio::FileError::NotRegular { .. } => {
                ApiError::not_found(format!("`{}` is not a regular file", self.rel(&real)))
            }
            e => ApiError::not_found(format!("`{}`: {}", self.rel(&real), e.into_io())),
        })?;
        let meta = f
            .metadata()
            .map_err(|e| ApiError::not_found(format!("`{}`: {e}", self.rel(&real))))?;
        linked_elsewhere(&meta, &self.rel(&real))?;
        if meta.len() > max {
            return Err(ApiError::new(
                413,
                format!("`{}` is too large to read", self.rel(&real)),
            ));
        }
        Ok(f)
    }

    /// The bytes of a confined regular file of at most `max` bytes.
    pub fn read(&self, path: &Path, max: u64) -> Result<Vec<u8>, ApiError> {
        use std::io::Read;
        let mut f = self.open(path, max)?;
        let mut v = Vec::new();
        f.by_ref()
            .take(max)
            .read_to_end(&mut v)
            .map_err(|e| ApiError::not_found(format!("`{}`: {e}", self.rel(path))))?;
        Ok(v)
    }

    /// The text of a confined regular file of at most `max` bytes (400 if not UTF-8).
    pub fn read_to_string(&self, path: &Path, max: u64) -> Result<String, ApiError> {
        String::from_utf8(self.read(path, max)?)
            .map_err(|_| ApiError::bad(format!("`{}` is not a text file", self.rel(path))))
    }

    /// `path` relative to the root, with `/` separators (for the page and for links).
    pub fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.dir)
            .unwrap_or(path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Every regular file under the root (symlinks followed only when they stay inside),
    /// sorted, bounded in depth and count.
    pub fn walk(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut seen = 0usize;
        let mut stack = vec![(self.dir.clone(), 0usize)];
        let mut visited = std::collections::HashSet::new();
        while let Some((dir, depth)) = stack.pop() {
            if !visited.insert(dir.clone()) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            entries.sort();
            for path in entries {
                seen += 1;
                if seen > MAX_ENTRIES {
                    return out;
                }
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                if name.as_deref().is_none_or(|n| n.starts_with('.')) {
                    continue;
                }
                let Ok(real) = path.canonicalize() else {
                    continue;
                };
                if !real.starts_with(&self.dir) {
                    continue;
                }
                if real.is_dir() {
                    if depth < MAX_DEPTH {
                        stack.push((real, depth + 1));
                    }
                } else if real.is_file() {
                    out.push(real);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Whether a file name ends in one of `exts` (without the dot).
pub fn has_ext(path: &Path, exts: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| exts.contains(&e))
}

/// The media type of a file served as it is, or `None` for kinds not served.
pub fn content_type(path: &Path) -> Option<&'static str> {
    Some(match path.extension()?.to_str()? {
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        "jsonl" => "application/x-ndjson; charset=utf-8",
        "md" | "txt" => "text/plain; charset=utf-8",
        _ => return None,
    })
}

/// A file with another hard link may be a file from anywhere (a hard link inside the root
/// to a file outside it cannot be told from the inside one): refused, 403. Results are
/// written by the tools as files of their own (one link).
fn linked_elsewhere(m: &std::fs::Metadata, shown: &str) -> Result<(), ApiError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if m.nlink() > 1 {
            return Err(ApiError::forbidden(format!(
                "`{shown}` has other hard links (it may lead outside the results directory)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("r");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/a.json"), "{}").unwrap();
        std::fs::write(tmp.path().join("secret.json"), "{}").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(tmp.path().join("secret.json"), d.join("out.json")).unwrap();
            std::os::unix::fs::symlink(d.join("sub/a.json"), d.join("in.json")).unwrap();
        }
        let root = Root::new(&d).unwrap();
        assert!(root.resolve("sub/a.json").is_ok());
        assert!(root.resolve("./sub/a.json").is_ok());
        for (bad, status) in [
            ("../secret.json", 403),
            ("sub/../../secret.json", 403),
            ("/etc/passwd", 403),
            ("nothing.json", 404),
            ("", 400),
            #[cfg(unix)]
            ("out.json", 403),
        ] {
            assert_eq!(root.resolve(bad).unwrap_err().status, status, "{bad}");
        }
        #[cfg(unix)]
        assert!(root.resolve("in.json").is_ok());
        // Reads: inside only, regular files only, bounded.
        assert_eq!(
            root.read_to_string(&d.join("sub/a.json"), 10).unwrap(),
            "{}"
        );
        assert_eq!(root.read(&d.join("sub/a.json"), 1).unwrap_err().status, 413);
        assert_eq!(root.read(&d.join("sub"), 10).unwrap_err().status, 404);
        #[cfg(unix)]
        {
            assert_eq!(root.read(&d.join("out.json"), 10).unwrap_err().status, 403);
            let fifo = d.join("fifo.json");
            let ok = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap();
            assert!(ok.success());
            assert_eq!(root.read(&fifo, 10).unwrap_err().status, 404);
            // a hard link to a file outside the root reads as its own file: refused
            std::fs::hard_link(tmp.path().join("secret.json"), d.join("hard.json")).unwrap();
            assert_eq!(root.read(&d.join("hard.json"), 10).unwrap_err().status, 403);
            std::fs::remove_file(d.join("hard.json")).unwrap();
        }
        let files: Vec<String> = root.walk().iter().map(|p| root.rel(p)).collect();
        assert_eq!(files, ["sub/a.json"]);
    }
}
