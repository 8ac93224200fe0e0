//! Lazy exits for the network (issue 34, item 3): the incremental material + PSQT score (the
//! hand evaluation's super-lazy tier, a few adds kept on the search stack) decides a
//! quiescence stand-pat before the network's accumulators are brought up to date, when it
//! lies so far outside the window that the net would very likely agree.
//!
//! The residual `r = net − super_lazy` (side to move's view) is measured by `actuary
//! calibrate net-residual` over a pool's searches, per pair of per-side army buckets
//! `(my, opp)` (as the hand evaluation's tables). A cell holds two tail percentiles `lo` and
//! `hi` and the median:
//!
//! ```text
//! super_lazy + lo ≥ beta  → exit, the stand-pat is the lower bound super_lazy + lo
//! super_lazy + hi ≤ alpha → exit, the stand-pat is the upper bound super_lazy + hi
//! ```
//!
//! so each exit is wrong (the net on the other side of the bound) for at most about the tail
//! share of the calibration pool's evaluations in that cell; `calibrate net-residual --check`
//! measures the wrong-exit rate on another pool. Cells with too few samples never exit
//! (their margins are ±[`NEVER`]). The median is the positional estimate quiescence futility
//! uses after an exit (`super_lazy + p50 + QS_FUTILITY_MARGIN`).
//!
//! Unlike the hand evaluation's tiers these margins are not split per side: the net's
//! residual has no per-side structure to exploit, and a bucket pair is as cheap to look up.

use super::{EvalOutcome, Tier};
use std::path::Path;
use std::sync::{Arc, LazyLock};

/// First line of every net lazy-margin file.
pub const NET_TABLES_MAGIC: &str = "actuary-net-lazy-margins v1";

/// The table file the engine is built with (written by `actuary calibrate net-residual`).
pub(crate) const EMBEDDED_NET_TABLES: &str =
    include_str!("../../../../data/chess/net-lazy-margins.txt");

/// The margin of a cell that must never exit: beyond any window. Scores and windows stay
/// within ±32,001 (`INFINITE`) and a material + PSQT score within about ±10,000, so
/// `sl − NEVER < −INFINITE` and `sl + NEVER > INFINITE` always.
pub const NEVER: i32 = 60_000;

/// One bucket pair's residual percentiles, cp (side to move's view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetCell {
    pub lo: i32,
    pub p50: i32,
    pub hi: i32,
    /// Evaluations the percentiles were read from (provenance).
    pub samples: u64,
}

impl NetCell {
    /// A cell that never exits.
    pub const NEVER_EXITS: NetCell = NetCell {
        lo: -NEVER,
        p50: 0,
        hi: NEVER,
        samples: 0,
    };
}

/// The net's lazy-exit margins, `[my][opp]`.
#[derive(Clone, Debug, PartialEq)]
pub struct NetLazyMargins {
    pub cells: [[NetCell; 8]; 8],
    /// The file's comment lines (provenance).
    pub comments: Vec<String>,
}

static EMBEDDED: LazyLock<Arc<NetLazyMargins>> = LazyLock::new(|| {
    Arc::new(
        NetLazyMargins::from_text(EMBEDDED_NET_TABLES)
            .expect("data/chess/net-lazy-margins.txt is checked by the chess tests"),
    )
});

/// Why a net lazy-margin file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NetTablesError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}line {line}: {message}")]
    Line {
        path: String,
        line: usize,
        message: String,
    },
}

impl NetLazyMargins {
    /// The tables compiled into the engine.
    pub fn embedded() -> Arc<NetLazyMargins> {
        Arc::clone(&EMBEDDED)
    }

    /// The exit the super-lazy score `sl` takes in cell `(my, opp)` for the window, if any.
    #[inline]
    pub fn exit(
        &self,
        my: usize,
        opp: usize,
        sl: i32,
        alpha: i32,
        beta: i32,
    ) -> Option<EvalOutcome> {
        let c = &self.cells[my][opp];
        if c.lo > -NEVER {
            let low = sl + c.lo;
            if low >= beta {
                return Some(EvalOutcome {
                    score: low,
                    tier: Tier::SuperLazy,
                    tier_score: sl,
                });
            }
        }
        if c.hi < NEVER {
            let high = sl + c.hi;
            if high <= alpha {
                return Some(EvalOutcome {
                    score: high,
                    tier: Tier::SuperLazy,
                    tier_score: sl,
                });
            }
        }
        None
    }

    /// The net the table was fitted to (`nnue:<checksum>`, from the provenance line `actuary
    /// calibrate net-residual` writes), if the file says.
    pub(crate) fn fitted_to(&self) -> Option<&str> {
        self.comments.iter().find_map(|c| {
            let at = c.find("evaluation nnue:")? + "evaluation ".len();
            let rest = &c[at..];
            Some(rest.split([',', ' ', ';']).next().unwrap_or(rest))
        })
    }

    /// The median residual of cell `(my, opp)`: what the net typically adds to the
    /// super-lazy score.
    #[inline]
    pub(crate) fn p50(&self, my: usize, opp: usize) -> i32 {
        self.cells[my][opp].p50
    }

    /// The file text: magic, `# ` comments, a header, then one line per cell.
    pub fn to_text(&self) -> String {
        let mut s = format!("{NET_TABLES_MAGIC}\n");
        for c in &self.comments {
            s.push_str("# ");
            s.push_str(c);
            s.push('\n');
        }
        s.push_str("# my opp lo p50 hi samples\n");
        for (my, row) in self.cells.iter().enumerate() {
            for (opp, c) in row.iter().enumerate() {
                s.push_str(&format!(
                    "{my} {opp} {} {} {} {}\n",
                    c.lo, c.p50, c.hi, c.samples
                ));
            }
        }
        s
    }

    /// Parse a table file: every one of the 64 cells exactly once, `lo ≤ p50 ≤ hi`, margins
    /// within ±[`NEVER`]. Errors name the line.
    pub fn from_text(text: &str) -> Result<Self, NetTablesError> {
        let err = |line: usize, message: String| NetTablesError::Line {
            path: String::new(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, l)) if l.trim() == NET_TABLES_MAGIC => {}
            _ => return Err(err(1, format!("expected `{NET_TABLES_MAGIC}`"))),
        }
        let mut cells = [[None::<NetCell>; 8]; 8];
        let mut comments = Vec::new();
        for (i, l) in lines {
            let n = i + 1;
            let l = l.trim();
            if l.is_empty() {
                continue;
            }
            if let Some(c) = l.strip_prefix('#') {
                let c = c.trim();
                if c != "my opp lo p50 hi samples" {
                    comments.push(c.to_string());
                }
                continue;
            }
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 6 {
                return Err(err(n, format!("expected 6 fields, got {}", f.len())));
            }
            let bucket = |s: &str| {
                s.parse::<usize>()
                    .ok()
                    .filter(|&b| b < 8)
                    .ok_or_else(|| err(n, format!("`{s}` is not a bucket 0..=7")))
            };
            let cp = |s: &str| {
                s.parse::<i32>()
                    .ok()
                    .filter(|v| v.abs() <= NEVER)
                    .ok_or_else(|| err(n, format!("`{s}` is not a margin within ±{NEVER}")))
            };
            let (my, opp) = (bucket(f[0])?, bucket(f[1])?);
            let (lo, p50, hi) = (cp(f[2])?, cp(f[3])?, cp(f[4])?);
            let samples = f[5]
                .parse::<u64>()
                .map_err(|_| err(n, format!("`{}` is not a sample count", f[5])))?;
            if !(lo <= p50 && p50 <= hi) {
                return Err(err(n, format!("need lo ≤ p50 ≤ hi, got {lo} {p50} {hi}")));
            }
            if cells[my][opp].is_some() {
                return Err(err(n, format!("cell {my} {opp} given twice")));
            }
            cells[my][opp] = Some(NetCell {
                lo,
                p50,
                hi,
                samples,
            });
        }
        let mut out = [[NetCell::NEVER_EXITS; 8]; 8];
        for my in 0..8 {
            for opp in 0..8 {
                out[my][opp] = cells[my][opp].ok_or_else(|| {
                    err(text.lines().count(), format!("cell {my} {opp} is missing"))
                })?;
            }
        }
        Ok(Self {
            cells: out,
            comments,
        })
    }

    /// Read a table file.
    pub fn load(path: &Path) -> Result<Self, NetTablesError> {
        let text = crate::datafile::read_data_file(path).map_err(|e| NetTablesError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_text(&text).map_err(|e| match e {
            NetTablesError::Line { line, message, .. } => NetTablesError::Line {
                path: format!("{}: ", path.display()),
                line,
                message,
            },
            e => e,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(lo: i32, p50: i32, hi: i32) -> NetLazyMargins {
        NetLazyMargins {
            cells: [[NetCell {
                lo,
                p50,
                hi,
                samples: 7,
            }; 8]; 8],
            comments: vec!["test".into()],
        }
    }

    #[test]
    fn the_embedded_tables_parse_and_round_trip() {
        let t = NetLazyMargins::from_text(EMBEDDED_NET_TABLES).expect("embedded tables parse");
        assert_eq!(NetLazyMargins::from_text(&t.to_text()).unwrap(), t);
        // Calibrated, not placeholders: the mid-game cells exit somewhere, with lo < 0 < hi.
        let c = t.cells[5][5];
        assert!(c.lo < 0 && c.hi > 0 && c.hi < NEVER, "{c:?}");
    }

    /// The margins are the embedded net's: a new net needs its own (`actuary calibrate
    /// net-residual`, 20 s), and this fails until they are re-fitted.
    #[test]
    fn the_embedded_tables_were_fitted_to_the_embedded_net() {
        let t = NetLazyMargins::embedded();
        let id = crate::nnue::embedded_id();
        assert!(
            t.comments
                .iter()
                .any(|c| c.contains(&format!("evaluation {id},"))),
            "data/chess/net-lazy-margins.txt was not fitted to {id}: re-run the command in its header"
        );
    }

    #[test]
    fn exits_take_the_bound_on_the_right_side() {
        let t = table(-100, 10, 120);
        // sl − 100 ≥ beta: fail high with the pessimistic bound.
        let o = t.exit(3, 4, 400, 0, 300).unwrap();
        assert_eq!((o.score, o.tier, o.tier_score), (300, Tier::SuperLazy, 400));
        // sl + 120 ≤ alpha: fail low with the optimistic bound.
        let o = t.exit(3, 4, -220, -100, 50).unwrap();
        assert_eq!((o.score, o.tier_score), (-100, -220));
        // Inside the margins: no exit.
        assert!(t.exit(3, 4, 399, 0, 300).is_none());
        assert!(t.exit(3, 4, -219, -100, 50).is_none());
        // A cell without samples never exits, whatever the window.
        let never = NetLazyMargins {
            cells: [[NetCell::NEVER_EXITS; 8]; 8],
            comments: vec![],
        };
        assert!(never.exit(0, 0, 10_000, -32_001, -32_000).is_none());
        assert!(never.exit(0, 0, -10_000, 32_000, 32_001).is_none());
    }

    #[test]
    fn damaged_files_are_refused_naming_the_line() {
        let good = table(-50, 0, 50).to_text();
        assert!(NetLazyMargins::from_text(&good).is_ok());
        let bad_magic = good.replacen("v1", "v9", 1);
        assert!(NetLazyMargins::from_text(&bad_magic).is_err());
        let missing: String = good
            .lines()
            .filter(|l| !l.starts_with("7 7 "))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = NetLazyMargins::from_text(&missing).unwrap_err();
        assert!(e.to_string().contains("cell 7 7 is missing"), "{e}");
        let twice = format!("{good}0 0 -1 0 1 3\n");
        assert!(
            NetLazyMargins::from_text(&twice)
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        let unordered = good.replacen("0 0 -50 0 50 7", "0 0 60 0 50 7", 1);
        let e = NetLazyMargins::from_text(&unordered).unwrap_err();
        assert!(e.to_string().contains("line 4"), "{e}");
        let far = good.replacen("0 0 -50 0 50 7", "0 0 -50 0 60001 7", 1);
        assert!(NetLazyMargins::from_text(&far).is_err());
    }
}
