//! Paired screens: two arms played on identical seeds, compared game by game
//! (`docs/design/drop7-SPEC.md` §8, the drop7 screen protocol; general enough for any paired experiment).
//!
//! The unit is the whole game. `d = candidate − reference` per seed, in seed order.
//! * paired delta = mean(d);
//! * bootstrap LB95/UB95: 20,000 resamples with replacement of the n deltas drawn exactly as
//!   NumPy's `default_rng(0xB0071EAF).integers(0, n, size=(20000, n))`, the mean of each,
//!   then the 0.05 and 0.95 quantiles with NumPy's linear interpolation: each a one-sided
//!   95 % bound;
//! * t LB95 = mean − t₀.₉₅(n−1)·sd/√n (sd with ddof = 1; exact t quantile);
//! * W-T-L = counts of d > 0, d = 0, d < 0; halves = mean(d) over the first ⌊n/2⌋ seeds and
//!   over the rest;
//! * detection floor = 1.645·sd/√n: a |mean| below it is a non-measurement, not "no effect";
//! * gate: no faults in either arm, bootstrap LB > 0, t LB > 0, both halves > 0 and candidate
//!   Q25 ≥ reference Q25; verdict "supported" (LB > 0 and t LB > 0), "refuted" (UB < 0),
//!   otherwise "inconclusive".

use serde::{Deserialize, Serialize};

use crate::describe::{mean, quantile_sorted, sd};
use crate::io::EvidenceError;
use crate::numpy_rng::NumpyPcg64;
use crate::student_t::t_one_sided_95;

/// The reference screens' bootstrap seed (`numpy.random.default_rng(0xB0071EAF)`).
pub const BOOTSTRAP_SEED: u64 = 0xB007_1EAF;
/// The reference screens' resample count.
pub const BOOTSTRAP_RESAMPLES: usize = 20_000;
/// z used by the detection floor (one-sided 95 %, rounded as the protocol states it).
pub const DETECTION_Z: f64 = 1.645;

/// One arm's scores in seed order plus how many decisions went wrong (illegal moves,
/// incomplete searches): any fault fails the gate.
#[derive(Debug, Clone)]
pub struct Arm<'a> {
    pub name: &'a str,
    pub scores: &'a [f64],
    pub faults: u64,
}

/// Per-arm summary (NumPy linear quantiles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArmSummary {
    pub name: String,
    pub games: usize,
    pub mean: f64,
    pub median: f64,
    pub q25: f64,
    pub max: f64,
    pub faults: u64,
}

impl ArmSummary {
    pub fn of(arm: &Arm<'_>) -> Self {
        let mut s = arm.scores.to_vec();
        s.sort_by(f64::total_cmp);
        Self {
            name: arm.name.to_owned(),
            games: s.len(),
            mean: mean(arm.scores),
            median: quantile_sorted(&s, 0.5),
            q25: quantile_sorted(&s, 0.25),
            max: s.last().copied().unwrap_or(f64::NAN),
            faults: arm.faults,
        }
    }
}

/// Bootstrap settings (defaults are the reference protocol's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapConfig {
    pub resamples: usize,
    pub seed: u64,
    /// Lower quantile (0.05); the upper is `1 − lower`.
    pub lower_quantile: f64,
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        Self {
            resamples: BOOTSTRAP_RESAMPLES,
            seed: BOOTSTRAP_SEED,
            lower_quantile: 0.05,
        }
    }
}

/// The gate's individual conditions, so a report can say which one failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Gate {
    pub passed: bool,
    pub no_faults: bool,
    pub bootstrap_lb_positive: bool,
    pub t_lb_positive: bool,
    pub halves_positive: bool,
    pub q25_not_worse: bool,
}

/// Verdict words of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Supported,
    Refuted,
    Inconclusive,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Supported => "supported",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive",
        })
    }
}

/// A complete paired contrast, candidate minus reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairedScreen {
    pub candidate: ArmSummary,
    pub reference: ArmSummary,
    pub games: usize,
    pub delta_mean: f64,
    pub delta_sd: f64,
    pub bootstrap: BootstrapConfig,
    pub bootstrap_lb95: f64,
    pub bootstrap_ub95: f64,
    /// Exact one-sided 95 % t critical value at n − 1 degrees of freedom.
    pub t_critical: f64,
    pub t_lb95: f64,
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
    pub first_half_mean: f64,
    pub second_half_mean: f64,
    pub detection_floor: f64,
    /// `|delta_mean| ≥ detection_floor`: otherwise the result is a non-measurement.
    pub measured: bool,
    pub gate: Gate,
    pub verdict: Verdict,
}

/// Compare `candidate` against `reference` on identical seeds (same order, same length).
pub fn paired_screen(
    candidate: &Arm<'_>,
    reference: &Arm<'_>,
    cfg: BootstrapConfig,
) -> Result<PairedScreen, EvidenceError> {
    let n = candidate.scores.len();
    if n != reference.scores.len() {
        return Err(EvidenceError::invalid(format!(
            "paired screen needs the same seeds in both arms: {} has {n} games, {} has {}",
            candidate.name,
            reference.name,
            reference.scores.len()
        )));
    }
    if n < 2 {
        return Err(EvidenceError::invalid(format!(
            "paired screen needs at least 2 games, got {n}"
        )));
    }
    if cfg.resamples == 0 || !(0.0..0.5).contains(&cfg.lower_quantile) {
        return Err(EvidenceError::invalid(
            "bootstrap needs resamples > 0 and 0 ≤ lower quantile < 0.5",
        ));
    }
    let d: Vec<f64> = candidate
        .scores
        .iter()
        .zip(reference.scores)
        .map(|(c, r)| c - r)
        .collect();
    let delta_mean = mean(&d);
    let delta_sd = sd(&d);
    let (lb, ub) = bootstrap_bounds(&d, cfg);
    let t_critical = t_one_sided_95((n - 1) as f64);
    let se = delta_sd / (n as f64).sqrt();
    let t_lb95 = delta_mean - t_critical * se;
    let wins = d.iter().filter(|&&x| x > 0.0).count();
    let ties = d.iter().filter(|&&x| x == 0.0).count();
    let losses = n - wins - ties;
    let half = n / 2;
    let first_half_mean = mean(&d[..half]);
    let second_half_mean = mean(&d[half..]);
    let detection_floor = DETECTION_Z * se;
    let cand = ArmSummary::of(candidate);
    let refr = ArmSummary::of(reference);
    let mut gate = Gate {
        passed: false,
        no_faults: candidate.faults == 0 && reference.faults == 0,
        bootstrap_lb_positive: lb > 0.0,
        t_lb_positive: t_lb95 > 0.0,
        halves_positive: first_half_mean > 0.0 && second_half_mean > 0.0,
        q25_not_worse: cand.q25 >= refr.q25,
    };
    gate.passed = gate.no_faults
        && gate.bootstrap_lb_positive
        && gate.t_lb_positive
        && gate.halves_positive
        && gate.q25_not_worse;
    let verdict = if lb > 0.0 && t_lb95 > 0.0 {
        Verdict::Supported
    } else if ub < 0.0 {
        Verdict::Refuted
    } else {
        Verdict::Inconclusive
    };
    Ok(PairedScreen {
        candidate: cand,
        reference: refr,
        games: n,
        delta_mean,
        delta_sd,
        bootstrap: cfg,
        bootstrap_lb95: lb,
        bootstrap_ub95: ub,
        t_critical,
        t_lb95,
        wins,
        ties,
        losses,
        first_half_mean,
        second_half_mean,
        detection_floor,
        measured: delta_mean.abs() >= detection_floor,
        gate,
        verdict,
    })
}

/// Percentile-bootstrap bounds of the mean of `d`: the `lower_quantile` and
/// `1 − lower_quantile` quantiles of the resample means (see the module docs).
pub fn bootstrap_bounds(d: &[f64], cfg: BootstrapConfig) -> (f64, f64) {
    let mut means = bootstrap_means(d, cfg.resamples, cfg.seed);
    means.sort_by(f64::total_cmp);
    (
        quantile_sorted(&means, cfg.lower_quantile),
        quantile_sorted(&means, 1.0 - cfg.lower_quantile),
    )
}

/// The mean of each of `resamples` resamples of `d`, in NumPy's draw order (row-major) and
/// summation order.
pub fn bootstrap_means(d: &[f64], resamples: usize, seed: u64) -> Vec<f64> {
    let n = d.len();
    let mut rng = NumpyPcg64::from_seed(seed);
    let mut draws = rng.integers(n as u64);
    let mut row = vec![0.0f64; n];
    (0..resamples)
        .map(|_| {
            for slot in row.iter_mut() {
                *slot = d[draws.next() as usize];
            }
            mean(&row)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm<'a>(name: &'a str, scores: &'a [f64]) -> Arm<'a> {
        Arm {
            name,
            scores,
            faults: 0,
        }
    }

    #[test]
    fn hand_computed_screen() {
        // d = [3, -1, 4, 1, -5, 9, 2, 6]: mean 2.375, sd = sqrt(Σ(d−m)²/7)
        let reference = [10.0; 8];
        let cand = [13.0, 9.0, 14.0, 11.0, 5.0, 19.0, 12.0, 16.0];
        let s = paired_screen(
            &arm("c", &cand),
            &arm("r", &reference),
            BootstrapConfig::default(),
        )
        .unwrap();
        assert_eq!(s.delta_mean, 2.375);
        let ss: f64 = [3.0, -1.0, 4.0, 1.0, -5.0, 9.0, 2.0, 6.0]
            .iter()
            .map(|x: &f64| (x - 2.375).powi(2))
            .sum();
        assert!((s.delta_sd - (ss / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!((s.wins, s.ties, s.losses), (6, 0, 2));
        assert_eq!(s.first_half_mean, 1.75); // (3 − 1 + 4 + 1)/4
        assert_eq!(s.second_half_mean, 3.0); // (−5 + 9 + 2 + 6)/4
        // t(7) one-sided 95 % = 1.894579
        assert!((s.t_critical - 1.894_578_605).abs() < 1e-6);
        assert!((s.detection_floor - 1.645 * s.delta_sd / 8f64.sqrt()).abs() < 1e-12);
        assert!(s.bootstrap_lb95 < s.delta_mean && s.delta_mean < s.bootstrap_ub95);
        assert_eq!(s.reference.q25, 10.0);
        // candidate sorted: 5 9 11 12 13 14 16 19 → Q25 at pos 1.75 = 9 + 0.75·2 = 10.5
        assert_eq!(s.candidate.q25, 10.5);
        assert_eq!(s.candidate.median, 12.5);
        assert_eq!(s.candidate.max, 19.0);
    }

    #[test]
    fn verdicts_and_gate() {
        let r: Vec<f64> = (0..64).map(|i| 1000.0 + i as f64).collect();
        let better: Vec<f64> = r
            .iter()
            .enumerate()
            .map(|(i, x)| x + 50.0 + (i % 7) as f64)
            .collect();
        let s = paired_screen(
            &arm("c", &better),
            &arm("r", &r),
            BootstrapConfig::default(),
        )
        .unwrap();
        assert_eq!(s.verdict, Verdict::Supported);
        assert!(s.gate.passed);
        let faulty = Arm {
            name: "c",
            scores: &better,
            faults: 1,
        };
        let s = paired_screen(&faulty, &arm("r", &r), BootstrapConfig::default()).unwrap();
        assert!(!s.gate.passed && !s.gate.no_faults);
        let worse: Vec<f64> = r.iter().map(|x| x - 30.0).collect();
        let s =
            paired_screen(&arm("c", &worse), &arm("r", &r), BootstrapConfig::default()).unwrap();
        assert_eq!(s.verdict, Verdict::Refuted);
        let mixed: Vec<f64> = r
            .iter()
            .enumerate()
            .map(|(i, x)| if i % 2 == 0 { x + 100.0 } else { x - 100.0 })
            .collect();
        let s =
            paired_screen(&arm("c", &mixed), &arm("r", &r), BootstrapConfig::default()).unwrap();
        assert_eq!(s.verdict, Verdict::Inconclusive);
        assert!(!s.measured);
    }

    #[test]
    fn rejects_unpaired_input() {
        let e = paired_screen(
            &arm("c", &[1.0, 2.0]),
            &arm("r", &[1.0]),
            BootstrapConfig::default(),
        );
        assert!(e.unwrap_err().to_string().contains("same seeds"));
    }

    #[test]
    fn json_round_trip() {
        let s = paired_screen(
            &arm("c", &[3.0, 4.0, 8.0]),
            &arm("r", &[1.0, 2.0, 3.0]),
            BootstrapConfig::default(),
        )
        .unwrap();
        let j = serde_json::to_string(&s).unwrap();
        let back: PairedScreen = serde_json::from_str(&j).unwrap();
        assert_eq!(back, s);
        assert!(j.contains("\"verdict\":\"supported\""));
    }

    #[test]
    fn bootstrap_matches_numpy_bit_for_bit() {
        // numpy: d as below; rng = default_rng(0xB0071EAF);
        // idx = rng.integers(0, 64, size=(20000, 64)); m = d[idx].mean(axis=1);
        // numpy.quantile(m, [0.05, 0.95]) = [-12313.412734375, 26752.9575]; d.mean() = 7157.817187500003
        let d: Vec<f64> = (0..64)
            .map(|i| ((i * 7919) % 1000) as f64 * 317.25 - 150_000.0 + (i % 3) as f64 * 0.1)
            .collect();
        let (lb, ub) = bootstrap_bounds(&d, BootstrapConfig::default());
        assert_eq!(lb, -12_313.412_734_375);
        assert_eq!(ub, 26_752.957_5);
        assert_eq!(mean(&d), 7_157.817_187_500_003);
    }
}
