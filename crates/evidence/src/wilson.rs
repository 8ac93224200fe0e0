//! Wilson score interval for a binomial proportion.
//!
//! Why Wilson and not the normal ("Wald") interval: pruning tables live in the tails
//! (fail-high rates of 0.1 % and below) where Wald collapses to zero width at zero
//! successes. Wilson stays honest at 0 of n and at n of n, which is exactly where a pruning
//! decision is made.

use serde::{Deserialize, Serialize};

/// z for a one-sided 95 % bound (the 0.95 quantile of the standard normal).
pub const Z_ONE_SIDED_95: f64 = 1.644_853_626_951_472_2;
/// z for a two-sided 95 % interval (the 0.975 quantile of the standard normal).
pub const Z_TWO_SIDED_95: f64 = 1.959_963_984_540_054;

/// A Wilson score interval, with the counts it came from.
///
/// With `p̂ = k/n`:
/// `centre = (p̂ + z²/2n) / (1 + z²/n)`,
/// `half = z·sqrt(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n)`,
/// `lower = centre − half`, `upper = centre + half` (clamped to [0, 1]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Wilson {
    pub successes: u64,
    pub trials: u64,
    pub z: f64,
    /// Point estimate k/n (0 when n = 0).
    pub estimate: f64,
    pub lower: f64,
    pub upper: f64,
}

impl Wilson {
    /// Interval for `successes` out of `trials` at normal quantile `z`.
    ///
    /// With no trials the interval is the whole of [0, 1]: no evidence, no claim.
    ///
    /// # Panics
    /// If `successes > trials` or `z` is not finite and positive (a caller bug, not data).
    pub fn new(successes: u64, trials: u64, z: f64) -> Self {
        assert!(
            successes <= trials,
            "wilson: {successes} successes > {trials} trials"
        );
        assert!(
            z.is_finite() && z > 0.0,
            "wilson: z must be positive, got {z}"
        );
        if trials == 0 {
            return Self {
                successes,
                trials,
                z,
                estimate: 0.0,
                lower: 0.0,
                upper: 1.0,
            };
        }
        let n = trials as f64;
        let p = successes as f64 / n;
        let z2 = z * z;
        let denom = 1.0 + z2 / n;
        let centre = (p + z2 / (2.0 * n)) / denom;
        let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
        // At k = 0 (k = n) the lower (upper) bound is exactly 0 (1); floating point would
        // leave a ±1e-18 residue, so pin it.
        let lower = if successes == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        };
        let upper = if successes == trials {
            1.0
        } else {
            (centre + half).min(1.0)
        };
        Self {
            successes,
            trials,
            z,
            estimate: p,
            lower,
            upper,
        }
    }

    /// One-sided 95 % bounds (z = 1.6448536…): `lower` is a 95 % lower bound and `upper` a
    /// 95 % upper bound, each on its own.
    pub fn one_sided_95(successes: u64, trials: u64) -> Self {
        Self::new(successes, trials, Z_ONE_SIDED_95)
    }

    /// Two-sided 95 % interval (z = 1.95996…).
    pub fn two_sided_95(successes: u64, trials: u64) -> Self {
        Self::new(successes, trials, Z_TWO_SIDED_95)
    }

    /// Lower bound in thousandths of a percent (units of 1e-5), rounded **down** so a stored
    /// bound is never more optimistic than the computed one. 200 means 0.2 %.
    pub fn lower_milli_percent(&self) -> u32 {
        to_milli_percent(self.lower, f64::floor)
    }

    /// Upper bound in thousandths of a percent, rounded **up** (conservative for a bound
    /// that caps a probability from above).
    pub fn upper_milli_percent(&self) -> u32 {
        to_milli_percent(self.upper, f64::ceil)
    }
}

fn to_milli_percent(p: f64, round: fn(f64) -> f64) -> u32 {
    // 1e-9 slack so 0.002 (which is not exact in binary) becomes 200, not 201 or 199.
    let scaled = p * 100_000.0;
    let nearest = scaled.round();
    let v = if (scaled - nearest).abs() < 1e-6 {
        nearest
    } else {
        round(scaled)
    };
    v.clamp(0.0, 100_000.0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values computed by hand from the closed form (and agreeing with published
    // tables, e.g. Newcombe 1998, table I for 0/10-style cases scaled to n = 100).
    #[test]
    fn zero_of_hundred() {
        let w = Wilson::two_sided_95(0, 100);
        assert_eq!(w.lower, 0.0);
        assert!((w.upper - 0.036_993_5).abs() < 1e-6, "{w:?}");
    }

    #[test]
    fn five_of_hundred() {
        let w = Wilson::two_sided_95(5, 100);
        assert!((w.lower - 0.021_543_679_154).abs() < 1e-9, "{w:?}");
        assert!((w.upper - 0.111_750_469_232).abs() < 1e-9, "{w:?}");
    }

    #[test]
    fn fifty_of_hundred() {
        let w = Wilson::two_sided_95(50, 100);
        assert!((w.lower - 0.403_831_530_366).abs() < 1e-9, "{w:?}");
        assert!((w.upper - 0.596_168_469_634).abs() < 1e-9, "{w:?}");
    }

    #[test]
    fn one_sided_zero_of_thousand() {
        // upper = z²/(n+z²) at k = 0: 2.70554/1002.70554 = 0.0026982
        let w = Wilson::one_sided_95(0, 1000);
        assert!((w.upper - 0.002_698_2).abs() < 1e-6, "{w:?}");
        assert_eq!(w.upper_milli_percent(), 270);
        assert_eq!(w.lower_milli_percent(), 0);
    }

    #[test]
    fn all_successes_pins_upper() {
        let w = Wilson::two_sided_95(100, 100);
        assert_eq!(w.upper, 1.0);
        assert!((w.lower - 0.963_006_501_793).abs() < 1e-9);
    }

    #[test]
    fn no_trials_is_no_claim() {
        let w = Wilson::one_sided_95(0, 0);
        assert_eq!((w.lower, w.upper), (0.0, 1.0));
    }

    #[test]
    fn milli_percent_rounds_conservatively() {
        let w = Wilson::two_sided_95(5, 100);
        // 0.021543 → 2154 (down), 0.111750 → 11175 or 11176 (up)
        assert_eq!(w.lower_milli_percent(), 2154);
        assert!(w.upper_milli_percent() >= 11175);
    }
}
