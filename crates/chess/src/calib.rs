//! Calibration instrumentation of lazy evaluation (issue 13): a [`Recorder`] a search worker
//! carries only while `actuary calibrate` runs. At every evaluation call it records
//!
//! * the per-side terms each cheap tier missed ([`crate::eval::side_terms`]) into raw
//!   histograms by bucket (`residual`);
//! * at every early exit, whether the full evaluation lands on the other side of the bound
//!   (`marginsafety`), per material bucket and per per-side bucket pair;
//! * which tier decided, per material bucket (`exitrate`).
//!
//! Everything is also kept per pool position ([`PositionRecord`]), so bounds can resample
//! positions (the search tree of one position is one cluster, not independent draws).
//!
//! The whole module, and the hook in the search, exist only with the `calibration` cargo
//! feature (on by default); without it the engine is the same minus this code.

use crate::board::{Board, Color};
use crate::eval::{EvalOutcome, Evaluator, Material, Tier, side_bucket, side_terms};
use evidence::Histogram;
use std::collections::BTreeMap;

/// Residual histograms cover −`HIST_RANGE`..`HIST_RANGE` centipawns in unit bins (values
/// outside go to the under/overflow slots, which keep min and max).
pub const HIST_RANGE: i64 = 1500;

/// The histogram families, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Per side, by own bucket: what the lazy tier misses besides the king term.
    Lazy = 0,
    /// Per side, by own bucket: what the super-lazy tier misses besides the king term.
    SuperLazy = 1,
    /// Per side, by the attacker's bucket: the side's own king term.
    King = 2,
    /// Per node, by material bucket: full − lazy from the side to move's view.
    MissedLazy = 3,
    /// Per node, by material bucket: full − super-lazy from the side to move's view.
    MissedSuperLazy = 4,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Lazy,
        Kind::SuperLazy,
        Kind::King,
        Kind::MissedLazy,
        Kind::MissedSuperLazy,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lazy => "lazy",
            Kind::SuperLazy => "superlazy",
            Kind::King => "king",
            Kind::MissedLazy => "missed_lazy",
            Kind::MissedSuperLazy => "missed_superlazy",
        }
    }
    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
    /// How the bucket index of this family is defined.
    pub fn bucketing(self) -> &'static str {
        match self {
            Kind::Lazy | Kind::SuperLazy => "own side bucket (army/4)",
            Kind::King => "attacker's side bucket (army/4)",
            Kind::MissedLazy | Kind::MissedSuperLazy => "material bucket (both armies/8)",
        }
    }
}

/// Index of a cheap tier in the safety tables: 0 super-lazy, 1 lazy.
pub fn cheap_index(tier: Tier) -> usize {
    if tier == Tier::SuperLazy { 0 } else { 1 }
}

/// Exits and wrong exits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub exits: u64,
    pub wrong: u64,
}

impl Count {
    fn add(&mut self, o: Count) {
        self.exits += o.exits;
        self.wrong += o.wrong;
    }
}

/// Safety counts: `[cheap tier][material bucket]` and `[cheap tier][my][opp]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Safety {
    pub by_material: [[Count; 8]; 2],
    pub by_pair: [[[Count; 8]; 8]; 2],
}

impl Safety {
    pub fn merge(&mut self, o: &Safety) {
        for t in 0..2 {
            for b in 0..8 {
                self.by_material[t][b].add(o.by_material[t][b]);
                for c in 0..8 {
                    self.by_pair[t][b][c].add(o.by_pair[t][b][c]);
                }
            }
        }
    }
}

/// What one pool position's search contributed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PositionRecord {
    /// Index in the pool (0-based) and the pool file's line.
    pub index: usize,
    pub line: usize,
    pub nodes: u64,
    /// Raw samples per `[kind][bucket]` (how much of each histogram this tree is).
    pub sample_counts: [[u64; 8]; 5],
    /// Sparse raw samples, (kind, bucket, value) → count; kept only on request.
    pub samples: BTreeMap<(Kind, u8, i32), u64>,
    pub safety: Safety,
    /// `[material bucket][tier]` evaluation calls decided by each tier.
    pub exits: [[u64; 3]; 8],
}

/// The per-thread instrumentation.
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Record residual samples (the other tallies are always kept).
    pub residual: bool,
    /// Keep the sparse per-position samples too (for `positions.txt`).
    pub per_position_samples: bool,
    pub current: PositionRecord,
    /// The histograms of every position this recorder saw, `[kind][bucket]`.
    pub hist: Vec<[Histogram; 8]>,
}

/// An empty set of histograms, `[kind][bucket]`.
pub fn empty_histograms() -> Vec<[Histogram; 8]> {
    let h = Histogram::integers(-HIST_RANGE, HIST_RANGE).expect("valid range");
    Kind::ALL
        .iter()
        .map(|_| std::array::from_fn(|_| h.clone()))
        .collect()
}

impl Recorder {
    pub fn new(residual: bool, per_position_samples: bool) -> Self {
        Self {
            residual,
            per_position_samples: residual && per_position_samples,
            current: PositionRecord::default(),
            hist: if residual {
                empty_histograms()
            } else {
                Vec::new()
            },
        }
    }

    /// Start recording a new pool position.
    pub fn begin(&mut self, index: usize, line: usize) {
        self.current = PositionRecord {
            index,
            line,
            ..Default::default()
        };
    }

    /// The record of the position just searched.
    pub fn finish(&mut self, nodes: u64) -> PositionRecord {
        let mut r = std::mem::take(&mut self.current);
        r.nodes = nodes;
        r
    }

    #[inline]
    fn sample(&mut self, kind: Kind, bucket: usize, value: i32) {
        self.hist[kind as usize][bucket].add(value as f64);
        self.current.sample_counts[kind as usize][bucket] += 1;
        if self.per_position_samples {
            *self
                .current
                .samples
                .entry((kind, bucket as u8, value))
                .or_default() += 1;
        }
    }

    /// One evaluation call of the search: `out` is what the search used; `alpha`/`beta`
    /// the window it was asked with.
    pub fn observe(
        &mut self,
        board: &Board,
        mat: &Material,
        alpha: i32,
        beta: i32,
        out: &EvalOutcome,
        eval: &mut Evaluator,
    ) {
        let stm = board.side_to_move();
        let (wa, ba) = (mat.army(Color::White), mat.army(Color::Black));
        let mb = (((wa + ba) / 8).min(7)) as usize;
        self.current.exits[mb][out.tier as usize] += 1;
        let need_full = self.residual || out.tier != Tier::Full;
        if !need_full {
            return;
        }
        let full = if out.tier == Tier::Full {
            out.score
        } else {
            eval.tier(board, mat, Tier::Full)
        };
        if out.tier != Tier::Full {
            let my = side_bucket(mat.army(stm));
            let opp = side_bucket(mat.army(!stm));
            let high = out.score >= beta;
            let wrong = if high { full < beta } else { full > alpha };
            let t = cheap_index(out.tier);
            let c = Count {
                exits: 1,
                wrong: wrong as u64,
            };
            self.current.safety.by_material[t][mb].add(c);
            self.current.safety.by_pair[t][my][opp].add(c);
        }
        if !self.residual {
            return;
        }
        let terms = side_terms(board, mat.phase());
        let bucket = [side_bucket(wa), side_bucket(ba)];
        for c in 0..2 {
            self.sample(Kind::Lazy, bucket[c], terms.lazy[c]);
            self.sample(Kind::SuperLazy, bucket[c], terms.super_lazy[c]);
            self.sample(Kind::King, bucket[1 - c], terms.king[c]);
        }
        let lazy = eval.tier(board, mat, Tier::Lazy);
        let sl = eval.tier(board, mat, Tier::SuperLazy);
        self.sample(Kind::MissedLazy, mb, full - lazy);
        self.sample(Kind::MissedSuperLazy, mb, full - sl);
    }
}

/// Everything a calibration run measured, merged over positions.
#[derive(Clone, Debug)]
pub struct Totals {
    /// `[kind][bucket]`.
    pub hist: Vec<[Histogram; 8]>,
    pub safety: Safety,
    pub exits: [[u64; 3]; 8],
    pub nodes: u64,
    pub positions: usize,
}

impl Totals {
    pub fn new() -> Self {
        Self {
            hist: empty_histograms(),
            safety: Safety::default(),
            exits: [[0; 3]; 8],
            nodes: 0,
            positions: 0,
        }
    }

    /// Add a recorder's histograms (exact: counts add).
    pub fn merge_histograms(&mut self, hist: &[[Histogram; 8]]) {
        for (mine, theirs) in self.hist.iter_mut().zip(hist) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.merge(b).expect("same binning");
            }
        }
    }

    /// Add one position's safety and exit tallies (histograms come from
    /// [`Totals::merge_histograms`]).
    pub fn add(&mut self, r: &PositionRecord) {
        self.safety.merge(&r.safety);
        for b in 0..8 {
            for t in 0..3 {
                self.exits[b][t] += r.exits[b][t];
            }
        }
        self.nodes += r.nodes;
        self.positions += 1;
    }
}

impl Default for Totals {
    fn default() -> Self {
        Self::new()
    }
}
