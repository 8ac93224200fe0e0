//! The evaluation as a linear form: for a position, the coefficient of every parameter
//! entry (White minus Black), plus each side's king-danger sum, whose entries enter the
//! evaluation through one fixed non-linear function ([`king_danger`]), so that
//! `eval = taper(Σ coef·value + Σ± king_danger(Σ danger·value))` exactly. This is how a
//! tuner evaluates millions of positions per step without calling the engine (Ethereal's
//! tuner does the same), and how it knows each weight's gradient, the king danger's too (by
//! the chain rule: a quadratic king attack is fitted, not left outside the fit).
//!
//! The evaluation functions report every term to a `Tracer` as they add it; the engine
//! passes `NoTrace`, whose methods are empty and inlined away, so the search pays nothing.

use super::params::{COUNT, VALUES};
pub use super::terms::king_danger;
use super::{Accum, S, pawns, taper};
use crate::board::{Board, Color};

/// Receives the evaluation's terms as they are added.
pub(crate) trait Tracer {
    /// `count` more of parameter entry `id`, White minus Black (negative for Black).
    fn add(&mut self, id: usize, count: i32);
    /// `count` more of parameter entry `id` in `color`'s king-danger sum (that side's
    /// view, always positive counts): the evaluation adds `king_danger` of the sum.
    fn danger(&mut self, color: Color, id: usize, count: i32);
}

/// The engine's tracer: nothing is recorded.
pub(crate) struct NoTrace;

impl Tracer for NoTrace {
    #[inline(always)]
    fn add(&mut self, _: usize, _: i32) {}
    #[inline(always)]
    fn danger(&mut self, _: Color, _: usize, _: i32) {}
}

/// One position's linear form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Coefficient of each parameter entry (dense, [`COUNT`] long).
    pub coef: Vec<i32>,
    /// Each side's king-danger sum as `(entry, count)` pairs, indexed by colour; empty when
    /// that side's danger does not apply (too few attackers).
    pub danger: [Vec<(u16, i32)>; 2],
}

impl Default for Trace {
    fn default() -> Self {
        Self {
            coef: vec![0; COUNT],
            danger: [Vec::new(), Vec::new()],
        }
    }
}

impl Tracer for Trace {
    #[inline]
    fn add(&mut self, id: usize, count: i32) {
        self.coef[id] += count;
    }
    #[inline]
    fn danger(&mut self, color: Color, id: usize, count: i32) {
        self.danger[color as usize].push((id as u16, count));
    }
}

impl Trace {
    /// Add another form's coefficients and danger sums to this one. A side's danger sum may
    /// come from one of the two only (the danger is not linear: two sums of one side would be
    /// scored as one).
    pub(crate) fn merge(&mut self, o: &Trace) {
        debug_assert!(
            (0..2).all(|k| self.danger[k].is_empty() || o.danger[k].is_empty()),
            "two danger sums of one side"
        );
        for (a, b) in self.coef.iter_mut().zip(&o.coef) {
            *a += b;
        }
        for (a, b) in self.danger.iter_mut().zip(&o.danger) {
            a.extend_from_slice(b);
        }
    }

    /// The untapered total `Σ coef·value + king_danger(White's sum) − king_danger(Black's)`
    /// with the weights `values`.
    pub(crate) fn total(&self, values: &[S]) -> S {
        let mut s = S::default();
        for (c, v) in self.coef.iter().zip(values) {
            if *c != 0 {
                s += *v * *c;
            }
        }
        for (k, side) in self.danger.iter().enumerate() {
            if side.is_empty() {
                continue;
            }
            let d = side
                .iter()
                .fold(S::default(), |d, &(id, c)| d + values[id as usize] * c);
            if k == Color::White as usize {
                s += king_danger(d);
            } else {
                s -= king_danger(d);
            }
        }
        s
    }

    /// The non-zero coefficients, `(entry, coefficient)`.
    #[cfg(test)]
    pub(crate) fn sparse(&self) -> Vec<(u16, i16)> {
        self.coef
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(i, c)| (i as u16, *c as i16))
            .collect()
    }
}

/// A side's running sum of terms, reported to the tracer with that side's sign.
pub(crate) struct Side<'t, T: Tracer> {
    pub s: S,
    sign: i32,
    t: &'t mut T,
}

impl<'t, T: Tracer> Side<'t, T> {
    #[inline(always)]
    pub(crate) fn new(color: Color, t: &'t mut T) -> Self {
        Self {
            s: S::default(),
            sign: if color == Color::White { 1 } else { -1 },
            t,
        }
    }

    /// `count` × the parameter entry `(id, value)` (from [`super::params::p`]).
    #[inline(always)]
    pub(crate) fn add(&mut self, (id, value): (usize, S), count: i32) {
        self.s += value * count;
        self.t.add(id, self.sign * count);
    }
}

/// A side's king-danger sum (that side attacking), reported to the tracer as such.
pub(crate) struct Danger<'t, T: Tracer> {
    pub d: S,
    color: Color,
    t: &'t mut T,
}

impl<'t, T: Tracer> Danger<'t, T> {
    #[inline(always)]
    pub(crate) fn new(color: Color, t: &'t mut T) -> Self {
        Self {
            d: S::default(),
            color,
            t,
        }
    }

    /// `count` × the parameter entry `(id, value)` (from [`super::params::p`]); a zero count
    /// is not reported (the sparse form stays short).
    #[inline(always)]
    pub(crate) fn add(&mut self, (id, value): (usize, S), count: i32) {
        if count != 0 {
            self.d += value * count;
            self.t.danger(self.color, id, count);
        }
    }
}

/// The full evaluation's linear form of `board`, from scratch (no pawn cache).
pub fn trace(board: &Board) -> Trace {
    let [mut t, lazy, full] = trace_tiers(board);
    t.merge(&lazy);
    t.merge(&full);
    t
}

/// What each tier adds, as linear forms: `[super-lazy, lazy, full]` (material and squares;
/// pawn structure, passers, bishop pair, bad trade; mobility, king, threats, trapped
/// pieces, rook files, tempo). The lazy tier's residual is the full part, the super-lazy
/// tier's the lazy and full parts: what a tuner's variance penalty measures.
pub fn trace_tiers(board: &Board) -> [Trace; 3] {
    let mut t: [Trace; 3] = Default::default();
    let mut acc = Accum {
        material: super::traced_material(board, &mut t[0]),
        ..Default::default()
    };
    let entry = pawns::evaluate_pawns_traced(board, &mut t[1]);
    super::traced_lazy_terms(board, &mut acc, &entry, &mut t[1]);
    super::traced_full_terms(board, &mut acc, &mut t[2]);
    debug_assert_eq!(
        acc.total(),
        t[0].total(&VALUES) + t[1].total(&VALUES) + t[2].total(&VALUES)
    );
    t
}

/// The evaluation (side to move's view) that the weights `values` give `board`, whose
/// linear form is `t`: the engine's own taper and drawishness scale applied to `t.total`.
pub fn linear_eval(board: &Board, t: &Trace, values: &[S]) -> i32 {
    let m = super::Material::from_board(board);
    let acc = Accum {
        material: t.total(values),
        phase: m.phase(),
        ..Default::default()
    };
    let v = taper(board, &acc);
    if board.side_to_move() == Color::White {
        v
    } else {
        -v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::parse_fen;
    use crate::eval::params::id;
    use crate::eval::{Evaluator, Material, Tier, eval_tier};

    fn pool(name: &str) -> Vec<Board> {
        let path = format!(
            "{}/../../data/chess/pools/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| parse_fen(l.split(';').next().unwrap().trim()).unwrap())
            .collect()
    }

    /// The acceptance test of the trace: on every position of both pools (40,000), the
    /// linear form with the engine's weights is the engine's evaluation, exactly — the
    /// from-scratch tier function and the search's evaluator (incremental material, pawn
    /// cache) alike.
    #[test]
    fn the_linear_form_is_the_evaluation_exactly() {
        let mut ev = Evaluator::default();
        let mut n = 0;
        let mut nonlinear = 0;
        for name in ["holdout.epd", "calib.epd"] {
            for b in pool(name) {
                let t = trace(&b);
                let full = eval_tier(&b, Tier::Full);
                assert_eq!(linear_eval(&b, &t, &VALUES), full, "{b}");
                assert_eq!(ev.evaluate(&b, &Material::from_board(&b)), full, "{b}");
                nonlinear += t.danger.iter().any(|d| !d.is_empty()) as u32;
                n += 1;
            }
        }
        assert!(n >= 40_000, "{n} positions");
        assert!(
            nonlinear > 100,
            "the king danger never applied: {nonlinear}"
        );
    }

    /// Coefficients are counts of features: change one weight and the linear form moves by
    /// exactly its coefficient (before the taper), and the sparse form keeps every entry.
    #[test]
    fn tiers_partition_the_parameters() {
        // Each parameter belongs to one tier: no entry has a coefficient in two tiers'
        // forms anywhere in the hold-out pool, and only the full tier has king-danger sums,
        // whose entries appear in no tier's linear part.
        let mut owner = vec![usize::MAX; COUNT];
        for b in pool("holdout.epd") {
            let tiers = trace_tiers(&b);
            assert!(
                tiers[0]
                    .danger
                    .iter()
                    .chain(&tiers[1].danger)
                    .all(Vec::is_empty)
            );
            for &(id, _) in tiers[2].danger.iter().flatten() {
                assert!(
                    tiers.iter().all(|t| t.coef[id as usize] == 0),
                    "{}",
                    crate::eval::params::NAMES[id as usize]
                );
            }
            for (k, t) in tiers.iter().enumerate() {
                for (i, c) in t.coef.iter().enumerate() {
                    if *c != 0 {
                        assert!(
                            owner[i] == usize::MAX || owner[i] == k,
                            "{}",
                            crate::eval::params::NAMES[i]
                        );
                        owner[i] = k;
                    }
                }
            }
        }
        assert_eq!(owner[id::PST + 64 + 28], 0);
        assert_eq!(owner[id::PASSED_BY_RANK + 5], 1);
        assert_eq!(owner[id::TEMPO], 2);
    }

    #[test]
    fn coefficients_count_features() {
        // White: rooks on the open e-file and the half-open d-file, three pawns, one
        // isolated (a2); Black: a rook on a semi-open file... taken from a simple endgame.
        let b = parse_fen("3r2k1/5ppp/8/8/8/8/P4PPP/3RR1K1 w - - 0 1").unwrap();
        let t = trace(&b);
        // Rook files: White's d1 rook faces Black's d8 rook on a file with no pawns: both
        // open; White's e1 rook is on an open file too. 2 - 1 = 1 more open-file rook.
        assert_eq!(t.coef[id::ROOK_OPEN], 1);
        // a2 is isolated (White); Black has no isolated pawn.
        assert_eq!(t.coef[id::ISOLATED], 1);
        // Each piece contributes its square: White's rook on d1 (index 3), Black's on d8 seen
        // from Black's side (d1 again): they cancel.
        assert_eq!(t.coef[id::PST + 3 * 64 + 3], 0);
        assert_eq!(t.coef[id::PST + 3 * 64 + 4], 1);
        assert_eq!(t.coef[id::TEMPO], 1);
        let mut values = VALUES.to_vec();
        values[id::ROOK_OPEN] += S::new(100, 0);
        assert_eq!(t.total(&values), t.total(&VALUES) + S::new(100, 0));
        let sparse = t.sparse();
        assert!(
            sparse
                .iter()
                .all(|&(i, c)| t.coef[i as usize] == c as i32 && c != 0)
        );
        assert_eq!(sparse.len(), t.coef.iter().filter(|c| **c != 0).count());
    }

    /// Shelter and storm, counted by hand. White: Kg1, pawns f2 g2 h3; Black: Ke8, pawns g4
    /// h4 (and White's f2 is in front of Black's king on the f-file). White's files f, g, h
    /// (edge distance 2, 1, 0): shelter f2 (rank index 1), g2 (1), h3 (2); storm none on f,
    /// g4 (index 3) on g, h4 blocked by h3 on h. Black's files d, e, f (3, 3, 2): no pawns of
    /// its own; White's f2 storms from index 6 of Black's view.
    #[test]
    fn shelter_and_storm_count_files_and_ranks() {
        let b = parse_fen("4k3/8/8/8/6pp/7P/5PP1/6K1 w - - 0 1").unwrap();
        let t = trace(&b);
        let sh = |e: usize, r: usize| t.coef[id::KING_SHELTER + e * 8 + r];
        let st = |e: usize, r: usize| t.coef[id::KING_STORM + e * 8 + r];
        assert_eq!((sh(2, 1), sh(1, 1), sh(0, 2)), (1, 1, 1));
        assert_eq!((sh(3, 0), sh(2, 0)), (-2, -1));
        assert_eq!(t.coef[id::KING_STORM_BLOCKED + 3], 1);
        assert_eq!((st(1, 3), st(2, 0)), (1, 1));
        assert_eq!((st(3, 0), st(2, 6)), (-2, -1));
        let named = |prefix: &str| {
            (0..COUNT)
                .filter(|&i| crate::eval::params::NAMES[i].starts_with(prefix))
                .map(|i| t.coef[i].abs())
                .sum::<i32>()
        };
        // Three files each side: nothing else in the tables.
        assert_eq!(named("KING_SHELTER"), 6);
        assert_eq!(named("KING_STORM"), 6);
    }

    /// The king danger, counted by hand: White's Qh5 and Ng5 each hit f7 and h7 of the black
    /// king's zone (g8 and the five squares around it); only Black's king defends them (its
    /// pawns guard e6–h6); no check is safe (f7 and h7 are the king's); three black pawns
    /// stand in the zone. Black has no piece to attack with: no danger sum.
    #[test]
    fn king_danger_counts_attackers_weak_squares_and_pawns() {
        let b = parse_fen("6k1/5ppp/8/6NQ/8/8/8/6K1 w - - 0 1").unwrap();
        let t = trace(&b);
        let mut white = t.danger[0].clone();
        white.sort_unstable();
        let mut want = vec![
            (id::KS_ATTACK_UNITS as u16, 2),
            (id::KS_ATTACK_UNITS as u16 + 3, 2),
            (id::KS_ATTACKERS as u16, 2),
            (id::KS_WEAK_SQUARES as u16, 2),
            (id::KS_ZONE_PAWNS as u16, 3),
            (id::KS_BASE as u16, 1),
        ];
        want.sort_unstable();
        assert_eq!(white, want);
        assert!(t.danger[1].is_empty());
        // The total applies the non-linear function to the sum: moving one entry's weight
        // moves the evaluation by the function's change, not by count × weight.
        let mut values = VALUES.to_vec();
        let sum = |v: &[S]| {
            want.iter()
                .fold(S::default(), |d, &(i, c)| d + v[i as usize] * c)
        };
        let before = t.total(&values);
        values[id::KS_BASE] += S::new(100, 100);
        let after = t.total(&values);
        assert_eq!(
            after - before,
            king_danger(sum(&values)) - king_danger(sum(&VALUES))
        );
        assert_eq!(king_danger(S::new(-50, -50)), S::default());
        assert_eq!(king_danger(S::new(360, 400)), S::new(180, 20));
        assert_eq!(king_danger(S::new(5000, 9000)), S::new(1388, 100));
    }
}
