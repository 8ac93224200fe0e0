//! Self-play TD(0) with temporal coherence on shared lock-free tables (docs/design/drop7-SPEC.md §7).
//!
//! Each worker plays whole headless games from the training block (seeds in order, wrapping;
//! move cap 2,000) with the one-ply policy and, after every move from afterstate s to s′,
//! moves V(s) towards r + V(s′) (r alone when the game ended), r = points/17,000. The first
//! s of a game is the opening state. With one thread the run is deterministic.
//!
//! [`Trainer`] (in `trainer`) runs a whole resumable training run around these games;
//! `progress` is its log and curve.

mod progress;
mod trainer;

pub use progress::{ProgressRecord, TrainPoint, ValidationPoint, read_progress, training_curve};
pub use trainer::{TrainConfig, TrainObserver, TrainSummary, Trainer};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use drop7::SeedBlock;
use drop7::game::Game;

use crate::features::{Active, active, active_into};
use crate::play::{OnePlyScratch, VALUE_SCALE, choose_one_ply, value};
use crate::tables::Tables;

/// Counters shared by the workers.
#[derive(Default)]
pub struct Counters {
    pub moves: AtomicU64,
    pub games: AtomicU64,
    /// Score and game count since the last report (for "mean score of recent games").
    pub recent_score: AtomicU64,
    pub recent_games: AtomicU64,
    /// Next game index in the training block.
    pub cursor: AtomicU64,
}

/// Play one training game of seed `seed`, updating `t` after every move. Returns (moves, score).
/// `scratch` is the worker's one-ply work space, reused from game to game. With `siblings`
/// > 0, before each move that many other columns are also learned from ([`sibling_updates`]).
pub fn train_game(
    t: &Tables,
    seed: u32,
    alpha: f32,
    siblings: u32,
    scratch: &mut OnePlyScratch,
) -> (u64, u64) {
    let mut game = Game::new(seed);
    let mut prev = active(&t.layout, &game.board, game.moves_remaining);
    let mut next = Active::EMPTY;
    let mut sib = [Active::EMPTY, Active::EMPTY];
    while !game.finished() {
        let Some(column) = choose_one_ply(t, &game.public(), scratch) else {
            break;
        };
        if siblings > 0 {
            sibling_updates(t, &game, column, siblings, alpha, scratch, &mut sib);
        }
        let out = game
            .play(column, &mut ())
            .expect("one-ply picks legal columns");
        let reward = out.score_delta as f32 / VALUE_SCALE as f32;
        if game.game_over {
            t.update(prev.as_slice(), reward, alpha);
        } else {
            active_into(&t.layout, &game.board, game.moves_remaining, &mut next);
            let target = reward + t.value(next.as_slice());
            t.update(prev.as_slice(), target, alpha);
            std::mem::swap(&mut prev, &mut next);
        }
    }
    (game.moves_played as u64, game.score)
}

/// TD on the boards a search reads, not only the ones greedy play visits: from the state
/// before the played move, up to `n` *other* legal columns are played on a copy of the game
/// (same seed, so the same discs and reveals), and each of those afterstates is moved
/// towards r + V(s″) of its own one-ply continuation (r alone when the game ends there).
/// The depth-1 children of the played path are exactly the afterstates an expectimax
/// search values at its first ply, and one-ply self-play never trains the ones it does not
/// choose (the seed's open question; the reference's TreeStrap attempt ran at ~1,000
/// moves/s). Each sibling costs one one-ply choice, about one training move. Which columns:
/// a hash of (seed, move number), so one thread stays deterministic.
pub fn sibling_updates(
    t: &Tables,
    game: &Game,
    played: usize,
    n: u32,
    alpha: f32,
    scratch: &mut OnePlyScratch,
    buf: &mut [Active; 2],
) {
    let mut others = game.board.legal_mask() & !(1u8 << played);
    let mut h = splitmix(((game.seed as u64) << 32) | game.moves_played as u64);
    for _ in 0..n {
        let count = others.count_ones();
        if count == 0 {
            return;
        }
        // the k-th remaining legal column, without repeats
        let mut k = (h % count as u64) as u32;
        h = splitmix(h);
        let mut column = 0;
        for c in 0..8 {
            if others & (1 << c) != 0 {
                if k == 0 {
                    column = c;
                    break;
                }
                k -= 1;
            }
        }
        others &= !(1u8 << column);
        let mut g = game.clone();
        if g.play(column as usize, &mut ()).is_err() || g.finished() {
            continue; // no afterstate the search would value with the tables
        }
        let [a, b] = buf;
        active_into(&t.layout, &g.board, g.moves_remaining, a);
        let Some(c2) = choose_one_ply(t, &g.public(), scratch) else {
            continue;
        };
        let Ok(out) = g.play(c2, &mut ()) else {
            continue;
        };
        let reward = out.score_delta as f32 / VALUE_SCALE as f32;
        let target = if g.game_over {
            reward
        } else {
            active_into(&t.layout, &g.board, g.moves_remaining, b);
            reward + t.value(b.as_slice())
        };
        t.update(a.as_slice(), target, alpha);
    }
}

/// SplitMix64 finaliser: a well-mixed 64-bit hash of a counter.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How training games are played: threads, the seed block, the learning rate.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub threads: usize,
    /// Game `i` of the run uses seed `block.cycle(i)` (the block's seeds in order, wrapping).
    pub block: SeedBlock,
    pub alpha: f32,
    /// Sibling afterstates learned from per move ([`sibling_updates`]); 0 = plain TD.
    pub siblings: u32,
}

/// Run workers until `counters.moves` reaches `until` (each finishes its current game) or
/// `stop` is raised.
pub fn run_until(t: &Tables, counters: &Counters, until: u64, plan: Plan, stop: &AtomicBool) {
    std::thread::scope(|s| {
        for _ in 0..plan.threads.max(1) {
            s.spawn(|| {
                let mut scratch = OnePlyScratch::default();
                while counters.moves.load(Relaxed) < until && !stop.load(Relaxed) {
                    let i = counters.cursor.fetch_add(1, Relaxed);
                    let seed = plan.block.cycle(i);
                    let (moves, score) =
                        train_game(t, seed, plan.alpha, plan.siblings, &mut scratch);
                    counters.moves.fetch_add(moves, Relaxed);
                    counters.games.fetch_add(1, Relaxed);
                    counters.recent_score.fetch_add(score, Relaxed);
                    counters.recent_games.fetch_add(1, Relaxed);
                }
            });
        }
    });
}

/// Value of the opening board (rise units) — a quick health reading for progress lines.
pub fn opening_value(t: &Arc<Tables>) -> f32 {
    let g = Game::new(0);
    value(t, &g.board, g.moves_remaining)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::tables::OPTIMISTIC_TOTAL;

    #[test]
    fn single_thread_training_is_deterministic() {
        let _heavy = crate::heavy_test();
        let layout = Layout::parse("win23,phase=none").unwrap();
        let run = || {
            let t = Tables::new(layout.clone(), OPTIMISTIC_TOTAL, true).unwrap();
            let c = Counters::default();
            run_until(
                &t,
                &c,
                2_000,
                Plan {
                    threads: 1,
                    block: "0xa5300000:1000".parse().unwrap(),
                    alpha: 1.0,
                    siblings: 0,
                },
                &AtomicBool::new(false),
            );
            let checksum: u64 = t
                .weights
                .iter()
                .map(|w| w.load(Relaxed) as u64)
                .fold(0, |a, b| a.wrapping_mul(31).wrapping_add(b));
            (c.moves.load(Relaxed), c.games.load(Relaxed), checksum)
        };
        let a = run();
        assert!(a.0 >= 2_000 && a.1 > 10);
        assert_eq!(a, run());
    }

    /// Every core at once (Hogwild: workers share the tables without locks): the counters
    /// stay consistent — every game taken from the cursor is counted, moves reach the
    /// target — and the tables learn.
    #[test]
    fn every_core_trains_at_once() {
        let _heavy = crate::heavy_test();
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .max(2);
        let layout = Layout::parse("win23,phase=none").unwrap();
        let t = Arc::new(Tables::new(layout, OPTIMISTIC_TOTAL, true).unwrap());
        let c = Counters::default();
        let plan = Plan {
            threads,
            block: "0xa5300000:100000".parse().unwrap(),
            alpha: 1.0,
            siblings: 0,
        };
        run_until(&t, &c, 20_000, plan, &AtomicBool::new(false));
        assert!(c.moves.load(Relaxed) >= 20_000);
        assert_eq!(c.games.load(Relaxed), c.cursor.load(Relaxed));
        assert!(opening_value(&t) < 19.0);
    }

    /// Sibling updates: one thread stays deterministic, the same number of played moves
    /// trains more distinct entries (the boards of columns greedy play did not choose), and
    /// the games themselves are not disturbed at the start (the first move is the same).
    #[test]
    fn sibling_updates_reach_boards_greedy_play_skips() {
        let _heavy = crate::heavy_test();
        let layout = Layout::parse("win23,phase=none").unwrap();
        let run = |siblings| {
            let t = Tables::new(layout.clone(), OPTIMISTIC_TOTAL, true).unwrap();
            let c = Counters::default();
            let plan = Plan {
                threads: 1,
                block: "0xa5300000:1000".parse().unwrap(),
                alpha: 1.0,
                siblings,
            };
            run_until(&t, &c, 3_000, plan, &AtomicBool::new(false));
            let init = t.initial_weight().to_bits();
            let touched = t.weights.iter().filter(|w| w.load(Relaxed) != init).count();
            let checksum: u64 = t
                .weights
                .iter()
                .map(|w| w.load(Relaxed) as u64)
                .fold(0, |a, b| a.wrapping_mul(31).wrapping_add(b));
            (c.moves.load(Relaxed), touched, checksum)
        };
        let plain = run(0);
        let two = run(2);
        assert_eq!(two, run(2), "one thread is deterministic");
        assert!(
            two.1 as f64 > 1.3 * plain.1 as f64,
            "siblings touched {} entries, plain TD {}",
            two.1,
            plain.1
        );
        assert_ne!(two.2, plain.2);
        // on trained tables (fresh ones value every board alike, so a zero reward is no
        // error), n = 0 changes nothing and one sibling moves at most one afterstate's entries
        let t = Tables::new(layout.clone(), OPTIMISTIC_TOTAL, true).unwrap();
        let plan = Plan {
            threads: 1,
            block: "0xa5300000:1000".parse().unwrap(),
            alpha: 1.0,
            siblings: 0,
        };
        run_until(
            &t,
            &Counters::default(),
            2_000,
            plan,
            &AtomicBool::new(false),
        );
        let g = Game::new(7);
        let mut scratch = OnePlyScratch::default();
        let mut buf = [Active::EMPTY, Active::EMPTY];
        let before: Vec<u32> = t.weights.iter().map(|w| w.load(Relaxed)).collect();
        sibling_updates(&t, &g, 3, 0, 1.0, &mut scratch, &mut buf);
        assert!(
            t.weights
                .iter()
                .zip(&before)
                .all(|(w, b)| w.load(Relaxed) == *b),
            "n = 0 changes nothing"
        );
        sibling_updates(&t, &g, 3, 1, 1.0, &mut scratch, &mut buf);
        let changed = t
            .weights
            .iter()
            .zip(&before)
            .filter(|(w, b)| w.load(Relaxed) != **b)
            .count();
        assert!(
            changed > 0 && changed <= layout.active(),
            "one sibling changed {changed} entries"
        );
    }

    #[test]
    fn learning_moves_values_toward_returns() {
        let _heavy = crate::heavy_test();
        // After a few hundred games the opening value must leave its optimistic 20 rise units
        // (random-ish early play survives only a few rises).
        let layout = Layout::parse("win23,win32,phase=none").unwrap();
        let t = Arc::new(Tables::new(layout, OPTIMISTIC_TOTAL, true).unwrap());
        let before = opening_value(&t);
        let c = Counters::default();
        run_until(
            &t,
            &c,
            20_000,
            Plan {
                threads: 1,
                block: "0xa5300000:100000".parse().unwrap(),
                alpha: 1.0,
                siblings: 0,
            },
            &AtomicBool::new(false),
        );
        let after = opening_value(&t);
        assert!((before - 20.0).abs() < 1e-3);
        assert!(after < before - 1.0, "opening value {before} → {after}");
    }
}
