//! Pawn structure, cached in a per-thread pawn hash table.
//!
//! Pawn terms depend only on the pawn bitboards, which change rarely along a search path,
//! so a small direct-mapped cache keyed by a hash of the two pawn sets hits >95% of the time.
//! King-dependent passer terms are computed outside the cache (see `mod.rs`, lazy tier).

use super::S;
use super::params::p;
use super::trace::{NoTrace, Side, Tracer};
use crate::board::mix64 as mix;
use crate::board::{Board, Color, Piece};

pub(crate) const FILE_A: u64 = 0x0101_0101_0101_0101;
pub(crate) const FILE_H: u64 = FILE_A << 7;

/// Squares attacked by a set of pawns of `color`.
#[inline]
pub(crate) fn pawn_attacks(pawns: u64, color: Color) -> u64 {
    match color {
        Color::White => ((pawns & !FILE_A) << 7) | ((pawns & !FILE_H) << 9),
        Color::Black => ((pawns & !FILE_A) >> 9) | ((pawns & !FILE_H) >> 7),
    }
}

/// All squares in front of `sq` (from `color`'s view) on the same file.
#[inline]
pub(crate) fn front_span(sq: usize, color: Color) -> u64 {
    let file = FILE_A << (sq % 8);
    match color {
        Color::White => file & (!0u64).checked_shl((sq as u32 / 8 + 1) * 8).unwrap_or(0),
        Color::Black => file & ((1u64 << ((sq / 8) * 8)) - 1),
    }
}

/// Squares an enemy pawn must not occupy for the pawn on `sq` to be passed.
#[inline]
pub(crate) fn passed_mask(sq: usize, color: Color) -> u64 {
    let f = front_span(sq, color);
    f | ((f & !FILE_A) >> 1) | ((f & !FILE_H) << 1)
}

#[inline]
fn adjacent_files(sq: usize) -> u64 {
    let file = FILE_A << (sq % 8);
    ((file & !FILE_A) >> 1) | ((file & !FILE_H) << 1)
}

/// Cached pawn evaluation.
#[derive(Clone, Copy, Default)]
pub(crate) struct PawnEntry {
    pub key: u64,
    /// White-minus-black structure score.
    pub score: S,
    /// Passed pawns per colour.
    pub passed: [u64; 2],
}

/// Hash of the two pawn sets; cheap and independent of the board's Zobrist scheme.
#[inline]
pub(crate) fn pawn_key(board: &Board) -> u64 {
    let w = (board.colored_pieces(Color::White, Piece::Pawn)).0;
    let b = (board.colored_pieces(Color::Black, Piece::Pawn)).0;
    mix(w ^ 0x9E37_79B9_7F4A_7C15) ^ mix(b.rotate_left(17) ^ 0xD1B5_4A32_D192_ED03).rotate_left(29)
        | 1
}

/// Pawn structure of one side, from that side's view, and its passed pawns.
#[inline]
pub(crate) fn side_structure(board: &Board, color: Color) -> (S, u64) {
    side_structure_traced(board, color, &mut NoTrace)
}

/// [`side_structure`], each term reported to `t`.
pub(crate) fn side_structure_traced<T: Tracer>(board: &Board, color: Color, t: &mut T) -> (S, u64) {
    let us = board.colored_pieces(color, Piece::Pawn).0;
    let them = board.colored_pieces(!color, Piece::Pawn).0;
    let our_attacks = pawn_attacks(us, color);
    let mut s = Side::new(color, t);
    let mut passed = 0u64;
    let mut bb = us;
    while bb != 0 {
        let sq = bb.trailing_zeros() as usize;
        bb &= bb - 1;
        let rel_rank = if color == Color::White {
            sq / 8
        } else {
            7 - sq / 8
        };
        let front = front_span(sq, color);
        if front & us != 0 {
            s.add(p!(DOUBLED), 1);
        }
        let adj = adjacent_files(sq);
        if adj & us == 0 {
            s.add(p!(ISOLATED), 1);
        } else {
            let bit = 1u64 << sq;
            let phalanx = ((bit & !FILE_A) >> 1 | (bit & !FILE_H) << 1) & us != 0;
            let supported = our_attacks & bit != 0;
            if phalanx || supported {
                s.add(p!(CONNECTED_BY_RANK[rel_rank]), 1);
            } else {
                // Backward: no friendly pawn beside or behind on adjacent files, and the
                // stop square is hit by an enemy pawn.
                let behind_or_level = adj & !passed_mask(sq, color);
                let stop = if color == Color::White {
                    bit << 8
                } else {
                    bit >> 8
                };
                if behind_or_level & us == 0 && pawn_attacks(them, !color) & stop != 0 {
                    s.add(p!(BACKWARD), 1);
                }
            }
        }
        if passed_mask(sq, color) & them == 0 && front & us == 0 {
            passed |= 1u64 << sq;
            s.add(p!(PASSED_BY_RANK[rel_rank]), 1);
        }
    }
    (s.s, passed)
}

/// Compute the pawn-structure entry from scratch.
pub(crate) fn evaluate_pawns(board: &Board) -> PawnEntry {
    evaluate_pawns_traced(board, &mut NoTrace)
}

/// [`evaluate_pawns`], each term reported to `t`.
pub(crate) fn evaluate_pawns_traced<T: Tracer>(board: &Board, t: &mut T) -> PawnEntry {
    let (white, white_passed) = side_structure_traced(board, Color::White, t);
    let (black, black_passed) = side_structure_traced(board, Color::Black, t);
    PawnEntry {
        key: pawn_key(board),
        score: white - black,
        passed: [white_passed, black_passed],
    }
}

/// Direct-mapped pawn cache; one per search thread, so no synchronisation.
pub struct PawnTable {
    entries: Vec<PawnEntry>,
}

impl PawnTable {
    pub(crate) fn new(entries_log2: u32) -> Self {
        Self {
            entries: vec![PawnEntry::default(); 1 << entries_log2],
        }
    }

    #[inline]
    pub(crate) fn probe(&mut self, board: &Board) -> PawnEntry {
        let key = pawn_key(board);
        let idx = (key as usize) & (self.entries.len() - 1);
        let e = self.entries[idx];
        if e.key == key {
            return e;
        }
        let fresh = evaluate_pawns(board);
        self.entries[idx] = fresh;
        fresh
    }

    pub(crate) fn clear(&mut self) {
        self.entries
            .iter_mut()
            .for_each(|e| *e = PawnEntry::default());
    }
}

impl Default for PawnTable {
    fn default() -> Self {
        Self::new(14)
    }
}
