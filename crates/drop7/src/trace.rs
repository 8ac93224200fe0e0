//! JSON records in the reference formats: one trace line per move (`native-suite --trace`)
//! and one step result per single move. Field names and order are the reference's.

use serde::{Deserialize, Serialize};

use crate::board::Board;
use crate::game::Game;
use crate::rules::{MoveError, MoveObserver, MoveOutcome, Wave, play_move};

/// A wave as the trace prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaveRecord {
    pub depth: u32,
    pub cleared: u32,
    pub revealed: u32,
    pub points: u32,
}

impl From<Wave> for WaveRecord {
    fn from(w: Wave) -> Self {
        Self {
            depth: w.depth,
            cleared: w.cleared,
            revealed: w.revealed,
            points: w.points,
        }
    }
}

/// Collects waves and reveal values (for traces and debugging; allocates).
#[derive(Debug, Default, Clone)]
pub struct Recorder {
    pub waves: Vec<WaveRecord>,
    pub reveal_values: Vec<u8>,
}

impl MoveObserver for Recorder {
    fn wave(&mut self, w: Wave) {
        self.waves.push(w.into());
    }
    fn revealed_value(&mut self, v: u8) {
        self.reveal_values.push(v);
    }
}

/// One line of a reference trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceLine {
    pub seed: u32,
    #[serde(rename = "move")]
    pub move_number: u32,
    pub disc: u8,
    pub column: usize,
    pub score_delta: u32,
    pub score: u64,
    pub level: u32,
    pub moves_remaining: u8,
    pub game_over: bool,
    pub cleared_board: bool,
    pub level_advanced: bool,
    pub waves: Vec<WaveRecord>,
    pub board: String,
}

/// Play `column` in `game` and describe the move as a trace line.
pub fn traced_move(game: &mut Game, column: usize) -> Result<TraceLine, MoveError> {
    let disc = game.next;
    let mut rec = Recorder::default();
    let out = game.play(column, &mut rec)?;
    Ok(TraceLine {
        seed: game.seed,
        move_number: game.moves_played,
        disc,
        column,
        score_delta: out.score_delta,
        score: game.score,
        level: game.level,
        moves_remaining: out.moves_remaining,
        game_over: out.game_over,
        cleared_board: out.cleared_board,
        level_advanced: out.level_advanced,
        waves: rec.waves,
        board: game.board.to_string(),
    })
}

/// The result of one move from an arbitrary state (the `steps.jsonl` `result` object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepResult {
    pub score_delta: u32,
    pub board: String,
    pub waves: Vec<WaveRecord>,
    pub placement_wave_count: u32,
    pub level_advanced: bool,
    pub cleared_board: bool,
    pub game_over: bool,
    pub moves_remaining: u8,
    pub reveal_values: Vec<u8>,
    /// The reference engine's own next-disc draw from the reveal stream after the move
    /// (headless play discards it; kept for debugging generic engines).
    pub engine_next_disc: u8,
}

/// Play one move on a public state with reveals from `Mulberry32(reveal_seed)` (raw, not
/// mixed), as `steps.jsonl` defines it.
pub fn step(
    board: &Board,
    next: u8,
    rise: u8,
    column: usize,
    reveal_seed: u32,
) -> Result<StepResult, MoveError> {
    let mut b = *board;
    let mut rng = crate::rng::Mulberry32::new(reveal_seed);
    let mut rec = Recorder::default();
    let out: MoveOutcome = play_move(&mut b, column, next, rise, &mut rng, &mut rec)?;
    let engine_next_disc = if out.game_over { next } else { rng.next_disc() };
    Ok(StepResult {
        score_delta: out.score_delta,
        board: b.to_string(),
        waves: rec.waves,
        placement_wave_count: out.placement_waves,
        level_advanced: out.level_advanced,
        cleared_board: out.cleared_board,
        game_over: out.game_over,
        moves_remaining: out.moves_remaining,
        reveal_values: rec.reveal_values,
        engine_next_disc,
    })
}
