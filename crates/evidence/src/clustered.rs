//! Cluster (position-clustered) bootstrap of a rate `Σk / Σn`.
//!
//! Why not Wilson alone: Wilson assumes `n` independent trials. When the trials come in
//! clusters — every node of one position's search tree shares that position — a single
//! cluster can dominate a bucket and the real uncertainty is far wider than Wilson's. The
//! cluster bootstrap resamples whole clusters with replacement and recomputes the pooled
//! rate, so its interval widens exactly when a few clusters carry the count.
//!
//! Protocol (matches NumPy bit for bit, see the test):
//!
//! ```python
//! rng = numpy.random.default_rng(seed)
//! idx = rng.integers(0, m, size=(resamples, m))      # m clusters, row-major draws
//! K, N = k[idx].sum(axis=1), n[idx].sum(axis=1)       # exact integer sums
//! r = K[N > 0] / N[N > 0]                             # resamples with no trials dropped
//! lower, upper = numpy.quantile(r, [(1 - level) / 2, (1 + level) / 2])
//! ```
//!
//! [`clustered_rates`] runs many statistics over the **same** resamples (one draw of cluster
//! indices per resample), which is what a report over many buckets wants and costs one pass.

use serde::{Deserialize, Serialize};

use crate::describe::quantile_sorted;
use crate::io::EvidenceError;
use crate::numpy_rng::NumpyPcg64;

/// Resampling settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterBootstrapConfig {
    pub resamples: usize,
    pub seed: u64,
    /// Two-sided coverage (0.95).
    pub level: f64,
}

impl Default for ClusterBootstrapConfig {
    fn default() -> Self {
        Self {
            resamples: 2000,
            seed: 0x0C1A_57E4,
            level: 0.95,
        }
    }
}

/// A pooled rate and its cluster-bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusteredRate {
    pub successes: u64,
    pub trials: u64,
    /// Clusters with at least one trial.
    pub clusters_with_trials: usize,
    /// Largest share of the trials in a single cluster (0 when no trials).
    pub largest_cluster_share: f64,
    /// `successes / trials` (0 when no trials).
    pub estimate: f64,
    /// Interval bounds; `[0, 1]` when no resample had a trial.
    pub lower: f64,
    pub upper: f64,
    /// Resamples that had at least one trial (the others have no rate and are dropped).
    pub resamples_used: usize,
}

/// One statistic's counts in one cluster: `(statistic, successes, trials)`.
pub type ClusterEntry = (usize, u64, u64);

/// Interval of one rate from per-cluster `(successes, trials)`.
pub fn clustered_rate(
    clusters: &[(u64, u64)],
    cfg: ClusterBootstrapConfig,
) -> Result<ClusteredRate, EvidenceError> {
    let rows: Vec<Vec<ClusterEntry>> = clusters.iter().map(|&(k, n)| vec![(0, k, n)]).collect();
    Ok(clustered_rates(&rows, 1, cfg)?.remove(0))
}

/// Intervals of `stats` rates at once over the same resamples: `clusters[c]` lists the
/// non-zero counts of cluster `c` (statistic index below `stats`).
pub fn clustered_rates(
    clusters: &[Vec<ClusterEntry>],
    stats: usize,
    cfg: ClusterBootstrapConfig,
) -> Result<Vec<ClusteredRate>, EvidenceError> {
    if cfg.resamples == 0 || !(cfg.level > 0.0 && cfg.level < 1.0) {
        return Err(EvidenceError::invalid(format!(
            "cluster bootstrap needs resamples > 0 and 0 < level < 1 (got {} and {})",
            cfg.resamples, cfg.level
        )));
    }
    let mut k = vec![0u64; stats];
    let mut n = vec![0u64; stats];
    let mut with = vec![0usize; stats];
    let mut largest = vec![0u64; stats];
    for cl in clusters {
        for &(s, ks, ns) in cl {
            if s >= stats {
                return Err(EvidenceError::invalid(format!(
                    "statistic {s} out of range (stats = {stats})"
                )));
            }
            if ks > ns {
                return Err(EvidenceError::invalid(format!(
                    "a cluster has {ks} successes out of {ns} trials"
                )));
            }
            k[s] += ks;
            n[s] += ns;
            with[s] += usize::from(ns > 0);
            largest[s] = largest[s].max(ns);
        }
    }
    let m = clusters.len();
    // Grown as rates come (a statistic with no trials keeps none): memory follows the
    // rates kept, not resamples × statistics up front.
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); stats];
    if m > 0 {
        let mut rng = NumpyPcg64::from_seed(cfg.seed);
        let mut draws = rng.integers(m as u64);
        let mut sk = vec![0u64; stats];
        let mut sn = vec![0u64; stats];
        for _ in 0..cfg.resamples {
            sk.iter_mut().for_each(|x| *x = 0);
            sn.iter_mut().for_each(|x| *x = 0);
            for _ in 0..m {
                for &(s, ks, ns) in &clusters[draws.next() as usize] {
                    sk[s] += ks;
                    sn[s] += ns;
                }
            }
            for s in 0..stats {
                if sn[s] > 0 {
                    rates[s].push(sk[s] as f64 / sn[s] as f64);
                }
            }
        }
    }
    let q = (1.0 - cfg.level) / 2.0;
    Ok((0..stats)
        .map(|s| {
            let r = &mut rates[s];
            r.sort_by(f64::total_cmp);
            let (lower, upper) = if r.is_empty() {
                (0.0, 1.0)
            } else {
                (quantile_sorted(r, q), quantile_sorted(r, 1.0 - q))
            };
            ClusteredRate {
                successes: k[s],
                trials: n[s],
                clusters_with_trials: with[s],
                largest_cluster_share: if n[s] > 0 {
                    largest[s] as f64 / n[s] as f64
                } else {
                    0.0
                },
                estimate: if n[s] > 0 {
                    k[s] as f64 / n[s] as f64
                } else {
                    0.0
                },
                lower,
                upper,
                resamples_used: r.len(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 40 clusters: a few large ones with many successes, many small clean ones, some empty.
    fn data() -> Vec<(u64, u64)> {
        (0..40u64)
            .map(|i| {
                let n = if i % 7 == 0 {
                    500 + 37 * i
                } else {
                    (i * 13) % 29
                };
                let k = if i % 7 == 0 {
                    (i * 11) % 23
                } else {
                    u64::from(i % 5 == 1)
                };
                (k.min(n), n)
            })
            .collect()
    }

    #[test]
    fn matches_numpy_bit_for_bit() {
        // Computed independently with NumPy 2.4.6:
        //   k = [min((i*11) % 23 if i % 7 == 0 else int(i % 5 == 1), n_i) ...]
        //   n = [500 + 37*i if i % 7 == 0 else (i*13) % 29 for i in range(40)]
        //   rng = numpy.random.default_rng(0xC1A57E4)
        //   idx = rng.integers(0, 40, size=(2000, 40))
        //   K, N = k[idx].sum(1), n[idx].sum(1); r = K[N > 0] / N[N > 0]
        //   numpy.quantile(r, [0.025, 0.975]) -> 0.0038637537940194406, 0.012309923098763286
        //   k.sum(), n.sum(), len(r) -> 58, 7366, 2000
        let r = clustered_rate(&data(), ClusterBootstrapConfig::default()).unwrap();
        assert_eq!((r.successes, r.trials), (REF_K, REF_N));
        assert_eq!(r.lower, REF_LOWER);
        assert_eq!(r.upper, REF_UPPER);
        assert_eq!(r.resamples_used, 2000);
    }

    const REF_K: u64 = 58;
    const REF_N: u64 = 7366;
    const REF_LOWER: f64 = 0.003_863_753_794_019_440_6;
    const REF_UPPER: f64 = 0.012_309_923_098_763_286;

    #[test]
    fn many_stats_share_the_resamples() {
        // Statistic 1 is statistic 0 scaled: same draws, so the same rates.
        let d = data();
        let rows: Vec<Vec<ClusterEntry>> = d
            .iter()
            .map(|&(k, n)| vec![(0, k, n), (1, 3 * k, 3 * n)])
            .collect();
        let both = clustered_rates(&rows, 3, ClusterBootstrapConfig::default()).unwrap();
        let one = clustered_rate(&d, ClusterBootstrapConfig::default()).unwrap();
        assert_eq!(both[0], one);
        assert_eq!((both[1].lower, both[1].upper), (one.lower, one.upper));
        // statistic 2 never has a trial: no claim
        assert_eq!(
            (both[2].lower, both[2].upper, both[2].resamples_used),
            (0.0, 1.0, 0)
        );
    }

    #[test]
    fn one_dominant_cluster_widens_the_interval() {
        // 1 % overall either way; clustered when one cluster holds all the successes.
        let spread: Vec<(u64, u64)> = (0..100).map(|_| (1, 100)).collect();
        let mut lumped: Vec<(u64, u64)> = (0..99).map(|_| (0, 100)).collect();
        lumped.push((100, 100));
        let cfg = ClusterBootstrapConfig::default();
        let a = clustered_rate(&spread, cfg).unwrap();
        let b = clustered_rate(&lumped, cfg).unwrap();
        assert_eq!((a.estimate, b.estimate), (0.01, 0.01));
        assert_eq!((a.lower, a.upper), (0.01, 0.01));
        assert!(b.upper - b.lower > 0.02, "{b:?}");
        assert_eq!(b.largest_cluster_share, 0.01);
    }

    #[test]
    fn refuses_bad_input() {
        let cfg = ClusterBootstrapConfig::default();
        assert!(clustered_rate(&[(3, 2)], cfg).is_err());
        assert!(
            clustered_rate(
                &[(1, 2)],
                ClusterBootstrapConfig {
                    resamples: 0,
                    ..cfg
                }
            )
            .is_err()
        );
        assert!(clustered_rates(&[vec![(5, 0, 1)]], 2, cfg).is_err());
        let empty = clustered_rate(&[], cfg).unwrap();
        assert_eq!((empty.lower, empty.upper), (0.0, 1.0));
    }
}
