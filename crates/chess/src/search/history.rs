//! Move-ordering memory: butterfly history, continuation history (1 and 2 plies back),
//! capture history, killers and counter moves. All tables are flat `Vec`s so that a
//! worker thread's stack stays small and nothing is allocated after construction.

use super::params::{HISTORY_MAX, MAX_PLY};
use crate::board::{Color, Move, NULL_MOVE, Piece};

/// Index of a (coloured piece, destination) pair, 0..768; used for continuation history.
pub type PieceTo = usize;
pub const NO_PIECE_TO: PieceTo = usize::MAX;

#[inline]
pub fn piece_to(color: Color, piece: Piece, to: usize) -> PieceTo {
    ((color as usize) * 6 + piece as usize) * 64 + to
}

pub struct History {
    butterfly: Vec<i16>,
    cont: Vec<i16>,
    capture: Vec<i16>,
    counter: Vec<Move>,
    pub killers: Vec<[Move; 2]>,
    /// Static-evaluation correction by pawn structure, per side to move, in 1/`CORR_GRAIN`
    /// centipawns (switch `corr`): what searches of positions with these pawns found the
    /// evaluation to miss, as a running average.
    corr: Vec<i32>,
}

/// Entries of the correction table per side (a power of two: indexed by the pawn key's
/// low bits).
pub const CORR_SIZE: usize = 16_384;
/// Fixed-point scale of the correction entries.
pub const CORR_GRAIN: i32 = 256;
/// Largest correction, centipawns.
pub const CORR_LIMIT: i32 = 128;

impl Default for History {
    fn default() -> Self {
        Self {
            butterfly: vec![0; 2 * 64 * 64],
            cont: vec![0; 768 * 768],
            capture: vec![0; 768 * 6],
            counter: vec![NULL_MOVE; 768],
            killers: vec![[NULL_MOVE; 2]; MAX_PLY + 4],
            corr: vec![0; 2 * CORR_SIZE],
        }
    }
}

/// History gravity: entries saturate smoothly at ±HISTORY_MAX instead of overflowing.
#[inline]
fn gravity(entry: &mut i16, bonus: i32) {
    let e = *entry as i32;
    let b = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
    *entry = (e + b - e * b.abs() / HISTORY_MAX) as i16;
}

impl History {
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    #[inline]
    fn corr_index(color: Color, pawn_key: u64) -> usize {
        // High bits: the pawn table's key has its lowest bit always set.
        (color as usize) * CORR_SIZE + ((pawn_key >> 32) as usize & (CORR_SIZE - 1))
    }

    /// The correction for a position with these pawns, `color` to move, centipawns.
    #[inline]
    pub fn correction(&self, color: Color, pawn_key: u64) -> i32 {
        self.corr[Self::corr_index(color, pawn_key)] / CORR_GRAIN
    }

    /// Move the correction toward `diff` (search result − raw evaluation, centipawns), by a
    /// weight that grows with the depth that found it.
    #[inline]
    pub fn update_correction(&mut self, color: Color, pawn_key: u64, depth: i32, diff: i32) {
        let e = &mut self.corr[Self::corr_index(color, pawn_key)];
        let target = diff.clamp(-CORR_LIMIT, CORR_LIMIT) * CORR_GRAIN;
        let w = (depth + 1).clamp(1, 16);
        *e = (*e * (256 - w) + target * w) / 256;
    }

    #[inline]
    fn bf_index(color: Color, mv: Move) -> usize {
        (color as usize) * 4096 + (mv.from as usize) * 64 + mv.to as usize
    }

    /// Combined quiet-move score: butterfly + continuation histories.
    #[inline]
    pub fn quiet_score(&self, color: Color, mv: Move, pt: PieceTo, cont: [PieceTo; 2]) -> i32 {
        let mut s = self.butterfly[Self::bf_index(color, mv)] as i32;
        for c in cont {
            if c != NO_PIECE_TO {
                s += self.cont[c * 768 + pt] as i32;
            }
        }
        s
    }

    #[inline]
    pub fn capture_score(&self, pt: PieceTo, victim: Piece) -> i32 {
        self.capture[pt * 6 + victim as usize] as i32
    }

    #[inline]
    pub fn counter(&self, prev: PieceTo) -> Move {
        if prev == NO_PIECE_TO {
            NULL_MOVE
        } else {
            self.counter[prev]
        }
    }

    #[inline]
    pub fn update_quiet(
        &mut self,
        color: Color,
        mv: Move,
        pt: PieceTo,
        cont: [PieceTo; 2],
        bonus: i32,
    ) {
        gravity(&mut self.butterfly[Self::bf_index(color, mv)], bonus);
        for c in cont {
            if c != NO_PIECE_TO {
                gravity(&mut self.cont[c * 768 + pt], bonus);
            }
        }
    }

    #[inline]
    pub fn update_capture(&mut self, pt: PieceTo, victim: Piece, bonus: i32) {
        gravity(&mut self.capture[pt * 6 + victim as usize], bonus);
    }

    #[inline]
    pub fn set_killer(&mut self, ply: usize, mv: Move) {
        let k = &mut self.killers[ply];
        if k[0] != mv {
            k[1] = k[0];
            k[0] = mv;
        }
    }

    #[inline]
    pub fn set_counter(&mut self, prev: PieceTo, mv: Move) {
        if prev != NO_PIECE_TO {
            self.counter[prev] = mv;
        }
    }
}
