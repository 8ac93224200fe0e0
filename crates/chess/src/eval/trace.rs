//! The evaluation as a linear form: for a position, the coefficient of every parameter
//! entry (White minus Black), plus what is not linear in any parameter (the king-attack
//! term), so that `eval = taper(Σ coef·value + fixed)` exactly. This is how a tuner evaluates
//! millions of positions per step without calling the engine (Ethereal's tuner does the
//! same), and how it knows each weight's gradient.
//!
//! The evaluation functions report every term to a [`Tracer`] as they add it; the engine
//! passes [`NoTrace`], whose methods are empty and inlined away, so the search pays nothing.

use super::params::{COUNT, VALUES};
use super::{Accum, S, pawns, taper};
use crate::board::{Board, Color};

/// Receives the evaluation's terms as they are added.
pub trait Tracer {
    /// `count` more of parameter entry `id`, White minus Black (negative for Black).
    fn add(&mut self, id: usize, count: i32);
    /// A term that is not linear in any parameter, White minus Black, added as it is.
    fn fixed(&mut self, s: S);
}

/// The engine's tracer: nothing is recorded.
pub struct NoTrace;

impl Tracer for NoTrace {
    #[inline(always)]
    fn add(&mut self, _: usize, _: i32) {}
    #[inline(always)]
    fn fixed(&mut self, _: S) {}
}

/// One position's linear form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Coefficient of each parameter entry (dense, [`COUNT`] long).
    pub coef: Vec<i32>,
    /// The non-linear part (king attack), White minus Black.
    pub fixed: S,
}

impl Default for Trace {
    fn default() -> Self {
        Self {
            coef: vec![0; COUNT],
            fixed: S::default(),
        }
    }
}

impl Tracer for Trace {
    #[inline]
    fn add(&mut self, id: usize, count: i32) {
        self.coef[id] += count;
    }
    #[inline]
    fn fixed(&mut self, s: S) {
        self.fixed += s;
    }
}

impl Trace {
    /// Add another form's coefficients and fixed part to this one.
    pub fn merge(&mut self, o: &Trace) {
        for (a, b) in self.coef.iter_mut().zip(&o.coef) {
            *a += b;
        }
        self.fixed += o.fixed;
    }

    /// The untapered total `Σ coef·value + fixed` with the weights `values`.
    pub fn total(&self, values: &[S]) -> S {
        let mut s = self.fixed;
        for (c, v) in self.coef.iter().zip(values) {
            if *c != 0 {
                s += *v * *c;
            }
        }
        s
    }

    /// The non-zero coefficients, `(entry, coefficient)`.
    pub fn sparse(&self) -> Vec<(u16, i16)> {
        self.coef
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(i, c)| (i as u16, *c as i16))
            .collect()
    }
}

/// A side's running sum of terms, reported to the tracer with that side's sign.
pub struct Side<'t, T: Tracer> {
    pub s: S,
    sign: i32,
    t: &'t mut T,
}

impl<'t, T: Tracer> Side<'t, T> {
    #[inline(always)]
    pub fn new(color: Color, t: &'t mut T) -> Self {
        Self {
            s: S::default(),
            sign: if color == Color::White { 1 } else { -1 },
            t,
        }
    }

    /// `count` × the parameter entry `(id, value)` (from [`super::params::p`]).
    #[inline(always)]
    pub fn add(&mut self, (id, value): (usize, S), count: i32) {
        self.s += value * count;
        self.t.add(id, self.sign * count);
    }

    /// A non-linear term from this side's view.
    #[inline(always)]
    pub fn fixed(&mut self, s: S) {
        self.s += s;
        self.t.fixed(s * self.sign);
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
                nonlinear += (t.fixed != S::default()) as u32;
                n += 1;
            }
        }
        assert!(n >= 40_000, "{n} positions");
        assert!(
            nonlinear > 100,
            "the king-attack term never showed: {nonlinear}"
        );
    }

    /// Coefficients are counts of features: change one weight and the linear form moves by
    /// exactly its coefficient (before the taper), and the sparse form keeps every entry.
    #[test]
    fn tiers_partition_the_parameters() {
        // Each parameter belongs to one tier: no entry has a coefficient in two tiers'
        // forms anywhere in the hold-out pool, and only the full tier has a fixed part.
        let mut owner = vec![usize::MAX; COUNT];
        for b in pool("holdout.epd") {
            let tiers = trace_tiers(&b);
            assert_eq!(tiers[0].fixed, S::default());
            assert_eq!(tiers[1].fixed, S::default());
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
}
