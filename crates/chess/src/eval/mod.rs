//! Hand-crafted tapered evaluation, organised as the three tiers of docs/design/chess-DESIGN.md §2.
//!
//! * **super-lazy**: material (with piece-square tables, which are part of the material
//!   accumulation and cost nothing extra) — no pawn-structure lookup at all;
//! * **lazy**: + pawn structure (pawn hash), passed pawns with king distances, bad trade,
//!   bishop pair — still no attack generation;
//! * **full**: + mobility, king safety, threats, trapped pieces, rook files, tempo.
//!
//! Every tier is a function. The super-lazy tier is kept incrementally by the search
//! ([`material::Material`]), so its exit costs a few adds and two table lookups.
//! [`Evaluator::bounded`] evaluates tier by tier and stops at the first tier whose score
//! decides the node against `(alpha, beta)` with the margins of [`lazy::LazyMargins`]
//! (tables measured by `actuary calibrate` and embedded from `data/chess/lazy-margins.txt`);
//! [`side_terms`] splits what the cheap tiers miss into the per-side pieces calibration
//! histograms (docs/design/chess-DESIGN.md §2).

pub mod lazy;
pub(crate) mod material;
pub mod netlazy;
pub mod params;
pub(crate) mod pawns;
pub(crate) mod pst;
pub mod terms;
pub mod trace;

pub use lazy::LazyMargins;
pub use material::Material;

use crate::board::{Board, Color, Piece};
use params::p;
use pawns::PawnTable;
pub use pst::PHASE_MAX;
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};
use trace::{NoTrace, Side, Tracer};

/// A (middlegame, endgame) score pair, interpolated by game phase at the end.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct S {
    pub mg: i32,
    pub eg: i32,
}

impl S {
    pub const fn new(mg: i32, eg: i32) -> Self {
        Self { mg, eg }
    }
}
impl Add for S {
    type Output = S;
    fn add(self, o: S) -> S {
        S::new(self.mg + o.mg, self.eg + o.eg)
    }
}
impl Sub for S {
    type Output = S;
    fn sub(self, o: S) -> S {
        S::new(self.mg - o.mg, self.eg - o.eg)
    }
}
impl AddAssign for S {
    fn add_assign(&mut self, o: S) {
        *self = *self + o;
    }
}
impl SubAssign for S {
    fn sub_assign(&mut self, o: S) {
        *self = *self - o;
    }
}
impl Neg for S {
    type Output = S;
    fn neg(self) -> S {
        S::new(-self.mg, -self.eg)
    }
}
impl Mul<i32> for S {
    type Output = S;
    fn mul(self, k: i32) -> S {
        S::new(self.mg * k, self.eg * k)
    }
}

/// Which evaluation tier to compute (docs/design/chess-DESIGN.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    SuperLazy = 0,
    Lazy = 1,
    Full = 2,
}

/// Army scaler of one side: non-pawn material in "pawn units" N=B=3, R=5, Q=9, capped at 31
/// (the opening army 2N+2B+2R+Q is exactly 31).
#[inline]
pub fn army_scaler(board: &Board, color: Color) -> u32 {
    let c = board.colors(color);
    let n = (board.pieces(Piece::Knight) & c).len() + (board.pieces(Piece::Bishop) & c).len();
    let r = (board.pieces(Piece::Rook) & c).len();
    let q = (board.pieces(Piece::Queen) & c).len();
    (3 * n + 5 * r + 9 * q).min(31)
}

/// Per-side bucket used by the margin tables: `min(7, scaler / 4)`.
#[inline]
pub fn side_bucket(scaler: u32) -> usize {
    (scaler / 4).min(7) as usize
}

/// Combined "material bucket" used for reports: `(white + black scaler) / 8`, 0..7.
#[inline]
pub fn material_bucket(board: &Board) -> usize {
    ((army_scaler(board, Color::White) + army_scaler(board, Color::Black)) / 8).min(7) as usize
}

/// Unscaled accumulation of an evaluation, White minus Black, before tapering.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Accum {
    pub material: S,
    pub pawns: S,
    pub king: S,
    pub residual: S,
    pub phase: i32,
}

impl Accum {
    pub(crate) fn total(&self) -> S {
        self.material + self.pawns + self.king + self.residual
    }
}

/// Material + piece-square tables from scratch, each piece reported to `t` (the search keeps
/// the same sum incrementally in [`Material`]).
pub(crate) fn traced_material<T: Tracer>(board: &Board, t: &mut T) -> S {
    let mut total = S::default();
    for color in [Color::White, Color::Black] {
        let mut s = Side::new(color, t);
        for piece in Piece::ALL {
            for sq in board.colored_pieces(color, piece) {
                let idx = if color == Color::White {
                    sq as usize
                } else {
                    sq as usize ^ 56
                };
                s.add(p!(PST[piece as usize][idx]), 1);
            }
        }
        if color == Color::White {
            total += s.s;
        } else {
            total -= s.s;
        }
    }
    total
}

fn sq_distance(a: usize, b: usize) -> i32 {
    let df = (a % 8) as i32 - (b % 8) as i32;
    let dr = (a / 8) as i32 - (b / 8) as i32;
    df.abs().max(dr.abs())
}

/// Passers against kings and the bishop pair of `color` (from `color`'s view); `passed`
/// are its passed pawns.
#[inline]
fn lazy_side_extra<T: Tracer>(board: &Board, color: Color, mut passed: u64, t: &mut T) -> S {
    let mut extra = Side::new(color, t);
    let our_king = board.king(color) as usize;
    let their_king = board.king(!color) as usize;
    while passed != 0 {
        let sq = passed.trailing_zeros() as usize;
        passed &= passed - 1;
        let stop = if color == Color::White {
            sq + 8
        } else {
            sq - 8
        };
        let rel_rank = (if color == Color::White {
            sq / 8
        } else {
            7 - sq / 8
        }) as i32;
        let weight = (rel_rank - 1).max(0);
        let dist = sq_distance(their_king, stop) * 2 - sq_distance(our_king, stop);
        extra.add(p!(PASSER_KING_DIST), dist * weight);
        if board.occupied().0 & (1u64 << stop) != 0 {
            extra.add(p!(PASSER_BLOCKED), weight);
        }
    }
    let c = board.colors(color);
    if (board.pieces(Piece::Bishop) & c).len() >= 2 {
        extra.add(p!(BISHOP_PAIR), 1);
    }
    extra.s
}

/// Bad trade: with majors level, the side with more minor pieces is better than the pawns
/// the other side got for them suggest. +1 when White has more minors, −1 Black, else 0.
#[inline]
fn bad_trade_sign(board: &Board) -> i32 {
    let count = |color: Color, p: Piece| (board.colored_pieces(color, p)).len() as i32;
    let minors = |c: Color| count(c, Piece::Knight) + count(c, Piece::Bishop);
    let majors = |c: Color| count(c, Piece::Rook) + 2 * count(c, Piece::Queen);
    let dm = minors(Color::White) - minors(Color::Black);
    if dm != 0 && majors(Color::White) == majors(Color::Black) {
        dm.signum()
    } else {
        0
    }
}

/// Tier 1 additions: pawn structure (from `entry`), passers vs kings, bishop pair, bad trade.
#[inline]
pub(crate) fn lazy_terms(board: &Board, acc: &mut Accum, entry: &pawns::PawnEntry) {
    traced_lazy_terms(board, acc, entry, &mut NoTrace);
}

/// [`lazy_terms`], each term reported to `t` (the pawn structure in `entry` is not: trace it
/// with [`pawns::evaluate_pawns_traced`]).
#[inline(always)]
pub(crate) fn traced_lazy_terms<T: Tracer>(
    board: &Board,
    acc: &mut Accum,
    entry: &pawns::PawnEntry,
    t: &mut T,
) {
    let mut s = entry.score;
    s += lazy_side_extra(board, Color::White, entry.passed[Color::White as usize], t);
    s -= lazy_side_extra(board, Color::Black, entry.passed[Color::Black as usize], t);
    let bad = bad_trade_sign(board);
    if bad != 0 {
        let mut b = Side::new(Color::White, t);
        b.add(p!(BAD_TRADE), bad);
        s += b.s;
    }
    acc.pawns = s;
}

/// Tier 2 additions (king safety, the attack-based residual terms and the tempo), each term
/// reported to `t`.
#[inline(always)]
pub(crate) fn traced_full_terms<T: Tracer>(board: &Board, acc: &mut Accum, t: &mut T) {
    let f = terms::full_sides_traced(board, t);
    let (w, b) = (Color::White as usize, Color::Black as usize);
    acc.king = (f.danger[w] + f.shelter[w]) - (f.danger[b] + f.shelter[b]);
    acc.residual = f.residual[w] - f.residual[b];
    let mut tempo = Side::new(board.side_to_move(), t);
    tempo.add(p!(TEMPO), 1);
    acc.residual += if board.side_to_move() == Color::White {
        tempo.s
    } else {
        -tempo.s
    };
}

/// Taper to centipawns from White's view, with a drawishness scale for pawnless endings.
pub(crate) fn taper(board: &Board, acc: &Accum) -> i32 {
    taper_with(
        board,
        acc.total(),
        acc.phase,
        army_scaler(board, Color::White),
        army_scaler(board, Color::Black),
    )
}

/// [`taper`] of a total `s` at `phase`, with the armies (scalers) given.
#[inline]
fn taper_with(board: &Board, s: S, phase: i32, white_army: u32, black_army: u32) -> i32 {
    let mut v = (s.mg * phase + s.eg * (PHASE_MAX - phase)) / PHASE_MAX;
    // Without pawns the stronger side needs about a rook more to win.
    let strong = if v > 0 { Color::White } else { Color::Black };
    if board.colored_pieces(strong, Piece::Pawn).is_empty() {
        let (a, b) = if strong == Color::White {
            (white_army, black_army)
        } else {
            (black_army, white_army)
        };
        if a as i32 - b as i32 <= 3 {
            v /= 4;
        }
    }
    v
}

/// Taper one per-side term (no drawishness scale): what calibration histograms.
#[inline]
pub(crate) fn taper_term(s: S, phase: i32) -> i32 {
    (s.mg * phase + s.eg * (PHASE_MAX - phase)) / PHASE_MAX
}

/// Evaluate a tier from the side to move's point of view, without a pawn cache.
/// (For tools and tests; the search uses [`Evaluator`].)
pub fn eval_tier(board: &Board, tier: Tier) -> i32 {
    let entry = pawns::evaluate_pawns(board);
    tier_score_with(board, &Material::from_board(board), tier, &entry)
}

/// The score of `tier` (side to move's view) from the incremental material and a pawn entry.
#[inline]
fn tier_score_with(board: &Board, mat: &Material, tier: Tier, entry: &pawns::PawnEntry) -> i32 {
    let mut acc = Accum {
        material: mat.psqt,
        phase: mat.phase(),
        ..Default::default()
    };
    if tier >= Tier::Lazy {
        lazy_terms(board, &mut acc, entry);
    }
    if tier >= Tier::Full {
        add_full_terms(board, &mut acc);
    }
    stm_score(board, mat, &acc)
}

/// The full tier's additions, tempo included.
#[inline]
fn add_full_terms(board: &Board, acc: &mut Accum) {
    traced_full_terms(board, acc, &mut NoTrace);
}

/// Tapered score of `acc` from the side to move's view.
#[inline]
fn stm_score(board: &Board, mat: &Material, acc: &Accum) -> i32 {
    let v = taper_with(
        board,
        acc.total(),
        acc.phase,
        mat.army(Color::White),
        mat.army(Color::Black),
    );
    if board.side_to_move() == Color::White {
        v
    } else {
        -v
    }
}

/// What [`Evaluator::bounded`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalOutcome {
    /// The value to use (side to move's view): the full evaluation, or after an early exit
    /// the bound that decided it (`tier_score − margin_a ≥ beta` or `tier_score + margin_b ≤
    /// alpha`).
    pub score: i32,
    /// The tier that decided (`Full` when no cheap tier could).
    pub tier: Tier,
    /// The score of that tier itself (equal to `score` for `Full`).
    pub tier_score: i32,
}

/// Per-thread evaluator owning the pawn hash table.
#[derive(Default)]
pub struct Evaluator {
    pub pawns: PawnTable,
}

impl Evaluator {
    /// Evaluate `tier` from the side to move's point of view; `mat` must be the incremental
    /// material of `board`.
    #[inline]
    pub fn tier(&mut self, board: &Board, mat: &Material, tier: Tier) -> i32 {
        if tier == Tier::SuperLazy {
            return super_lazy_score(board, mat);
        }
        let entry = self.pawns.probe(board);
        tier_score_with(board, mat, tier, &entry)
    }

    /// The full evaluation (what the search uses when lazy exits are off).
    #[inline]
    pub(crate) fn evaluate(&mut self, board: &Board, mat: &Material) -> i32 {
        self.tier(board, mat, Tier::Full)
    }

    /// Evaluate tier by tier and stop at the first tier that decides the node: super-lazy
    /// (incremental material, two table lookups), then lazy (+ pawn hash), then full.
    #[inline]
    pub fn bounded(
        &mut self,
        board: &Board,
        mat: &Material,
        alpha: i32,
        beta: i32,
        margins: &LazyMargins,
    ) -> EvalOutcome {
        let stm = board.side_to_move();
        let my = side_bucket(mat.army(stm));
        let opp = side_bucket(mat.army(!stm));
        let sl = super_lazy_score(board, mat);
        if let Some(out) = margins.exit(Tier::SuperLazy, my, opp, sl, alpha, beta) {
            return out;
        }
        let entry = self.pawns.probe(board);
        let mut acc = Accum {
            material: mat.psqt,
            phase: mat.phase(),
            ..Default::default()
        };
        lazy_terms(board, &mut acc, &entry);
        let lazy = stm_score(board, mat, &acc);
        if let Some(out) = margins.exit(Tier::Lazy, my, opp, lazy, alpha, beta) {
            return out;
        }
        // The full tier continues from the lazy accumulation (nothing computed twice).
        add_full_terms(board, &mut acc);
        let full = stm_score(board, mat, &acc);
        EvalOutcome {
            score: full,
            tier: Tier::Full,
            tier_score: full,
        }
    }
}

/// The super-lazy score (side to move's view) from the incremental material alone.
#[inline]
pub fn super_lazy_score(board: &Board, mat: &Material) -> i32 {
    let v = taper_with(
        board,
        mat.psqt,
        mat.phase(),
        mat.army(Color::White),
        mat.army(Color::Black),
    );
    if board.side_to_move() == Color::White {
        v
    } else {
        -v
    }
}

/// What the cheap tiers miss, split per side (docs/design/chess-DESIGN.md §2), each tapered at the node's
/// phase and seen from that side: the quantities `calibrate residual` histograms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideTerms {
    /// The side's own king term: its shelter minus the attack of the enemy on it. Bucketed
    /// by the **attacker's** (enemy's) army.
    pub king: [i32; 2],
    /// What the lazy tier misses besides the king: mobility, threats, trapped pieces, rook
    /// files, and the tempo for the side to move. Bucketed by the side's own army.
    pub lazy: [i32; 2],
    /// What the super-lazy tier misses besides the king: `lazy` plus pawn structure,
    /// passers against kings, bishop pair and bad trade. Bucketed by the side's own army.
    pub super_lazy: [i32; 2],
}

/// Split the full − tier gaps of `board` into per-side terms (no pawn cache: calibration).
///
/// Up to rounding of the per-term taper and the pawnless drawishness scale,
/// `full − lazy = (king[me] − king[opp]) + (lazy[me] − lazy[opp])` from the side to move's
/// view, and the same with `super_lazy` for `full − super-lazy`.
pub fn side_terms(board: &Board, phase: i32) -> SideTerms {
    let f = terms::full_sides(board);
    let stm = board.side_to_move();
    let bad = bad_trade_sign(board);
    let mut out = SideTerms::default();
    for color in [Color::White, Color::Black] {
        let c = color as usize;
        let o = (!color) as usize;
        let king = f.shelter[c] - f.danger[o];
        let mut rest = f.residual[c];
        if color == stm {
            rest += terms::TEMPO;
        }
        let (structure, passed) = pawns::side_structure(board, color);
        let mut pawn_side = structure + lazy_side_extra(board, color, passed, &mut NoTrace);
        let sign = if color == Color::White { 1 } else { -1 };
        if bad == sign {
            pawn_side += params::BAD_TRADE;
        }
        out.king[c] = taper_term(king, phase);
        out.lazy[c] = taper_term(rest, phase);
        out.super_lazy[c] = taper_term(rest + pawn_side, phase);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::parse_fen;

    fn mirror(fen: &str) -> String {
        let f: Vec<&str> = fen.split_whitespace().collect();
        let rows: Vec<String> = f[0]
            .split('/')
            .rev()
            .map(|r| {
                r.chars()
                    .map(|c| {
                        if c.is_uppercase() {
                            c.to_ascii_lowercase()
                        } else {
                            c.to_ascii_uppercase()
                        }
                    })
                    .collect()
            })
            .collect();
        let stm = if f[1] == "w" { "b" } else { "w" };
        let castle: String = if f[2] == "-" {
            "-".into()
        } else {
            let mut v: Vec<char> = f[2]
                .chars()
                .map(|c| {
                    if c.is_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect();
            v.sort_by_key(|c| (c.is_lowercase(), *c != 'K' && *c != 'k'));
            v.into_iter().collect()
        };
        format!("{} {} {} - 0 1", rows.join("/"), stm, castle)
    }

    #[test]
    fn symmetric_eval() {
        for fen in [
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        ] {
            let a = parse_fen(fen).unwrap();
            let b = parse_fen(&mirror(fen)).unwrap();
            for tier in [Tier::SuperLazy, Tier::Lazy, Tier::Full] {
                assert_eq!(eval_tier(&a, tier), eval_tier(&b, tier), "{fen} {tier:?}");
            }
        }
    }

    #[test]
    fn bounded_agrees_with_the_tiers() {
        let m = LazyMargins::embedded();
        let mut ev = Evaluator::default();
        let mut exits = [0; 3];
        for fen in crate::bench::BENCH_FENS {
            let b = parse_fen(fen).unwrap();
            let mat = Material::from_board(&b);
            let tiers = [Tier::SuperLazy, Tier::Lazy, Tier::Full].map(|t| eval_tier(&b, t));
            for (alpha, beta) in [
                (-30_000, 30_000),
                (-20, -19),
                (0, 1),
                (300, 301),
                (-900, 900),
            ] {
                let out = ev.bounded(&b, &mat, alpha, beta, &m);
                exits[out.tier as usize] += 1;
                assert_eq!(out.tier_score, tiers[out.tier as usize], "{fen}");
                let stm = b.side_to_move();
                let (my, opp) = (side_bucket(mat.army(stm)), side_bucket(mat.army(!stm)));
                match out.tier {
                    Tier::Full => assert_eq!(out.score, tiers[2]),
                    t if out.score >= beta => {
                        assert_eq!(out.score, out.tier_score - m.margin_a(t, my, opp))
                    }
                    t => {
                        assert!(out.score <= alpha);
                        assert_eq!(out.score, out.tier_score + m.margin_b(t, my, opp))
                    }
                }
            }
        }
        assert!(exits.iter().all(|&n| n > 0), "{exits:?}");
    }

    #[test]
    fn start_position_army() {
        let b = Board::default();
        assert_eq!(army_scaler(&b, Color::White), 31);
        assert_eq!(side_bucket(31), 7);
        assert_eq!(material_bucket(&b), 7);
        assert!(eval_tier(&b, Tier::Full).abs() < 40);
    }
}
