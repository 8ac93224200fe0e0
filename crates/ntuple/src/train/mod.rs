//! Self-play TD(0) with temporal coherence on shared lock-free tables (SPEC §7).
//!
//! Each worker plays whole headless games from the training block (seeds in order, wrapping;
//! move cap 2,000) with the one-ply policy and, after every move from afterstate s to s′,
//! moves V(s) towards r + V(s′) (r alone when the game ended), r = points/17,000. The first
//! s of a game is the opening state. With one thread the run is deterministic.
//!
//! [`Trainer`] (in `trainer`) runs a whole resumable training run around these games;
//! [`progress`] is its log and curve.

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
/// `scratch` is the worker's one-ply work space, reused from game to game.
pub fn train_game(t: &Tables, seed: u32, alpha: f32, scratch: &mut OnePlyScratch) -> (u64, u64) {
    let mut game = Game::new(seed);
    let mut prev = active(&t.layout, &game.board, game.moves_remaining);
    let mut next = Active::EMPTY;
    while !game.finished() {
        let Some(column) = choose_one_ply(t, &game.public(), scratch) else {
            break;
        };
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

/// How training games are played: threads, the seed block, the learning rate.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub threads: usize,
    /// Game `i` of the run uses seed `block.cycle(i)` (the block's seeds in order, wrapping).
    pub block: SeedBlock,
    pub alpha: f32,
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
                    let (moves, score) = train_game(t, seed, plan.alpha, &mut scratch);
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
        };
        run_until(&t, &c, 20_000, plan, &AtomicBool::new(false));
        assert!(c.moves.load(Relaxed) >= 20_000);
        assert_eq!(c.games.load(Relaxed), c.cursor.load(Relaxed));
        assert!(opening_value(&t) < 19.0);
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
            },
            &AtomicBool::new(false),
        );
        let after = opening_value(&t);
        assert!((before - 20.0).abs() < 1e-3);
        assert!(after < before - 1.0, "opening value {before} → {after}");
    }
}
