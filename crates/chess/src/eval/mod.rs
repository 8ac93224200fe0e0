//! Hand-crafted tapered evaluation, organised as the three tiers of DESIGN.md §2.
//!
//! * **super-lazy**: material (with piece-square tables, which are part of the material
//!   accumulation and cost nothing extra) — no pawn-structure lookup at all;
//! * **lazy**: + pawn structure (pawn hash), passed pawns with king distances, bad trade,
//!   bishop pair — still no attack generation;
//! * **full**: + mobility, king safety, threats, trapped pieces, rook files, tempo.
//!
//! Every tier is a function; the later calibration issues measure the gap between tiers
//! per army bucket ([`army_scaler`], [`side_bucket`], [`material_bucket`]) and fill the
//! [`LazyMargins`] tables. For now search always asks for the full tier.

pub mod pawns;
pub mod pst;
pub mod terms;

use crate::board::{Board, Color, Piece};
use pawns::PawnTable;
use pst::{PHASE_MAX, PHASE_WEIGHT, PST};
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

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

/// Which evaluation tier to compute (DESIGN.md §2).
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

/// Margin tables for lazy exits, indexed by per-side bucket. Placeholder values until the
/// calibration issue measures them (p98/p2 of the residual histograms); deliberately wide
/// so that nothing relying on them today is unsound.
#[derive(Clone, Debug)]
pub struct LazyMargins {
    /// King term percentiles, bucketed by the **attacker's** army.
    pub king_hi: [i32; 8],
    pub king_lo: [i32; 8],
    /// Residual percentiles by **own** army; `[0]` = lazy tier, `[1]` = super-lazy tier.
    pub resid_hi: [[i32; 8]; 2],
    pub resid_lo: [[i32; 8]; 2],
    /// Median (p50) positional estimate per own bucket, for quiescence futility.
    pub positional: [[i32; 8]; 2],
}

impl Default for LazyMargins {
    fn default() -> Self {
        let ramp = |base: i32, step: i32| std::array::from_fn(|b| base + step * b as i32);
        Self {
            king_hi: ramp(20, 25),
            king_lo: ramp(-10, -10),
            resid_hi: [ramp(40, 20), ramp(120, 30)],
            resid_lo: [ramp(-40, -20), ramp(-120, -30)],
            positional: [[0; 8]; 2],
        }
    }
}

impl LazyMargins {
    fn tier_index(tier: Tier) -> usize {
        if tier == Tier::SuperLazy { 1 } else { 0 }
    }

    /// Margin guarding the fail-high exit `score - margin_a > beta` (pessimistic for `my`).
    pub fn margin_a(&self, tier: Tier, my: usize, opp: usize) -> i32 {
        let t = Self::tier_index(tier);
        ((self.king_hi[my] - self.king_lo[opp]) + (self.resid_hi[t][opp] - self.resid_lo[t][my]))
            .max(0)
    }

    /// Margin guarding the fail-low exit `score + margin_b < alpha`.
    pub fn margin_b(&self, tier: Tier, my: usize, opp: usize) -> i32 {
        let t = Self::tier_index(tier);
        ((self.king_hi[opp] - self.king_lo[my]) + (self.resid_hi[t][my] - self.resid_lo[t][opp]))
            .max(0)
    }
}

/// Unscaled accumulation of an evaluation, White minus Black, before tapering.
#[derive(Clone, Copy, Default, Debug)]
pub struct Accum {
    pub material: S,
    pub pawns: S,
    pub king: S,
    pub residual: S,
    pub phase: i32,
}

impl Accum {
    pub fn total(&self) -> S {
        self.material + self.pawns + self.king + self.residual
    }
}

pub const BISHOP_PAIR: S = S::new(28, 52);
pub const BAD_TRADE: S = S::new(40, 25);
/// Endgame bonus per square of king distance to a passer's stop square (enemy minus own).
pub const PASSER_KING_DIST: i32 = 4;
pub const PASSER_BLOCKED: S = S::new(-3, -9);

/// Tier 0: material + piece-square tables + phase.
pub fn super_lazy_terms(board: &Board) -> Accum {
    let mut acc = Accum::default();
    for color in [Color::White, Color::Black] {
        let mut s = S::default();
        for piece in Piece::ALL {
            let p = piece as usize;
            for sq in board.colored_pieces(color, piece) {
                let idx = if color == Color::White {
                    sq as usize
                } else {
                    sq as usize ^ 56
                };
                s += PST[p][idx];
                acc.phase += PHASE_WEIGHT[p];
            }
        }
        if color == Color::White {
            acc.material += s;
        } else {
            acc.material -= s;
        }
    }
    acc.phase = acc.phase.min(PHASE_MAX);
    acc
}

fn sq_distance(a: usize, b: usize) -> i32 {
    let df = (a % 8) as i32 - (b % 8) as i32;
    let dr = (a / 8) as i32 - (b / 8) as i32;
    df.abs().max(dr.abs())
}

/// Tier 1 additions: pawn structure (from `entry`), passers vs kings, bishop pair, bad trade.
pub fn lazy_terms(board: &Board, acc: &mut Accum, entry: &pawns::PawnEntry) {
    let mut s = entry.score;
    for color in [Color::White, Color::Black] {
        let sign = if color == Color::White { 1 } else { -1 };
        let mut extra = S::default();
        let our_king = board.king(color) as usize;
        let their_king = board.king(!color) as usize;
        let mut passed = entry.passed[color as usize];
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
            extra.eg += dist * PASSER_KING_DIST * weight / 2;
            if board.occupied().0 & (1u64 << stop) != 0 {
                extra += PASSER_BLOCKED * weight;
            }
        }
        let c = board.colors(color);
        if (board.pieces(Piece::Bishop) & c).len() >= 2 {
            extra += BISHOP_PAIR;
        }
        s += extra * sign;
    }
    // Bad trade: with majors level, the side with more minor pieces is better than the pawns
    // the other side got for them suggest.
    let count = |color: Color, p: Piece| (board.colored_pieces(color, p)).len() as i32;
    let minors = |c: Color| count(c, Piece::Knight) + count(c, Piece::Bishop);
    let majors = |c: Color| count(c, Piece::Rook) + 2 * count(c, Piece::Queen);
    let dm = minors(Color::White) - minors(Color::Black);
    if dm != 0 && majors(Color::White) == majors(Color::Black) {
        s += BAD_TRADE * dm.signum();
    }
    acc.pawns = s;
}

/// Tier 2 additions: king safety and the attack-based residual terms.
pub fn full_terms(board: &Board, acc: &mut Accum) {
    let t = terms::full_terms(board);
    acc.king = t.king;
    acc.residual = t.residual;
}

/// Taper to centipawns from White's view, with a drawishness scale for pawnless endings.
pub fn taper(board: &Board, acc: &Accum) -> i32 {
    let s = acc.total();
    let mut v = (s.mg * acc.phase + s.eg * (PHASE_MAX - acc.phase)) / PHASE_MAX;
    // Without pawns the stronger side needs about a rook more to win.
    let strong = if v > 0 { Color::White } else { Color::Black };
    if board.colored_pieces(strong, Piece::Pawn).is_empty() {
        let diff = army_scaler(board, strong) as i32 - army_scaler(board, !strong) as i32;
        if diff <= 3 {
            v /= 4;
        }
    }
    v
}

/// Evaluate a tier from the side to move's point of view, without a pawn cache.
/// (For tools and calibration; the search uses [`Evaluator`].)
pub fn eval_tier(board: &Board, tier: Tier) -> i32 {
    let entry = pawns::evaluate_pawns(board);
    eval_with_entry(board, tier, &entry)
}

fn eval_with_entry(board: &Board, tier: Tier, entry: &pawns::PawnEntry) -> i32 {
    let mut acc = super_lazy_terms(board);
    if tier >= Tier::Lazy {
        lazy_terms(board, &mut acc, entry);
    }
    if tier >= Tier::Full {
        full_terms(board, &mut acc);
        acc.residual += if board.side_to_move() == Color::White {
            terms::TEMPO
        } else {
            -terms::TEMPO
        };
    }
    let v = taper(board, &acc);
    if board.side_to_move() == Color::White {
        v
    } else {
        -v
    }
}

/// Per-thread evaluator owning the pawn hash table.
#[derive(Default)]
pub struct Evaluator {
    pub pawns: PawnTable,
}

impl Evaluator {
    /// Evaluate `tier` from the side to move's point of view.
    #[inline]
    pub fn eval_tier(&mut self, board: &Board, tier: Tier) -> i32 {
        if tier == Tier::SuperLazy {
            let acc = super_lazy_terms(board);
            let v = taper(board, &acc);
            return if board.side_to_move() == Color::White {
                v
            } else {
                -v
            };
        }
        let entry = self.pawns.probe(board);
        eval_with_entry(board, tier, &entry)
    }

    /// The evaluation the search uses.
    #[inline]
    pub fn evaluate(&mut self, board: &Board) -> i32 {
        self.eval_tier(board, Tier::Full)
    }
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
    fn start_position_army() {
        let b = Board::default();
        assert_eq!(army_scaler(&b, Color::White), 31);
        assert_eq!(side_bucket(31), 7);
        assert_eq!(material_bucket(&b), 7);
        let m = LazyMargins::default();
        assert!(m.margin_a(Tier::Lazy, 7, 7) > 0);
        assert!(eval_tier(&b, Tier::Full).abs() < 40);
    }
}
