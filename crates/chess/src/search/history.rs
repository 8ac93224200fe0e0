//! Move-ordering memory: butterfly history, continuation history (1 and 2 plies back),
//! capture history, killers and counter moves. All tables are flat `Vec`s so that a
//! worker thread's stack stays small and nothing is allocated after construction.

use super::params::{HISTORY_MAX, MAX_PLY};
use crate::board::{Color, Move, NULL_MOVE, Piece};

/// Index of a (coloured piece, destination) pair, 0..768; used for continuation history.
pub(crate) type PieceTo = usize;
pub(crate) const NO_PIECE_TO: PieceTo = usize::MAX;

#[inline]
pub(crate) fn piece_to(color: Color, piece: Piece, to: usize) -> PieceTo {
    ((color as usize) * 6 + piece as usize) * 64 + to
}

pub struct History {
    butterfly: Vec<i16>,
    cont: Vec<i16>,
    capture: Vec<i16>,
    counter: Vec<Move>,
    pub killers: Vec<[Move; 2]>,
}

impl Default for History {
    fn default() -> Self {
        Self {
            butterfly: vec![0; 2 * 64 * 64],
            cont: vec![0; 768 * 768],
            capture: vec![0; 768 * 6],
            counter: vec![NULL_MOVE; 768],
            killers: vec![[NULL_MOVE; 2]; MAX_PLY + 4],
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
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    #[inline]
    fn bf_index(color: Color, mv: Move) -> usize {
        (color as usize) * 4096 + (mv.from as usize) * 64 + mv.to as usize
    }

    /// Combined quiet-move score: butterfly + continuation histories.
    #[inline]
    pub(crate) fn quiet_score(
        &self,
        color: Color,
        mv: Move,
        pt: PieceTo,
        cont: [PieceTo; 2],
    ) -> i32 {
        let mut s = self.butterfly[Self::bf_index(color, mv)] as i32;
        for c in cont {
            if c != NO_PIECE_TO {
                s += self.cont[c * 768 + pt] as i32;
            }
        }
        s
    }

    #[inline]
    pub(crate) fn capture_score(&self, pt: PieceTo, victim: Piece) -> i32 {
        self.capture[pt * 6 + victim as usize] as i32
    }

    #[inline]
    pub(crate) fn counter(&self, prev: PieceTo) -> Move {
        if prev == NO_PIECE_TO {
            NULL_MOVE
        } else {
            self.counter[prev]
        }
    }

    #[inline]
    pub(crate) fn update_quiet(
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
    pub(crate) fn update_capture(&mut self, pt: PieceTo, victim: Piece, bonus: i32) {
        gravity(&mut self.capture[pt * 6 + victim as usize], bonus);
    }

    #[inline]
    pub(crate) fn set_killer(&mut self, ply: usize, mv: Move) {
        let k = &mut self.killers[ply];
        if k[0] != mv {
            k[1] = k[0];
            k[0] = mv;
        }
    }

    #[inline]
    pub(crate) fn set_counter(&mut self, prev: PieceTo, mv: Move) {
        if prev != NO_PIECE_TO {
            self.counter[prev] = mv;
        }
    }
}
