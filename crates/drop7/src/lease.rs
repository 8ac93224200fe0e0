//! Seed leases: a small JSON ledger of reserved seed blocks and their roles, so that a
//! screen block is opened once and never overlaps training or validation seeds (SPEC §3,
//! "seed discipline"). Writes are atomic; the ledger is meant to live in version control
//! next to the results it guards.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::rng::seed_hex;

/// What a block is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Training,
    Validation,
    Screen,
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "training" => Ok(Role::Training),
            "validation" => Ok(Role::Validation),
            "screen" => Ok(Role::Screen),
            _ => Err(format!("bad role `{s}`: training, validation or screen")),
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
    fn range(&self) -> Result<(u64, u64), String> {
        let p = |s: &str| crate::rng::parse_seed(s).map(u64::from);
        let start = p(&self.range_start_hex)?;
        // the end may be 0x100000000
        let end = u64::from_str_radix(self.range_end_exclusive_hex.trim_start_matches("0x"), 16)
            .map_err(|_| {
                format!(
                    "lease {}: bad end `{}`",
                    self.id, self.range_end_exclusive_hex
                )
            })?;
        Ok((start, end))
    }
}

/// The ledger file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub format: String,
    pub leases: Vec<Lease>,
}

/// The ledger format tag.
pub const LEDGER_FORMAT: &str = "actuary-seed-ledger-v1";

impl Ledger {
    /// Read a ledger; a missing file is an empty ledger.
    pub fn load(path: &Path) -> Result<Self, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let l: Ledger = serde_json::from_str(&text)
                    .map_err(|e| format!("{}: not a seed ledger: {e}", path.display()))?;
                for lease in &l.leases {
                    lease
                        .range()
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                }
                Ok(l)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ledger {
                format: LEDGER_FORMAT.into(),
                leases: vec![],
            }),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Write atomically.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())? + "\n";
        evidence::atomic_write(path, text.as_bytes()).map_err(|e| e.to_string())
    }

    fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = (usize, &Lease, u64, u64)> {
        self.leases.iter().enumerate().filter_map(move |(i, l)| {
            let (s, e) = l.range().ok()?;
            (s < end && start < e).then_some((i, l, s, e))
        })
    }

    /// Reserve `[start, start+count)` for `role`. Refuses any overlap with an existing lease.
    pub fn reserve(
        &mut self,
        id: &str,
        role: Role,
        start: u32,
        count: u32,
        notes: &str,
    ) -> Result<(), String> {
        let (s, e) = (start as u64, start as u64 + count as u64);
        if let Some((_, l, _, _)) = self.overlapping(s, e).next() {
            return Err(format!(
                "seeds {}..{} overlap lease `{}` ({} {}..{})",
                seed_hex(start),
                hex_end(e),
                l.id,
                l.role,
                l.range_start_hex,
                l.range_end_exclusive_hex
            ));
        }
        if self.leases.iter().any(|l| l.id == id) {
            return Err(format!("a lease named `{id}` already exists"));
        }
        self.leases.push(Lease {
            id: id.to_owned(),
            role,
            range_start_hex: seed_hex(start),
            range_end_exclusive_hex: hex_end(e),
            state: LeaseState::Reserved,
            opened_by: None,
            opened_at: None,
            notes: notes.to_owned(),
        });
        Ok(())
    }

    /// Open a block for `role` on behalf of `opener`:
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
        start: u32,
        count: u32,
        opener: &str,
        force: bool,
        now: u64,
    ) -> Result<String, String> {
        let (s, e) = (start as u64, start as u64 + count as u64);
        let mut exact = None;
        for (i, l, ls, le) in self.overlapping(s, e) {
            if l.role != role {
                return Err(format!(
                    "seeds {}..{} overlap {} lease `{}` ({}..{}); a {role} block must not share seeds with {} data",
                    seed_hex(start),
                    hex_end(e),
                    l.role,
                    l.id,
                    l.range_start_hex,
                    l.range_end_exclusive_hex,
                    l.role
                ));
            }
            if (ls, le) == (s, e) {
                exact = Some(i);
            } else if !force {
                return Err(format!(
                    "seeds {}..{} partly overlap {role} lease `{}` ({}..{}); pass --force to read them anyway",
                    seed_hex(start),
                    hex_end(e),
                    l.id,
                    l.range_start_hex,
                    l.range_end_exclusive_hex
                ));
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
                    return Err(format!(
                        "{role} block `{}` ({}..{}) was already opened by `{}`; screen blocks are opened once (pass --force to reuse it, knowing it is no longer fresh)",
                        l.id,
                        l.range_start_hex,
                        l.range_end_exclusive_hex,
                        l.opened_by.as_deref().unwrap_or("?")
                    ));
                }
                if l.state == LeaseState::Reserved {
                    l.state = LeaseState::Opened;
                    l.opened_by = Some(opener.to_owned());
                    l.opened_at = Some(now);
                }
                Ok(l.id.clone())
            }
            None => {
                let id = format!("{role}-{}-{count}", seed_hex(start));
                self.leases.push(Lease {
                    id: id.clone(),
                    role,
                    range_start_hex: seed_hex(start),
                    range_end_exclusive_hex: hex_end(e),
                    state: LeaseState::Opened,
                    opened_by: Some(opener.to_owned()),
                    opened_at: Some(now),
                    notes: String::new(),
                });
                Ok(id)
            }
        }
    }
}

fn hex_end(e: u64) -> String {
    format!("{e:#010x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screen_blocks_open_once() {
        let mut l = Ledger::default();
        l.reserve("train", Role::Training, 0xa530_0000, 1000, "")
            .unwrap();
        // overlapping another role is refused even with force
        let e = l
            .open(Role::Screen, 0xa530_0100, 64, "exp1", true, 1)
            .unwrap_err();
        assert!(e.contains("training"), "{e}");
        let id = l
            .open(Role::Screen, 0xa52f_2140, 256, "runs/a", false, 1)
            .unwrap();
        assert_eq!(id, "screen-0xa52f2140-256");
        // the same opener resumes
        l.open(Role::Screen, 0xa52f_2140, 256, "runs/a", false, 2)
            .unwrap();
        // another opener is refused without force
        assert!(
            l.open(Role::Screen, 0xa52f_2140, 256, "runs/b", false, 3)
                .unwrap_err()
                .contains("already opened")
        );
        l.open(Role::Screen, 0xa52f_2140, 256, "runs/b", true, 3)
            .unwrap();
        // partial overlap with a screen lease
        assert!(
            l.open(Role::Screen, 0xa52f_2150, 256, "runs/c", false, 4)
                .unwrap_err()
                .contains("partly")
        );
        // training and validation blocks may be re-read by other runs
        l.open(Role::Training, 0xa530_0000, 1000, "run-1", false, 5)
            .unwrap();
        l.open(Role::Training, 0xa530_0000, 1000, "run-2", false, 6)
            .unwrap();
        // reserve refuses overlaps
        assert!(
            l.reserve("x", Role::Validation, 0xa52f_2100, 128, "")
                .is_err()
        );
    }

    #[test]
    fn ledger_round_trip() {
        let dir = std::env::temp_dir().join(format!("drop7-ledger-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("leases.json");
        let mut l = Ledger::load(&path).unwrap();
        l.reserve(
            "val",
            Role::Validation,
            0xffff_ff00,
            256,
            "top of the range",
        )
        .unwrap();
        l.save(&path).unwrap();
        let back = Ledger::load(&path).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.leases[0].range_end_exclusive_hex, "0x100000000");
        std::fs::write(&path, "{not json").unwrap();
        assert!(
            Ledger::load(&path)
                .unwrap_err()
                .contains("not a seed ledger")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
