//! The price of searching only the best k root columns at the last depth
//! ([`SearchConfig::final_top`], issue 35 item 4), measured the way the chess laboratory prices
//! a prune: on positions from fresh games, how often the restricted search chooses another
//! column than the full search (a rate with its Wilson interval and a game-clustered bootstrap
//! interval, since positions of one game are not independent), and what that costs in points
//! (the regret: the full search's Q of its own choice minus its Q of the restricted choice;
//! mean, with a game-clustered bootstrap upper bound), with the work it saves.

use crate::game::{Game, PublicState};
use crate::search::{Leaf, SearchConfig, Searcher};
use evidence::clustered::{ClusterBootstrapConfig, ClusteredRate, clustered_rate};
use evidence::numpy_rng::NumpyPcg64;
use evidence::wilson::Wilson;
use serde::Serialize;

/// One k of a study.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopKRow {
    pub k: u32,
    /// Decisions where the restricted choice differs from the full one.
    pub differ: Wilson,
    /// The same rate with a bootstrap over games.
    pub differ_clustered: ClusteredRate,
    /// Mean regret in points (0 where the choices agree).
    pub mean_regret: f64,
    /// 95 % upper bound of the mean regret, bootstrap over games.
    pub regret_upper95: f64,
    /// The largest regret seen.
    pub max_regret: f64,
    /// Restricted work / full work, summed over the positions.
    pub work_ratio: f64,
}

/// A study: its configuration and one row per k.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopKStudy {
    pub depth: u32,
    pub samples: u32,
    pub positions: usize,
    pub games: usize,
    pub rows: Vec<TopKRow>,
}

/// Positions of fresh games: games `seeds` played by `play` (a cheap policy), every `every`-th
/// position of each (from move `every`), tagged with the game's index.
pub fn positions_from_games(
    seeds: impl IntoIterator<Item = u32>,
    every: usize,
    mut play: impl FnMut(&PublicState) -> Option<usize>,
) -> Vec<(usize, PublicState)> {
    let every = every.max(1);
    let mut out = Vec::new();
    for (g, seed) in seeds.into_iter().enumerate() {
        let mut game = Game::new(seed);
        let mut m = 0usize;
        while !game.finished() {
            let s = game.public();
            m += 1;
            if m.is_multiple_of(every) {
                out.push((g, s));
            }
            let Some(c) = play(&s) else { break };
            if game.play(c, &mut ()).is_err() {
                break;
            }
        }
    }
    out
}

/// Per position: the full decision's Q per column and its choice, and per k the restricted
/// choice and work. Runs `threads` threads over the positions; `done` is called (from the
/// worker threads) after each position, for a progress bar.
pub fn study<L: Leaf>(
    positions: &[(usize, PublicState)],
    config: SearchConfig,
    ks: &[u32],
    leaf: impl Fn() -> L + Sync,
    threads: usize,
    done: impl Fn() + Sync,
) -> TopKStudy {
    struct One {
        game: usize,
        regret: Vec<f64>,
        work: Vec<u64>,
        full_work: u64,
    }
    let run = |chunk: &[(usize, PublicState)]| -> Vec<One> {
        let mut full = Searcher::new(
            leaf(),
            SearchConfig {
                final_top: None,
                ..config
            },
        );
        let mut restricted: Vec<Searcher<L>> = ks
            .iter()
            .map(|&k| {
                Searcher::new(
                    leaf(),
                    SearchConfig {
                        final_top: Some(k),
                        ..config
                    },
                )
            })
            .collect();
        chunk
            .iter()
            .map(|(game, s)| {
                let d = full.decide(s);
                let q = |c: Option<usize>| c.and_then(|c| d.q[c]).unwrap_or(f64::NEG_INFINITY);
                let best = q(d.column);
                let mut regret = Vec::new();
                let mut work = Vec::new();
                for r in &mut restricted {
                    let e = r.decide(s);
                    regret.push(if e.column == d.column {
                        0.0
                    } else {
                        best - q(e.column)
                    });
                    work.push(e.work);
                }
                done();
                One {
                    game: *game,
                    regret,
                    work,
                    full_work: d.work,
                }
            })
            .collect()
    };
    let threads = threads.max(1);
    let per = positions.len().div_ceil(threads).max(1);
    let results: Vec<One> = std::thread::scope(|scope| {
        let handles: Vec<_> = positions
            .chunks(per)
            .map(|c| scope.spawn(move || run(c)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a study thread panicked"))
            .collect()
    });
    let games = results.iter().map(|o| o.game).max().map_or(0, |g| g + 1);
    let full_work: u64 = results.iter().map(|o| o.full_work).sum();
    let rows = ks
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let differs = results.iter().filter(|o| o.regret[i] != 0.0).count() as u64;
            let mut per_game = vec![(0u64, 0u64); games];
            let mut regret_games = vec![(0.0f64, 0u64); games];
            for o in &results {
                per_game[o.game].0 += u64::from(o.regret[i] != 0.0);
                per_game[o.game].1 += 1;
                regret_games[o.game].0 += o.regret[i];
                regret_games[o.game].1 += 1;
            }
            let n = results.len().max(1) as f64;
            let mean_regret = results.iter().map(|o| o.regret[i]).sum::<f64>() / n;
            TopKRow {
                k,
                differ: Wilson::new(differs, results.len() as u64, 1.959964),
                differ_clustered: clustered_rate(&per_game, ClusterBootstrapConfig::default())
                    .expect("a valid bootstrap configuration"),
                mean_regret,
                regret_upper95: clustered_mean_upper(&regret_games, 2000, 0x70_9C),
                max_regret: results.iter().map(|o| o.regret[i]).fold(0.0, f64::max),
                work_ratio: results.iter().map(|o| o.work[i]).sum::<u64>() as f64
                    / full_work.max(1) as f64,
            }
        })
        .collect();
    TopKStudy {
        depth: config.depth,
        samples: config.samples,
        positions: results.len(),
        games,
        rows,
    }
}

/// The 97.5th percentile of the bootstrap distribution of a mean over clusters (each cluster
/// a (sum, count); whole clusters are resampled, the mean is total sum / total count).
fn clustered_mean_upper(clusters: &[(f64, u64)], resamples: usize, seed: u64) -> f64 {
    let used: Vec<&(f64, u64)> = clusters.iter().filter(|c| c.1 > 0).collect();
    if used.is_empty() {
        return 0.0;
    }
    let mut rng = NumpyPcg64::from_seed(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let (mut s, mut n) = (0.0, 0u64);
            for _ in 0..used.len() {
                let c = used[rng.integer_below(used.len() as u64) as usize];
                s += c.0;
                n += c.1;
            }
            s / n.max(1) as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    means[((means.len() as f64 * 0.975) as usize).min(means.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::FairLeaf;

    #[test]
    fn seven_columns_never_differ_and_one_saves_work() {
        let positions = positions_from_games(0x2d700000..0x2d700004, 6, |s| {
            crate::game::center_column(&s.board)
        });
        assert!(positions.len() >= 8, "{}", positions.len());
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let st = study(
            &positions,
            SearchConfig::fair(2, 3),
            &[7, 1],
            FairLeaf::default,
            2,
            || {
                seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            },
        );
        assert_eq!(st.positions, positions.len());
        assert_eq!(
            seen.into_inner(),
            positions.len(),
            "one progress call per position"
        );
        let (all, one) = (&st.rows[0], &st.rows[1]);
        assert_eq!(
            (all.differ.successes, all.mean_regret, all.work_ratio),
            (0, 0.0, 1.0)
        );
        assert!(one.work_ratio < 1.0, "{}", one.work_ratio);
        assert!(one.mean_regret >= 0.0 && one.regret_upper95 >= one.mean_regret);
    }

    #[test]
    fn the_clustered_upper_bound_is_a_percentile_of_resampled_means() {
        // One cluster: every resample is that cluster, the bound its mean.
        assert_eq!(clustered_mean_upper(&[(6.0, 3)], 100, 1), 2.0);
        // Two clusters of means 0 and 10: the bound is at most 10 and at least the mean 5.
        let u = clustered_mean_upper(&[(0.0, 1), (10.0, 1)], 1000, 1);
        assert!((5.0..=10.0).contains(&u), "{u}");
    }
}
