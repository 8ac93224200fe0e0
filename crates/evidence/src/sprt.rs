//! Pentanomial generalized SPRT (GSPRT), as fishtest and OpenBench run it, in **logistic**
//! Elo.
//!
//! Games are played in pairs on the same opening with colours swapped; a pair scores 0, ½,
//! 1, 1½ or 2. The log-likelihood ratio compares the maximum-likelihood pentanomial
//! distributions whose mean score equals `s(elo0)` and `s(elo1)` (Van den Bergh's GSPRT):
//! each is `pᵢ / (1 + λ(aᵢ − s))` with λ solving `Σ pᵢ(aᵢ − s)/(1 + λ(aᵢ − s)) = 0`, where
//! `p` is the observed distribution and `aᵢ = i/4` the pair score per game. Then
//! `LLR = Σ nᵢ · ln(p¹ᵢ / p⁰ᵢ)`. Stop at `ln(β/(1−α))` (accept H0) or `ln((1−β)/α)`
//! (accept H1): ±2.944 for α = β = 0.05.

use serde::{Deserialize, Serialize};

use crate::elo::score_from_elo;

/// Counts of game pairs by the first player's pair score: `[0, ½, 1, 1½, 2]` points.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pentanomial {
    pub counts: [u64; 5],
}

impl Pentanomial {
    /// Record one pair from the first player's two game scores (each 0, ½ or 1, given in
    /// half points 0, 1, 2).
    pub fn add_pair(&mut self, first_half_points: u8, second_half_points: u8) {
        let idx = (first_half_points + second_half_points) as usize;
        assert!(first_half_points <= 2 && second_half_points <= 2);
        self.counts[idx] += 1;
    }
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// Test parameters. `elo0`/`elo1` are logistic Elo.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// Where a test stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtDecision {
    /// Keep playing.
    Continue,
    /// LLR reached the lower bound: the change is not an improvement of elo1 (H0 accepted).
    H0,
    /// LLR reached the upper bound: the change gains at least elo0 (H1 accepted).
    H1,
}

/// A snapshot of a running test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SprtStatus {
    pub llr: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub decision: SprtDecision,
    /// The Elo model the bounds are expressed in (always "logistic" here).
    pub elo_model: &'static str,
}

impl Sprt {
    /// The usual α = β = 0.05 test.
    pub fn new(elo0: f64, elo1: f64) -> Self {
        Self {
            elo0,
            elo1,
            alpha: 0.05,
            beta: 0.05,
        }
    }

    /// `(lower, upper)` = `(ln(β/(1−α)), ln((1−β)/α))`.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of H1 (elo1) against H0 (elo0) for these pair counts.
    pub fn llr(&self, p: &Pentanomial) -> f64 {
        llr_logistic(p, self.elo0, self.elo1)
    }

    pub fn status(&self, p: &Pentanomial) -> SprtStatus {
        let llr = self.llr(p);
        let (lower, upper) = self.bounds();
        let decision = if llr >= upper {
            SprtDecision::H1
        } else if llr <= lower {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        };
        SprtStatus {
            llr,
            lower_bound: lower,
            upper_bound: upper,
            decision,
            elo_model: "logistic",
        }
    }
}

/// Pentanomial GSPRT LLR in logistic Elo. Empty cells are regularised to 1e-3 pairs (as
/// fishtest does) so that a single observed outcome does not make the MLE degenerate.
pub fn llr_logistic(p: &Pentanomial, elo0: f64, elo1: f64) -> f64 {
    if p.pairs() == 0 {
        return 0.0;
    }
    let reg: Vec<f64> = p.counts.iter().map(|&c| (c as f64).max(1e-3)).collect();
    let n: f64 = reg.iter().sum();
    let phat: Vec<f64> = reg.iter().map(|c| c / n).collect();
    let a = [0.0, 0.25, 0.5, 0.75, 1.0];
    let p0 = mle_with_mean(&phat, &a, score_from_elo(elo0));
    let p1 = mle_with_mean(&phat, &a, score_from_elo(elo1));
    reg.iter()
        .zip(p0.iter().zip(&p1))
        .map(|(c, (q0, q1))| c * (q1 / q0).ln())
        .sum()
}

/// The distribution closest (in KL) to `phat` with mean `s` over outcomes `a`.
fn mle_with_mean(phat: &[f64], a: &[f64], s: f64) -> Vec<f64> {
    let g = |lambda: f64| -> f64 {
        phat.iter()
            .zip(a)
            .map(|(p, ai)| p * (ai - s) / (1.0 + lambda * (ai - s)))
            .sum()
    };
    // 1 + λ(aᵢ − s) > 0 for every i bounds λ to (−1/(max a − s), 1/(s − min a)).
    let amax = a.iter().cloned().fold(f64::MIN, f64::max);
    let amin = a.iter().cloned().fold(f64::MAX, f64::min);
    let eps = 1e-12;
    let mut lo = -1.0 / (amax - s) + eps;
    let mut hi = 1.0 / (s - amin) - eps;
    // g is decreasing in λ.
    for _ in 0..300 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let lambda = 0.5 * (lo + hi);
    phat.iter()
        .zip(a)
        .map(|(p, ai)| p / (1.0 + lambda * (ai - s)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_2_944() {
        let (lo, hi) = Sprt::new(0.0, 5.0).bounds();
        assert!((lo + 2.944_438_979_166_44).abs() < 1e-12);
        assert!((hi - 2.944_438_979_166_44).abs() < 1e-12);
    }

    #[test]
    fn worked_example_matches_independent_computation() {
        // Pairs [LL, LD, DD/WL, WD, WW] = [100, 450, 900, 520, 130]; elo0 = 0, elo1 = 5.
        // Independent computation (Python, Newton on λ, see crates/evidence/tests/data/sprt_reference.py):
        let p = Pentanomial {
            counts: [100, 450, 900, 520, 130],
        };
        let llr = Sprt::new(0.0, 5.0).llr(&p);
        assert!((llr - SPRT_REFERENCE_LLR).abs() < 1e-6, "{llr}");
    }

    /// Printed by crates/evidence/tests/data/sprt_reference.py (scipy brentq).
    const SPRT_REFERENCE_LLR: f64 = 3.194_226_741_014_930_8;

    #[test]
    fn sign_and_normal_approximation_agree() {
        // The small-Elo approximation LLR ≈ N·(s1−s0)(2μ − s0 − s1)/(2σ²).
        let p = Pentanomial {
            counts: [60, 300, 700, 360, 80],
        };
        let n = p.pairs() as f64;
        let a = [0.0, 0.25, 0.5, 0.75, 1.0];
        let mu: f64 = p
            .counts
            .iter()
            .zip(&a)
            .map(|(&c, x)| c as f64 * x)
            .sum::<f64>()
            / n;
        let var: f64 = p
            .counts
            .iter()
            .zip(&a)
            .map(|(&c, x)| c as f64 * (x - mu).powi(2))
            .sum::<f64>()
            / n;
        let (s0, s1) = (score_from_elo(0.0), score_from_elo(5.0));
        let approx = n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var);
        let exact = llr_logistic(&p, 0.0, 5.0);
        assert!(exact > 0.0);
        assert!(
            (exact - approx).abs() / approx.abs() < 0.02,
            "{exact} vs {approx}"
        );
    }

    #[test]
    fn decisions() {
        let strong = Pentanomial {
            counts: [10, 100, 400, 300, 90],
        };
        assert_eq!(
            Sprt::new(0.0, 5.0).status(&strong).decision,
            SprtDecision::H1
        );
        let weak = Pentanomial {
            counts: [90, 300, 400, 100, 10],
        };
        assert_eq!(Sprt::new(0.0, 5.0).status(&weak).decision, SprtDecision::H0);
        let few = Pentanomial {
            counts: [1, 2, 3, 2, 1],
        };
        assert_eq!(
            Sprt::new(0.0, 5.0).status(&few).decision,
            SprtDecision::Continue
        );
    }
}
