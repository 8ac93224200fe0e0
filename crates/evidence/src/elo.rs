//! Elo from match results, in **logistic** Elo (the classic 400·log10 scale that
//! cutechess-cli, OpenBench's logistic mode and most rating lists print).
//!
//! expected score `s = 1 / (1 + 10^(−elo/400))`, inverse `elo = −400·log10(1/s − 1)`.

use serde::{Deserialize, Serialize};

use crate::wilson::Z_TWO_SIDED_95;

/// Logistic Elo difference for an expected score `s` ∈ (0, 1); ±∞ at the ends.
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if s >= 1.0 {
        return f64::INFINITY;
    }
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Expected score for a logistic Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// An Elo estimate with a two-sided 95 % interval and the likelihood of superiority.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EloEstimate {
    /// Games (for pentanomial input: 2 × pairs).
    pub games: u64,
    /// Mean score per game in [0, 1].
    pub score: f64,
    pub elo: f64,
    /// 95 % interval (normal approximation on the mean score, mapped through the Elo curve).
    pub lower: f64,
    pub upper: f64,
    /// Half-width `(upper − lower)/2`, the "±" a progress line prints.
    pub error: f64,
    /// Likelihood of superiority: P(true score > 0.5) under the normal approximation.
    pub los: f64,
}

impl EloEstimate {
    /// From per-game wins, draws and losses (trinomial model): the variance of the mean score
    /// is `Σ pᵢ(xᵢ − s)² / N` with `x ∈ {1, ½, 0}`.
    pub fn from_wdl(wins: u64, draws: u64, losses: u64) -> Self {
        let n = wins + draws + losses;
        let outcomes = [(1.0, wins), (0.5, draws), (0.0, losses)];
        let mut e = Self::from_outcomes(&outcomes);
        e.games = n;
        e
    }

    /// From game-pair (pentanomial) counts: pairs scoring 0, ½, 1, 1½, 2 points out of 2.
    /// Pairs with colours reversed cancel much of the opening's bias, so this variance is
    /// the honest one for book-based matches.
    pub fn from_pentanomial(p: &crate::sprt::Pentanomial) -> Self {
        let outcomes: Vec<(f64, u64)> = p
            .counts
            .iter()
            .enumerate()
            .map(|(i, &c)| (i as f64 / 4.0, c))
            .collect();
        let mut e = Self::from_outcomes(&outcomes);
        e.games = 2 * p.pairs();
        e
    }

    fn from_outcomes(outcomes: &[(f64, u64)]) -> Self {
        let n: u64 = outcomes.iter().map(|&(_, c)| c).sum();
        if n == 0 {
            return Self {
                games: 0,
                score: 0.5,
                elo: 0.0,
                lower: f64::NEG_INFINITY,
                upper: f64::INFINITY,
                error: f64::INFINITY,
                los: 0.5,
            };
        }
        let nf = n as f64;
        let s: f64 = outcomes.iter().map(|&(x, c)| x * c as f64).sum::<f64>() / nf;
        let var: f64 = outcomes
            .iter()
            .map(|&(x, c)| c as f64 * (x - s) * (x - s))
            .sum::<f64>()
            / nf;
        let se = (var / nf).sqrt();
        // Every game (or pair) scored the same: the sample holds no estimate of its spread,
        // and a zero-width interval would be false certainty. No finite interval then.
        let (lo, hi) = if var > 0.0 {
            (
                elo_from_score(s - Z_TWO_SIDED_95 * se),
                elo_from_score(s + Z_TWO_SIDED_95 * se),
            )
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        };
        let los = if se > 0.0 {
            normal_cdf((s - 0.5) / se)
        } else if s > 0.5 {
            1.0
        } else if s < 0.5 {
            0.0
        } else {
            0.5
        };
        Self {
            games: n,
            score: s,
            // `+ 0.0` turns the −0.0 of an even score into 0.0.
            elo: elo_from_score(s) + 0.0,
            lower: lo,
            upper: hi,
            // A perfect or null score has no finite interval: infinite error, not NaN.
            error: if lo.is_finite() && hi.is_finite() {
                (hi - lo) / 2.0
            } else {
                f64::INFINITY
            },
            los,
        }
    }
}

/// Standard normal CDF via erfc (Numerical Recipes' Chebyshev erfc, |error| < 1.2e-7).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {

    #[test]
    fn identical_pairs_give_no_finite_interval() {
        // 50 pairs, every one a pair of draws: no spread to estimate.
        let p = crate::sprt::Pentanomial {
            counts: [0, 0, 50, 0, 0],
        };
        let e = EloEstimate::from_pentanomial(&p);
        assert_eq!(e.elo, 0.0);
        assert!(e.elo.is_sign_positive(), "no −0.0");
        assert!(e.lower.is_infinite() && e.upper.is_infinite() && e.error.is_infinite());
        // One pair different: a finite interval around it.
        let p = crate::sprt::Pentanomial {
            counts: [0, 0, 49, 1, 0],
        };
        let e = EloEstimate::from_pentanomial(&p);
        assert!(e.lower.is_finite() && e.upper.is_finite() && e.lower < e.elo && e.elo < e.upper);
    }

    use super::*;

    #[test]
    fn score_elo_round_trip() {
        assert_eq!(elo_from_score(0.5), 0.0);
        // 0.75 → 400·log10(3) = 190.848...
        assert!((elo_from_score(0.75) - 190.848_501_887_864_98).abs() < 1e-9);
        for e in [-300.0, -5.0, 0.0, 42.0, 250.0] {
            assert!((elo_from_score(score_from_elo(e)) - e).abs() < 1e-9);
        }
    }

    #[test]
    fn wdl_interval_hand_computed() {
        // 60 W, 20 D, 20 L: s = 0.7; var = (60·0.09 + 20·0.04 + 20·0.49)/100 = 0.16;
        // se = 0.04; s ± 1.96·0.04 = 0.62160..0.77840.
        let e = EloEstimate::from_wdl(60, 20, 20);
        assert!((e.score - 0.7).abs() < 1e-12);
        assert!((e.elo - 147.190_714_117_837_8).abs() < 1e-6, "{}", e.elo);
        let lo = elo_from_score(0.7 - 1.959_963_984_540_054 * 0.04);
        assert!((e.lower - lo).abs() < 1e-9);
        assert!((e.lower - 86.225_015).abs() < 1e-4, "{}", e.lower);
        assert!((e.upper - 218.251_778).abs() < 1e-4, "{}", e.upper);
        assert!(e.los > 0.999);
    }

    #[test]
    fn perfect_score_has_infinite_error_not_nan() {
        let e = EloEstimate::from_wdl(4, 0, 0);
        assert_eq!(e.elo, f64::INFINITY);
        assert_eq!(e.error, f64::INFINITY);
    }

    #[test]
    fn even_match_is_zero() {
        let e = EloEstimate::from_wdl(10, 30, 10);
        assert_eq!(e.elo, 0.0);
        assert!((e.lower + e.upper).abs() < 1e-9);
        assert!((e.los - 0.5).abs() < 1e-7);
    }

    #[test]
    fn normal_cdf_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_963_984_540_054) - 0.975).abs() < 2e-7);
        assert!((normal_cdf(-1.644_853_626_951_472) - 0.05).abs() < 2e-7);
    }
}
