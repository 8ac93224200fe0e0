//! Seed leases: a small JSON ledger of reserved seed blocks and their roles, so that a
//! screen block is opened once and never overlaps training or validation seeds (docs/design/drop7-SPEC.md §3,
//! "seed discipline"). The ledger is meant to live in version control next to the results it
//! guards.
//!
//! Every change goes through [`Ledger::update`]: an exclusive lock on a sibling `.lock` file,
//! then read, change, atomic write. Two screens started at once therefore see each other's
//! leases (without the lock, both read the old file and the second write drops the first
//! lease, or both open the same fresh block).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::seeds::{SeedBlock, seed_hex};

/// What a block is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Training,
    Validation,
    Screen,
}

impl std::str::FromStr for Role {
    type Err = LeaseError;
    fn from_str(s: &str) -> Result<Self, LeaseError> {
        match s {
            "training" => Ok(Role::Training),
            "validation" => Ok(Role::Validation),
            "screen" => Ok(Role::Screen),
            _ => Err(LeaseError::Role(s.to_owned())),
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Training => "training",
            Role::Validation => "validation",
            Role::Screen => "screen",
        })
    }
}

/// Why the ledger refused, or could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("bad role `{0}`: training, validation or screen")]
    Role(String),
    #[error("{path}: not a seed ledger: {message}")]
    Format { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "seeds {block} overlap {role} lease `{id}` ({range}); a {wanted} block must not share seeds with {role} data"
    )]
    OtherRole {
        block: String,
        role: Role,
        id: String,
        range: String,
        wanted: Role,
    },
    #[error(
        "seeds {block} partly overlap {role} lease `{id}` ({range}); pass --force to read them anyway"
    )]
    Partial {
        block: String,
        role: Role,
        id: String,
        range: String,
    },
    #[error(
        "{role} block `{id}` ({range}) was already opened by `{by}`; screen blocks are opened once (pass --force to reuse it, knowing it is no longer fresh)"
    )]
    AlreadyOpened {
        role: Role,
        id: String,
        range: String,
        by: String,
    },
    #[error("seeds {block} overlap lease `{id}` ({role} {range})")]
    Overlap {
        block: String,
        id: String,
        role: Role,
        range: String,
    },
    #[error("a lease named `{0}` already exists")]
    Exists(String),
    #[error(
        "bad lease name {0:?}: use 1 to 200 characters, no control characters and no spaces at either end"
    )]
    BadId(String),
}

/// Reserved (not yet read) or opened (read at least once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeaseState {
    Reserved,
    Opened,
}

/// One reserved block `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    pub id: String,
    pub role: Role,
    pub range_start_hex: String,
    pub range_end_exclusive_hex: String,
    pub state: LeaseState,
    /// Who opened it (an experiment id or output directory), so a resumed run is recognised.
    #[serde(default)]
    pub opened_by: Option<String>,
    /// Unix seconds when opened.
    #[serde(default)]
    pub opened_at: Option<u64>,
    #[serde(default)]
    pub notes: String,
}

impl Lease {
    /// The lease's block, checked (start, end and no wrap).
    pub fn block(&self) -> Result<SeedBlock, String> {
        let start = crate::seeds::parse_seed(&self.range_start_hex)
            .map_err(|e| format!("lease {}: {e}", self.id))?;
        // the end may be 0x100000000
        let end = u64::from_str_radix(
            self.range_end_exclusive_hex
                .strip_prefix("0x")
                .unwrap_or("-"),
            16,
        )
        .map_err(|_| {
            format!(
                "lease {}: bad end `{}`",
                self.id, self.range_end_exclusive_hex
            )
        })?;
        let count = end.saturating_sub(start as u64);
        SeedBlock::new(start, count).map_err(|e| format!("lease {}: {e}", self.id))
    }

    fn range(&self) -> String {
        format!("{}..{}", self.range_start_hex, self.range_end_exclusive_hex)
    }
}

/// The ledger file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub format: String,
    pub leases: Vec<Lease>,
    /// Each lease's block, parsed once at load (not serialised).
    #[serde(skip)]
    blocks: Vec<SeedBlock>,
}

/// The ledger format tag.
pub const LEDGER_FORMAT: &str = "actuary-seed-ledger-v1";

/// The largest ledger file read (a ledger of thousands of leases is a few megabytes).
pub const MAX_LEDGER_BYTES: u64 = 64 << 20;

impl Ledger {
    /// The leases as a text table, one line each (`drop7 lease list`).
    pub fn table(&self) -> String {
        let mut t = format!(
            "{:<28} {:<10} {:<12} {:<12} {:<9} opened by\n",
            "id", "role", "start", "end (excl)", "state"
        );
        for l in &self.leases {
            t += &format!(
                "{:<28} {:<10} {:<12} {:<12} {:<9} {}\n",
                l.id,
                l.role,
                l.range_start_hex,
                l.range_end_exclusive_hex,
                format!("{:?}", l.state).to_lowercase(),
                l.opened_by.as_deref().unwrap_or("-")
            );
        }
        t
    }

    /// An empty ledger.
    pub fn new() -> Self {
        Self {
            format: LEDGER_FORMAT.into(),
            leases: vec![],
            blocks: vec![],
        }
    }

    /// Read a ledger; a missing file is an empty ledger. Anything but a regular file of at
    /// most [`MAX_LEDGER_BYTES`] holding an `actuary-seed-ledger-v1` is refused (and a FIFO or
    /// a device is never opened, so nothing blocks or reads without end).
    pub fn load(path: &Path) -> Result<Self, LeaseError> {
        let format = |message: String| LeaseError::Format {
            path: path.to_owned(),
            message,
        };
        let io = |source| LeaseError::Io {
            path: path.to_owned(),
            source,
        };
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::new()),
            Err(e) => return Err(io(e)),
            Ok(m) if !m.is_file() => return Err(format("it is not a regular file".into())),
            Ok(m) if m.len() > MAX_LEDGER_BYTES => {
                return Err(format(format!(
                    "{} bytes; a seed ledger is a small JSON file",
                    m.len()
                )));
            }
            Ok(_) => {}
        }
        // Type and size checked again on the open file (fileio): a file swapped in since the
        // check above is refused too.
        let text = fileio::read(path, MAX_LEDGER_BYTES).map_err(|e| match e {
            fileio::FileError::NotRegular { .. } => format("it is not a regular file".into()),
            fileio::FileError::TooLarge { size, .. } => {
                format(format!("{size} bytes; a seed ledger is a small JSON file"))
            }
            e => io(e.into_io()),
        })?;
        let text = String::from_utf8(text).map_err(|_| format("it is not UTF-8 text".into()))?;
        let mut l: Ledger = serde_json::from_str(&text).map_err(|e| format(e.to_string()))?;
        if l.format != LEDGER_FORMAT {
            return Err(format(format!(
                "format `{}`, expected `{LEDGER_FORMAT}`",
                l.format
            )));
        }
        l.blocks = l
            .leases
            .iter()
            .map(Lease::block)
            .collect::<Result<_, _>>()
            .map_err(format)?;
        let mut ids = std::collections::HashSet::new();
        if let Some(l) = l.leases.iter().find(|l| !ids.insert(l.id.as_str())) {
            return Err(format(format!("lease `{}` appears twice", l.id)));
        }
        Ok(l)
    }

    /// Write atomically.
    pub fn save(&self, path: &Path) -> Result<(), LeaseError> {
        let text = serde_json::to_string_pretty(self).expect("a ledger serialises") + "\n";
        evidence::atomic_write(path, text.as_bytes()).map_err(|e| LeaseError::Io {
            path: path.to_owned(),
            source: e.into_io(),
        })
    }

    /// Load, apply `change`, save — all under an exclusive lock on `PATH.lock`, so concurrent
    /// processes (on one machine, or on a shared file system that honours `flock`) serialise.
    /// Nothing is written when `change` fails.
    pub fn update<T>(
        path: &Path,
        change: impl FnOnce(&mut Ledger) -> Result<T, LeaseError>,
    ) -> Result<T, LeaseError> {
        let io = |p: &Path| {
            let p = p.to_owned();
            move |source| LeaseError::Io { path: p, source }
        };
        if let Ok(m) = std::fs::metadata(path)
            && !m.is_file()
        {
            // before the lock file appears beside it (no `/dev/full.lock`)
            return Err(LeaseError::Format {
                path: path.to_owned(),
                message: "it is not a regular file".into(),
            });
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let mut lock_name = path.as_os_str().to_owned();
        lock_name.push(".lock");
        let lock_path = PathBuf::from(lock_name);
        // The lock file is created if absent and never written; a regular file only
        // (fileio::open_append: a FIFO there would block the open). `lock` waits for the
        // holder, where fileio::lock would refuse at once: concurrent updates take turns.
        let lock = fileio::open_append(&lock_path).map_err(|e| io(&lock_path)(e.into_io()))?;
        lock.lock().map_err(io(&lock_path))?;
        let mut ledger = Self::load(path)?;
        let before = ledger.clone();
        let out = change(&mut ledger)?;
        if ledger != before {
            ledger.save(path)?;
        }
        Ok(out)
    }

    /// The id of the exact `role` lease on `block` that `opener` opened, if there is one: a
    /// resumed run (or a shard of a job array whose submission opened the block) needs no
    /// write, so it needs no lock.
    pub fn opened_by(&self, role: Role, block: SeedBlock, opener: &str) -> Option<String> {
        self.leases.iter().zip(&self.blocks).find_map(|(l, b)| {
            (l.role == role
                && *b == block
                && l.state == LeaseState::Opened
                && l.opened_by.as_deref() == Some(opener))
            .then(|| l.id.clone())
        })
    }

    fn overlapping(&self, block: SeedBlock) -> impl Iterator<Item = (usize, &Lease, SeedBlock)> {
        self.leases
            .iter()
            .zip(&self.blocks)
            .enumerate()
            .filter_map(move |(i, (l, b))| b.overlaps(&block).then_some((i, l, *b)))
    }

    fn push(&mut self, lease: Lease, block: SeedBlock) {
        self.leases.push(lease);
        self.blocks.push(block);
    }

    /// Reserve `block` for `role`. Refuses any overlap with an existing lease.
    pub fn reserve(
        &mut self,
        id: &str,
        role: Role,
        block: SeedBlock,
        notes: &str,
    ) -> Result<(), LeaseError> {
        if id.is_empty()
            || id.chars().count() > 200
            || id.trim() != id
            || id.chars().any(char::is_control)
        {
            return Err(LeaseError::BadId(id.to_owned()));
        }
        if let Some((_, l, _)) = self.overlapping(block).next() {
            return Err(LeaseError::Overlap {
                block: range_of(block),
                id: l.id.clone(),
                role: l.role,
                range: l.range(),
            });
        }
        if self.leases.iter().any(|l| l.id == id) {
            return Err(LeaseError::Exists(id.to_owned()));
        }
        self.push(
            Lease {
                id: id.to_owned(),
                role,
                range_start_hex: seed_hex(block.start()),
                range_end_exclusive_hex: hex_end(block.end_exclusive()),
                state: LeaseState::Reserved,
                opened_by: None,
                opened_at: None,
                notes: notes.to_owned(),
            },
            block,
        );
        Ok(())
    }

    /// Open `block` for `role` on behalf of `opener`:
    /// * a lease of another role overlapping the block → refused, always;
    /// * an exact screen lease already opened by someone else → refused unless `force`
    ///   (training and validation blocks may be re-read);
    ///   opened by the same `opener` → allowed (a resumed run);
    /// * a reserved exact lease → opened; no lease → one is created, opened.
    ///
    /// Partial overlaps with a same-role lease are refused unless `force`.
    pub fn open(
        &mut self,
        role: Role,
        block: SeedBlock,
        opener: &str,
        force: bool,
        now: u64,
    ) -> Result<String, LeaseError> {
        let mut exact = None;
        for (i, l, b) in self.overlapping(block) {
            if l.role != role {
                return Err(LeaseError::OtherRole {
                    block: range_of(block),
                    role: l.role,
                    id: l.id.clone(),
                    range: l.range(),
                    wanted: role,
                });
            }
            if b == block {
                exact = Some(i);
            } else if !force {
                return Err(LeaseError::Partial {
                    block: range_of(block),
                    role,
                    id: l.id.clone(),
                    range: l.range(),
                });
            }
        }
        match exact {
            Some(i) => {
                let l = &mut self.leases[i];
                if role == Role::Screen
                    && l.state == LeaseState::Opened
                    && l.opened_by.as_deref() != Some(opener)
                    && !force
                {
                    return Err(LeaseError::AlreadyOpened {
                        role,
                        id: l.id.clone(),
                        range: l.range(),
                        by: l.opened_by.clone().unwrap_or_else(|| "?".into()),
                    });
                }
                if l.state == LeaseState::Reserved {
                    l.state = LeaseState::Opened;
                    l.opened_by = Some(opener.to_owned());
                    l.opened_at = Some(now);
                }
                Ok(l.id.clone())
            }
            None => {
                let id = format!("{role}-{}-{}", seed_hex(block.start()), block.count());
                self.push(
                    Lease {
                        id: id.clone(),
                        role,
                        range_start_hex: seed_hex(block.start()),
                        range_end_exclusive_hex: hex_end(block.end_exclusive()),
                        state: LeaseState::Opened,
                        opened_by: Some(opener.to_owned()),
                        opened_at: Some(now),
                        notes: String::new(),
                    },
                    block,
                );
                Ok(id)
            }
        }
    }
}

fn hex_end(e: u64) -> String {
    format!("{e:#010x}")
}

fn range_of(b: SeedBlock) -> String {
    format!("{}..{}", seed_hex(b.start()), hex_end(b.end_exclusive()))
}

/// How a ledger names the run that opens a block: the run's directory relative to the
/// ledger's own directory when it lies below it (so a ledger kept in version control beside
/// its results carries no machine's absolute paths), else its absolute path. Both are
/// canonicalised first, so the same directory is recognised from any working directory.
pub fn opener_name(run_dir: &Path, ledger: &Path) -> String {
    let run = std::fs::canonicalize(run_dir).unwrap_or_else(|_| run_dir.to_owned());
    let base = ledger
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .and_then(|p| std::fs::canonicalize(p).ok());
    match base.and_then(|b| run.strip_prefix(b).ok().map(Path::to_owned)) {
        Some(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => run.display().to_string(),
    }
}

/// Unix seconds now (0 if the clock is before 1970).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> SeedBlock {
        s.parse().unwrap()
    }

    #[test]
    fn the_table_has_a_header_and_a_line_per_lease() {
        let mut l = Ledger::new();
        l.reserve("train-a", Role::Training, b("0x10:16"), "")
            .unwrap();
        let t = l.table();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2, "{t}");
        assert!(
            lines[0].starts_with("id ") && lines[0].ends_with("opened by"),
            "{t}"
        );
        let words: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(words[0], "train-a");
        assert_eq!(words[1], "training");
        assert_eq!(words[5], "-", "nobody opened a reserved lease: {t}");
    }

    #[test]
    fn screen_blocks_open_once() {
        let mut l = Ledger::new();
        l.reserve("train", Role::Training, b("0xa5300000:1000"), "")
            .unwrap();
        // overlapping another role is refused even with force
        let e = l
            .open(Role::Screen, b("0xa5300100:64"), "exp1", true, 1)
            .unwrap_err();
        assert!(e.to_string().contains("training"), "{e}");
        let id = l
            .open(Role::Screen, b("0xa52f2140:256"), "runs/a", false, 1)
            .unwrap();
        assert_eq!(id, "screen-0xa52f2140-256");
        // the same opener resumes
        l.open(Role::Screen, b("0xa52f2140:256"), "runs/a", false, 2)
            .unwrap();
        // another opener is refused without force
        let e = l
            .open(Role::Screen, b("0xa52f2140:256"), "runs/b", false, 3)
            .unwrap_err();
        assert!(e.to_string().contains("already opened"), "{e}");
        l.open(Role::Screen, b("0xa52f2140:256"), "runs/b", true, 3)
            .unwrap();
        // partial overlap with a screen lease
        let e = l
            .open(Role::Screen, b("0xa52f2150:256"), "runs/c", false, 4)
            .unwrap_err();
        assert!(e.to_string().contains("partly"), "{e}");
        // training and validation blocks may be re-read by other runs
        l.open(Role::Training, b("0xa5300000:1000"), "run-1", false, 5)
            .unwrap();
        l.open(Role::Training, b("0xa5300000:1000"), "run-2", false, 6)
            .unwrap();
        // reserve refuses overlaps
        assert!(
            l.reserve("x", Role::Validation, b("0xa52f2100:128"), "")
                .is_err()
        );
    }

    #[test]
    fn ledger_round_trip_and_top_of_space() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("leases.json");
        let mut l = Ledger::load(&path).unwrap();
        l.reserve(
            "val",
            Role::Validation,
            b("0xffffff00:256"),
            "top of the range",
        )
        .unwrap();
        l.save(&path).unwrap();
        let back = Ledger::load(&path).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.leases[0].range_end_exclusive_hex, "0x100000000");
        // the bottom of the space does not overlap the top (blocks do not wrap)
        let mut back = back;
        back.open(Role::Screen, b("0x0:8"), "s", false, 1).unwrap();
        std::fs::write(&path, "{not json").unwrap();
        let e = Ledger::load(&path).unwrap_err().to_string();
        assert!(e.contains("not a seed ledger"), "{e}");
        // a lease whose range wraps or is empty is refused at load
        std::fs::write(
            &path,
            r#"{"format":"actuary-seed-ledger-v1","leases":[{"id":"w","role":"screen","rangeStartHex":"0xfffffff0","rangeEndExclusiveHex":"0x00000010","state":"opened"}]}"#,
        )
        .unwrap();
        let e = Ledger::load(&path).unwrap_err().to_string();
        assert!(e.contains("lease w"), "{e}");
    }

    #[test]
    fn openers_are_named_relative_to_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("screens/a");
        std::fs::create_dir_all(&run).unwrap();
        let ledger = dir.path().join("leases.json");
        assert_eq!(opener_name(&run, &ledger), "screens/a");
        let elsewhere = tempfile::tempdir().unwrap();
        let name = opener_name(elsewhere.path(), &ledger);
        assert!(Path::new(&name).is_absolute(), "{name}");
    }

    /// Concurrent updates through the lock lose nothing: 8 threads × 10 fresh blocks.
    #[test]
    fn concurrent_updates_keep_every_lease() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("leases.json");
        std::thread::scope(|s| {
            for t in 0..8u32 {
                let path = &path;
                s.spawn(move || {
                    for i in 0..10u32 {
                        let block = SeedBlock::new(t * 1000 + i * 10, 10).unwrap();
                        Ledger::update(path, |l| {
                            l.open(Role::Screen, block, &format!("t{t}"), false, 0)
                        })
                        .unwrap();
                    }
                });
            }
        });
        assert_eq!(Ledger::load(&path).unwrap().leases.len(), 80);
        // and a refused change writes nothing
        let before = std::fs::read(&path).unwrap();
        let e = Ledger::update(&path, |l| {
            l.open(Role::Training, SeedBlock::new(5, 1).unwrap(), "x", false, 0)
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    /// Files that are not ledgers: devices and FIFOs are refused without being opened (no
    /// endless read of /dev/zero, no lock file beside /dev/full), foreign JSON by its format,
    /// a lease listed twice, and bad lease names.
    #[test]
    fn non_ledgers_are_refused() {
        for dev in ["/dev/zero", "/dev/full", "/dev/null"] {
            let e = Ledger::load(Path::new(dev)).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
            let e = Ledger::update(Path::new(dev), |_| Ok(())).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
            assert!(!Path::new(&format!("{dev}.lock")).exists());
        }
        let dir = tempfile::tempdir().unwrap();
        let e = Ledger::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let path = dir.path().join("l.json");
        std::fs::write(&path, r#"{"format":"something-else","leases":[]}"#).unwrap();
        let e = Ledger::load(&path).unwrap_err().to_string();
        assert!(e.contains("format `something-else`"), "{e}");
        let lease = r#"{"id":"a","role":"screen","rangeStartHex":"0x10","rangeEndExclusiveHex":"0x20","state":"reserved"}"#;
        std::fs::write(
            &path,
            format!(r#"{{"format":"actuary-seed-ledger-v1","leases":[{lease},{lease}]}}"#),
        )
        .unwrap();
        let e = Ledger::load(&path).unwrap_err().to_string();
        assert!(e.contains("lease `a` appears twice"), "{e}");
        std::fs::write(&path, [0xffu8, 0xfe, b'{']).unwrap();
        assert!(
            Ledger::load(&path)
                .unwrap_err()
                .to_string()
                .contains("not UTF-8")
        );
        let mut l = Ledger::new();
        for bad in ["", " x", "x\n", "a\u{7}b", &"x".repeat(201)] {
            let e = l.reserve(bad, Role::Screen, b("1:2"), "").unwrap_err();
            assert!(e.to_string().contains("bad lease name"), "{e}");
        }
        l.reserve("my block 1", Role::Screen, b("1:2"), "").unwrap();
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Any file content: a ledger or an error, never a panic.
            #[test]
            fn any_text_loads_or_is_refused(text in "\\PC{0,200}", bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("l.json");
                std::fs::write(&path, &text).unwrap();
                let _ = Ledger::load(&path);
                std::fs::write(&path, &bytes).unwrap();
                let _ = Ledger::load(&path);
            }

            /// Ledger-shaped JSON with hostile field values: never a panic.
            #[test]
            fn hostile_leases_are_refused_or_loaded(
                start in "\\PC{0,12}|0x[0-9a-fA-F+]{0,10}",
                end in "\\PC{0,12}|0x[0-9a-fA-F+]{0,10}",
                role in "training|validation|screen|\\PC{0,8}",
                state in "reserved|opened|\\PC{0,8}",
            ) {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("l.json");
                let lease = serde_json::json!({"id": "x", "role": role, "rangeStartHex": start,
                    "rangeEndExclusiveHex": end, "state": state});
                let text = serde_json::json!({"format": LEDGER_FORMAT, "leases": [lease]}).to_string();
                std::fs::write(&path, text).unwrap();
                if let Ok(l) = Ledger::load(&path) {
                    let b = l.leases[0].block().unwrap();
                    prop_assert!(b.end_exclusive() <= 1 << 32 && b.count() >= 1);
                }
            }

            /// Saved ledgers load back equal: reserve disjoint blocks, open some, save, load.
            #[test]
            fn saved_ledgers_round_trip(
                blocks in proptest::collection::vec((0u32..1 << 20, 1u64..5000, 0usize..3, any::<bool>(), "\\PC{0,20}"), 0..12),
            ) {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("l.json");
                let mut l = Ledger::new();
                let roles = [Role::Training, Role::Validation, Role::Screen];
                for (i, (start, n, r, open, notes)) in blocks.into_iter().enumerate() {
                    let block = SeedBlock::new(start << 12, n).unwrap();
                    if l.reserve(&format!("lease-{i}"), roles[r], block, &notes).is_ok() && open {
                        l.open(roles[r], block, &format!("run {i}"), true, i as u64).unwrap();
                    }
                }
                l.save(&path).unwrap();
                prop_assert_eq!(Ledger::load(&path).unwrap(), l);
            }
        }
    }
}
