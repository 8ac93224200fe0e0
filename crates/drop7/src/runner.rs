//! Whole games under a policy, one record per game (the reference `games.jsonl` fields).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::game::Game;
use crate::policy::Policy;
use crate::rng::seed_hex;

/// One finished game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameRecord {
    pub policy: String,
    pub seed_hex: String,
    pub seed: u32,
    pub score: u64,
    pub moves: u32,
    /// Stopped at the move cap rather than by game over.
    pub censored: bool,
    pub numbered_cleared: u64,
    pub covers_revealed: u64,
    pub work: u64,
    /// Decisions whose search did not finish its depth.
    pub incomplete: u64,
    /// Answers that were not a legal column (the game then stops: a policy fault).
    pub illegal: u64,
    pub wall_seconds: f64,
}

/// Play game `seed` to the end (or the 2,000-move cap) with `policy`.
pub fn play_game(seed: u32, policy: &mut dyn Policy) -> GameRecord {
    let t0 = Instant::now();
    let mut game = Game::new(seed);
    let mut r = GameRecord {
        policy: policy.name().to_owned(),
        seed_hex: seed_hex(seed),
        seed,
        score: 0,
        moves: 0,
        censored: false,
        numbered_cleared: 0,
        covers_revealed: 0,
        work: 0,
        incomplete: 0,
        illegal: 0,
        wall_seconds: 0.0,
    };
    while !game.finished() {
        let choice = policy.choose(&game.public());
        r.work += choice.work;
        r.incomplete += (!choice.complete) as u64;
        let Some(column) = choice.column else {
            r.illegal += 1;
            break;
        };
        match game.play(column, &mut ()) {
            Ok(out) => {
                r.numbered_cleared += out.cleared as u64;
                r.covers_revealed += out.revealed as u64;
            }
            Err(_) => {
                r.illegal += 1;
                break;
            }
        }
    }
    r.score = game.score;
    r.moves = game.moves_played;
    r.censored = game.censored();
    r.wall_seconds = t0.elapsed().as_secs_f64();
    r
}

/// `n` states (with the column the reference-random policy then played) from consecutive
/// reference-random games starting at `seed`: realistic inputs for benchmarks and tests.
pub fn sample_states(seed: u32, n: usize) -> Vec<(crate::game::PublicState, usize)> {
    let mut out = Vec::with_capacity(n);
    let mut seed = seed;
    while out.len() < n {
        let mut g = Game::new(seed);
        let mut p = crate::game::TraceRandom::new(seed);
        while !g.finished() && out.len() < n {
            let Some(c) = p.choose(&g.board) else { break };
            out.push((g.public(), c));
            g.play(c, &mut ()).expect("the policy plays legal columns");
        }
        seed = seed.wrapping_add(1);
    }
    out
}
