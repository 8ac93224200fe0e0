//! Headless games: a `u32` seed fixes the disc sequence and the per-move reveal streams
//! (docs/design/drop7-SPEC.md §3), so every policy plays the same game up to its own choices.

use crate::board::{Board, SIZE};
use crate::rng::{DOMAIN_TRACE, Mulberry32, headless_disc, mix32, reveal_seed};
use crate::rules::{MOVE_CAP, MOVES_PER_LEVEL, MoveError, MoveObserver, MoveOutcome, play_settled};

/// What a policy may see: the board, the disc to drop and the moves until the rise. Never the
/// seed, score, level or move number (12 discs identify a seed; docs/design/drop7-SPEC.md §3 security note).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicState {
    pub board: Board,
    pub next: u8,
    pub moves_remaining: u8,
}

/// Why a (board, next disc, rise) triple given from outside is not a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("bad next disc {0}: discs are 1-7")]
    Next(u64),
    #[error("bad rise {0}: moves until the rise is 1-5")]
    Rise(u64),
}

impl PublicState {
    /// A state from outside (a command line, JSON, Python): the board is already parsed; the
    /// disc must be 1-7 and the rise clock 1-5. One rule for every front end.
    pub fn checked(board: Board, next: u64, rise: u64) -> Result<Self, StateError> {
        if !(1..=7).contains(&next) {
            return Err(StateError::Next(next));
        }
        if !(1..=5).contains(&rise) {
            return Err(StateError::Rise(rise));
        }
        Ok(PublicState {
            board,
            next: next as u8,
            moves_remaining: rise as u8,
        })
    }
}

/// A headless game in progress.
#[derive(Debug, Clone)]
pub struct Game {
    pub seed: u32,
    pub board: Board,
    pub next: u8,
    pub moves_remaining: u8,
    pub score: u64,
    pub level: u32,
    pub moves_played: u32,
    pub game_over: bool,
    /// Moves after which the game is stopped and marked censored.
    pub move_cap: u32,
}

impl Game {
    /// The opening position of game `seed` with the research cap of 2,000 moves.
    pub fn new(seed: u32) -> Self {
        Self {
            seed,
            board: Board::start(),
            next: headless_disc(seed, 0),
            moves_remaining: MOVES_PER_LEVEL,
            score: 0,
            level: 1,
            moves_played: 0,
            game_over: false,
            move_cap: MOVE_CAP,
        }
    }

    pub fn with_cap(mut self, cap: u32) -> Self {
        self.move_cap = cap;
        self
    }

    /// The public part of the state.
    #[inline]
    pub fn public(&self) -> PublicState {
        PublicState {
            board: self.board,
            next: self.next,
            moves_remaining: self.moves_remaining,
        }
    }

    /// True when the game has ended or reached its cap.
    #[inline]
    pub fn finished(&self) -> bool {
        self.game_over || self.moves_played >= self.move_cap
    }

    /// True if the game stopped at the cap rather than by game over.
    pub fn censored(&self) -> bool {
        !self.game_over && self.moves_played >= self.move_cap
    }

    /// Play `column`, drawing reveals from this move's stream.
    #[inline]
    pub fn play<O: MoveObserver>(
        &mut self,
        column: usize,
        observer: &mut O,
    ) -> Result<MoveOutcome, MoveError> {
        let mut reveals = Mulberry32::new(reveal_seed(self.seed, self.moves_played));
        // the board of a game is settled between moves (each move resolves until nothing pops)
        let out = play_settled(
            &mut self.board,
            column,
            self.next,
            self.moves_remaining,
            &mut reveals,
            observer,
        )?;
        self.score += out.score_delta as u64;
        self.moves_remaining = out.moves_remaining;
        self.level += out.level_advanced as u32;
        self.moves_played += 1;
        self.game_over = out.game_over;
        self.next = headless_disc(self.seed, self.moves_played);
        Ok(out)
    }
}

/// Scan order of the center-first policies and of the search's root: 3, 2, 4, 1, 5, 0, 6.
pub const CENTER_ORDER: [usize; SIZE] = [3, 2, 4, 1, 5, 0, 6];

/// First legal column in center-first order.
pub fn center_column(board: &Board) -> Option<usize> {
    CENTER_ORDER.into_iter().find(|&c| board.is_legal(c))
}

/// Lowest legal column.
pub fn leftmost_column(board: &Board) -> Option<usize> {
    (0..SIZE).find(|&c| board.is_legal(c))
}

/// The reference trace policy: `Mulberry32(mix32(seed ^ "TRAC"))`, one draw per move, plays
/// `legal[(b·n) >> 32]` over the legal columns in increasing order. It is the one policy
/// that depends on the seed; it exists to reproduce the reference traces.
#[derive(Debug, Clone)]
pub struct TraceRandom {
    rng: Mulberry32,
}

impl TraceRandom {
    pub fn new(seed: u32) -> Self {
        Self {
            rng: Mulberry32::new(mix32(seed ^ DOMAIN_TRACE)),
        }
    }

    /// Pick a column (draws even when only one column is legal, as the reference does).
    #[inline]
    pub fn choose(&mut self, board: &Board) -> Option<usize> {
        let mask = board.legal_mask();
        let n = mask.count_ones() as u64;
        if n == 0 {
            return None;
        }
        let b = self.rng.next_u32() as u64;
        let k = ((b * n) >> 32) as usize;
        Some(NTH_SET[mask as usize][k] as usize)
    }
}

/// `NTH_SET[m][k]`: the position of the k-th lowest set bit of the 7-bit mask `m` (k counted
/// from 0; 7 where `m` has no k-th bit). A table and not a loop clearing k bits: k is random,
/// and the loop's exit mispredicted once a move in random games.
const NTH_SET: [[u8; 8]; 128] = {
    let mut t = [[SIZE as u8; 8]; 128];
    let mut m = 0;
    while m < 128 {
        let mut k = 0;
        let mut bit = 0;
        while bit < SIZE {
            if m & (1 << bit) != 0 {
                t[m][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        m += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nth_set_is_the_kth_lowest_set_bit() {
        for m in 0u32..128 {
            // the plain way: clear the lowest bit k times
            let mut rest = m;
            for (k, &got) in NTH_SET[m as usize].iter().enumerate() {
                let want = if rest == 0 {
                    SIZE as u8
                } else {
                    rest.trailing_zeros() as u8
                };
                assert_eq!(got, want, "mask {m:#09b} k {k}");
                rest &= rest.wrapping_sub(1);
            }
        }
        assert_eq!(NTH_SET[0b101_0100][1], 4);
    }
}
