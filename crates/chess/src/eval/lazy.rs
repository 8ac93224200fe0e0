//! Lazy-exit margins (docs/design/chess-DESIGN.md §2) and the generated table file that holds them.
//!
//! With the side to move "my" and the other side "opp", per-side buckets `min(7, army/4)`:
//!
//! ```text
//! margin_a = max0((king_hi[my] − king_lo[opp]) + (resid_hi[opp] − resid_lo[my]))   score − margin_a ≥ beta → exit
//! margin_b = max0((king_hi[opp] − king_lo[my]) + (resid_hi[my] − resid_lo[opp]))   score + margin_b ≤ alpha → exit
//! ```
//!
//! The king tables are percentiles of a side's own king term (shelter minus the enemy's
//! attack, from the king owner's view) bucketed by the **attacker's** army, so `king_*[my]`
//! describes the opponent's king under my attack. The residual tables are percentiles of a
//! side's other missing terms by the side's **own** army, one pair of tables per cheap tier.
//! With those conventions the two formulas are the worst case of
//! `full − tier = (king[me] − king[opp]) + (resid[me] − resid[opp])` (see `eval::side_terms`).
//! Both margins are precomputed per tier and bucket pair, so an exit test is two lookups.
//!
//! The p50 tables give the typical value of the missing terms (not a bound): quiescence
//! futility after an early exit uses `tier_score + positional + qs_base[tier]`.
//!
//! The engine embeds `data/chess/lazy-margins.txt`, written by `actuary calibrate tables`;
//! [`LazyMargins::load`] reads another such file at run time (UCI `LazyTables`, `--tables`).

use super::{EvalOutcome, Tier};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

/// First line of every table file.
pub(crate) const TABLES_MAGIC: &str = "actuary-lazy-margins v1";

/// The table file the engine is built with.
pub(crate) const EMBEDDED_TABLES: &str = include_str!("../../../../data/chess/lazy-margins.txt");

/// Index of a cheap tier in the residual tables.
#[inline]
fn resid_index(tier: Tier) -> usize {
    if tier == Tier::SuperLazy { 1 } else { 0 }
}

/// The margin tables of both cheap tiers, and the precomputed margins.
#[derive(Clone, Debug, PartialEq)]
pub struct LazyMargins {
    /// King term percentiles by the attacker's bucket.
    pub king_lo: [i32; 8],
    pub king_hi: [i32; 8],
    pub king_p50: [i32; 8],
    /// Residual percentiles by own bucket; `[0]` lazy tier, `[1]` super-lazy tier.
    pub resid_lo: [[i32; 8]; 2],
    pub resid_hi: [[i32; 8]; 2],
    pub resid_p50: [[i32; 8]; 2],
    /// Low percentile of each bucket's matched pair (the high one is `100 − low`);
    /// provenance only.
    pub pair_lo: [f64; 8],
    /// Quiescence futility base margin by tier (super-lazy, lazy, full).
    pub qs_base: [i32; 3],
    /// The file's comment lines (provenance).
    pub comments: Vec<String>,
    /// `[resid index][my][opp]`.
    margin_a: [[[i32; 8]; 8]; 2],
    margin_b: [[[i32; 8]; 8]; 2],
    positional: [[[i32; 8]; 8]; 2],
}

/// The embedded tables, parsed once.
static EMBEDDED: LazyLock<Arc<LazyMargins>> = LazyLock::new(|| {
    Arc::new(
        LazyMargins::from_text(EMBEDDED_TABLES)
            .expect("data/chess/lazy-margins.txt is checked by the chess tests"),
    )
});

/// Why a table file was refused.
#[derive(Debug, thiserror::Error)]
pub enum TablesError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}line {line}: {message}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Line {
        path: Option<PathBuf>,
        line: usize,
        message: String,
    },
}

impl TablesError {
    fn line(line: usize, message: impl Into<String>) -> Self {
        Self::Line {
            path: None,
            line,
            message: message.into(),
        }
    }
    fn in_file(self, p: &Path) -> Self {
        match self {
            Self::Line { line, message, .. } => Self::Line {
                path: Some(p.to_owned()),
                line,
                message,
            },
            e => e,
        }
    }
}

const KEYS: [&str; 11] = [
    "pair_lo",
    "king_lo",
    "king_hi",
    "king_p50",
    "lazy_lo",
    "lazy_hi",
    "lazy_p50",
    "superlazy_lo",
    "superlazy_hi",
    "superlazy_p50",
    "qs_base",
];

impl LazyMargins {
    /// The tables compiled into the engine.
    pub fn embedded() -> Arc<LazyMargins> {
        Arc::clone(&EMBEDDED)
    }

    /// Tables from their parts; computes the per-pair margins.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        king: [[i32; 8]; 3],
        lazy: [[i32; 8]; 3],
        super_lazy: [[i32; 8]; 3],
        pair_lo: [f64; 8],
        qs_base: [i32; 3],
        comments: Vec<String>,
    ) -> Self {
        let mut m = Self {
            king_lo: king[0],
            king_hi: king[1],
            king_p50: king[2],
            resid_lo: [lazy[0], super_lazy[0]],
            resid_hi: [lazy[1], super_lazy[1]],
            resid_p50: [lazy[2], super_lazy[2]],
            pair_lo,
            qs_base,
            comments,
            margin_a: [[[0; 8]; 8]; 2],
            margin_b: [[[0; 8]; 8]; 2],
            positional: [[[0; 8]; 8]; 2],
        };
        for t in 0..2 {
            for my in 0..8 {
                for opp in 0..8 {
                    m.margin_a[t][my][opp] = ((m.king_hi[my] - m.king_lo[opp])
                        + (m.resid_hi[t][opp] - m.resid_lo[t][my]))
                        .max(0);
                    m.margin_b[t][my][opp] = ((m.king_hi[opp] - m.king_lo[my])
                        + (m.resid_hi[t][my] - m.resid_lo[t][opp]))
                        .max(0);
                    m.positional[t][my][opp] = (m.king_p50[opp] - m.king_p50[my])
                        + (m.resid_p50[t][my] - m.resid_p50[t][opp]);
                }
            }
        }
        m
    }

    /// Margin guarding the fail-high exit `score − margin_a ≥ beta`.
    #[cfg(test)]
    pub(crate) fn margin_a(&self, tier: Tier, my: usize, opp: usize) -> i32 {
        self.margin_a[resid_index(tier)][my][opp]
    }

    /// Margin guarding the fail-low exit `score + margin_b ≤ alpha`.
    #[cfg(test)]
    pub(crate) fn margin_b(&self, tier: Tier, my: usize, opp: usize) -> i32 {
        self.margin_b[resid_index(tier)][my][opp]
    }

    /// Median estimate of what `tier` misses, from the side to move's view:
    /// `(king_p50[opp] − king_p50[my]) + (resid_p50[my] − resid_p50[opp])`.
    #[inline]
    pub(crate) fn positional(&self, tier: Tier, my: usize, opp: usize) -> i32 {
        if tier == Tier::Full {
            return 0;
        }
        self.positional[resid_index(tier)][my][opp]
    }

    /// The exit `tier` takes with `score`, if any.
    #[inline]
    pub fn exit(
        &self,
        tier: Tier,
        my: usize,
        opp: usize,
        score: i32,
        alpha: i32,
        beta: i32,
    ) -> Option<EvalOutcome> {
        let t = resid_index(tier);
        let hi = score - self.margin_a[t][my][opp];
        if hi >= beta {
            return Some(EvalOutcome {
                score: hi,
                tier,
                tier_score: score,
            });
        }
        let lo = score + self.margin_b[t][my][opp];
        if lo <= alpha {
            return Some(EvalOutcome {
                score: lo,
                tier,
                tier_score: score,
            });
        }
        None
    }

    /// Parse a table file. Errors name the line.
    pub(crate) fn from_text(text: &str) -> Result<Self, TablesError> {
        // Sealed like the pruning tables: a file cut short would otherwise parse, and the
        // margins it lost would be "missing" only if a whole key went (issue 36).
        let text = crate::datafile::unseal(text)
            .map_err(|m| TablesError::line(text.lines().count(), m))?;
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, l)) if l.trim() == TABLES_MAGIC => {}
            Some((_, l)) => {
                return Err(TablesError::line(
                    1,
                    format!(
                        "not a lazy-margin table file (expected `{TABLES_MAGIC}`, found `{l}`)"
                    ),
                ));
            }
            None => return Err(TablesError::line(0, "empty file")),
        }
        let mut comments = Vec::new();
        let mut ints: [Option<[i32; 8]>; 9] = [None; 9];
        let mut pair_lo: Option<[f64; 8]> = None;
        let mut qs_base: Option<[i32; 3]> = None;
        for (i, line) in lines {
            let no = i + 1;
            let t = line.trim();
            if let Some(c) = t.strip_prefix('#') {
                comments.push(c.trim().to_owned());
                continue;
            }
            if t.is_empty() {
                continue;
            }
            let mut f = t.split_whitespace();
            let key = f.next().unwrap_or_default();
            let vals: Vec<&str> = f.collect();
            let k = KEYS
                .iter()
                .position(|&k| k == key)
                .ok_or_else(|| TablesError::line(no, format!("unknown key `{key}`")))?;
            let want = if key == "qs_base" { 3 } else { 8 };
            if vals.len() != want {
                return Err(TablesError::line(
                    no,
                    format!("`{key}` needs {want} values, found {}", vals.len()),
                ));
            }
            let dup = || TablesError::line(no, format!("`{key}` given twice"));
            match key {
                "pair_lo" => {
                    let mut a = [0.0; 8];
                    for (slot, v) in a.iter_mut().zip(&vals) {
                        *slot = v
                            .parse::<f64>()
                            .ok()
                            .filter(|p| (0.0..=50.0).contains(p))
                            .ok_or_else(|| {
                                TablesError::line(no, format!("`{v}` is not a percentile in 0..50"))
                            })?;
                    }
                    if pair_lo.replace(a).is_some() {
                        return Err(dup());
                    }
                }
                _ => {
                    let mut a = [0i32; 8];
                    for (slot, v) in a.iter_mut().zip(&vals) {
                        *slot = v
                            .parse::<i32>()
                            .ok()
                            .filter(|x| x.abs() <= 10_000)
                            .ok_or_else(|| {
                                TablesError::line(
                                    no,
                                    format!("`{v}` is not a centipawn value within ±10000"),
                                )
                            })?;
                    }
                    if key == "qs_base" {
                        if qs_base.replace([a[0], a[1], a[2]]).is_some() {
                            return Err(dup());
                        }
                    } else if ints[k - 1].replace(a).is_some() {
                        return Err(dup());
                    }
                }
            }
        }
        let end = text.lines().count();
        let need = |k: usize| {
            ints[k - 1].ok_or_else(|| TablesError::line(end, format!("missing `{}`", KEYS[k])))
        };
        let tables = [
            [need(1)?, need(2)?, need(3)?],
            [need(4)?, need(5)?, need(6)?],
            [need(7)?, need(8)?, need(9)?],
        ];
        for (name, t) in ["king", "lazy", "superlazy"].iter().zip(&tables) {
            if let Some(b) = (0..8).find(|&b| t[0][b] > t[1][b]) {
                return Err(TablesError::line(
                    end,
                    format!(
                        "{name}_lo[{b}] = {} is above {name}_hi[{b}] = {}",
                        t[0][b], t[1][b]
                    ),
                ));
            }
        }
        let pair_lo =
            pair_lo.ok_or_else(|| TablesError::line(end, "missing `pair_lo`".to_string()))?;
        let qs_base =
            qs_base.ok_or_else(|| TablesError::line(end, "missing `qs_base`".to_string()))?;
        Ok(Self::new(
            tables[0], tables[1], tables[2], pair_lo, qs_base, comments,
        ))
    }

    /// Read a table file.
    pub fn load(path: &Path) -> Result<Self, TablesError> {
        let text = crate::datafile::read_data_file(path).map_err(|source| TablesError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_text(&text).map_err(|e| e.in_file(path))
    }

    /// The file form (comments first, then one key per line, then the `end` seal).
    pub fn to_text(&self) -> String {
        let row = |v: &[i32]| {
            v.iter()
                .map(|x| format!("{x:>5}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut s = format!("{TABLES_MAGIC}\n");
        for c in &self.comments {
            s.push_str(&format!("# {c}\n").replace("#  \n", "#\n"));
        }
        s.push_str(&format!(
            "pair_lo       {}\n",
            self.pair_lo
                .iter()
                .map(|p| format!("{p:>5}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
        let named: [(&str, &[i32; 8]); 9] = [
            ("king_lo", &self.king_lo),
            ("king_hi", &self.king_hi),
            ("king_p50", &self.king_p50),
            ("lazy_lo", &self.resid_lo[0]),
            ("lazy_hi", &self.resid_hi[0]),
            ("lazy_p50", &self.resid_p50[0]),
            ("superlazy_lo", &self.resid_lo[1]),
            ("superlazy_hi", &self.resid_hi[1]),
            ("superlazy_p50", &self.resid_p50[1]),
        ];
        for (k, v) in named {
            s.push_str(&format!("{k:<13} {}\n", row(v)));
        }
        s.push_str(&format!("{:<13} {}\n", "qs_base", row(&self.qs_base)));
        crate::datafile::seal(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_tables_parse_and_round_trip() {
        let m = LazyMargins::from_text(EMBEDDED_TABLES).unwrap();
        assert_eq!(LazyMargins::from_text(&m.to_text()).unwrap(), m);
        assert!(m.margin_a(Tier::Lazy, 7, 7) >= 0);
        assert_eq!(m.qs_base[2], crate::search::params::QS_FUTILITY_MARGIN);
    }

    #[test]
    fn margins_follow_design_formula() {
        // Hand-worked: king lo/hi = −b/+2b, lazy resid lo/hi = −(10+b)/(20+b).
        let ramp = |k: i32, c: i32| std::array::from_fn(|b| c + k * b as i32);
        let m = LazyMargins::new(
            [ramp(-1, 0), ramp(2, 0), [0; 8]],
            [ramp(-1, -10), ramp(1, 20), [0; 8]],
            [[-100; 8], [100; 8], [0; 8]],
            [2.0; 8],
            [300, 200, 150],
            vec![],
        );
        // my = 3, opp = 5: a = (king_hi[3] − king_lo[5]) + (resid_hi[5] − resid_lo[3])
        //                    = (6 + 5) + (25 + 13) = 49
        assert_eq!(m.margin_a(Tier::Lazy, 3, 5), 49);
        // b = (king_hi[5] − king_lo[3]) + (resid_hi[3] − resid_lo[5]) = (10 + 3) + (23 + 15) = 51
        assert_eq!(m.margin_b(Tier::Lazy, 3, 5), 51);
        assert_eq!(m.margin_a(Tier::SuperLazy, 0, 0), 200);
        let hi = m.exit(Tier::Lazy, 3, 5, 149, -1000, 100).unwrap();
        assert_eq!((hi.score, hi.tier_score), (100, 149));
        assert!(m.exit(Tier::Lazy, 3, 5, 148, -1000, 100).is_none());
        let lo = m.exit(Tier::Lazy, 3, 5, -151, -100, 1000).unwrap();
        assert_eq!(lo.score, -100);
        assert!(m.exit(Tier::Lazy, 3, 5, -150, -100, 1000).is_none());
    }

    #[test]
    fn bad_files_name_the_line() {
        let sealed = LazyMargins::from_text(EMBEDDED_TABLES).unwrap().to_text();
        // Damage after the seal was written: refused whatever the damage.
        let cut = &sealed[..sealed.len() - 40];
        let e = LazyMargins::from_text(cut).unwrap_err().to_string();
        assert!(e.contains("cut short") || e.contains("`end`"), "{e}");
        let changed = sealed.replacen("qs_base", "qs_basf", 1);
        let e = LazyMargins::from_text(&changed).unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
        // Bad content under a valid seal: the line is named.
        let good = crate::datafile::unseal(&sealed).unwrap().to_owned();
        let cases = [
            (
                good.replacen("\nking_hi ", "\nking_hx ", 1),
                "unknown key `king_hx`",
            ),
            (good.replacen(TABLES_MAGIC, "something else", 1), "line 1:"),
            (
                good.lines()
                    .filter(|l| !l.starts_with("qs_base"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                "missing `qs_base`",
            ),
            (
                good.replacen("\nqs_base ", "\nqs_base 1 ", 1),
                "needs 3 values",
            ),
        ];
        for (text, want) in cases {
            let e = LazyMargins::from_text(&crate::datafile::seal(&text))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
        let e = LazyMargins::load(Path::new("/nonexistent/t.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/t.txt"), "{e}");
    }
}
